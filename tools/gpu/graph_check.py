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


dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"  # cpu: the script itself (its captures fail there)
sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)


def time_steps(what: str, graphed, eager, args: tuple) -> None:
    "Print the mean time of a step, graphed and eager (after 10 warm-up steps, over 200)."
    for label, fn in (("graph", graphed), ("eager", eager)):
        for _ in range(10):
            fn(*args)
        sync()
        t0 = time.perf_counter()
        for _ in range(200):
            fn(*args)
        sync()
        n = len(args[0])
        print(f"     {what}: {label} step of {n:,} envs: {(time.perf_counter() - t0) / 200 * 1e6:.0f} us", flush=True)


for space in (gym.spaces.Discrete(2), gym.spaces.Box(-1, 1, (3,))):
    policy = make_policy(gym.spaces.Box(-1, 1, (4,)), space, PolicyConfig(hidden_size=128, num_layers=1)).to(dev)
    n = 16384
    x = torch.randn(n, 4, device=dev)
    step = StepGraph(policy, x)
    check(f"{space}: captured", step.graph is not None, step.why or "")
    shape = (n, *space.shape)
    actions = torch.zeros(shape, device=dev, dtype=torch.int64 if not space.shape else torch.float32)
    logprobs, values = torch.zeros(n, device=dev), torch.zeros(n, device=dev)
    step(x, None, actions, logprobs, values)
    with torch.no_grad():
        params, value, _ = policy(x)
        lp, _ = policy.head.log_prob_entropy(params, actions)
    check(f"{space}: values as eager", torch.allclose(values, value, atol=1e-5))
    check(f"{space}: log-probs of its actions", torch.allclose(logprobs, lp, atol=1e-4))
    first = actions.clone()
    step(x, None, actions, logprobs, values)
    check(f"{space}: fresh noise each replay", not torch.equal(first, actions))
    with torch.no_grad():
        policy.critic.bias.add_(1.0)  # as the optimizer's in-place step
    step(x, None, actions, logprobs, values)
    check(f"{space}: follows in-place weight updates", torch.allclose(values, value + 1.0, atol=1e-4))
    if isinstance(space, gym.spaces.Discrete):
        with torch.no_grad():
            probs = F.softmax(policy(x)[0], -1)[:, 1].mean()
            counts = torch.stack(
                [(step(x, None, actions, logprobs, values), actions.float().mean())[1] for _ in range(20)]
            )
        check("sampling frequencies", abs(counts.mean() - probs) < 0.01, f"{counts.mean():.4f} vs {probs:.4f}")
    time_steps(str(space), step, StepGraph(policy, x, capture=False), (x, None, actions, logprobs, values))
for kind in ("lstm", "transformer"):  # the state through static buffers; the new state as the eager step gives it
    policy = make_policy(
        gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2), PolicyConfig(policy=kind, hidden_size=128)
    )
    policy = policy.to(dev)
    n = 4096
    x, state = torch.randn(n, 4, device=dev), policy.initial_state(n, dev)
    step = StepGraph(policy, x, state)
    check(f"{kind}: captured", step.graph is not None, step.why or "")
    actions = torch.zeros(n, device=dev, dtype=torch.int64)
    logprobs, values = torch.zeros(n, device=dev), torch.zeros(n, device=dev)
    for t in range(3):
        new = step(x + t, state, actions, logprobs, values)
        with torch.no_grad():
            _, value, ref = policy(x + t, state)
        check(f"{kind} step {t}: values and state as eager", torch.allclose(values, value, atol=1e-4)
              and all(torch.allclose(a, b, atol=1e-4) for a, b in zip(new, ref)))  # fmt: skip
        done = torch.zeros(n, device=dev)
        done[::7] = 1
        state = policy.reset_state(ref, done)
    time_steps(kind, step, StepGraph(policy, x, state, capture=False), (x, state, actions, logprobs, values))
sys.exit(0 if ok else 1)
