"""`python -m bench zoo --quick`, the smoke test of the zoo benchmark through the runner: gSDE's row
(MountainCarContinuous) and a MuJoCo row, ours (with a setting given beside the row) and SB3's, each trained a little
and scored by the common greedy evaluation, so that the long run's script works when it is next run. What it learns
at these budgets is not asserted (bench/RESULTS.md §8 has the full runs)."""

import subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
pytestmark = pytest.mark.slow

import runner  # noqa: E402


def test_zoo_quick_runs_both_trainers(tmp_path):
    cli = [sys.executable, "-m", "bench", "zoo", "--quick", "--record", "--records", tmp_path, "--out", tmp_path,
           "--max-wait", 0, "--envs", "MountainCarContinuous-v0", "Hopper-v4", "--jobs", 2,
           "--set", "activation=relu"]  # fmt: skip
    r = subprocess.run(list(map(str, cli)), capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    (rec,) = runner.records("zoo", tmp_path)
    assert sorted((x["env"], x["trainer"]) for x in rec["raw"]) == [
        ("Hopper-v4", "sb3"),
        ("Hopper-v4", "workbench"),
        ("MountainCarContinuous-v0", "sb3"),
        ("MountainCarContinuous-v0", "workbench"),
    ]
    for x in rec["raw"]:
        assert "error" not in x and x["cpu_seconds"] > 0 and x["steps"] >= 2048, x
    assert rec["settings"]["ours"] == {"activation": "relu"} and rec["quick"] and rec["machine"]["kind"]
    assert set(rec["figures"]) >= {"Hopper-v4/workbench", "Hopper-v4/sb3", "MountainCarContinuous-v0/workbench_cpu_s"}
    page = (tmp_path / "zoo_curves.html").read_text()
    assert "Hopper-v4" in page and "<script" not in page
    assert not list((ROOT / "bench" / "out" / "zoo_runs").glob("*2048*")), "--quick keeps nothing"


@pytest.mark.parametrize(
    "args, says",
    [(["--set", "activation=gelu"], "--set: activation"), (["--set", "nosuch=1"], "--set: nosuch"),
     (["--envs", "Nope-v0"], "--envs"), (["--frobnicate"], "unrecognized arguments: --frobnicate")],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, says):
    r = subprocess.run([sys.executable, "-m", "bench", "zoo", "--records", str(tmp_path), *args], capture_output=True,
                       text=True, timeout=120, cwd=ROOT)  # fmt: skip
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not list(tmp_path.iterdir())
