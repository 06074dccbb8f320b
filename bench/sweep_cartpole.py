"""Protein against random search (and the cost-aware Pareto search, `carbs`) on time to solve CartPole-v1.

Each sweep searches five PPO settings (learning rate, gamma, GAE lambda, update epochs, rollout length) with the
same trial budget and parallelism. A trial trains until its greedy evaluation (100 episodes, every 5 updates)
reaches a mean of 475 (solved, as in `solve_cartpole.py`) or its budget (200K steps, 60 s) runs out. Each
parameter's search centre (`mean`, where Protein and the Pareto search start) is the middle of its range, not the
trainer's tuned defaults, so no method starts from a known good setting. Score: the evaluation return, capped at
475; cost: the seconds from the run's start to solving (or to its end). So among solved trials the fastest is best,
and the question is which search finds a fast setting in fewer trials. Several sweep seeds per method, all in one
run, one sweep at a time, one trial at a time (`--max-parallel 1`): the cost is wall-clock time, and on 2 cores a
second trial or Protein's thinking (it fits two Gaussian processes per suggestion, about 4 s of one core) would share
a core with the trial being timed. The sweep's wall time (the strategy's thinking included) is printed too.

    python -m bench sweep_cartpole                                  # protein and random, 3 seeds, 16 trials each
    python -m bench sweep_cartpole --methods protein random carbs --seeds 1 2 3 --trials 16

Writes the chart of the best time to solve found against trials to sweep_cartpole.html in the runner's `--out`.
"""

import html, math, statistics, sys, tempfile
from pathlib import Path

import numpy as np

from benchutil import sweep, versions
from runner import make_table

SPACE = """env = "gym:CartPole-v1"
total_timesteps = 200000
eval_every = 5
eval_episodes = 100
device = "cpu"

[sweep]
metric = "eval/mean_return"
goal = "maximize"
threshold = 475
cost = "seconds"
timeout = 60

[sweep.learning_rate]
distribution = "log_normal"
min = 1e-4
max = 3e-2
mean = 0.0017

[sweep.gamma]
distribution = "logit_normal"
min = 0.9
max = 0.999
mean = 0.99

[sweep.gae_lambda]
distribution = "logit_normal"
min = 0.6
max = 0.99
mean = 0.94

[sweep.update_epochs]
distribution = "int_uniform"
min = 1
max = 16
mean = 8

[sweep.num_steps]
distribution = "uniform_pow2"
min = 8
max = 128
mean = 32
"""


def run_sweep(method: str, seed: int, trials: int, parallel: int, work: Path) -> dict:
    "One sweep through the command line; its trials from the store."
    flags = ["--method", method, "--sweep-seed", seed, "--trials", trials, "--max-parallel", parallel]
    store, wall = sweep(work, f"{method}-{seed}", *flags)
    row = store.sweeps()[0]
    out = [
        {
            "idx": t["idx"],
            "status": t["status"],
            "score": t["score"],
            "cost": t["cost"],
            "solved": t["score"] is not None and t["score"] >= 475,
            "parameters": t["parameters"],
        }
        for t in store.trials(row["id"])
    ]
    return {"method": method, "seed": seed, "wall_s": wall, "trials": out}


def best_curve(trials: list) -> list:
    "The best time to solve found after each trial (None until a trial solves)."
    best, out = math.inf, []
    for t in sorted(trials, key=lambda t: t["idx"]):
        if t["solved"]:
            best = min(best, t["cost"])
        out.append(None if math.isinf(best) else best)
    return out


def summary(data: dict) -> str:
    rows = [
        "| method | seed | solved trials | best time to solve (s) | found at trial | sweep wall (s) |",
        "|---|---|---|---|---|---|",
    ]
    per = {}
    for s in data["sweeps"]:
        c = best_curve(s["trials"])
        found = next((i + 1 for i, v in enumerate(c) if v is not None and v == c[-1]), None)
        per.setdefault(s["method"], []).append(c)
        rows.append(
            f"| {s['method']} | {s['seed']} | {sum(t['solved'] for t in s['trials'])}/{len(s['trials'])} | "
            f"{'-' if c[-1] is None else f'{c[-1]:.2f}'} | {found or '-'} | {s['wall_s']:.0f} |"
        )
    rows += ["", "| method | median best after 4 / 8 / all trials (s) |", "|---|---|"]
    for m, curves in per.items():
        cells = []
        for k in sorted({min(4, len(curves[0])), min(8, len(curves[0])), len(curves[0])}):
            v = [c[k - 1] if c[k - 1] is not None else math.inf for c in curves]
            med = float(np.median(v))
            cells.append("-" if math.isinf(med) else f"{med:.2f}")
        rows.append(f"| {m} | {' / '.join(cells)} |")
    return "\n".join(rows)


def chart(data: dict) -> tuple:
    "An SVG of the best time to solve found against trials: each sweep faint, each method's median bold."
    W, H, L, B = 720, 420, 60, 40
    curves = {}
    for s in data["sweeps"]:
        curves.setdefault(s["method"], []).append(best_curve(s["trials"]))
    n = max(len(c) for cs in curves.values() for c in cs)
    vals = [v for cs in curves.values() for c in cs for v in c if v is not None]
    top = max(vals) * 1.1 if vals else 1.0

    def x(i):
        return L + (W - L - 20) * i / max(n - 1, 1)

    def y(v):
        return H - B - (H - B - 20) * v / top

    colours = {"protein": "#1f77b4", "random": "#d62728", "carbs": "#2ca02c"}
    out = [
        f'<svg width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="best time to solve vs trials">',
        f'<line x1="{L}" y1="{H - B}" x2="{W - 20}" y2="{H - B}" stroke="#333"/>',
        f'<line x1="{L}" y1="20" x2="{L}" y2="{H - B}" stroke="#333"/>',
        f'<text x="{W / 2}" y="{H - 8}" text-anchor="middle">trials</text>',
        f'<text x="14" y="{H / 2}" transform="rotate(-90 14 {H / 2})" text-anchor="middle">best seconds to solve</text>',
    ]
    for k in range(0, 5):
        v = top * k / 4
        out.append(f'<text x="{L - 6}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="11">{v:.1f}</text>')
    for i in range(n):
        if (i + 1) % 4 == 0 or i == 0:
            out.append(f'<text x="{x(i):.1f}" y="{H - B + 16}" text-anchor="middle" font-size="11">{i + 1}</text>')
    for m, cs in curves.items():
        col = colours.get(m, "#555")
        for c in cs:
            pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(c) if v is not None)
            if pts:
                out.append(f'<polyline points="{pts}" fill="none" stroke="{col}" stroke-opacity="0.3"/>')
        med = [float(np.median([c[i] if c[i] is not None else math.inf for c in cs])) for i in range(n)]
        pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(med) if not math.isinf(v))
        if pts:
            out.append(f'<polyline points="{pts}" fill="none" stroke="{col}" stroke-width="3"/>')
    legend = " · ".join(f'<span style="color:{colours.get(m, "#555")}">&#9632; {html.escape(m)}</span>' for m in curves)
    return "".join(out) + "</svg>", legend


def write_report(data: dict, path: Path):
    svg, legend = chart(data)
    page = (
        f'<!doctype html><html><head><meta charset="utf-8"><title>Sweeps on CartPole-v1</title></head>'
        f'<body style="font-family:sans-serif;max-width:760px"><h1>Sweeps on CartPole-v1: best time to solve found</h1>'
        f"<p>{legend}. Faint: each sweep seed; bold: the median over seeds (drawn once every seed has solved). "
        f"Command: <code>{html.escape(data['command'])}</code></p>{svg}"
        f"<pre>{html.escape(summary(data))}</pre></body></html>"
    )
    path.write_text(page)


FIGURES = {f"{m}_median_best_s": "lower" for m in ("protein", "random", "carbs")}


def options(p):
    p.add_argument("--methods", nargs="+", default=["protein", "random"], choices=["protein", "random", "carbs"])
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    p.add_argument("--trials", type=int, default=16)
    p.add_argument("--max-parallel", type=int, default=1)


def per_sweep(s: dict) -> dict:
    "A sweep's row: its solved trials, the best time to solve, the trial that found it, its wall time."
    c = best_curve(s["trials"])
    solved = [t["cost"] for t in s["trials"] if t["solved"]]
    return {"method": s["method"], "seed": s["seed"], "solved": len(solved), "trials": len(s["trials"]), "best_s": c[-1],
            "found_at": next((i + 1 for i, v in enumerate(c) if v is not None and v == c[-1]), None),
            "median_solved_s": statistics.median(solved) if solved else None, "wall_s": round(s["wall_s"], 1)}  # fmt: skip


def run(quick: bool = False, methods=("protein", "random"), seeds=(1, 2, 3), trials: int = 16, max_parallel: int = 1,
        out: Path = Path("bench/out")) -> dict:  # fmt: skip
    space = SPACE
    if quick:  # two trials of a random search, each cut at 20K steps or 5 s
        methods, seeds, trials = ["random"], [1], 2
        space = SPACE.replace("timeout = 60", "timeout = 5").replace(
            "total_timesteps = 200000", "total_timesteps = 20000"
        )
    work = Path(tempfile.mkdtemp(prefix="sweep-bench-"))
    (work / "space.toml").write_text(space)
    data = {"command": "python -m bench sweep_cartpole", "sweeps": []}
    for seed in seeds:
        for method in methods:  # interleaved, so a slow spell of the machine hits both
            sw = run_sweep(method, seed, trials, max_parallel, work)
            data["sweeps"].append(sw)
            print(f"{method} seed {seed}: best {best_curve(sw['trials'])[-1]} in {sw['wall_s']:.0f} s", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    write_report(data, out / "sweep_cartpole.html")
    rows = [per_sweep(sw) for sw in data["sweeps"]]
    figures = {}
    for m in methods:
        best = [r["best_s"] if r["best_s"] is not None else math.inf for r in rows if r["method"] == m]
        figures[f"{m}_median_best_s"] = round(float(np.median(best)), 2)
        figures[f"{m}_solved"] = sum(r["solved"] for r in rows if r["method"] == m)
    settings = {"methods": list(methods), "seeds": list(seeds), "trials": trials, "max_parallel": max_parallel,
                "space": space}  # fmt: skip
    return {"settings": settings, "figures": figures, "per_sweep": rows, "raw": data["sweeps"],
            "versions": versions("torch", "numpy", "pufferlib")}  # fmt: skip


def table(records: list) -> str:
    "A row a sweep of each full run: solved trials, the best time to solve, where it was found, the sweep's wall time."
    n = lambda x: "-" if x is None or (isinstance(x, float) and math.isinf(x)) else f"{x:.2f}"  # noqa: E731

    def cells(rec):
        return [[r["method"], str(r["seed"]), f"{r['solved']}/{r['trials']}", n(r["best_s"]), str(r["found_at"] or "-"),
                 n(r["median_solved_s"]), f"{r['wall_s']:.0f}"] for r in rec["per_sweep"]]  # fmt: skip

    return make_table(["method", "sweep seed", "solved trials", "best time to solve (s)", "found at trial",
                       "median time of its solved trials (s)", "sweep wall (s)"], records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench sweep_cartpole`)
    from runner import main

    sys.exit(main(["sweep_cartpole", *sys.argv[1:]]))
