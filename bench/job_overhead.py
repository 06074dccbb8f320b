"""What a notebook job costs over a plain script, and what a second process buys, on the same training.

Part 1, overhead: the same work (train nbs/experiments/train.ipynb's default CartPole setup for --steps steps,
then a greedy evaluation of --episodes episodes) run two ways, each timed from process start to exit:

  * script: `python bench/job_overhead.py --worker script` does what the notebook's cells do, in one process;
  * job:    `workbench run nbs/experiments/train.ipynb -p total_timesteps ... --quiet`: papermill's kernel, the
            executed notebook, its charts and the HTML report included.

The goal: job - script under 10 seconds.

Part 2, throughput: `workbench run ... --processes 2 --cpu` (two processes training as one data-parallel job,
8 envs each) against `--processes 1 --cpu` with 16 envs (the same total batch) and with 8 (the same batch per
process), each doing --steps steps in total; SPS is the trainer's own, from the job's result.

Part 3, batches: `workbench batch` of --batch-jobs jobs (seeds 1..N, --batch-steps steps each, 20 evaluation
episodes) with --max-parallel 1 against --max-parallel 2: wall time of the whole batch, its comparison report
included.

    python bench/job_overhead.py                 # 2 rounds of 50K steps, then the batches: about 7 minutes
    python bench/job_overhead.py --quick         # 1 round of 20K steps
    python bench/job_overhead.py --rounds 0      # only the batches
"""

import argparse, json, statistics, subprocess, sys, tempfile, time
from pathlib import Path

from benchutil import print_result, wait_for_quiet, versions

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "nbs" / "experiments" / "train.ipynb"
WORKBENCH = Path(sys.executable).parent / "workbench"


def script_worker(steps: int, episodes: int, runs_dir: str):
    "The notebook's work as a plain script: train and record the run, then evaluate greedily."
    from workbench.train.config import TrainConfig
    from workbench.jobs.notebook import train_run
    from workbench.judge.episodes import evaluate_policy

    cfg = TrainConfig.from_dict(
        {"env": "gym:CartPole-v1", "total_timesteps": steps, "device": "cpu", "runs_dir": runs_dir}
    )
    summary, run_id, trainer = train_run(cfg, quiet=True)
    score = evaluate_policy(trainer.policy, cfg.env.env, episodes=episodes)
    print_result({"sps": summary["sps"], "mean_return": score["mean_return"]})


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker", choices=["script"])
    ap.add_argument("--runs-dir", default="runs")
    ap.add_argument("--batch-jobs", type=int, default=4, help="jobs in the batch of part 3 (0: skip it)")
    ap.add_argument("--batch-steps", type=int, default=20_000)
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.steps = 1, 20_000
    if args.worker:
        return script_worker(args.steps, args.episodes, args.runs_dir)

    busy = wait_for_quiet(0.15, 60)
    walls = {"script": [], "job": []}
    sps = {1: [], "1x16": [], 2: []}
    with tempfile.TemporaryDirectory() as cwd:
        for r in range(args.rounds):
            w, proc = timed(
                [
                    sys.executable,
                    Path(__file__).resolve(),
                    "--worker",
                    "script",
                    "--steps",
                    args.steps,
                    "--episodes",
                    args.episodes,
                    "--runs-dir",
                    "runs",
                ],
                cwd,
            )
            walls["script"].append(w)
            w, job = run_job(args.steps, args.episodes, cwd)
            walls["job"].append(w)
            sps[1].append(job["result"]["sps"])
            print(
                f"round {r + 1}: script {walls['script'][-1]:.1f} s, job {w:.1f} s "
                f"(overhead {w - walls['script'][-1]:.1f} s; job's own duration {job['duration']:.1f} s)",
                flush=True,
            )
            w16, job16 = run_job(args.steps, args.episodes, cwd, num_envs=16)
            sps["1x16"].append(job16["result"]["sps"])
            w2, job2 = run_job(args.steps, args.episodes, cwd, processes=2)
            sps[2].append(job2["result"]["sps"])
            print(
                f"round {r + 1}: 1 process {sps[1][-1]:,} steps/s (16 envs: {sps['1x16'][-1]:,}), "
                f"2 processes x 8 envs {sps[2][-1]:,} steps/s (wall {w:.1f} s / {w16:.1f} s vs {w2:.1f} s)",
                flush=True,
            )
        batch = {}
        if args.batch_jobs:
            for k in (1, 2):
                batch[k], summary = run_batch(args.batch_jobs, args.batch_steps, k, cwd)
                assert summary["finished"] == args.batch_jobs, summary
                print(
                    f"batch of {args.batch_jobs} x {args.batch_steps:,} steps, --max-parallel {k}: {batch[k]:.1f} s",
                    flush=True,
                )
    print(f"\n(machine busy {busy:.0%} before the start)")
    if args.rounds:
        med = {k: statistics.median(v) for k, v in walls.items()}
        print(f"median wall over {args.rounds} round(s) of {args.steps:,} steps + {args.episodes} eval episodes:")
        print(
            f"  script {med['script']:.1f} s, workbench run {med['job']:.1f} s: "
            f"overhead {med['job'] - med['script']:.1f} s (goal < 10 s)"
        )
        s1, s16, s2 = (statistics.median(sps[k]) for k in (1, "1x16", 2))
        print(
            f"  training SPS: 2 processes x 8 envs {s2:,.0f}; 1 process x 16 envs (same total batch) {s16:,.0f}: "
            f"ratio {s2 / s16:.2f}; 1 process x 8 envs {s1:,.0f}: ratio {s2 / s1:.2f}"
        )
    if batch:
        print(
            f"  batch of {args.batch_jobs} jobs: --max-parallel 1 {batch[1]:.1f} s, --max-parallel 2 {batch[2]:.1f} s: "
            f"speed-up {batch[1] / batch[2]:.2f}"
        )
    print(
        json.dumps(
            {
                "wall_s": walls,
                "sps": sps,
                "batch_wall_s": batch,
                "steps": args.steps,
                "episodes": args.episodes,
                "rounds": args.rounds,
                "versions": versions("torch", "papermill", "nbconvert", "accelerate"),
            }
        )
    )


if __name__ == "__main__":
    main()
