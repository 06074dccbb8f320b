"""The Runs page's load time against how many runs the store holds: a fresh store of N runs (`tests/many_runs.py`: PPO
over three learning rates, a sweep, SFT and GRPO agents, 40 metric rows each), `workbench serve` over it, and Debian's
chromium timing `goto(/runs)` until the table's first row shows, after one warm-up load; and the server's own time to
read the store into rows (`run_rows`), the work of each 3-second refresh.

    python bench/runs_page.py --runs 20 200 1000 --loads 5
"""

import argparse, statistics, sys, tempfile, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[20, 200, 1000])
    ap.add_argument("--loads", type=int, default=5, help="timed page loads a store size (after one warm-up)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from conftest import CHROMIUM, CHROMIUM_ARGS
    from many_runs import make_runs
    from test_app import Server
    from workbench.app.pages import run_rows
    from workbench.runs.store import RunStore

    print(f"{'runs':>6} {'page load, median (s)':>22} {'min-max (s)':>12} {'rows from the store (ms)':>25}")
    for n in args.runs:
        with tempfile.TemporaryDirectory() as d:
            runs_dir = Path(d) / "runs"
            make_runs(runs_dir, n=n)
            store = RunStore(runs_dir)
            reads = []
            for _ in range(5):
                t0 = time.perf_counter()
                run_rows(store.runs(), store.tags(), store.run_sweeps())
                reads.append(time.perf_counter() - t0)
            server = Server(runs_dir)
            try:
                with sync_playwright() as p:
                    browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                    page = browser.new_page(viewport={"width": 1280, "height": 900})
                    loads = []
                    for i in range(args.loads + 1):
                        t0 = time.perf_counter()
                        page.goto(f"{server.base}/runs")
                        page.locator(".wb-runs-table .tabulator-row").first.wait_for(timeout=120_000)
                        if i:
                            loads.append(time.perf_counter() - t0)
                    browser.close()
            finally:
                server.stop()
            print(
                f"{n:>6} {statistics.median(loads):>22.2f} {min(loads):>5.2f}-{max(loads):<6.2f} "
                f"{1000 * statistics.median(reads):>25.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
