"`make lab`: JupyterLab on loopback with a token, .venv's kernel, and no network calls of its own (checked in Chromium)."

import json, os, queue, re, shutil, signal, subprocess, sys, threading, time, urllib.error, urllib.request

import psutil, pytest

from conftest import ARTIFACTS, ROOT, free_port, loopback_only_page, wait_for

VENV_PYTHON = str(ROOT / ".venv" / "bin" / "python")
COPIES = "test-artifacts/lab-copies"  # make lab's copies of the tutorials, here


class Lab:
    "`make lab` with --no-browser on a free loopback port, in its own session; the whole group is killed at the end."

    def __init__(self, tmp):
        self.port = free_port()
        env = {
            **os.environ,  # a fresh user: no saved settings, workspaces or config of this machine's
            "JUPYTER_CONFIG_DIR": str(tmp / "config"),
            "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(tmp / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "workspaces"),
            "WORKBENCH_LAB_COPIES": COPIES,  # (not the checkout's lab/, a developer's own copies)
        }
        shutil.rmtree(ROOT / COPIES, ignore_errors=True)
        self.log = open(tmp / "lab.log", "w+")
        self.proc = subprocess.Popen(
            ["make", "-s", "lab", f"LAB_ARGS=--no-browser --port={self.port}"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            start_new_session=True,
        )
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in self.proc.stdout], daemon=True).start()
        self.output, deadline = "", time.time() + 180
        while not (m := re.search(rf"http://127\.0\.0\.1:{self.port}/lab\?token=(\S+)", self.output)):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise AssertionError(f"no URL from make lab:\n{self.output}\n{self.stderr()}")
            try:
                self.output += lines.get(timeout=1)
            except queue.Empty:
                pass
        self.token, self.base = m.group(1), f"http://127.0.0.1:{self.port}"

    def stderr(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-3000:]

    def request(self, path, token=True, method="GET", body=None):
        "(status, headers, body) of a request, redirects not followed."
        headers = {"Authorization": f"token {self.token}"} if token else {}
        req = urllib.request.Request(
            self.base + path, headers=headers, method=method, data=None if body is None else json.dumps(body).encode()
        )
        opener = urllib.request.build_opener(NoRedirect)
        try:
            with opener.open(req, timeout=30) as r:
                return r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def processes(self):
        "make, jupyter and any kernel: the whole tree, as (process, command line, listening addresses)."
        root, found = psutil.Process(self.proc.pid), []
        for p in [root, *root.children(recursive=True)]:
            try:
                found.append(
                    (p, p.cmdline(), [c.laddr for c in p.net_connections("inet") if c.status == psutil.CONN_LISTEN])
                )
            except psutil.Error:
                pass  # gone meanwhile
        return found

    def stop(self):
        tree = [p for p, _, _ in self.processes()] if self.proc.poll() is None else []
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # anything the group left behind
        except ProcessLookupError:
            pass
        for p in tree:  # and any kernel in a session of its own
            try:
                p.kill()
            except psutil.Error:
                pass
        self.proc.wait(timeout=30)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    lab = Lab(tmp_path_factory.mktemp("lab"))
    yield lab
    lab.stop()


def test_prints_url_with_token_and_needs_it(lab):
    assert f"{lab.base}/lab/tree/{COPIES}/tutorial.live_training.ipynb?token={lab.token}" in lab.output
    status, _, body = lab.request("/api/status")
    assert status == 200 and "started" in json.loads(body)
    assert lab.request(f"/lab?token={lab.token}", token=False)[0] == 200
    assert lab.request("/api/status", token=False)[0] == 403
    status, headers, _ = lab.request("/lab", token=False)
    assert status == 302 and headers["Location"].startswith("/login"), (status, dict(headers))
    assert lab.request("/api/status?token=wrong", token=False)[0] == 403


def test_opens_copies_of_the_tutorials_not_the_tracked_notebooks(lab):
    """The lab opens copies (tools/lab_copy.py), made once and then kept: running and saving them leaves the notebooks
    in nbs/ (what the docs build and the tests run) as they are. A copy has the kernel's metadata, a note under its
    title, and its relative links lead back into nbs/."""
    originals = sorted((ROOT / "nbs").glob("tutorial.*.ipynb"))
    copies = [ROOT / COPIES / p.name for p in originals]
    assert originals and all(c.exists() for c in copies), lab.output + lab.stderr()
    nb = json.loads(copies[0].read_text())
    assert nb["metadata"]["kernelspec"]["display_name"] == "Python 3 (ipykernel)"
    assert nb["metadata"]["language_info"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert "Your copy of `nbs/" in "".join(nb["cells"][1]["source"])
    markdown = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "](../../nbs/guides/" in markdown and "](guides/" not in markdown
    copies[0].write_text(copies[0].read_text().replace("20_000", "1_000_000"))  # the user's edit stays
    again = subprocess.run([VENV_PYTHON, "tools/lab_copy.py", "--to", COPIES], cwd=ROOT, capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout.strip() == f"{COPIES}/tutorial.live_training.ipynb", again
    assert "1_000_000" in copies[0].read_text() and "made" not in again.stderr
    bad = subprocess.run([VENV_PYTHON, "tools/lab_copy.py", "--to", "/tmp"], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "inside the repository" in bad.stderr


def test_listens_on_loopback_only(lab):
    listening = {(ip, port) for _, _, addresses in lab.processes() for ip, port in addresses}
    assert ("127.0.0.1", lab.port) in listening and {ip for ip, _ in listening} == {"127.0.0.1"}, listening


def test_kernel_is_the_venv_python(lab):
    "The default kernelspec names .venv's python, and a kernel started from it runs that python, on loopback."
    specs = json.loads(lab.request("/api/kernelspecs")[2])
    assert specs["default"] == "python3"
    assert specs["kernelspecs"]["python3"]["spec"]["argv"][0] == VENV_PYTHON
    status, _, body = lab.request("/api/kernels", method="POST", body={"name": "python3"})
    assert status == 201, body
    kernel = json.loads(body)["id"]
    try:

        def kernel_sockets():  # the kernel's processes and its listening sockets, once it has bound its 5 channels
            kernels = [
                (cmdline, addresses) for _, cmdline, addresses in lab.processes() if "ipykernel_launcher" in cmdline
            ]
            sockets = [address for _, addresses in kernels for address in addresses]
            return len(sockets) >= 5 and (kernels, sockets)

        kernels, sockets = wait_for(kernel_sockets, timeout=120, interval=0.5, what="the kernel to listen")
        assert [cmdline[0] for cmdline, _ in kernels] == [VENV_PYTHON]
        assert {ip for ip, _ in sockets} == {"127.0.0.1"}, sockets
    finally:
        assert lab.request(f"/api/kernels/{kernel}", method="DELETE")[0] == 204


def test_settings_turn_news_off(lab):
    "The defaults tools/setup.sh writes into .venv: never fetch news, never check for updates, no PyPI."
    schema = json.loads(lab.request("/lab/api/settings/@jupyterlab/apputils-extension:notification")[2])["schema"]
    assert schema["properties"]["fetchNews"]["default"] == "false"
    assert schema["properties"]["checkForUpdates"]["default"] is False
    page = lab.request(f"/lab?token={lab.token}", token=False)[2]
    config = json.loads(
        re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    assert config["news"] == {"disabled": True}


def test_lab_in_a_browser_is_offline(lab):
    "Open /lab in Chromium, non-loopback requests aborted: it renders, asks nothing about news, requests nothing outside."
    requested = []
    with loopback_only_page(1400, 900) as (page, blocked):
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"{lab.base}/lab?token={lab.token}")
        page.locator(".jp-LabShell").wait_for(timeout=90_000)
        page.locator(".jp-Launcher").wait_for(timeout=90_000)  # shown once the lab has restored
        page.get_by_text("Python 3 (ipykernel)").first.wait_for(timeout=30_000)
        page.wait_for_load_state("networkidle", timeout=30_000)
        page.wait_for_timeout(2_000)  # the news question would come right after restoring
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "lab.png"))
        assert page.get_by_text("official Jupyter news").count() == 0
        assert page.locator(".Toastify__toast").count() == 0
    assert blocked == [], blocked
    assert not [u for u in requested if "/lab/api/news" in u or "/lab/api/update" in u], requested
