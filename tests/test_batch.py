"`workbench batch`: a grid of real papermill jobs, K at a time, killed with SIGKILL and resumed; on a local Ray cluster."

import json, re, subprocess

import pytest

from conftest import ROOT, WORKBENCH, offline_page, processes_of, wait_for, workbench, workbench_main
from workbench.runs.sinks import fmt_number
from workbench.runs.store import RunStore

TRAIN = ROOT / "nbs" / "experiments" / "train.ipynb"
# 4 updates of 512 steps (8 envs x 64), 2 epochs each: the batch's claims do not need a trained policy
SMALL = ["-p", "total_timesteps", "2048", "-p", "num_steps", "64", "-p", "update_epochs", "2"]
SMALL += ["-p", "eval_episodes", "3", "-p", "eval_every", "2", "-p", "device", "cpu"]
GRID = ["--grid", "seed=1,2", "--grid", "learning_rate=0.001,0.0025"]


def states(batch_dir):
    out = {}
    for job in json.loads((batch_dir / "batch.json").read_text())["jobs"]:
        f = batch_dir / "jobs" / job["id"] / "job.json"
        out[job["id"]] = json.loads(f.read_text()) if f.exists() else {"status": "pending"}
    return out


def max_overlap(jobs):
    "The most jobs that ran at the same time, from their start and end times."
    events = sorted([(j["started_at"], 1) for j in jobs] + [(j["ended_at"], -1) for j in jobs])
    now = most = 0
    for _, d in events:
        now += d
        most = max(most, now)
    return most


@pytest.fixture(scope="module")
def resumed_batch(tmp_path_factory):
    """A batch of 4 jobs, 2 at a time, SIGKILLed once one job has finished, then resumed to the end: (its folder, the
    job states at the kill, the kill's output, the resume's result). Two tests read it."""
    tmp_path = tmp_path_factory.mktemp("batch")
    cmd = [
        *WORKBENCH,
        "batch",
        str(TRAIN),
        *GRID,
        *SMALL,
        "--max-parallel",
        "2",
        "--out",
        "reports",
        "--runs-dir",
        "runs",
    ]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    batch_dir = wait_for(
        lambda: next((tmp_path / "reports").glob("*/batch.json"), None), timeout=60, what="batch.json"
    ).parent
    # Kill the batch (SIGKILL: no chance to clean up) once one job has finished and others are still to run.
    wait_for(
        lambda: any(s["status"] == "finished" for s in states(batch_dir).values()),
        timeout=240,
        interval=0.2,
        what="a finished job",
    )
    proc.kill()
    out = proc.communicate(timeout=30)[0]
    # Its jobs die with it (PR_SET_PDEATHSIG), kernels included, and record themselves as interrupted.
    wait_for(lambda: not processes_of(tmp_path), timeout=60, what="the batch's jobs and kernels to exit")
    before = states(batch_dir)

    # --resume runs only the unfinished jobs, and leaves the finished ones as they were.
    r = workbench(
        "batch",
        TRAIN,
        *GRID,
        *SMALL,
        "--max-parallel",
        "2",
        "--out",
        "reports",
        "--runs-dir",
        "runs",
        "--resume",
        "--json",
        cwd=tmp_path,
        timeout=400,
    )
    return tmp_path, batch_dir, before, out, r


def test_batch_killed_then_resumed(resumed_batch):
    tmp_path, batch_dir, before, out, r = resumed_batch
    finished = {k for k, s in before.items() if s["status"] == "finished"}
    assert 1 <= len(finished) < 4, (before, out)
    assert {s["status"] for k, s in before.items() if k not in finished} <= {"interrupted", "pending"}, before
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["status"] == "finished" and summary["finished"] == 4
    assert set(summary["ran"]) == set(before) - finished
    assert f"{len(finished)} of 4 jobs already finished" in r.stdout
    after = states(batch_dir)
    assert all(s["status"] == "finished" for s in after.values())
    for k in finished:
        assert after[k]["started_at"] == before[k]["started_at"], "a finished job ran again"

    # At most 2 ran at once, and 2 did run at once.
    assert max_overlap(list(after.values())) == 2
    # The store: every job of the batch, finished, with its result and run.
    store = RunStore(tmp_path / "runs")
    rows = store.jobs(batch_id=summary["id"])
    assert len(rows) == 4 and {j["status"] for j in rows} == {"finished"}
    assert all(store.get_run(j["result"]["run_id"])["status"] == "finished" for j in rows)
    # The comparison report: one row per job with its final score, the scores over seeds with a labelled ±,
    # the curves grouped by learning rate (mean, min-max band, faint seeds), plotly.js shared, numbers for people.
    page = (batch_dir / "index.html").read_text()
    for job_id, s in after.items():
        assert f"jobs/{job_id}/index.html" in page and fmt_number(s["result"]["mean_return"]) in page
    assert f"<title>batch {summary['id']} · finished · 4/4 finished · train.ipynb · Workbench</title>" in page
    assert "<th>mean_return (mean ± sd over seeds)</th>" in page and "ci95_low (mean" not in page
    for lr in ("0.001", "0.0025"):
        assert (
            f'"learning_rate={lr}: mean of 2 seeds"' in page and f'"learning_rate={lr}: min-max over 2 seeds"' in page
        )
    assert "plotly.js v" not in page and '<script src="../_static/plotly-' in page and '<script src="http' not in page
    seen = re.sub(r"<script\b.*?</script>", "", page, flags=re.S)
    assert "e+0" not in seen and "<td data-value='2048'>2,048</td>" in seen
    index = (tmp_path / "reports" / "index.html").read_text()
    assert f"{summary['id']}/index.html" in index and "4/4" in index


def test_batch_report_renders_offline(resumed_batch):
    "The resumed batch's comparison report, opened in Chromium with the network unavailable."
    _, batch_dir, _, _, r = resumed_batch
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    with offline_page(batch_dir / "index.html") as (page, requests):
        page.wait_for_selector(".js-plotly-plot svg.main-svg", timeout=30000)
        assert page.title().startswith(f"batch {batch_dir.name} · finished · 4/4 finished")
        assert page.locator(".js-plotly-plot .scatterlayer .trace").count() >= 4  # one curve per job, at least
        page.locator("th", has_text="mean_return").first.click()
        assert not [u for u in requests if not u.startswith(("file:", "data:", "blob:", "about:"))]


def test_batch_bad_input(tmp_path, monkeypatch):
    "Each refused in this process (`main`, no interpreter to start): exit 2, one line, nothing created."
    monkeypatch.chdir(tmp_path)
    for args, message in [
        (["--grid", "sed=1,2"], "unknown parameter 'sed' for train.ipynb"),
        (["--grid", "seed=1,two"], "parameter seed of train.ipynb must be int"),
        (["--grid", "seed"], "expected NAME=V1,V2"),
        ([], "a batch needs at least one --grid"),
        (["--grid", "seed=1,2", "-p", "seed", "3"], "seed is set both"),
        (["--grid", "seed=1,2", "--max-parallel", "0"], "--max-parallel must be at least 1"),
        (["--grid", "seed=1,2", "--resume"], "no earlier batch of train.ipynb with this grid"),
    ]:
        r = workbench_main("batch", TRAIN, *args, "--out", "reports", "--runs-dir", "runs")
        assert r.returncode == 2 and r.stdout == "", (args, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == [], "nothing may be created before the checks pass"
