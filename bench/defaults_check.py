"""Do the defaults solve on any CPU? Each env's defaults over seeds and three builds of the arithmetic, in one run.

For every (build, env, seed): `workbench train --env ENV --seed SEED` with the defaults (`make demo`'s command for
CartPole-v1; the tuned row for Pendulum-v1), then `workbench eval` of the run's `best.pt` on 100 greedy episodes.
The builds are the three a run's arithmetic can come from on one machine:

  * `native`: the C kernels built for this CPU (`-march=native`, the default);
  * `x86-64-v3`: the C kernels built for a portable baseline (`WORKBENCH_KERNEL_ARCH=x86-64-v3`), the code another
    CPU's build would run (AVX2 and FMA, no AVX-512);
  * `torch`: no C kernels (`WORKBENCH_KERNELS=0`), torch's own CPU kernels.

The claims it checks (issue 55): every CartPole-v1 run reads at least 475; Pendulum-v1's median reads at least
-200 and no run below -250. It prints one row a run, a table per env and build (median, min), the CPU and the
flags each run recorded, and exits 1 if a claim fails.

    python bench/defaults_check.py                          # 5 seeds x 2 envs x 3 builds (about 12 min on 2 cores)
    python bench/defaults_check.py --seeds 1 2 --envs gym:CartPole-v1 --builds native
"""

import argparse, json, os, statistics, subprocess, sys, tempfile, time

from benchutil import versions

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


def one_run(env: str, seed: int, build: str, runs_dir: str) -> dict:
    "Train with the defaults, then evaluate the run's best checkpoint on 100 greedy episodes."
    penv = dict(os.environ, PYTHONWARNINGS="ignore", **BUILDS[build])
    t0 = time.perf_counter()
    train = [WORKBENCH, "train", "--env", env, "--seed", str(seed), "--runs-dir", runs_dir, "--quiet", "--json"]
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", nargs="+", default=list(CLAIMS), choices=list(CLAIMS))
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    p.add_argument("--builds", nargs="+", default=list(BUILDS), choices=list(BUILDS))
    p.add_argument("--out", help="write the rows as JSON lines here")
    a = p.parse_args()
    print("versions:", json.dumps(versions("workbench", "torch", "numpy", "pufferlib", "gymnasium")))
    rows = []
    with tempfile.TemporaryDirectory() as runs_dir:
        for build in a.builds:
            for env in a.envs:
                for seed in a.seeds:
                    row = one_run(env, seed, build, runs_dir)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                    if a.out:
                        with open(a.out, "a") as f:
                            f.write(json.dumps(row) + "\n")
    ok = True
    print(f"\ncpu: {rows[0].get('cpu')}")
    print(f"| env | build | learner | {' | '.join(f'seed {s}' for s in a.seeds)} | median | min | claim |")
    print("|---|---|---|" + "---|" * len(a.seeds) + "---|---|---|")
    for env in a.envs:
        floor, median_floor = CLAIMS[env]
        for build in a.builds:
            got = [r for r in rows if r["env"] == env and r["build"] == build]
            scores = [r.get("greedy_100") for r in got]
            good = [x for x in scores if x is not None]
            med, low = (statistics.median(good), min(good)) if good else (float("nan"), float("nan"))
            holds = len(good) == len(scores) and low >= floor and med >= median_floor
            ok &= holds
            cells = " | ".join("error" if x is None else f"{x:.1f}" for x in scores)
            learner = ",".join(sorted({str(r.get("learner")) for r in got}))
            print(
                f"| {env} | {build} | {learner} | {cells} | {med:.1f} | {low:.1f} | {'holds' if holds else 'FAILS'} |"
            )
    flags = sorted({(r["build"], r.get("kernel_flags")) for r in rows if r.get("kernel_flags")})
    for build, f in flags:
        print(f"kernel flags ({build}): {f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
