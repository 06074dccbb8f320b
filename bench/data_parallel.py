"""Where a data-parallel PPO run's time goes on one machine, and what the gradient all-reduce costs.

Part 1, the all-reduce alone: 2 processes (torchrun) sum a tensor of --numel floats, 2,000 times, through gloo
(`torch.distributed.all_reduce`, what DDP uses on CPU: TCP over loopback) and through `HostAllReduce` (shared
memory, `workbench.train.hostsync`), in the same processes one after the other; microseconds a call.

Part 2, training: PPO on gym CartPole-v1 (the train notebook's settings: 32-step rollouts, 10 epochs of one
full-batch minibatch, lr 2.5e-3) for --steps steps, one process with 2E envs against two processes with E envs
each (the same total batch; `accelerate launch`, gloo on the CPU), with --grad-sync auto (shared memory) and ddp.
Each rank reports its seconds in rollouts, updates (of which backward passes, or the C kernels' gradient calls where
`workbench.kernels.fused` runs, with the all-reduce), evaluations
and the stop check (where a rank waits for the one evaluating), and the trainer's steps/s.

    python bench/data_parallel.py                          # E = 8, evaluations of 10 episodes every 10 updates
    python bench/data_parallel.py --envs 64 --steps 300000
    python bench/data_parallel.py --eval-episodes 100      # evaluations longer than the training between them
"""

import argparse, collections, json, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path

from benchutil import RESULT_TAG, versions, wait_for_quiet

HERE = Path(__file__).resolve()


def allreduce_worker(numel: int, calls: int):
    import torch, torch.distributed as dist
    from workbench.train.hostsync import HostAllReduce

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    x = torch.randn(numel)
    box = [f"wb-bench-{os.getpid()}" if rank == 0 else None]
    dist.broadcast_object_list(box, src=0)
    shm = HostAllReduce(box[0], 0, world, numel, create=True) if rank == 0 else None
    dist.barrier()
    if rank:
        shm = HostAllReduce(box[0], rank, world, numel)
    out = {}
    for name, call in (("gloo", lambda: dist.all_reduce(x)), ("shared memory", lambda: shm.all_reduce(x))):
        for _ in range(50):
            call()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        out[name] = (time.perf_counter() - t0) / calls * 1e6
    dist.barrier()
    shm.close()
    if rank == 0:
        print(RESULT_TAG + json.dumps(out), flush=True)
    dist.destroy_process_group()


def train_worker(steps: int, envs: int, eval_every: int, eval_episodes: int, grad_sync: str, out: str):
    import torch
    from workbench.train.config import TrainConfig
    from workbench.train.ppo import PPOTrainer

    cfg = TrainConfig.from_dict({"env": "gym:CartPole-v1", "total_timesteps": steps, "num_envs": envs, "num_steps": 32,
                                 "update_epochs": 10, "learning_rate": 2.5e-3, "device": "cpu", "eval_every": eval_every,
                                 "eval_episodes": eval_episodes, "checkpoint_every": 0, "seed": 1,
                                 "grad_sync": grad_sync})  # fmt: skip
    t = PPOTrainer(cfg)
    spent = collections.defaultdict(float)

    def timed(name, fn):
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            out = fn(*a, **k)
            spent[name] += time.perf_counter() - t0
            return out

        return wrapper

    for name in ("collect_rollout", "update", "evaluate", "_stopping"):
        setattr(t, name, timed(name, getattr(t, name)))
    t.accelerator.backward = timed("backward", t.accelerator.backward)
    if t.learner.name == "c":  # the C backend: the gradient's one call stands in for the backward pass
        t.learner.loss_and_grad = timed("backward", t.learner.loss_and_grad)
    if t.sync:  # the shared-memory all-reduce, outside the backward pass
        t.sync.average_grads = timed("backward", t.sync.average_grads)
    s = t.fit()
    line = {"rank": t.rank, "sps": s["sps"], "updates": s["updates"], **spent, "threads": torch.get_num_threads()}
    Path(out, f"rank{t.rank}.json").write_text(json.dumps(line))


def launch(processes: int, args: list) -> list:
    "Run this script's training worker in `processes` processes; each rank's result."
    out = tempfile.mkdtemp()
    args = [*args, "--out", out]
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "ACCELERATE_USE_CPU": "true", "CUDA_VISIBLE_DEVICES": ""}
    if processes == 1:
        cmd = [sys.executable, str(HERE), *args]
    else:
        # accelerate's launcher as a module: its console script also imports transformers, for nothing here
        cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", str(processes),
               "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", "0",
               str(HERE), *args]  # fmt: skip
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [json.loads(f.read_text()) for f in sorted(Path(out).glob("rank*.json"))]
    shutil.rmtree(out)
    if p.returncode or len(lines) != processes:
        sys.exit(f"data_parallel: {' '.join(cmd[:4])} failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument(
        "--envs", type=int, default=8, help="envs a process with 2 processes (one process gets twice as many)"
    )
    ap.add_argument("--eval-every", type=int, default=10)
    ap.add_argument("--eval-episodes", type=int, default=10)
    ap.add_argument("--numel", type=int, default=5000, help="floats an all-reduce (CartPole's MLP has about 4,700)")
    ap.add_argument("--worker", choices=["allreduce", "train"])
    ap.add_argument("--grad-sync", default="auto")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.worker == "allreduce":
        return allreduce_worker(args.numel, 2000)
    if args.worker == "train":
        return train_worker(args.steps, args.envs, args.eval_every, args.eval_episodes, args.grad_sync, args.out)

    busy = wait_for_quiet(0.15, 60)
    print(f"# {versions('torch', 'accelerate', 'gymnasium')}; machine busy {busy:.0%} before the start")
    torchrun = str(Path(sys.executable).parent / "torchrun")
    p = subprocess.run([torchrun, "--nproc_per_node", "2", str(HERE), "--worker", "allreduce", "--numel", str(args.numel)],
                       capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})  # fmt: skip
    ar = json.loads(next(l for l in p.stdout.splitlines() if l.startswith(RESULT_TAG))[len(RESULT_TAG) :])
    print(f"all-reduce of {args.numel:,} floats between 2 processes: "
          + ", ".join(f"{k} {v:,.0f} us" for k, v in ar.items()) + f" ({ar['gloo'] / ar['shared memory']:.0f}x)")  # fmt: skip

    common = ["--worker", "train", "--steps", args.steps, "--eval-every", args.eval_every, "--eval-episodes",
              args.eval_episodes]  # fmt: skip
    runs = {
        f"1 process x {2 * args.envs} envs": launch(1, [*map(str, common), "--envs", str(2 * args.envs)]),
        f"2 processes x {args.envs} envs, shared memory": launch(2, [*map(str, common), "--envs", str(args.envs)]),
        f"2 processes x {args.envs} envs, DDP (gloo)": launch(
            2, [*map(str, common), "--envs", str(args.envs), "--grad-sync", "ddp"]
        ),
    }
    base = runs[f"1 process x {2 * args.envs} envs"][0]["sps"]
    print(f"\nCartPole-v1, {args.steps:,} steps, evaluations of {args.eval_episodes} episodes every {args.eval_every} "
          "updates; seconds a rank spends in each part")  # fmt: skip
    print(f"{'run':<40} {'rank':>4} {'steps/s':>8} {'ratio':>6} {'rollout':>8} {'update':>7} {'backward':>8} "
          f"{'evaluate':>8} {'stop check':>10}")  # fmt: skip
    for name, ranks in runs.items():
        for r in ranks:
            parts = [r[k] for k in ("collect_rollout", "update", "backward")] + [
                r.get(k, 0) for k in ("evaluate", "_stopping")
            ]
            print(f"{name:<40} {r['rank']:>4} {r['sps']:>8,.0f} {r['sps'] / base:>6.2f} "
                  + " ".join(f"{x:>{w}.2f}" for x, w in zip(parts, (8, 7, 8, 8, 10))))  # fmt: skip
    print(json.dumps({"allreduce_us": ar, "runs": runs, "args": vars(args)}))


if __name__ == "__main__":
    main()
