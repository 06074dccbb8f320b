import contextlib, json, os, re, resource, socket, subprocess, sys, time
from pathlib import Path
from urllib.parse import urlparse

import psutil
import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
# torch's thread count in a new process, read before any test ran (`workbench_main` gives each call that)
FRESH_THREADS = torch.get_num_threads()
ARTIFACTS = Path(os.environ.get("WORKBENCH_TEST_ARTIFACTS", ROOT / "test-artifacts"))
WORKBENCH = [str(Path(sys.executable).parent / "workbench")]
# Small, fast runs: 2 envs x 16 steps per update.
TINY = [
    "--num-envs",
    "2",
    "--num-steps",
    "16",
    "--num-minibatches",
    "2",
    "--update-epochs",
    "1",
    "--eval-every",
    "0",
    "--device",
    "cpu",
    "--quiet",
]


def workbench(*args, timeout=300, **kw):
    "Run the workbench command to completion."
    return subprocess.run(
        [*WORKBENCH, *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=kw.pop("cwd", None), **kw
    )


def workbench_main(*args, env=None, cwd=None):
    """Run the workbench command in this process (`workbench.cli.main`, without a new interpreter's ~2-3 s of imports),
    its exit code and output captured in a `CompletedProcess`, as `workbench` returns them; `env`: variables set for
    the call; `cwd`: the folder it runs in. For a command whose process is not what the test is about. Torch's thread
    count is a fresh process's during the call (training sets 1 and leaves it) and put back after."""
    import io
    from unittest import mock

    from workbench.cli import main

    argv, out, err = [str(a) for a in args], io.StringIO(), io.StringIO()
    here, threads = os.getcwd(), torch.get_num_threads()
    try:
        torch.set_num_threads(FRESH_THREADS)
        if cwd is not None:
            os.chdir(cwd)
        with mock.patch.dict(os.environ, env or {}), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:  # argparse's refusals
                code = e.code if isinstance(e.code, int) else 2
    finally:
        os.chdir(here)
        torch.set_num_threads(threads)
    return subprocess.CompletedProcess(["workbench", *argv], code, out.getvalue(), err.getvalue())


def start_workbench(*args, **kw):
    "Start the workbench command in the background (`kw` for Popen: cwd, env, stderr=subprocess.STDOUT...)."
    return subprocess.Popen(
        [*WORKBENCH, *map(str, args)], **{"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, **kw}
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout=120, interval=0.1, what="condition"):
    "Poll `predicate` until it returns something truthy."
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def kill_after_checkpoints(proc, runs_dir: Path, name: str, count: int) -> Path:
    "SIGKILL the training process `proc` of run `name` once it has `count` step checkpoints; returns their folder."
    import signal

    try:
        ckpt_dir = wait_for(lambda: next(runs_dir.glob(f"{name}-*/checkpoints"), None), what="a checkpoint folder")
        wait_for(lambda: len(list(ckpt_dir.glob("step_*.pt"))) >= count, what=f"{count} checkpoints")
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    return ckpt_dir


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.fixture
def runs_dir(tmp_path):
    return tmp_path / "runs"


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
# Every URL a page may not request: anything but http(s)/ws(s) to loopback (data:, blob: and file: URLs are not
# requests out). Route these to abort; routing every URL ("**/*") breaks JupyterLab's kernel websocket.
NOT_LOOPBACK = re.compile(r"^(?!((https?|wss?)://(127\.0\.0\.1|localhost)[:/]|data:|blob:|file:))")
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
# Tags that make a browser fetch something, and module imports (plotly's "connected" renderer, nbconvert's mermaid).
FETCHES = re.compile(
    r"<(?:script|link)\b[^>]*?\s(?:src|href)\s*=\s*[\"']?([^\"'\s>]+)|\bimport\s*\(?\s*[\"']([^\"']+)[\"']", re.I
)


@contextlib.contextmanager
def loopback_page(browser, width: int = 1280, height: int = 1000):
    """A page of `browser` in a new context whose requests beyond loopback are aborted; yields (page, the URLs it was
    refused) and closes the context."""
    blocked = []
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        context.route(NOT_LOOPBACK, lambda route: (blocked.append(route.request.url), route.abort()))
        yield context.new_page(), blocked
    finally:
        context.close()


@contextlib.contextmanager
def loopback_only_page(width: int = 1280, height: int = 1000):
    "`loopback_page` in a headless Chromium of its own, closed after."
    assert os.path.exists(CHROMIUM), (
        "Debian's chromium is missing: tools/setup.sh installs it (apt-get install -y chromium)"
    )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            with loopback_page(browser, width, height) as opened:
                yield opened
        finally:
            browser.close()


def remote_fetches(page: str) -> list[str]:
    "The URLs in `page`'s <script src>, <link href> and module imports that point at a server other than loopback."
    out = []
    for m in FETCHES.finditer(page):
        url = m.group(1) or m.group(2)
        if (
            re.match(r"(?i)(https?:)?//", url)
            and (urlparse(url if ":" in url.split("/")[0] else "http:" + url).hostname or "") not in LOOPBACK_HOSTS
        ):
            out.append(url)
    return out


@contextlib.contextmanager
def offline_page(path):
    "Open a local HTML file in headless Chromium with the network unavailable; yields (page, the URLs it requested)."
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (tools/setup.sh installs it)")
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


def processes_of(tmp):
    "Live processes that belong to jobs under `tmp` (job processes and their kernels carry WORKBENCH_JOB_DIR)."
    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if str(tmp) in " ".join(p.info["cmdline"] or []) or str(tmp) in p.environ().get("WORKBENCH_JOB_DIR", ""):
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return found


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray cluster (head node, 2 CPUs), started once for a file's tests that use it (`workbench batch --ray`,
    `workbench sweep --ray`, in tests/test_on_ray.py) and stopped after them."""
    pytest.importorskip("ray")
    ray_bin = Path(sys.executable).parent / "ray"
    port = free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    tmp = Path("/tmp") / f"ray-{os.getpid()}"  # Ray's socket paths must stay short
    start = subprocess.run(
        [
            str(ray_bin),
            "start",
            "--head",
            "--node-ip-address",
            "127.0.0.1",
            "--port",
            str(port),
            "--num-cpus",
            "2",
            "--include-dashboard",
            "false",
            "--disable-usage-stats",
            "--temp-dir",
            str(tmp),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert start.returncode == 0, start.stdout[-2000:] + start.stderr[-2000:]
    try:
        yield f"127.0.0.1:{port}", env
    finally:
        subprocess.run([str(ray_bin), "stop", "--force"], env=env, capture_output=True, timeout=120)


def docs_build_rc(timeout: float = 1800) -> "int | None":
    """`make test` builds the docs site (every notebook run, then mkdocs) beside pytest, not before it: the two fill
    each other's idle time on CI's two cores. It says where in `WORKBENCH_DOCS_BUILD` (a path; `.log` and, once the
    build has ended, `.rc` beside it). Wait for the build to end: its exit status; None where no build runs beside."""
    where = os.environ.get("WORKBENCH_DOCS_BUILD")
    if not where:
        return None
    rc = Path(where + ".rc")
    wait_for(rc.exists, timeout=timeout, interval=1.0, what="the docs build beside pytest to end")
    return int(rc.read_text().strip() or 1)


@pytest.fixture(scope="module")
def machine_to_ourselves():
    """For the files whose checks look at the whole machine (no sandbox uid's process left, no shared-memory block
    left): the docs build's notebooks, which start sandboxes and shared-memory blocks of their own, have ended, and no
    other such file runs meanwhile (in another pytest process, or another checkout's tests: a lock on the machine)."""
    import fcntl, tempfile

    docs_build_rc()
    with open(Path(tempfile.gettempdir()) / "workbench-tests-whole-machine.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


# Under `--dist loadfile` each worker takes whole files in this order (tools/test.sh passes `--no-loadscope-reorder`:
# xdist otherwise orders files by their number of tests, and left the one-test files of a minute to the end, run by one
# worker while the other sat idle). First the learning tests, which only compute (no timed waits: tools/test.sh builds
# the docs site beside them, on the same cores); then the slowest files first, so that both workers end together. The
# three files that wait for that build and take the machine to themselves (`machine_to_ourselves`) start after it has
# ended, and apart from each other.
SLOW_FIRST = [
    "test_solve.py", "test_fused.py", "test_zoo.py",
    "test_tutorial_in_lab.py", "test_sweep.py", "test_on_ray.py", "test_bad_input.py", "test_team.py", "test_cli.py",
    "test_judges.py", "test_batch.py", "test_resume.py", "test_user_envs.py", "test_lm_train.py", "test_app.py",
    "test_distributed.py", "test_zoo_bench.py", "test_jobs.py", "test_sde.py", "test_lm_dashboard.py",
    "test_env_batches.py", "test_hostile.py", "test_legacy.py", "test_export.py", "test_planpath.py", "test_trading.py",
    "test_reports.py", "test_grpo_gpu_bench.py", "test_serve_pages.py",
]  # fmt: skip


def pytest_collection_modifyitems(config, items):
    "The slowest files first (`SLOW_FIRST`), the rest after them in their own order; within a file, its order."
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOW_FIRST)))


def pytest_configure(config):
    "A new run's timeline: the last run's, of every worker, goes (in the main process, before any worker starts)."
    if "PYTEST_XDIST_WORKER" not in os.environ:
        for old in ARTIFACTS.glob("timeline-*.jsonl"):
            old.unlink(missing_ok=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Each test's start and end on the wall clock and the CPU seconds it took (its worker's and the processes it
    started and waited for), a JSON line a test in test-artifacts/timeline-<worker>.jsonl: what each worker ran when, to
    see where CI's two cores sat idle and which tests cost the most work (`tools/timeline.py` draws it). The wall
    time of a test on a full machine says little of its own cost: the CPU seconds do."""
    start, cpu0 = time.time(), cpu_seconds()
    yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    row = {
        "test": item.nodeid,
        "start": round(start, 2),
        "end": round(time.time(), 2),
        "cpu": round(cpu_seconds() - cpu0, 2),
    }
    with open(ARTIFACTS / f"timeline-{worker}.jsonl", "a") as f:
        f.write(json.dumps(row) + "\n")


def cpu_seconds() -> float:
    "User and system seconds of this process and of its children that ended and were waited for."
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
