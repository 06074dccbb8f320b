"""What watching a run live costs it: training SPS with and without the dashboard attached, same work.

Three ways to run the same training (default CartPole settings, 8 envs x 32 steps, one torch thread;
evaluation and periodic checkpoints off so that SPS measures training alone):

  * trainer:   PPOTrainer.fit with the run store as its only sink (what `workbench train --quiet` does);
  * session:   a TrainingSession (the app's state object: history, log, store), no view;
  * dashboard: the same session with its dashboard served by Panel from this process and open in
               headless Chromium (Debian's), which redraws it live: the full cost of watching.

Each run is a fresh process (`runner.fresh`); the variants alternate, round after round, so that drifts in machine
load hit them alike. SPS is the trainer's own (steps / seconds of `fit`). The goal: dashboard / session >= 0.95; its
interval is a bootstrap of the ratio of the medians (rounds resampled).

    python -m bench dashboard_overhead               # 5 rounds of 40K steps: about 3 minutes
    python -m bench dashboard_overhead --quick       # 1 round of 8K steps

The dashboard worker also records the CPU seconds the browser and its own process used while training.
WB_PERIOD_MS and WB_CHART_S set the dashboard's poll period and chart redraw period (defaults 500 ms and 1 s, as in
the app), e.g. `WB_CHART_S=2 python -m bench dashboard_overhead`.
"""

import os, socket, statistics, sys, tempfile, threading, time

from benchutil import versions
from runner import bootstrap_ratio, fresh, interval, make_table

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


def worker(variant: str, steps: int) -> dict:
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
        return {"variant": variant, "sps": summary["sps"], "seconds": summary["seconds"],
                "global_step": summary["global_step"], **extra}  # fmt: skip


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


VARIANTS = ("trainer", "session", "dashboard")
FIGURES = {"dashboard_over_session": "higher", "dashboard_over_trainer": "higher", "trainer_sps": "higher"}


def options(p):
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=40_000, help="env steps a run")


def run(quick: bool = False, rounds: int = 5, steps: int = 40_000, quiet=lambda: 0.0) -> dict:
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"dashboard_overhead: {CHROMIUM} not found (apt-get install -y chromium)")
    if quick:
        rounds, steps = 1, 8_192
    raw = []
    for r in range(rounds):
        for variant in VARIANTS:
            busy = quiet()
            res = fresh("dashboard_overhead", "worker", variant=variant, steps=steps)
            if "error" in res:
                raise SystemExit(f"dashboard_overhead: the {variant} run failed: {res['error']}")
            raw.append({**res, "round": r, "busy_before": round(busy, 3)})
            print(f"round {r + 1} {variant:9s} {res['sps']:9,.0f} steps/s", flush=True)
    sps = {v: [x["sps"] for x in raw if x["variant"] == v] for v in VARIANTS}
    figures = {f"{v}_sps": round(statistics.median(sps[v])) for v in VARIANTS}
    ci = {}
    for a, b in (("dashboard", "session"), ("dashboard", "trainer"), ("session", "trainer")):
        figures[f"{a}_over_{b}"] = round(figures[f"{a}_sps"] / figures[f"{b}_sps"], 3)
        if rounds > 1:
            ci[f"{a}_over_{b}"] = bootstrap_ratio(sps[a], sps[b], stat=statistics.median)
    return {"settings": {"rounds": rounds, "steps": steps, "period_ms": int(os.environ.get("WB_PERIOD_MS", 500)),
                         "chart_s": float(os.environ.get("WB_CHART_S", 1.0))}, "figures": figures, "ci95": ci,
            "raw": raw, "versions": versions("torch", "panel", "plotly", "bokeh")}  # fmt: skip


def table(records: list) -> str:
    "A row a variant of each full run: its median steps/s (each run), its ratio to the session's and the trainer's."

    def cells(rec):
        f, rows = rec["figures"], []
        for v in VARIANTS:
            each = " / ".join(f"{x['sps']:,.0f}" for x in rec["raw"] if x["variant"] == v and "sps" in x)
            ratio = lambda b: "1" if v == b else f"{f[f'{v}_over_{b}']:.3f}{interval(rec, f'{v}_over_{b}', 3)}" \
                if f"{v}_over_{b}" in f else "-"  # fmt: skip
            rows.append([v, f"{f[f'{v}_sps']:,}" + (f" ({each})" if each else ""), ratio("session"), ratio("trainer")])
        return rows

    return make_table(["variant", "median steps/s (each run)", "over session's [95% CI]", "over trainer's [95% CI]"],
                      records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench dashboard_overhead`)
    from runner import main

    sys.exit(main(["dashboard_overhead", *sys.argv[1:]]))
