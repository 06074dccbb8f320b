"""The real-model path on CPU, as a smoke test: SmolLM2-135M-Instruct from its wheel (`make smollm`; skipped where it is
not installed), with LoRA adapters, through one GRPO step of `workbench train` and a resume."""

import json, os, subprocess, sys

import pytest

from workbench.policy.models import PolicyError, shipped_model

try:
    shipped_model("smollm2")  # its package imports a plugin host we do not install: look for the file, not the module
except PolicyError as e:
    pytest.skip(str(e), allow_module_level=True)


def test_smollm2_grpo_step_with_lora(tmp_path):
    runs = tmp_path / "runs"
    flags = ["--algo", "grpo", "--model", "smollm2", "--lora", "8", "--task", "code?level=easy", "--updates", "1"]
    flags += [
        "--batch-size",
        "1",
        "--group-size",
        "2",
        "--max-new-tokens",
        "16",
        "--eval-every",
        "0",
        "--torch-threads",
        "2",
    ]
    cli = [
        sys.executable,
        "-m",
        "workbench.cli",
        "train",
        "--device",
        "cpu",
        "--quiet",
        "--json",
        "--runs-dir",
        str(runs),
    ]
    r = subprocess.run(cli + flags, capture_output=True, text=True, timeout=600, cwd=tmp_path, env=os.environ)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["status"] == "finished" and summary["global_step"] == 1 and summary["tokens"] > 0
    import torch

    state = torch.load(summary["last_checkpoint"], map_location="cpu", weights_only=False)
    assert state["model"] and all(
        "lora" in k for k in state["model"]
    )  # only the adapters train, and only they are kept
    more = subprocess.run(cli + ["--resume", summary["run_dir"], "--updates", "2"], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path, env=os.environ)  # fmt: skip
    assert more.returncode == 0, more.stderr[-3000:]
    assert json.loads(more.stdout.strip().splitlines()[-1])["global_step"] == 2


def test_smollm2_team_per_role_lora(tmp_path):
    "A tester and a coder, each its own LoRA-adapted copy of SmolLM2: a GRPO step, a resume, an eval with the roles swapped."
    cli = [sys.executable, "-m", "workbench.cli"]
    flags = [
        "--team",
        "--task",
        "code",
        "--model",
        "smollm2",
        "--lora",
        "8",
        "--algo",
        "grpo",
        "--policy-map",
        "per_role",
    ]
    flags += ["--updates", "1", "--batch-size", "1", "--group-size", "2", "--max-new-tokens", "48", "--eval-every", "0"]
    flags += ["--device", "cpu", "--quiet", "--json", "--runs-dir", str(tmp_path / "runs")]
    run = lambda *a: subprocess.run(
        cli + list(a), capture_output=True, text=True, timeout=600, cwd=tmp_path, env=os.environ
    )
    r = run("train", *flags)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    import torch

    state = torch.load(summary["last_checkpoint"], map_location="cpu", weights_only=False)
    assert sorted(state["models"]) == ["coder", "tester"] and state["tokenizer"] is None
    assert all("lora" in k for m in state["models"].values() for k in m)  # each role keeps only its adapters
    r = run("train", "--resume", summary["run_dir"], "--updates", "2", "--quiet", "--json")
    assert r.returncode == 0 and json.loads(r.stdout.strip().splitlines()[-1])["global_step"] == 2, r.stderr[-3000:]
    r = run("eval", summary["run_dir"], "--episodes", "2", "--swap-roles", "--json")
    assert r.returncode == 0 and json.loads(r.stdout.strip().splitlines()[-1])["swapped"], r.stderr[-3000:]
