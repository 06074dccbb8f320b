"""Population-based training against its own members trained with fixed settings, on Pendulum-v1.

For each seed, the same population (settings drawn at random from the space below, by the seed) is trained twice
with the same budget of env steps per member:

  * fixed: each member keeps its drawn settings for the whole budget (`--method pbt --rounds 1`: no exploit);
  * pbt:   the budget is split into rounds; after each, the worst quarter copies the best quarter's checkpoint and
           perturbs its settings (`--method pbt --rounds R`).

Neither anneals the learning rate (PBT is the schedule). The score is each member's greedy evaluation at the end
(`eval_episodes` episodes). The question: does PBT's best member beat the best fixed member?

    python bench/pbt_pendulum.py                           # 3 seeds, 4 members, 8 rounds, 100K steps a member
    python bench/pbt_pendulum.py --report bench/out/pbt_pendulum.json

Writes bench/out/pbt_pendulum.json.
"""

import argparse, json, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path

from benchutil import versions

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
WORKBENCH = str(Path(sys.executable).parent / "workbench")


def population(seed: int, rounds: int, args, work: Path) -> dict:
    "One population (PBT with `rounds`; 1: fixed settings): its members' final scores and the lineage."
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from workbench.runs.store import RunStore

    runs = work / f"r{rounds}-s{seed}"
    t0 = time.time()
    cmd = [
        WORKBENCH,
        "sweep",
        "--config",
        str(work / "space.toml"),
        "--method",
        "pbt",
        "--sweep-seed",
        str(seed),
        "--population",
        str(args.population),
        "--rounds",
        str(rounds),
        "--max-parallel",
        str(args.max_parallel),
        "--runs-dir",
        str(runs),
        "--json",
        "--quiet",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"pbt seed {seed} rounds {rounds} failed: {r.stderr[-2000:]}")
    store = RunStore(runs)
    sweep = store.sweeps()[0]
    members = store.trials(sweep["id"])
    lineage = store.lineage(sweep["id"])
    final = {m["id"]: [e for e in lineage if e["member"] == m["id"]][-1]["score"] for m in members}
    first = {m["id"]: store.get_run(m["run_id"])["config"]["ppo"] for m in members}
    return {
        "seed": seed,
        "rounds": rounds,
        "wall_s": time.time() - t0,
        "final": final,
        "lineage": [{k: e[k] for k in ("round", "member", "parent", "parameters", "score")} for e in lineage],
        "drawn": {
            m: {k: c[k] for k in ("learning_rate", "gamma", "gae_lambda", "clip_coef", "ent_coef")}
            for m, c in first.items()
        },
    }


def summary(data: dict) -> str:
    rows = [
        "| seed | fixed: best member | fixed: mean | PBT: best member | PBT: mean | PBT best - fixed best |",
        "|---|---|---|---|---|---|",
    ]
    diffs = []
    for fixed, pbt in zip(data["fixed"], data["pbt"]):
        fb, fm = max(fixed["final"].values()), statistics.mean(fixed["final"].values())
        pb, pm = max(pbt["final"].values()), statistics.mean(pbt["final"].values())
        diffs.append(pb - fb)
        rows.append(f"| {fixed['seed']} | {fb:.1f} | {fm:.1f} | {pb:.1f} | {pm:.1f} | {pb - fb:+.1f} |")
    rows.append(
        f"\nPBT's best member beat the best fixed member in {sum(d > 0 for d in diffs)} of {len(diffs)} seeds "
        f"(median difference {statistics.median(diffs):+.1f})."
    )
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--population", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--budget", type=int, default=100_000, help="env steps per member")
    ap.add_argument("--max-parallel", type=int, default=2)
    ap.add_argument("--json", default="bench/out/pbt_pendulum.json")
    ap.add_argument("--report", metavar="JSON")
    args = ap.parse_args()
    if args.report:
        data = json.loads(Path(args.report).read_text())
    else:
        work = Path(tempfile.mkdtemp(prefix="pbt-bench-"))
        (work / "space.toml").write_text(SPACE.replace("{budget}", str(args.budget)))
        data = {
            "command": "python bench/pbt_pendulum.py " + " ".join(sys.argv[1:]),
            "versions": versions("torch", "numpy", "gymnasium"),
            "fixed": [],
            "pbt": [],
        }
        for seed in [int(s) for s in args.seeds.split(",")]:
            for key, rounds in (("fixed", 1), ("pbt", args.rounds)):
                p = population(seed, rounds, args, work)
                data[key].append(p)
                print(f"seed {seed} {key}: best {max(p['final'].values()):.1f} in {p['wall_s']:.0f} s", flush=True)
                os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
                Path(args.json).write_text(json.dumps(data, indent=1))
    print(summary(data))


if __name__ == "__main__":
    main()
