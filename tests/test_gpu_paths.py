"""The PPO trainer's CUDA-only paths, tried on a CPU inside the trainer.

* The update's epoch as one CUDA graph (`train.graphs.UpdateGraph`): a stand-in graph (its replay runs the captured
  epoch again on the same tensors, as CUDA replays the captured kernels) takes the trainer's own path (the rollout
  staged by `begin_update`, the learning rate as a tensor under an annealed schedule, the capture's warm-up undone, a
  new capture when a live setting changes) and ends with the plain eager run's parameters, for the MLP and for the
  LSTM (whose replay in the graph is the fixed-shape scan, from the staged initial state).
* Episodes counted at the rollout's end (`train.rollout.EpisodeSums`, on CUDA instead of the per-step count): the same
  episodes and stats as the per-step count, with rewards normalised and truncations bootstrapped in the buffer."""

import pytest
import torch

import workbench.policy.nets as nets
import workbench.policy.replay as replay
import workbench.train.graphs as graphs
from workbench.train.backend import TorchBackend
from workbench.train.config import TrainConfig
from workbench.train.ppo import PPOTrainer
from workbench.train.rollout import EpisodeSums

RUN = dict(env="gym:CartPole-v1", num_envs=8, num_steps=32, num_minibatches=4, update_epochs=2, anneal_lr=True,
           total_timesteps=8 * 32 * 4, device="cpu", eval_every=0, checkpoint_every=0, learner="torch", seed=3)  # fmt: skip


class StandIn:
    "A CUDA graph's stand-in on a CPU: `replay` runs the captured function again, writing into its first outputs."

    captures = 0

    def __init__(self, fn):
        self.fn, self.out = fn, fn()
        StandIn.captures += 1

    def replay(self):
        for old, new in zip(self.out[:2], self.fn()[:2]):
            old.copy_(new)


def stand_in_capture(fn, warmup=1):
    for _ in range(warmup):
        fn()
    graph = StandIn(fn)  # (CUDA's capture runs nothing; this run, like the warm-up, is undone by UpdateGraph)
    return graph, graph.out


def train(updates: int = 4, **changes) -> PPOTrainer:
    trainer = PPOTrainer(TrainConfig(**{**RUN, **changes}))
    try:
        for i in range(updates):
            trainer.step()
            trainer.count_update()
            trainer.scheduler.step()
            if i == 1:
                trainer.set_hparams(ent_coef=0.02)  # a live change: the graph holds the loss's settings fixed
    finally:
        trainer.close()
    return trainer


@pytest.mark.parametrize("policy", ["mlp", "lstm"])
def test_the_graphed_update_trains_as_the_eager_one(monkeypatch, policy):
    # (an LSTM's update: units are whole envs, 2 minibatches of 4; its replay in the graph is the fixed-shape scan)
    changes = {"policy": "lstm", "num_minibatches": 2} if policy == "lstm" else {}
    eager = train(**changes)
    assert eager.learner.update_graph is None  # on a CPU: the eager epoch
    monkeypatch.setattr(TorchBackend, "_graphable", lambda self: True)
    monkeypatch.setattr(graphs, "capture", stand_in_capture)
    monkeypatch.setattr(graphs.UpdateGraph, "needs_cuda", False)
    StandIn.captures = 0
    fixed = []  # whether each LSTM replay ran in the fixed-shape form (the only form a real graph can hold)
    real = nets.lstm_sequence
    monkeypatch.setattr(nets, "lstm_sequence", lambda *a, **k: fixed.append(replay._FIXED.on) or real(*a, **k))
    graphed = train(**changes)
    assert isinstance(graphed.learner.update_graph.graph, StandIn)
    if policy == "lstm":
        assert fixed and all(fixed)
        assert graphed.learner.initial_state[0] is graphed.learner.update_graph.static["initial0"]  # (staged)
    assert StandIn.captures == 2  # the first update, and again after ent_coef changed
    for p, q in zip(eager.policy.parameters(), graphed.policy.parameters()):
        torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-5)
    lr = graphed.optimizer.param_groups[0]["lr"]
    assert isinstance(lr, float) and lr == eager.optimizer.param_groups[0]["lr"] < RUN.get("learning_rate", 1)
    state = graphed.optimizer.state[next(graphed.policy.parameters())]
    minibatches = 2 if policy == "lstm" else 4
    assert int(state["step"]) == 4 * 2 * minibatches  # updates x epochs x minibatches: the warm-ups left no step behind


def test_episodes_counted_at_the_rollouts_end_are_the_per_step_ones():
    run = dict(env="puffer:cartpole", num_envs=64, num_steps=64, num_minibatches=4, total_timesteps=64 * 64 * 5,
               norm_reward=True, bootstrap_truncated=True, device="cpu", eval_every=0, checkpoint_every=0, seed=5)  # fmt: skip
    stats, returns = [], []
    for at_end in (False, True):
        trainer = PPOTrainer(TrainConfig(**run))
        if at_end:  # as on CUDA: the env's own rewards kept apart from the normalised ones
            trainer.episode_sums = EpisodeSums(64, "cpu")
            trainer.raw_rewards = torch.zeros_like(trainer.buffer.rewards)
        try:
            stats.append([trainer.collect_rollout() for _ in range(5)])
            returns.append(list(trainer.recent_returns))
        finally:
            trainer.close()
    assert len(returns[0]) > 30 and max(returns[0]) > 64  # episodes across rollouts, some carried over
    assert returns[0] == pytest.approx(returns[1])
    for ours, ref in zip(stats[1], stats[0]):
        assert {k: v for k, v in ours.items() if not k.startswith("perf/")} == pytest.approx(
            {k: v for k, v in ref.items() if not k.startswith("perf/")}
        )
