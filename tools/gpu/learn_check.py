"""The same runs still learn: puffer:cartpole trained for a fixed budget with the rollout's step, the advantages and the
update as CUDA graphs and eagerly (`--no-cuda-graphs`), three seeds each, in one process; prints each run's greedy
return over 100 fresh episodes and its steps/s. Run by tools/gpu/run.sh (stage `learn`).

    python tools/gpu/learn_check.py --device cuda
    python tools/gpu/learn_check.py --device cpu --num-envs 64 --steps 60000   # tries it here
"""

import argparse, statistics, time

import torch

from workbench.train.config import TrainConfig
from workbench.train.ppo import PPOTrainer

p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("--device", default="cuda")
p.add_argument("--num-envs", type=int, default=4096)
p.add_argument("--steps", type=int, default=2_000_000)
p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
args = p.parse_args()

greedy = {True: [], False: []}
for seed in args.seeds:
    for graphs in (True, False):
        cfg = TrainConfig.from_dict(
            {"env": "puffer:cartpole", "num_envs": args.num_envs, "total_timesteps": args.steps, "device": args.device,
             "seed": seed, "eval_every": 0, "checkpoint_every": 0, "cuda_graphs": graphs}
        )  # fmt: skip
        trainer = PPOTrainer(cfg)
        t0 = time.perf_counter()
        trainer.fit()
        sps = trainer.global_step / (time.perf_counter() - t0)
        score = trainer.evaluate(100)["mean_return"]
        greedy[graphs].append(score)
        label = "graphs" if graphs else "eager "
        print(
            f"seed {seed} {label}: greedy {score:6.1f} after {trainer.global_step:,} steps ({sps:,.0f} steps/s)",
            flush=True,
        )
for graphs, scores in greedy.items():
    print(f"{'graphs' if graphs else 'eager '}: mean greedy {statistics.fmean(scores):.1f} over seeds {args.seeds}")
torch.cuda.is_available() and print(torch.cuda.get_device_name(0))
