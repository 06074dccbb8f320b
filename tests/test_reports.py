"""Reports people would publish: real titles, one number format, grouped seed curves, `--plotly shared`
(one plotly.js per folder, loaded by relative paths, rendering in Chromium with the network blocked), and no
page that loads anything from a server."""

import contextlib, json, os, re, shutil
from pathlib import Path

import nbformat
import plotly
import pytest
from plotly.offline import get_plotlyjs_version

from conftest import CHROMIUM, ROOT, remote_fetches, workbench
from workbench.runs.sinks import fmt_number

TRAIN = ROOT / "nbs" / "experiments" / "train.ipynb"
# 4 updates of 512 steps (8 envs x 64), 2 epochs each: the pages' claims do not need a trained policy
SMALL = ["-p", "total_timesteps", "2048", "-p", "num_steps", "64", "-p", "update_epochs", "2"]
SMALL += ["-p", "eval_episodes", "3", "-p", "eval_every", "2", "-p", "device", "cpu"]


def visible_text(page: str) -> str:
    "What a reader sees of `page`: no scripts, styles or tags."
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return re.sub(r"<[^>]+>", " ", page)


def test_remote_fetches_is_a_real_check():
    "The checker itself, on the cases it must tell apart."
    assert remote_fetches('<script src="https://cdn.plot.ly/plotly-3.0.1.min.js"></script>') == [
        "https://cdn.plot.ly/plotly-3.0.1.min.js"
    ]
    assert remote_fetches("<link rel='stylesheet' href='//fonts.example.com/a.css'>") == ["//fonts.example.com/a.css"]
    assert remote_fetches('<script type="module">import "https://cdn.plot.ly/plotly-3.0.1.min"</script>')
    assert remote_fetches("<script src=http://example.com/x.js></script>") == ["http://example.com/x.js"]
    assert not remote_fetches(
        '<script src="../_static/plotly-3.0.1.min.js"></script><a href="https://plot.ly">link</a>'
    )
    assert not remote_fetches(
        '<script src="http://127.0.0.1:5006/static/x.js"></script><link href="http://localhost/a.css">'
    )


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    "A reports folder made with --plotly shared: a batch of train.ipynb over 2 seeds, and a one-chart job beside it."
    tmp = tmp_path_factory.mktemp("shared")
    r = workbench(
        "batch",
        TRAIN,
        "--grid",
        "seed=1,2",
        *SMALL,
        "--max-parallel",
        "2",
        "--plotly",
        "shared",
        "--out",
        "reports",
        "--runs-dir",
        "runs",
        "--json",
        cwd=tmp,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    batch_dir = tmp / json.loads(r.stdout.strip().splitlines()[-1])["report"]
    batch_dir = batch_dir.parent
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("n = 4", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            "import plotly.graph_objects as go\n"
            "go.Figure(go.Scatter(x=[20224 * i for i in range(n)], y=list(range(n))))"
        ),
    ]
    nbformat.write(nb, tmp / "chart.ipynb")
    r = workbench(
        "run",
        "chart.ipynb",
        "--out",
        "reports",
        "--runs-dir",
        "runs",
        "--json",
        cwd=tmp,  # (shared: the default)
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    job_page = tmp / json.loads(r.stdout.strip().splitlines()[-1])["report"]
    return tmp, batch_dir, job_page


def pages_of(reports: Path) -> list[Path]:
    return sorted(reports.glob("**/index.html"))


def test_shared_plotly_is_one_file_loaded_relatively(shared):
    tmp, batch_dir, job_page = shared
    reports = tmp / "reports"
    js = reports / "_static" / f"plotly-{get_plotlyjs_version()}.min.js"
    assert [p.name for p in (reports / "_static").iterdir()] == [js.name], "one plotly.js per reports folder"
    assert js.read_bytes() == (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()
    charts = [batch_dir / "index.html", *sorted(batch_dir.glob("jobs/*/index.html")), job_page]
    assert len(charts) == 4 and set(charts) | {reports / "index.html"} == set(pages_of(reports))
    for page in charts:
        text = page.read_text()
        assert "plotly.js v" not in text and page.stat().st_size < 1_000_000, (page, page.stat().st_size)
        srcs = re.findall(r'<script src="([^"]+)"', text)
        assert len(srcs) == 1 and not srcs[0].startswith(("/", "file:", "http")), (page, srcs)
        assert (page.parent / srcs[0]).resolve() == js.resolve(), (page, srcs)
    assert re.findall(r'<script src="([^"]+)"', job_page.read_text()) == [f"../_static/{js.name}"]
    assert re.findall(r'<script src="([^"]+)"', charts[1].read_text()) == [f"../../../_static/{js.name}"]


@contextlib.contextmanager
def network_blocked(path):
    "Open a local page in headless Chromium, aborting every request that is not a local file; yields (page, aborted, errors)."
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (tools/setup.sh installs it)")
    from playwright.sync_api import sync_playwright

    aborted, errors = [], []

    def route(r):
        if r.request.url.startswith(("file:", "data:", "blob:", "about:")):
            r.continue_()
        else:
            aborted.append(r.request.url)
            r.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            context = browser.new_context()
            context.route("**/*", route)
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(Path(path).resolve().as_uri())
            yield page, aborted, errors
        finally:
            browser.close()


TRACES = (
    "() => document.querySelector('.js-plotly-plot').data"
    ".map(t => [t.name, t.fill || '', t.line.color, t.opacity ?? 1, t.xaxis || 'x'])"
)


def test_shared_pages_render_offline(shared):
    tmp, batch_dir, job_page = shared
    with network_blocked(batch_dir / "index.html") as (page, aborted, errors):
        page.wait_for_selector(".js-plotly-plot svg.main-svg", timeout=30_000)
        assert page.title().startswith(f"batch {batch_dir.name} · finished · 2/2 finished · train.ipynb")
        traces = page.evaluate(TRACES)
        # One parameter set (the grid varies only the seed): the seeds faint, a min-max band, the mean; one colour.
        train = [t for t in traces if t[4] == "x"]
        assert [t[0] for t in train] == [
            "all seeds: seed=1",
            "all seeds: seed=2",
            "all seeds: max over 2 seeds",
            "all seeds: min-max over 2 seeds",
            "all seeds: mean of 2 seeds",
        ], train
        assert len({t[2] for t in traces}) == 1 and train[3][1] == "tonexty" and train[0][3] < 1 and train[4][3] == 1
        legend = page.locator(".legend .legendtext").all_text_contents()  # drawn, not only in the data
        assert sorted(legend) == ["all seeds: mean of 2 seeds", "all seeds: min-max over 2 seeds"], legend
        assert "e+0" not in page.locator("body").inner_text()
    assert not aborted and not errors, (aborted, errors)
    for path, title in [
        (sorted(batch_dir.glob("jobs/*/index.html"))[0], f"{batch_dir.name}-01 · finished · train.ipynb · Workbench"),
        (job_page, f"{job_page.parent.name} · finished · chart.ipynb · Workbench"),
    ]:
        with network_blocked(path) as (page, aborted, errors):
            page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
            assert page.locator(".js-plotly-plot .scatterlayer .trace").count() >= 1
            assert page.title() == title
        assert not aborted and not errors, (path, aborted, errors)


def test_a_job_report_is_light_with_its_chart_first(shared):
    """train.ipynb's report (a job of the batch): under 1 MB, its notebook too (plotly.js out of its outputs), files
    0644; offline in Chromium its chart is in the first screen, above the parameters; its link to all reports works;
    the checkpoints read as files and yes, not paths and 0/1; the training's progress lines are cut to the last."""
    tmp, batch_dir, job_page = shared
    job_dir = sorted(batch_dir.glob("jobs/*"))[0]
    for f in ("index.html", "notebook.ipynb"):
        assert (job_dir / f).stat().st_size < 1_000_000, (f, (job_dir / f).stat().st_size)
    for f in [
        job_dir / "index.html",
        job_dir / "notebook.ipynb",
        job_dir / "job.json",
        *(tmp / "reports").glob("_static/*"),
    ]:
        assert f.stat().st_mode & 0o777 == 0o644, (f, oct(f.stat().st_mode))
    nb = nbformat.read(job_dir / "notebook.ipynb", as_version=4)
    figures = [
        o for c in nb.cells for o in c.get("outputs", []) if "application/vnd.plotly.v1+json" in o.get("data", {})
    ]
    assert figures and "plotly.js v" not in (job_dir / "notebook.ipynb").read_text()  # the figure kept, the bundle out
    page = (job_dir / "index.html").read_text()
    home = re.search(r"<a href=[\"']([^\"']+)[\"']>all reports</a>", page).group(1)
    assert home == "../../../index.html" and (job_dir / home).resolve() == (tmp / "reports" / "index.html").resolve()
    after = page[page.index("Checkpoints") :]
    table = visible_text(
        after[after.index("<table") : after.index("</table>")]
    )  # the checkpoints, as the table shows them
    assert "yes" in table and ".pt" in table and "/checkpoints/" not in table and "is_best" not in table, table
    with network_blocked(job_dir / "index.html") as (view, aborted, errors):
        view.set_viewport_size({"width": 1280, "height": 900})
        chart = view.locator(".wb-charts .js-plotly-plot")
        chart.wait_for(timeout=30_000)
        box, params = chart.bounding_box(), view.locator("h3", has_text="Parameters").bounding_box()
        assert box["y"] < 300 and box["y"] + box["height"] < 900 and params["y"] > box["y"], (box, params)
        legend = view.locator(".wb-charts .legend").bounding_box()
        titles = view.locator(".wb-charts .annotation-text").all_text_contents()
        assert "Value loss" in titles and legend["y"] > box["y"] + 0.6 * box["height"], (legend, box)  # below the plots
    assert not aborted and not errors, (aborted, errors)


def test_batch_page_reads_well(shared):
    "Labelled ± over seeds with no averaged CI bounds, fmt_number everywhere, steps with separators, real titles."
    tmp, batch_dir, job_page = shared
    page = (batch_dir / "index.html").read_text()
    text = visible_text(page)
    assert "<th>mean_return (mean ± sd over seeds)</th>" in page and "sample standard deviation" in text
    assert "ci95_low (mean" not in text and "ci95_high (mean" not in text
    jobs = [json.loads(f.read_text()) for f in sorted(batch_dir.glob("jobs/*/job.json"))]
    returns = [j["result"]["mean_return"] for j in jobs]
    import statistics

    assert f"{fmt_number(statistics.fmean(returns))} ± {fmt_number(statistics.stdev(returns))}" in text
    for j in jobs:
        assert f"<td data-value='{j['result']['mean_return']}'>{fmt_number(j['result']['mean_return'])}</td>" in page
        assert "<td data-value='2048'>2,048</td>" in page  # global_step
    index = (tmp / "reports" / "index.html").read_text()
    assert "<title>Reports · 3 job(s) · 1 batch(es) · Workbench</title>" in index
    for p in pages_of(tmp / "reports"):
        seen = visible_text(p.read_text())
        assert "e+0" not in seen, (p, re.findall(r".{40}e\+0.{20}", seen))
        assert "<title>Notebook</title>" not in p.read_text()


def test_reports_load_nothing_remote(shared, tmp_path):
    "Index, job and batch pages, shared and then rebuilt inline by `workbench report`: no script or stylesheet from a server."
    tmp, batch_dir, job_page = shared
    for p in pages_of(tmp / "reports"):
        assert not remote_fetches(p.read_text()), (p, remote_fetches(p.read_text()))
    copy = tmp_path / "copy"
    shutil.copytree(tmp, copy, ignore=shutil.ignore_patterns("*.pt"))
    r = workbench("report", "--out", "reports", "--plotly", "inline", cwd=copy)  # plotly.js in each page
    assert r.returncode == 0, r.stderr
    pages = pages_of(copy / "reports")
    assert len(pages) == 5
    for p in pages:
        text = p.read_text()
        assert not remote_fetches(text), (p, remote_fetches(text))
        if p != copy / "reports" / "index.html":
            assert text.count("plotly.js v") == 1 and "_static" not in text, p
