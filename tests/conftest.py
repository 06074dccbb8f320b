import contextlib, json, os, subprocess, sys, time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKBENCH = [str(Path(sys.executable).parent / "workbench")]
# Small, fast runs: 2 envs x 16 steps per update.
TINY = ["--num-envs", "2", "--num-steps", "16", "--num-minibatches", "2", "--update-epochs", "1",
        "--eval-every", "0", "--device", "cpu", "--quiet"]


def workbench(*args, timeout=300, **kw):
    "Run the workbench command to completion."
    return subprocess.run([*WORKBENCH, *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=kw.pop("cwd", None), **kw)


def start_workbench(*args, **kw):
    "Start the workbench command in the background."
    return subprocess.Popen([*WORKBENCH, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def wait_for(predicate, timeout=120, interval=0.1, what="condition"):
    "Poll `predicate` until it returns something truthy."
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value: return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.fixture
def runs_dir(tmp_path):
    return tmp_path / "runs"


CHROMIUM = "/usr/bin/chromium"


@contextlib.contextmanager
def offline_page(path):
    "Open a local HTML file in headless Chromium with the network unavailable; yields (page, the URLs it requested)."
    if not os.path.exists(CHROMIUM): pytest.skip(f"{CHROMIUM} not found (tools/setup.sh installs it)")
    from playwright.sync_api import sync_playwright
    requests = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_context(offline=True).new_page()
            page.on("request", lambda request: requests.append(request.url))
            page.goto(Path(path).resolve().as_uri())
            yield page, requests
        finally:
            browser.close()
