"A run killed with SIGKILL resumes from its last checkpoint and finishes; every checkpoint loads."

import json, os, signal
from pathlib import Path

import pytest
import torch

from conftest import TINY, kill_after_checkpoints, start_workbench, workbench, wait_for, last_json
from workbench.train.checkpoint import find_checkpoint, load_checkpoint
from workbench.runs.store import RunStore

TOTAL = 12_000  # 375 updates: the kill comes after 10 (two checkpoints), with hundreds left to resume


@pytest.mark.parametrize("backend", ["kernels", "torch"])
def test_sigkill_then_resume(runs_dir, backend):
    "On the C kernels and on torch's backend (`WORKBENCH_KERNELS=0`): only PPO's runs take the kernels."
    env = {**os.environ, "WORKBENCH_KERNELS": "0" if backend == "torch" else "1"}
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
        env=env,
    )
    ckpt_dir = kill_after_checkpoints(proc, runs_dir, "killme", 2)
    run_dir = ckpt_dir.parent

    steps = sorted(ckpt_dir.glob("step_*.pt"))
    last_step = load_checkpoint(steps[-1])["counters"]["global_step"]
    assert 0 < last_step < TOTAL
    store = RunStore(runs_dir)
    (run,) = store.runs()
    assert run["status"] == "interrupted"  # killed: nobody recorded an end, and its process is gone

    r = workbench("train", "--resume", run_dir, "--quiet", "--json", env=env)
    assert r.returncode == 0, r.stderr
    summary = last_json(r.stdout)
    assert summary["global_step"] == TOTAL and summary["run_dir"] == str(run_dir)
    assert summary["learner"] == ("torch" if backend == "torch" else "c"), summary["learner"]

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


# A PPO run with evaluations (eval events and eval/ metrics) and a GRPO run (samples events; with a reference model,
# beta > 0), each with checkpoints. GRPO: a checkpoint every 2 steps of 6, so that a kill finds rows past one.
PPO = ["--env", "gym:CartPole-v1", "--total-steps", 16_000, "--num-envs", 2, "--num-steps", 16, "--num-minibatches", 2,
       "--update-epochs", 1, "--eval-every", 50, "--eval-episodes", 2, "--checkpoint-every", 100, "--device", "cpu"]  # fmt: skip
GRPO = ["--algo", "grpo", "--task", "code?level=easy&turns=2", "--updates", 6, "--batch-size", 2, "--group-size", 4,
        "--max-new-tokens", 12, "--beta", 0.04, "--learning-rate", 1e-3, "--checkpoint-every", 2, "--hidden", 32,
        "--layers", 1, "--heads", 2, "--ffn", 64, "--vocab", 300, "--corpus-tasks", 40, "--eval-every", 0,
        "--device", "cpu"]  # fmt: skip
REDONE = ("eval", "samples", "curriculum")  # the events a run records once a step, which a resumed run records again


def kill_past_a_checkpoint(proc, runs_dir) -> tuple:
    """SIGKILL a training process at a moment when the store holds metric rows past its newest checkpoint (rows a resumed
    run writes again): stopped (SIGSTOP) to look, let go on (SIGCONT) until then. Returns (run, the checkpoint's step)."""
    store = RunStore(runs_dir)
    try:
        while True:
            run = wait_for(lambda: next(iter(store.runs()), None), what="the run's row")
            ckpt = wait_for(
                lambda: next(iter(sorted(Path(run["run_dir"]).glob("checkpoints/step_*.pt"))[-1:]), None),
                what="a checkpoint",
            )
            wait_for(lambda: store.db.execute(
                "SELECT 1 FROM metrics WHERE run_id = ? AND step > ?", (run["id"], int(ckpt.stem[5:]))
            ).fetchone(), interval=0.02, what="a metric row past the checkpoint")  # fmt: skip
            proc.send_signal(signal.SIGSTOP)
            newest = sorted(Path(run["run_dir"]).glob("checkpoints/step_*.pt"))[-1]
            step = load_checkpoint(newest)["counters"]["global_step"]
            past = store.db.execute("SELECT COUNT(*) FROM metrics WHERE run_id = ? AND step > ?", (run["id"], step))
            if past.fetchone()[0]:
                proc.send_signal(signal.SIGKILL)
                proc.wait(30)
                return store.get_run(run["id"]), step
            proc.send_signal(signal.SIGCONT)  # a newer checkpoint came meanwhile: look again
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def one_row_a_step(store, run_id) -> dict:
    "{metric key: its steps}, checking that no key has two rows at a step; the same of the redone events."
    steps = {}
    for key in store.metric_keys(run_id):
        steps[key] = [m["step"] for m in store.metrics(run_id, key)]
        assert len(steps[key]) == len(set(steps[key])), (key, sorted(s for s in steps[key] if steps[key].count(s) > 1))
    for kind in REDONE:
        at = [e["step"] for e in store.events(run_id, kind)]
        assert len(at) == len(set(at)), (kind, at)
    return steps


@pytest.mark.parametrize("flags", [PPO, GRPO], ids=["ppo", "grpo"])
def test_a_resumed_run_keeps_one_metric_row_a_step(runs_dir, flags):
    """Rows the killed run wrote past its checkpoint are replaced by the resumed run's: one row a step for each key. A
    GRPO run (a code agent) also ends with the weights of the run never stopped, bit for bit, and its killed sandboxes are
    swept (test_lm_train.py checks the same weights of an SFT run)."""
    whole = workbench("train", *flags, "--runs-dir", runs_dir.parent / "whole", "--quiet", "--json")
    assert whole.returncode == 0, whole.stderr[-2000:]
    expected = one_row_a_step(RunStore(runs_dir.parent / "whole"), last_json(whole.stdout)["run_id"])
    whole_dir = last_json(whole.stdout)["run_dir"]

    proc = start_workbench("train", *flags, "--runs-dir", runs_dir, "--quiet")
    run, killed_at = kill_past_a_checkpoint(proc, runs_dir)
    assert proc.returncode == -signal.SIGKILL and run["status"] == "interrupted"
    store = RunStore(runs_dir)
    past = store.db.execute("SELECT COUNT(*) FROM metrics WHERE run_id = ? AND step > ?", (run["id"], killed_at))
    assert past.fetchone()[0] > 0  # rows the resumed run writes again

    r = workbench("train", "--resume", run["run_dir"], "--quiet", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    assert last_json(r.stdout)["global_step"] == last_json(whole.stdout)["global_step"]
    (resumed,) = store.events(run["id"], "resumed")
    assert resumed["step"] == killed_at > 0
    # Exactly one row a step for every key, at the steps of the same run trained without a stop.
    steps = one_row_a_step(store, run["id"])
    for key in ("charts/update", "losses/policy_loss" if "--env" in flags else "losses/grpo_loss", "perf/sps"):
        assert steps[key] == expected[key], key
    assert any(s > killed_at for s in steps["charts/update"])
    if "--env" in flags:
        assert steps["eval/mean_return"] == expected["eval/mean_return"]
        assert [e["step"] for e in store.events(run["id"], "eval")] == expected["eval/mean_return"]
    else:
        samples = [e["step"] for e in store.events(run["id"], "samples")]
        assert samples == list(range(1, 7)), samples
        mine, theirs = (load_checkpoint(find_checkpoint(d))["model"] for d in (run["run_dir"], whole_dir))
        assert mine.keys() == theirs.keys() and all(torch.equal(mine[k], theirs[k]) for k in mine), [
            k for k in mine if not torch.equal(mine[k], theirs[k])
        ]
        assert store.get_run(run["id"])["status"] == "finished" and run["env"].startswith("code?")
        stale = list(Path("/tmp").glob(f"wb-sbx-{proc.pid}-*"))  # the killed run's sandboxes: swept by the next one
        assert not stale, stale
