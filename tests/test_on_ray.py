"""The commands that can run their work on a Ray cluster (`workbench sweep --ray`, `workbench batch --ray`) on a real
local one: its trials and jobs are children of Ray's workers, not of the command. One file, so that one cluster serves
both, started for this file and stopped after it (a start costs ~13 CPU-s; idle, its daemons ~2% of a core)."""

import json, subprocess

import pytest

from conftest import last_json, processes_of, start_workbench, wait_for, workbench
from test_batch import SMALL as BATCH_SMALL, TRAIN, states
from test_sweep import LR, PBT, SMALL, sweep_file
from workbench.runs.store import RunStore


def run_on_ray(tmp_path, env, module: str, *args) -> dict:
    """Run `workbench *args` (with `--json`) in `tmp_path`; while it runs, the processes of `module` it starts are
    children of Ray's workers, not of the command. Its last JSON line, once it has finished."""
    proc = start_workbench(*args, "--json", cwd=tmp_path, env=env, stderr=subprocess.STDOUT)

    def parents():
        return [p.parent() for p in processes_of(tmp_path) if module in " ".join(p.cmdline())]

    found = wait_for(parents, timeout=120, interval=0.1, what=f"a process of {module}")
    assert all(p.pid != proc.pid and "ray::" in " ".join(p.cmdline()) for p in found), [p.cmdline() for p in found]
    out = proc.communicate(timeout=400)[0]
    assert proc.returncode == 0, out[-3000:]
    return last_json(out)


def test_sweep_on_ray(tmp_path, ray_cluster):
    address, env = ray_cluster
    cfg = sweep_file(tmp_path, SMALL + "total_timesteps = 1024\n[sweep]\ntrials = 2\nmax_parallel = 2\n" + LR)
    row = run_on_ray(
        tmp_path, env, "workbench.jobs.sweep", "sweep", "--config", cfg, "--ray", address, "--runs-dir", "runs"
    )
    trials = RunStore(tmp_path / "runs").trials(row["id"])
    assert row["status"] == "finished" and [t["status"] for t in trials] == ["finished", "finished"]
    # Protein: the first trial is the search centre (the experiment's own learning rate, 2.5e-3).
    assert trials[0]["parameters"]["learning_rate"] == pytest.approx(2.5e-3)

    # Population-based training on the same cluster: each member's round is a Ray task (2 members, 2 rounds).
    cfg = sweep_file(tmp_path, SMALL + "total_timesteps = 1024\n" + PBT.replace("rounds = 3", "rounds = 2"), "pbt.toml")
    r = workbench(
        "sweep", "--config", cfg, "--ray", address, "--runs-dir", "runs", "--json", cwd=tmp_path, env=env, timeout=400
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    row = last_json(r.stdout)
    assert row["status"] == "finished" and len(RunStore(tmp_path / "runs").lineage(row["id"])) == 4


def test_batch_on_ray(tmp_path, ray_cluster):
    address, env = ray_cluster
    batch = ["batch", TRAIN, "--grid", "seed=1,2", *BATCH_SMALL, "--max-parallel", 2, "--ray", address]
    summary = run_on_ray(tmp_path, env, "workbench.jobs.launch", *batch, "--out", "reports", "--runs-dir", "runs")
    assert summary["status"] == "finished" and summary["finished"] == 2
    batch_dir = tmp_path / "reports" / summary["id"]
    assert json.loads((batch_dir / "batch.json").read_text())["ray"] == address
    jobs = states(batch_dir)
    assert all(s["status"] == "finished" and s["result"]["global_step"] == 2048 for s in jobs.values())
    assert len(RunStore(tmp_path / "runs").jobs(batch_id=summary["id"])) == 2
