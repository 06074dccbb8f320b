"""`workbench doctor` end to end: every check runs for real on this machine, and bad input gets one line and exit 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

WORKBENCH = [sys.executable, "-m", "workbench.cli"]


def doctor(*args, cwd=None):
    return subprocess.run([*WORKBENCH, "doctor", *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def test_every_check_runs_and_none_fails_on_the_ci_machine(tmp_path):
    runs = tmp_path / "not-made-yet" / "runs"
    r = doctor("--device", "cpu", "--runs-dir", str(runs), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    results = {c["name"]: c for c in json.loads(r.stdout)}
    names = [
        "torch",
        "device",
        "bf16",
        "distributed",
        "gpu",
        "pufferlib",
        "kernels",
        "sandbox",
        "chromium",
        "disk",
        "policies",
    ]
    assert list(results) == names
    assert all(c["status"] in ("ok", "warn", "skip") for c in results.values()), results
    # the checks that must pass wherever `make test` passes
    for name in ("torch", "device", "bf16", "distributed", "pufferlib", "kernels", "disk", "policies"):
        assert results[name]["status"] == "ok", results[name]
    assert "gloo" in results["distributed"]["detail"]
    assert "mlp" in results["policies"]["detail"] and "token" in results["policies"]["detail"]
    assert (
        str(tmp_path) in results["disk"]["detail"] and not runs.exists()
    )  # it checked the nearest folder, made nothing
    assert not list(tmp_path.iterdir())  # and left no probe behind


def test_lines_and_exit_codes(tmp_path):
    r = doctor("--device", "cpu", "--only", "torch,disk", "--runs-dir", str(tmp_path))
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0].split()[:2] == ["OK", "torch"] and lines[1].split()[:2] == ["OK", "disk"]
    assert lines[2].startswith("2 ok (")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--only", "torch,nope"], "unknown check 'nope'"),
        (["--device", "tpu"], "device must be auto, cpu or cuda"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(args, message):
    r = doctor(*args)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and message in r.stderr


def test_cuda_without_a_gpu_is_bad_input():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    r = doctor("--device", "cuda")
    assert r.returncode == 2 and "no CUDA GPU" in r.stderr and r.stderr.count("\n") == 1


def test_a_failing_check_exits_1(tmp_path):
    # a runs folder on a file: the disk check cannot write there
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    r = doctor("--device", "cpu", "--only", "disk", "--runs-dir", str(Path(blocker) / "runs"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith("FAIL  disk") and "is a file" in r.stdout and "fix: choose another" in r.stdout
