"""The command line's start-up: how long `workbench --help`, a bad flag and a short training run's first step take.

Each measure is a fresh process, as a user's shell starts it (`python -m workbench.cli ...` with PYTHONPATH set to the
tree), timed from before it starts:

* `help`: `workbench --help`; `train_help`: `workbench train --help` (every setting's flag);
* `bad_flag`: `workbench train --total-timesteps -5` (an argument error: one line, exit 2);
* `first_step`: `workbench train` of CartPole-v1 (8 envs x 128 steps, 2 updates, no evaluation or checkpoint) until
  its first update is in the run store (the metric row's time), and `run`: until the process ends;
* for scale, `python`: `python -c pass`, and `torch`: `python -c "import torch"` (what importing torch costs alone).

Medians of the repeats, the measures' order turned from one repeat to the next. With `--old TREE` (a git worktree of
an earlier commit) the same measures of that tree alternate with this one's and the table gives old / new.

    python -m bench cli_startup                      # 5 repeats of each measure, this tree
    python -m bench cli_startup --old /tmp/before    # the same, against an earlier commit's tree
    python -m bench cli_startup --quick              # 1 repeat
"""

import os, sqlite3, statistics, subprocess, sys, tempfile, time
from pathlib import Path

from runner import bootstrap_ratio, commit, fail, interval, make_table

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ["train", "--env", "gym:CartPole-v1", "--num-envs", "8", "--num-steps", "128", "--total-timesteps", "2048",
         "--eval-every", "0", "--checkpoint-every", "0", "--quiet", "--json"]  # fmt: skip
MEASURES = ("python", "torch", "help", "train_help", "bad_flag", "first_step", "run")
FIGURES = {f"{m}_s{t}": "lower" for m in MEASURES for t in ("", "_old")} | {
    f"{m}_old_over_new": "higher" for m in MEASURES
}


def timed(tree: Path, measure: str) -> float:
    "Seconds of one measure, in a fresh process started from `tree`."
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore"}
    cli = [sys.executable, "-m", "workbench.cli"]
    argv = {"python": [sys.executable, "-c", "pass"], "torch": [sys.executable, "-c", "import torch"],
            "help": cli + ["--help"], "train_help": cli + ["train", "--help"],
            "bad_flag": cli + ["train", "--total-timesteps", "-5"]}.get(measure)  # fmt: skip
    if argv:
        t0 = time.perf_counter()
        p = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if p.returncode != (2 if measure == "bad_flag" else 0):
            raise SystemExit(f"cli_startup: {measure} exited {p.returncode}: {p.stderr.strip()[-300:]}")
        return seconds
    with tempfile.TemporaryDirectory(prefix="cli-startup-") as runs:
        t0, wall0 = time.time(), time.perf_counter()
        p = subprocess.run(cli + TRAIN + ["--runs-dir", runs], cwd=tree, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - wall0
        if p.returncode:
            raise SystemExit(f"cli_startup: the training run exited {p.returncode}: {p.stderr.strip()[-300:]}")
        db = sqlite3.connect(Path(runs) / "workbench.db")  # (the run store: RunStore.FILENAME)
        first = db.execute("SELECT min(time) FROM metrics").fetchone()[0]
        db.close()
    return first - t0 if measure == "first_step" else wall


def options(p):
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--old", help="also this tree (a git worktree of an earlier commit), alternating with this one")


def run(quick=False, repeats=5, old=None, quiet=lambda: 0.0) -> dict:
    if quick:
        repeats = 1
    trees = {"new": ROOT} | ({"old": Path(old).resolve()} if old else {})
    if old and not (trees["old"] / "workbench" / "cli.py").is_file():
        fail(f"cli_startup: --old {old} has no workbench/cli.py")
    got = {(w, m): [] for w in trees for m in MEASURES}
    for rep in range(repeats):
        order = MEASURES[rep % len(MEASURES) :] + MEASURES[: rep % len(MEASURES)]
        for m in order:
            for which in list(trees)[:: 1 if rep % 2 == 0 else -1]:
                quiet()
                got[which, m].append(seconds := timed(trees[which], m))
                print(f"  {which} {m:<11} {seconds:6.2f} s", flush=True)
    figures, ci = {}, {}
    for m in MEASURES:
        figures[f"{m}_s"] = round(statistics.median(got["new", m]), 3)
        if old:
            figures[f"{m}_s_old"] = round(statistics.median(got["old", m]), 3)
            figures[f"{m}_old_over_new"] = round(figures[f"{m}_s_old"] / figures[f"{m}_s"], 3)
            if repeats > 1:
                ci[f"{m}_old_over_new"] = bootstrap_ratio(got["old", m], got["new", m], stat=statistics.median)
    settings = {"repeats": repeats, "trees": {w: commit(t) for w, t in trees.items()}, "train": TRAIN}
    return {"settings": settings, "figures": figures, "ci95": ci,
            "raw": {f"{w}_{m}": [round(s, 3) for s in v] for (w, m), v in got.items()}}  # fmt: skip


def table(records: list) -> str:
    "A row a measure of each full run: this tree's median seconds, and where an old tree ran, its seconds and old / new."

    def cells(rec):
        f, trees = rec["figures"], rec["settings"]["trees"]
        return [[m, trees["new"], f"{f[m + '_s']:.2f}", f"{f[m + '_s_old']:.2f} ({trees['old']})" if "old" in trees else "-",
                 f"{f[m + '_old_over_new']:.2f}{interval(rec, m + '_old_over_new')}" if "old" in trees else "-"]
                for m in MEASURES]  # fmt: skip

    return make_table(
        ["measure", "tree", "seconds (median)", "old tree's seconds", "old / new [95% CI]"], records, cells
    )


if __name__ == "__main__":  # (the same as `python -m bench cli_startup`)
    from runner import main

    sys.exit(main(["cli_startup", *sys.argv[1:]]))
