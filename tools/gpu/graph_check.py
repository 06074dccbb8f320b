"""On a GPU: the rollout step replayed as a CUDA graph (`workbench.train.graphs.StepGraph`) gives what the policy's
eager step gives, follows the optimizer's in-place updates, draws fresh noise each replay, and is faster; prints one
line a check and exits 1 if one fails. Run by tools/gpu/run.sh (stage `graphs`)."""

import copy, sys, time
from types import SimpleNamespace

import gymnasium as gym
import torch
import torch.nn.functional as F

from workbench.policy import PolicyConfig, make_policy
from workbench.train.backend import TorchBackend, make_adam
from workbench.train.graphs import GaeGraph, StepGraph, UpdateGraph, minibatch_epoch
from workbench.train.loss import compute_gae

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

# The update's epoch as one graph (`UpdateGraph`): the same parameters, Adam state and stats as the eager epoch, after
# several epochs with a changed learning rate and a changed setting (a new capture), and its time; GAE likewise.

for kind, bf16 in (("mlp", False), ("mlp", True), ("lstm", False)):
    torch.manual_seed(0)
    policy = make_policy(
        gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2), PolicyConfig(policy=kind, hidden_size=128)
    ).to(dev)
    pair = [TorchBackend(p, make_adam(p.parameters(), 1e-3)) for p in (policy, copy.deepcopy(policy))]
    T, N, H = 64, 4096, 128
    b = SimpleNamespace(obs=torch.randn(T, N, 4, device=dev), actions=torch.randint(0, 2, (T, N), device=dev),
                        logprobs=-torch.rand(T, N, device=dev), advantages=torch.randn(T, N, device=dev),
                        returns=torch.randn(T, N, device=dev), values=torch.randn(T, N, device=dev), states=None,
                        starts=(torch.rand(T, N, device=dev) < 0.05).float(),
                        initial_state=(torch.randn(1, N, H, device=dev) * 0.1, torch.randn(1, N, H, device=dev) * 0.1)
                        if kind == "lstm" else None)  # fmt: skip
    units, per_mb = (N, N // 8) if kind == "lstm" else (T * N, 32768)  # an LSTM's units are whole envs
    ppo = SimpleNamespace(clip_coef=0.2, ent_coef=0.01, vf_coef=0.5, norm_adv=True, clip_vloss=True, max_grad_norm=0.5)
    eager, graphed = pair
    ug = graphed.update_graph = UpdateGraph(graphed)  # (begin_update stages the rollout into it)
    cast = torch.autocast("cuda", torch.bfloat16, enabled=bf16, cache_enabled=False)
    with cast:
        for update in range(3):  # each a new rollout in new tensors (the graph reads its own copies)
            b.obs, b.advantages = torch.randn(T, N, 4, device=dev), torch.randn(T, N, device=dev)
            if kind == "lstm":
                b.starts = (torch.rand(T, N, device=dev) < 0.05).float()
                b.initial_state = tuple(torch.randn(1, N, H, device=dev) * 0.1 for _ in range(2))
            for lrn in pair:
                lrn.begin_update(b)
            if update == 1:  # a new rate: read at each replay
                for lrn in pair:
                    lrn.optimizer.param_groups[0]["lr"] = 3e-4
            if update == 2:  # a setting the graph holds: captured again
                ppo.ent_coef = 0.02
            for epoch in range(2):
                perm = torch.randperm(units, device=dev)
                ref, out = minibatch_epoch(eager, perm, per_mb, ppo), ug(perm, per_mb, ppo)
        same = all(torch.allclose(p, q, atol=1e-5 if kind == "mlp" and not bf16 else 1e-3) for p, q in
                   zip(eager.policy.parameters(), graphed.policy.parameters()))  # fmt: skip
        name = f"{kind} {'bf16' if bf16 else 'fp32'}"
        check(f"update graph {name}: captured", ug.graph is not None, ug.why or "")
        check(f"update graph {name}: parameters as the eager epochs'", same)
        check(f"update graph {name}: stats as eager", torch.allclose(out[0], ref[0], rtol=1e-3, atol=1e-3))
        for label, fn in (
            ("graph", lambda: ug(perm, per_mb, ppo)),
            ("eager", lambda: minibatch_epoch(eager, perm, per_mb, ppo)),
        ):
            sync()
            t0 = time.perf_counter()
            for _ in range(10):
                fn()
            sync()
            ms = (time.perf_counter() - t0) / 10 * 1e3
            print(f"     update {name}: {label} epoch of {units // per_mb} minibatches: {ms:.2f} ms")
r, v = torch.randn(64, 16384, device=dev), torch.randn(64, 16384, device=dev)
d, nv = (torch.rand(64, 16384, device=dev) < 0.05).float(), torch.randn(16384, device=dev)
gae = GaeGraph(compute_gae)
out = gae(r, v, d, nv, 0.99, 0.95)
check(
    "GAE graph: captured, as eager",
    gae.graph is not None and torch.allclose(out[0], compute_gae(r, v, d, nv, 0.99, 0.95)[0], atol=1e-5),
    gae.why or "",
)
time_steps("GAE", lambda *a: gae(*a, 0.99, 0.95), lambda *a: compute_gae(*a, 0.99, 0.95), (r, v, d, nv))
sys.exit(0 if ok else 1)
