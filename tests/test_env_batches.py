"""Envs stepped in batches in turn (`--env-batches 2`, PufferLib's EnvPool pattern): every row of the rollout is what
the plain loop would store (a recurrent policy's replay from the rollout's initial state gives back the log-probs
and values it acted with, through episode resets), and a run learns as the plain loop's does."""

import pytest
import torch

from conftest import last_json, workbench
from workbench.train.config import TrainConfig
from workbench.train.ppo import PPOTrainer

LSTM = dict(env="gym:CartPole-v1", policy="lstm", num_envs=4, backend="multiprocessing", num_workers=2, env_batches=2,
            num_steps=32, num_minibatches=2, update_epochs=1, total_timesteps=256, device="cpu", eval_every=0)  # fmt: skip


def replay(trainer) -> tuple[torch.Tensor, torch.Tensor]:
    "The rollout's log-probs and values, replayed from its initial state over its sequences (as the update does)."
    b, policy = trainer.buffer, trainer.policy
    with torch.no_grad():
        params, values, _ = policy(b.obs, b.initial_state, b.starts, final=False)
        logprobs, _ = policy.head.log_prob_entropy(params, b.actions)
    return logprobs, values


@pytest.mark.parametrize("learner", ["torch", "auto"])
def test_a_recurrent_policys_rows_replay_in_batches(learner):
    trainer = PPOTrainer(TrainConfig(**LSTM, learner=learner))
    try:
        trainer.collect_rollout()
        b = trainer.buffer
        assert b.dones[:, :2].any() and b.dones[:, 2:].any()  # episodes ended (and states reset) in both batches
        logprobs, values = replay(trainer)
        torch.testing.assert_close(logprobs, b.logprobs, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(values, b.values, atol=1e-4, rtol=1e-4)
        trainer.compute_advantages()
        trainer.update()
        trainer.collect_rollout()  # the held batch (envs 2, 3) acts on from where it was, with the updated policy
        logprobs, values = replay(trainer)
        torch.testing.assert_close(logprobs[:, 2:], b.logprobs[:, 2:], atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(values[:, 2:], b.values[:, 2:], atol=1e-4, rtol=1e-4)
        # the carried batch's first row was acted on by the policy before the update: its log-prob is that policy's
        assert not torch.allclose(logprobs[0, :2], b.logprobs[0, :2])
    finally:
        trainer.close()


def test_cartpole_learns_with_envs_in_batches(runs_dir):
    # 20K steps, not the default 150K: the plain loop's run reads 199.0 from 20K steps on (its cap is 200 steps), and
    # two worker processes on CI's two busy cores step a few hundred steps a second
    r = workbench("train", "--env", "puffer:cartpole", "--backend", "multiprocessing", "--num-workers", 2,
                  "--env-batches", 2, "--total-steps", 20_480, "--runs-dir", runs_dir, "--quiet", "--json",
                  timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr
    s = last_json(r.stdout)
    assert s["best_score"] >= 190, s
