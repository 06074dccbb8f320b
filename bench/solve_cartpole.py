"""Time to solve gymnasium CartPole-v1: workbench's PPOTrainer vs PufferLib 3.0's PuffeRL vs Stable-Baselines3 PPO.

One rule for all three trainers:
  * at the first update boundary at or after every EVAL_EVERY (2,560) env steps, run a greedy
    10-episode evaluation on fresh CartPole-v1 envs (one common function, `benchutil.greedy_returns`);
  * when it averages >= 475, confirm with a greedy 100-episode evaluation on other seeds;
  * "solved" = the 100-episode mean is >= 475. We report the env steps and the training seconds at
    that moment: a clock that is paused around every evaluation, so evaluation time is excluded.
  * each trainer has a budget of env steps and of training seconds; past it: "not solved".

Every (trainer, seed) run is a fresh process (`runner.fresh`), run one after another after the machine is quiet,
so the trainers never share a process (PufferLib's pufferl module changes signal and warning handling when
imported) and never compete for the 2 cores. Medians count a run that did not solve as infinitely slow.

    python -m bench solve_cartpole                          # 3 seeds x 3 trainers, a few minutes; recorded
    python -m bench solve_cartpole --seeds 1 2 3 4 5 6 7 8 9 10   # the RESULTS figure, ~6 min
    python -m bench solve_cartpole --quick                  # 1 seed, 60 s budgets: a smoke test
"""

import statistics, tempfile, time, shutil

import numpy as np

from benchutil import greedy_returns, puffer_default_train_config, versions
from runner import bootstrap_ratio, fresh, interval, make_table

ENV_ID = "CartPole-v1"
THRESHOLD = 475.0  # CartPole-v1's reward threshold
EVAL_EVERY = 2_560  # env steps between evaluations (10 updates of 8 envs x 32 steps)
CHECK_EPISODES = 10  # quick greedy check ...
CONFIRM_EPISODES = 100  # ... confirmed on 100 fresh episodes
TRAINERS = ("workbench", "pufferlib", "sb3")
FIGURES = {"workbench_median_s": "lower", "workbench_solved": "higher", "ours_over_sb3": "lower",
           "ours_over_pufferlib": "lower"}  # fmt: skip


# ----------------------------------------------------------------------------------------------
# The common evaluation and the clock (used identically by all three trainers)
# ----------------------------------------------------------------------------------------------
def greedy_mean_return(act, episodes: int, seed: int) -> float:
    "Mean return of `episodes` greedy CartPole-v1 episodes side by side (env i reset with seed + i)."
    return float(np.mean(greedy_returns(ENV_ID, act, episodes, seed)))


class SolveClock:
    """Training clock that pauses during evaluations, plus the solve rule and the budget.

    Call `start()` just before training begins and `check(step, act)` after every update; it returns
    True when training should stop (solved, or out of budget)."""

    def __init__(self, seed: int, budget_steps: int, budget_seconds: float):
        self.seed, self.budget_steps, self.budget_seconds = seed, budget_steps, budget_seconds
        self.next_eval, self.evals, self.eval_seconds = EVAL_EVERY, 0, 0.0
        self.solved_at = None  # (env steps, training seconds) when solved
        self.history = []  # (step, train seconds, 10-ep mean, 100-ep mean or None)

    def start(self):
        self.t0 = time.perf_counter()

    def train_seconds(self) -> float:
        return time.perf_counter() - self.t0 - self.eval_seconds

    def check(self, step: int, act) -> bool:
        out_of_budget = step >= self.budget_steps or self.train_seconds() >= self.budget_seconds
        if step < self.next_eval and not out_of_budget:
            return False
        pause = time.perf_counter()
        train_s = pause - self.t0 - self.eval_seconds  # the clock stops here
        while self.next_eval <= step:
            self.next_eval += EVAL_EVERY
        # evaluation seeds depend only on the run seed and the evaluation's index: same for all trainers
        quick = greedy_mean_return(act, CHECK_EPISODES, seed=10_000 * self.seed + 100 * self.evals)
        confirm = None
        if quick >= THRESHOLD:
            confirm = greedy_mean_return(
                act, CONFIRM_EPISODES, seed=10_000_000 + 10_000 * self.seed + 1_000 * self.evals
            )
            if confirm >= THRESHOLD:
                self.solved_at = (int(step), train_s)
        self.evals += 1
        self.history.append((int(step), round(train_s, 2), quick, confirm))
        self.eval_seconds += time.perf_counter() - pause  # ... and restarts here
        return self.solved_at is not None or out_of_budget

    def result(self, trainer: str, **extra) -> dict:
        steps, secs = self.solved_at if self.solved_at else (None, None)
        return {
            "trainer": trainer,
            "seed": self.seed,
            "solved": self.solved_at is not None,
            "steps": steps,
            "seconds": secs,
            "sps": steps / secs if steps else None,
            "eval_seconds": self.eval_seconds,
            "evals": self.evals,
            "history": self.history,
            **extra,
        }


# ----------------------------------------------------------------------------------------------
# (a) workbench's PPOTrainer, default hyperparameters
# ----------------------------------------------------------------------------------------------
def run_ours(seed: int, budget_steps: int, budget_seconds: float, overrides: dict) -> dict:
    import torch
    from workbench.train.ppo import PPOTrainer
    from workbench.train.config import TrainConfig

    clock = SolveClock(seed, budget_steps, budget_seconds)

    class BenchTrainer(PPOTrainer):
        # fit() calls evaluate() after every update (eval_every=1); we replace it by the common rule.
        def evaluate(self, episodes=None):
            act = lambda obs: self.policy.act(torch.as_tensor(obs), greedy=True)[0].numpy()
            if clock.check(self.global_step, act):
                self._stop = True
            return {"mean_return": None}

    # Only env / device / evaluation / budget settings; every PPO and network setting is the default.
    # total_timesteps is the budget, and (as in every run of ours) the length of the LR annealing.
    # --ours-set KEY=VALUE overrides (for exploring settings; the reported runs use none).
    cfg = TrainConfig.from_dict(
        {
            "env": f"gym:{ENV_ID}",
            "device": "cpu",
            "seed": seed,
            "total_timesteps": budget_steps,
            "eval_every": 1,
            "checkpoint_every": 0,
            **overrides,
        }
    )
    trainer = BenchTrainer(cfg)  # no run_dir: writes no files
    clock.start()
    trainer.fit()
    ppo = cfg.ppo
    return clock.result(
        "workbench",
        batch=cfg.batch_size,
        settings=f"num_envs {cfg.env.num_envs} x num_steps {ppo.num_steps}, {ppo.num_minibatches} minibatches, "
        f"{ppo.update_epochs} epochs, Adam lr {ppo.learning_rate} (linear anneal over {ppo.total_timesteps}), "
        f"gamma {ppo.gamma}, lambda {ppo.gae_lambda}, MLP {cfg.policy.num_layers}x{cfg.policy.hidden_size} tanh (shared)",
    )


# ----------------------------------------------------------------------------------------------
# (b) PufferLib 3.0's PuffeRL on gymnasium CartPole-v1 (GymnasiumPufferEnv, Serial backend)
# ----------------------------------------------------------------------------------------------
def make_gym_cartpole(buf=None, seed=0):
    import gymnasium, pufferlib.emulation

    return pufferlib.emulation.GymnasiumPufferEnv(env_creator=gymnasium.make, env_args=[ENV_ID], buf=buf, seed=seed)


def run_puffer(
    seed: int, budget_steps: int, budget_seconds: float, num_envs: int, horizon: int, minibatch: int
) -> dict:
    import random, torch
    import pufferlib.models, pufferlib.vector
    from pufferlib.pufferl import PuffeRL  # installs a SIGINT handler and RuntimeWarning->error: worker process only

    torch.set_num_threads(1)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # PuffeRL itself seeds only the envs

    clock = SolveClock(seed, budget_steps, budget_seconds)
    vecenv = pufferlib.vector.make(make_gym_cartpole, num_envs=num_envs, backend=pufferlib.vector.Serial, seed=seed)
    assert vecenv.num_agents == num_envs, vecenv.num_agents
    policy = pufferlib.models.Default(vecenv.driver_env, hidden_size=128)  # PufferLib's default policy

    config = puffer_default_train_config()
    config.update(
        # the settings that learned CartPole-v1 here (shared notes): Adam, lr 1e-3, 4 epochs, gamma 0.99, lambda 0.95
        optimizer="adam",
        learning_rate=1e-3,
        update_epochs=4,
        gamma=0.99,
        gae_lambda=0.95,
        # sizes: batch = num_envs x bptt_horizon, minibatches of whole horizon-long segments
        batch_size=num_envs * horizon,
        bptt_horizon=horizon,
        minibatch_size=minibatch,
        # run settings
        device="cpu",
        seed=seed,
        total_timesteps=budget_steps,
        env=ENV_ID,
        use_rnn=False,
        compile=False,
        data_dir=tempfile.mkdtemp(prefix="puffer-bench-"),
        checkpoint_interval=10**9,
    )
    # Its terminal dashboard (rich, redrawn every 0.25 s) would garble our output: switch it off.
    PuffeRL.print_dashboard = lambda self, *args, **kwargs: None
    trainer = PuffeRL(config, vecenv, policy)

    def act(obs):
        with torch.no_grad():
            logits, _ = policy.forward_eval(torch.as_tensor(obs))
        return logits.argmax(-1).numpy()

    # Drive its loop ourselves: evaluate() collects one batch, train() runs the update epochs.
    clock.start()
    while True:
        trainer.evaluate()
        trainer.train()
        if clock.check(trainer.global_step, act):
            break
    trainer.vecenv.close()
    trainer.utilization.stop()
    shutil.rmtree(config["data_dir"], ignore_errors=True)  # its final checkpoint
    return clock.result(
        "pufferlib",
        batch=config["batch_size"],
        settings=f"Serial {num_envs} envs x bptt_horizon {horizon}, minibatch {minibatch} "
        f"({config['update_epochs'] * config['batch_size'] // minibatch} minibatches per update), "
        f"{config['update_epochs']} epochs, Adam lr {config['learning_rate']} (cosine anneal over "
        f"{budget_steps}), gamma {config['gamma']}, lambda {config['gae_lambda']}, "
        f"models.Default (Linear 128 + GELU), other [train] defaults (vf_coef {config['vf_coef']}, "
        f"ent_coef {config['ent_coef']}, max_grad_norm {config['max_grad_norm']}, prioritised minibatches)",
    )


# ----------------------------------------------------------------------------------------------
# (c) Stable-Baselines3 PPO with the rl-zoo hyperparameters for CartPole-v1
# ----------------------------------------------------------------------------------------------
def run_sb3(seed: int, budget_steps: int, budget_seconds: float) -> dict:
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(1)  # same as ours and PuffeRL here (SB3 would otherwise use every core)

    clock = SolveClock(seed, budget_steps, budget_seconds)

    class SolveCallback(BaseCallback):
        # SB3 calls _on_rollout_start right after each update (train()): our update boundary.
        def _on_training_start(self):
            clock.start()

        def _on_rollout_start(self):
            act = lambda obs: self.model.predict(obs, deterministic=True)[0]
            self.stop = clock.check(self.model.num_timesteps, act)

        def _on_step(self):
            return not getattr(self, "stop", False)  # False ends learn()

    from zoo import ZOO, schedule

    row = dict(ZOO[ENV_ID]["sb3"])  # rl-zoo's hyperparams/ppo.yml row (its n_timesteps aside: the budget sets the run)
    env = make_vec_env(ENV_ID, n_envs=row.pop("n_envs"), seed=seed)
    model = PPO("MlpPolicy", env, device="cpu", seed=seed, verbose=0, **{k: schedule(v) for k, v in row.items()})
    callback = SolveCallback()
    model.learn(total_timesteps=budget_steps, callback=callback)
    if clock.solved_at is None and (
        not clock.history or clock.history[-1][0] != model.num_timesteps
    ):  # the last update had no check
        clock.next_eval = 0
        clock.check(model.num_timesteps, lambda obs: model.predict(obs, deterministic=True)[0])
    env.close()
    return clock.result(
        "sb3",
        batch=256,
        settings=f"8 envs x n_steps 32, batch_size 256, 20 epochs, lr lin_1e-3 and clip lin_0.2 (over "
        f"{budget_steps}), gamma 0.98, lambda 0.8, ent 0.0, MlpPolicy (separate 2x64 tanh pi / vf), torch threads 1",
    )


# ----------------------------------------------------------------------------------------------
# The runner's side: options, the runs, the record, the table
# ----------------------------------------------------------------------------------------------
def options(p):
    from zoo import setting

    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--trainers", nargs="+", default=list(TRAINERS), choices=TRAINERS)
    p.add_argument("--ours-steps", type=int, default=150_000, help="workbench's budget (its total_timesteps)")
    p.add_argument("--set", action="append", default=[], type=setting, metavar="KEY=VALUE",
                   help="one of workbench's settings (for exploring; the reported runs use none)")  # fmt: skip
    p.add_argument("--puffer-steps", type=int, default=1_000_000, help="PuffeRL's budget (its total_timesteps)")
    p.add_argument("--sb3-steps", type=int, default=100_000, help="SB3's budget (rl-zoo's n_timesteps)")
    p.add_argument("--budget-seconds", type=float, default=180.0, help="training seconds, every trainer")
    p.add_argument("--puffer-envs", type=int, default=16)
    p.add_argument("--puffer-horizon", type=int, default=32)
    p.add_argument("--puffer-minibatch", type=int, default=128)


def median_inf(xs: list) -> float:
    "The median, a run that did not solve counted as +infinity (honest about failures)."
    return statistics.median([float("inf") if x is None else x for x in xs])


def run(quick: bool = False, seeds=(1, 2, 3), trainers=TRAINERS, ours_steps: int = 150_000, set=(),
        puffer_steps: int = 1_000_000, sb3_steps: int = 100_000, budget_seconds: float = 180.0, puffer_envs: int = 16,
        puffer_horizon: int = 32, puffer_minibatch: int = 128, quiet=lambda: 0.0) -> dict:  # fmt: skip
    if quick:
        seeds, budget_seconds = list(seeds)[:1], 60.0
    calls = {"workbench": ("run_ours", dict(budget_steps=ours_steps, overrides=dict(set))),
             "pufferlib": ("run_puffer", dict(budget_steps=puffer_steps, num_envs=puffer_envs, horizon=puffer_horizon,
                                              minibatch=puffer_minibatch)),
             "sb3": ("run_sb3", dict(budget_steps=sb3_steps))}  # fmt: skip
    raw, configs = [], {}
    for seed in seeds:  # trainers interleaved, so that a drift of the machine spreads over all of them
        for t in trainers:
            busy = quiet()
            function, kw = calls[t]
            r = {"trainer": t, "seed": seed, "solved": False, "steps": None, "seconds": None}
            r.update(fresh("solve_cartpole", function, seed=seed, budget_seconds=budget_seconds, **kw))
            configs[t] = r.pop("settings", configs.get(t))
            raw.append({**r, "busy_before": round(busy, 3)})
            done = (
                f"solved at {r['steps']:,} steps, {r['seconds']:.2f} s" if r["solved"] else r.get("error", "not solved")
            )
            print(f"  {t:<10} seed {seed}: {done}", flush=True)
    figures, ci = {}, {}
    secs = {t: [r["seconds"] if r["solved"] else None for r in raw if r["trainer"] == t] for t in trainers}
    for t in trainers:
        figures[f"{t}_solved"] = sum(x is not None for x in secs[t])
        figures[f"{t}_median_steps"] = median_inf(
            [r["steps"] if r["solved"] else None for r in raw if r["trainer"] == t]
        )
        figures[f"{t}_median_s"] = round(median_inf(secs[t]), 3)
        if t != "workbench" and "workbench" in trainers:
            figures[f"ours_over_{t}"] = round(figures["workbench_median_s"] / figures[f"{t}_median_s"], 3)
            if None not in secs[t] + secs["workbench"] and len(seeds) > 1:
                ci[f"ours_over_{t}"] = bootstrap_ratio(secs["workbench"], secs[t], stat=statistics.median)
    settings = {"seeds": list(seeds), "trainers": list(trainers), "ours_steps": ours_steps, "set": dict(set),
                "puffer_steps": puffer_steps, "sb3_steps": sb3_steps, "budget_seconds": budget_seconds,
                "puffer": [puffer_envs, puffer_horizon, puffer_minibatch]}  # fmt: skip
    return {"settings": settings, "figures": figures, "ci95": ci, "raw": raw, "configs": configs,
            "versions": versions("torch", "pufferlib", "stable-baselines3", "gymnasium", "numpy")}  # fmt: skip


def table(records: list) -> str:
    "A row a trainer of each full run: solved, median steps and seconds, each seed's steps, its time over ours."

    def cells(rec):
        f, rows = rec["figures"], []
        n = lambda x: "-" if x in (None, float("inf")) else f"{x:,.0f}"
        for t in rec["settings"]["trainers"]:
            runs = [r for r in rec["raw"] if r["trainer"] == t]
            ratio = f.get(f"ours_over_{t}")
            over = (
                "1" if t == "workbench" else "-" if ratio is None else f"{ratio:.2f}{interval(rec, f'ours_over_{t}')}"
            )
            rows.append([t, f"{f[f'{t}_solved']}/{len(runs)}", n(f[f"{t}_median_steps"]), f"{f[f'{t}_median_s']:.2f}",
                         " / ".join(n(r["steps"]) if r["solved"] else "-" for r in runs), over])  # fmt: skip
        return rows

    return make_table(["trainer", "solved", "median steps", "median s", "steps to solve, each seed",
                       "ours / this (median s) [95% CI]"], records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench solve_cartpole`)
    import sys

    from runner import main

    sys.exit(main(["solve_cartpole", *sys.argv[1:]]))
