"`workbench serve`: the Live page driven in a real browser (Debian's chromium through Playwright), the JSON API, tokens."

import json, signal, subprocess, time, urllib.error, urllib.request
from pathlib import Path

import pytest

from conftest import ARTIFACTS, TINY, WORKBENCH, free_port, last_json, wait_for, workbench_main
from lab_fixtures import chromium_fixture, fresh_context  # noqa: F401  (the fixture `chromium`)
from workbench.runs.store import RunStore


def get(url, headers=None, method="GET"):
    "(status, parsed JSON) of a request; errors included."
    req = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


class Server:
    "A `workbench serve` process on a free loopback port, stopped (SIGTERM) at the end."

    def __init__(self, runs_dir, *extra):
        self.port, self.runs_dir = free_port(), runs_dir
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(
            Path(runs_dir).parent / f"serve-{self.port}.log", "w+"
        )  # the server's stderr (never blocks on a full pipe)
        self.proc = subprocess.Popen(
            [*WORKBENCH, "serve", "--port", str(self.port), "--runs-dir", str(runs_dir), *extra],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        self.announce = self.proc.stdout.readline()  # printed once the server listens
        assert self.announce.startswith("workbench serve: http://127.0.0.1:"), self.announce + self.stderr()

    def stderr(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        assert self.proc.returncode == 0, self.stderr()[-2000:]


@pytest.fixture
def server(runs_dir):
    s = Server(runs_dir)
    yield s
    s.stop()


def test_live_page_in_a_browser(server, chromium):
    "Start a run from the Live page; watch it; pause, resume, change the learning rate, stop; screenshot."
    store = RunStore(server.runs_dir)
    with fresh_context(chromium, viewport={"width": 1400, "height": 1100}) as context:
        page = context.new_page()
        page.goto(f"{server.base}/live")
        start = page.get_by_role("button", name="Start")
        start.wait_for(timeout=60_000)

        # The settings' tabs are as tall as the one shown (Bokeh's are as tall as the tallest: a blank area under Env).
        tabs_height = lambda: page.locator(".bk-tab").first.evaluate("e => e.getRootNode().host.offsetHeight")
        env_height = tabs_height()
        # The form: a long run, so it is still training when we stop it; a bad value is refused.
        page.locator(".bk-tab").filter(has_text="PPO").click()
        wait_for(lambda: tabs_height() > env_height + 100, timeout=10, what="the PPO tab's fields to set the height")
        steps = page.locator(".wb-field-total_timesteps input")
        steps.fill("0")
        steps.press("Enter")
        page.locator(".wb-config-error").get_by_text("total_timesteps must be at least 1").wait_for(timeout=10_000)
        steps.fill("50000000")
        steps.press("Enter")
        page.locator(".wb-config-error").wait_for(state="hidden", timeout=10_000)
        start.click()

        # The return chart gains points while it trains.
        chart = page.locator(".wb-chart-return .js-plotly-plot")
        points = lambda: chart.evaluate("el => (el.data && el.data[2].x) ? el.data[2].x.length : 0")
        wait_for(lambda: points() >= 3, timeout=90, what="the return chart to gain points")
        n = points()
        wait_for(lambda: points() > n, timeout=30, what="more points")
        status = get(f"{server.base}/api/status")[1]
        assert [s["status"] for s in status["sessions"]] == ["running"]
        run_id = status["sessions"][0]["run_id"]
        # The URL names the session, so a reload comes back to it (checked after the stop).
        wait_for(
            lambda: page.evaluate("location.href").endswith(f"/live?run={run_id}"),
            timeout=30,
            what="?run= in the URL",
        )

        # The run's own page, drawn from the store, follows it while it trains.
        run_page = context.new_page()
        run_page.goto(f"{server.base}/run?id={run_id}")
        sps = run_page.locator(".wb-run-chart-sps .js-plotly-plot")
        last_step = lambda: sps.evaluate(
            "el => el.data && el.data[0].x.length ? el.data[0].x[el.data[0].x.length - 1] : 0"
        )
        drawn = wait_for(last_step, timeout=60, what="the run page's throughput chart")
        wait_for(lambda: last_step() > drawn, timeout=30, what="the run page to follow the run")
        run_page.close()

        # Pause: the step counter stops.
        step_count = lambda: int(page.locator(".wb-step-count").inner_text().replace(",", ""))
        page.get_by_role("button", name="Pause").click()
        page.locator(".wb-status-value").get_by_text("paused").wait_for(timeout=30_000)
        paused_at = step_count()
        time.sleep(2.0)
        assert step_count() == paused_at, "the step counter moved while paused"
        assert get(f"{server.base}/api/runs/{run_id}")[1]["live"]["global_step"] == paused_at

        # Resume: it moves again.
        page.get_by_role("button", name="Resume").click()
        wait_for(lambda: step_count() > paused_at, timeout=30, what="steps after resume")

        # A new learning rate reaches the trainer: the store records the control and the new rate.
        lr = page.locator(".wb-knob-learning_rate input")
        lr.fill("0.0005")
        lr.press("Enter")

        def applied():
            return [
                e
                for e in store.events(run_id, "control")
                if e["data"]["action"] == "set"
                and e["data"]["ok"]
                and e["data"]["source"] == "app"
                and e["data"]["applied"].get("learning_rate") == 0.0005
            ]

        event = wait_for(applied, timeout=30, what="the learning-rate control in the store")[0]
        wait_for(
            lambda: [
                m
                for m in store.metrics(run_id, "charts/learning_rate")
                if m["step"] > event["step"] and m["value"] <= 0.0005
            ],
            timeout=30,
            what="the trainer's learning rate to follow",
        )
        assert get(f"{server.base}/api/runs/{run_id}")[1]["live"]["learning_rate"] == 0.0005

        # Stop: the run ends as stopped, with a checkpoint, and the page says so.
        page.get_by_role("button", name="Stop").click()
        page.locator(".wb-status-value").get_by_text("stopped").wait_for(timeout=60_000)
        wait_for(lambda: store.get_run(run_id)["status"] == "stopped", timeout=30, what="the store to record the stop")
        assert [c for c in store.checkpoints(run_id) if c["reason"] == "stop"]
        page.locator(".wb-log").get_by_text("set learning_rate=0.0005 from app: applied").wait_for(timeout=10_000)
        page.reload()  # the session is still picked
        page.locator(".wb-status-value").get_by_text("stopped").wait_for(timeout=60_000)
        assert page.locator(".wb-session-picker select").input_value() == f"{run_id} (stopped)"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "live_dashboard.png"), full_page=True)

        # The Runs page lists it; ticking it overlays its curve; its page shows its checkpoints.
        page.goto(f"{server.base}/runs")
        row = page.locator(".wb-runs-table .tabulator-row").filter(has_text=run_id)
        row.wait_for(timeout=60_000)
        row.locator("input[type=checkbox]").click()
        overlay = page.locator(".wb-overlay-chart .js-plotly-plot")
        wait_for(lambda: overlay.evaluate("el => el.data ? el.data.length : 0") == 1, timeout=30, what="the overlay")
        page.screenshot(path=str(ARTIFACTS / "runs_page.png"), full_page=True)
        page.goto(f"{server.base}/run?id={run_id}")
        page.locator(".wb-run-head").get_by_text("stopped").wait_for(timeout=60_000)
    assert (ARTIFACTS / "live_dashboard.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One run trained by `workbench train` (in-process) and a server over it that also answers to the Host
    `lab.example`, shared by the tests that only read from it: (server, run id)."""
    runs_dir = tmp_path_factory.mktemp("app") / "runs"
    r = workbench_main(
        "train",
        *TINY,
        "--total-timesteps",
        2048,
        "--eval-every",
        16,
        "--eval-episodes",
        2,
        "--runs-dir",
        runs_dir,
        "--json",
    )
    assert r.returncode == 0, r.stderr
    server = Server(runs_dir, "--allow-host", "lab.example")
    yield server, last_json(r.stdout)["run_id"]
    server.stop()


def test_rest_api(trained):
    "Every endpoint against a running server, over a run trained by `workbench train`."
    server, run_id = trained
    runs_dir, base = server.runs_dir, server.base
    code, status = get(f"{base}/api/status")
    assert code == 200 and status["ok"] and status["runs"] == 1 and status["runs_by_status"] == {"finished": 1}
    assert status["system"]["memory_total_gb"] > 0 and status["sessions"] == []

    code, runs = get(f"{base}/api/runs")
    assert code == 200 and [(x["id"], x["status"], x["global_step"], x["live"]) for x in runs["runs"]] == [
        (run_id, "finished", 2048, False)
    ]
    assert get(f"{base}/api/runs?status=running")[1]["runs"] == []

    code, run = get(f"{base}/api/runs/{run_id}")
    assert code == 200 and run["config"]["env"]["env"] == "gym:CartPole-v1" and run["summary"]["global_step"] == 2048
    assert run["checkpoints"] and "charts/episodic_return" in run["metric_keys"] and run["live"] is None
    assert [e["data"]["status"] for e in run["events"] if e["kind"] == "status"] == ["running", "finished"]

    code, series = get(f"{base}/api/runs/{run_id}/metrics?key=charts/episodic_return")
    assert (
        code == 200 and len(series["steps"]) == len(series["values"]) > 0 and series["steps"] == sorted(series["steps"])
    )
    assert get(f"{base}/api/runs/{run_id}/metrics")[1]["keys"] == run["metric_keys"]
    code, err = get(f"{base}/api/runs/{run_id}/metrics?key=nope/x")
    assert code == 404 and "has no metric 'nope/x'" in err["error"]

    code, perf = get(f"{base}/api/performance/summary")
    entry = perf["runs"][0]
    assert code == 200 and perf["count"] == 1 and entry["id"] == run_id and perf["best_run"] == run_id
    assert entry["latest_return"] == series["values"][-1] and entry["best_return"] == run["best_return"]
    assert entry["sps"]["last"] > 0 and 0 < len(entry["sps"]["trend"]) <= 20

    assert get(f"{base}/api/runs/no-such-run") == (
        404,
        {"error": f"no run 'no-such-run' in {Path(runs_dir) / 'workbench.db'}"},
    )
    assert get(f"{base}/api/runs/no-such-run/metrics?key=x")[0] == 404
    assert get(f"{base}/api/nothing-here")[0] == 404
    assert get(f"{base}/api/runs", method="POST")[0] == 405


def test_token(runs_dir, chromium):
    "With a token every API call and page needs it."
    server = Server(runs_dir, "--token", "s3cret-token")
    try:
        assert get(f"{server.base}/api/status")[0] == 401
        assert get(f"{server.base}/api/status?token=wrong-token")[0] == 401
        assert get(f"{server.base}/api/status?token=s3cret-token")[0] == 200
        assert get(f"{server.base}/api/runs", {"Authorization": "Bearer s3cret-token"})[0] == 200
        assert "/runs?token=s3cret-token " in server.announce
        with fresh_context(chromium) as context:  # the pages: no controls without the token
            page = context.new_page()
            page.goto(f"{server.base}/live")
            page.get_by_text("This server needs its access token").wait_for(timeout=60_000)
            assert page.get_by_role("button", name="Start").count() == 0
            page.goto(f"{server.base}/live?token=s3cret-token")
            page.get_by_role("button", name="Start").wait_for(timeout=60_000)
    finally:
        server.stop()
    # `--token auto` (a token generated, printed, needed): test_a_public_bind_prints_a_url_that_works


def test_non_loopback_needs_a_token(runs_dir):
    "Binding beyond loopback without a token is refused up front: one line, exit 2, nothing created."
    r = workbench_main("serve", "--address", "0.0.0.0", "--port", free_port(), "--runs-dir", runs_dir)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "workbench: error: refusing to serve on non-loopback address '0.0.0.0' without "
        "a token: controls change training runs; pass --token SECRET, or --token auto to generate one"
    ]
    assert not Path(runs_dir).exists()
    r = workbench_main("serve", "--port", 99999, "--runs-dir", runs_dir)
    assert r.returncode == 2 and "--port must be in 0..65535" in r.stderr and not Path(runs_dir).exists()


def raw_request(port: int, path: str, host: str) -> tuple[int, dict, bytes]:
    "A GET to 127.0.0.1:`port` with the `Host` header `host` (what a DNS-rebinding page's browser would send)."
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers={"Host": host})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def test_a_foreign_host_header_gets_403_and_every_answer_carries_security_headers(trained):
    server, _ = trained
    for path in ("/api/runs", "/runs", "/api/status", "/static/extensions/panel/panel.min.js"):
        status, headers, body = raw_request(server.port, path, "evil.example")
        assert status == 403 and b"does not answer to that Host" in body, (path, status)
        status, _, _ = raw_request(server.port, path, f"evil.example:{server.port}")
        assert status == 403, path
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", "lab.example"):
        status, headers, _ = raw_request(server.port, "/api/runs", host)
        assert status == 200, host
    status, headers, _ = raw_request(server.port, "/runs", f"127.0.0.1:{server.port}")
    assert status == 200 and headers["X-Content-Type-Options"] == "nosniff"
    assert (
        headers["Referrer-Policy"] == "no-referrer" and "frame-ancestors 'self'" in headers["Content-Security-Policy"]
    )


MARKUP = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


def test_markup_in_a_run_is_shown_as_text_and_never_runs(runs_dir, chromium):
    "A run whose name, env and config hold markup: the runs page, its run page and the hyperparameter diff escape it."
    store = RunStore(runs_dir)
    ids = [
        store.create_run(
            f"x{i}",
            {"env": {"env": f"trading?x={MARKUP}"}, "ppo": {"note": MARKUP + str(i)}},
            run_dir=Path(runs_dir) / f"x{i}",
            env=f"trading?x={MARKUP}",
            policy=MARKUP,
        )
        for i in range(2)
    ]
    store.log_event(ids[0], 0, "control", {"action": "set", "source": MARKUP, "ok": True})
    server = Server(runs_dir)
    try:
        with fresh_context(chromium) as context:
            page = context.new_page()
            page.goto(f"{server.base}/run?id={ids[0]}")
            page.locator(".wb-run-head").get_by_text("onerror", exact=False).wait_for(timeout=60_000)
            page.goto(f"{server.base}/runs")
            page.locator(".wb-runs-table").wait_for(timeout=60_000)
            page.get_by_text("window.__pwned=2", exact=False).first.wait_for(timeout=30_000)  # shown, as text
            for box in page.locator(".wb-runs-table input[type='checkbox']").all()[1:3]:
                box.check()
            page.locator(".wb-hparams").get_by_text("note", exact=False).first.wait_for(timeout=30_000)
            time.sleep(1.0)
            assert page.evaluate("window.__pwned") is None, "markup from the store ran in the page"
            assert page.evaluate("document.querySelectorAll('img[src=\"x\"]').length") == 0
    finally:
        server.stop()


def test_a_public_bind_prints_a_url_that_works(runs_dir):
    """`--address 0.0.0.0 --token auto` prints a URL naming one of this machine's addresses (not 0.0.0.0), with the
    token it generated: requested as printed, it answers, and without the token the API refuses."""
    from urllib.parse import parse_qs, urlsplit

    port = free_port()
    log = open(Path(runs_dir).parent / f"serve-{port}.log", "w+")
    proc = subprocess.Popen(
        [
            *WORKBENCH,
            "serve",
            "--address",
            "0.0.0.0",
            "--token",
            "auto",
            "--port",
            str(port),
            "--runs-dir",
            str(runs_dir),
        ],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        announce = proc.stdout.readline()
        assert announce.startswith("workbench serve: http://"), announce
        url = announce.split()[2]
        parts = urlsplit(url)
        assert parts.hostname != "0.0.0.0" and parts.port == port and parse_qs(parts.query)["token"], url
        with urllib.request.urlopen(url, timeout=60) as r:  # the page, as printed
            assert r.status == 200 and b"<html" in r.read().lower()
        token = parse_qs(parts.query)["token"][0]
        assert len(token) >= 16, token
        assert get(f"http://{parts.netloc}/api/status?token={token}")[0] == 200
        assert get(f"http://{parts.netloc}/api/status")[0] == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=90)
    log.seek(0)
    assert proc.returncode == 0 and "Traceback" not in log.read()


def test_ipv6_loopback_hosts_and_malformed_requests_never_get_500(trained):
    "An IPv6 loopback Host is served like any loopback name; a malformed Host or path gets 400; nothing gets 500."
    server, _ = trained
    p = server.port
    for host, path, expected in [
        (f"[::1]:{p}", "/runs", 200),
        ("[::1]", "/runs", 200),
        ("::1", "/runs", 200),
        (f"[::1]:{p}", "/api/runs", 200),
        (f"[::1]:{p}", "/system", 200),
        ("[::1", "/runs", 400),
        ("[::1]:abc", "/runs", 400),
        ("[::1]x", "/api/runs", 400),
        ("127.0.0.1:99999", "/runs", 400),
        ("[fe80::1]:80", "/runs", 403),
        (f"127.0.0.1:{p}", "/static/%00", 400),
        (f"127.0.0.1:{p}", "/static/%ff", 400),
        (f"127.0.0.1:{p}", "/%00", 400),
        (f"127.0.0.1:{p}", "/runs%00", 400),
        (f"127.0.0.1:{p}", "/api/runs/%00", 400),
        (f"127.0.0.1:{p}", "/api/runs/%ff", 400),
        (f"127.0.0.1:{p}", "/api/runs/a%0ab", 400),
        (f"[::1]:{p}", "/static/%00", 400),
        (f"127.0.0.1:{p}", "/run?id=%00", 200),  # a query is the page's to read: no such run
        (f"127.0.0.1:{p}", "/static/..%2f..%2fetc%2fpasswd", 403),
    ]:
        status, _, _ = raw_request(p, path, host)
        assert status == expected, (host, path, status)
    assert "Traceback" not in server.stderr() and " 500 " not in server.stderr(), server.stderr()[-3000:]
