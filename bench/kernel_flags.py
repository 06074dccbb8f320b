"""What the C kernels' flags cost: the same C built with the old `-ffast-math` flags and with today's, in one run.

Today's flags (`workbench.kernels.build.KERNEL_FLAGS`) are fast-math's without `-ffinite-math-only`, so NaN and
infinity keep their meaning; the old ones were `-O3 -ffast-math -fopenmp-simd -march=native -fPIC`. Each run is a
fresh process that sets the flags, builds the kernels (cached per flags, built before the runs start) and trains
with `PPOTrainer` on the CPU:

  * `puffer:cartpole` with the MLP policy (`sps_puffer_cartpole.py`'s work: 256 agents x 64 steps, hidden 128);
  * the trading job (`policy_sps.py`'s work: 64 envs x 32 steps, 4 minibatches x 4 epochs) with the MLP, LSTM and
    transformer policies.

The two builds alternate run by run (A B B A ...), since other processes share the cores; the table gives the median
steps/s of each and the ratio new / old.

`--calls` times the kernels themselves instead, in one process that loads both builds: a rollout step (`act`) and a
minibatch's loss and gradient (`loss_grad`) on the same shapes, the builds alternating call by call, each call in
its thread's CPU time (which a process waiting for a shared core does not accrue); the median of each.

    python bench/kernel_flags.py                     # 5 repeats, torch on 1 thread
    python bench/kernel_flags.py --repeats 3 --cartpole-steps 500000 --trading-steps 100000
    python bench/kernel_flags.py --calls 400         # the kernels' calls alone
"""

import argparse, json, os, statistics, subprocess, sys

OLD_FLAGS = ("-O3", "-ffast-math", "-fopenmp-simd", "-march=native", "-fPIC")
CASES = {
    "cartpole mlp": {
        "env": "puffer:cartpole", "policy": "mlp", "num_envs": 256, "num_steps": 64, "num_minibatches": 4,
        "update_epochs": 1, "learning_rate": 1e-3, "hidden_size": 128, "num_layers": 1,
    },
    **{
        f"trading {p}": {
            "env": "trading", "policy": p, "num_envs": 64, "num_steps": 32, "num_minibatches": 4,
            "update_epochs": 4, "learning_rate": 3e-4,
        }
        for p in ("mlp", "lstm", "transformer")
    },
}  # fmt: skip

# In the child: the flags set before anything is built, every kernel built (else the run would time torch), a run.
CHILD = """
import json, sys
import workbench.kernels.build as build
flags, config = json.loads(sys.argv[1]), json.loads(sys.argv[2])
if flags != "new": build.KERNEL_FLAGS = tuple(flags)
from workbench.kernels.lstm import lstm_ppo_kernels
from workbench.kernels.ppo import ppo_kernels
from workbench.kernels.transformer import tf_ppo_kernels
assert all(k() is not None for k in (ppo_kernels, lstm_ppo_kernels, tf_ppo_kernels)), "no kernels"
if config is None: sys.exit(0)
from workbench.train.config import TrainConfig
from workbench.train.ppo import PPOTrainer
print(json.dumps(PPOTrainer(TrainConfig.from_dict(config)).fit()["sps"]))
"""


def run(flags, config) -> float | None:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    env.pop("WORKBENCH_KERNELS", None)
    p = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(flags), json.dumps(config)], capture_output=True, text=True, env=env
    )
    if p.returncode:
        sys.exit(f"run failed: {p.stderr.strip()[-2000:]}")
    return float(p.stdout.strip().splitlines()[-1]) if config else None


def time_calls(calls: int) -> dict:
    "Thread CPU time (us) of each kernel call, the two builds alternating, on the cases' shapes."
    import time

    import gymnasium
    import torch

    import workbench.kernels.build as build
    from workbench.kernels.fused import FusedLSTM, FusedMLP, FusedTransformer
    from workbench.kernels.lstm import _declare_lstm
    from workbench.kernels.ppo import declare
    from workbench.kernels.transformer import _declare_tf
    from workbench.policy import PolicyConfig, make_policy

    torch.set_num_threads(1)
    units = {
        FusedMLP: ("ppo.c", declare),
        FusedLSTM: ("ppo_lstm.c", _declare_lstm),
        FusedTransformer: ("ppo_tf.c", _declare_tf),
    }
    libs = {}
    for name, flags in (("old", OLD_FLAGS), ("new", build.KERNEL_FLAGS)):
        saved, build.KERNEL_FLAGS = build.KERNEL_FLAGS, flags
        try:
            for cls, (unit, declare_unit) in units.items():
                lib, why = build.build_kernel(build.SOURCES / unit)
                if lib is None:
                    sys.exit(f"{unit} not built with the {name} flags: {why}")
                declare_unit(lib)
                libs[name, cls] = lib
        finally:
            build.KERNEL_FLAGS = saved
    box = lambda n: gymnasium.spaces.Box(-1, 1, (n,))  # noqa: E731
    shapes = {  # obs size, actions, policy settings, envs x steps of a rollout, minibatch (samples, or envs)
        "cartpole mlp": (4, 2, dict(hidden_size=128, num_layers=1), 256, 64, 4096),
        "trading mlp": (39, 3, {}, 64, 32, 512),
        "trading lstm": (39, 3, dict(policy="lstm"), 64, 32, 16),
        "trading transformer": (39, 3, dict(policy="transformer"), 64, 32, 16),
    }
    out = {}
    for case, (D, A, kw, N, T, M) in shapes.items():
        torch.manual_seed(0)
        pol = make_policy(box(D), gymnasium.spaces.Discrete(A), PolicyConfig(**kw))
        cls = {"mlp": FusedMLP, "lstm": FusedLSTM, "transformer": FusedTransformer}[kw.get("policy", "mlp")]
        fused = {name: cls(libs[name, cls], pol) for name in ("old", "new")}
        x, a, lp, v = torch.randn(N, D), torch.empty(N, dtype=torch.int64), torch.empty(N), torch.empty(N)
        flat = cls is FusedMLP
        shape = (T * N,) if flat else (T, N)
        roll = [torch.randn(*shape, D), torch.randint(0, A, shape)] + [torch.randn(shape) for _ in range(4)]
        rec = {} if flat else dict(starts=(torch.rand(T, N) < 0.02).float(), state=pol.initial_state(N))
        idx = torch.randperm(T * N)[:M] if flat else torch.randperm(N)[:M]
        state = None if flat else pol.initial_state(N)
        work = {
            "act": lambda f: f.act(x, f.noise(N), a, lp, v, state),
            "loss_grad": lambda f: f.loss_grad(*roll, idx, 0.2, 0.01, 0.5, **rec),
        }
        for what, call in work.items():
            times = {"old": [], "new": []}
            for i in range(calls + 10):
                for name in ("old", "new") if i % 2 == 0 else ("new", "old"):
                    t = time.thread_time_ns()
                    call(fused[name])
                    if i >= 10:  # after a warm-up
                        times[name].append((time.thread_time_ns() - t) / 1e3)
            out[f"{case} {what}"] = {k: statistics.median(ts) for k, ts in times.items()}
            o, n = out[f"{case} {what}"]["old"], out[f"{case} {what}"]["new"]
            print(f"{case + ' ' + what:<32} old {o:>9.1f} us   new {n:>9.1f} us   new / old {n / o:.3f}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs of each build for each case")
    ap.add_argument("--cartpole-steps", type=int, default=1_000_000)
    ap.add_argument("--trading-steps", type=int, default=200_000)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the kernels' threads follow it)")
    ap.add_argument("--runs-dir", default="/tmp/kernel_flags_runs")
    ap.add_argument("--calls", type=int, help="time this many calls of each kernel (in-process) instead of runs")
    ap.add_argument("--json", help="also write the runs to this file")
    args = ap.parse_args()
    if args.calls:
        out = time_calls(args.calls)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"args": vars(args), "old_flags": OLD_FLAGS, "calls_us": out}, f, indent=1)
        return
    builds = {"old": list(OLD_FLAGS), "new": "new"}
    for flags in builds.values():
        run(flags, None)  # built and cached before any run is timed
    results = {case: {"old": [], "new": []} for case in CASES}
    for case, base in CASES.items():
        steps = args.cartpole_steps if base["env"] == "puffer:cartpole" else args.trading_steps
        config = {
            **base, "total_timesteps": steps, "seed": 1, "torch_threads": args.threads, "eval_every": 0,
            "checkpoint_every": 0, "device": "cpu", "runs_dir": args.runs_dir,
        }  # fmt: skip
        for r in range(args.repeats):
            for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                results[case][name].append(run(builds[name], config))
                print(f"{case:<20} {name}: {results[case][name][-1]:>10,.0f} steps/s", flush=True)
    print("\n| case | old flags (-ffast-math) | new flags | new / old |\n|---|---:|---:|---:|")
    for case, rs in results.items():
        old, new = statistics.median(rs["old"]), statistics.median(rs["new"])
        print(f"| {case} | {old:,.0f} | {new:,.0f} | {new / old:.3f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "old_flags": OLD_FLAGS, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
