"""Grid steps per second of the `planpath` env on one core, against the same rules written one grid an object.

Both run on one CPU core (the process is pinned to core 0), stepping random actions for a planner and an
executor on 10 x 10 training grids with 22% walls:

  * ours:      `make_env("planpath", num_envs=2 * N)`: one numpy-vectorised PufferLib env holding N grids
               (grids drawn in batches, distances by a batched breadth-first search);
  * reference: the same rules for one grid as a Python object (a grid drawn and searched when its episode
               starts, a step as plain Python, the observation filled per grid), N of them stepped in a
               loop: the way multi-agent LLM frameworks such as PettingLLMs hold their Plan-Path states.

A grid step moves both agents of a grid once (a planner's turn or an executor's). The goal (issue 20): the
rate at 4,096 grids, in `bench/RESULTS.md`.

    python -m bench planpath_sps                 # 1, 64, 1024, 4096 grids, 3 rounds of 3 s; recorded
    python -m bench planpath_sps --quick         # 64 and 1,024 grids, 2 rounds of 0.3 s
"""

import collections, random, sys, time

import numpy as np

from benchutil import versions
from per_size import PER_SIZE_FIGURES, per_size_run, per_size_table, step_rate

FIGURES = PER_SIZE_FIGURES

MOVES = ((-1, 0), (1, 0), (0, -1), (0, 1))


class OneGrid:
    "The reference: one Plan-Path grid for a planner and an executor, in plain Python (team reward only)."

    def __init__(self, seed: int, size: int = 10, walls: float = 0.22, max_moves: int = 64):
        self.rng, self.size, self.walls_p, self.max_moves = random.Random(seed), size, walls, max_moves
        self.obs = np.zeros((2, 3 * size * size + 17), np.float32)
        self.reset()

    def _distances(self):
        n, d, q = self.size, {self.goal: 0}, collections.deque([self.goal])
        while q:
            r, c = q.popleft()
            for dr, dc in MOVES:
                x = (r + dr, c + dc)
                if 0 <= x[0] < n and 0 <= x[1] < n and x not in self.walls and x not in d:
                    d[x] = d[(r, c)] + 1
                    q.append(x)
        return d

    def reset(self):
        n = self.size
        while True:
            self.walls = {(r, c) for r in range(n) for c in range(n) if self.rng.random() < self.walls_p}
            free = [(r, c) for r in range(n) for c in range(n) if (r, c) not in self.walls]
            if len(free) < 2:
                continue
            self.goal = self.rng.choice(free)
            self.dist = self._distances()
            starts = [x for x in self.dist if self.dist[x] > 0]
            if starts:
                break
        self.pos = self.rng.choice(starts)
        self.shortest, self.moves, self.turn, self.msg = self.dist[self.pos], 0, 0, -1
        self._observe()

    def _observe(self):
        n, o = self.size, self.obs
        o[:] = 0
        for r, c in self.walls:
            o[0, r * n + c] = 1
        o[0, n * n + self.pos[0] * n + self.pos[1]] = 1
        o[0, 2 * n * n + self.goal[0] * n + self.goal[1]] = 1
        for i, (dr, dc) in enumerate((a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)):
            x = (self.pos[0] + dr, self.pos[1] + dc)
            o[1, 3 * n * n + i] = not (0 <= x[0] < n and 0 <= x[1] < n) or x in self.walls
        o[1, 3 * n * n + 9 + self.msg + 1] = 1
        o[0, -3] = o[1, -2] = 1
        o[self.turn, -1] = 1

    def step(self, planner: int, executor: int):
        reward = 0.0
        if self.turn == 0:
            self.msg, self.turn = planner, 1
        else:
            x = (self.pos[0] + MOVES[executor][0], self.pos[1] + MOVES[executor][1])
            valid = 0 <= x[0] < self.size and 0 <= x[1] < self.size and x not in self.walls
            reward = -0.01 - (0 if valid else 0.1)
            self.pos = x if valid else self.pos
            self.moves, self.turn = self.moves + 1, 0
            if self.pos == self.goal:
                self.reset()
                return reward + 1.0, True
            if self.moves >= self.max_moves:
                self.reset()
                return reward - 1.0, True
        self._observe()
        return reward, False


def measure_ours(n: int, seconds: float) -> float:
    from workbench.env.make import make_env

    actions = np.random.default_rng(0).integers(0, 4, (64, 2 * n))
    return n * step_rate(make_env("planpath", num_envs=2 * n, seed=0), actions, seconds)  # a grid step: both agents


def measure_reference(n: int, seconds: float) -> float:
    grids = [OneGrid(seed) for seed in range(n)]
    actions = np.random.default_rng(0).integers(0, 4, (64, n, 2)).tolist()
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        a = actions[steps % 64]
        rewards = [g.step(p, e) for g, (p, e) in zip(grids, a)]
        np.stack([g.obs for g in grids])  # the batch a trainer reads
        steps += 1
        del rewards
    return steps * n / (time.perf_counter() - t0)


def run(quick: bool = False) -> dict:
    "Grid steps/s of ours and the reference at each number of grids, on one core (`per_size.per_size_run`)."
    return per_size_run(quick, measure_ours, measure_reference, versions("numpy", "pufferlib"))


def table(records: list) -> str:
    return per_size_table(records, "grids", "ours, grid steps/s", "one object a grid")


if __name__ == "__main__":
    from runner import main

    sys.exit(main(["planpath_sps", *sys.argv[1:]]))
