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

    python -m bench data_parallel                          # E = 8, evaluations of 10 episodes every 10 updates
    python -m bench data_parallel --envs 64 --steps 300000
    python -m bench data_parallel --eval-episodes 100 --no-record   # evaluations longer than the training between

The launchers (torchrun, `accelerate launch`) start this file as a script in each process; its work comes in the
environment (`BENCH_WORKER`, JSON), not in flags.
"""

import collections, json, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path

from benchutil import tracebacks, versions
from runner import make_table

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
        print("ALLREDUCE " + json.dumps(out), flush=True)
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


def launch(processes: int, work: dict) -> list:
    "Run this script's training worker with `work` in `processes` processes; each rank's result."
    out = tempfile.mkdtemp()
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "ACCELERATE_USE_CPU": "true", "CUDA_VISIBLE_DEVICES": "",
           "BENCH_WORKER": json.dumps({"role": "train", **work, "out": out})}  # fmt: skip
    if processes == 1:
        cmd = [sys.executable, str(HERE)]
    else:
        # accelerate's launcher as a module: its console script also imports transformers, for nothing here
        cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", str(processes),
               "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", "0",
               str(HERE)]  # fmt: skip
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [json.loads(f.read_text()) for f in sorted(Path(out).glob("rank*.json"))]
    shutil.rmtree(out)
    if p.returncode or len(lines) != processes:  # the launcher's summary, then what the ranks raised (the tail)
        raise SystemExit(
            f"data_parallel: {' '.join(cmd[:4])} failed ({p.returncode}):\n{p.stdout[-1000:]}\n{p.stderr[-1000:]}\n"
            f"the workers' tracebacks:\n{tracebacks(p.stderr)}"
        )
    return lines


FIGURES = {"two_shared_over_one": "higher", "two_ddp_over_one": "higher", "allreduce_shared_us": "lower"}
RUNS = {"one": "1 process x 2E envs", "two_shared": "2 processes x E envs, shared memory",
        "two_ddp": "2 processes x E envs, DDP over gloo"}  # fmt: skip


def run_name(k: str, envs: int) -> str:
    "RUNS[k] with its envs counted (E envs a process of two)."
    return RUNS[k].replace("2E", str(2 * envs)).replace(" E ", f" {envs} ")


def options(p):
    p.add_argument("--steps", type=int, default=100_000)
    p.add_argument(
        "--envs", type=int, default=8, help="envs a process with 2 processes (one process gets twice as many)"
    )
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--eval-episodes", type=int, default=10)
    p.add_argument("--numel", type=int, default=5000, help="floats an all-reduce (CartPole's MLP has about 4,700)")


def run(quick: bool = False, steps: int = 100_000, envs: int = 8, eval_every: int = 10, eval_episodes: int = 10,
        numel: int = 5000) -> dict:  # fmt: skip
    if quick:
        steps = 8_192
    torchrun = str(Path(sys.executable).parent / "torchrun")
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "BENCH_WORKER": json.dumps({"role": "allreduce", "numel": numel})}
    p = subprocess.run(
        [torchrun, "--standalone", "--nproc_per_node", "2", str(HERE)], capture_output=True, text=True, env=env
    )
    line = next((x for x in p.stdout.splitlines() if x.startswith("ALLREDUCE ")), None)
    if line is None:
        raise SystemExit(f"data_parallel: the all-reduce workers failed: {p.stderr.strip().splitlines()[-1:]}")
    ar = json.loads(line[len("ALLREDUCE ") :])
    print("all-reduce between 2 processes: " + ", ".join(f"{k} {v:,.0f} us" for k, v in ar.items()), flush=True)
    work = {"steps": steps, "eval_every": eval_every, "eval_episodes": eval_episodes}
    runs = {"one": launch(1, {**work, "envs": 2 * envs, "grad_sync": "auto"}),
            "two_shared": launch(2, {**work, "envs": envs, "grad_sync": "auto"}),
            "two_ddp": launch(2, {**work, "envs": envs, "grad_sync": "ddp"})}  # fmt: skip
    figures = {f"{k}_sps": round(v[0]["sps"]) for k, v in runs.items()}
    for k in ("two_shared", "two_ddp"):
        figures[f"{k}_over_one"] = round(figures[f"{k}_sps"] / figures["one_sps"], 3)
    figures.update({"allreduce_gloo_us": round(ar["gloo"], 1), "allreduce_shared_us": round(ar["shared memory"], 1)})
    for k, ranks in runs.items():
        print(f"  {run_name(k, envs):<40} {ranks[0]['sps']:>9,.0f} steps/s", flush=True)
    settings = {"steps": steps, "envs": envs, "eval_every": eval_every, "eval_episodes": eval_episodes, "numel": numel}
    return {"settings": settings, "figures": figures, "raw": {"allreduce_us": ar, "runs": runs},
            "versions": versions("torch", "accelerate", "gymnasium")}  # fmt: skip


def table(records: list) -> str:
    "A row a way of training of each full run: steps/s, its ratio to one process with the same total batch."

    def cells(rec):
        f, e = rec["figures"], rec["settings"]["envs"]
        ratio = lambda k: "1" if k == "one" else f"{f[f'{k}_over_one']:.2f}"  # noqa: E731
        rows = [
            [run_name(k, e), f"{rec['settings']['steps']:,}", f"{f[f'{k}_sps']:,}", ratio(k)]
            for k in RUNS
            if f"{k}_sps" in f
        ]
        if "allreduce_shared_us" in f:
            rows.append([f"the all-reduce alone, {rec['settings']['numel']:,} floats: gloo / shared memory", "",
                         f"{f['allreduce_gloo_us']:,.0f} / {f['allreduce_shared_us']:,.1f} us", ""])  # fmt: skip
        return rows

    return make_table(["run", "steps", "steps/s", "over one process"], records, cells)


if __name__ == "__main__":
    work = json.loads(os.environ.get("BENCH_WORKER") or "{}")
    if work.get("role") == "allreduce":  # a process torchrun started
        allreduce_worker(work["numel"], 2000)
    elif work.get("role") == "train":  # a process `accelerate launch` (or `launch` alone) started
        train_worker(
            work["steps"], work["envs"], work["eval_every"], work["eval_episodes"], work["grad_sync"], work["out"]
        )
    else:  # (the same as `python -m bench data_parallel`)
        from runner import main

        sys.exit(main(["data_parallel", *sys.argv[1:]]))
