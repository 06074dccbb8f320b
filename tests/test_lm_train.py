"""Language-model agents from the shell: an SFT run killed with SIGKILL resumes to the same step with the same weights
(a GRPO run's kill and resume: `test_resume.test_a_resumed_run_keeps_one_metric_row_a_step[grpo]`); generated programs
that try to escape are contained and score 0; bad input is one line and exit 2."""

import signal
from pathlib import Path

import torch

from conftest import start_workbench, wait_for, workbench, last_json
from workbench.tasks.env import CodeEnv, CodeEnvConfig
from workbench.tasks.code import held_out
from workbench.runs.store import RunStore
from workbench.train.checkpoint import find_checkpoint, load_checkpoint

SMALL = ["--hidden", 32, "--layers", 1, "--heads", 2, "--ffn", 64, "--vocab", 300, "--corpus-tasks", 40,
         "--eval-every", 0, "--device", "cpu", "--quiet", "--json"]  # fmt: skip
# A kill needs a checkpoint and steps left after it, not many: 27 steps after the first checkpoint (step 3) are a
# second or more of training, against a poll every 0.1 s for that checkpoint.
SFT = ["--algo", "sft", "--updates", 30, "--batch-size", 4, "--checkpoint-every", 3, *SMALL]
GRPO = ["--algo", "grpo", "--task", "code?level=easy&turns=2", "--updates", 6, "--batch-size", 2, "--group-size", 4,
        "--max-new-tokens", 12, "--beta", 0.04, "--learning-rate", 1e-3, "--checkpoint-every", 2, *SMALL]  # fmt: skip


def weights(run_dir: Path) -> dict:
    return load_checkpoint(find_checkpoint(run_dir))["model"]


def test_killed_run_resumes_to_the_same_weights(tmp_path):
    """SFT, SIGKILLed after its first checkpoint, resumes to the weights of the run that was never stopped. (GRPO's
    kill and resume, with the same check of its weights and of its sandboxes: test_resume.py.)"""
    whole = workbench("train", *SFT, "--runs-dir", tmp_path / "whole", "--name", "whole")
    assert whole.returncode == 0, whole.stderr
    expected = last_json(whole.stdout)

    runs = tmp_path / "killed"
    proc = start_workbench("train", *SFT, "--runs-dir", runs, "--name", "killed")
    try:
        ckpts = wait_for(lambda: next(runs.glob("killed-*/checkpoints"), None), what="a checkpoint folder")
        wait_for(lambda: list(ckpts.glob("step_*.pt")), what="a checkpoint")
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    run_dir = ckpts.parent
    killed_at = load_checkpoint(find_checkpoint(run_dir))["counters"]["global_step"]
    assert 0 < killed_at < expected["global_step"]

    r = workbench("train", "--resume", run_dir, "--quiet", "--json")  # no --algo: the checkpoint says what it is
    assert r.returncode == 0, r.stderr
    summary = last_json(r.stdout)
    assert summary["global_step"] == expected["global_step"] and summary["status"] == "finished"
    mine, theirs = weights(run_dir), weights(Path(expected["run_dir"]))
    assert mine.keys() == theirs.keys()
    for k in mine:
        assert torch.equal(mine[k], theirs[k]), k
    (run,) = RunStore(runs).runs()
    assert run["status"] == "finished" and run["env"].startswith("code?")
    resumed = RunStore(runs).events(run["id"], "resumed")
    assert [e["step"] for e in resumed] == [killed_at]


HOSTILE = {
    "network": "    import socket\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    return x\n",
    "read outside": "    return open(SENTINEL_DIR + '/file').read() or x\n",
    "write outside": "    open(SENTINEL, 'w').write('pwned')\n    return x\n",
    "delete": "    import shutil\n    shutil.rmtree(SENTINEL_DIR)\n    return x\n",
    "fork bomb": "    import os\n    while True:\n        os.fork()\n",
    "shell": "    import subprocess\n    subprocess.run(['rm', '-rf', SENTINEL_DIR])\n    return x\n",
}


def test_generated_programs_that_escape_are_contained_and_score_zero(tmp_path):
    sentinel_dir = tmp_path / "keep"
    sentinel_dir.mkdir()
    (sentinel_dir / "file").write_text("still here")
    task = next(t for t in held_out("easy", "test", 50) if t.entry and "(x)" in t.prompt)
    env = CodeEnv(CodeEnvConfig(turns=1))
    prefix = f"SENTINEL = {str(sentinel_dir / 'new')!r}\nSENTINEL_DIR = {str(sentinel_dir)!r}\n"
    completions = list(HOSTILE.values())
    tasks = [type(task)(**{**task.to_dict(), "prompt": prefix + task.prompt}) for _ in completions]
    attempts = env.score(tasks, completions)
    for name, a in zip(HOSTILE, attempts):
        assert not a.passed, (name, a)
        if name.endswith("outside"):  # the host's files are not there: it fails its tests (exec 0), and only earns
            assert a.judges["exec"] == 0.0 and "No such file" in a.feedback, (
                name,
                a,
            )  # what any safe wrong answer earns
            assert a.reward < 0.15, (name, a)
        else:  # the safety gate refuses it whatever its tests said: reward 0
            assert a.reward == 0.0 and "unsafe" in a.feedback, (name, a)
    assert (sentinel_dir / "file").read_text() == "still here" and not (sentinel_dir / "new").exists()


def test_judges_beside_generation_give_the_serial_rewards(tmp_path):
    """GRPO with the judges at work on each batch of completions while the next is generated (two attempts a task, batches
    of 2 prompts) ends with the same rewards and weights as the serial path, and charts the judges' throughput. Two steps:
    the second starts from what the first changed."""
    flags = [*GRPO[: GRPO.index("--updates")], "--updates", 2, "--gen-batch", 2, *GRPO[GRPO.index("--updates") + 2 :]]
    runs = {}
    for overlap in ("on", "off"):
        r = workbench("train", *flags, "--judge-overlap", overlap, "--runs-dir", tmp_path / overlap, "--name", "beside")
        assert r.returncode == 0, r.stderr[-2000:]
        runs[overlap] = last_json(r.stdout)["run_dir"]
    store = {k: RunStore(tmp_path / k) for k in runs}
    rewards = {k: [m["value"] for m in store[k].metrics(Path(d).name, "charts/reward")] for k, d in runs.items()}
    assert len(rewards["on"]) == 2 and rewards["on"] == rewards["off"], rewards
    mine, theirs = (weights(Path(d)) for d in runs.values())
    assert all(torch.equal(mine[k], theirs[k]) for k in mine)
    beside = Path(runs["on"]).name
    assert all(m["value"] > 0 for m in store["on"].metrics(beside, "perf/executions_per_s"))
    assert [m["value"] for m in store["on"].metrics(beside, "charts/timeouts")] == [0.0] * 2


def test_a_bad_lm_setting_is_one_line_from_the_command(tmp_path):
    "From a real process (the many cases run in-process in test_bad_input.py): one line, exit 2, nothing written."
    r = workbench("train", "--algo", "sft", "--task", "code?level=expert", "--runs-dir", tmp_path / "runs", timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "unknown level 'expert'" in lines[0], r.stderr[-500:]
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
