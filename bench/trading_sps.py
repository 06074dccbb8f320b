"""Steps per second of the `trading` env on one core, against the same rules written the usual way.

Both run on one CPU core (the process is pinned to core 0), stepping random actions, on the sample bars
(AAPL, IBM, MSFT, GOOG, training split, 256-bar episodes, discrete short/flat/long):

  * ours:      `make_env("trading", num_envs=N)`: one numpy-vectorised PufferLib env holding N accounts;
  * reference: the same rules as a one-account Gymnasium env (a Python loop per step, as gym-anytrading and
               most trading envs are written), N copies vectorised by PufferLib's Serial backend through
               `pufferlib.emulation` (what `make_env("gym:...")` does for any Gymnasium env).

The goal (issue 5): at least 5 million steps per second at 4096 envs on one core.

    python bench/trading_sps.py                 # 1, 64, 1024, 4096 envs
    python bench/trading_sps.py --seconds 1     # shorter
"""

import argparse, json, os, time

import numpy as np

from benchutil import versions, wait_for_quiet


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
    env = make(n)
    env.async_reset(0)
    env.recv()
    actions = np.random.default_rng(0).integers(0, 3, (64, n))
    steps, t0 = 0, time.perf_counter()
    while True:
        for k in range(16):
            env.send(actions[(steps + k) % 64])
            env.recv()
        steps += 16
        if time.perf_counter() - t0 >= seconds:
            break
    sps = steps * n / (time.perf_counter() - t0)
    env.close()
    return sps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, nargs="+", default=[1, 64, 1024, 4096])
    ap.add_argument("--seconds", type=float, default=3.0, help="stepping time per measurement")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    os.sched_setaffinity(0, {0})  # one core
    import pufferlib.emulation, pufferlib.vector
    from workbench.env.make import make_env

    OneAccount = scalar_env_class()
    ours = lambda n: make_env("trading", num_envs=n, seed=0)
    ref = lambda n: pufferlib.vector.make(
        [lambda buf=None, seed=0: pufferlib.emulation.GymnasiumPufferEnv(env_creator=OneAccount, buf=buf, seed=seed)]
        * n,
        env_args=[[] for _ in range(n)],
        env_kwargs=[{} for _ in range(n)],
        num_envs=n,
        backend=pufferlib.vector.Serial,
        seed=0,
    )
    busy = wait_for_quiet(0.15, 60)
    results = {}
    print(f"{'envs':>6} {'ours SPS':>14} {'reference SPS':>14} {'ours / ref':>10}")
    for n in args.envs:
        a = sorted(measure(ours, n, args.seconds) for _ in range(args.rounds))
        b = sorted(measure(ref, n, min(args.seconds, 2.0)) for _ in range(args.rounds))
        results[n] = {"ours": a, "reference": b}
        ma, mb = a[len(a) // 2], b[len(b) // 2]
        print(f"{n:>6} {ma:>14,.0f} {mb:>14,.0f} {ma / mb:>10.1f}", flush=True)
    print(f"(medians of {args.rounds} runs of {args.seconds:g} s; one core; machine busy {busy:.0%} before the start)")
    print(json.dumps({"sps": results, "seconds": args.seconds, "versions": versions("numpy", "pufferlib")}))


if __name__ == "__main__":
    main()
