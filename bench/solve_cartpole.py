"""Time to solve gymnasium CartPole-v1: workbench's PPOTrainer vs PufferLib 3.0's PuffeRL vs Stable-Baselines3 PPO.

One rule for all three trainers:
  * at the first update boundary at or after every EVAL_EVERY (2,560) env steps, run a greedy
    10-episode evaluation on fresh CartPole-v1 envs (one common function, `greedy_mean_return`);
  * when it averages >= 475, confirm with a greedy 100-episode evaluation on other seeds;
  * "solved" = the 100-episode mean is >= 475. We report the env steps and the training seconds at
    that moment: a clock that is paused around every evaluation, so evaluation time is excluded.
  * each trainer has a budget of env steps and of training seconds; past it: "not solved".

Every (trainer, seed) run is a fresh subprocess of this script (`--worker`), run one after another,
so the trainers never share a process (PufferLib's pufferl module changes signal and warning
handling when imported) and never compete for the 2 cores.

    python bench/solve_cartpole.py            # 3 seeds x 3 trainers, a few minutes
    python bench/solve_cartpole.py --quick    # 1 seed, 60 s budgets: a smoke test
"""

import argparse, json, shutil, statistics, tempfile, time

import numpy as np

from benchutil import print_result, run_worker, wait_for_quiet, versions, puffer_default_train_config

ENV_ID = "CartPole-v1"
THRESHOLD = 475.0  # CartPole-v1's reward threshold
EVAL_EVERY = 2_560  # env steps between evaluations (10 updates of 8 envs x 32 steps)
CHECK_EPISODES = 10  # quick greedy check ...
CONFIRM_EPISODES = 100  # ... confirmed on 100 fresh episodes


# ----------------------------------------------------------------------------------------------
# The common evaluation and the clock (used identically by all three trainers)
# ----------------------------------------------------------------------------------------------
def greedy_mean_return(act, episodes: int, seed: int) -> float:
    """Mean return of `episodes` CartPole-v1 episodes; `act` maps a (n, 4) float32 batch of observations
    to n greedy actions. The episodes run side by side (one env each, env i reset with seed + i)."""
    import gymnasium as gym

    envs = [gym.make(ENV_ID) for _ in range(episodes)]
    obs = np.stack([env.reset(seed=seed + i)[0] for i, env in enumerate(envs)]).astype(np.float32)
    returns, running = np.zeros(episodes), np.ones(episodes, dtype=bool)
    while running.any():
        actions = np.asarray(act(obs)).reshape(-1)
        for i in np.flatnonzero(running):
            o, r, terminated, truncated, _ = envs[i].step(int(actions[i]))
            obs[i] = o
            returns[i] += r
            if terminated or truncated:
                running[i] = False
    for env in envs:
        env.close()
    return float(returns.mean())


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
def linear(start: float):
    "rl-zoo's lin_<x>: the value falls linearly from `start` to 0 over the run."
    return lambda progress_remaining: progress_remaining * start


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

    env = make_vec_env(ENV_ID, n_envs=8, seed=seed)
    # rl-zoo hyperparams/ppo.yml, CartPole-v1 (n_timesteps there is 1e5; here the budget sets the run length)
    model = PPO(
        "MlpPolicy",
        env,
        n_steps=32,
        batch_size=256,
        gae_lambda=0.8,
        gamma=0.98,
        n_epochs=20,
        ent_coef=0.0,
        learning_rate=linear(1e-3),
        clip_range=linear(0.2),
        device="cpu",
        seed=seed,
        verbose=0,
    )
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
# Driver: one subprocess per (trainer, seed), run one after another, then the table
# ----------------------------------------------------------------------------------------------
WORKER_ARGS = (
    "ours_set",
    "ours_steps",
    "puffer_steps",
    "sb3_steps",
    "budget_seconds",
    "puffer_envs",
    "puffer_horizon",
    "puffer_minibatch",
)


def worker(args):
    name, seed = args.worker, args.seed
    if name == "workbench":
        result = run_ours(seed, args.ours_steps, args.budget_seconds, json.loads(args.ours_set))
    elif name == "pufferlib":
        result = run_puffer(
            seed, args.puffer_steps, args.budget_seconds, args.puffer_envs, args.puffer_horizon, args.puffer_minibatch
        )
    else:
        result = run_sb3(seed, args.sb3_steps, args.budget_seconds)
    print_result(result)


def run_one(name: str, seed: int, args) -> dict:
    "Wait for a quiet machine, then run one trainer on one seed in a fresh process."
    busy = wait_for_quiet(args.max_busy, args.max_wait)
    argv = ["--worker", name, "--seed", seed]
    for k in WORKER_ARGS:
        argv += [f"--{k.replace('_', '-')}", getattr(args, k)]
    result = {"trainer": name, "seed": seed, "solved": False, "steps": None, "seconds": None, "sps": None}
    result.update(run_worker(__file__, argv))
    result["busy_before"] = busy
    return result


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument(
        "--trainers", nargs="+", default=["workbench", "pufferlib", "sb3"], choices=["workbench", "pufferlib", "sb3"]
    )
    p.add_argument(
        "--ours-steps",
        type=int,
        default=150_000,
        help="workbench step budget (= its total_timesteps; 150K is our default run length)",
    )
    p.add_argument(
        "--ours-set", default="{}", help="JSON dict of workbench config overrides, e.g. '{\"num_minibatches\": 2}'"
    )
    p.add_argument("--puffer-steps", type=int, default=1_000_000, help="PuffeRL step budget (= its total_timesteps)")
    p.add_argument(
        "--sb3-steps",
        type=int,
        default=100_000,
        help="SB3 step budget (= learn(total_timesteps); 100K is rl-zoo's n_timesteps for CartPole-v1)",
    )
    p.add_argument("--budget-seconds", type=float, default=180.0, help="training-seconds budget, every trainer")
    p.add_argument("--puffer-envs", type=int, default=16)
    p.add_argument("--puffer-horizon", type=int, default=32)
    p.add_argument("--puffer-minibatch", type=int, default=128)
    p.add_argument(
        "--max-busy",
        type=float,
        default=0.15,
        help="before each run, wait until other processes use less than this fraction of the cores ...",
    )
    p.add_argument("--max-wait", type=float, default=30.0, help="... but wait at most this many seconds")
    p.add_argument("--quick", action="store_true", help="one seed, 60 s budgets: a smoke test")
    p.add_argument("--json", help="also write all results (with evaluation histories) to this file")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)
    if args.quick:
        args.seeds, args.budget_seconds = args.seeds[:1], 60.0

    info = versions("torch", "pufferlib", "stable-baselines3", "gymnasium", "numpy")
    print(
        f"# time to solve {ENV_ID} (greedy 100-episode mean >= {THRESHOLD:.0f}; checks every {EVAL_EVERY} steps; "
        f"evaluation time excluded)"
    )
    print("# " + ", ".join(f"{k} {v}" for k, v in info.items()) + "; torch threads 1 in every trainer")
    results, t_all = [], time.perf_counter()
    for seed in args.seeds:  # interleave trainers so machine noise spreads over all of them
        for name in args.trainers:
            r = run_one(name, seed, args)
            results.append(r)
            print(
                f"  {name:<10} seed {seed}: "
                + (
                    f"solved at {r['steps']} steps, {r['seconds']:.1f} s"
                    if r["solved"]
                    else "not solved" + (f" ({r['error']})" if "error" in r else "")
                )
                + f"  [other load before: {100 * r['busy_before']:.0f}% of the cores]",
                flush=True,
            )

    print(f"\n{'trainer':<10} {'seed':>4} {'solved steps':>12} {'seconds':>8} {'SPS':>7}")
    for r in results:
        print(
            f"{r['trainer']:<10} {r['seed']:>4} {fmt(r['steps'], 'd') if r['solved'] else 'not solved':>12} "
            f"{fmt(r['seconds'], '.1f'):>8} {fmt(r['sps'], '.0f'):>7}"
        )
    print(f"\n{'trainer':<10} {'solved':>6} {'median steps':>12} {'median s':>8} {'s / ours':>8}")
    medians = {}
    for name in args.trainers:
        rs = [r for r in results if r["trainer"] == name]
        ok = [r for r in rs if r["solved"]]
        # a run that did not solve counts as +infinity, so the median is honest about failures
        secs = sorted([r["seconds"] for r in ok] + [float("inf")] * (len(rs) - len(ok)))
        steps = sorted([r["steps"] for r in ok] + [float("inf")] * (len(rs) - len(ok)))
        medians[name] = (statistics.median(steps), statistics.median(secs))
    ours = medians.get("workbench", (None, None))[1]
    for name, (steps, secs) in medians.items():
        n_ok = sum(r["solved"] for r in results if r["trainer"] == name)
        ratio = secs / ours if ours and ours != float("inf") and secs != float("inf") else None
        print(
            f"{name:<10} {n_ok:>3}/{len(args.seeds):<2} {fmt(steps, '.0f'):>12} {fmt(secs, '.1f'):>8} {fmt(ratio, '.2f'):>8}"
        )
    print("\nsettings:")
    for name in args.trainers:
        r = next((r for r in results if r["trainer"] == name and "settings" in r), None)
        if r:
            print(f"  {name}: {r['settings']}")
    print(f"\ntotal benchmark time {time.perf_counter() - t_all:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"versions": info, "args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
