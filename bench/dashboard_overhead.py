"""What watching a run live costs it: training SPS with and without the dashboard attached, same work.

Three ways to run the same training (default CartPole settings, 8 envs x 32 steps, one torch thread;
evaluation and periodic checkpoints off so that SPS measures training alone):

  * trainer:   PPOTrainer.fit with the run store as its only sink (what `workbench train --quiet` does);
  * session:   a TrainingSession (the app's state object: history, log, store), no view;
  * dashboard: the same session with its dashboard served by Panel from this process and open in
               headless Chromium (Debian's), which redraws it live: the full cost of watching.

Each run is a fresh subprocess of this script (`--worker`); the variants alternate, round after round,
so that drifts in machine load hit them alike. SPS is the trainer's own (steps / seconds of `fit`).
The goal: dashboard / session >= 0.95.

    python bench/dashboard_overhead.py               # 3 rounds of 60K steps: about 3 minutes
    python bench/dashboard_overhead.py --quick       # 1 round of 30K steps

The dashboard worker also prints (stderr) the CPU seconds the browser and this process used while training.
WB_PERIOD_MS and WB_CHART_S set the dashboard's poll period and chart redraw period for that worker
(defaults 500 ms and 1 s, as in the app), e.g. `WB_CHART_S=2 python bench/dashboard_overhead.py --worker dashboard`.
"""

import argparse, json, os, socket, statistics, sys, tempfile, threading, time

from benchutil import print_result, run_worker, wait_for_quiet, versions

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def config(steps: int, runs_dir: str):
    from workbench.train.config import TrainConfig

    return TrainConfig.from_dict(
        {
            "env": "gym:CartPole-v1",
            "total_timesteps": steps,
            "runs_dir": runs_dir,
            "eval_every": 0,
            "checkpoint_every": 0,
        }
    )


def worker(variant: str, steps: int):
    with tempfile.TemporaryDirectory() as runs_dir:
        cfg = config(steps, runs_dir)
        extra = {}
        if variant == "trainer":
            from workbench.train.runner import train_run

            summary = train_run(cfg)[0]
        elif variant == "session":
            import psutil
            from workbench.app.session import TrainingSession

            me = psutil.Process()
            c0 = sum(me.cpu_times()[:2])
            summary = TrainingSession(cfg).start().wait()
            extra = {"process_cpu_s": round(sum(me.cpu_times()[:2]) - c0, 2)}
        else:
            summary, extra = watched_session(cfg)
        print_result(
            {
                "variant": variant,
                "sps": summary["sps"],
                "seconds": summary["seconds"],
                "global_step": summary["global_step"],
                **extra,
            }
        )


def watched_session(cfg):
    "Serve the session's dashboard, open it in Chromium, then train while the page redraws."
    import panel as pn
    from playwright.sync_api import sync_playwright
    from workbench.app.session import TrainingSession

    session = TrainingSession(cfg)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def page():
        pn.extension("plotly")
        return session.dashboard(
            period_ms=int(os.environ.get("WB_PERIOD_MS", 500)), chart_period_s=float(os.environ.get("WB_CHART_S", 1.0))
        )

    server = pn.serve({"dash": page}, port=port, address="127.0.0.1", show=False, start=False, verbose=False)
    server.start()
    threading.Thread(target=server.io_loop.start, daemon=True).start()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        view = browser.new_page(viewport={"width": 1400, "height": 1000})
        view.goto(f"http://127.0.0.1:{port}/dash")
        view.locator(".wb-chart-return .js-plotly-plot").wait_for(timeout=60_000)
        import psutil

        me = psutil.Process()

        def cpu(procs):
            return sum(sum(p.cpu_times()[:2]) for p in procs if p.is_running())

        browsers = [p for p in psutil.process_iter() if "chromium" in p.name()]
        b0, s0 = cpu(browsers), cpu([me])
        session.start()
        summary = session.wait()
        used = {"browser_cpu_s": round(cpu(browsers) - b0, 2), "process_cpu_s": round(cpu([me]) - s0, 2)}
        print(
            f"cpu seconds during training: browser {used['browser_cpu_s']:.1f}, this process "
            f"{used['process_cpu_s']:.1f}, training wall {summary['seconds']:.1f}",
            file=sys.stderr,
        )
        time.sleep(1.5)  # let the page catch up, then check that it really did redraw live
        points = view.locator(".wb-chart-lr .js-plotly-plot").evaluate("el => el.data[0].x.length")
        browser.close()
    server.io_loop.add_callback(server.io_loop.stop)
    return summary, {"points_on_page": points, **used}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=60_000)
    ap.add_argument("--quick", action="store_true", help="1 round of 30K steps")
    ap.add_argument("--worker", choices=["trainer", "session", "dashboard"])
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.steps = 1, 30_000
    if args.worker:
        return worker(args.worker, args.steps)
    if not os.path.exists(CHROMIUM):
        sys.exit(f"dashboard_overhead: {CHROMIUM} not found (apt-get install -y chromium)")

    busy = wait_for_quiet(0.15, 60)
    results = {v: [] for v in ("trainer", "session", "dashboard")}
    for r in range(args.rounds):
        for variant in results:
            res = run_worker(__file__, ["--worker", variant, "--steps", args.steps])
            if "error" in res:
                sys.exit(f"dashboard_overhead: {variant} worker failed: {res['error']}")
            results[variant].append(res)
            note = (
                f" ({res['points_on_page']} points on the page; CPU s during training: browser "
                f"{res['browser_cpu_s']:.1f}, this process {res['process_cpu_s']:.1f})"
                if "points_on_page" in res
                else ""
            )
            print(
                f"round {r + 1} {variant:9s} {res['sps']:9,.0f} steps/s over {res['global_step']:,} steps{note}",
                flush=True,
            )
    med = {v: statistics.median(x["sps"] for x in rs) for v, rs in results.items()}
    print(
        f"\nmedian SPS over {args.rounds} round(s) of {args.steps:,} steps (machine busy {busy:.0%} before the start):"
    )
    for v, m in med.items():
        print(f"  {v:9s} {m:9,.0f}")
    paired = sorted(d["sps"] / s["sps"] for d, s in zip(results["dashboard"], results["session"]))
    print(
        f"dashboard / session = {med['dashboard'] / med['session']:.3f}   (goal >= 0.95; round by round: "
        f"median {statistics.median(paired):.3f}, range {paired[0]:.3f}-{paired[-1]:.3f})"
    )
    print(f"dashboard / trainer = {med['dashboard'] / med['trainer']:.3f}")
    print(f"session   / trainer = {med['session'] / med['trainer']:.3f}")
    print(
        json.dumps(
            {
                "median_sps": med,
                "paired_ratios": paired,
                "rounds": args.rounds,
                "steps": args.steps,
                "versions": versions("torch", "panel", "plotly", "bokeh"),
            }
        )
    )


if __name__ == "__main__":
    main()
