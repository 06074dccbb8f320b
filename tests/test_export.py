"""`workbench export --onnx`: trained checkpoints of each policy kind, run by onnxruntime against torch; `export --hf`
of a LoRA run. The commands run in this process (`conftest.workbench_main`): the claims are the files they write."""

import json

import numpy as np
import pytest
import torch

from conftest import last_json, workbench_main

onnxruntime = pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    "A short trading run for each policy kind (their checkpoints are real, trained weights: two updates)."
    tmp = tmp_path_factory.mktemp("export")
    runs = {}
    for kind in ("mlp", "lstm", "transformer"):
        r = workbench_main(
            "train",
            "--env",
            "trading?symbols=AAPL",
            "--policy",
            kind,
            "--total-steps",
            "1024",
            "--num-envs",
            "16",
            "--num-steps",
            "32",
            "--eval-every",
            "0",
            "--device",
            "cpu",
            "--quiet",
            "--json",
            "--runs-dir",
            tmp / "runs",
        )
        assert r.returncode == 0, r.stderr
        runs[kind] = json.loads(r.stdout.strip().splitlines()[-1])["run_dir"]
    return tmp, runs


@pytest.mark.parametrize("kind", ["mlp", "lstm", "transformer"])
def test_export_matches_torch(trained, kind):
    tmp, runs = trained
    out = tmp / f"{kind}.onnx"
    r = workbench_main("export", runs[kind], "--onnx", out, "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["matches"] and max(result["max_abs_diff"].values()) < 1e-5, result
    assert (
        result["inputs"]
        == {"mlp": ["obs"], "lstm": ["obs", "h", "c"], "transformer": ["obs", "keys", "values", "valid"]}[kind]
    )

    # Independently of the command's own check: onnxruntime and torch on fresh random observations, 20 steps,
    # each step's state fed to the next (and an episode reset half-way for the recurrent ones).
    from workbench.cli import load_policy
    from workbench.policy.export import GreedyPolicy

    policy, *_ = load_policy(runs[kind])
    policy.eval()
    sess = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    rng = np.random.default_rng(123)
    n = 100
    st = policy.initial_state(n)
    t_state = () if st is None else (tuple(st) if isinstance(st, tuple) else (st,))
    o_state = [s.numpy() for s in t_state]
    worst, same = 0.0, True
    for step in range(20):
        obs = rng.normal(0, 2, (n, policy.obs_dim)).astype(np.float32)
        if step == 10 and t_state:  # a new episode: zero state
            t_state = tuple(torch.zeros_like(s) for s in t_state)
            o_state = [np.zeros_like(s) for s in o_state]
        with torch.no_grad():
            t_out = GreedyPolicy(policy)(torch.as_tensor(obs), *t_state)
        o_out = sess.run(None, {"obs": obs, **dict(zip(names[1:], o_state))})
        same &= np.array_equal(t_out[0].numpy(), o_out[0])
        worst = max(worst, *(float(np.abs(a.numpy() - b).max()) for a, b in zip(t_out[1:], o_out[1:])))
        t_state, o_state = tuple(t_out[2:]), list(o_out[2:])
    assert same and worst < 1e-5, worst
    # The greedy actions are the policy's own (`act` with greedy=True).
    action, _ = policy.act(torch.as_tensor(obs), None if st is None else policy.initial_state(n), greedy=True)
    if kind == "mlp":
        assert np.array_equal(action.numpy(), o_out[0])


def test_export_bad_input(trained, tmp_path):
    tmp, runs = trained
    r = workbench_main("export", runs["mlp"])
    assert r.returncode == 2 and "--onnx FILE" in r.stderr
    r = workbench_main("export", tmp_path / "missing.pt", "--onnx", tmp_path / "x.onnx")
    assert r.returncode == 2 and "checkpoint not found" in r.stderr
    assert not (tmp_path / "x.onnx").exists()


def test_hf_export_of_a_lora_run(tmp_path):
    "A code agent trained with LoRA on a folder model: `export --hf` merges the adapters; transformers loads the folder."
    import itertools

    from transformers import AutoModelForCausalLM

    from workbench.policy.tokens import TinyLMConfig, TokenPolicy
    from workbench.tasks.code import task_stream

    corpus = [t.prompt + t.reference for t in itertools.islice(task_stream("easy"), 200)]
    TokenPolicy.tiny(corpus, TinyLMConfig(hidden=32, layers=1, heads=2, ffn=64, vocab=300)).save(tmp_path / "base")
    r = workbench_main("train", "--algo", "sft", "--model", tmp_path / "base", "--lora", "4", "--task", "code?level=easy",
            "--updates", "2", "--batch-size", "2", "--eval-every", "0", "--device", "cpu",
            "--runs-dir", tmp_path / "runs", "--quiet", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    run_dir = last_json(r.stdout)["run_dir"]
    r = workbench_main("export", run_dir, "--hf", tmp_path / "hf", "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    result = json.loads(r.stdout)
    assert result["matches"] and result["lora_merged"] and result["max_abs_logit_diff"] <= 1e-4, result
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "hf", local_files_only=True)
    assert not [k for k in model.state_dict() if "lora" in k]  # plain weights, the adapters merged in
    r = workbench_main("export", run_dir, "--hf", tmp_path / "hf")
    assert r.returncode == 2 and "it exists and is not an empty folder" in r.stderr
