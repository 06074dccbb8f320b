"""`workbench serve`'s pages in a real browser (Debian's chromium through Playwright), over two tiny runs trained by
`workbench train` with different learning rates: the run page's five charts and readable tables, the Runs page's metric
picker, smoothing, wall-time axis and hyperparameter diff, the header's system line, offline assets, and layouts that
hold at 1024 px (the Live page's included)."""

import os, re, urllib.request
from pathlib import Path

import pytest

from conftest import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    NOT_LOOPBACK,
    TINY,
    last_json,
    remote_fetches,
    wait_for,
    workbench_main,
)
from test_app import Server
from workbench.app.pages import ema
from workbench.runs.store import RunStore

WIDTH = 1024  # the narrowest layout the pages must hold


def offsite(urls) -> list:
    "The URLs of `urls` that would leave this machine (`NOT_LOOPBACK`)."
    return [u for u in urls if NOT_LOOPBACK.match(u)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Two runs of 1,024 steps, evaluated every 8 updates, a checkpoint an update (the last 2 kept), that differ only
    in learning rate, trained by `workbench train` in-process; a server over them."""
    runs_dir = tmp_path_factory.mktemp("serve-pages") / "runs"
    ids = []
    for lr in ("0.0025", "0.001"):
        r = workbench_main(
            "train",
            *TINY,
            "--total-timesteps",
            1024,
            "--eval-every",
            8,
            "--eval-episodes",
            2,
            "--confirm-episodes",  # a best as the 2-episode evaluations say: the last one (a tie goes to the later)
            0,
            "--learning-rate",
            lr,
            "--checkpoint-every",
            1,
            "--keep-last",
            2,
            "--runs-dir",
            runs_dir,
            "--json",
        )
        assert r.returncode == 0, r.stderr
        ids.append(last_json(r.stdout)["run_id"])
    server = Server(runs_dir)
    yield server, ids, RunStore(runs_dir)
    server.stop()


@pytest.fixture(scope="module")
def context():
    "One headless Chromium for the module, 1024 px wide; its pages record every URL they request in `context.requested`."
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), (
        "Debian's chromium is missing: tools/setup.sh installs it (apt-get install -y chromium)"
    )
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = b.new_context(viewport={"width": WIDTH, "height": 900})
        context.requested = []
        context.on("request", lambda request: context.requested.append(request.url))
        try:
            yield context
        finally:
            b.close()


def shadow_text(locator) -> str:
    "The text a Panel pane shows (inside its shadow root)."
    return locator.evaluate(
        "el => [...(el.shadowRoot || el).children].filter(c => c.tagName != 'STYLE').map(c => c.innerText).join('\\n')"
    )


def fits(page) -> int:
    "The page's scroll width (at most the viewport's when nothing overflows sideways)."
    return page.evaluate("document.scrollingElement.scrollWidth")


def test_pages_load_nothing_from_the_internet(served):
    "The served HTML of every page names its scripts and stylesheets on this server: no CDN."
    server, (run_id, _), _ = served
    for path in ("runs", f"run?id={run_id}", "live", "system"):
        with urllib.request.urlopen(f"{server.base}/{path}", timeout=60) as r:
            page = r.read().decode()
        assets = re.findall(r"<(?:script|link)\b[^>]*?\b(?:src|href)\s*=\s*[\"']([^\"']*)[\"']", page)
        assert len([a for a in assets if a.endswith(".js") or ".js?" in a]) >= 3, (path, assets)
        assert remote_fetches(page) == [], f"/{path} loads {remote_fetches(page)}"


def test_run_page(served, context):
    "A run's page: the live dashboard's five charts from the store, events and checkpoints readable, no sideways scroll."
    server, (run_id, _), store = served
    page = context.new_page()
    page.goto(f"{server.base}/run?id={run_id}")
    points = "el => el.data ? Object.fromEntries(el.data.map(t => [t.name, (t.x || []).length])) : {}"
    drawn = {
        name: wait_for(
            lambda: page.locator(f".wb-run-chart-{name} .js-plotly-plot").evaluate(points),
            timeout=60,
            what=f"the {name} chart",
        )
        for name in ("return", "losses", "kl", "sps", "lr")
    }
    count = lambda key: len([m for m in store.metrics(run_id, key) if m["value"] is not None])
    updates = count("perf/sps")
    assert updates == 32 and drawn["sps"] == {"steps/s": updates} and drawn["lr"] == {"learning rate": updates}
    assert drawn["losses"] == {"policy": updates, "entropy": updates, "value (right)": updates}
    assert drawn["kl"] == {"approx KL": updates, "clip fraction (right)": updates}
    evals = store.events(run_id, "eval")
    assert drawn["return"]["greedy eval"] == len(evals) == 4 and drawn["return"]["mean"] > 10
    assert drawn["return"]["min-max"] == drawn["return"]["max"] == count("charts/episodic_return_min") > 10

    head = shadow_text(page.locator(".wb-run-head"))
    assert "finished · gym:CartPole-v1 · mlp policy · step 1,024 · best eval return " in head, head
    events = page.locator(".wb-events .tabulator-tableholder")
    events.get_by_text("std_return: ").first.wait_for(timeout=30_000)
    text = events.inner_text()
    assert "mean_return: " in text and "greedy: yes" in text and "status: finished" in text
    assert not re.search(r"\b0\.0*[1-9]\d{4,}|\b[1-9]\d*\.\d{4,}", text), text  # no number beyond 4 significant digits
    assert "{" not in text and '"' not in text, text  # nor JSON
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", text)  # local times
    assert fits(page) <= WIDTH
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "run_page.png"), full_page=True)

    page.locator(".bk-tab").filter(has_text="Checkpoints").click()
    page.locator(".wb-checkpoints .tabulator-tableholder").get_by_text("checkpoints/").first.wait_for(timeout=30_000)
    cells = (
        "el => Object.fromEntries([...el.querySelectorAll('.tabulator-cell')]"
        ".map(c => [c.getAttribute('tabulator-field'), c.innerText]))"
    )
    rows = [r.evaluate(cells) for r in page.locator(".wb-checkpoints .tabulator-row").all()]
    stored = store.checkpoints(run_id, on_disk=True)  # what is on disk: files keep_last pruned are not listed
    assert [r["step"] for r in rows] == [f"{c['step']:,}" for c in stored] and all(
        r["file"].startswith("checkpoints/") for r in rows
    )
    run_dir = Path(store.get_run(run_id)["run_dir"])
    files = {str(p.relative_to(run_dir)) for p in run_dir.glob("checkpoints/step_*.pt")}
    assert {r["file"] for r in rows} == files, (rows, files)
    assert len(store.checkpoints(run_id)) > len(rows), "no checkpoint was pruned: the test shows nothing"
    assert [r["best"] for r in rows] == ["✓" if c["is_best"] else "" for c in stored] and "✓" in [
        r["best"] for r in rows
    ]
    assert all(re.fullmatch(r"-|\d[\d,]*(\.\d{1,3})?", r["score"]) for r in rows), rows  # scores: 4 significant digits
    assert fits(page) <= WIDTH and offsite(context.requested) == []
    page.close()


def test_runs_page(served, context):
    "Tick two runs: overlay, pick another metric, smooth it, switch to wall time; the learning rate is the difference."
    server, (a, b), store = served
    page = context.new_page()
    page.goto(f"{server.base}/runs")
    overlay = page.locator(".wb-overlay-chart .js-plotly-plot")
    figure = lambda: overlay.evaluate(
        "el => el.data ? {title: el.layout.title.text, xtitle: el.layout.xaxis.title.text, "
        "ticks: el.layout.xaxis.ticktext || null, traces: el.data.map(t => ({name: t.name, "
        "x: Array.from(t.x), y: Array.from(t.y)}))} : null"
    )
    for rid in (a, b):
        row = page.locator(".wb-runs-table .tabulator-row").filter(has_text=rid)
        row.wait_for(timeout=60_000)
        row.locator("input[type=checkbox]").click()
    fig = wait_for(lambda: (f := figure()) and len(f["traces"]) == 2 and f, timeout=30, what="two runs overlaid")
    assert fig["title"] == "charts/episodic_return of 2 runs" and fig["xtitle"] == "step"

    hparams = page.locator(".wb-hparams")
    wait_for(lambda: "ppo.learning_rate" in shadow_text(hparams), timeout=30, what="the hyperparameter diff")
    diff = shadow_text(hparams)
    assert re.search(r"ppo\.learning_rate\s+0\.0025\s+0\.001", diff), diff
    assert "num_steps" not in diff and "settings with the same value in both runs are not listed" in diff

    # Another metric: the overlay draws it, value for value.
    page.locator(".wb-metrics select").select_option("perf/sps")  # (one metric: one chart)
    fig = wait_for(
        lambda: (f := figure()) and f["title"] == "perf/sps of 2 runs" and f, timeout=30, what="the perf/sps overlay"
    )
    sps = {rid: [m["value"] for m in store.metrics(rid, "perf/sps")] for rid in (a, b)}
    for t in fig["traces"]:
        assert t["y"] == pytest.approx(sps[t["name"]])

    # Smoothed: each run's raw curve stays faintly behind its moving average.
    weight = page.locator(".wb-smoothing input").first
    weight.fill("0.9")
    weight.press("Enter")
    fig = wait_for(lambda: (f := figure()) and len(f["traces"]) == 4 and f, timeout=30, what="the smoothed overlay")
    assert fig["title"] == "perf/sps of 2 runs, smoothed (EMA weight 0.9)"
    curves = {t["name"]: t["y"] for t in fig["traces"]}
    assert (
        curves[f"{a} (raw)"] == pytest.approx(sps[a])
        and curves[a] == pytest.approx(ema(sps[a], 0.9)) != curves[f"{a} (raw)"]
    )

    # Wall time: seconds since each run's first metric, labelled as durations.
    page.locator(".wb-xaxis button").filter(has_text="wall time").click()
    fig = wait_for(lambda: (f := figure()) and f["ticks"] and f, timeout=30, what="the wall-time axis")
    seconds = {t["name"]: t["x"] for t in fig["traces"] if not t["name"].endswith("(raw)")}
    rows = store.metrics(a, "perf/sps")
    assert fig["xtitle"] == "wall time since the run's first metric" and seconds[a][0] == 0.0
    assert seconds[a] == pytest.approx([r["time"] - rows[0]["time"] for r in rows])
    assert all(re.fullmatch(r"\d+\.\d s|\d+:\d\d(:\d\d)?", t) for t in fig["ticks"]), fig["ticks"]
    assert fits(page) <= WIDTH
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "runs_page_compare.png"), full_page=True)

    # One run: its own title, and nothing to compare.
    page.locator(".wb-runs-table .tabulator-row").filter(has_text=b).locator("input[type=checkbox]").click()
    wait_for(
        lambda: (f := figure()) and f["title"] == f"perf/sps of {a}, smoothed (EMA weight 0.9)",
        timeout=30,
        what="one run",
    )
    wait_for(lambda: "Tick two or more runs" in shadow_text(hparams), timeout=30, what="the diff's note")
    assert fits(page) <= WIDTH and offsite(context.requested) == []
    page.close()


def test_system_line_and_page_update(served, context):
    "The header's system line and the System page are measured anew every two seconds, in one place."
    server, _, _ = served
    page = context.new_page()
    page.goto(f"{server.base}/system")
    line = page.locator(".wb-system-line .wb-system-text")
    measured = page.locator(".wb-system .wb-measured")
    line.wait_for(timeout=60_000)
    first, first_page = line.get_attribute("title"), measured.inner_text()
    wait_for(lambda: line.get_attribute("title") != first, timeout=15, what="the header's system line to update")
    wait_for(lambda: measured.inner_text() != first_page, timeout=15, what="the System page to update")
    text = line.inner_text()
    assert re.fullmatch(r"CPU \d+% of \d+ cores · memory .*", text), text
    assert fits(page) <= WIDTH
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "system_page.png"), full_page=True)
    page.goto(f"{server.base}/live")
    page.get_by_role("button", name="Start").wait_for(timeout=60_000)
    wait_for(
        lambda: fits(page) <= WIDTH, timeout=15, what=f"the Live page to fit {WIDTH} px (scroll width {fits(page)})"
    )
    page.screenshot(path=str(ARTIFACTS / "live_page_1024.png"), full_page=True)
    assert offsite(context.requested) == []
    page.close()
