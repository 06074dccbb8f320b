"`workbench run`: real papermill kernels, a real `accelerate launch`, the run store, and reports opened in Chromium offline."

import json, re, subprocess, time
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT, WORKBENCH, offline_page, workbench, workbench_main
from workbench.runs.store import RunStore

TRAIN = ROOT / "nbs" / "experiments" / "train.ipynb"
SMALL = ["-p", "total_timesteps", "4096", "-p", "eval_episodes", "5", "-p", "eval_every", "8", "-p", "device", "cpu"]


def job_dir_of(record):
    return Path(record["report"]).parent


@pytest.fixture(scope="module")
def train_job(tmp_path_factory):
    "One `workbench run` of train.ipynb with overrides; its output lines are timed as they arrive."
    tmp = tmp_path_factory.mktemp("job")
    proc = subprocess.Popen(
        [
            *WORKBENCH,
            "run",
            str(TRAIN),
            *SMALL,
            "-p",
            "seed",
            "3",
            "-p",
            "learning_rate",
            "0.002",
            "--out",
            "reports",
            "--runs-dir",
            "runs",
            "--json",
        ],
        cwd=tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = [(time.monotonic(), line) for line in proc.stdout]
    proc.wait(timeout=300)
    ended = time.monotonic()
    assert proc.returncode == 0, "".join(l for _, l in lines)[-3000:]
    record = json.loads(lines[-1][1])
    return tmp, record, lines, ended


def test_run_executes_and_records(train_job):
    tmp, record, lines, ended = train_job
    job_dir = tmp / job_dir_of(record)
    assert record["status"] == "finished" and job_dir.parent == tmp / "reports"
    # The executed notebook: parameters injected by papermill, every code cell run, no errors.
    nb = nbformat.read(job_dir / "notebook.ipynb", as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "seed = 3" in injected[0].source and "learning_rate = 0.002" in injected[0].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    # The store: the job with its parameters, status, duration, report and result, and the run it trained.
    store = RunStore(tmp / "runs")
    job = store.get_job(record["id"])
    assert (
        job["status"] == "finished" and job["parameters"]["seed"] == 3 and job["parameters"]["learning_rate"] == 0.002
    )
    assert job["duration"] > 0 and job["report_path"] == record["report"] and job["notebook"] == str(TRAIN)
    assert job["result"]["global_step"] == 4096 and job["result"]["world_size"] == 1
    run = store.get_run(job["result"]["run_id"])
    assert run["status"] == "finished" and run["config"]["run"]["seed"] == 3
    # The report: parameters, result and environment at the top; the chart's data; plotly.js loaded once, from the
    # reports folder's shared copy (the default).
    page = (job_dir / "index.html").read_text()
    assert "<td>seed</td><td>3</td>" in page and "mean_return" in page and "world size" in page
    assert f"<title>{record['id']} · finished · train.ipynb · Workbench</title>" in page
    assert "<td>global_step</td><td>4,096</td>" in page and "<td>total_timesteps</td><td>4,096</td>" in page
    shared = re.findall(r'<script src="(\.\./_static/plotly-[^"]+\.min\.js)"', page)
    assert len(shared) == 1 and (job_dir / shared[0]).is_file() and "plotly.js v" not in page, shared
    assert "require.min.js" not in page
    assert '<script src="http' not in page and '<link href="http' not in page  # nothing from a CDN
    index = (tmp / "reports" / "index.html").read_text()
    assert (
        f"{record['id']}/index.html" in index and "mean_return" in index and "<td data-value='4096'>4,096</td>" in index
    )
    assert "<title>Reports · 1 job(s) · Workbench</title>" in index


def test_run_streams_progress_while_running(train_job):
    _, _, lines, ended = train_job
    progress = [t for t, line in lines if line.startswith("step ") and "steps/s" in line]
    assert progress, "no progress lines"
    # Buffered output would arrive all at once, when the kernel exits; streamed progress comes well before the end
    # (the final evaluation and the report still have to run after it).
    assert ended - progress[0] > 1, "progress arrived only at the end"


def test_unknown_parameter_fails_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args, message in [
        (["-p", "learning_rat", "0.1"], "unknown parameter 'learning_rat' for train.ipynb"),
        (["-p", "seed", "three"], "parameter seed of train.ipynb must be int"),
        (["--processes", "0"], "--processes must be at least 1"),
    ]:
        r = workbench_main("run", TRAIN, *args, "--out", "reports", "--runs-dir", "runs")  # no interpreter to start
        assert r.returncode == 2 and r.stdout == "", r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, r.stderr
    r = workbench_main("run", tmp_path / "missing.ipynb")
    assert r.returncode == 2 and "notebook not found" in r.stderr
    assert list(tmp_path.iterdir()) == [], "nothing may be created before the checks pass"


def test_failing_notebook_still_reports(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("limit = 3\nruns_dir = 'runs'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("print('before the failure')"),
        nbformat.v4.new_code_cell("raise ValueError(f'diverged after {limit} updates')"),
        nbformat.v4.new_code_cell("print('never reached')"),
    ]
    nbformat.write(nb, tmp_path / "fails.ipynb")
    r = workbench("run", "fails.ipynb", "-p", "limit", "7", "--out", "reports", "--runs-dir", "runs", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "failed" in r.stderr and "at In [4]: ValueError: diverged after 7 updates" in r.stderr
    (job,) = RunStore(tmp_path / "runs").jobs()
    assert job["status"] == "failed" and "diverged after 7 updates" in job["error"]
    page = (tmp_path / job["report_path"]).read_text()
    assert "The job failed at In [4]: ValueError: diverged after 7 updates" in page  # In [2] is the injected parameters
    assert "before the failure" in page and "never reached" in page  # the cells are all there, the rest not run
    executed = nbformat.read(tmp_path / job["out_dir"] / "notebook.ipynb", as_version=4)
    errors = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors and errors[0]["ename"] == "ValueError"
    assert not (tmp_path / job["out_dir"] / ".notebook.part.ipynb").exists()


@pytest.mark.multiproc
def test_two_process_job_trains_as_one(tmp_path):
    # 4 updates of 2 ranks x 8 envs x 32 steps, 2 epochs each: enough to see the ranks stay in step
    small = ["-p", "total_timesteps", "2048", "-p", "update_epochs", "2", "-p", "eval_episodes", "3"]
    r = workbench(
        "run",
        TRAIN,
        *small,
        "-p",
        "eval_every",
        "2",
        "-p",
        "device",
        "cpu",
        "--processes",
        "2",
        "--cpu",
        "--out",
        "reports",
        "--runs-dir",
        "runs",
        "--json",
        cwd=tmp_path,
        timeout=600,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    record = json.loads(r.stdout.strip().splitlines()[-1])
    job_dir = tmp_path / job_dir_of(record)
    ranks = [json.loads((job_dir / "ranks" / f"rank{i}.json").read_text()) for i in (0, 1)]
    assert [x["world_size"] for x in ranks] == [2, 2] and [x["rank"] for x in ranks] == [0, 1]
    assert ranks[0]["weights_sha256"] == ranks[1]["weights_sha256"], "the ranks ended with different weights"
    assert ranks[0]["global_step"] == 2048
    # Rank 0 wrote the notebook, the report, the run and the job; rank 1 only its own notebook.
    store = RunStore(tmp_path / "runs")
    assert len(store.runs()) == 1 and store.get_job(record["id"])["processes"] == 2
    assert (job_dir / "ranks" / "rank1.ipynb").exists()
    page = (job_dir / "index.html").read_text()
    assert "<td>world size</td><td>2</td>" in page and "<td>backend</td><td>gloo</td>" in page


def test_report_renders_offline_in_chromium(train_job):
    tmp, record, _, _ = train_job
    with offline_page(tmp / record["report"]) as (page, requests):
        page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
        assert page.locator(".js-plotly-plot .scatterlayer .trace").count() >= 3
        # Code cells collapse: one by one, and all at once.
        first = page.locator(".jp-CodeCell").first
        first.locator(".wb-cell-toggle").click()
        assert not first.locator(".jp-Cell-inputWrapper").is_visible()
        page.locator("#wb-toggle-all").click()
        assert page.locator(".jp-CodeCell .jp-Cell-inputWrapper:visible").count() == 0
    assert not [u for u in requests if not u.startswith(("file:", "data:"))], requests


def test_report_command_rebuilds(train_job):
    tmp, record, _, _ = train_job
    job_dir = tmp / job_dir_of(record)
    (job_dir / "index.html").unlink()
    (tmp / "reports" / "index.html").unlink()
    r = workbench("report", "--out", "reports", cwd=tmp)
    assert r.returncode == 0, r.stderr
    assert (job_dir / "index.html").exists() and (tmp / "reports" / "index.html").exists()
    r = workbench("report", "no-such-job", "--out", "reports", cwd=tmp)
    assert r.returncode == 2 and "no job or batch no-such-job" in r.stderr
