"A run killed with SIGKILL resumes from its last checkpoint and finishes; every checkpoint loads."

import json, signal

from conftest import TINY, start_workbench, workbench, wait_for, last_json
from workbench.train.checkpoint import load_checkpoint
from workbench.runs.store import RunStore

TOTAL = 40_000


def test_sigkill_then_resume(runs_dir):
    proc = start_workbench(
        "train",
        "--env",
        "gym:CartPole-v1",
        "--total-steps",
        TOTAL,
        *TINY,
        "--checkpoint-every",
        5,
        "--keep-last",
        2,
        "--runs-dir",
        runs_dir,
        "--name",
        "killme",
    )
    try:
        ckpt_dir = wait_for(lambda: next(runs_dir.glob("killme-*/checkpoints"), None), what="a checkpoint folder")
        wait_for(lambda: len(list(ckpt_dir.glob("step_*.pt"))) >= 2, what="two checkpoints")
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    run_dir = ckpt_dir.parent

    steps = sorted(ckpt_dir.glob("step_*.pt"))
    last_step = load_checkpoint(steps[-1])["counters"]["global_step"]
    assert 0 < last_step < TOTAL
    store = RunStore(runs_dir)
    (run,) = store.runs()
    assert run["status"] == "interrupted"  # killed: nobody recorded an end, and its process is gone

    r = workbench("train", "--resume", run_dir, "--quiet", "--json")
    assert r.returncode == 0, r.stderr
    summary = last_json(r.stdout)
    assert summary["global_step"] == TOTAL and summary["run_dir"] == str(run_dir)

    # The resumed run continued from the checkpoint's global step, not from zero.
    updates = [m["step"] for m in store.metrics(run["id"], "charts/update")]
    resumed = [e for e in store.events(run["id"], "resumed")]
    assert len(resumed) == 1 and resumed[0]["step"] == last_step
    after = [s for s in updates if s > last_step]
    assert after and min(after) == last_step + 2 * 16  # the very next update
    status = [e for e in store.events(run["id"], "status") if e["data"].get("resumed")]
    assert status and status[0]["step"] == last_step
    assert store.get_run(run["id"])["status"] == "finished"
    assert json.loads((run_dir / "config.json").read_text())["ppo"]["total_timesteps"] == TOTAL

    # Every checkpoint on disk loads, and the counters only grow.
    files = sorted(ckpt_dir.glob("*.pt"))
    assert (ckpt_dir / "best.pt") in files or all(p.name.startswith("step_") for p in files)
    for p in files:
        state = load_checkpoint(p)
        assert state["counters"]["global_step"] > 0 and state["config"]["env"]["env"] == "gym:CartPole-v1"
    assert load_checkpoint(sorted(ckpt_dir.glob("step_*.pt"))[-1])["counters"]["global_step"] == TOTAL
    assert not list(ckpt_dir.glob(".*tmp")), "no temporary files left behind"
