"""Learning on PufferLib's Ocean envs: PuffeRL with the config PufferLib ships for each env, against workbench's PPO
as `workbench train --env puffer:<name>` runs it, on the same env, agents, step budget and seeds, in one run.

PufferLib publishes, for each Ocean env, tuned settings and a step budget (`pufferlib/config/ocean/<name>.ini`,
read by its own `load_config`: its LSTM policy, the Muon optimizer, its learning rate, gamma, minibatch...), and
every Ocean env reports `perf`, a 0-1 score normalised by the env itself (squared: the share of episodes that reach
the target; pong: the share of points won), the number PufferLib's sweeps maximise. The target is perf near 1.
Both trainers here get the env with the same options (pong: PufferLib's frameskip 8) and number of agents (4,096,
in one C env object, Serial backend; PufferLib's own squared config runs 2 x 4,096), device cpu, one torch thread,
PufferLib's step budget, and are scored the same way: the mean `perf` (and `score`) the env logged over the last 20%
of the training steps, the stochastic policy as it trains (PuffeRL's own summary also averages its logs after 20%
of the run). `target` is left out: its perf counts goals reached per log entry, 1 by construction.

    python bench/ocean.py --seeds 1 2 3 --json bench/out/ocean.json --html bench/ocean_curves.html   # 30 min
    python bench/ocean.py --quick                            # smoke test: 1 seed, tiny budgets
"""

import argparse, json, os, statistics, sys, tempfile, time, traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from benchutil import print_result, run_worker, versions
from zoo import summary
from zoo_report import write_report

# env -> (agents in the one C env, step budget: PufferLib's total_timesteps for the env)
OCEAN = {
    "squared": dict(agents=4096, budget=20_000_000),
    "pong": dict(agents=4096, budget=12_000_000),
}
TAIL = 0.2  # score over the last 20% of the training steps


def env_options(name: str) -> dict:
    "The env settings of PufferLib's config for `name` (its [env] section but the number of games): both trainers use them."
    import ast, configparser, glob, pufferlib

    for path in glob.glob(os.path.join(os.path.dirname(pufferlib.__file__), "config", "ocean", "*.ini")):
        cfg = configparser.ConfigParser()
        cfg.read(path)
        if f"puffer_{name}" in cfg["base"]["env_name"].split():
            return {k: ast.literal_eval(v) for k, v in cfg["env"].items() if k != "num_envs"} if "env" in cfg else {}
    raise SystemExit(f"no PufferLib config for puffer_{name}")


def tail_mean(curve: list, steps: int, key: str):
    "Mean of `key` over the curve's points in the last TAIL of `steps`."
    vals = [p[key] for p in curve if p["step"] >= (1 - TAIL) * steps and p.get(key) is not None]
    return float(np.mean(vals)) if vals else None


# ----------------------------------------------------------------------------------------------
# PuffeRL with PufferLib's config for the env
# ----------------------------------------------------------------------------------------------
def run_puffer(name: str, seed: int, budget: int, agents: int, threads: int) -> dict:
    import random, shutil, torch
    import pufferlib.vector

    sys.argv = sys.argv[:1]  # its load_config parses the command line
    from pufferlib import pufferl  # installs a SIGINT handler and RuntimeWarning->error: worker process only

    torch.set_num_threads(threads)
    random.seed(seed), np.random.seed(seed), torch.manual_seed(seed)
    args = pufferl.load_config(f"puffer_{name}")
    args["vec"] = dict(backend=pufferlib.vector.Serial, num_envs=1, seed=seed)
    args["env"]["num_envs"] = agents // args["env"].get("num_agents", 1)
    args["train"].update(
        device="cpu",
        total_timesteps=budget,
        seed=seed,
        compile=False,
        checkpoint_interval=10**9,
        data_dir=tempfile.mkdtemp(prefix="puffer-ocean-"),
    )
    settings = {k: v for k, v in args["train"].items() if not isinstance(v, dict)}
    vecenv = pufferl.load_env(f"puffer_{name}", args)
    assert vecenv.num_agents == agents, (vecenv.num_agents, agents)
    policy = pufferl.load_policy(args, vecenv)
    pufferl.PuffeRL.print_dashboard = lambda self, *a, **k: None
    trainer = pufferl.PuffeRL(dict(**args["train"], env=f"puffer_{name}"), vecenv, policy)
    curve, t0 = [], time.perf_counter()
    while trainer.global_step < budget:
        stats = trainer.evaluate()  # the env's logs since its last log line
        if len(np.atleast_1d(stats.get("perf", []))):
            curve.append(
                dict(step=trainer.global_step, perf=float(np.mean(stats["perf"])), score=float(np.mean(stats["score"])))
            )
        trainer.train()
    seconds = time.perf_counter() - t0
    steps = trainer.global_step
    trainer.vecenv.close()
    trainer.utilization.stop()
    shutil.rmtree(args["train"]["data_dir"], ignore_errors=True)
    return dict(
        trainer="pufferl",
        env=name,
        seed=seed,
        steps=steps,
        seconds=seconds,
        curve=curve,
        params=sum(p.numel() for p in policy.parameters()),
        settings=settings,
    )


# ----------------------------------------------------------------------------------------------
# workbench's PPO with the settings `workbench train --env puffer:<name>` uses
# ----------------------------------------------------------------------------------------------
def run_ours(name: str, seed: int, budget: int, agents: int, threads: int, extra: dict | None = None) -> dict:
    from workbench.runs.events import Kind
    from workbench.train.config import TrainConfig, tuned_settings
    from workbench.train.ppo import PPOTrainer

    options = env_options(name)  # e.g. pong's frameskip 8
    spec = f"puffer:{name}" + ("?" + "&".join(f"{k}={v}" for k, v in options.items()) if options else "")
    tuned = {**tuned_settings(spec), **(extra or {})}
    cfg = TrainConfig.from_dict(
        {
            **tuned,
            "env": spec,
            "num_envs": agents,
            "seed": seed,
            "device": "cpu",
            "torch_threads": threads,
            "total_timesteps": budget,
            "eval_every": 0,
            "checkpoint_every": 0,
        }
    )
    trainer = PPOTrainer(cfg)  # no run folder: writes nothing
    curve = []
    trainer.bus.subscribe(
        lambda e: (
            e.kind == Kind.UPDATE
            and "env/perf" in e.data
            and curve.append(dict(step=e.step, perf=e.data["env/perf"], score=e.data.get("env/score")))
        )
    )
    t0 = time.perf_counter()
    trainer.fit()
    seconds = time.perf_counter() - t0
    trainer.bus.close()
    return dict(
        trainer="workbench",
        env=name,
        spec=spec,
        seed=seed,
        steps=trainer.global_step,
        seconds=seconds,
        curve=curve,
        params=sum(p.numel() for p in trainer.policy.parameters()),
        settings={k: v for k, v in cfg.flat().items() if k in tuned},
        tuned=bool(tuned),
    )


# ----------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------
def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--envs", nargs="+", default=list(OCEAN), choices=list(OCEAN), metavar="ENV")
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    p.add_argument("--trainers", nargs="+", default=["workbench", "pufferl"], choices=["workbench", "pufferl"])
    p.add_argument("--jobs", type=int, default=2, help="runs at a time")
    p.add_argument("--threads", type=int, default=1, help="torch threads of each run")
    p.add_argument("--budget-scale", type=float, default=1.0, help="multiply every step budget")
    p.add_argument("--quick", action="store_true", help="smoke test: seed 1, 20%% budgets")
    p.add_argument("--json", default="bench/out/ocean.json")
    p.add_argument("--html", default="bench/out/ocean_curves.html", help="the learning curves (small, script-free)")
    p.add_argument(
        "--set",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="settings for our trainer on top of `workbench train`'s (to try a row before adding it)",
    )
    p.add_argument("--worker", nargs=5, metavar=("TRAINER", "ENV", "SEED", "BUDGET", "THREADS"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        trainer, name, seed, budget, threads = args.worker
        run = (name, int(seed), int(budget), OCEAN[name]["agents"], int(threads))
        try:
            if trainer == "workbench":  # --set only reaches our trainer
                result = run_ours(*run, extra={k: json.loads(v) for k, v in (kv.split("=", 1) for kv in args.set)})
            else:
                result = run_puffer(*run)
        except BaseException:  # PuffeRL leaves a monitoring thread that keeps a failed process alive
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        print_result(result)
    if args.quick:
        args.seeds, args.budget_scale = [1], 0.2  # a few of PuffeRL's batches (4096 agents x 64 steps)
    jobs = [
        (t, name, seed, int(OCEAN[name]["budget"] * args.budget_scale))
        for name in args.envs
        for seed in args.seeds
        for t in args.trainers
    ]

    def one(job):
        t, name, seed, budget = job
        r = run_worker(
            __file__,
            ["--worker", t, name, seed, budget, args.threads]
            + (["--set", *args.set] if args.set and t == "workbench" else []),
        )
        r.setdefault("trainer", t), r.setdefault("env", name), r.setdefault("seed", seed)
        r["budget"] = budget
        if "error" in r:
            print(f"{name:8s} {t:9s} seed {seed}: {r['error']}", flush=True)
            return r
        r["perf"], r["score"] = (tail_mean(r["curve"], r["steps"], k) for k in ("perf", "score"))
        r["sps"] = r["steps"] / r["seconds"]
        print(
            f"{name:8s} {t:9s} seed {seed}: perf {r['perf']:.3f}  score {r['score']:8.3f}  {r['sps']:9,.0f} SPS  "
            f"{r['seconds']:6.0f} s",
            flush=True,
        )
        return r

    t0 = time.time()
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, jobs))
    out = dict(
        command=" ".join(["python", "bench/ocean.py", *sys.argv[1:]]),
        jobs=args.jobs,
        threads=args.threads,
        versions=versions("torch", "pufferlib"),
        wall_seconds=time.time() - t0,
        results=results,
    )
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(args.json).with_suffix(".part")
    tmp.write_text(json.dumps(out))
    os.replace(tmp, args.json)
    curves = [dict(r, curve=[(p["step"], p["perf"]) for p in r["curve"]]) for r in results if "error" not in r]
    write_report(
        dict(out, results=curves),
        Path(args.html),
        title="Learning curves on PufferLib's Ocean envs: workbench vs PuffeRL (PufferLib's configs)",
        blurb="The env's own perf (0-1) as it logged it during training, against env steps, one line per seed.",
    )

    print(
        f"\n{'env':8s} {'steps':>6s} | {'workbench perf [95% CI] (seeds)':>44s} {'SPS':>7s} | "
        f"{'PuffeRL perf [95% CI] (seeds)':>44s} {'SPS':>7s}"
    )
    for name in args.envs:
        cells = []
        for t in ("workbench", "pufferl"):
            rs = [r for r in results if r["env"] == name and r["trainer"] == t and r.get("perf") is not None]
            if not rs:
                cells.append(f"{'-':>44s} {'-':>7s}")
                continue
            m, (lo, hi) = summary([r["perf"] for r in rs])
            seeds = " / ".join(f"{r['perf']:.2f}" for r in rs)
            cells.append(
                f"{m:.3f} [{lo:.3f}, {hi:.3f}] ({seeds})".rjust(44) + f" {statistics.fmean(r['sps'] for r in rs):7,.0f}"
            )
        budget = int(OCEAN[name]["budget"] * args.budget_scale)
        print(f"{name:8s} {budget / 1e6:5.0f}M | {cells[0]} | {cells[1]}")
    print(f"\n{len(results)} runs in {time.time() - t0:.0f} s; data: {args.json}")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
