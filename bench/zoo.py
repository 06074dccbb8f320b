"""Learning results: workbench's PPO (as `workbench train --env gym:<id>` runs it) against Stable-Baselines3's PPO with
rl-zoo's tuned hyperparameters, on the same env, step budget and seeds, in one run.

For every (env, seed) both trainers train for the same number of env steps; then one common function plays 100
greedy episodes of the env (seeds 10,000-10,099, actions clipped to a Box's bounds, SB3's observations through
its frozen VecNormalize statistics) and reports the mean return. Learning curves (the mean return of the
episodes finished in each rollout, against env steps) go into an HTML report with plotly inlined (no network).
Each run is a fresh subprocess; `--jobs 2` runs two at a time (one torch thread each), which is what fits the
wall time of a 2-core machine, at the cost of noisier wall-clock figures.

    python bench/zoo.py --envs Pendulum-v1 --seeds 1 2 3              # the Pendulum claim of bench/RESULTS.md
    python bench/zoo.py --seeds 1 2 3 --jobs 2                         # the whole table (an hour or more)
    python bench/zoo.py --quick                                        # smoke test: 1 seed, 2,048 steps a run
    python bench/zoo.py --envs Hopper-v4 Walker2d-v4 Ant-v4 HalfCheetah-v4 --jobs 2 --keep /somewhere/zoo_runs
                                                                       # the MuJoCo rows at 1M (hours: resumable)
    python bench/zoo.py --envs Hopper-v4 --keep /somewhere/zoo_runs --kept-only   # the table so far

A finished run is kept in `--keep` (bench/out/zoo_runs) under its trainer, env, seed, budget and a hash of its
settings, and read from there when the table is asked for again: the MuJoCo rows (hours on 2 cores) are built
across sessions, and a stopped run loses only its unfinished pairs. Times are CPU seconds of the run's process
(`time.process_time`: the trainers run one thread each), which a busy or paused machine does not inflate.
"""

import argparse, hashlib, json, math, os, statistics, sys, time, tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from benchutil import print_result, run_worker, versions
from zoo_report import write_report

# rl-zoo's hyperparams/ppo.yml rows (the SB3 side), with the step budget both trainers get: data, in zoo.toml
with open(Path(__file__).with_name("zoo.toml"), "rb") as f:
    ZOO = tomllib.load(f)
EVAL_EPISODES, EVAL_SEED = 100, 10_000


def greedy_returns(env_id: str, act, episodes: int = EVAL_EPISODES, seed: int = EVAL_SEED) -> list:
    """Returns of `episodes` greedy episodes of `env_id` played side by side (env i reset with seed + i); `act` maps
    an (n, obs_dim) float32 batch to n actions. The same function scores both trainers."""
    import gymnasium as gym

    envs = [gym.make(env_id) for _ in range(episodes)]
    space = envs[0].action_space
    box = isinstance(space, gym.spaces.Box)
    obs = np.stack([env.reset(seed=seed + i)[0] for i, env in enumerate(envs)]).astype(np.float32)
    returns, running = np.zeros(episodes), np.ones(episodes, dtype=bool)
    while running.any():
        actions = np.asarray(act(obs))
        if box:
            actions = np.clip(actions.reshape(episodes, *space.shape), space.low, space.high)
        for i in np.flatnonzero(running):
            o, r, terminated, truncated, _ = envs[i].step(actions[i] if box else int(actions.reshape(-1)[i]))
            obs[i] = o
            returns[i] += r
            running[i] = not (terminated or truncated)
    for env in envs:
        env.close()
    return returns.tolist()


# ----------------------------------------------------------------------------------------------
# workbench: the settings `workbench train --env gym:<id>` uses (defaults + the env's tuned row), with the budget
# ----------------------------------------------------------------------------------------------
def run_ours(env_id: str, seed: int, budget: int) -> dict:
    import torch
    from workbench.runs.events import Kind, Metric
    from workbench.train.config import TrainConfig, tuned_settings
    from workbench.train.ppo import PPOTrainer

    spec = f"gym:{env_id}"
    tuned = tuned_settings(spec)
    cfg = TrainConfig.from_dict(
        {
            **tuned,
            "env": spec,
            "seed": seed,
            "device": "cpu",
            "total_timesteps": budget,
            "eval_every": 0,
            "checkpoint_every": 0,
        }
    )
    trainer = PPOTrainer(cfg)  # no run folder: writes nothing
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
        settings={k: v for k, v in cfg.flat().items() if k in tuned},
        tuned=bool(tuned),
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
    if kwargs.get("activation_fn") == "relu":
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
# Driver: the runs, the table, the report
# ----------------------------------------------------------------------------------------------
def summary(returns_by_seed: list) -> dict:
    "Mean over seeds of each seed's 100-episode mean, with a 95% t-interval over seeds."
    means = [float(np.mean(r)) for r in returns_by_seed]
    m = statistics.fmean(means)
    half = 0.0
    if len(means) > 1:
        t = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}.get(len(means), 2.0)
        half = t * statistics.stdev(means) / math.sqrt(len(means))
    return dict(mean=m, ci=(m - half, m + half), seeds=means)


def report(results: list, path: Path):
    "Learning curves, one figure per env, ours and SB3's seeds, as one offline HTML page."
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    envs = list(dict.fromkeys(r["env"] for r in results))
    fig = make_subplots(rows=len(envs), cols=1, subplot_titles=envs, vertical_spacing=0.3 / max(len(envs), 1))
    colour = {"workbench": "#1f77b4", "sb3": "#d62728"}
    shown = set()
    for r in results:
        if "error" in r or not r["curve"]:
            continue
        steps, ret = zip(*r["curve"])
        fig.add_trace(
            go.Scatter(
                x=steps,
                y=ret,
                mode="lines",
                line=dict(color=colour[r["trainer"]], width=1),
                name=r["trainer"],
                legendgroup=r["trainer"],
                showlegend=r["trainer"] not in shown,
                hovertext=f"seed {r['seed']}",
            ),
            row=envs.index(r["env"]) + 1,
            col=1,
        )
        shown.add(r["trainer"])
    fig.update_layout(height=320 * len(envs), title="Training episode return against env steps (each line a seed)")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    fig.write_html(str(tmp), include_plotlyjs=True, full_html=True)
    os.replace(tmp, path)


def settings_of(trainer: str, env_id: str) -> dict:
    "What a run of `trainer` on `env_id` is configured by: our tuned row, or rl-zoo's row."
    if trainer == "sb3":
        return ZOO[env_id]["sb3"]
    from workbench.train.config import tuned_settings

    unused = ("eval_every", "checkpoint_every")  # the zoo's runs neither evaluate nor save while they train
    return {k: v for k, v in tuned_settings(f"gym:{env_id}").items() if k not in unused}


def kept_path(folder: str, trainer: str, env_id: str, seed: int, budget: int):
    "Where a finished run is kept: named by trainer, env, seed, budget and a hash of its settings (None: keep nothing)."
    if not folder:
        return None
    digest = hashlib.sha1(json.dumps(settings_of(trainer, env_id), sort_keys=True).encode()).hexdigest()[:8]
    return Path(folder) / f"{trainer}-{env_id}-seed{seed}-{budget}-{digest}.json"


def main():
    from workbench.core import atomic_write_text, code_version

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--envs", nargs="+", default=list(ZOO), choices=list(ZOO), metavar="ENV")
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    p.add_argument("--trainers", nargs="+", default=["workbench", "sb3"], choices=["workbench", "sb3"])
    p.add_argument("--jobs", type=int, default=1, help="runs at a time (each one process, one torch thread)")
    p.add_argument("--budget-scale", type=float, default=1.0, help="multiply every step budget (e.g. 0.5)")
    p.add_argument("--quick", action="store_true", help="smoke test: seed 1, 2,048 steps a run")
    p.add_argument("--kept-only", action="store_true", help="the table of the runs in --keep; run nothing")
    p.add_argument("--json", default="bench/out/zoo.json")
    p.add_argument("--html", default="bench/out/zoo.html")
    p.add_argument(
        "--keep",
        default="bench/out/zoo_runs",
        help="folder of finished runs: a run whose settings and budget are there already is read, not run again "
        "(a long table can be built across sessions); '' keeps nothing",
    )
    p.add_argument("--worker", nargs=4, metavar=("TRAINER", "ENV", "SEED", "BUDGET"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        trainer, env_id, seed, budget = args.worker
        fn = run_ours if trainer == "workbench" else run_sb3
        print_result(fn(env_id, int(seed), int(budget)))
    if args.quick:  # every part of the script, not its learning: the same small run for every env
        args.seeds, args.keep = [1], ""
    jobs = [
        (t, e, s, 2_048 if args.quick else max(2_048, int(ZOO[e]["budget"] * args.budget_scale)))
        for e in args.envs
        for s in args.seeds
        for t in args.trainers
    ]

    def one(job):
        t, e, s, b = job
        kept = kept_path(args.keep, t, e, s, b)
        if kept and kept.exists():
            r = json.loads(kept.read_text())
            how = "kept"
        elif args.kept_only:
            r, how = {"trainer": t, "env": e, "seed": s, "budget": b, "error": "not run yet"}, "missing"
        else:
            r = run_worker(__file__, ["--worker", t, e, s, b])
            r.setdefault("trainer", t), r.setdefault("env", e), r.setdefault("seed", s)
            r["budget"], r["commit"], how = b, code_version(), "ran"
            if kept and "error" not in r:
                atomic_write_text(kept, json.dumps(r))
        done = "error" if "error" in r else f"greedy {np.mean(r['returns']):8.1f}  {r['seconds']:6.0f} s"
        print(f"{e:26s} {t:9s} seed {s}: {done} ({how})", flush=True)
        return r

    t0 = time.time()
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, jobs))
    out = dict(
        command=" ".join(["python", "bench/zoo.py", *sys.argv[1:]]),
        jobs=args.jobs,
        versions=versions("torch", "stable-baselines3", "gymnasium"),
        wall_seconds=time.time() - t0,
        results=results,
    )
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out))
    report(results, Path(args.html))
    write_report(out, Path(args.html).with_name(Path(args.html).stem + "_curves.html"))  # small, script-free copy

    print(
        f"\n{'env':26s} {'budget':>8s} | {'workbench greedy mean [95% CI]':>32s} {'cpu s':>6s} | "
        f"{'SB3 greedy mean [95% CI]':>32s} {'cpu s':>6s} | ours - SB3"
    )
    for e in args.envs:
        row, cells = [r for r in results if r["env"] == e and "error" not in r], {}
        for t in ("workbench", "sb3"):
            rs = [r for r in row if r["trainer"] == t]
            if rs:
                s = summary([r["returns"] for r in rs])
                cells[t] = (
                    f"{s['mean']:9.1f} [{s['ci'][0]:8.1f}, {s['ci'][1]:8.1f}]",
                    statistics.fmean(r.get("cpu_seconds", r["seconds"]) for r in rs),
                    s["mean"],
                )
        fmt = lambda t: f"{cells[t][0]:>32s} {cells[t][1]:6.0f}" if t in cells else f"{'-':>32s} {'-':>6s}"
        diff = f"{cells['workbench'][2] - cells['sb3'][2]:+.1f}" if len(cells) == 2 else "-"
        budget = max((r["budget"] for r in row), default=0)
        print(f"{e:26s} {budget:8,d} | {fmt('workbench')} | {fmt('sb3')} | {diff}")
    print(f"\n{len(results)} runs in {time.time() - t0:.0f} s; curves: {args.html}; data: {args.json}")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
