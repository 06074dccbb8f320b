"The live-training tutorial in a real JupyterLab, driven cell by cell in Chromium with the network out of reach."

import json, os, re, secrets, shutil, signal, statistics, subprocess, sys, time, urllib.request
from pathlib import Path

import pytest

from conftest import ARTIFACTS, ROOT, free_port, loopback_only_page, remote_fetches, wait_for
from workbench.runs.store import RunStore

sys.path.insert(0, str(ROOT / "tools"))
import lab_copy  # noqa: E402

VENV_BIN = Path(sys.executable).parent
LOOPBACK = re.compile(r"^(https?|wss?)://(127\.0\.0\.1|localhost)[:/]")
LOADER_LISTS = re.compile(r"\b(?:js_urls|css_urls|js_modules)\s*=\s*(\[[^\]]*\])")


def notebook_external_sources(nb: dict) -> list[str]:
    """What a notebook's outputs would load from beyond loopback: script and stylesheet addresses in HTML outputs, and the
    addresses handed to BokehJS's loader in JavaScript outputs (the libraries inlined there mention addresses in strings
    that load nothing; the page's own requests are checked separately)."""
    found = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            for mime, data in out.get("data", {}).items():
                text = "".join(data) if isinstance(data, list) else data if isinstance(data, str) else json.dumps(data)
                if mime == "text/html":
                    found += remote_fetches(text)
                elif "javascript" in mime or "holoviews_load" in mime:
                    found += [
                        u
                        for lst in LOADER_LISTS.findall(text)
                        for u in re.findall(r"(?:https?:)?//[^'\"\s,\]]+", lst)
                        if not LOOPBACK.match(u)
                    ]
    return found


def test_notebook_external_sources_finds_what_it_should():
    html, js = (
        "<b>ok</b><script src='https://cdn.y/a.js'></script>",
        'js_urls = ["https://cdn.x/b.js"]; x = "https://plotly.com/"',
    )
    nb = {"cells": [{"outputs": [{"data": {"text/html": html, "application/javascript": js}}]}]}
    assert notebook_external_sources(nb) == ["https://cdn.y/a.js", "https://cdn.x/b.js"]


def open_in_lab(page, lab, name: str, reset: bool = False):
    """Open notebook `name` of `lab` in `page`, its kernel idle: (its cells, the run-cell-and-select-next button).
    `reset`: the lab's saved layout is cleared first (a server that other tests used reopens their notebooks)."""
    page.goto(f"{lab.base}/lab/tree/{name}?token={lab.token}" + ("&reset" if reset else ""))
    cells = page.locator(".jp-Notebook .jp-Cell")
    cells.first.wait_for(timeout=90_000)
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=90_000)

    # the page's indicator can say idle before the page's websocket reaches the kernel, and a run sent then is lost
    # (twice in CI, on a notebook's first code cell): wait for the server to see the kernel idle and connected
    def ready():
        try:
            return any(k["execution_state"] == "idle" and k.get("connections", 0) > 0 for k in lab.kernels())
        except urllib.error.HTTPError as e:  # 500 from jupyter_server while a kernel starts (last_activity unset)
            if e.code != 500:
                raise
            return False

    wait_for(ready, timeout=90, what="the kernel to be idle with the page connected (the server's /api/kernels)")
    return cells, page.locator("jp-button[data-command='notebook:run-cell-and-select-next']")


def run_cell(cell, run_button, wait: bool = True, what: str = "the cell"):
    """Select `cell` and run it with the toolbar's run button; for a code cell, wait (if `wait`) for its number. A run
    sent while a new kernel still connects can be lost (the prompt stays `[ ]`): then it is sent again, at most twice,
    as a user would click again."""
    prompt = cell.locator(".jp-InputArea-prompt")
    is_code = "jp-CodeCell" in (cell.get_attribute("class") or "")
    for _ in range(3):
        prompt.click()
        run_button.click()
        if not is_code:
            return cell
        try:
            wait_for(lambda: re.search(r"\[(\*|\d+)\]", prompt.text_content() or ""), timeout=15)
            break
        except AssertionError:
            continue
    if wait:
        wait_for(lambda: re.search(r"\[\d+\]", prompt.text_content() or ""), timeout=180, what=f"{what} to run")
    return cell


def pause_and_resume(page, status, times: int, steps, busy) -> list:
    """Click Pause, wait for 'paused', click Resume, wait for 'running', `times` times. For each pause: the seconds
    'paused' took to show, how far the step counter went past what the page showed at the click, and whether the
    busy cell still held the kernel when 'paused' showed. (The 10 s waits only keep a broken page from hanging the
    test: the verdicts are in steps and in what happened while the kernel was busy, never in one machine's seconds.)"""
    took = []
    for _ in range(times):
        clicked, at_click = time.monotonic(), steps()
        page.get_by_role("button", name="Pause", exact=True).click()
        status.get_by_text("paused").wait_for(timeout=10_000)
        took.append((round(time.monotonic() - clicked, 2), steps() - at_click, busy()))
        page.get_by_role("button", name="Resume", exact=True).click()
        status.get_by_text("running").wait_for(timeout=10_000)
        time.sleep(1.0)
    return took


def saved_with_outputs(path: Path) -> bool:
    "Whether the notebook file is whole (it parses) and holds the dashboard's output."
    try:
        return "wb-fallback" in json.dumps(json.loads(path.read_text()))
    except (OSError, ValueError):
        return False


class Lab:
    "A JupyterLab server on a free loopback port, rooted at `root`, its state kept under `root`; killed at the end."

    def __init__(self, root: Path):
        self.root, self.port, self.token = root, free_port(), secrets.token_hex(16)
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(root / ".jupyter"),
            "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
            "JUPYTERLAB_WORKSPACES_DIR": str(root / ".workspaces"),
            "PYTHONUNBUFFERED": "1",
        }
        self.log = open(root / "lab.log", "w")
        args = [
            str(VENV_BIN / "jupyter"),
            "lab",
            "--no-browser",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={root}",
        ]
        if os.geteuid() == 0:
            args.append("--allow-root")
        self.proc = subprocess.Popen(
            args, stdout=self.log, stderr=subprocess.STDOUT, cwd=root, env=env, start_new_session=True
        )
        self.base = f"http://127.0.0.1:{self.port}"

        def up():
            try:
                return urllib.request.urlopen(f"{self.base}/api/status?token={self.token}", timeout=5).status == 200
            except OSError:
                return False

        wait_for(up, timeout=120, what="JupyterLab to answer")

    def kernels(self) -> list:
        "The server's kernels: id, execution_state, connections (the pages' websockets to it)..."
        with urllib.request.urlopen(f"{self.base}/api/kernels?token={self.token}", timeout=30) as r:
            return json.loads(r.read())

    def contents(self, path: str) -> dict:
        with urllib.request.urlopen(f"{self.base}/api/contents/{path}?token={self.token}", timeout=30) as r:
            return json.loads(r.read())

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)


@pytest.fixture
def lab(tmp_path):
    "The tutorial copied into a fresh lab root, with a budget long enough to watch and a known runs folder."
    text = (ROOT / "nbs" / "tutorial.live_training.ipynb").read_text()
    runs_dir = tmp_path / "runs"
    for old, new in [
        ("total_timesteps = 20_000", "total_timesteps = 5_000_000"),
        ("time.sleep(5)   # the kernel is busy", "time.sleep(25)   # the kernel is busy"),
        ('runs_dir = \\"../runs\\"', f'runs_dir = \\"{runs_dir}\\"'),
    ]:
        assert text.count(old) == 1, f"the tutorial no longer has {old!r}: update this test"
        text = text.replace(old, new)
    (tmp_path / "tutorial.ipynb").write_text(text)
    server = Lab(tmp_path)
    server.runs_dir = runs_dir
    yield server
    server.stop()


def test_tutorial_live_in_jupyterlab(lab):
    """Run the tutorial cell by cell: the dashboard renders from the installed packages, moves while the kernel
    answers other cells, pauses, takes a learning-rate change (recorded with its source), comes back after a reload,
    and says it is of an older session once the cell that makes the session runs again."""
    errors, console = [], []
    shots = ARTIFACTS / "tutorial_in_lab"
    shots.mkdir(parents=True, exist_ok=True)
    with loopback_only_page() as (page, blocked):
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}"[:300]))
        cells, run_button = open_in_lab(page, lab, "tutorial.ipynb")
        position = [0]

        def failed(shot: str, what: str) -> AssertionError:
            "A screenshot, and the failure with the page console's last lines (in the message: CI shows that, not output)."
            page.screenshot(path=str(shots / shot), full_page=True)
            return AssertionError(f"{what}\nconsole: {console[-20:]}")

        def run_until(text: str, wait: bool = True):
            """Run cells in order up to and including the first code cell whose source contains `text` (that one
            without waiting for it to end, if not `wait`)."""
            while True:
                cell = cells.nth(position[0])
                position[0] += 1
                source = cell.locator(".jp-InputArea-editor").text_content() or ""
                run_cell(cell, run_button, wait=wait or text not in source, what=f"the cell {source[:60]!r}")
                if not wait and text in source:
                    return cell
                if "jp-CodeCell" in (cell.get_attribute("class") or ""):
                    assert (
                        not cell.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
                        .filter(has_text="Traceback")
                        .count()
                    ), f"{source[:60]!r} failed"
                    if text in source:
                        return cell

        run_until("session.dashboard(")
        step_count = page.locator(".wb-live .wb-step-count")
        step_count.wait_for(timeout=60_000)
        steps = lambda: int((step_count.text_content() or "").replace(",", "") or -1)
        wait_for(lambda: steps() == 0, timeout=30, what="the dashboard's step counter")
        assert page.locator(".wb-fallback").count() == 0  # the dashboard rendered and removed its note
        assert page.locator(".wb-live .wb-chart-return .js-plotly-plot").count() == 1
        # Start pressed on the dashboard, and the tutorial's next cell (session.start()) run as well: no error, one run.
        page.get_by_role("button", name="Start", exact=True).click()
        page.locator(".wb-live .wb-status-value").get_by_text(re.compile("starting|running")).wait_for(timeout=30_000)
        run_until("session.start()")  # no traceback (run_until checks)
        # (Its one line is not checked: once in CI it did not reach the page, likely ipykernel#1564: output filed under
        # a comm message handled on a subshell meanwhile, which JupyterLab drops.) One start, so one run in the store:
        assert [r["status"] for r in RunStore(lab.runs_dir).runs()] in (["created"], ["running"]), "started twice"
        answer = run_until("the kernel answers while it trains")  # another cell runs while the run trains
        # the output can reach the page a moment after the cell's number; under load the training thread may not
        # have begun yet: "starting" is an answer too. textContent, not innerText: JupyterLab skips the layout of
        # cells out of view (content-visibility), and the dashboard above can push this one out of it
        said = lambda: answer.locator(".jp-OutputArea").text_content() or ""
        try:
            wait_for(
                lambda: re.search(r"(starting|running): step [\d,]+ of 5,00\d,\d{3}", said()),
                timeout=60,
                what="the answer of the cell that runs while it trains",
            )
        except AssertionError as e:
            runs = [(r["id"], r["status"], r["global_step"]) for r in RunStore(lab.runs_dir).runs()]
            log = (lab.root / "lab.log").read_text()[-3000:]
            raise failed(
                "answer_missing.png", f"{e}\nthe cell said: {said()!r}\nruns: {runs}\nlab log:\n{log}"
            ) from None

        chart = page.locator(".wb-live .wb-chart-return .js-plotly-plot")
        points = lambda: chart.evaluate("el => (el.data && el.data[2].x) ? el.data[2].x.length : 0")
        wait_for(lambda: points() >= 3, timeout=90, what="the return chart to gain points")
        n, at = points(), steps()
        wait_for(lambda: points() > n and steps() > at, timeout=60, what="the chart and the counter to move")
        page.locator(".wb-live .wb-status").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "1_running.png"), full_page=True)

        # A cell that keeps the kernel busy for 15 s: the counter goes on moving (the dashboard's poller is a thread),
        # and Pause and Resume clicked meanwhile act and show at once.
        status = page.locator(".wb-live .wb-status-value")
        busy = run_until("the kernel is busy", wait=False)
        busy.locator(".jp-InputArea-prompt").get_by_text("[*]").wait_for(timeout=10_000)
        began, seen = time.monotonic(), []
        while time.monotonic() - began < 6:
            seen.append(steps())
            time.sleep(0.2)
        is_busy = lambda: "[*]" in (busy.locator(".jp-InputArea-prompt").text_content() or "")
        paused_after = pause_and_resume(page, status, times=2, steps=steps, busy=is_busy)
        # Enter in the learning-rate field applies it at once, as the buttons act, while the cell still holds the kernel
        # (JupyterLab's own Enter, a cell's edit mode, used to take the key: the value then waited for the field's blur).
        store = RunStore(lab.runs_dir)
        run_id = wait_for(lambda: [r["id"] for r in store.runs()], timeout=30, what="the run in the store")[0]
        applied = lambda: [
            e
            for e in store.events(run_id, "control")
            if e["data"]["action"] == "set" and e["data"]["ok"] and e["data"]["applied"].get("learning_rate") == 0.0005
        ]
        lr = page.locator(".wb-knob-learning_rate input")
        lr.fill("0.0005")
        pressed = time.monotonic()
        lr.press("Enter")
        event = wait_for(applied, timeout=30, what="the learning-rate control in the store, after Enter")[0]
        lr_held = is_busy()
        print(
            f"Enter in the learning-rate field: applied in {time.monotonic() - pressed:.1f} s, the cell busy: {lr_held}"
        )
        while is_busy():
            seen.append(steps())
            time.sleep(0.2)
        assert time.monotonic() - began > 10, "the busy cell did not keep the kernel busy"
        moves = sum(b > a for a, b in zip(seen, seen[1:]))
        print(f"while a cell ran: the counter moved {moves} times; 'paused' showed {paused_after} s after the clicks")
        assert moves >= 10, f"the counter moved {moves} times while a cell ran: {seen}"
        # Pause and Resume act while the cell holds the kernel (the dashboard's own thread carries the clicks)
        assert all(held for _, _, held in paused_after), paused_after
        assert lr_held, "the learning rate applied only after the busy cell ended"

        # Pause stops the counter; Resume starts it again.
        page.get_by_role("button", name="Pause", exact=True).click()
        page.locator(".wb-live .wb-status-value").get_by_text("paused").wait_for(timeout=30_000)
        paused_at = steps()
        time.sleep(2.0)
        assert steps() == paused_at, "the step counter moved while paused"
        (run,) = store.runs()
        assert run["global_step"] == paused_at, (run["global_step"], paused_at)  # the view and the store agree
        page.get_by_role("button", name="Resume", exact=True).click()
        wait_for(lambda: steps() > paused_at, timeout=30, what="steps after resume")

        # The learning-rate change (Enter, above) reached the trainer; the store records it as from the notebook.
        assert event["data"]["source"] == "notebook", event
        wait_for(
            lambda: [
                m
                for m in store.metrics(run_id, "charts/learning_rate")
                if m["step"] > event["step"] and m["value"] <= 5e-4
            ],
            timeout=30,
            what="the trainer's learning rate to follow",
        )
        page.locator(".wb-live .wb-filter-controls").click()  # the log shows the controls alone
        page.locator(".wb-live .wb-log").get_by_text("set learning_rate=0.0005 from notebook: applied").first.wait_for(
            timeout=15_000
        )
        page.screenshot(path=str(shots / "2_steered.png"), full_page=True)

        # Save, reload: the saved dashboard reconnects to the running kernel and catches up with the whole history.
        before_points, before_steps = points(), steps()
        page.locator(".jp-NotebookPanel-toolbar jp-button[data-command='docmanager:save']").click()
        wait_for(lambda: saved_with_outputs(lab.root / "tutorial.ipynb"), timeout=60, what="the save")
        page.reload()
        try:
            step_count.wait_for(timeout=90_000)
        except Exception as e:
            raise failed("failed_reload.png", f"no dashboard after the reload: {e}") from None
        wait_for(lambda: steps() > before_steps, timeout=60, what="the reloaded dashboard to show the running session")
        wait_for(lambda: points() >= before_points, timeout=30, what="the reloaded charts to hold the whole history")
        page.locator(".wb-live .wb-status-value").get_by_text("running").wait_for(timeout=30_000)
        start, pause = (page.get_by_role("button", name=n, exact=True) for n in ("Start", "Pause"))
        wait_for(
            lambda: start.is_disabled() and pause.is_enabled(),
            timeout=15,
            what="the controls as they are now, not as saved",
        )
        assert page.locator(".wb-fallback").count() == 0  # the dashboard rendered and removed its note
        at = steps()
        wait_for(lambda: steps() > at, timeout=30, what="the counter to keep moving after the reload")
        page.locator(".wb-live .wb-status").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "3_reloaded.png"), full_page=True)

        # Close the notebook and open it again from the file browser. The kernel let go of the closed view, so the
        # reopened one says it is not connected (not a frozen run); the cells below give a live one again.
        assert (page.locator(".wb-live .wb-alert").text_content() or "").strip() == ""
        page.locator(".lm-TabBar-tab.jp-mod-current .lm-TabBar-tabCloseIcon").first.click()
        discard = page.locator(".jp-Dialog button").filter(has_text="Discard")
        try:
            discard.click(timeout=5_000)  # the saved file stays as it was
        except Exception:
            pass
        step_count.wait_for(state="detached", timeout=30_000)
        page.locator(".jp-DirListing-item").filter(has_text=re.compile(r"^tutorial\.ipynb")).first.dblclick()
        step_count.wait_for(timeout=90_000)
        page.locator(".wb-live .wb-alert").get_by_text("not connected to its kernel").wait_for(timeout=30_000)
        page.locator(".wb-live .wb-status").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "4_reopened.png"), full_page=True)
        cells = page.locator(".jp-Notebook .jp-Cell")

        # Running the set-up and dashboard cells again (what a page without saved outputs needs) gives a working view.
        position[0] = 0
        run_until("setup_notebook()")
        position[0] = [
            i
            for i in range(cells.count())
            if "session.dashboard(" in (cells.nth(i).locator(".jp-InputArea-editor").text_content() or "")
        ][0]
        run_until("session.dashboard(")
        at = steps()
        try:
            wait_for(
                lambda: page.locator(".wb-live").count() == 1 and steps() > at, timeout=60, what="the new view to count"
            )
        except AssertionError:  # (seen twice under load: which half failed, an old view left or a still counter?)
            texts = [t.strip() for t in page.locator(".wb-live .wb-step-count").all_text_contents()]
            runs = [(r["status"], r["global_step"]) for r in RunStore(lab.runs_dir).runs()]
            views = page.locator(".wb-live").count()
            raise failed("failed_new_view.png", f"the new view does not count: {views} views, counters {texts}, "
                                                f"at {at}, runs {runs}") from None  # fmt: skip
        assert (page.locator(".wb-live .wb-alert").text_content() or "").strip() == ""

        page.get_by_role("button", name="Stop", exact=True).click()
        try:
            wait_for(
                lambda: store.get_run(run_id)["status"] == "stopped", timeout=90, what="the store to record the stop"
            )
            page.locator(".wb-live .wb-status-value").get_by_text("stopped").wait_for(timeout=30_000)
        except Exception as e:
            controls = [c["data"] for c in store.events(run_id, "control")]
            raise failed("failed_stop.png", f"{e}\ncontrols: {controls}") from None

        # The cell that makes the session, run again: the view above says it shows an older session, and which is newer.
        position[0] = [
            i
            for i in range(cells.count())
            if "session = TrainingSession(" in (cells.nth(i).locator(".jp-InputArea-editor").text_content() or "")
        ][0]
        run_until("session = TrainingSession(")
        alert = page.locator(".wb-live .wb-alert")
        alert.get_by_text(f"This view shows an older session (run {run_id}, stopped)").wait_for(timeout=30_000)
        assert "1 newer session was made since in this kernel; the latest: not started." in alert.text_content()

        # And the dashboard cell again: the new session's view, after the stopped run, idle with Start lit (issue 60 saw
        # a grey Start and lit Pause and Stop there, 3 times in 5; not reproduced since: 10 of 10 were right).
        run_until("session.dashboard(")
        page.locator(".wb-live .wb-status-value").get_by_text("idle").wait_for(timeout=30_000)
        start, pause, stop = (page.get_by_role("button", name=n, exact=True) for n in ("Start", "Pause", "Stop"))
        wait_for(
            lambda: start.is_enabled() and pause.is_disabled() and stop.is_disabled(),
            timeout=15,
            what="the re-made dashboard's Start lit, Pause and Stop grey",
        )
    assert blocked == [], f"the page tried to reach beyond loopback: {blocked[:5]}"
    # No error in the page's console (BokehJS logged "s is not iterable" when two threads sent to a view at once)
    assert [c for c in console if c.startswith("error")] == [], console
    assert not [e for e in errors if re.search(r"workbench|bokeh|panel|plotly|static/extensions|^4\d\d ", e, re.I)], (
        errors
    )
    assert notebook_external_sources(lab.contents("tutorial.ipynb")["content"]) == []  # the executed tutorial's outputs


def test_fallback_note_shows_when_the_dashboard_cannot_render(tmp_path):
    "Where the dashboard's JavaScript never runs, its output explains itself in one line instead of staying empty."
    from workbench.app.charts import fallback_note

    page_file = tmp_path / "note.html"
    page_file.write_text(f"<html><body>{fallback_note('nothing-renders', delay_s=0.5)}</body></html>")
    with loopback_only_page() as (page, blocked):
        page.goto(page_file.as_uri())
        note = page.locator(".wb-fallback")
        assert not note.is_visible()  # hidden while the dashboard may still come
        wait_for(note.is_visible, timeout=10, what="the note to appear")
        assert "did not load" in note.inner_text() and "setup_notebook()" in note.inner_text()
    assert blocked == []


@pytest.fixture(scope="module")
def copies_lab(tmp_path_factory):
    """A JupyterLab rooted at a folder laid out as the repository is for `make lab`: the experiment notebook in
    nbs/experiments/, and `make lab`'s copies of the tutorials in lab/ (tools/lab_copy.py: what a user opens)."""
    root = tmp_path_factory.mktemp("copies")
    (root / "nbs" / "experiments").mkdir(parents=True)
    shutil.copy(ROOT / "nbs" / "experiments" / "train.ipynb", root / "nbs" / "experiments" / "train.ipynb")
    metadata = lab_copy.kernel_metadata()
    for name in ("tutorial.live_training.ipynb", "tutorial.your_own_env.ipynb"):
        lab_copy.lab_copy(ROOT / "nbs" / name, root / "lab", metadata)
    server = Lab(root)
    yield server
    server.stop()


def run_all(page, what: str):
    "Run > Run All Cells from the menu bar; wait until every code cell with source has its number and the kernel is idle."
    page.locator(".lm-MenuBar-itemLabel").get_by_text("Run", exact=True).click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()
    numbered = """() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')]
        .filter(c => (c.querySelector('.jp-InputArea-editor')?.textContent || '').trim())
        .every(c => /\\[\\d+\\]/.test(c.querySelector('.jp-InputArea-prompt')?.textContent || ''))"""  # one round trip a poll
    idle = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
    done = lambda: page.evaluate(numbered) and idle.count()  # noqa: E731

    page.locator(".jp-Notebook-ExecutionIndicator[data-status='busy']").wait_for(timeout=30_000)
    wait_for(done, timeout=300, interval=1.0, what=what)


def test_the_tutorial_run_whole_twice_as_make_lab_opens_it(copies_lab):
    """`make lab`'s copy of the live-training tutorial, as it is (20,000 steps), run whole twice (Run All Cells), as a
    user does after changing a setting: it opens unchanged (not marked modified: its metadata is the kernel's), each
    pass trains a run to its end into the repository's runs folder as the copy sees it, no cell fails, and the page
    logs no error and no failed request; nothing leaves loopback."""
    errors, console = [], []
    runs = RunStore(copies_lab.root / "runs")
    with loopback_only_page() as (page, blocked):
        page.on("pageerror", lambda e: errors.append(str(e)[:300]))
        page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}"[:300]))
        cells, _ = open_in_lab(page, copies_lab, "lab/tutorial.live_training.ipynb", reset=True)
        tab = page.locator(".lm-TabBar-tab.jp-mod-current")
        page.wait_for_timeout(2_000)  # (the kernel's metadata reaches the notebook once it is connected)
        assert "jp-mod-dirty" not in (tab.get_attribute("class") or ""), "the copy is marked modified as it opens"
        for n in (1, 2):
            run_all(page, f"pass {n} of the tutorial")
            failed = cells.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
            assert not failed.filter(has_text="Traceback").count(), failed.first.text_content()
            finished = [r for r in runs.runs() if r["status"] == "finished" and r["global_step"] >= 20_000]
            assert len(finished) == n, [(r["id"], r["status"], r["global_step"]) for r in runs.runs()]
        page.screenshot(path=str(ARTIFACTS / "tutorial_twice.png"), full_page=True)
    assert blocked == [], f"the page tried to reach beyond loopback: {blocked[:5]}"
    assert errors == [], errors
    assert [c for c in console if c.startswith("error")] == [], console


def test_your_own_env_tutorial_in_jupyterlab(copies_lab):
    """`make lab`'s copy of the env tutorial run cell by cell in a real JupyterLab: it writes a module, trains it from
    the notebook, the command line and a job (the experiment notebook in nbs/), evaluates it, and shows the one-line
    errors; nothing from beyond loopback."""
    server, name = copies_lab, "lab/tutorial.your_own_env.ipynb"
    with loopback_only_page() as (page, blocked):
        cells, run_button = open_in_lab(page, server, name, reset=True)
        n = len(server.contents(name)["content"]["cells"])
        wait_for(lambda: cells.count() == n, timeout=60, what=f"the {n} cells to render")
        for i in range(n):
            cell = run_cell(cells.nth(i), run_button, what=f"cell {i}")
            if "jp-CodeCell" not in (cell.get_attribute("class") or ""):
                continue
            # by textContent (a cell out of view has no innerText), of the text outputs (not HTML's scripts)
            shown = cell.locator(
                ".jp-OutputArea-output[data-mime-type^='application/vnd.jupyter.std'],"
                " .jp-OutputArea-output[data-mime-type='text/plain']"
            )
            text = "\n".join(o.text_content() or "" for o in shown.all())
            assert "Traceback" not in text and "Error:" not in text.replace("workbench: error:", ""), text[-2000:]
        page.screenshot(path=str(ARTIFACTS / "env_tutorial_in_lab.png"), full_page=True)
        page.locator(".jp-NotebookPanel-toolbar jp-button[data-command='docmanager:save']").click()
        saved = lambda: all(
            c.get("execution_count")
            for c in server.contents(name)["content"]["cells"]
            if c["cell_type"] == "code" and c["source"]  # (running the last cell added an empty one)
        )
        try:
            wait_for(saved, timeout=60, what="the executed tutorial to be saved")
        except AssertionError:
            got = server.contents(name)["content"]["cells"]
            print([(c["cell_type"], c.get("execution_count"), "".join(c["source"])[:40]) for c in got])
            page.screenshot(path=str(ARTIFACTS / "env_tutorial_save_failed.png"), full_page=True)
            raise
    cells = server.contents(name)["content"]["cells"]
    everything = "\n".join(
        "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
        for c in cells
        for o in c.get("outputs", [])
    )
    assert re.search(r"greedy mean return 1\.00 over 50 episodes", everything), everything[-3000:]
    assert "greedy: mean return 1.0" in everything
    assert re.search(r"finished reports/train-\S+/index\.html", everything)
    assert "unknown option 'lenght' (make takes length)" in everything
    assert "module 'walker' has no callable 'maker'" in everything
    assert blocked == [], f"the page tried to reach beyond loopback: {blocked[:5]}"


LM_NOTEBOOK = [
    "from workbench import LMTrainConfig, TrainingSession, setup_notebook\nsetup_notebook()",
    "session = TrainingSession(LMTrainConfig(algo='grpo', task='code?level=medium&turns=2', updates=100_000,\n"
    "    batch_size=2, group_size=2, max_new_tokens=16, eval_every=3, eval_tasks=2, corpus_tasks=40, vocab=300,\n"
    "    hidden=32, layers=1, heads=2, ffn=64, device='cpu', torch_threads=1, runs_dir=RUNS))",
    "dash = session.dashboard(control_source='notebook')\ndash",
    "session.start()",
    "import os, time\nt0 = time.monotonic()   # the kernel is busy until the test has seen enough (at most 90 s)\n"
    "while not os.path.exists(ENOUGH) and time.monotonic() - t0 < 90: time.sleep(0.1)",
    "session.stop(); session.wait(timeout=120); print(session.status, session.global_step)",
]


def test_lm_dashboard_live_in_jupyterlab(tmp_path):
    """A code agent's GRPO run from a notebook in a real JupyterLab: while a cell blocks the kernel (10 s at least, until
    the test has seen enough), its pass-rate chart and step counter go on moving and Pause shows within a step; after
    the cell, the view and the store agree."""
    runs_dir, enough = tmp_path / "runs", tmp_path / "enough"
    cells_src = [c.replace("RUNS", repr(str(runs_dir))).replace("ENOUGH", repr(str(enough))) for c in LM_NOTEBOOK]
    nb = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [], "source": s}
            for i, s in enumerate(cells_src)
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "agent.ipynb").write_text(json.dumps(nb))
    server = Lab(tmp_path)
    try:
        with loopback_only_page() as (page, blocked):
            cells, run_button = open_in_lab(page, server, "agent.ipynb")

            def run(i: int, wait: bool = True):
                cell = run_cell(cells.nth(i), run_button, wait=wait, what=f"cell {i}")
                if wait:
                    stderr = cell.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
                    assert not stderr.filter(has_text="Traceback").count(), f"cell {i} failed"
                return cell

            wait_for(lambda: cells.count() == len(cells_src), timeout=60, what="the cells to render")
            try:
                for i in range(4):
                    run(i)
            except AssertionError:
                page.screenshot(path=str(ARTIFACTS / "lm_in_lab_failed.png"), full_page=True)
                raise
            step_count = page.locator(".wb-live .wb-step-count")
            steps = lambda: int((step_count.text_content() or "").replace(",", "") or -1)
            chart = page.locator(".wb-live .wb-chart-pass_rate .js-plotly-plot")
            points = lambda: chart.evaluate("el => (el.data && el.data[0].x) ? el.data[0].x.length : 0")
            wait_for(lambda: points() >= 2, timeout=120, what="the pass-rate chart to gain points")

            status = page.locator(".wb-live .wb-status-value")
            busy = run(4, wait=False)
            busy.locator(".jp-InputArea-prompt").get_by_text("[*]").wait_for(timeout=10_000)
            began, seen = time.monotonic(), []
            is_busy = lambda: "[*]" in (busy.locator(".jp-InputArea-prompt").text_content() or "")
            moves = lambda k: sum(b[k] > a[k] for a, b in zip(seen, seen[1:]))

            def watch(until):  # the counter and the chart, every 0.2 s, while the cell keeps the kernel busy
                while is_busy() and not until():
                    seen.append((steps(), points(), time.monotonic()))
                    time.sleep(0.2)

            watch(lambda: time.monotonic() - began > 7)
            paused_after = pause_and_resume(page, status, times=2, steps=steps, busy=is_busy)
            # a slow machine steps slowly: the cell stays busy until both have moved 5 times (and 10 s have passed)
            watch(lambda: moves(0) >= 5 and moves(1) >= 5 and time.monotonic() - began > 10)
            still_busy = is_busy()
            enough.touch()
            wait_for(lambda: not is_busy(), timeout=30, what="the busy cell to end")
            step_moves, chart_moves = moves(0), moves(1)
            print(
                f"LM run, while a cell ran: the counter moved {step_moves} times, the pass-rate chart {chart_moves} times"
            )
            # (about one GRPO step a second here, and a chart redrawn at most once a second)
            assert step_moves >= 5 and chart_moves >= 5, seen
            assert still_busy, "the busy cell ended before the test let it"
            moved = [(n, t) for (m, _, _), (n, _, t) in zip(seen, seen[1:]) if n > m]  # (counter, when) at each move
            step_s = statistics.median((t1 - t0) / (n1 - n0) for (n0, t0), (n1, t1) in zip(moved, moved[1:]))
            print(f"a step every {step_s:.1f} s; (s, steps past the click, kernel busy) at each pause: {paused_after}")
            # Pause is honoured between steps, while the cell holds the kernel: the run stops at most 3 steps past
            # the counter the page showed at the click (one finished but not yet polled, the one under way, and one
            # begun while the click travelled through the browser and the server). One click of two may be slow: on
            # CI's full cores one took 15.7 s (15 steps) to act, the other 1.4 s (0 steps); both while the cell ran.
            fewest = min(n for _, n, _ in paused_after)
            assert all(held for _, _, held in paused_after) and fewest <= 3, (paused_after, step_s)

            run(5)  # stop and wait: the view and the store agree on where it stopped
            status.get_by_text("stopped").wait_for(timeout=60_000)
            (row,) = RunStore(runs_dir).runs()
            wait_for(lambda: steps() == row["global_step"], timeout=30, what="the view and the store to agree")
            assert row["status"] == "stopped"
            page.screenshot(path=str(ARTIFACTS / "lm_dashboard_in_lab.png"), full_page=True)
        assert blocked == [], f"the page tried to reach beyond loopback: {blocked[:5]}"
    finally:
        server.stop()
