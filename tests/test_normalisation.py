"""Normalisation statistics round-trip: a run trained with observation and reward normalisation gives the same greedy
actions from its checkpoint (`workbench eval`'s loader), from its ONNX export and from the trainer's own policy."""

import json

import numpy as np
import pytest
import torch

from conftest import last_json, workbench

onnxruntime = pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    "A short Pendulum run with both normalisations, trained in this process so its live policy can be compared."
    from workbench.train.config import TrainConfig
    from workbench.train.runner import train_run

    runs = tmp_path_factory.mktemp("norm") / "runs"
    cfg = TrainConfig.from_dict(
        {
            "env": "gym:Pendulum-v1",
            "num_envs": 4,
            "num_steps": 256,
            "num_minibatches": 16,
            "total_timesteps": 8192,
            "obs_norm": True,
            "norm_reward": True,
            "eval_every": 4,
            "eval_episodes": 2,
            "runs_dir": str(runs),
            "device": "cpu",
        }
    )
    summary, run_id, trainer = train_run(cfg)
    return summary, trainer


def observations(n=256, seed=0):
    "Real Pendulum observations from random play."
    import gymnasium as gym

    env, rng, obs = gym.make("Pendulum-v1"), np.random.default_rng(seed), []
    o, _ = env.reset(seed=seed)
    for _ in range(n):
        obs.append(o)
        o, _, term, trunc, _ = env.step(rng.uniform(-2, 2, (1,)).astype(np.float32))
        if term or trunc:
            o, _ = env.reset()
    return np.stack(obs).astype(np.float32)


def test_statistics_are_learned_and_saved(trained):
    from workbench.train.checkpoint import load_checkpoint

    summary, trainer = trained
    norm = trainer.policy.obs_norm
    assert norm.count > 8000 and norm.mean.abs().max() > 0.05 and not torch.allclose(norm.var, torch.ones(3))
    state = load_checkpoint(summary["last_checkpoint"])
    torch.testing.assert_close(state["model"]["obs_norm.mean"], norm.mean)
    assert state["reward_scale"]["count"] > 8000 and state["reward_scale"]["var"] > 1.0
    assert state["config"]["policy"]["separate_critic"] is None and "critic_encoder.0.weight" in state["model"]


def test_checkpoint_and_onnx_act_as_the_trainer(trained, tmp_path):
    from workbench.cli import load_policy

    summary, trainer = trained
    obs = observations()
    live = trainer.policy.cpu().eval()
    expected = np.clip(live.act(torch.from_numpy(obs), greedy=True)[0].numpy(), -2, 2)
    loaded, *_ = load_policy(summary["run_dir"], pick="last")  # the final checkpoint: the trainer's last weights
    np.testing.assert_array_equal(np.clip(loaded.act(torch.from_numpy(obs), greedy=True)[0].numpy(), -2, 2), expected)

    onnx = tmp_path / "policy.onnx"
    r = workbench("export", summary["last_checkpoint"], "--onnx", onnx, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])["matches"]
    session = onnxruntime.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
    action = session.run(["action"], {"obs": obs})[0]
    np.testing.assert_allclose(action, expected, atol=1e-5)  # normalisation and the bounds inside the model


def test_eval_uses_the_normalisation_it_was_trained_with(trained):
    from workbench.judge.episodes import evaluate_policy

    summary, trainer = trained
    r = workbench("eval", summary["last_checkpoint"], "--episodes", 3, "--json")
    assert r.returncode == 0, r.stderr
    got = last_json(r.stdout)
    mine = evaluate_policy(trainer.policy.cpu(), "gym:Pendulum-v1", 3, greedy=True, seed=12345)
    assert got["mean_return"] == pytest.approx(mine["mean_return"], abs=1e-6)


def test_eval_picks_the_best_checkpoint_and_says_so(trained):
    summary, _ = trained
    r = workbench("eval", summary["run_dir"], "--episodes", 1, "--json")
    assert r.returncode == 0, r.stderr
    assert last_json(r.stdout)["checkpoint"].endswith("best.pt")
    assert "the run's best-scoring checkpoint: step" in r.stderr and "greedy return" in r.stderr
    r = workbench("eval", summary["run_dir"], "--episodes", 1, "--pick", "last", "--json")
    assert "step_" in last_json(r.stdout)["checkpoint"] and "the run's checkpoint of step" in r.stderr
