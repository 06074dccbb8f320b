"""SIGUSR1 saves a checkpoint and training goes on; SIGTERM saves one and exits 0. A batch, a sweep or a population
stopped by a signal stops its running work and records itself as interrupted."""

import json
import signal

import nbformat
import pytest

from conftest import TINY, processes_of, start_workbench, wait_for
from workbench.train.checkpoint import load_checkpoint
from workbench.runs.store import RunStore


def _run(store):
    runs = store.runs()
    return runs[0] if runs else None


def test_sigusr1_checkpoints_and_sigterm_stops_cleanly(runs_dir):
    proc = start_workbench(
        "train",
        "--env",
        "gym:CartPole-v1",
        "--total-steps",
        10_000_000,
        *TINY,
        "--checkpoint-every",
        0,
        "--runs-dir",
        runs_dir,
    )
    try:
        wait_for(lambda: (runs_dir / "workbench.db").exists(), what="the run store")
        store = RunStore(runs_dir)
        run = wait_for(lambda: (r := _run(store)) and r["global_step"] > 0 and r, what="training to start")
        proc.send_signal(signal.SIGUSR1)
        ckpt = wait_for(
            lambda: [c for c in store.checkpoints(run["id"]) if c["reason"] == "SIGUSR1"], what="the SIGUSR1 checkpoint"
        )[0]
        step_at_signal = ckpt["step"]
        # Training goes on after SIGUSR1.
        wait_for(lambda: store.get_run(run["id"])["global_step"] > step_at_signal, what="training to continue")
        assert proc.poll() is None
        assert load_checkpoint(ckpt["path"])["counters"]["global_step"] == step_at_signal

        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    final = store.checkpoints(run["id"])[-1]
    assert final["reason"] == "stop" and final["step"] > step_at_signal
    assert load_checkpoint(final["path"])["counters"]["global_step"] == final["step"]
    assert store.get_run(run["id"])["status"] == "stopped"
    sources = [(e["data"]["action"], e["data"]["source"]) for e in store.events(run["id"], "control")]
    assert sources == [("checkpoint", "SIGUSR1"), ("stop", "SIGTERM")]
    assert "Traceback" not in err


SLEEPER = [
    nbformat.v4.new_code_cell("x = 0.5", metadata={"tags": ["parameters"]}),
    nbformat.v4.new_code_cell(
        "import time; time.sleep(60)\nfrom workbench.jobs.notebook import record_result\nrecord_result(score=x)"
    ),
]
SWEEP = (
    '[sweep]\nmethod = "random"\ntrials = 3\nmax_parallel = 2\nmetric = "score"\n'
    '[sweep.x]\ndistribution = "uniform"\nmin = 0.0\nmax = 1.0\n'
)
PBT = (
    'env = "gym:CartPole-v1"\ntotal_timesteps = 10000000\nnum_envs = 2\nnum_steps = 16\nupdate_epochs = 1\ndevice = "cpu"\n'
    '[sweep]\nmethod = "pbt"\npopulation = 2\nrounds = 2\nmax_parallel = 2\n'
    '[sweep.learning_rate]\ndistribution = "log_normal"\nmin = 1e-4\nmax = 1e-2\n'
)


def _running_jobs(folder):
    return [f for f in folder.glob("**/jobs/*/job.json") if json.loads(f.read_text())["status"] == "running"]


@pytest.mark.parametrize("kind, sig", [("batch", signal.SIGTERM), ("sweep", signal.SIGINT), ("pbt", signal.SIGTERM)])
def test_a_batch_sweep_or_population_stops_its_running_work_on_a_signal(tmp_path, kind, sig):
    """The scheduler's one interrupt path: SIGINT or SIGTERM stops the running jobs, trials or members, each is recorded
    as stopped, the whole as interrupted, the command exits 130, and nothing it started is left."""
    nbformat.write(nbformat.v4.new_notebook(cells=SLEEPER), tmp_path / "nb.ipynb")
    (tmp_path / "sweep.toml").write_text(SWEEP)
    (tmp_path / "pbt.toml").write_text(PBT)
    args = {
        "batch": ["batch", "nb.ipynb", "--grid", "x=0.1,0.2,0.3", "--max-parallel", 2, "--out", "reports"],
        "sweep": ["sweep", "nb.ipynb", "--config", "sweep.toml"],
        "pbt": ["sweep", "--config", "pbt.toml"],
    }[kind]
    # SIGINT as a terminal's foreground command has it: a shell's background job (`make test &`, nohup) starts its
    # children with SIGINT ignored, and a Python started so never turns it into KeyboardInterrupt
    default_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
    proc = start_workbench(*args, "--runs-dir", "runs", cwd=tmp_path, preexec_fn=default_sigint)
    try:
        if kind == "pbt":
            store = wait_for(lambda: (tmp_path / "runs/workbench.db").exists() and RunStore(tmp_path / "runs"))
            wait_for(lambda: len([r for r in store.runs() if r["global_step"] > 0]) == 2, what="both members training")
        else:
            wait_for(lambda: len(_running_jobs(tmp_path)) == 2, what="two notebook jobs running")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out[-2000:] + err[-2000:]
    assert (
        f"interrupted; stopping 2 running {'job' if kind == 'batch' else 'trial' if kind == 'sweep' else 'member'}(s)"
        in out
    )
    wait_for(lambda: not processes_of(tmp_path), timeout=30, what="everything it started to exit")
    if kind == "batch":
        assert json.loads(next(tmp_path.glob("reports/*/batch.json")).read_text())["status"] == "interrupted"
        assert next(tmp_path.glob("reports/*/index.html")).exists()
    else:
        store = RunStore(tmp_path / "runs")
        (sweep,) = store.sweeps()
        assert sweep["status"] == "interrupted", sweep
    if kind == "sweep":
        assert [t["status"] for t in store.trials(sweep["id"])] == ["interrupted", "interrupted"]
    if kind == "pbt":  # each member saved where it was stopped, so --resume continues it
        for member in store.trials(sweep["id"]):
            assert [c["reason"] for c in store.checkpoints(member["run_id"])][-1:] == ["stop"], member
    if kind == "batch":  # a batch's jobs record themselves as interrupted
        assert not _running_jobs(tmp_path) and len(list(tmp_path.glob("reports/*/jobs/*/job.json"))) == 2
