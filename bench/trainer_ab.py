"""Our PPO trainer's steps per second from two source trees (say, before and after a refactor), alternating runs.

    git worktree add /tmp/before <commit>
    python bench/trainer_ab.py --old /tmp/before --new . --threads 1
    python bench/trainer_ab.py --old /tmp/before --new . --threads 2 --policy lstm --rounds 6

Each run is a fresh subprocess with PYTHONPATH set to its tree; the work is `sps_puffer_cartpole.py`'s (256 agents
of `puffer:cartpole`, 64 steps, minibatches of 4,096, 1 epoch). Prints every run and the ratio of the medians.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CONFIG = {
    "env": "puffer:cartpole", "num_envs": 256, "num_steps": 64, "num_minibatches": 4, "update_epochs": 1,
    "learning_rate": 1e-3, "gamma": 0.99, "gae_lambda": 0.95, "hidden_size": 128, "num_layers": 1,
    "eval_every": 0, "checkpoint_every": 0, "device": "cpu",
}  # fmt: skip
IMPORTS = (  # the trainer moved in issue 15: try the new place, then the old one
    "try:\n    from workbench.train.ppo import PPOTrainer\n    from workbench.train.config import TrainConfig\n"
    "except ImportError:\n    from workbench.trainer import PPOTrainer, TrainConfig\n"
)


def sps(tree: str, config: dict) -> float:
    code = IMPORTS + f"import json\nprint(json.dumps(PPOTrainer(TrainConfig.from_dict({config!r})).fit()['sps']))"
    env = {**os.environ, "PYTHONPATH": os.path.abspath(tree)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="source tree of the baseline")
    ap.add_argument("--new", default=".", help="source tree to compare")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=4, help="runs of each tree, alternating which goes first")
    ap.add_argument("--policy", default="mlp", choices=["mlp", "lstm", "transformer"])
    args = ap.parse_args()
    config = {
        **CONFIG,
        "policy": args.policy,
        "torch_threads": args.threads,
        "total_timesteps": args.steps,
        "runs_dir": "/tmp/trainer_ab_runs",
    }
    results = {"old": [], "new": []}
    for r in range(args.rounds):
        for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
            results[name].append(sps(getattr(args, name), config))
            print(f"round {r + 1} {name}: {results[name][-1]:,.0f} SPS", flush=True)
    ratio = statistics.median(results["new"]) / statistics.median(results["old"])
    print(json.dumps({k: [round(v) for v in vs] for k, vs in results.items()}), f"median new / old = {ratio:.3f}")


if __name__ == "__main__":
    main()
