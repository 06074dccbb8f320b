"""The update's epoch as one CUDA graph (`train.graphs.UpdateGraph`) inside the PPO trainer, tried on a CPU: a stand-in
graph (its replay runs the captured epoch again on the same tensors, as CUDA replays the captured kernels) takes the
trainer's own path (the rollout staged by `begin_update`, the learning rate as a tensor under an annealed schedule, the
capture's warm-up undone, a new capture when a live setting changes) and ends with the plain eager run's parameters."""

import torch

import workbench.train.graphs as graphs
from workbench.train.backend import TorchBackend
from workbench.train.config import TrainConfig
from workbench.train.ppo import PPOTrainer

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


def train(updates: int = 4) -> PPOTrainer:
    trainer = PPOTrainer(TrainConfig(**RUN))
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


def test_the_graphed_update_trains_as_the_eager_one(monkeypatch):
    eager = train()
    assert eager.learner.update_graph is None  # on a CPU: the eager epoch
    monkeypatch.setattr(TorchBackend, "_graphable", lambda self: True)
    monkeypatch.setattr(graphs, "capture", stand_in_capture)
    monkeypatch.setattr(graphs.UpdateGraph, "needs_cuda", False)
    StandIn.captures = 0
    graphed = train()
    assert isinstance(graphed.learner.update_graph.graph, StandIn)
    assert StandIn.captures == 2  # the first update, and again after ent_coef changed
    for p, q in zip(eager.policy.parameters(), graphed.policy.parameters()):
        torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-5)
    lr = graphed.optimizer.param_groups[0]["lr"]
    assert isinstance(lr, float) and lr == eager.optimizer.param_groups[0]["lr"] < RUN.get("learning_rate", 1)
    state = graphed.optimizer.state[next(graphed.policy.parameters())]
    assert int(state["step"]) == 4 * 2 * 4  # updates x epochs x minibatches: the warm-ups left no step behind
