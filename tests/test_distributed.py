"A 2-process data-parallel run through a real `accelerate launch` (gloo on CPU)."

import json, os, subprocess, sys
from pathlib import Path

import pytest
import torch

from workbench.runs.store import RunStore

# (its last check: no shared-memory block of any process left on the machine)
pytestmark = [pytest.mark.multiproc, pytest.mark.usefixtures("machine_to_ourselves")]


def launch_cmd() -> list:
    "`accelerate launch` of the workbench CLI's `train` in 2 processes on this machine (no mixed precision, no dynamo)."
    accelerate = str(Path(sys.executable).parent / "accelerate")
    return [accelerate, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
            "--dynamo_backend", "no", "--main_process_port", "0", "-m", "workbench.cli", "train"]  # fmt: skip


def test_accelerate_launch_two_processes(runs_dir, tmp_path):
    cmd = launch_cmd() + [
        "--env",
        "gym:CartPole-v1",
        "--total-steps",
        "1024",
        "--num-envs",
        "4",
        "--num-steps",
        "16",
        "--num-minibatches",
        "2",
        "--update-epochs",
        "2",
        "--eval-every",
        "4",
        "--eval-episodes",
        "1",  # fewer episodes than processes: rank 0 plays it, rank 1 skips (test_jobs shares 5 between 2)
        "--device",
        "cpu",
        "--quiet",
        "--json",
        "--runs-dir",
        str(runs_dir),
    ]
    r = subprocess.run(
        cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path, env={**os.environ, "ACCELERATE_USE_CPU": "true"}
    )
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    assert len(lines) == 1, "only rank 0 reports"
    summary = json.loads(lines[0])
    # Both ranks step their own envs: 2 processes x 4 envs x 16 steps per update.
    assert summary["global_step"] == 1024 and summary["updates"] == 8
    store = RunStore(runs_dir)
    (run,) = store.runs()
    assert run["status"] == "finished"
    assert {m["value"] for m in store.metrics(run["id"], "perf/processes")} == {2.0}
    assert [m["step"] for m in store.metrics(run["id"], "charts/update")] == list(range(128, 1025, 128))
    assert Path(summary["best_checkpoint"]).exists()


def test_grpo_two_processes_in_bf16(runs_dir, tmp_path):
    "A code agent's GRPO run in 2 processes (gloo on CPU) with bf16 autocast: it finishes, rank 0 alone records, and resumes."
    accelerate = str(Path(sys.executable).parent / "accelerate")
    launch = [
        accelerate,
        "launch",
        "--multi_gpu",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
    ]
    launch += ["--dynamo_backend", "no", "--main_process_port", "0", "-m", "workbench.cli", "train"]
    tiny = [
        "--max-new-tokens",
        "12",
        "--eval-every",
        "1",
        "--eval-tasks",
        "2",
        "--corpus-tasks",
        "50",
        "--vocab",
        "300",
    ]
    tiny += ["--hidden", "32", "--layers", "1", "--heads", "2", "--ffn", "64", "--device", "cpu", "--quiet", "--json"]
    grpo = [
        "--algo",
        "grpo",
        "--task",
        "code?level=easy&turns=2",
        "--batch-size",
        "2",
        "--group-size",
        "2",
        "--beta",
        "0.04",
    ]
    env = {**os.environ, "ACCELERATE_USE_CPU": "true"}

    def run(*flags):
        r = subprocess.run([*launch, *flags, *tiny, "--runs-dir", str(runs_dir)], capture_output=True, text=True, timeout=300,
                           cwd=tmp_path, env=env)  # fmt: skip
        assert r.returncode == 0, r.stderr[-3000:]
        lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
        assert len(lines) == 1, "only rank 0 reports"
        return json.loads(lines[0])

    first = run(*grpo, "--updates", "1", "--bf16")  # a step, and an evaluation, in each of the two launches
    assert first["status"] == "finished" and first["global_step"] == 1
    store = RunStore(runs_dir)
    (rec,) = store.runs()
    assert {m["value"] for m in store.metrics(rec["id"], "perf/processes")} == {2.0}
    assert store.events(rec["id"], "samples") and store.events(rec["id"], "eval")
    more = run("--resume", first["run_dir"], "--updates", "2")  # a language-model run resumes without --algo
    assert more["global_step"] == 2 and more["run_dir"] == first["run_dir"]
    assert [m["step"] for m in store.metrics(rec["id"], "charts/update")] == [1, 2]
    assert [e["step"] for e in store.events(rec["id"], "eval")] == [1, 2]


TRAIN_AND_SAVE = """
import atexit, os, sys, torch
import torch.distributed as dist
from workbench.train.config import TrainConfig
from workbench.train.ppo import PPOTrainer
# (registered before the trainer's own exit handler, so run after it: the group is gone by then)
atexit.register(lambda: open(f"{sys.argv[1]}/left{os.environ['RANK']}", "w").write(str(dist.is_initialized())))
cfg = TrainConfig.from_dict({"env": "gym:CartPole-v1", "num_envs": 4, "num_steps": 16, "num_minibatches": 2,
                             "update_epochs": 4, "total_timesteps": 512, "eval_every": 0, "checkpoint_every": 0,
                             "device": "cpu", "obs_norm": True, "grad_sync": sys.argv[2], "target_kl": 2e-4})
t = PPOTrainer(cfg)
epochs, update = [], t.update   # with target_kl, a rank's own KL could end its epochs before the other's
t.update = lambda: (stats := update(), epochs.append(stats["losses/epochs"]))[0]
t.fit()
block = t.sync.reducer.shm.name if t.sync is not None else None
torch.save({"state": t.policy.state_dict(), "sync": type(t.sync).__name__, "fused": t.learner.name == "c", "block": block,
            "epochs": epochs}, f"{sys.argv[1]}/rank{t.rank}.pt")
"""


def test_shared_memory_sync_trains_as_ddp(tmp_path):
    """Two CPU processes on one host average their gradients through shared memory (`grad_sync=auto`): both ranks
    end with the same weights and observation statistics as under DDP over gloo (`grad_sync=ddp`), bit for bit, in
    torch's arithmetic (`WORKBENCH_KERNELS=0`); with the C kernels (`kernels.fused`, which DDP does not use) the two
    ranks still end bit for bit alike. With `target_kl` set, an update's epochs end early on both ranks or on neither
    (each rank's own KL once stopped one rank alone: its collectives then paired with the other's wrong ones)."""
    script = tmp_path / "train_and_save.py"
    script.write_text(TRAIN_AND_SAVE)
    states = {}
    for mode, kernels in (("auto", "0"), ("ddp", "0"), ("auto", "1")):
        out = tmp_path / f"{mode}{kernels}"
        out.mkdir()
        cmd = launch_cmd()[:-3] + [str(script), str(out), mode]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                           env={**os.environ, "ACCELERATE_USE_CPU": "true", "WORKBENCH_KERNELS": kernels})  # fmt: skip
        assert r.returncode == 0, r.stderr[-3000:]
        for rank in (0, 1):
            states[mode + kernels, rank] = torch.load(out / f"rank{rank}.pt")
    assert states["auto0", 0]["sync"] == "HostSync" and states["ddp0", 0]["sync"] == "NoneType"
    for run in ("auto0", "ddp0", "auto1"):
        # each rank destroyed its process group as it exited (leave_group_at_exit), before Python's own end
        assert [(tmp_path / run / f"left{rank}").read_text() for rank in (0, 1)] == ["False", "False"]
        # target_kl ended some updates early, on both ranks alike
        epochs = states[run, 0]["epochs"]
        assert epochs == states[run, 1]["epochs"] and min(epochs) < 4, (run, epochs)
    assert states["auto1", 0]["fused"] and not states["auto0", 0]["fused"]
    for run in ("auto0", "auto1"):
        first = states[run, 0]["state"]
        assert any("norm" in k for k in first), sorted(first)  # observation statistics (buffers) are compared too
        for key, saved in states.items():
            if (key[0] == "auto1") != (run == "auto1"):
                continue  # the kernels' arithmetic is compared between its own ranks
            assert saved["state"].keys() == first.keys()
            for k, v in saved["state"].items():
                assert torch.equal(v, first[k]), (key, k)
    blocks = {saved["block"] for saved in states.values() if saved["block"]}  # its own: others may run beside it
    assert len(blocks) == 2 and not [b for b in blocks if (Path("/dev/shm") / b.lstrip("/")).exists()], blocks
