"""What a notebook job costs over a plain script, and what a second process buys, on the same training.

Part 1, overhead: the same work (train nbs/experiments/train.ipynb's default CartPole setup for --steps steps,
then a greedy evaluation of --episodes episodes) run two ways, each timed from process start to exit:

  * script: `script_worker` does what the notebook's cells do, in one fresh process (`runner.fresh`);
  * job:    `workbench run nbs/experiments/train.ipynb -p total_timesteps ... --quiet`: papermill's kernel, the
            executed notebook, its charts and the HTML report included.

The goal: job - script under 10 seconds.

Part 2, throughput: `workbench run ... --processes 2 --cpu` (two processes training as one data-parallel job,
8 envs each) against `--processes 1 --cpu` with 16 envs (the same total batch) and with 8 (the same batch per
process), each doing --steps steps in total; SPS is the trainer's own, from the job's result.

Part 3, batches: `workbench batch` of --batch-jobs jobs (seeds 1..N, --batch-steps steps each, 20 evaluation
episodes) with --max-parallel 1 against --max-parallel 2: wall time of the whole batch, its comparison report
included.

    python -m bench job_overhead                 # 2 rounds of 50K steps, then the batches: about 7 minutes
    python -m bench job_overhead --quick         # 1 round of 8K steps: a job of 1 process and of 2
    python -m bench job_overhead --rounds 0 --no-record     # only the batches
"""

import json, statistics, subprocess, sys, tempfile, time
from pathlib import Path

from benchutil import versions
from runner import fresh, make_table

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "nbs" / "experiments" / "train.ipynb"
WORKBENCH = Path(sys.executable).parent / "workbench"


def script_worker(steps: int, episodes: int, runs_dir: str) -> dict:
    "The notebook's work as a plain script: train and record the run, then evaluate greedily."
    from workbench.train.config import TrainConfig
    from workbench.jobs.notebook import train_run
    from workbench.judge.episodes import evaluate_policy

    cfg = TrainConfig.from_dict(
        {"env": "gym:CartPole-v1", "total_timesteps": steps, "device": "cpu", "runs_dir": runs_dir}
    )
    summary, run_id, trainer = train_run(cfg, quiet=True)
    score = evaluate_policy(trainer.policy, cfg.env.env, episodes=episodes)
    return {"sps": summary["sps"], "mean_return": score["mean_return"]}


def timed(cmd: list, cwd: str) -> tuple[float, str]:
    "Run `cmd` in `cwd`: (wall seconds, its output); a failure ends the benchmark with its output."
    t0 = time.perf_counter()
    proc = subprocess.run(list(map(str, cmd)), cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(
            f"job_overhead: {' '.join(map(str, cmd[:3]))} failed ({proc.returncode}):\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )
    return wall, proc.stdout


def workbench(*args, cwd: str) -> tuple[float, dict]:
    "`timed` of a `workbench` command, its output options added: (wall seconds, the JSON line it ended with)."
    wall, out = timed([WORKBENCH, *args, "--quiet", "--json", "--out", "reports", "--runs-dir", "runs"], cwd)
    return wall, json.loads(out.strip().splitlines()[-1])


def run_job(steps: int, episodes: int, cwd: str, processes: int = 1, num_envs: int = 8) -> tuple[float, dict]:
    params = ["-p", "total_timesteps", steps, "-p", "num_envs", num_envs, "-p", "eval_episodes", episodes]
    return workbench("run", NOTEBOOK, *params, "-p", "device", "cpu", "--processes", processes, "--cpu", cwd=cwd)


def run_batch(jobs: int, steps: int, parallel: int, cwd: str) -> tuple[float, dict]:
    grid = ["--grid", "seed=" + ",".join(str(i) for i in range(1, jobs + 1))]
    params = ["-p", "total_timesteps", steps, "-p", "eval_episodes", 20, "-p", "device", "cpu"]
    return workbench("batch", NOTEBOOK, *grid, *params, "--cpu", "--max-parallel", parallel, cwd=cwd)


FIGURES = {"overhead_s": "lower", "sps_2x8_over_1x16": "higher", "batch_speedup": "higher"}


def options(p):
    p.add_argument("--rounds", type=int, default=2, help="rounds of parts 1 and 2 (0: only the batches)")
    p.add_argument("--steps", type=int, default=50_000)
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--batch-jobs", type=int, default=4, help="jobs in the batch of part 3 (0: skip it)")
    p.add_argument("--batch-steps", type=int, default=20_000)


def run(quick: bool = False, rounds: int = 2, steps: int = 50_000, episodes: int = 100, batch_jobs: int = 4,
        batch_steps: int = 20_000, quiet=lambda: 0.0) -> dict:  # fmt: skip
    shapes = {"1x8": {}, "1x16": {"num_envs": 16}, "2x8": {"processes": 2}}
    if quick:  # a job of one process and of two, not the batches: seconds, not minutes
        rounds, steps, episodes, batch_jobs, shapes = 1, 8_192, 10, 0, {"1x8": {}, "2x8": {"processes": 2}}
    walls, sps, batch = {"script": [], "job": []}, {"1x8": [], "1x16": [], "2x8": []}, {}
    with tempfile.TemporaryDirectory() as cwd:
        for r in range(rounds):
            quiet()
            t0 = time.perf_counter()
            done = fresh("job_overhead", "script_worker", steps=steps, episodes=episodes, runs_dir=f"{cwd}/runs")
            walls["script"].append(time.perf_counter() - t0)
            if "error" in done:
                raise SystemExit(f"job_overhead: the script failed: {done['error']}")
            for key, kw in shapes.items():
                w, job = run_job(steps, episodes, cwd, **kw)
                sps[key].append(job["result"]["sps"])
                if key == "1x8":
                    walls["job"].append(w)
            rates = ", ".join(f"{k} {sps[k][-1]:,.0f}" for k in shapes)
            print(
                f"round {r + 1}: script {walls['script'][-1]:.1f} s, job {walls['job'][-1]:.1f} s; steps/s {rates}",
                flush=True,
            )
        for k in (1, 2) if batch_jobs else ():
            batch[k], summary = run_batch(batch_jobs, batch_steps, k, cwd)
            assert summary["finished"] == batch_jobs, summary
            print(f"batch of {batch_jobs} x {batch_steps:,} steps, --max-parallel {k}: {batch[k]:.1f} s", flush=True)
    med = lambda xs: statistics.median(xs)  # noqa: E731
    figures = {}
    if rounds:
        figures.update({"script_s": round(med(walls["script"]), 2), "job_s": round(med(walls["job"]), 2)})
        figures["overhead_s"] = round(figures["job_s"] - figures["script_s"], 2)
        figures.update({f"sps_{k}": round(med(v)) for k, v in sps.items() if v})
        if sps["1x16"]:
            figures["sps_2x8_over_1x16"] = round(figures["sps_2x8"] / figures["sps_1x16"], 3)
        figures["sps_2x8_over_1x8"] = round(figures["sps_2x8"] / figures["sps_1x8"], 3)
    if batch:
        figures.update({"batch_1_s": round(batch[1], 1), "batch_2_s": round(batch[2], 1)})
        figures["batch_speedup"] = round(batch[1] / batch[2], 3)
    settings = {
        "rounds": rounds,
        "steps": steps,
        "episodes": episodes,
        "batch_jobs": batch_jobs,
        "batch_steps": batch_steps,
    }
    return {"settings": settings, "figures": figures, "raw": {"wall_s": walls, "sps": sps, "batch_wall_s": batch},
            "versions": versions("torch", "papermill", "nbconvert", "accelerate")}  # fmt: skip


def table(records: list) -> str:
    "The overhead of a notebook job, what a second process buys, and a batch's speed-up, a row each, of each full run."

    def cells(rec):
        f, raw, rows = rec["figures"], rec["raw"], []
        each = lambda xs, spec: " (" + " / ".join(format(x, spec) for x in xs) + ")" if xs else ""  # noqa: E731
        if "overhead_s" in f:
            rows += [["plain script, s", f"{f['script_s']:.1f}{each(raw['wall_s']['script'], '.1f')}", ""],
                     ["`workbench run` of the notebook, s", f"{f['job_s']:.1f}{each(raw['wall_s']['job'], '.1f')}", ""],
                     ["overhead of the job, s", f"{f['overhead_s']:.1f}", "under 10"]]  # fmt: skip
            for k, what in (
                ("1x8", "1 process x 8 envs"),
                ("1x16", "1 process x 16 envs"),
                ("2x8", "2 processes x 8 envs"),
            ):
                if f.get(f"sps_{k}"):
                    rows.append([f"steps/s, {what}", f"{f[f'sps_{k}']:,}{each(raw['sps'][k], ',.0f')}", ""])
            if "sps_2x8_over_1x16" in f:
                rows.append(["2 x 8 over 1 x 16 (the same total batch)", f"{f['sps_2x8_over_1x16']:.2f}", ""])
        if "batch_speedup" in f:
            rows.append([f"batch of {rec['settings']['batch_jobs']}: --max-parallel 1 / 2, s",
                         f"{f['batch_1_s']:.1f} / {f['batch_2_s']:.1f} ({f['batch_speedup']:.2f}x)", ""])  # fmt: skip
        return rows

    return make_table(["measure", "median (each round)", "goal"], records, cells)


if __name__ == "__main__":  # (the same as `python -m bench job_overhead`)
    from runner import main

    sys.exit(main(["job_overhead", *sys.argv[1:]]))
