"""On a GPU: the rollout step replayed as a CUDA graph (`workbench.train.graphs.StepGraph`) gives what the policy's
eager step gives, follows the optimizer's in-place updates, draws fresh noise each replay, and is faster; prints one
line a check and exits 1 if one fails. Run by tools/gpu/run.sh (stage `graphs`)."""

import sys, time

import gymnasium as gym
import torch
import torch.nn.functional as F

from workbench.policy import PolicyConfig, make_policy
from workbench.train.graphs import StepGraph

ok = True


def check(name, cond, detail=""):
    global ok
    ok &= bool(cond)
    print(f"{'ok  ' if cond else 'FAIL'} {name} {detail}", flush=True)


dev = "cuda"
for space in (gym.spaces.Discrete(2), gym.spaces.Box(-1, 1, (3,))):
    policy = make_policy(gym.spaces.Box(-1, 1, (4,)), space, PolicyConfig(hidden_size=128, num_layers=1)).to(dev)
    n = 16384
    x = torch.randn(n, 4, device=dev)
    step = StepGraph(policy, x)
    check(f"{space}: captured", step.graph is not None, step.why or "")
    shape = (n, *space.shape)
    actions = torch.zeros(shape, device=dev, dtype=torch.int64 if not space.shape else torch.float32)
    logprobs, values = torch.zeros(n, device=dev), torch.zeros(n, device=dev)
    step(x, actions, logprobs, values)
    with torch.no_grad():
        params, value, _ = policy(x)
        lp, _ = policy.head.log_prob_entropy(params, actions)
    check(f"{space}: values as eager", torch.allclose(values, value, atol=1e-5))
    check(f"{space}: log-probs of its actions", torch.allclose(logprobs, lp, atol=1e-4))
    first = actions.clone()
    step(x, actions, logprobs, values)
    check(f"{space}: fresh noise each replay", not torch.equal(first, actions))
    with torch.no_grad():
        policy.critic.bias.add_(1.0)  # as the optimizer's in-place step
    step(x, actions, logprobs, values)
    check(f"{space}: follows in-place weight updates", torch.allclose(values, value + 1.0, atol=1e-4))
    if isinstance(space, gym.spaces.Discrete):
        with torch.no_grad():
            probs = F.softmax(policy(x)[0], -1)[:, 1].mean()
            counts = torch.stack([(step(x, actions, logprobs, values), actions.float().mean())[1] for _ in range(20)])
        check("sampling frequencies", abs(counts.mean() - probs) < 0.01, f"{counts.mean():.4f} vs {probs:.4f}")
    eager = StepGraph(policy, x, capture=False)
    for label, fn in (("graph", step), ("eager", eager)):
        for _ in range(10):
            fn(x, actions, logprobs, values)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(200):
            fn(x, actions, logprobs, values)
        torch.cuda.synchronize()
        print(f"     {space}: {label} step of {n:,} envs: {(time.perf_counter() - t0) / 200 * 1e6:.0f} us", flush=True)
sys.exit(0 if ok else 1)
