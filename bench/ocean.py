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

    python -m bench ocean                                  # seeds 1-3, two runs at a time: 30 min; recorded
    python -m bench ocean --quick                          # smoke test: squared, 1 seed, 2 batches
    python -m bench ocean --envs squared --seeds 4 --set ent_coef=0.01 --no-record   # a row tried before it is one
"""

import os, statistics, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from benchutil import tuned_trainer, versions
from runner import fresh, make_table
from zoo import setting, summary
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
    params = sum(p.numel() for p in policy.parameters())
    return {"trainer": "pufferl", "env": name, "seed": seed, "steps": steps, "seconds": seconds, "curve": curve,
            "params": params, "settings": settings}  # fmt: skip


# ----------------------------------------------------------------------------------------------
# workbench's PPO with the settings `workbench train --env puffer:<name>` uses
# ----------------------------------------------------------------------------------------------
def run_ours(name: str, seed: int, budget: int, agents: int, threads: int, extra: dict | None = None) -> dict:
    from workbench.runs.events import Kind

    options = env_options(name)  # e.g. pong's frameskip 8
    spec = f"puffer:{name}" + ("?" + "&".join(f"{k}={v}" for k, v in options.items()) if options else "")
    trainer, settings = tuned_trainer(spec, seed, budget, extra, num_envs=agents, torch_threads=threads)
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
        settings=settings,
        tuned=bool(settings),
    )


# ----------------------------------------------------------------------------------------------
# The runner's side: options, the runs, the record, the table
# ----------------------------------------------------------------------------------------------
TRAINERS = ("workbench", "pufferl")
FIGURES = {f"{e}/{k}": "higher" for e in OCEAN for k in ("workbench_perf", "workbench_sps", "sps_ratio")}


def options(p):
    p.add_argument("--envs", nargs="+", default=list(OCEAN), choices=list(OCEAN), metavar="ENV")
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    p.add_argument("--trainers", nargs="+", default=list(TRAINERS), choices=TRAINERS)
    p.add_argument("--jobs", type=int, default=2, help="runs at a time")
    p.add_argument("--threads", type=int, default=1, help="torch threads of each run")
    p.add_argument("--budget-scale", type=float, default=1.0, help="multiply every step budget")
    p.add_argument("--set", action="append", default=[], type=setting, metavar="KEY=VALUE",
                   help="one of our settings over `workbench train`'s (to try a row before adding it)")  # fmt: skip


def one(job: tuple, threads: int, ours: dict) -> dict:
    "One (trainer, env, seed, budget) in a fresh process, scored on the last TAIL of its steps."
    t, name, seed, budget = job
    run = dict(name=name, seed=seed, budget=budget, agents=OCEAN[name]["agents"], threads=threads)
    r = fresh("ocean", "run_ours", extra=ours, **run) if t == "workbench" else fresh("ocean", "run_puffer", **run)
    r.update(trainer=t, env=name, seed=seed, budget=budget)
    if "error" not in r:
        r["perf"], r["score"] = (tail_mean(r["curve"], r["steps"], k) for k in ("perf", "score"))
        r["sps"] = r["steps"] / r["seconds"]
    n = lambda x, spec: "-" if x is None else format(x, spec)  # (a short run may log nothing in its last 20%)
    said = r.get("error") or f"perf {n(r['perf'], '.3f')}  score {n(r['score'], '8.3f')}  {r['sps']:9,.0f} SPS"
    print(f"{name:8s} {t:9s} seed {seed}: {said}", flush=True)
    return r


def run(quick: bool = False, envs=tuple(OCEAN), seeds=(1, 2, 3), trainers=TRAINERS, jobs: int = 2, threads: int = 1,
        budget_scale: float = 1.0, set=(), out: Path = Path("bench/out")) -> dict:  # fmt: skip
    budgets = {e: int(OCEAN[e]["budget"] * budget_scale) for e in envs}
    if quick:  # one env, two of PuffeRL's batches (4,096 agents x 64 steps)
        envs, seeds, budgets = list(envs)[:1], [1], {envs[0]: 2 * 4096 * 64}
    todo = [(t, e, s, budgets[e]) for e in envs for s in seeds for t in trainers]
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda j: one(j, threads, dict(set)), todo))
    out.mkdir(parents=True, exist_ok=True)
    curves = [dict(r, curve=[(p["step"], p["perf"]) for p in r["curve"]]) for r in results if "error" not in r]
    write_report({"command": "python -m bench ocean", "results": curves}, out / "ocean_curves.html",
                 title="Learning curves on PufferLib's Ocean envs: workbench vs PuffeRL (PufferLib's configs)",
                 blurb="The env's own perf (0-1) as it logged it while training, against env steps, a line a seed.")  # fmt: skip
    keep = ("trainer", "env", "seed", "budget", "steps", "seconds", "perf", "score", "sps", "params", "error")
    raw = [{k: r[k] for k in keep if k in r} for r in results]
    figures, ci = {}, {}
    for e in envs:
        for t in trainers:
            ran = [r for r in raw if r["env"] == e and r["trainer"] == t and "error" not in r]
            if ran:
                figures[f"{e}/{t}_sps"] = round(statistics.fmean(r["sps"] for r in ran))
            if [r for r in ran if r.get("perf") is not None]:
                m, (lo, hi) = summary([r["perf"] for r in ran if r.get("perf") is not None])
                figures[f"{e}/{t}_perf"], ci[f"{e}/{t}_perf"] = round(m, 3), [round(lo, 3), round(hi, 3)]
        if f"{e}/workbench_sps" in figures and f"{e}/pufferl_sps" in figures:
            figures[f"{e}/sps_ratio"] = round(figures[f"{e}/workbench_sps"] / figures[f"{e}/pufferl_sps"], 2)
    settings = {"envs": list(envs), "seeds": list(seeds), "trainers": list(trainers), "budgets": budgets,
                "threads": threads, "ours": dict(set)}  # fmt: skip
    return {"settings": settings, "figures": figures, "ci95": ci, "raw": raw, "jobs": jobs,
            "versions": versions("torch", "pufferlib")}  # fmt: skip


def table(records: list) -> str:
    "A row an env of each full run: each trainer's perf over the last 20% of its steps (seeds), its steps/s."

    def cells(rec):
        f, rows = rec["figures"], []
        for e in rec["settings"]["envs"]:
            row = [e, f"{rec['settings']['budgets'][e] / 1e6:g}M"]
            for t in TRAINERS:
                runs = [r for r in rec["raw"] if r["env"] == e and r["trainer"] == t and r.get("perf") is not None]
                ci = rec.get("ci95", {}).get(f"{e}/{t}_perf")
                row += ([f"{f[f'{e}/{t}_perf']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]", " / ".join(f"{r['perf']:.2f}" for r in runs),
                         f"{f[f'{e}/{t}_sps']:,}"] if runs else ["-", "-", "-"])  # fmt: skip
            rows.append(row + [f"{f[f'{e}/sps_ratio']:.2f}" if f"{e}/sps_ratio" in f else "-"])
        return rows

    return make_table(["env", "steps", "workbench perf [95% CI]", "seeds", "steps/s", "PuffeRL perf [95% CI]", "seeds",
                       "steps/s", "steps/s ratio"], records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench ocean`)
    from runner import main

    sys.exit(main(["ocean", *sys.argv[1:]]))
