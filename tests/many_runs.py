"""A run store with many runs, written through the store's API as trainers and sweeps write it: PPO runs over three
learning rates and several seeds (some in a sweep), code agents (SFT and GRPO) with their own metrics, a few tagged.
For the Runs page's test and `bench/runs_page.py`."""

import math, random, time

from workbench.runs.events import Metric
from workbench.runs.store import RunStore
from workbench.train.config import TrainConfig
from workbench.train.lm_config import LMTrainConfig

LRS = (1e-3, 3e-3, 1e-2)
POINTS = 40  # metric rows a run


def make_runs(runs_dir, n: int = 200, seed: int = 0) -> dict:
    """`n` finished runs in `runs_dir`'s store: 3 in 4 PPO (learning rates `LRS`, seeds 1..), a sweep of 20 of them,
    the rest SFT and GRPO runs. Returns {"ppo": [ids], "lm": [ids], "sweep": sweep id, "trials": [run ids]}."""
    rng, store = random.Random(seed), RunStore(runs_dir)
    out, t0 = {"ppo": [], "lm": [], "sweep": "lr-sweep", "trials": []}, time.time() - 86400
    store.create_sweep(out["sweep"], "lr", "train", "gym:CartPole-v1", "random", "eval/mean_return", "maximize", {})
    for i in range(n):
        start = t0 + 300 * i
        if i % 4 < 3:
            lr, s = LRS[i % 3], 1 + i // 3
            cfg = TrainConfig(learning_rate=lr, seed=s)
            rid = store.create_run(f"ppo-lr{lr:g}-s{s}", cfg.to_dict(), env="gym:CartPole-v1", policy="mlp")
            for p in range(POINTS):
                step = 1024 * (p + 1)
                ret = 500 * (1 - math.exp(-step * lr / 40)) + rng.gauss(0, 10)
                store.log_metrics(rid, step, {Metric.RETURN: ret, Metric.SPS: 50_000 + rng.gauss(0, 2000)}, start + p)
            out["ppo"].append(rid)
            store.update_run(rid, best_return=ret + 5, last_return=ret)
            if len(out["trials"]) < 20:
                trial = store.add_trial(out["sweep"], len(out["trials"]), {"learning_rate": lr})
                store.update_trial(trial, status="finished", run_id=rid, score=ret)
                out["trials"].append(rid)
        else:
            algo = ("sft", "grpo")[i % 8 // 4]
            cfg = LMTrainConfig(algo=algo, learning_rate=(3e-4, 1e-5)[algo == "grpo"], seed=i)
            rid = store.create_run(f"code-{algo}-s{i}", cfg.to_dict(), env="code:easy", policy="tiny")
            for p in range(POINTS):
                store.log_metrics(
                    rid,
                    4 * (p + 1),
                    {"charts/pass_rate": min(1.0, p / POINTS + rng.random() / 5), "losses/loss": 2.0 / (p + 1)},
                    start + p,
                )
            out["lm"].append(rid)
        store.update_run(rid, status="finished", global_step=1024 * POINTS, started_at=start, ended_at=start + POINTS)
    store.close()
    return out
