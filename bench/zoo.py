"""Learning results: workbench's PPO (as `workbench train --env gym:<id>` runs it) against Stable-Baselines3's PPO with
rl-zoo's tuned hyperparameters (`bench/zoo.toml`), on the same env, step budget and seeds, in one run.

For every (env, seed) both trainers train for the same number of env steps; then one common function plays 100
greedy episodes of the env (seeds 10,000-10,099, actions clipped to a Box's bounds, SB3's observations through
its frozen VecNormalize statistics) and reports the mean return. Learning curves (the mean return of the
episodes finished in each rollout, against env steps) go to `zoo_curves.html` in the runner's `--out` folder (inline
SVG, no script). Each run is a fresh process; `--jobs 2` runs two at a time (one torch thread each), which is what
fits the wall time of a 2-core machine.

    python -m bench zoo --envs Pendulum-v1                         # the Pendulum claim of bench/RESULTS.md, seeds 1-3
    python -m bench zoo --jobs 2                                   # the whole table (hours: the MuJoCo rows at 1M)
    python -m bench zoo --quick                                    # smoke test: 1 seed, 2,048 steps a run
    python -m bench zoo --envs HalfCheetah-v4 --trainers workbench --set activation=relu --jobs 2
                                                                   # our side with a setting changed from the row
    python -m bench zoo --envs Hopper-v4 --kept-only               # the table of the runs kept so far

A finished run is kept in `--keep` (bench/out/zoo_runs) under its trainer, env, seed, budget and a hash of its
settings, and read from there when the table is asked for again: the MuJoCo rows (hours on 2 cores) are built
across sessions, and a stopped run loses only its unfinished pairs. Times are CPU seconds of the run's process
(`time.process_time`: the trainers run one thread each), which a busy or paused machine does not inflate. A record
without SB3's side (`--trainers workbench`) is shown in RESULTS against the last record's SB3 runs of that env.
"""

import hashlib, json, math, statistics, time, tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from benchutil import greedy_returns, tuned_trainer, versions
from runner import fresh, make_table
from zoo_report import write_report

# rl-zoo's hyperparams/ppo.yml rows (the SB3 side), with the step budget both trainers get: data, in zoo.toml
with open(Path(__file__).with_name("zoo.toml"), "rb") as f:
    ZOO = tomllib.load(f)


# ----------------------------------------------------------------------------------------------
# workbench: the settings `workbench train --env gym:<id>` uses (defaults + the env's tuned row), with the budget
# ----------------------------------------------------------------------------------------------
def run_ours(env_id: str, seed: int, budget: int, ours: dict | None = None) -> dict:
    import torch
    from workbench.runs.events import Kind, Metric

    spec = f"gym:{env_id}"
    trainer, settings = tuned_trainer(spec, seed, budget, ours)  # the env's row, with the settings given to this run
    curve = []
    trainer.bus.subscribe(
        lambda e: e.kind == Kind.UPDATE and Metric.RETURN in e.data and curve.append((e.step, e.data[Metric.RETURN]))
    )
    t0, c0 = time.perf_counter(), time.process_time()
    trainer.fit()
    seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    trainer.bus.close()
    policy = trainer.policy.cpu().eval()
    returns = greedy_returns(env_id, lambda o: policy.act(torch.as_tensor(o), greedy=True)[0].numpy())
    return dict(
        trainer="workbench",
        env=env_id,
        seed=seed,
        steps=trainer.global_step,
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        returns=returns,
        curve=curve,
        settings=settings,
        tuned=bool(settings),
    )


# ----------------------------------------------------------------------------------------------
# Stable-Baselines3 with rl-zoo's row (VecNormalize where the row says normalize)
# ----------------------------------------------------------------------------------------------
def schedule(value):
    "rl-zoo's 'lin_X': linear from X to 0 over training."
    if isinstance(value, str) and value.startswith("lin_"):
        start = float(value[4:])
        return lambda progress: progress * start
    return value


def run_sb3(env_id: str, seed: int, budget: int) -> dict:
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    torch.set_num_threads(1)
    row = dict(ZOO[env_id]["sb3"])
    n_envs, normalize = row.pop("n_envs", 1), row.pop("normalize", False)
    kwargs = dict(row.pop("policy_kwargs", {}))
    if kwargs.get("activation_fn") == "relu":  # (rl-zoo writes nn.ReLU)
        kwargs["activation_fn"] = torch.nn.ReLU
    env = make_vec_env(env_id, n_envs=n_envs, seed=seed)
    if normalize:
        env = VecNormalize(env, gamma=row.get("gamma", 0.99))
    row = {k: schedule(v) for k, v in row.items()}
    model = PPO("MlpPolicy", env, seed=seed, device="cpu", policy_kwargs=kwargs or None, **row)
    curve = []

    class Curve(BaseCallback):
        def _on_rollout_end(self):
            if self.model.ep_info_buffer:
                curve.append((self.num_timesteps, float(np.mean([e["r"] for e in self.model.ep_info_buffer]))))

        def _on_step(self):
            return True

    t0, c0 = time.perf_counter(), time.process_time()
    model.learn(budget, callback=Curve())
    seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    norm = env if normalize else None
    if norm is not None:
        norm.training = False

    def act(obs):
        return model.predict(norm.normalize_obs(obs) if norm is not None else obs, deterministic=True)[0]

    return dict(
        trainer="sb3",
        env=env_id,
        seed=seed,
        steps=int(model.num_timesteps),
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        returns=greedy_returns(env_id, act),
        curve=curve,
        settings=ZOO[env_id]["sb3"],
    )


# ----------------------------------------------------------------------------------------------
# Driver: the runs, the record, the table
# ----------------------------------------------------------------------------------------------
FIGURES = {f"{e}/{k}": d for e in ZOO for k, d in (("workbench", "higher"), ("workbench_cpu_s", "lower"))}
T95 = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}  # Student's t, 2-sided


def summary(means: list) -> tuple:
    "(mean over seeds, its 95% t-interval) of each seed's 100-episode mean."
    m = statistics.fmean(means)
    half = T95.get(len(means), 2.0) * statistics.stdev(means) / math.sqrt(len(means)) if len(means) > 1 else 0.0
    return m, [m - half, m + half]


def settings_of(trainer: str, env_id: str, ours: dict | None = None) -> dict:
    "What a run of `trainer` on `env_id` is configured by: our tuned row (with the settings `ours` given), or rl-zoo's row."
    if trainer == "sb3":
        return ZOO[env_id]["sb3"]
    from workbench.train.config import tuned_settings

    unused = ("eval_every", "checkpoint_every")  # the zoo's runs neither evaluate nor save while they train
    return {k: v for k, v in {**tuned_settings(f"gym:{env_id}"), **(ours or {})}.items() if k not in unused}


def kept_path(folder: str, trainer: str, env_id: str, seed: int, budget: int, ours: dict | None = None):
    "Where a finished run is kept: named by trainer, env, seed, budget and a hash of its settings (None: keep nothing)."
    if not folder:
        return None
    digest = hashlib.sha1(json.dumps(settings_of(trainer, env_id, ours), sort_keys=True).encode()).hexdigest()[:8]
    return Path(folder) / f"{trainer}-{env_id}-seed{seed}-{budget}-{digest}.json"


def setting(pair: str) -> tuple:
    "One `--set KEY=VALUE` of our side (a value read as JSON where it is, else as text), checked as the trainer would."
    import argparse

    from workbench.train.config import TrainConfig

    key, eq, text = pair.partition("=")
    if not eq:
        raise argparse.ArgumentTypeError(f"takes KEY=VALUE, got {pair!r}")
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = text
    try:
        TrainConfig.from_dict({"env": "gym:CartPole-v1", key: value})
    except Exception as e:  # an unknown key or a bad value: one line, before any work
        raise argparse.ArgumentTypeError(f"{key}: {e}") from None
    return key, value


def options(p):
    p.add_argument("--envs", nargs="+", default=list(ZOO), choices=list(ZOO), metavar="ENV")
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    p.add_argument("--trainers", nargs="+", default=["workbench", "sb3"], choices=["workbench", "sb3"])
    p.add_argument("--jobs", type=int, default=1, help="runs at a time (each one process, one torch thread)")
    p.add_argument("--budget-scale", type=float, default=1.0, help="multiply every step budget (e.g. 0.5)")
    p.add_argument("--set", action="append", default=[], type=setting, metavar="KEY=VALUE",
                   help="one of our settings, over the row")  # fmt: skip
    p.add_argument("--kept-only", action="store_true", help="the table of the runs in --keep; run nothing")
    p.add_argument("--keep", default="bench/out/zoo_runs", help="folder of finished runs ('' keeps nothing)")


def one(job: tuple, keep: str, kept_only: bool, ours: dict) -> dict:
    "One (trainer, env, seed, budget): read from `keep` where it is there, else trained in a fresh process."
    from workbench.core import atomic_write_text, code_version

    t, e, s, b = job
    kept = kept_path(keep, t, e, s, b, ours if t == "workbench" else None)
    if kept and kept.exists():
        r, how = json.loads(kept.read_text()), "kept"
    elif kept_only:
        r, how = {"error": "not run yet"}, "missing"
    else:
        args = dict(env_id=e, seed=s, budget=b, **({"ours": ours} if t == "workbench" else {}))
        r, how = fresh("zoo", "run_ours" if t == "workbench" else "run_sb3", **args), "ran"
        r["commit"] = code_version()
        if kept and "error" not in r:
            atomic_write_text(kept, json.dumps({**r, "budget": b}))
    r.update(trainer=t, env=e, seed=s, budget=b, how=how)
    done = r["error"] if "error" in r else f"greedy {np.mean(r['returns']):8.1f}  {r['cpu_seconds']:6.0f} cpu s"
    print(f"{e:26s} {t:9s} seed {s}: {done} ({how})", flush=True)
    return r


def run(quick: bool = False, envs=None, seeds=(1, 2, 3), trainers=("workbench", "sb3"), jobs: int = 1,
        budget_scale: float = 1.0, set=(), kept_only: bool = False, keep: str = "bench/out/zoo_runs",
        out: Path = Path("bench/out")) -> dict:  # fmt: skip
    envs, ours = list(envs or ZOO), dict(set)
    if quick:  # every part of the benchmark, not its learning: the same small run for every env
        seeds, keep = [1], ""
    budgets = {e: 2_048 if quick else max(2_048, int(ZOO[e]["budget"] * budget_scale)) for e in envs}
    todo = [(t, e, s, budgets[e]) for e in envs for s in seeds for t in trainers]
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda j: one(j, keep, kept_only, ours), todo))
    out.mkdir(parents=True, exist_ok=True)
    write_report({"command": f"python -m bench zoo --envs {' '.join(envs)}", "results": results},
                 out / "zoo_curves.html")  # fmt: skip
    raw = [{k: r.get(k) for k in ("trainer", "env", "seed", "budget", "steps", "cpu_seconds", "seconds", "how", "commit")}
           | ({"error": r["error"]} if "error" in r else {"mean": round(float(np.mean(r["returns"])), 2),
                                                          "std": round(float(np.std(r["returns"])), 2)})
           for r in results]  # fmt: skip
    figures, ci = {}, {}
    for e in envs:
        for t in trainers:
            done = [r for r in raw if r["env"] == e and r["trainer"] == t and "mean" in r]
            if done:
                m, (lo, hi) = summary([r["mean"] for r in done])
                figures[f"{e}/{t}"], ci[f"{e}/{t}"] = round(m, 2), [round(lo, 2), round(hi, 2)]
                figures[f"{e}/{t}_cpu_s"] = round(statistics.fmean(r["cpu_seconds"] for r in done), 1)
    settings = {"envs": envs, "seeds": list(seeds), "trainers": list(trainers), "budgets": budgets, "ours": ours}
    return {"settings": settings, "figures": figures, "ci95": ci, "raw": raw, "jobs": jobs,
            "versions": versions("torch", "stable-baselines3", "gymnasium", "mujoco")}  # fmt: skip


def side(runs: list, cpu) -> list:
    "A trainer's cells: mean [95% CI], each seed's mean, CPU seconds a run."
    if not runs:
        return ["-", "-", "-"]
    m, (lo, hi) = summary([r["mean"] for r in runs])
    n = lambda x: f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.1f}"
    return [f"{n(m)} [{n(lo)}, {n(hi)}]", " / ".join(n(r["mean"]) for r in runs), cpu]


def table(records: list) -> str:
    "A row an env of each full run; a run of our side alone is set against the last SB3 runs of that env and budget."
    last_sb3 = {}

    def cells(rec):
        rows = []
        for e in rec["settings"]["envs"]:
            b = rec["settings"]["budgets"][e]
            runs = {t: [r for r in rec["raw"] if r["env"] == e and r["trainer"] == t and "mean" in r]
                    for t in ("workbench", "sb3")}  # fmt: skip
            cpu = lambda t: (f"{rec['figures'][f'{e}/{t}_cpu_s']:,.0f}" if f"{e}/{t}_cpu_s" in rec["figures"]
                             else rec.get("wall_s", {}).get(f"{e}/{t}", "-"))  # fmt: skip
            sb3, sb3_cpu, note = runs["sb3"], cpu("sb3"), ""
            if sb3:
                last_sb3[e, b] = (sb3, sb3_cpu, rec["date"][:10])
            elif (e, b) in last_sb3:
                sb3, sb3_cpu, when = last_sb3[e, b]
                note = f" (run of {when})"
            ours = side(runs["workbench"], cpu("workbench"))
            gap = (statistics.fmean(r["mean"] for r in runs["workbench"]) - statistics.fmean(r["mean"] for r in sb3)
                   if runs["workbench"] and sb3 else None)  # fmt: skip
            diff = "-" if gap is None else f"{gap:+,.0f}" if abs(gap) >= 100 else f"{gap:+.1f}"
            theirs = side(sb3, sb3_cpu)
            theirs[0] += note
            given = ", ".join(f"{k}={v}" for k, v in rec["settings"]["ours"].items()) or "-"
            rows.append([e, f"{b:,}", given, *ours, *theirs, diff])
        return rows

    return make_table(["env", "steps", "set (beside the row)", "workbench greedy [95% CI]", "seeds", "cpu s/run",
                       "SB3 (rl-zoo row) [95% CI]", "seeds", "cpu s/run", "ours - SB3"], records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench zoo`)
    import sys

    from runner import main

    sys.exit(main(["zoo", *sys.argv[1:]]))
