"""Do the defaults solve on any CPU? Each env's defaults over seeds and three builds of the arithmetic, in one run.

For every (build, env, seed): `workbench train --env ENV --seed SEED` with the defaults (`make demo`'s command for
CartPole-v1; the tuned row for Pendulum-v1), then `workbench eval` of the run's `best.pt` on 100 greedy episodes.
The builds are the three a run's arithmetic can come from on one machine:

  * `native`: the C kernels built for this CPU (`-march=native`, the default);
  * `x86-64-v3`: the C kernels built for a portable baseline (`WORKBENCH_KERNEL_ARCH=x86-64-v3`), the code another
    CPU's build would run (AVX2 and FMA, no AVX-512);
  * `torch`: no C kernels (`WORKBENCH_KERNELS=0`), torch's own CPU kernels.

The claims it checks (issue 55): every CartPole-v1 run reads at least 475; Pendulum-v1's median reads at least
-200 and no run below -250. It prints one line a run and whether each (env, build) holds its claim; the record keeps
each run with the CPU and the kernels' flags it recorded, and `claims_hold` (1 or 0; `--compare last` flags a 0).

    python -m bench defaults_check                          # 5 seeds x 2 envs x 3 builds (about 12 min on 2 cores)
    python -m bench defaults_check --seeds 1 2 --envs gym:CartPole-v1 --builds native --no-record
"""

import json, os, statistics, subprocess, sys, tempfile, time

from benchutil import versions
from runner import make_table

CLAIMS = {  # env -> (what every run must reach, what the median must reach)
    "gym:CartPole-v1": (475.0, 475.0),
    "gym:Pendulum-v1": (-250.0, -200.0),
}
BUILDS = {
    "native": {},
    "x86-64-v3": {"WORKBENCH_KERNEL_ARCH": "x86-64-v3"},
    "torch": {"WORKBENCH_KERNELS": "0"},
}
# the global step of the checkpoint `best.pt` copied
BEST_STEP = (
    "import json, sys, torch; print(json.dumps(torch.load(sys.argv[1], weights_only=False)['counters']['global_step']))"
)
WORKBENCH = os.path.join(os.path.dirname(sys.executable), "workbench")


def last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


def one_run(env: str, seed: int, build: str, runs_dir: str, extra: tuple = ()) -> dict:
    "Train with the defaults (and `extra` flags), then evaluate the run's best checkpoint on 100 greedy episodes."
    penv = dict(os.environ, PYTHONWARNINGS="ignore", **BUILDS[build])
    t0 = time.perf_counter()
    train = [WORKBENCH, "train", "--env", env, "--seed", str(seed), "--runs-dir", runs_dir, "--quiet", "--json", *extra]
    r = subprocess.run(train, capture_output=True, text=True, env=penv, timeout=1800)
    if r.returncode:
        return {"env": env, "seed": seed, "build": build, "error": r.stderr.strip().splitlines()[-1:]}
    s = last_json(r.stdout)
    seconds = time.perf_counter() - t0
    e = subprocess.run(
        [WORKBENCH, "eval", s["best_checkpoint"], "--episodes", "100", "--json"],
        capture_output=True,
        text=True,
        env=penv,
    )
    ev = last_json(e.stdout)
    step = json.loads(
        subprocess.run([sys.executable, "-c", BEST_STEP, s["best_checkpoint"]], capture_output=True, text=True).stdout
    )
    return {
        "env": env, "seed": seed, "build": build, "greedy_100": ev["mean_return"], "min_100": ev["min_return"],
        "best_score": s["best_score"], "learner": s.get("learner"), "cpu": s.get("cpu"),
        "kernel_flags": s.get("kernel_flags"), "train_seconds": round(seconds, 1), "best_step": step,
    }  # fmt: skip


FIGURES = {"claims_hold": "higher"}


def options(p):
    p.add_argument("--envs", nargs="+", default=list(CLAIMS), choices=list(CLAIMS))
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    p.add_argument("--builds", nargs="+", default=list(BUILDS), choices=list(BUILDS))


def run(quick: bool = False, envs=tuple(CLAIMS), seeds=(1, 2, 3, 4, 5), builds=tuple(BUILDS)) -> dict:
    extra = ()
    if quick:  # one run, stopped at its first perfect evaluation (the same trajectory up to there)
        envs, seeds, builds, extra = ["gym:CartPole-v1"], [1], ["native"], ("--stop-at", "500")
    rows = []
    with tempfile.TemporaryDirectory() as runs_dir:
        for build in builds:
            for env in envs:
                for seed in seeds:
                    rows.append(one_run(env, seed, build, runs_dir, extra))
                    print(json.dumps(rows[-1]), flush=True)
    figures, ok = {}, True
    for env in envs:
        floor, median_floor = CLAIMS[env]
        for build in builds:
            scores = [r.get("greedy_100") for r in rows if r["env"] == env and r["build"] == build]
            good = [x for x in scores if x is not None]
            if good:
                figures[f"{env}/{build}/median"], figures[f"{env}/{build}/min"] = statistics.median(good), min(good)
            holds = (
                bool(good)
                and len(good) == len(scores)
                and min(good) >= floor
                and statistics.median(good) >= median_floor
            )
            ok &= holds
            print(f"{env} {build}: {'holds' if holds else 'FAILS'}", flush=True)
    figures["claims_hold"] = int(ok)
    settings = {"envs": list(envs), "seeds": list(seeds), "builds": list(builds)}
    return {"settings": settings, "figures": figures, "raw": rows,
            "versions": versions("workbench", "torch", "numpy", "pufferlib", "gymnasium")}  # fmt: skip


def table(records: list) -> str:
    "A row an (env, build) of each full run: each seed's greedy 100-episode mean, the median, the min, the claim."

    def cells(rec):
        rows = []
        for env in rec["settings"]["envs"]:
            floor, median_floor = CLAIMS[env]
            for build in rec["settings"]["builds"]:
                got = [r for r in rec["raw"] if r["env"] == env and r["build"] == build]
                scores = [r.get("greedy_100") for r in got]
                med, low = rec["figures"].get(f"{env}/{build}/median"), rec["figures"].get(f"{env}/{build}/min")
                holds = None not in scores and low >= floor and med >= median_floor
                rows.append([env, build, " / ".join("error" if x is None else f"{x:.1f}" for x in scores),
                             f"{med:.1f}", f"{low:.1f}", "holds" if holds else "FAILS"])  # fmt: skip
        return rows

    return make_table(
        ["env", "build", "each seed's greedy 100-episode mean", "median", "min", "the claim"], records, cells
    )


if __name__ == "__main__":  # (the same as `python -m bench defaults_check`)
    from runner import main

    sys.exit(main(["defaults_check", *sys.argv[1:]]))
