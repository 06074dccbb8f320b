"""Where our LSTM's time goes on a GPU: the trainer's rollout and update per iteration, and one minibatch's
replay (forward + backward) through `lstm_sequence` in each of its forms against PuffeRL's (one cuDNN call from
zeros over the segment, episode starts inside it ignored).

    python tools/gpu/lstm_profile.py --device cuda            # on the lent GPU (tools/gpu/run.sh, STAGES=lstmprof)
    python tools/gpu/lstm_profile.py --replay-only --profile   # the replay alone, with torch.profiler's tables
    python tools/gpu/lstm_profile.py --device cpu --num-envs 256 --updates 3 --transformer   # tries it here
"""

import argparse, statistics, time

import torch
from torch import nn


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def timed_ms(fn, device, repeats=10):
    fn()
    sync(device)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync(device)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def replay(args):
    from workbench.policy import lstm_sequence
    from workbench.policy.replay import LSTMScan

    T, B, H, dev = args.horizon, args.minibatch // args.horizon, 128, args.device
    torch.manual_seed(0)
    lstm = nn.LSTM(H, H).to(dev)
    e = torch.randn(T, B, H, device=dev, requires_grad=True)
    starts = (torch.rand(T, B, device=dev) < args.start_rate).float()
    state = (torch.zeros(1, B, H, device=dev), torch.zeros(1, B, H, device=dev))
    print(f"# replay of one minibatch: ({T}, {B}, {H}), episodes begin at {args.start_rate:.0%} of (t, env)")

    def run(f):
        def go():
            out = f()
            out.float().square().mean().backward()

        return go

    def scan():
        gx = torch.addmm(lstm.bias_ih_l0 + lstm.bias_hh_l0, e.flatten(0, 1), lstm.weight_ih_l0.t()).view(T, B, -1)
        return LSTMScan.apply(gx, lstm.weight_hh_l0, state[0][0], state[1][0], starts)[0]

    forms = {
        "padded (ours on CUDA, update)": lambda: lstm_sequence(lstm, e, state, starts, padded=True, final=False)[0],
        "packed (ours on CUDA, with state)": lambda: lstm_sequence(lstm, e, state, starts, packed=True)[0],
        "stretches": lambda: lstm_sequence(lstm, e, state, starts, packed=False, scan=False)[0],
        "LSTMScan (ours on CPU)": scan,
        "one call, starts ignored (PuffeRL)": lambda: lstm(e, state)[0],
        "one call as wide as the pieces": lambda: lstm(wide)[0],
    }
    pieces = B + int(starts[1:].sum())
    wide = torch.randn(T, pieces, H, device=dev, requires_grad=True)  # the padded form's cuDNN call alone
    for name, f in forms.items():
        print(f"  {name:<36} {timed_ms(run(f), dev):8.2f} ms")
        if args.profile and ("packed" in name or "padded" in name):
            from torch.profiler import ProfilerActivity, profile

            acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
            with profile(activities=acts) as prof:
                run(f)()
                sync(dev)
            key = "self_cuda_time_total" if dev == "cuda" else "self_cpu_time_total"
            print(prof.key_averages().table(sort_by=key, row_limit=14, max_name_column_width=40))
        if dev == "cuda" and "Scan" not in name:  # LSTMScan is fp32/fp64 only
            with torch.autocast("cuda", torch.bfloat16):
                print(f"  {name + ', bf16 autocast':<36} {timed_ms(run(f), dev):8.2f} ms")


def trainer(args, policy="lstm", form=None):
    "The trainer's time per phase; `form` forces a form of the LSTM's replay (packed) instead of the default."
    import workbench.policy.nets as wp
    from workbench.train.config import TrainConfig
    from workbench.train.ppo import PPOTrainer

    phases = {"rollout": [], "advantages": [], "update": []}

    def timed(fn, key):
        def wrapper(self, *a, **k):
            sync(args.device)
            t0 = time.perf_counter()
            out = fn(self, *a, **k)
            sync(args.device)
            phases[key].append(time.perf_counter() - t0)
            return out

        return wrapper

    Timed = type("Timed", (PPOTrainer,), {})
    for name, key in (("collect_rollout", "rollout"), ("compute_advantages", "advantages"), ("update", "update")):
        setattr(Timed, name, timed(getattr(PPOTrainer, name), key))

    batch = args.num_envs * args.horizon
    cfg = TrainConfig.from_dict(
        {
            "env": "puffer:cartpole",
            "num_envs": args.num_envs,
            "backend": "serial",
            "num_steps": args.horizon,
            "num_minibatches": batch // args.minibatch,
            "update_epochs": 1,
            "learning_rate": 1e-3,
            "policy": policy,
            "hidden_size": 128,
            "total_timesteps": args.updates * batch,
            "device": args.device,
            "torch_threads": 1,
            "seed": 1,
            "eval_every": 0,
            "checkpoint_every": 0,
        }
    )
    real = wp.lstm_sequence
    if form:
        wp.lstm_sequence = lambda *a, **k: real(*a, **{**k, form: True})
    try:
        t = Timed(cfg)
        t.fit()
    finally:
        wp.lstm_sequence = real
    print(
        f"# trainer, {policy}{f' ({form} replay)' if form else ''}, {args.num_envs} envs x {args.horizon} steps, "
        f"minibatch {args.minibatch}; ms per iteration (median after the first)"
    )
    for k, v in phases.items():
        print(f"  {k:<12} {statistics.median(v[1:]) * 1e3:8.1f} ms")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--horizon", type=int, default=64)
    p.add_argument("--minibatch", type=int, default=32768)
    p.add_argument("--updates", type=int, default=8)
    p.add_argument("--start-rate", type=float, default=0.05, help="share of (t, env) where an episode begins")
    p.add_argument("--profile", action="store_true", help="also torch.profiler's table of the packed forms")
    p.add_argument("--replay-only", action="store_true")
    p.add_argument("--transformer", action="store_true", help="also the trainer with the transformer policy")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (the benchmarks use 1)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    args.minibatch = min(args.minibatch, args.num_envs * args.horizon)
    replay(args)
    if not args.replay_only:
        trainer(args)
        trainer(args, form="packed")
        if args.transformer:
            trainer(args, policy="transformer")
