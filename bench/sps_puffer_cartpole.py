"""Training throughput on PufferLib's C cartpole: workbench's PPOTrainer vs PufferLib 3.0's PuffeRL, same work.

Both trainers get the same work per update and the same network:
  * one C `Cartpole` env object holding 256 agents, Serial backend (our spec "puffer:cartpole");
  * a batch of 256 agents x 64 steps = 16,384 steps (PuffeRL: bptt_horizon 64, ours: num_steps 64);
  * minibatches of 4,096 (ours: num_minibatches 4), the same number of update epochs (default 1);
  * PufferLib's default policy for cartpole without its LSTM wrapper (pufferlib.models.Default:
    Linear(4, 128) + GELU, then Linear(128, 2) actor and Linear(128, 1) critic) against our MLP with
    hidden_size 128, num_layers 1 (Linear(4, 128) + tanh, same heads): 1,027 parameters each;
  * Adam (PuffeRL defaults to Muon), the same learning rate, gamma and lambda, device cpu;
  * the same number of updates, and torch threads 1 and 2 for each.

With `--policy lstm` both put one LSTM layer (128 -> 128) after the same encoder, replayed over the
64-step segments in the update: ours is `--policy lstm` (its state zeroed exactly where an episode begins
inside a segment), PufferLib's is `pufferlib.models.LSTMWrapper` around the same Default policy with
`use_rnn` on (it zeroes the state only at a segment's start). Parameters then differ a little: our encoder is
tanh and theirs GELU, and the LSTM's parameters are the same 132K in both.

SPS is measured over the steady part: from the start of the 2nd update to the end of the last one
(the first update, with its warm-up, is left out). Every run is a fresh subprocess of this script
(`--worker`), one after another.

    python bench/sps_puffer_cartpole.py             # 2M steps per run, threads 1 and 2: a few minutes
    python bench/sps_puffer_cartpole.py --quick     # 0.5M steps, threads 1 only
    python bench/sps_puffer_cartpole.py --policy lstm --threads 1   # recurrent: our LSTM against LSTMWrapper
"""

import argparse, json, shutil, statistics, tempfile, time

from benchutil import print_result, run_worker, wait_for_quiet, versions, puffer_default_train_config


def steady_sps(marks) -> tuple[float, float]:
    """`marks` = [(seconds, global step)] at the start of every update and at the end of the run.
    Returns (SPS over everything, SPS from the start of the 2nd update to the end)."""
    (t0, s0), (t1, s1), (tn, sn) = marks[0], marks[1], marks[-1]
    return (sn - s0) / (tn - t0), (sn - s1) / (tn - t1)


def time_split(perf: list) -> dict:
    """Where an iteration's time goes, in ms (means over the steady updates): the env's steps, the policy's steps
    (observations in, forward, sampling, the action back: the host waits there for the GPU), the rest of the rollout
    (episode bookkeeping, advantages, Python) and the update (its host time; it ends reading its statistics)."""
    if not perf:
        return {}
    mean = lambda k: 1000 * statistics.fmean(p.get(k, 0.0) for p in perf)
    env, step, rollout, update = (mean(f"perf/{k}_time") for k in ("env", "forward", "rollout", "update"))
    return {"env": env, "policy_step": step, "rollout_rest": rollout - env - step, "update": update,
            "iteration": mean("perf/step_time")}  # fmt: skip


# ----------------------------------------------------------------------------------------------
# workbench's PPOTrainer
# ----------------------------------------------------------------------------------------------
def run_ours(args) -> dict:
    from workbench.train.ppo import PPOTrainer
    from workbench.train.config import TrainConfig

    marks = []

    class TimedTrainer(PPOTrainer):
        def collect_rollout(self):  # the start of every update
            marks.append((time.perf_counter(), self.global_step))
            return super().collect_rollout()

    cfg = TrainConfig.from_dict(
        {
            "env": f"puffer:{args.env}" + ("?" + "&".join(args.env_option) if args.env_option else ""),
            "num_envs": args.num_envs,
            "backend": "multiprocessing" if args.workers > 1 else "serial",
            "num_workers": args.workers if args.workers > 1 else None,
            "env_batches": args.env_batches,
            "num_steps": args.horizon,
            "num_minibatches": args.num_envs * args.horizon // args.minibatch,
            "update_epochs": args.epochs,
            "learning_rate": args.lr,
            "gamma": args.gamma,
            "gae_lambda": args.gae_lambda,
            "hidden_size": 128,
            "num_layers": 1,
            "policy": args.policy,
            "total_timesteps": args.updates * args.num_envs * args.horizon,
            "device": args.device,
            "bf16": args.bf16,
            "compile": args.compile,
            **({"compile_mode": args.compile_mode} if args.compile_mode else {}),
            "torch_threads": args.threads,
            "seed": args.seed,
            "eval_every": 0,
            "checkpoint_every": 0,
            "cuda_graphs": not args.no_cuda_graphs,
        }
    )  # no evaluations, no files: pure training
    trainer = TimedTrainer(cfg)
    from workbench.runs.events import Kind

    perf = []  # each update's split of its time, from the trainer's own timers
    trainer.bus.subscribe(
        lambda e: e.kind == Kind.UPDATE and perf.append({k: v for k, v in e.data.items() if k.startswith("perf/")})
    )
    params = sum(p.numel() for p in trainer.policy.parameters())
    summary = trainer.fit()
    # Note: puffer:cartpole resets at its 200-step cap without flagging a terminal or truncation, so our
    # episode bookkeeping joins episodes there and summary["mean_return"] can exceed 200 (see RESULTS.md).
    marks.append((time.perf_counter(), trainer.global_step))
    overall, steady = steady_sps(marks)
    return {
        "trainer": "workbench",
        "threads": args.threads,
        "steps": trainer.global_step,
        "updates": trainer.update_count,
        "sps": steady,
        "sps_all": overall,
        "params": params,
        "mean_return": summary["mean_return"],
        "batch": cfg.batch_size,
        "minibatch": cfg.minibatch_size,
        "split_ms": time_split(perf[1:] or perf),
    }


# ----------------------------------------------------------------------------------------------
# PufferLib's PuffeRL
# ----------------------------------------------------------------------------------------------
def env_options(args) -> dict:
    "The --env-option K=V pairs as the env's keyword arguments (numbers as numbers), for PuffeRL's env."
    number = lambda v: int(v) if v.lstrip("-").isdigit() else float(v) if v.replace(".", "", 1).isdigit() else v
    return {k: number(v) for k, _, v in (o.partition("=") for o in args.env_option or [])}


def run_puffer(args) -> dict:
    import numpy as np, random, torch
    import pufferlib.models, pufferlib.vector
    from pufferlib.ocean import environment
    from pufferlib.pufferl import PuffeRL  # installs a SIGINT handler and RuntimeWarning->error: worker process only

    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    # The C Cartpole holds all agents in one env object: Serial backend, one copy, num_envs agents inside. With
    # --workers, one such object a worker process, and with --env-batches its async batches (batch_size in copies).
    if args.workers > 1:
        vecenv = pufferlib.vector.make(
            environment.env_creator(f"puffer_{args.env}"),
            env_kwargs={"num_envs": args.num_envs // args.workers, **env_options(args)},
            num_envs=args.workers,
            num_workers=args.workers,
            batch_size=args.workers // args.env_batches,
            backend=pufferlib.vector.Multiprocessing,
            seed=args.seed,
            overwork=True,
        )
    else:
        vecenv = pufferlib.vector.make(
            environment.env_creator(f"puffer_{args.env}"),
            env_kwargs={"num_envs": args.num_envs, **env_options(args)},
            num_envs=1,
            backend=pufferlib.vector.Serial,
            seed=args.seed,
        )
    assert vecenv.num_agents == args.num_envs, vecenv.num_agents
    # PufferLib's cartpole config uses Policy = models.Default wrapped in an LSTM; we leave the LSTM out
    # (our side is a feed-forward MLP too).
    policy = pufferlib.models.Default(vecenv.driver_env, hidden_size=128)
    if args.policy == "lstm":
        policy = pufferlib.models.LSTMWrapper(vecenv.driver_env, policy, input_size=128, hidden_size=128)
    policy = policy.to(args.device)  # PuffeRL leaves placement to its caller (its own CLI does this in load_policy)

    config = puffer_default_train_config()
    config.update(
        optimizer="adam",
        learning_rate=args.lr,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        update_epochs=args.epochs,
        batch_size=args.num_envs * args.horizon,
        bptt_horizon=args.horizon,
        minibatch_size=args.minibatch,
        total_timesteps=args.updates * args.num_envs * args.horizon,
        device=args.device,
        precision="bfloat16" if args.bf16 else "float32",
        seed=args.seed,
        env=f"puffer_{args.env}",
        use_rnn=args.policy == "lstm",
        compile=args.compile,
        **({"compile_mode": args.compile_mode} if args.compile_mode else {}),
        data_dir=tempfile.mkdtemp(prefix="puffer-bench-"),
        checkpoint_interval=10**9,
    )
    if not args.puffer_dashboard:  # its rich dashboard, redrawn every 0.25 s; off by default (its best case)
        PuffeRL.print_dashboard = lambda self, *a, **k: None
    trainer = PuffeRL(config, vecenv, policy)

    marks, last_return = [], None
    try:
        for _ in range(args.updates):
            marks.append((time.perf_counter(), trainer.global_step))
            stats = trainer.evaluate()  # one batch of experience (stats: env logs since its last log line)
            if len(np.atleast_1d(stats.get("score", []))):
                last_return = float(np.mean(stats["score"]))  # score = episode length = return
            trainer.train()  # update_epochs over it
        marks.append((time.perf_counter(), trainer.global_step))
    finally:  # its utilisation thread is not a daemon: left running after an error, it keeps the worker alive
        trainer.utilization.stop()
    trainer.vecenv.close()
    shutil.rmtree(config["data_dir"], ignore_errors=True)  # its final checkpoint
    overall, steady = steady_sps(marks)
    return {
        "trainer": "pufferlib",
        "threads": args.threads,
        "steps": trainer.global_step,
        "updates": args.updates,
        "sps": steady,
        "sps_all": overall,
        "params": sum(p.numel() for p in policy.parameters()),
        "mean_return": last_return,
        "batch": config["batch_size"],
        "minibatch": config["minibatch_size"],
    }


# ----------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------
WORKER_ARGS = (
    "num_envs",
    "horizon",
    "minibatch",
    "epochs",
    "updates",
    "lr",
    "gamma",
    "gae_lambda",
    "seed",
    "policy",
    "env",
    "device",
    "workers",
    "env_batches",
)
WORKER_OPTIONS = ("compile_mode",)  # passed on when set
WORKER_FLAGS = ("bf16", "compile", "no_cuda_graphs")


def run_one(name: str, threads: int, args) -> dict:
    "Wait for a quiet machine, then run one trainer in a fresh process."
    busy = wait_for_quiet(args.max_busy, args.max_wait)
    argv = ["--worker", name, "--threads", threads]
    for k in WORKER_ARGS:
        argv += [f"--{k.replace('_', '-')}", getattr(args, k)]
    for k in WORKER_OPTIONS:
        argv += [f"--{k.replace('_', '-')}", getattr(args, k)] if getattr(args, k) else []
    if args.puffer_dashboard:
        argv.append("--puffer-dashboard")
    argv += [f"--{f.replace('_', '-')}" for f in WORKER_FLAGS if getattr(args, f)]
    result = {"trainer": name, "threads": threads, "sps": None}
    result.update(run_worker(__file__, argv))
    result["busy_before"] = busy
    return result


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--num-envs", type=int, default=256, help="agents in the one C Cartpole env")
    p.add_argument(
        "--horizon", type=int, default=64, help="steps per agent per batch (ours: num_steps; PuffeRL: bptt_horizon)"
    )
    p.add_argument("--workers", type=int, default=1, help="env worker processes (1: the env in the trainer's process)")
    p.add_argument(
        "--env-batches", type=int, default=1, help="batches of workers stepped in turn (ours --env-batches; PuffeRL's)"
    )
    p.add_argument("--minibatch", type=int, default=4096, help="minibatch size in steps")
    p.add_argument("--epochs", type=int, default=1, help="update epochs, both trainers")
    p.add_argument("--steps", type=int, default=2_000_000, help="env steps per run (rounded down to whole batches)")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch thread counts to try")
    p.add_argument("--repeats", type=int, default=3, help="runs per (trainer, threads)")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--policy", choices=["mlp", "lstm"], default="mlp", help="feed-forward, or an LSTM in both trainers")
    p.add_argument(
        "--env", default="cartpole", help="a PufferLib Ocean C env (ours: puffer:<env>; PuffeRL: puffer_<env>)"
    )
    p.add_argument(
        "--env-option", action="append", help="K=V, an option of the env for both trainers (e.g. report_interval=64)"
    )
    p.add_argument("--device", default="cpu", help="cpu or cuda, both trainers (bench/gpu_sps.py runs the GPU set)")
    p.add_argument("--bf16", action="store_true", help="bf16 autocast in both (PuffeRL: precision bfloat16)")
    p.add_argument("--compile", action="store_true", help="torch.compile the policy in both")
    p.add_argument("--compile-mode", help="torch.compile's mode in both (default: each trainer's own)")
    p.add_argument(
        "--no-cuda-graphs", action="store_true", help="ours: the rollout's step eagerly, not as a CUDA graph"
    )
    p.add_argument(
        "--puffer-dashboard", action="store_true", help="keep PuffeRL's terminal dashboard on (output discarded)"
    )
    p.add_argument(
        "--max-busy",
        type=float,
        default=0.15,
        help="before each run, wait until other processes use less than this fraction of the cores ...",
    )
    p.add_argument("--max-wait", type=float, default=30.0, help="... but wait at most this many seconds")
    p.add_argument("--quick", action="store_true", help="0.5M steps, 1 thread: a smoke test")
    p.add_argument("--json", help="also write the results to this file")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--updates", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.quick:
        args.steps, args.threads, args.repeats = 500_000, args.threads[:1], 1
    args.updates = args.updates or max(2, args.steps // (args.num_envs * args.horizon))

    if args.worker:
        args.threads = args.threads[0]
        print_result(run_ours(args) if args.worker == "workbench" else run_puffer(args))

    batch = args.num_envs * args.horizon
    print(
        f"# SPS on puffer:{args.env} (C), "
        + (f"{args.workers} worker processes in {args.env_batches} batch(es): " if args.workers > 1 else "Serial: ")
        + f"{args.num_envs} agents x {args.horizon} steps = batch {batch}, "
        f"minibatch {args.minibatch}, {args.epochs} epoch(s), {args.updates} updates = {args.updates * batch} steps per run; "
        f"Adam, hidden 128 x 1 layer{' + LSTM 128' if args.policy == 'lstm' else ''}, cpu"
    )
    info = versions("torch", "pufferlib", "numpy")
    print("# " + ", ".join(f"{k} {v}" for k, v in info.items()))
    results = []
    for rep in range(args.repeats):
        for threads in args.threads:
            for name in ("workbench", "pufferlib"):  # one after another, never together
                r = run_one(name, threads, args)
                results.append(r)
                print(
                    f"  {name:<10} threads {threads}: "
                    + (
                        f"{r['sps']:,.0f} SPS steady ({r['sps_all']:,.0f} incl. 1st update)"
                        f", last mean return {r['mean_return'] or 0:.0f}"
                        if r["sps"]
                        else r.get("error", "?")
                    )
                    + f"  [other load before: {100 * r['busy_before']:.0f}% of the cores]",
                    flush=True,
                )

    print(f"\n{'threads':>7} {'workbench SPS':>14} {'pufferlib SPS':>14} {'ours / puffer':>13}")
    best = {}
    for threads in args.threads:
        med = {}
        for name in ("workbench", "pufferlib"):
            sps = [r["sps"] for r in results if r["trainer"] == name and r["threads"] == threads and r["sps"]]
            med[name] = statistics.median(sps) if sps else None
            if med[name] and med[name] > best.get(name, (0, 0))[0]:
                best[name] = (med[name], threads)
        ratio = med["workbench"] / med["pufferlib"] if med["workbench"] and med["pufferlib"] else None
        print(f"{threads:>7} {med['workbench'] or 0:>14,.0f} {med['pufferlib'] or 0:>14,.0f} {ratio or 0:>13.2f}")
    if len(best) == 2:
        (ours, t_o), (puf, t_p) = best["workbench"], best["pufferlib"]
        print(f"{'best':>7} {ours:>11,.0f} ({t_o}) {puf:>11,.0f} ({t_p}) {ours / puf:>13.2f}   (threads in brackets)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"versions": info, "args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
