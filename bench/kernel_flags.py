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

    python -m bench kernel_flags                     # 5 repeats, torch on 1 thread
    python -m bench kernel_flags --repeats 3 --cartpole-steps 500000 --trading-steps 100000
    python -m bench kernel_flags --calls 400         # the kernels' calls alone
    python -m bench kernel_flags --quick             # a smoke test: a short trading run of each build
"""

import os, statistics, sys, tempfile

from runner import bootstrap_ratio, fresh, interval, make_table

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


def child(flags, config) -> dict:
    """In a fresh process (`runner.fresh`): the flags set before anything is built, every kernel built (else the run
    would time torch), a run."""
    os.environ.pop("WORKBENCH_KERNELS", None)
    import workbench.kernels.build as build

    if flags != "new":
        build.KERNEL_FLAGS = tuple(flags)
    from workbench.kernels.lstm import lstm_ppo_kernels
    from workbench.kernels.ppo import ppo_kernels
    from workbench.kernels.transformer import tf_ppo_kernels

    if not all(k() is not None for k in (ppo_kernels, lstm_ppo_kernels, tf_ppo_kernels)):
        raise RuntimeError(f"the kernels were not built with {flags} flags")
    if config is None:
        return {}
    from workbench.train.config import TrainConfig
    from workbench.train.ppo import PPOTrainer

    return {"sps": PPOTrainer(TrainConfig.from_dict(config)).fit()["sps"]}


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
                    raise RuntimeError(f"{unit} not built with the {name} flags: {why}")
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


def options(p):
    p.add_argument("--repeats", type=int, default=5, help="runs of each build for each case")
    p.add_argument("--cartpole-steps", type=int, default=1_000_000)
    p.add_argument("--trading-steps", type=int, default=200_000)
    p.add_argument("--threads", type=int, default=1, help="torch threads (the kernels' threads follow it)")
    p.add_argument(
        "--calls", type=int, default=0, help="time this many calls of each kernel (in-process) instead of runs"
    )


def slug(case: str) -> str:
    return case.replace(" ", "_")


FIGURES = {
    **{f"{slug(c)}_{k}": "higher" for c in CASES for k in ("old_sps", "new_sps", "new_over_old")},
    **{f"{slug(c)}_{w}_{k}_us": "lower" for c in CASES for w in ("act", "loss_grad") for k in ("old", "new")},
}


def runs(repeats, cartpole_steps, trading_steps, threads, quiet, cases=tuple(CASES)) -> tuple:
    "Whole runs, the builds alternating (A B B A ...): (figures, intervals, raw)."
    builds = {"old": list(OLD_FLAGS), "new": "new"}
    for name, flags in builds.items():  # built and cached before any run is timed
        if "error" in (r := fresh("kernel_flags", "child", flags=flags, config=None)):
            raise SystemExit(f"kernel_flags: the {name} build failed: {r['error']}")
    figures, ci, raw = {}, {}, []
    with tempfile.TemporaryDirectory(prefix="kernel-flags-") as runs_dir:
        for case in cases:
            base = CASES[case]
            steps = cartpole_steps if base["env"] == "puffer:cartpole" else trading_steps
            config = {**base, "total_timesteps": steps, "seed": 1, "torch_threads": threads, "eval_every": 0,
                      "checkpoint_every": 0, "device": "cpu", "runs_dir": runs_dir}  # fmt: skip
            sps = {"old": [], "new": []}
            for rep in range(repeats):
                for name in ("old", "new") if rep % 2 == 0 else ("new", "old"):
                    busy = quiet()
                    r = fresh("kernel_flags", "child", flags=builds[name], config=config)
                    raw.append({"case": case, "build": name, "busy_before": round(busy, 3), **r})
                    print(f"  {case:<20} {name}: " + (r["error"] if "error" in r else f"{r['sps']:>10,.0f} steps/s"))
                    if "sps" in r:
                        sps[name].append(r["sps"])
            if sps["old"] and sps["new"]:
                old, new = statistics.median(sps["old"]), statistics.median(sps["new"])
                figures |= {f"{slug(case)}_old_sps": round(old), f"{slug(case)}_new_sps": round(new),
                            f"{slug(case)}_new_over_old": round(new / old, 3)}  # fmt: skip
                if repeats > 1:
                    ci[f"{slug(case)}_new_over_old"] = bootstrap_ratio(sps["new"], sps["old"], stat=statistics.median)
    return figures, ci, raw


def run(quick=False, repeats=5, cartpole_steps=1_000_000, trading_steps=200_000, threads=1, calls=0,
        quiet=lambda: 0.0) -> dict:  # fmt: skip
    if quick:
        repeats, trading_steps, calls = 1, 2_048, calls and 20
    settings = {"repeats": repeats, "cartpole_steps": cartpole_steps, "trading_steps": trading_steps,
                "threads": threads, "calls": calls, "old_flags": list(OLD_FLAGS)}  # fmt: skip
    if calls:
        quiet()
        us = time_calls(calls)
        figures = {f"{slug(k)}_{b}_us": round(v, 1) for k, d in us.items() for b, v in d.items()}
        return {"settings": settings, "figures": figures, "raw": us}
    figures, ci, raw = runs(repeats, cartpole_steps, trading_steps, threads, quiet, ["trading mlp"] if quick else CASES)
    return {"settings": settings, "figures": figures, "ci95": ci, "raw": raw}


def table(records: list) -> str:
    """A row a case of each full run: each build's median steps/s and new / old with its 95% interval; of a run of
    `--calls`, a row a kernel call: each build's median microseconds a call."""

    def cells(rec):
        f, n = rec["figures"], rec["settings"]
        if n["calls"]:
            return [[f"{case} `{w}` (us a call)", f"{n['calls']} calls", f"{f[k + '_old_us']:,.1f}", f"{f[k + '_new_us']:,.1f}",
                     f"{f[k + '_new_us'] / f[k + '_old_us']:.2f}"]
                    for case in CASES for w in ("act", "loss_grad") if (k := f"{slug(case)}_{w}") + "_old_us" in f]  # fmt: skip
        return [[f"{case} (steps/s)", f"{n['repeats']} runs", f"{f[k + '_old_sps']:,}", f"{f[k + '_new_sps']:,}",
                 f"{f[k + '_new_over_old']:.2f}{interval(rec, k + '_new_over_old')}"]
                for case in CASES if (k := slug(case)) + "_old_sps" in f]  # fmt: skip

    return make_table(
        ["case", "each build", "old flags (-ffast-math)", "new flags", "new / old [95% CI]"], records, cells
    )


if __name__ == "__main__":  # (the same as `python -m bench kernel_flags`)
    from runner import main

    sys.exit(main(["kernel_flags", *sys.argv[1:]]))
