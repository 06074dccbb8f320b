"""Steps per second of the `trading` env on one core, against the same rules written the usual way.

Both run on one CPU core (the process is pinned to core 0), stepping random actions, on the sample bars
(AAPL, IBM, MSFT, GOOG, training split, 256-bar episodes, discrete short/flat/long):

  * ours:      `make_env("trading", num_envs=N)`: one numpy-vectorised PufferLib env holding N accounts;
  * reference: the same rules as a one-account Gymnasium env (a Python loop per step, as gym-anytrading and
               most trading envs are written), N copies vectorised by PufferLib's Serial backend through
               `pufferlib.emulation` (what `make_env("gym:...")` does for any Gymnasium env).

The goal (issue 5): at least 5 million steps per second at 4096 envs on one core.

    python -m bench trading_sps                 # 1, 64, 1024, 4096 envs, 3 alternating rounds of 3 s; recorded
    python -m bench trading_sps --quick         # 64 and 1,024 envs, 2 rounds of 0.3 s
"""

import sys

import numpy as np

from benchutil import versions
from per_size import PER_SIZE_FIGURES, per_size_run, per_size_table, step_rate

FIGURES = PER_SIZE_FIGURES


def scalar_env_class():
    "The reference: the trading rules for one account, in plain Python per step (features precomputed, as ours)."
    import gymnasium
    from workbench.env.trading import sample_bars, market_features, split_bounds, split_index, WARMUP

    bars = sample_bars()
    bounds = split_bounds(bars)["train"]
    feats = [market_features(b) for b in bars]
    ranges = [(max(split_index(b, bounds)[0], WARMUP), split_index(b, bounds)[1]) for b in bars]

    class OneAccount(gymnasium.Env):
        levels = (-1.0, 0.0, 1.0)

        def __init__(self, episode_length=256, cost=2e-4):
            self.observation_space = gymnasium.spaces.Box(-10, 10, (feats[0].shape[1] + 2,), np.float32)
            self.action_space = gymnasium.spaces.Discrete(3)
            self.episode_length, self.cost = episode_length, cost

        def _obs(self):
            price = bars[self.sym].close[self.t]
            return np.concatenate(
                [feats[self.sym][self.t], [self.pos, self.pos * (price / self.entry - 1) * 10]]
            ).astype(np.float32)

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            self.sym = int(self.np_random.integers(len(bars)))
            lo, hi = ranges[self.sym]
            self.t = lo + int(self.np_random.random() * (hi - lo - self.episode_length))
            self.steps, self.pos, self.entry, self.equity = 0, 0.0, 1.0, 1.0
            return self._obs(), {}

        def step(self, action):
            target = self.levels[int(action)]
            close = bars[self.sym].close
            price, nxt = close[self.t], close[self.t + 1]
            growth = max(1 + target * (nxt / price - 1) - self.cost * abs(target - self.pos), 1e-6)
            if target != self.pos:
                self.entry = price
            self.pos, self.equity = target, self.equity * growth
            self.t += 1
            self.steps += 1
            return self._obs(), float(np.log(growth)), self.equity < 1e-3, self.steps >= self.episode_length, {}

    return OneAccount


def measure(make, n: int, seconds: float) -> float:
    return n * step_rate(make(n), np.random.default_rng(0).integers(0, 3, (64, n)), seconds)


def run(quick: bool = False) -> dict:
    "Steps/s of ours and the reference at each number of envs, on one core (`per_size.per_size_run`)."
    import pufferlib.emulation, pufferlib.vector
    from workbench.env.make import make_env

    one = scalar_env_class()
    ours = lambda n: make_env("trading", num_envs=n, seed=0)
    ref = lambda n: pufferlib.vector.make(
        [lambda buf=None, seed=0: pufferlib.emulation.GymnasiumPufferEnv(env_creator=one, buf=buf, seed=seed)] * n,
        env_args=[[] for _ in range(n)], env_kwargs=[{} for _ in range(n)], num_envs=n,
        backend=pufferlib.vector.Serial, seed=0,
    )  # fmt: skip
    return per_size_run(
        quick, lambda n, s: measure(ours, n, s), lambda n, s: measure(ref, n, s), versions("numpy", "pufferlib")
    )


def table(records: list) -> str:
    return per_size_table(records, "envs", "ours, steps/s", "one-account Gymnasium env")


if __name__ == "__main__":
    from runner import main

    sys.exit(main(["trading_sps", *sys.argv[1:]]))
