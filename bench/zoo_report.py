"""The learning curves of a `bench/zoo.py` run as one small, self-contained HTML page (inline SVG: no script, no
network, a few hundred KB), small enough to keep in the repository next to bench/RESULTS.md.

    python bench/zoo_report.py bench/out/zoo.json --out bench/zoo_curves.html
    python bench/zoo_report.py bench/out/zoo.json bench/out/zoo_ours.json --out bench/zoo_curves.html   # several runs:
        # for each (env, trainer, seed) the entry of the last file that has a curve
"""

import argparse, html, json, os
from pathlib import Path

COLOURS = {"workbench": "#1f77b4", "sb3": "#d62728", "pufferl": "#2ca02c"}
ZOO_TITLE = "Learning curves: workbench vs SB3 (rl-zoo settings)"
ZOO_BLURB = (
    "Training episode return against env steps, one line per seed: for workbench the mean of the episodes finished "
    "in each rollout, for SB3 its rolling mean over the last 100 episodes (its ep_info_buffer), hence smoother."
)
W, H, PAD = 560, 260, 48


def thin(points, most=200):
    "At most `most` points, evenly spaced along the curve, the last one kept."
    if len(points) <= most:
        return points
    step = len(points) / most
    return [points[int(i * step)] for i in range(most)] + [points[-1]]


def figure(env: str, runs: list) -> str:
    "One SVG chart: every run's (steps, return) curve, its trainer's colour, axes labelled."
    pts = [p for r in runs for p in r["curve"]]
    if not pts:
        return f"<div><h2>{html.escape(env)}</h2><p>no curves</p></div>"
    x0, x1 = 0, max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    y1 = y1 if y1 > y0 else y0 + 1
    sx = lambda x: PAD + (W - PAD - 10) * (x - x0) / max(x1 - x0, 1)
    sy = lambda y: H - PAD + (PAD + 10 - H) * (y - y0) / (y1 - y0)
    out = [f'<svg width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{html.escape(env)}">']
    out.append(f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - 10}" y2="{H - PAD}" stroke="#444"/>')
    out.append(f'<line x1="{PAD}" y1="10" x2="{PAD}" y2="{H - PAD}" stroke="#444"/>')
    for frac in (0, 0.5, 1):
        x, y = x0 + frac * (x1 - x0), y0 + frac * (y1 - y0)
        out.append(f'<text x="{sx(x):.0f}" y="{H - PAD + 16}" font-size="11" text-anchor="middle">{x:,.0f}</text>')
        label = f"{y:,.0f}" if y1 - y0 >= 10 else f"{y:.2f}"
        out.append(f'<text x="{PAD - 4}" y="{sy(y) + 4:.0f}" font-size="11" text-anchor="end">{label}</text>')
    out.append(f'<text x="{(W + PAD) / 2:.0f}" y="{H - 8}" font-size="11" text-anchor="middle">env steps</text>')
    for r in runs:
        line = " ".join(f"{sx(s):.1f},{sy(v):.1f}" for s, v in thin(r["curve"]))
        out.append(
            f'<polyline fill="none" stroke="{COLOURS[r["trainer"]]}" stroke-width="1.2" stroke-opacity="0.8" '
            f'points="{line}"><title>{r["trainer"]} seed {r["seed"]}</title></polyline>'
        )
    out.append("</svg>")
    return f"<div><h2>{html.escape(env)}</h2>" + "".join(out) + "</div>"


def write_report(data: dict, path: Path, title: str = ZOO_TITLE, blurb: str = ZOO_BLURB) -> None:
    "The page: one chart per env of the runs' `curve`s ([(steps, value)]), a legend of the trainers present."
    runs = [r for r in data["results"] if "error" not in r]
    envs = list(dict.fromkeys(r["env"] for r in runs))
    present = {r["trainer"] for r in runs}
    legend = " ".join(f'<span style="color:{c}">&#9632; {t}</span>' for t, c in COLOURS.items() if t in present)
    body = "".join(figure(e, [r for r in runs if r["env"] == e]) for e in envs)
    page = (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        "<style>body{font-family:sans-serif;max-width:1200px;margin:1em auto}h2{font-size:1em;margin:1em 0 0}"
        "div.grid{display:flex;flex-wrap:wrap;gap:0 1em}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{legend}. {html.escape(blurb)} "
        f"Command: <code>{html.escape(data.get('command', ''))}</code></p><div class=grid>{body}</div></body></html>"
    )
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(page)
    os.replace(tmp, path)


def merge(runs: list) -> dict:
    "One report's data from several zoo.py outputs: per (env, trainer, seed), the last entry that has a curve."
    picked, commands = {}, []
    for data in runs:
        commands.append(data.get("command", ""))
        for r in data["results"]:
            key = (r.get("env"), r.get("trainer"), r.get("seed"))
            if "error" not in r and (r.get("curve") or key not in picked):
                picked[key] = r
    return {"command": " ; ".join(commands), "results": list(picked.values())}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sources", nargs="+", help="zoo.py JSON outputs")
    p.add_argument("--out", required=True, help="the HTML page to write")
    args = p.parse_args()
    write_report(merge([json.loads(Path(s).read_text()) for s in args.sources]), Path(args.out))
    print(f"wrote {args.out} ({Path(args.out).stat().st_size / 1024:.0f} KB)")
