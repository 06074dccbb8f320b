"The run store under several writer processes at once."

import multiprocessing as mp

import pytest

from workbench.runs.store import RunStore

pytestmark = pytest.mark.multiproc


def writer(runs_dir, index, updates):
    store = RunStore(runs_dir)
    run_id = store.create_run(f"writer{index}", {"index": index})
    for step in range(updates):
        store.log_metrics(run_id, step, {"loss": float(step), "charts/episodic_return": index + step / 10})
        store.log_event(run_id, step, "control", {"action": "set", "i": index})
    store.update_run(run_id, status="finished", global_step=updates)
    store.close()


def test_concurrent_writers(tmp_path):
    procs = [mp.get_context("spawn").Process(target=writer, args=(tmp_path, i, 200)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert all(p.exitcode == 0 for p in procs)
    store = RunStore(tmp_path)
    runs = store.runs()
    assert len(runs) == 4 and all(r["status"] == "finished" for r in runs)
    for r in runs:
        assert len(store.metrics(r["id"], "loss")) == 200
        assert [m["step"] for m in store.metrics(r["id"], "loss")] == list(range(200))
        assert len(store.events(r["id"], "control")) == 200
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def opener(runs_dir, go, index):
    go.wait(60)
    store = RunStore(runs_dir)
    store.create_run(f"opener{index}", {"index": index})
    store.close()


def test_many_processes_open_a_new_store_at_once(tmp_path):
    "Jobs of a batch start together and each opens the store: the first opening of a new file must not race."
    ctx = mp.get_context("fork")
    for attempt in range(5):
        go, runs_dir = ctx.Event(), tmp_path / f"runs{attempt}"
        procs = [ctx.Process(target=opener, args=(runs_dir, go, i)) for i in range(8)]
        for p in procs:
            p.start()
        go.set()
        for p in procs:
            p.join(120)
        assert [p.exitcode for p in procs] == [0] * 8, f"attempt {attempt}: {[p.exitcode for p in procs]}"
        assert len(RunStore(runs_dir).runs()) == 8


def kill_a_training_run(runs_dir, checkpoint_every: int) -> dict:
    """Start `workbench train` for a long run and SIGKILL it once it has trained (and, with `checkpoint_every`, written
    a checkpoint); its row in the store, read afterwards."""
    import signal, subprocess
    from pathlib import Path

    from conftest import WORKBENCH, wait_for

    args = ["train", "--total-timesteps", "50000000", "--checkpoint-every", str(checkpoint_every), "--eval-every", "0"]
    proc = subprocess.Popen([*WORKBENCH, *args, "--quiet", "--runs-dir", str(runs_dir)], stdout=subprocess.DEVNULL)
    store = RunStore(runs_dir)
    # with checkpoints, one on disk too: the store sees an update's step just before its checkpoint is written
    saved = lambda r: not checkpoint_every or list(Path(r["run_dir"]).glob("checkpoints/step_*.pt"))
    try:
        run = wait_for(
            lambda: [r for r in store.runs() if r["status"] == "running" and r["global_step"] > 0 and saved(r)],
            timeout=120,
            what="the run to train" + (" and checkpoint" if checkpoint_every else ""),
        )[0]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    return store.get_run(run["id"])


def test_a_killed_run_reads_as_interrupted_with_how_to_resume(tmp_path):
    "SIGKILL leaves no chance to record an end: the store sees the pid gone and says `interrupted`, and how to resume."
    from conftest import last_json, workbench_main
    from workbench.app.pages import run_head

    run, store = kill_a_training_run(tmp_path, checkpoint_every=1), RunStore(tmp_path)
    assert run["status"] == "interrupted" and [r["id"] for r in store.runs("interrupted")] == [run["id"]]
    assert f"workbench train --resume {run['run_dir']}" in run_head(run)
    resumed = workbench_main("train", "--resume", run["run_dir"], "--total-timesteps", 1, "--json", "--quiet")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert store.get_run(run["id"])["status"] in ("finished", "stopped"), last_json(resumed.stdout)


def test_a_killed_run_without_checkpoints_says_how_to_start_it_again(tmp_path):
    "No checkpoint to resume from: the run's page gives the command that trains it again from its `config.json`."
    import shlex

    from conftest import workbench_main
    from workbench.app.pages import run_head

    run, store = kill_a_training_run(tmp_path, checkpoint_every=0), RunStore(tmp_path)
    assert run["status"] == "interrupted" and store.checkpoints(run["id"]) == []
    head = run_head(run, "", len(store.checkpoints(run["id"])))
    assert "saved no checkpoint to resume from" in head and "--resume" not in head
    command = head.split("<code>")[1].split("</code>")[0]
    assert command == f"workbench train --config {run['run_dir']}/config.json"
    again = workbench_main(*shlex.split(command)[1:], "--total-timesteps", 512, "--json", "--quiet")
    assert again.returncode == 0, again.stderr[-2000:]
    (new,) = store.runs("finished")  # the same settings, but the steps given on the command line
    assert {**new["config"], "ppo": {**new["config"]["ppo"], "total_timesteps": 50_000_000}} == run["config"]
