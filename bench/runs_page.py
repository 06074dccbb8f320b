"""The Runs page's load time against how many runs the store holds: a fresh store of N runs (`tests/many_runs.py`: PPO
over three learning rates, a sweep, SFT and GRPO agents, 40 metric rows each), `workbench serve` over it, and Debian's
chromium timing `goto(/runs)` until the table's first row shows, after one warm-up load; and the server's own time to
read the store into rows (`run_rows`), the work of each 3-second refresh. No peer is measured (W&B's and
TensorBoard's run tables cannot be installed offline here).

    python -m bench runs_page                        # 20, 200 and 1,000 runs, 5 timed loads each
    python -m bench runs_page --runs 200 --loads 3 --no-record
"""

import statistics, sys, tempfile, time
from pathlib import Path

from runner import make_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
FIGURES = {f"{k}_{n}": "lower" for n in (20, 200, 1000) for k in ("load_s", "rows_ms")}


def options(p):
    p.add_argument("--runs", type=int, nargs="+", default=[20, 200, 1000], help="store sizes")
    p.add_argument("--loads", type=int, default=5, help="timed page loads a store size (after one warm-up)")


def measure(n: int, loads: int) -> dict:
    "Page loads (s) and reads of the store into rows (s) for a fresh store of `n` runs."
    from playwright.sync_api import sync_playwright

    from conftest import CHROMIUM, CHROMIUM_ARGS
    from many_runs import make_runs
    from test_app import Server
    import workbench.app.serve  # noqa: F401  (what the server imports: RunStore's tags and sweeps among it)
    from workbench.app.pages import run_rows
    from workbench.runs.store import RunStore

    with tempfile.TemporaryDirectory() as d:
        runs_dir = Path(d) / "runs"
        make_runs(runs_dir, n=n)
        store, reads, times = RunStore(runs_dir), [], []
        for _ in range(5):
            t0 = time.perf_counter()
            run_rows(store.runs(), store.tags(), store.run_sweeps())
            reads.append(time.perf_counter() - t0)
        server = Server(runs_dir)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                for i in range(loads + 1):
                    t0 = time.perf_counter()
                    page.goto(f"{server.base}/runs")
                    page.locator(".wb-runs-table .tabulator-row").first.wait_for(timeout=120_000)
                    if i:  # (the first load builds the fresh server's first session: a warm-up)
                        times.append(time.perf_counter() - t0)
                browser.close()
        finally:
            server.stop()
    return {"runs": n, "loads_s": [round(x, 3) for x in times], "reads_s": [round(x, 5) for x in reads]}


def run(quick: bool = False, runs=(20, 200, 1000), loads: int = 5) -> dict:
    if quick:
        runs, loads = [20], 1
    raw, figures = [], {}
    for n in runs:
        r = measure(n, loads)
        raw.append(r)
        figures[f"load_s_{n}"] = round(statistics.median(r["loads_s"]), 2)
        figures[f"rows_ms_{n}"] = round(1000 * statistics.median(r["reads_s"]), 1)
        print(f"  {n:>5} runs: page {figures[f'load_s_{n}']:.2f} s, rows {figures[f'rows_ms_{n}']:.1f} ms", flush=True)
    return {"settings": {"runs": list(runs), "loads": loads}, "figures": figures, "raw": raw}


def table(records: list) -> str:
    "A row a store size of each full run: the median page load, its spread, the server's read of the store."

    def cells(rec):
        f, rows = rec["figures"], []
        for r in rec["raw"]:
            n, spread = r["runs"], r.get("spread") or f"{min(r['loads_s']):.2f}-{max(r['loads_s']):.2f}"
            rows.append([f"{n:,}", f"{f[f'load_s_{n}']:.2f}", spread, f"{f[f'rows_ms_{n}']:.1f}"])
        return rows

    return make_table(["runs", "page load, median (s)", "min-max (s)", "rows from the store (ms)"], records, cells)


if __name__ == "__main__":  # (the same as `python -m bench runs_page`)
    from runner import main

    sys.exit(main(["runs_page", *sys.argv[1:]]))
