"""Where one PPO iteration's time goes on a GPU, op by op: the trainer (puffer:cartpole, one env object) runs a few
iterations to warm up, then one under torch.profiler; prints the phases (synchronised wall time), the profiler's
tables by host time and by GPU time, and one rollout's Python functions by their own time (cProfile). Run by
tools/gpu/run.sh (stage `prof`).

    python tools/gpu/iteration_profile.py --device cuda --num-envs 16384
    python tools/gpu/iteration_profile.py --device cpu --num-envs 256      # tries it here
"""

import argparse, cProfile, pstats, time

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from workbench.train.config import TrainConfig
from workbench.train.ppo import PPOTrainer

p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("--device", default="cuda")
p.add_argument("--num-envs", type=int, default=16384)
p.add_argument("--horizon", type=int, default=64)
p.add_argument("--minibatch", type=int, default=32768)
p.add_argument("--policy", default="mlp")
p.add_argument("--bf16", action="store_true")
p.add_argument("--rows", type=int, default=18, help="rows of each profiler table")
args = p.parse_args()
torch.set_num_threads(1)

batch = args.num_envs * args.horizon
cfg = TrainConfig.from_dict(
    {"env": "puffer:cartpole", "num_envs": args.num_envs, "backend": "serial", "num_steps": args.horizon,
     "num_minibatches": max(1, batch // args.minibatch), "update_epochs": 1, "learning_rate": 1e-3,
     "policy": args.policy, "hidden_size": 128, "num_layers": 1, "total_timesteps": 100 * batch,
     "device": args.device, "bf16": args.bf16, "torch_threads": 1, "seed": 1, "eval_every": 0, "checkpoint_every": 0}
)  # fmt: skip
trainer = PPOTrainer(cfg)
sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)


def iteration(label=record_function):
    "One iteration in its phases; returns each phase's synchronised wall time in ms."
    times = {}
    for name, fn in (("rollout", trainer.collect_rollout), ("advantages", trainer.compute_advantages),
                     ("update", trainer.update)):  # fmt: skip
        sync()
        t0 = time.perf_counter()
        with label(name):
            out = fn()
        sync()
        times[name] = (time.perf_counter() - t0) * 1e3
        if name == "rollout":
            times["  of which env"], times["  of which policy step"] = (
                out["perf/env_time"] * 1e3,
                out["perf/forward_time"] * 1e3,
            )
    return times


for _ in range(3):
    iteration()
runs = [iteration() for _ in range(3)]
graph = getattr(trainer.learner, "graph", None)
print(f"# {args.policy}, {args.num_envs:,} envs x {args.horizon} steps, minibatch {args.minibatch:,}, "
      f"{'bf16' if args.bf16 else 'fp32'}, on {args.device}; ms an iteration (median of 3 after 3 warm-up)")  # fmt: skip
for k in runs[0]:
    print(f"  {k:<24} {sorted(r[k] for r in runs)[1]:8.1f}")
total = sorted(sum(v for k, v in r.items() if not k.startswith(" ")) for r in runs)[1]
print(f"  {'iteration':<24} {total:8.1f}  ->  {batch / total * 1e3:,.0f} steps/s")
acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if args.device == "cuda" else [])
with profile(activities=acts) as prof:
    iteration()
avg = prof.key_averages()
print(avg.table(sort_by="self_cpu_time_total", row_limit=args.rows, max_name_column_width=44))
if args.device == "cuda":
    print(avg.table(sort_by="self_cuda_time_total", row_limit=args.rows, max_name_column_width=44))
    # the annotated parts (rollout, advantages, update) show on the GPU's timeline too: count the kernels and copies only
    busy = sum(e.self_device_time_total for e in avg if e.key not in ("rollout", "advantages", "update")) / 1e3
    print(f"GPU busy {busy:.1f} ms of the profiled iteration's kernels and copies")
# The rollout's host side, function by function (the env's C step, the copies, the bookkeeping, the waits on the GPU)
host = cProfile.Profile()
host.enable()
trainer.collect_rollout()
sync()
host.disable()
print("# one rollout under cProfile, by own time")
pstats.Stats(host).sort_stats("tottime").print_stats(args.rows)
trainer.close()
