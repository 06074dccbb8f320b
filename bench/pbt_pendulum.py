"""Population-based training against its own members trained with fixed settings, on Pendulum-v1.

For each seed, the same population (settings drawn at random from the space below, by the seed) is trained twice
with the same budget of env steps per member:

  * fixed: each member keeps its drawn settings for the whole budget (`--method pbt --rounds 1`: no exploit);
  * pbt:   the budget is split into rounds; after each, the worst quarter copies the best quarter's checkpoint and
           perturbs its settings (`--method pbt --rounds R`).

Neither anneals the learning rate (PBT is the schedule). The score is each member's greedy evaluation at the end
(`eval_episodes` episodes). The question: does PBT's best member beat the best fixed member?

    python -m bench pbt_pendulum                           # 3 seeds, 4 members, 8 rounds, 100K steps a member
    python -m bench pbt_pendulum --seeds 4 5               # other seeds, recorded beside
"""

import statistics, sys, tempfile
from pathlib import Path

from benchutil import sweep, versions
from runner import make_table

SPACE = """env = "gym:Pendulum-v1"
total_timesteps = {budget}
eval_episodes = 20
device = "cpu"

[sweep]
metric = "eval/mean_return"
goal = "maximize"
quantile = 0.25
resample = 0.25

learning_rate = { distribution = "log_normal", min = 1e-4, max = 1e-2 }
gamma = { distribution = "logit_normal", min = 0.8, max = 0.995 }
gae_lambda = { distribution = "logit_normal", min = 0.6, max = 0.99 }
clip_coef = { distribution = "uniform", min = 0.05, max = 0.4 }
ent_coef = { distribution = "log_normal", min = 1e-5, max = 1e-2 }
"""


def train_population(seed: int, rounds: int, population: int, max_parallel: int, work: Path) -> dict:
    "One population (PBT with `rounds`; 1: fixed settings): its members' final scores and the lineage."
    flags = ["--method", "pbt", "--sweep-seed", seed, "--population", population, "--rounds", rounds]
    store, wall = sweep(work, f"r{rounds}-s{seed}", *flags, "--max-parallel", max_parallel)
    sweep_id = store.sweeps()[0]["id"]
    members, lineage = store.trials(sweep_id), store.lineage(sweep_id)
    final = {m["id"]: [e for e in lineage if e["member"] == m["id"]][-1]["score"] for m in members}
    first = {m["id"]: store.get_run(m["run_id"])["config"]["ppo"] for m in members}
    return {
        "seed": seed,
        "rounds": rounds,
        "wall_s": wall,
        "final": final,
        "lineage": [{k: e[k] for k in ("round", "member", "parent", "parameters", "score")} for e in lineage],
        "drawn": {
            m: {k: c[k] for k in ("learning_rate", "gamma", "gae_lambda", "clip_coef", "ent_coef")}
            for m, c in first.items()
        },
    }


FIGURES = {"pbt_best_minus_fixed_best_median": "higher", "pbt_wins": "higher"}


def options(p):
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    p.add_argument("--population", type=int, default=4)
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--budget", type=int, default=100_000, help="env steps a member")
    p.add_argument("--max-parallel", type=int, default=2)


def run(quick: bool = False, seeds=(1, 2, 3), population: int = 4, rounds: int = 8, budget: int = 100_000,
        max_parallel: int = 2) -> dict:  # fmt: skip
    if quick:
        seeds, population, rounds, budget = [1], 2, 2, 4_096
    work = Path(tempfile.mkdtemp(prefix="pbt-bench-"))
    (work / "space.toml").write_text(SPACE.replace("{budget}", str(budget)))
    raw = {"fixed": [], "pbt": []}
    for seed in seeds:
        for key, r in (("fixed", 1), ("pbt", rounds)):
            p = train_population(seed, r, population, max_parallel, work)
            raw[key].append(p)
            print(f"seed {seed} {key}: best {max(p['final'].values()):.1f} in {p['wall_s']:.0f} s", flush=True)
    per_seed = [{"seed": f["seed"], "fixed_best": max(f["final"].values()), "fixed_mean": statistics.mean(f["final"].values()),
                 "pbt_best": max(p["final"].values()), "pbt_mean": statistics.mean(p["final"].values())}
                for f, p in zip(raw["fixed"], raw["pbt"])]  # fmt: skip
    diffs = [x["pbt_best"] - x["fixed_best"] for x in per_seed]
    figures = {
        "pbt_best_minus_fixed_best_median": round(statistics.median(diffs), 1),
        "pbt_wins": sum(d > 0 for d in diffs),
    }
    settings = {"seeds": list(seeds), "population": population, "rounds": rounds, "budget": budget}
    return {"settings": settings, "figures": figures, "per_seed": per_seed, "raw": raw,
            "versions": versions("torch", "numpy", "gymnasium")}  # fmt: skip


def table(records: list) -> str:
    "A row a seed of each full run: the best and mean member, fixed settings against PBT's, and their difference."

    def cells(rec):
        return [[str(x["seed"]), *(f"{x[k]:.1f}" for k in ("fixed_best", "fixed_mean", "pbt_best", "pbt_mean")),
                 f"{x['pbt_best'] - x['fixed_best']:+.1f}"] for x in rec["per_seed"]]  # fmt: skip

    return make_table(["seed", "fixed: best member", "fixed: mean", "PBT: best member", "PBT: mean",
                       "PBT best - fixed best"], records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench pbt_pendulum`)
    from runner import main

    sys.exit(main(["pbt_pendulum", *sys.argv[1:]]))
