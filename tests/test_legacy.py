"""Runs written before the package moved into subpackages (commit 07687a3) still load: their checkpoints evaluate
to the same returns, their store lists them, and training resumes from them into the same run."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LEGACY = Path(__file__).parent / "data" / "legacy-07687a3"
CLI = [sys.executable, "-m", "workbench.cli"]


@pytest.fixture
def legacy(tmp_path):
    shutil.copytree(LEGACY, tmp_path / "legacy")
    return tmp_path / "legacy"


def run(args, cwd):
    out = subprocess.run(CLI + args, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_old_checkpoints_evaluate_as_before(legacy):
    expected = json.loads((legacy / "expected_eval.json").read_text())
    mlp = next(legacy.glob("runs/legacy-mlp-*/checkpoints/best.pt")).relative_to(legacy)
    lstm = next(legacy.glob("runs/legacy-lstm-*")).relative_to(legacy)
    for target, key in ((mlp, "mlp_best"), (lstm, "lstm_latest")):
        got = json.loads(run(["eval", str(target), "--episodes", "3", "--json"], legacy).strip().splitlines()[-1])
        assert got == expected[key], key


def test_old_store_reads_and_old_run_resumes(legacy):
    from workbench.runs.store import RunStore

    store = RunStore(legacy / "runs")
    runs = {r["name"]: r for r in store.runs()}
    assert {n: r["status"] for n, r in runs.items()} == {"legacy-mlp": "finished", "legacy-lstm": "finished"}
    mlp = runs["legacy-mlp"]
    assert mlp["config"]["ppo"]["total_timesteps"] == 2048 and mlp["global_step"] == 2048
    assert len(store.metrics(mlp["id"], "charts/episodic_return")) > 0
    assert [c["step"] for c in store.checkpoints(mlp["id"])][:2] == [512, 1024]
    store.close()

    summary = json.loads(
        run(["train", "--resume", mlp["run_dir"], "--total-timesteps", "3072", "--quiet", "--json"], legacy)
        .strip()
        .splitlines()[-1]
    )
    assert (summary["run_id"], summary["global_step"], summary["status"]) == (mlp["id"], 3072, "finished")
    store = RunStore(legacy / "runs")
    assert len(store.runs()) == 2
    resumed = store.get_run(mlp["id"])
    assert (resumed["global_step"], resumed["status"]) == (3072, "finished")
    assert [e["kind"] for e in store.events(mlp["id"])].count("resumed") == 1
    store.close()
