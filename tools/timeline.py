"""Where a `make test` run's time went: each pytest worker's files in the order it ran them, when each worker ended, and
the machine's CPU use minute by minute (tools/test.sh samples /proc/stat into test-artifacts/cpu.txt).

    python tools/timeline.py [test-artifacts]      # after make test; prints a few lines (the whole table: --files)
"""

import argparse, collections, json
from pathlib import Path


def rows(folder: Path) -> dict:
    "Each worker's rows as conftest wrote them: {worker: [{'test', 'start', 'end', 'cpu'}]}."
    return {
        f.stem.removeprefix("timeline-"): [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        for f in sorted(folder.glob("timeline-*.jsonl"))
    }


def load(folder: Path) -> dict:
    "Each worker's tests, in the order they ran: {worker: [(nodeid, start, end)]}."
    return {
        w: sorted(((r["test"], r["start"], r["end"]) for r in rs), key=lambda r: r[1]) for w, rs in rows(folder).items()
    }


def costliest(folder: Path, n: int) -> list:
    "The `n` files that took the most CPU seconds (their tests' own and their child processes'): [(file, cpu, tests)]."
    per = collections.defaultdict(lambda: [0.0, 0])
    for rs in rows(folder).values():
        for r in rs:
            f = per[r["test"].split("::")[0]]
            f[0] += r.get("cpu", 0.0)
            f[1] += 1
    return sorted(((k, round(c, 1), t) for k, (c, t) in per.items()), key=lambda x: -x[1])[:n]


def files(tests: list) -> list:
    "A worker's files in the order it ran them: (file, start, end)."
    spans = {}
    for nodeid, s, e in tests:
        name = nodeid.split("::")[0]
        spans[name] = (spans.get(name, (s,))[0], e)
    return [(k, *v) for k, v in spans.items()]


def cpu_minutes(path: Path, t0: float) -> list:
    "The share of all cores busy in each minute from `t0`, from lines 'time user nice system idle iowait ...' of /proc/stat."
    rows = (
        [list(map(float, line.split())) for line in path.read_text().splitlines() if line.strip()]
        if path.exists()
        else []
    )
    out, prev = collections.defaultdict(lambda: [0.0, 0.0]), None
    for r in rows:
        if prev is not None and r[0] >= t0:
            busy = sum(r[1:4]) - sum(prev[1:4]) + sum(r[6:9]) - sum(prev[6:9])
            idle = r[4] + r[5] - prev[4] - prev[5]
            m = out[int((r[0] - t0) // 60)]
            m[0] += busy
            m[1] += busy + idle
        prev = r
    return [round(b / t, 2) if t else 0.0 for _, (b, t) in sorted(out.items())]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default="test-artifacts")
    ap.add_argument("--files", action="store_true", help="every file of every worker, with its start and length")
    a = ap.parse_args()
    folder = Path(a.folder)
    workers = load(folder)
    if not workers:
        raise SystemExit(f"no timeline-*.jsonl in {folder}: run make test first")
    t0 = min(t[0][1] for t in workers.values())
    end = max(t[-1][2] for t in workers.values())
    for w, tests in workers.items():
        busy = sum(e - s for _, s, e in tests)
        last = tests[-1][2]
        print(
            f"{w}: {len(tests)} tests, busy {busy:.0f} s of {last - t0:.0f} s, ended {end - last:.0f} s before the last"
        )
        if a.files:
            for name, s, e in files(tests):
                print(f"    {s - t0:6.0f} s  {e - s:6.1f} s  {name}")
    top = costliest(folder, 12)
    if any(c for _, c, _ in top):
        total = sum(c for _, c, _ in costliest(folder, 10**6))
        print(f"CPU seconds of the tests and their processes: {total:.0f} in all; the costliest files:")
        print("  " + "; ".join(f"{k.removeprefix('tests/')} {c:.0f} ({t})" for k, c, t in top))
    shares = cpu_minutes(folder / "cpu.txt", t0)
    if shares:
        print("CPU busy a minute (share of all cores, from pytest's start):", " ".join(f"{x:.2f}" for x in shares))


if __name__ == "__main__":
    main()
