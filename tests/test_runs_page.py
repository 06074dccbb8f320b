"""The Runs page with 200 runs in the store (PPO over three learning rates and many seeds, a sweep of 20 of them, SFT
and GRPO code agents), in a real browser: load time, search and filters, grouping by `learning_rate` and by sweep,
tags set from the page and from the CLI, two metrics at once, a group's mean and band, a ticked run without data for
a metric named beside the chart, and a settings diff of a PPO run and a code agent that lists only what they share."""

import re, time

import pytest

from conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, wait_for, workbench_main
from many_runs import make_runs
from test_app import Server
from test_serve_pages import offsite, shadow_text
from workbench.runs import labels  # noqa: F401  (gives RunStore its tags)
from workbench.runs.store import RunStore


def text(locator) -> str:
    "A pane's text, its whitespace folded."
    return " ".join(shadow_text(locator).split())


LOAD_BOUND_S = 10.0  # a guard against a page that reads the store once a run; bench/runs_page.py measures it


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    runs_dir = tmp_path_factory.mktemp("runs-page") / "runs"
    made = make_runs(runs_dir, n=200)
    server = Server(runs_dir)
    yield server, made, RunStore(runs_dir)
    server.stop()


def test_runs_page_with_200_runs(many):
    from playwright.sync_api import sync_playwright

    server, made, store = many
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1024, "height": 900})
        requested = []
        page.on("request", lambda r: requested.append(r.url))
        loads = []
        for _ in range(2):  # the first load of a fresh server also builds its first session
            t0 = time.perf_counter()
            page.goto(f"{server.base}/runs")
            page.locator(".wb-runs-table .tabulator-row").first.wait_for(timeout=60_000)
            loads.append(time.perf_counter() - t0)
        print(f"Runs page with 200 runs: first load {loads[0]:.2f} s, again {loads[1]:.2f} s (to the first row)")
        assert loads[1] < LOAD_BOUND_S, loads
        count = page.locator(".wb-count")
        wait_for(lambda: text(count) == "200 of 200 runs", timeout=30, what="the count")

        # Search and filters narrow the table.
        page.locator(".wb-search input").fill("grpo")
        wait_for(lambda: text(count) == "25 of 200 runs", timeout=30, what="the search")
        cells = page.locator(".wb-runs-table .tabulator-cell[tabulator-field=algorithm]")
        wait_for(lambda: cells.all_inner_texts() == ["grpo"] * 25, timeout=30, what="the 25 GRPO runs in the table")
        page.locator(".wb-search input").fill("")
        page.locator(".wb-filter-algo select").select_option("ppo")
        wait_for(lambda: text(count) == "150 of 200 runs", timeout=30, what="the algorithm filter")

        # Grouped by a sweep, then by the learning rate: groups with their sizes.
        grouped = page.locator(".wb-runs-grouped")
        headers = lambda: [  # noqa: E731
            re.sub(r"\s*\(", " (", " ".join(h.split())) for h in grouped.locator(".tabulator-group").all_inner_texts()
        ]
        page.locator(".wb-group select").select_option("sweep")
        wait_for(lambda: headers()[:1] == ["group: sweep = lr-sweep (20 items)"], timeout=30, what="sweep groups")
        page.locator(".wb-group select").select_option("learning_rate")
        wait_for(lambda: headers()[:1] == ["group: learning_rate = 0.001 (50 items)"], timeout=30, what="lr groups")

        # Tag three runs of the first group from the page, and a code agent from the CLI.
        rows = grouped.locator(".tabulator-row.tabulator-selectable")
        picked = [rows.nth(i).locator(".tabulator-cell[tabulator-field=run]").inner_text() for i in range(3)]
        for i in range(3):
            rows.nth(i).locator("input[type=checkbox]").click()
        page.locator(".wb-tag-name input").fill("picked")
        page.locator(".wb-tag-add button").click()
        wait_for(lambda: text(page.locator(".wb-tag-note")) == "Added 'picked' to 3 runs.", timeout=30, what="tags")
        agent = made["lm"][0]
        r = workbench_main("tag", agent, "picked", "--runs-dir", server.runs_dir)
        assert r.returncode == 0 and r.stdout == f"{agent}: picked\n", r.stdout + r.stderr
        assert {rid for rid, tags in store.tags().items() if "picked" in tags} == {*picked, agent}

        # The tag filter (it learns the CLI's tag on the next refresh) shows the four.
        page.locator(".wb-filter-algo select").select_option("all")
        wait_for(lambda: "picked" in page.locator(".wb-filter-tag option").all_inner_texts(), timeout=30, what="tag")
        page.locator(".wb-filter-tag select").select_option("picked")
        wait_for(lambda: text(count) == "4 of 200 runs", timeout=30, what="the tag filter")
        lm_rate = store.get_run(agent)["config"]["optim"]["learning_rate"]
        groups = sorted([(1e-3, "0.001 (3 items)"), (lm_rate, f"{lm_rate:g} (1 item)")])  # in the order of their values
        want = [f"group: learning_rate = {g}" for _, g in groups]
        wait_for(lambda: headers() == want, timeout=30, what=f"the four runs grouped: {want}")
        selected = lambda: grouped.locator(".tabulator-row.tabulator-selected").count()
        wait_for(lambda: selected() == 3, timeout=30, what="the ticks kept through the filters")
        grouped.locator(".tabulator-row").filter(has_text=agent).locator("input[type=checkbox]").click()

        # Two metrics at once, one chart each; the code agent has no return, and is named for it.
        page.locator(".wb-metrics select").select_option(["charts/episodic_return", "charts/pass_rate"])
        charts = page.locator(".wb-overlay-chart .js-plotly-plot")
        titles = lambda: charts.evaluate_all("els => els.map(e => e.layout && e.layout.title.text)")
        wait_for(
            lambda: (
                titles()
                == [
                    "charts/episodic_return of 3 runs (1 ticked run without it, named below)",
                    f"charts/pass_rate of {agent} (3 ticked runs without it, named below)",
                ]
            ),
            timeout=30,
            what="two charts",
        )
        notes = page.locator(".wb-nodata")
        wait_for(
            lambda: f"No charts/episodic_return in 1 of the ticked runs: {agent}" in text(notes.first),
            timeout=30,
            what="the run without data",
        )

        # One line a group: the three seeds' mean in a band.
        page.locator(".wb-bands input").check()
        legend = lambda: charts.first.evaluate("el => el.data.filter(t => t.showlegend !== false).map(t => t.name)")
        wait_for(lambda: legend() == ["learning_rate = 0.001 (3 runs)"], timeout=30, what="the band")
        mean = charts.first.evaluate("el => Array.from(el.data[2].y)")
        returns = [[m["value"] for m in store.metrics(rid, "charts/episodic_return")] for rid in picked]
        assert mean == pytest.approx([sum(v) / 3 for v in zip(*returns)])

        # The settings diff: only what a PPO run and a code agent share.
        hparams = page.locator(".wb-hparams")
        wait_for(lambda: "run.seed" in shadow_text(hparams), timeout=30, what="the diff")
        diff = shadow_text(hparams)
        assert "not set" not in diff and "settings that only some of the runs have are left out" in diff, diff
        assert "ppo.learning_rate" not in diff and "optim.learning_rate" not in diff, diff
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "runs_page_200.png"), full_page=True)
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 1024
        assert offsite(requested) == []
        browser.close()
