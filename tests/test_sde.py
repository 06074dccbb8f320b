"""State-dependent exploration (gSDE, `--sde`) in training: the noise each step is the features times the env's matrix,
redrawn every `sde_sample_freq` steps; a run killed with SIGKILL resumes with the same noise; the exported greedy
policy ignores the noise; every network kind trains with it."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import kill_after_checkpoints, last_json, start_workbench, workbench
from workbench.train.checkpoint import load_checkpoint
from workbench.train.config import TrainConfig
from workbench.train.ppo import PPOTrainer

PENDULUM = dict(env="gym:Pendulum-v1", num_envs=2, num_steps=16, num_minibatches=2, update_epochs=1, device="cpu",
                eval_every=0, checkpoint_every=0, sde=True, log_std_init=-1.0)  # fmt: skip


def record_steps(trainer) -> list:
    "Each rollout step's (features, matrices, action - mean), as the head sampled them."
    head, steps = trainer.policy.head, []
    sample = head.sample

    def recording(params, greedy=False):
        action, logp = sample(params, greedy)
        mean, _, feats = head._split(params)
        steps.append((feats.clone(), head.matrices.clone(), (action - mean).clone()))
        return action, logp

    head.sample = recording
    return steps


@pytest.mark.parametrize("policy", ["mlp", "lstm", "transformer"])
def test_the_noise_is_features_times_the_matrix_redrawn_every_n_steps(policy):
    trainer = PPOTrainer(TrainConfig(**PENDULUM, policy=policy, sde_sample_freq=4, total_timesteps=64, obs_norm=True))
    steps = record_steps(trainer)
    trainer.fit()
    assert len(steps) == 2 * 16  # two rollouts of 16 steps
    for feats, matrices, noise in steps:  # each env's noise: its features times its own matrix
        torch.testing.assert_close(noise, torch.einsum("nh,nhd->nd", feats, matrices), rtol=0, atol=1e-6)
        assert not torch.equal(matrices[0], matrices[1])  # one matrix an env
    redrawn = [t for t in range(1, len(steps)) if not torch.equal(steps[t][1], steps[t - 1][1])]
    assert redrawn == [4, 8, 12, 16, 20, 24, 28]  # every 4 steps, the rollout's start included

    # Live: a new frequency applies from the next rollout; none at all: one draw a rollout
    for freq, expected in ((8, [8]), (None, [])):
        trainer.set_hparams(sde_sample_freq=freq)
        steps.clear()
        trainer.step()
        assert [t for t in range(1, 16) if not torch.equal(steps[t][1], steps[t - 1][1])] == expected


def test_the_same_seed_draws_the_same_noise():
    runs = []
    for _ in range(2):
        trainer = PPOTrainer(TrainConfig(**PENDULUM, total_timesteps=32))
        steps = record_steps(trainer)
        trainer.fit()
        runs.append(torch.stack([m for _, m, _ in steps]))
    assert torch.equal(runs[0], runs[1])


def checkpoints(run_dir) -> dict:
    return {load_checkpoint(p)["counters"]["global_step"]: p for p in (run_dir / "checkpoints").glob("step_*.pt")}


def test_a_run_killed_with_sigkill_resumes_with_the_same_noise(runs_dir):
    """A run killed between checkpoints resumes from its last one with the noise generator where it was: the
    matrices it draws next are those an uninterrupted run of the same seed draws (the envs, reset at the resume,
    differ from then on; the generator does not depend on them). No learning-rate annealing: the reference run is
    shorter, and its schedule would differ."""
    flags = ["--env", "gym:Pendulum-v1", "--no-tuned", "--sde", "--sde-sample-freq", "8", "--log-std-init", "-1",
             "--num-envs", 2, "--num-steps", 32, "--num-minibatches", 2, "--update-epochs", 2, "--eval-every", 0,
             "--checkpoint-every", 1, "--keep-last", 1000, "--no-anneal-lr", "--device", "cpu",
             "--runs-dir", runs_dir]  # fmt: skip
    proc = start_workbench("train", *flags, "--total-steps", 64 * 5000, "--name", "killme")
    run_dir = kill_after_checkpoints(proc, runs_dir, "killme", 3).parent
    last = max(checkpoints(run_dir))

    r = workbench("train", "--resume", run_dir, "--total-steps", last + 128, "--quiet", "--json")
    assert r.returncode == 0, r.stderr
    assert last_json(r.stdout)["global_step"] == last + 128
    ref = workbench("train", *flags, "--total-steps", last + 128, "--name", "ref", "--quiet", "--json")
    assert ref.returncode == 0, ref.stderr
    ours = {s: load_checkpoint(p) for s, p in checkpoints(run_dir).items()}
    theirs = {s: load_checkpoint(p) for s, p in checkpoints(Path(last_json(ref.stdout)["run_dir"])).items()}
    at = last + 64  # the first update after the resume: its rollout drew from the checkpoint's generator and weights
    assert torch.equal(ours[at]["sde"]["matrices"], theirs[at]["sde"]["matrices"])
    for step in (last, at, at + 64):  # the generator stays in step
        assert torch.equal(ours[step]["sde"]["generator"], theirs[step]["sde"]["generator"]), step
    assert torch.equal(ours[last]["sde"]["matrices"], theirs[last]["sde"]["matrices"])
    assert not torch.equal(ours[at]["sde"]["matrices"], ours[last]["sde"]["matrices"])  # (redrawn since)
    for name, weights in ours[last]["model"].items():  # up to the kill, the two runs are the same run
        assert torch.equal(weights, theirs[last]["model"][name]), name


@pytest.mark.parametrize("policy", ["mlp", "lstm", "transformer"])
def test_the_exported_gsde_policy_is_the_greedy_policy(runs_dir, tmp_path, policy):
    onnxruntime = pytest.importorskip("onnxruntime")
    r = workbench("train", "--env", "gym:Pendulum-v1", "--no-tuned", "--sde", "--policy", policy, "--total-steps",
                  1024, "--num-envs", 4, "--eval-every", 0, "--device", "cpu", "--runs-dir", runs_dir, "--quiet",
                  "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    run_dir = last_json(r.stdout)["run_dir"]
    out = tmp_path / "policy.onnx"
    e = workbench("export", run_dir, "--onnx", out, "--json")
    assert e.returncode == 0, e.stderr
    result = json.loads(e.stdout)
    assert result["matches"] and result["max_abs_diff"]["action"] < 1e-5, result

    from workbench.cli import load_policy
    from workbench.policy.export import state_names

    policy_, *_ = load_policy(run_dir)
    policy_.eval()
    obs = np.random.default_rng(0).normal(0, 1, (64, 3)).astype(np.float32)
    state = policy_.initial_state(64)
    inputs = {"obs": obs, **{n: s.numpy() for n, s in zip(state_names(policy_), state or ())}}
    onnx_action = onnxruntime.InferenceSession(str(out)).run(None, inputs)[0]
    policy_.head.resample(64)  # matrices drawn: the greedy action ignores them
    greedy = policy_.act(torch.as_tensor(obs), state, greedy=True)[0].clamp(-2, 2).numpy()
    np.testing.assert_allclose(onnx_action, greedy, atol=1e-5)
    sampled = policy_.act(torch.as_tensor(obs), state)[0].clamp(-2, 2).numpy()
    assert np.abs(sampled - greedy).max() > 1e-3  # (and sampling does use them)


def test_the_noise_stream_is_restored_for_its_own_run_only(tmp_path):
    "A resume of the same run continues its generator; another run's checkpoint (PBT's exploit copies one) does not."
    cfg = TrainConfig(**PENDULUM, total_timesteps=32)
    source = PPOTrainer(cfg, run_dir=tmp_path / "a")
    source.step()
    state = source.state_dict()
    same = PPOTrainer(cfg, run_dir=tmp_path / "a", resume=state)
    other = PPOTrainer(cfg, run_dir=tmp_path / "b", resume=state)
    saved = state["sde"]["generator"]
    assert torch.equal(same.policy.head.generator.get_state(), saved)
    assert not torch.equal(other.policy.head.generator.get_state(), saved)
    for t in (source, same, other):
        t.close()
