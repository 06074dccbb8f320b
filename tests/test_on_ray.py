"""The commands that can run their work on a Ray cluster (`workbench sweep --ray`, `workbench batch --ray`) on a real
local one: its trials and jobs are children of Ray's workers, not of the command. One file, so that one cluster serves
both, started for this file and stopped after it (Ray's idle daemons use a few per cent of a core while they live)."""

import json, subprocess

import pytest

from conftest import WORKBENCH, processes_of, start_workbench, wait_for, workbench
from test_batch import SMALL as BATCH_SMALL, TRAIN, states
from test_sweep import LR, PBT, SMALL, sweep_file
from workbench.runs.store import RunStore


def test_sweep_on_ray(tmp_path, ray_cluster):
    address, env = ray_cluster
    cfg = sweep_file(tmp_path, SMALL + "total_timesteps = 1024\n[sweep]\ntrials = 2\nmax_parallel = 2\n" + LR)
    proc = start_workbench(
        "sweep",
        "--config",
        cfg,
        "--ray",
        address,
        "--runs-dir",
        "runs",
        "--json",
        cwd=tmp_path,
        env=env,
        stderr=subprocess.STDOUT,
    )

    def trial_parents():  # the trial processes are children of Ray's workers, not of the sweep command
        return [p.parent() for p in processes_of(tmp_path) if "workbench.jobs.sweep" in " ".join(p.cmdline())]

    parents = wait_for(trial_parents, timeout=120, interval=0.1, what="a trial process")
    assert all(p.pid != proc.pid and "ray::" in " ".join(p.cmdline()) for p in parents), [p.cmdline() for p in parents]
    out = proc.communicate(timeout=400)[0]
    assert proc.returncode == 0, out[-3000:]
    row = json.loads(out.strip().splitlines()[-1])
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
    row = json.loads(r.stdout.strip().splitlines()[-1])
    assert row["status"] == "finished" and len(RunStore(tmp_path / "runs").lineage(row["id"])) == 4


def test_batch_on_ray(tmp_path, ray_cluster):
    address, env = ray_cluster
    proc = subprocess.Popen(
        [
            *WORKBENCH,
            "batch",
            str(TRAIN),
            "--grid",
            "seed=1,2",
            *BATCH_SMALL,
            "--max-parallel",
            "2",
            "--ray",
            address,
            "--out",
            "reports",
            "--runs-dir",
            "runs",
            "--json",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )

    # While it runs: the job processes are children of Ray's workers, not of the batch command.
    def job_parents():
        return [p.parent() for p in processes_of(tmp_path) if "workbench.jobs.launch" in " ".join(p.cmdline())]

    parents = wait_for(job_parents, timeout=120, interval=0.2, what="a job process")
    assert all(p.pid != proc.pid and "ray::" in " ".join(p.cmdline()) for p in parents), [p.cmdline() for p in parents]
    out = proc.communicate(timeout=400)[0]
    assert proc.returncode == 0, out[-3000:]
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["status"] == "finished" and summary["finished"] == 2
    batch_dir = tmp_path / "reports" / summary["id"]
    assert json.loads((batch_dir / "batch.json").read_text())["ray"] == address
    jobs = states(batch_dir)
    assert all(s["status"] == "finished" and s["result"]["global_step"] == 2048 for s in jobs.values())
    assert len(RunStore(tmp_path / "runs").jobs(batch_id=summary["id"])) == 2
