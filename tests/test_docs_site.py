"""The docs site (`make docs`, `workbench.docs.site`): built from the notebooks in strict mode, opened in Chromium from
its folder (file://) with every request beyond loopback aborted and counted: the front page, a guide, a module's API,
the CLI reference and a report from the gallery render, and the search finds the code-agent guide; the same search
served by `make docs-serve` on loopback. A broken link fails the build. The README is what `nbs/index.ipynb` gives."""

import json, os, re, subprocess, sys, time, urllib.error, urllib.request
from pathlib import Path

import pytest
from conftest import docs_build_rc, free_port, remote_fetches, wait_for, loopback_page
from lab_fixtures import chromium_fixture  # noqa: F401  (the fixture `chromium`)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """`make test` builds `_docs/` beside pytest (in place of nbdev_test): wait for it; alone, this builds it (a few
    minutes) where it is missing."""
    built, rc = ROOT / "_docs", docs_build_rc()
    if rc is not None:
        log = Path(os.environ["WORKBENCH_DOCS_BUILD"] + ".log")
        assert rc == 0, "the docs build failed:\n" + log.read_text()[-4000:]
    elif not (built / "index.html").exists():
        r = subprocess.run(
            [sys.executable, "tools/docs.py", "build"], cwd=ROOT, capture_output=True, text=True, timeout=1200
        )
        assert r.returncode == 0, r.stderr[-4000:]
    return built


def test_readme_is_what_the_index_notebook_gives():
    r = subprocess.run([sys.executable, "tools/docs.py", "readme", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 120, f"README.md has {len(lines)} lines: the rest belongs on the site"
    text = "\n".join(lines)
    assert text.index("make demo") < text.index("make test") < text.index("make lab")


def test_no_page_fetches_from_the_network(site):
    pages = list(site.rglob("*.html"))
    assert len(pages) > 80, len(pages)
    remote = {p.relative_to(site).as_posix(): remote_fetches(p.read_text()) for p in pages}
    assert not {k: v for k, v in remote.items() if v}, "pages that load from the network"


def _search_finds_the_code_agent_guide(page):
    "Open the search (as a click on its icon does: the toggle's change starts it) and type GRPO."
    page.evaluate(
        "(t => { t.checked = true; t.dispatchEvent(new Event('change')); })(document.getElementById('__search'))"
    )
    page.locator("input.md-search__input").click()
    page.keyboard.type("GRPO", delay=30)
    wait_for(lambda: page.locator(".md-search-result__link").count() > 0, timeout=30, what="search results")
    hrefs = page.evaluate("[...document.querySelectorAll('.md-search-result__link')].map(a => a.getAttribute('href'))")
    assert any("guides/code_agents.html" in h for h in hrefs), hrefs


def _open(page, url: str):
    page.goto(url)
    page.wait_for_load_state("load")


def test_site_in_a_browser_offline(site, chromium):
    with loopback_page(chromium) as (page, blocked):
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        _open(page, (site / "index.html").as_uri())
        assert page.title().startswith("Workbench")
        assert page.evaluate("[...document.images].every(i => i.complete && i.naturalWidth > 0)")
        assert "make demo" in page.inner_text("article")

        _open(page, (site / "guides" / "code_agents.html").as_uri())
        assert "GRPO" in page.inner_text("article")
        wait_for(lambda: page.evaluate("document.querySelectorAll('.wb-plotly .main-svg').length") > 0, timeout=20,
                 what="the guide's plotly figure drawn by the site's plotly.js")  # fmt: skip

        _open(page, (site / "api" / "train.ppo.html").as_uri())
        assert page.locator("#workbench.train.ppo.PPOTrainer, [id='workbench.train.ppo.PPOTrainer']").count() == 1
        assert "PPOTrainer" in page.inner_text("article")
        # no code line cut at the edge of its box (the long ones wrap), on this page of 120-character lines
        cut = "[...document.querySelectorAll('pre > code')].filter(c => c.scrollWidth > c.clientWidth + 1).length"
        assert page.evaluate("document.querySelectorAll('pre > code').length") > 10 and page.evaluate(cut) == 0

        _open(page, (site / "reference" / "cli.html").as_uri())
        text = page.inner_text("article")
        assert "workbench train" in text and "--learning-rate" in text and "workbench sweep" in text

        _open(page, (site / "gallery" / "index.html").as_uri())
        reports = page.evaluate(
            "[...document.querySelectorAll('article a')].map(a => a.href).filter(h => h.endsWith('.html'))"
        )
        job = [h for h in reports if re.search(r"/gallery/run/[^/]+/index\.html$", h)]
        assert job and any("/gallery/batch/" in h for h in reports) and any("/gallery/sweep/" in h for h in reports), (
            reports
        )
        _open(page, job[0])  # a notebook job's report, its plotly.js from the gallery's _static/
        wait_for(
            lambda: page.evaluate("document.querySelectorAll('.main-svg').length") > 0, timeout=20, what="report charts"
        )

        _open(
            page, (site / "index.html").as_uri()
        )  # from file://: the index is a script of the site, the worker an iframe
        _search_finds_the_code_agent_guide(page)
        assert not blocked, f"requests beyond loopback: {blocked}"
        assert not errors, errors


def test_docs_serve_on_loopback(site, chromium):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "tools/docs.py", "serve", "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        t0 = time.time()
        while True:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=5).read().decode()
                break
            except OSError:
                assert time.time() - t0 < 30 and proc.poll() is None, "tools/docs.py serve did not answer"
                time.sleep(0.2)
        assert "Workbench" in body
        with pytest.raises(urllib.error.HTTPError) as missing:  # a page that is not there: the site's own 404 page
            urllib.request.urlopen(f"http://127.0.0.1:{port}/guides/nope.html", timeout=5)
        assert missing.value.code == 404 and missing.value.read() == (site / "404.html").read_bytes()
        with loopback_page(chromium) as (page, blocked):
            _open(page, f"http://127.0.0.1:{port}/reference/config.html")
            assert "learning_rate" in page.inner_text("article")
            _search_finds_the_code_agent_guide(page)
            assert not blocked
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_broken_link_fails_the_build(tmp_path):
    "Strict mode: a page that links to a notebook that is not there stops the build, and no site is left behind."
    (tmp_path / "nbs").mkdir()
    cell = {
        "cell_type": "markdown",
        "id": "a",
        "metadata": {},
        "source": "# Home\n\nSee [the guide](guides/missing.ipynb).",
    }
    (tmp_path / "nbs" / "index.ipynb").write_text(
        json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    code = "from pathlib import Path\nfrom workbench.docs.site import DocsError, build_site\n"
    code += "try: build_site(Path('.'), log=lambda s: None)\nexcept DocsError as e: print('DocsError', e)"
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "DocsError" in r.stdout and "missing.ipynb" in r.stdout, (r.stdout[-2000:], r.stderr[-2000:])
    assert not (tmp_path / "_docs").exists() and not (tmp_path / "_docs.new").exists()
