"""`workbench sweep`: real trials as processes, recorded in the store; killed with SIGKILL and resumed; timeouts and
thresholds; a notebook sweep; a sweep on a local Ray cluster; bad input refused before anything is created."""

import json, sqlite3, subprocess

import pytest

from conftest import ROOT, processes_of, start_workbench, wait_for, workbench, workbench_main
from workbench.runs.store import RunStore

TRAIN = ROOT / "nbs" / "experiments" / "train.ipynb"
SMALL = (
    'env = "gym:CartPole-v1"\nnum_envs = 2\nnum_steps = 16\nupdate_epochs = 1\ndevice = "cpu"\n'
    "eval_every = 4\neval_episodes = 3\n"
)
LR = '[sweep.learning_rate]\ndistribution = "log_normal"\nmin = 1e-4\nmax = 1e-2\n'


def sweep_file(tmp_path, text, name="sweep.toml"):
    (tmp_path / name).write_text(text)
    return name


def integrity(runs):
    with sqlite3.connect(runs / "workbench.db") as db:
        return db.execute("PRAGMA integrity_check").fetchone()[0]


def test_sweep_killed_then_resumed(tmp_path):
    # Three trials: one finished, one cut short and one never started when the kill comes.
    cfg = sweep_file(
        tmp_path, SMALL + 'total_timesteps = 1024\n[sweep]\nmethod = "random"\ntrials = 3\nseed = 7\n' + LR
    )
    proc = start_workbench("sweep", "--config", cfg, "--runs-dir", "runs", cwd=tmp_path, stderr=subprocess.STDOUT)
    runs = tmp_path / "runs"
    store = wait_for(lambda: (runs / "workbench.db").exists() and RunStore(runs), timeout=60, what="the store")
    sweep = wait_for(lambda: (store.sweeps() or [None])[0], timeout=60, what="the sweep's row")
    # SIGKILL the sweep (no chance to clean up) once a trial has finished and the next one is running.
    wait_for(
        lambda: [t["status"] for t in store.trials(sweep["id"])][:2] == ["finished", "running"],
        timeout=240,
        interval=0.1,
        what="one trial finished, the next running",
    )
    proc.kill()
    out = proc.communicate(timeout=30)[0]
    wait_for(lambda: not processes_of(tmp_path), timeout=60, what="the trials to die with the sweep")
    before = {t["id"]: t for t in store.trials(sweep["id"])}
    finished = {k for k, t in before.items() if t["status"] == "finished"}
    assert 1 <= len(finished) < 3 and len(before) < 3 + 1, (before, out)

    r = workbench("sweep", "--resume", sweep["id"], "--runs-dir", "runs", "--json", cwd=tmp_path, timeout=400)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    row = json.loads(r.stdout.strip().splitlines()[-1])
    assert row["status"] == "finished" and row["trials"] == 3
    assert f"{len(finished)} already ended, {len(before) - len(finished)} to run again" in r.stdout
    after = {t["id"]: t for t in store.trials(sweep["id"])}
    assert len(after) == 3 and {t["status"] for t in after.values()} == {"finished"}, after
    for k in finished:  # a finished trial did not run again
        assert (after[k]["run_id"], after[k]["started_at"], after[k]["attempts"]) == (
            before[k]["run_id"],
            before[k]["started_at"],
            1,
        )
    # the one cut short ran again with its parameters: as a new run when killed before its first checkpoint; from its
    # checkpoint, the same run, when the kill came after one (its final one, on a loaded machine: seen in CI)
    for k in set(before) - finished:
        assert after[k]["attempts"] == 2 and after[k]["parameters"] == before[k]["parameters"]
        saved = list((runs / before[k]["run_id"]).glob("checkpoints/step_*.pt"))
        assert (after[k]["run_id"] == before[k]["run_id"]) == bool(saved), (before[k], after[k], saved)
    # Each trial: its own run in the store, trained with its learning rate; a curve, a score and a cost.
    for t in after.values():
        run = store.get_run(t["run_id"])
        assert run["status"] == "finished" and run["config"]["ppo"]["learning_rate"] == t["parameters"]["learning_rate"]
        assert t["curve"] and t["score"] == max(c[2] for c in t["curve"]) and t["cost"] > 0
    best = max(after.values(), key=lambda t: t["score"])
    assert row["best"]["trial"] in {t["id"] for t in after.values() if t["score"] == best["score"]}
    assert integrity(runs) == "ok"


def test_a_trial_killed_is_recorded_as_failed_and_the_sweep_goes_on(tmp_path):
    """Fault injection: one trial's process is SIGKILLed; the trial is recorded as failed, and the next one runs. That
    one meets the timeout: it is stopped and scored on the curve it reached. Both by CARBS, chosen on the command line."""
    # 15 s: a loaded CI machine took over 7 s to start a trial, and the timeout counts from its start (at 8 s, a
    # machine running three test sessions at once timed the trial out before its first evaluation: no score).
    cfg = sweep_file(tmp_path, SMALL + "total_timesteps = 10000000\n[sweep]\ntrials = 2\ntimeout = 15\n" + LR)
    proc = start_workbench(
        "sweep", "--config", cfg, "--method", "carbs", "--runs-dir", "runs", cwd=tmp_path, stderr=subprocess.STDOUT
    )

    def trial():
        return [p for p in processes_of(tmp_path) if "workbench.jobs.sweep" in " ".join(p.cmdline())]

    (first,) = wait_for(trial, timeout=120, interval=0.05, what="the first trial's process")
    first.kill()
    out = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0, out[-3000:]
    store = RunStore(tmp_path / "runs")
    (row,) = store.sweeps()
    killed, second = store.trials(row["id"])
    assert killed["status"] == "failed" and killed["attempts"] == 1, killed
    assert row["status"] == "finished" and row["method"] == "carbs", row
    if killed["score"] is None:  # killed before its first evaluation: the error says how it ended
        assert "exit code -9" in killed["error"] and row["best"]["trial"] == second["id"], (killed, row)
    assert "t000 failed" in out and integrity(tmp_path / "runs") == "ok"
    # The timeout stopped the second trial, scored on the curve it reached; its run says it was stopped.
    assert "t001: past the timeout; stopping it" in out and "2 trials (1 stopped at the timeout, 1 failed)" in out, out[
        -3000:
    ]
    assert second["status"] == "timeout" and second["score"] is not None, second
    assert store.get_run(second["run_id"])["status"] == "stopped"


def test_sweep_threshold_and_steps(tmp_path):
    "A threshold ends a trial when the metric reaches it; the cost is the env steps it took."
    cfg = sweep_file(tmp_path, SMALL + "total_timesteps = 20000\n[sweep]\ntrials = 1\n" + LR, "t.toml")
    r = workbench(
        "sweep",
        "--config",
        cfg,
        "--threshold",
        "5",
        "--cost",
        "steps",
        "--runs-dir",
        "runs2",
        cwd=tmp_path,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    store = RunStore(tmp_path / "runs2")
    (t,) = store.trials(store.sweeps()[0]["id"])
    run = store.get_run(t["run_id"])
    assert t["score"] == 5.0 and t["cost"] == t["curve"][-1][0] and run["global_step"] < 20000, (t, run)
    assert run["status"] == t["status"] == "finished"  # it reached the goal: one status on every page


def test_notebook_sweep(tmp_path):
    cfg = sweep_file(
        tmp_path, '[sweep]\nmethod = "random"\nmetric = "mean_return"\ntrials = 2\nmax_parallel = 2\n' + LR
    )
    small = [
        "-p",
        "total_timesteps",
        "1024",
        "-p",
        "update_epochs",
        "2",
        "-p",
        "eval_episodes",
        "3",
        "-p",
        "eval_every",
        "0",
        "-p",
        "device",
        "cpu",
    ]
    r = workbench("sweep", TRAIN, "--config", cfg, *small, "--runs-dir", "runs", cwd=tmp_path, timeout=400)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    store = RunStore(tmp_path / "runs")
    sweep = store.sweeps()[0]
    assert (sweep["kind"], sweep["status"], sweep["target"]) == ("notebook", "finished", str(TRAIN))
    for t in store.trials(sweep["id"]):
        job = store.get_job(t["id"])  # the trial is a notebook job, with the sweep as its batch
        assert job["status"] == "finished" and job["batch_id"] == sweep["id"]
        assert job["parameters"]["learning_rate"] == t["parameters"]["learning_rate"]
        assert t["score"] == job["result"]["mean_return"] and t["cost"] == pytest.approx(job["duration"])


PBT = (
    '[sweep]\nmethod = "pbt"\npopulation = 2\nrounds = 3\nquantile = 0.34\nmax_parallel = 2\n'
    + LR
    + '[sweep.gamma]\ndistribution = "logit_normal"\nmin = 0.9\nmax = 0.999\n'
    + '[sweep.clip_coef]\ndistribution = "uniform"\nmin = 0.1\nmax = 0.3\n'
    + '[sweep.ent_coef]\ndistribution = "log_normal"\nmin = 1e-4\nmax = 1e-1\n'
)
SETTINGS = {
    "learning_rate": "charts/learning_rate",
    "gamma": "charts/gamma",
    "clip_coef": "charts/clip_coef",
    "ent_coef": "charts/ent_coef",
}


def test_pbt_copies_checkpoints_and_the_perturbed_values_are_in_effect(tmp_path):
    cfg = sweep_file(tmp_path, SMALL + "total_timesteps = 1536\n" + PBT)  # 3 rounds of 16 updates
    r = workbench("sweep", "--config", cfg, "--runs-dir", "runs", "--json", cwd=tmp_path, timeout=400)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    row = json.loads(r.stdout.strip().splitlines()[-1])
    store = RunStore(tmp_path / "runs")
    members = {t["id"]: t for t in store.trials(row["id"])}
    lineage = store.lineage(row["id"])
    assert row["status"] == "finished" and len(members) == 2 and len(lineage) == 6
    copies = [entry for entry in lineage if entry["parent"]]
    assert [c["round"] for c in copies] == [0, 1], lineage  # the worse member copies after every round but the last
    for c in copies:
        run_id = members[c["member"]]["run_id"]
        # It continued from the checkpoint copied from its parent...
        resumed = [e for e in store.events(run_id, "resumed") if e["step"] == c["step"]]
        assert resumed and resumed[0]["data"]["checkpoint"].endswith("exploit.pt"), store.events(run_id, "resumed")
        parent_scores = [e for e in lineage if e["member"] == c["parent"] and e["round"] == c["round"]]
        assert parent_scores[0]["score"] >= c["score"]
        # ...and every update of its next round used the perturbed settings, not the checkpoint's.
        end = 1536 * (c["round"] + 2) // 3
        for name, key in SETTINGS.items():
            used = {m["value"] for m in store.metrics(run_id, key) if c["step"] < m["step"] <= end}
            assert used and all(v == pytest.approx(c["parameters"][name]) for v in used), (name, used, c["parameters"])
    assert all(store.get_run(t["run_id"])["status"] == "finished" for t in members.values())
    assert integrity(tmp_path / "runs") == "ok"


def test_pbt_of_a_grpo_code_agent(tmp_path):
    """Issue 57: PBT of any algorithm in the registry, here a code agent's GRPO: its members' rounds split its updates,
    scored by val pass@1 (its evaluations' field), the worse member continuing from the better one's checkpoint."""
    text = (ROOT / "nbs" / "experiments" / "sweeps" / "code_agent_grpo.toml").read_text().split("\n[sweep]\n")[0] + "\n"
    cfg = sweep_file(tmp_path, text.replace("updates = 6", "updates = 4").replace("eval_every = 3", "eval_every = 2")
                     + '[sweep]\nmethod = "pbt"\nmetric = "eval/pass_rate"\npopulation = 2\nrounds = 2\nquantile = 0.5\n'
                     + LR)  # fmt: skip
    r = workbench("sweep", "--config", cfg, "--runs-dir", "runs", "--in-process", "--json", cwd=tmp_path, timeout=400)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    row = json.loads(r.stdout.strip().splitlines()[-1])
    store = RunStore(tmp_path / "runs")
    lineage, members = store.lineage(row["id"]), store.trials(row["id"])
    assert row["status"] == "finished" and len(members) == 2 and len(lineage) == 4
    assert [e["round"] for e in lineage if e["parent"]] == [0] and all(e["score"] is not None for e in lineage)
    for t in members:  # each a GRPO run trained through both rounds: 4 updates
        run = store.get_run(t["run_id"])
        assert (run["config"]["algo"], run["global_step"], run["status"]) == ("grpo", 4, "finished"), run
    copied = next(e for e in lineage if e["parent"])
    resumed = store.events(next(t["run_id"] for t in members if t["id"] == copied["member"]), "resumed")
    assert any(e["data"]["checkpoint"].endswith("exploit.pt") for e in resumed), resumed


BAD = [
    (LR.replace("log_normal", "lognormal"), "unknown distribution 'lognormal'"),
    (LR.replace("min = 1e-4", "min = 1e-1"), "min 0.1 must be below max 0.01"),
    (LR.replace("learning_rate", "learning_rat"), "'learning_rat': a training run has no such setting"),
    (LR.replace("max = 1e-2", "max = 1e-2\nsteps = 3"), "unknown key 'steps'"),
    ("trials = 0\n" + LR, "trials must be a whole number of at least 1"),
    ("", "the sweep searches no parameters"),
    ('metric = "eval/mean_retrun"\n' + LR, "unknown metric 'eval/mean_retrun': a training run records eval/"),
]


@pytest.mark.parametrize("sweep, message", BAD)
def test_sweep_bad_input(tmp_path, monkeypatch, sweep, message):
    monkeypatch.chdir(tmp_path)
    cfg = sweep_file(tmp_path, SMALL + "[sweep]\n" + sweep)
    r = workbench_main("sweep", "--config", cfg, "--runs-dir", "runs")  # in this process: no interpreter to start
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, r.stderr
    assert not (tmp_path / "runs" / "sweeps").exists(), "nothing may be created before the checks pass"
    assert not (tmp_path / "runs").exists()


def test_a_notebook_sweep_with_an_unknown_metric_fails_before_any_trial(tmp_path, monkeypatch):
    "A notebook sweep's metric must be a key the notebook hands its job (`record_result`): one line, exit 2, nothing written."
    monkeypatch.chdir(tmp_path)
    cfg = sweep_file(tmp_path, '[sweep]\nmetric = "mean_retrun"\n' + LR)
    r = workbench_main("sweep", TRAIN, "--config", cfg, "--runs-dir", "runs")
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"unknown metric 'mean_retrun': the notebook {TRAIN} records run_id, mean_return, " in r.stderr, r.stderr
    assert not (tmp_path / "runs").exists()


RESUMED_STEPS = 9600  # 300 updates: the kill comes at the first checkpoint, after 20


@pytest.fixture(scope="module")
def resumed_sweep(tmp_path_factory):
    """A sweep of 2 trials SIGKILLed once its first trial has a checkpoint (the trial gets SIGTERM, saves and stops),
    then resumed to the end: (its folder, its store, its row, the first trial, the trials at the kill, the resume's
    result). Two tests read it."""
    from workbench.train.checkpoint import find_checkpoint, load_checkpoint

    tmp_path = tmp_path_factory.mktemp("resumed")
    small = SMALL.replace("eval_every = 4", "eval_every = 50")
    total = RESUMED_STEPS
    cfg = sweep_file(
        tmp_path,
        small + f'total_timesteps = {total}\ncheckpoint_every = 20\n[sweep]\nmethod = "random"\ntrials = 2\n' + LR,
    )
    proc = start_workbench("sweep", "--config", cfg, "--runs-dir", "runs", cwd=tmp_path, stderr=subprocess.STDOUT)
    runs = tmp_path / "runs"
    try:
        store = wait_for(lambda: (runs / "workbench.db").exists() and RunStore(runs), timeout=60, what="the store")
        sweep = wait_for(lambda: (store.sweeps() or [None])[0], timeout=60, what="the sweep's row")
        first = wait_for(  # its row can be there a moment before its run is
            lambda: next((t for t in store.trials(sweep["id"])[:1] if t["run_id"]), None),
            timeout=60,
            what="the first trial's run",
        )
        wait_for(
            lambda: list((runs / first["run_id"]).glob("checkpoints/step_*.pt")),
            timeout=240,
            interval=0.05,
            what="the first trial's first checkpoint",
        )
    finally:
        proc.kill()
    out = proc.communicate(timeout=30)[0]
    wait_for(lambda: not processes_of(tmp_path), timeout=60, what="the trial to die with the sweep")
    before = store.trials(sweep["id"])
    saved = find_checkpoint(runs / first["run_id"])  # the newest checkpoint, where the resumed trial will go on from
    stopped_at = load_checkpoint(saved)["counters"]["global_step"] if saved else None
    r = workbench("sweep", "--resume", sweep["id"], "--runs-dir", "runs", "--json", cwd=tmp_path, timeout=400)
    return tmp_path, store, sweep, first, (before, out, stopped_at), r


def test_a_resumed_sweep_continues_the_interrupted_trial_from_its_checkpoint(resumed_sweep):
    """Resumed, the trial cut short continues its run from its newest checkpoint, not from step 0, to the steps of a
    trial never stopped."""
    from workbench.jobs.sweep import RUN_METRIC_PREFIXES, TRAIN_METRICS

    tmp_path, store, sweep, first, (before, out, stopped_at), r = resumed_sweep
    runs, total = tmp_path / "runs", RESUMED_STEPS
    assert [t["status"] for t in before] == ["running"], (before, out)
    assert stopped_at is not None and 0 < stopped_at < total
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "0 already ended, 1 to run again" in r.stdout and "resumed t000 from its checkpoint step_" in r.stdout
    resumed, never_stopped = store.trials(sweep["id"])
    assert [resumed["status"], never_stopped["status"]] == ["finished", "finished"], (resumed, never_stopped)
    assert (resumed["run_id"], resumed["attempts"], never_stopped["attempts"]) == (first["run_id"], 2, 1)
    # It continued its run from the checkpoint (not from step 0)...
    assert [e["step"] for e in store.events(first["run_id"], "resumed")] == [stopped_at]
    starts = [e["step"] for e in store.events(first["run_id"], "status") if e["data"]["status"] == "running"]
    assert starts == [0, stopped_at]
    # ...to the steps of a trial that was never stopped, with one row a step.
    run, other = store.get_run(resumed["run_id"]), store.get_run(never_stopped["run_id"])
    assert run["status"] == other["status"] == "finished" and run["global_step"] == other["global_step"] > stopped_at
    updates = [m["step"] for m in store.metrics(run["id"], "charts/update")]
    assert updates == [m["step"] for m in store.metrics(other["id"], "charts/update")]
    assert updates == list(range(32, total + 32, 32))  # every update once
    # Its curve is in seconds of training, across the two attempts; scored as any other trial.
    seconds = [c[1] for c in resumed["curve"]]
    assert seconds == sorted(seconds) and seconds[0] >= 0 and [c[0] for c in resumed["curve"]][-1] == run["global_step"]
    assert resumed["score"] == max(c[2] for c in resumed["curve"]) and resumed["cost"] > 0
    # The metrics a sweep can score are those every training run records (and an env's own, env/ and agent/).
    keys = {k for k in store.metric_keys(other["id"]) if not k.startswith(RUN_METRIC_PREFIXES)}
    assert keys - {"total"} == set(TRAIN_METRICS)  # (total: the run's step budget, sent with each update)
    assert integrity(runs) == "ok"


def test_sweeps_page_api_and_report(resumed_sweep):
    """A real sweep of two trials (the one killed and resumed), then: its report, the read-only API over it, and the
    Sweeps page in Chromium, offline."""
    import urllib.request

    from playwright.sync_api import sync_playwright

    from conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, NOT_LOOPBACK, offline_page
    from test_app import Server

    tmp_path, _, _, _, _, r = resumed_sweep
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    row = json.loads(r.stdout.strip().splitlines()[-1])
    report = (
        (tmp_path / row["report"]) if not row["report"].startswith("/") else __import__("pathlib").Path(row["report"])
    )
    page_html = report.read_text()
    assert "Score against cost" in page_html and "Parameters against score" in page_html
    assert '<script src="http' not in page_html
    # light (plotly.js once, in the sweeps folder's _static/, loaded by a relative path), and whole offline
    assert len(page_html) < 1_000_000 and list((report.parent.parent / "_static").glob("plotly-*.min.js"))
    with offline_page(report) as (page, requests):
        page.locator(".js-plotly-plot svg.main-svg").first.wait_for(timeout=30_000)
        assert page.locator(".js-plotly-plot").count() == 3
        assert not [u for u in requests if not u.startswith(("file:", "data:", "blob:", "about:"))], requests

    server = Server(tmp_path / "runs")
    try:

        def get(path):
            with urllib.request.urlopen(f"{server.base}/api/{path}", timeout=60) as resp:
                return json.loads(resp.read())

        (listed,) = get("sweeps")["sweeps"]
        assert (listed["id"], listed["trials"], listed["counts"]) == (row["id"], 2, {"finished": 2})
        detail = get(f"sweeps/{row['id']}")
        assert [t["status"] for t in detail["trials"]] == ["finished", "finished"] and detail["pareto"]
        assert len(detail["best_so_far"]) == 2 and detail["best_so_far"][-1] == row["best"]["score"]
        trends = get("performance/trends")
        assert trends["runs"] == 2 and len(trends["envs"]["gym:CartPole-v1"]["sps"]) == 2
        with pytest.raises(urllib.error.HTTPError) as e:
            get("sweeps/nope")
        assert e.value.code == 404

        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = b.new_page(viewport={"width": 1024, "height": 900})
            requested = []
            page.on("request", lambda req: requested.append(req.url))
            page.goto(f"{server.base}/sweeps?id={row['id']}")
            page.locator(".wb-sweep-charts .js-plotly-plot").nth(2).wait_for(timeout=60_000)
            assert page.locator(".wb-sweep-charts .js-plotly-plot").count() == 3  # best so far, parameters, cost
            assert page.locator(".wb-trials .tabulator-row").count() == 2
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "sweeps_page.png"), full_page=True)
            b.close()
        assert [u for u in requested if NOT_LOOPBACK.match(u)] == []
    finally:
        server.stop()


def test_a_grpo_code_agents_sweep_on_the_sweeps_page(tmp_path):
    """Issue 57: a sweep of a GRPO code agent's learning rate and group size (the example config: 4 short trials, 2 at a
    time), scored by its held-out val pass@1; its trials are GRPO runs with the values they drew, and the Sweeps page
    shows them (in Chromium, offline)."""
    import urllib.request

    from conftest import loopback_only_page
    from test_app import Server

    config = ROOT / "nbs" / "experiments" / "sweeps" / "code_agent_grpo.toml"
    r = workbench("sweep", "--config", config, "--runs-dir", tmp_path / "runs", "--json", cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    row = json.loads(r.stdout.strip().splitlines()[-1])
    assert (row["metric"], row["status"]) == ("eval/pass_rate", "finished")
    store = RunStore(tmp_path / "runs")
    trials = store.trials(row["id"])
    assert [t["status"] for t in trials] == ["finished"] * 4
    for t in trials:  # each a GRPO run of the values it drew, scored by its evaluations' pass rate
        run = store.get_run(t["run_id"])
        assert run["config"]["algo"] == "grpo" and run["config"]["grpo"]["group_size"] == t["parameters"]["group_size"]
        assert run["config"]["optim"]["learning_rate"] == t["parameters"]["learning_rate"]
        assert t["score"] == max(e["data"]["pass_rate"] for e in store.events(t["run_id"], "eval"))
    store.close()
    server = Server(tmp_path / "runs")
    try:
        with urllib.request.urlopen(f"{server.base}/api/sweeps/{row['id']}", timeout=60) as resp:
            assert len(json.loads(resp.read())["trials"]) == 4
        with loopback_only_page(1024, 900) as (page, blocked):
            page.goto(f"{server.base}/sweeps?id={row['id']}")
            page.locator(".wb-trials .tabulator-row").nth(3).wait_for(timeout=60_000)
            assert page.locator(".wb-trials .tabulator-row").count() == 4
            page.get_by_text("eval/pass_rate (maximize)").first.wait_for(timeout=30_000)  # the sweep's metric
        assert blocked == []
    finally:
        server.stop()


@pytest.mark.parametrize("name", ["cartpole", "pendulum_pbt", "code_agent_grpo"])
def test_example_sweep_configs_plan(tmp_path, name):
    "The example sweeps in nbs/experiments/sweeps/ pass every check a sweep makes before it starts."
    from workbench.jobs.sweep import plan_sweep

    plan = plan_sweep(ROOT / "nbs" / "experiments" / "sweeps" / f"{name}.toml", runs_dir=tmp_path / "runs")
    assert plan["kind"] == "train" and plan["params"] and not (tmp_path / "runs").exists()
