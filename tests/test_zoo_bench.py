"""`bench/zoo.py --quick`, the smoke test of the zoo benchmark: gSDE's row (MountainCarContinuous) and a MuJoCo row,
ours and SB3's, each trained a little and scored by the common greedy evaluation, so that the long run's script works
when it is next run. What it learns at these budgets is not asserted (bench/RESULTS.md §8 has the full run)."""

import json, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def test_zoo_quick_runs_both_trainers(tmp_path):
    out = tmp_path / "zoo.json"
    cli = [sys.executable, str(ROOT / "bench" / "zoo.py"), "--quick", "--envs", "MountainCarContinuous-v0", "Hopper-v4",
           "--jobs", "2", "--json", str(out), "--html", str(tmp_path / "zoo.html")]  # fmt: skip
    r = subprocess.run(cli, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    results = json.loads(out.read_text())["results"]
    assert sorted((x["env"], x["trainer"]) for x in results) == [
        ("Hopper-v4", "sb3"),
        ("Hopper-v4", "workbench"),
        ("MountainCarContinuous-v0", "sb3"),
        ("MountainCarContinuous-v0", "workbench"),
    ]
    for x in results:
        assert "error" not in x and len(x["returns"]) == 100 and x["cpu_seconds"] > 0, x.get("error")
    ours = next(x for x in results if x["env"] == "MountainCarContinuous-v0" and x["trainer"] == "workbench")
    assert ours["settings"]["sde"] is True  # its row's gSDE
    assert (tmp_path / "zoo_curves.html").exists() and "<script" not in (tmp_path / "zoo_curves.html").read_text()
    assert not list(tmp_path.glob("bench/out/zoo_runs/*")), "--quick keeps nothing"
