"""The C kernels' path (`workbench.kernels.fused`) through the real CLI: which runs take it, the switch that turns it
off, and that runs on it learn (an LSTM and a transformer on CartPole-v1, a Gaussian policy on Pendulum-v1)."""

import os

import pytest

from conftest import TINY, last_json, workbench
from workbench.runs.store import RunStore
from workbench.train.checkpoint import load_checkpoint


def kernels_used(runs_dir) -> set:
    store = RunStore(runs_dir)
    (run,) = store.runs()
    return {m["value"] for m in store.metrics(run["id"], "perf/kernels")}


@pytest.mark.parametrize(
    "env,policy,used",
    [
        ("gym:CartPole-v1", "mlp", 1.0),
        ("gym:CartPole-v1", "lstm", 1.0),
        ("gym:Pendulum-v1", "mlp", 1.0),  # a Gaussian head and a separate critic
        ("gym:CartPole-v1", "transformer", 1.0),
        ("gym:CartPole-v1", "transformer --bf16", 0.0),  # torch's path
    ],
)
def test_which_runs_take_the_kernels(runs_dir, env, policy, used):
    r = workbench(
        "train", "--env", env, "--policy", *policy.split(), "--total-steps", 256, *TINY, "--runs-dir", runs_dir
    )
    assert r.returncode == 0, r.stderr
    assert kernels_used(runs_dir) == {used}


def test_the_switch_keeps_torchs_path(runs_dir):
    r = workbench(
        "train", "--env", "gym:CartPole-v1", "--total-steps", 256, *TINY, "--runs-dir", runs_dir,
        env={**os.environ, "WORKBENCH_KERNELS": "0"},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert kernels_used(runs_dir) == {0.0}


@pytest.mark.parametrize("backend", ["kernels", "torch"])
@pytest.mark.parametrize(
    "env,policy,steps,floor",
    [
        ("gym:CartPole-v1", "lstm", 30_000, 200.0),
        ("gym:CartPole-v1", "transformer", 30_000, 200.0),
        ("gym:Pendulum-v1", "mlp", 100_000, -600.0),
    ],
)
def test_runs_learn(runs_dir, env, policy, steps, floor, backend):
    """Default settings (Pendulum's tuned row), seed 1: within `steps`, the best greedy evaluation reaches a floor far
    above random play, on the C kernels and on the torch backend (`WORKBENCH_KERNELS=0`, the reference the kernels are
    checked against). `--stop-at` ends a run there (the torch runs reached it in 20,480, 10,240 and 40,960 steps)."""
    r = workbench(
        "train", "--env", env, "--policy", policy, "--total-steps", steps, "--seed", 1, "--runs-dir", runs_dir,
        "--stop-at", floor, "--quiet", "--json",
        env={**os.environ, "WORKBENCH_KERNELS": "0" if backend == "torch" else "1"},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    summary = last_json(r.stdout)
    assert kernels_used(runs_dir) == {0.0 if backend == "torch" else 1.0}
    best = load_checkpoint(summary["best_checkpoint"])
    assert best["best_score"] >= floor, best["best_score"]
    assert summary["status"] == "finished" and summary["global_step"] < steps, summary  # stopped there, goal met
