"SIGUSR1 saves a checkpoint and training goes on; SIGTERM saves one and exits 0."

import signal

from conftest import TINY, start_workbench, wait_for
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
