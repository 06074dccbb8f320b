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
(the first update, with its warm-up, is left out). Every run is a fresh process (`runner.fresh`), one after
another after the machine is quiet, the two trainers in alternating order from one repeat to the next; a ratio is
of the medians, with a bootstrap 95% interval. `bench/gpu_sps.py` runs the same workers on a GPU.

    python -m bench sps_puffer_cartpole             # 2M steps per run, threads 1 and 2, 3 repeats: a few minutes
    python -m bench sps_puffer_cartpole --quick     # 0.5M steps, threads 1 only
    python -m bench sps_puffer_cartpole --policy lstm --threads 1   # recurrent: our LSTM against LSTMWrapper
"""

import shutil, statistics, tempfile, time
from types import SimpleNamespace

from benchutil import versions, puffer_default_train_config
from runner import bootstrap_ratio, fresh, interval, make_table

DEFAULTS = dict(num_envs=256, horizon=64, minibatch=4096, epochs=1, steps=2_000_000, updates=None, lr=1e-3, gamma=0.99,
                gae_lambda=0.95, seed=1, policy="mlp", env="cartpole", env_option=[], device="cpu", workers=1,
                env_batches=1, bf16=False, compile=False, compile_mode=None, no_cuda_graphs=False,
                puffer_dashboard=False, threads=1)  # fmt: skip
FIGURES = {f"{k}_t{t}": "higher" for t in (1, 2) for k in ("ratio", "workbench_sps")} | {"ratio_best": "higher"}


def settings(**kw) -> SimpleNamespace:
    "A worker's settings: `DEFAULTS` with `kw` over them, the updates from the steps unless given."
    a = SimpleNamespace(**{**DEFAULTS, **kw})
    a.updates = a.updates or max(2, a.steps // (a.num_envs * a.horizon))
    return a


def steady_sps(marks) -> tuple[float, float]:
    """`marks` = [(seconds, global step)] at the start of every update and at the end of the run.
    Returns (SPS over everything, SPS from the start of the 2nd update to the end)."""
    (t0, s0), (t1, s1), (tn, sn) = marks[0], marks[1], marks[-1]
    return (sn - s0) / (tn - t0), (sn - s1) / (tn - t1)


def outcome(trainer: str, args, marks: list, **more) -> dict:
    "A run's result: its steady and whole-run steps/s from `marks`, its threads, and `more`."
    overall, steady = steady_sps(marks)
    return {"trainer": trainer, "threads": args.threads, "sps": steady, "sps_all": overall, **more}


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
def run_ours(**kw) -> dict:
    "One run of our trainer with `settings(**kw)`: steady SPS, the whole run's, where an iteration's time goes."
    from workbench.train.ppo import PPOTrainer
    from workbench.train.config import TrainConfig

    args, marks = settings(**kw), []

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
    return outcome(
        "workbench",
        args,
        marks,
        steps=trainer.global_step,
        updates=trainer.update_count,
        params=params,
        mean_return=summary["mean_return"],
        batch=cfg.batch_size,
        minibatch=cfg.minibatch_size,
        split_ms=time_split(perf[1:] or perf),
    )


# ----------------------------------------------------------------------------------------------
# PufferLib's PuffeRL
# ----------------------------------------------------------------------------------------------
def env_options(args) -> dict:
    "The --env-option K=V pairs as the env's keyword arguments (numbers as numbers), for PuffeRL's env."
    number = lambda v: int(v) if v.lstrip("-").isdigit() else float(v) if v.replace(".", "", 1).isdigit() else v
    return {k: number(v) for k, _, v in (o.partition("=") for o in args.env_option or [])}


def run_puffer(**kw) -> dict:
    "One run of PuffeRL with `settings(**kw)` (the same work as `run_ours`)."
    import numpy as np, random, torch
    import pufferlib.models, pufferlib.vector
    from pufferlib.ocean import environment
    from pufferlib.pufferl import PuffeRL  # installs a SIGINT handler and RuntimeWarning->error: worker process only

    args = settings(**kw)
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
    return outcome(
        "pufferlib",
        args,
        marks,
        steps=trainer.global_step,
        updates=args.updates,
        params=sum(p.numel() for p in policy.parameters()),
        mean_return=last_return,
        batch=config["batch_size"],
        minibatch=config["minibatch_size"],
    )


# ----------------------------------------------------------------------------------------------
# The runner's side: options, the runs, the record, the table
# ----------------------------------------------------------------------------------------------
def options(p):
    p.add_argument("--num-envs", type=int, default=256, help="agents in the one C Cartpole env")
    p.add_argument(
        "--horizon", type=int, default=64, help="steps an agent a batch (ours: num_steps; PuffeRL: bptt_horizon)"
    )
    p.add_argument("--workers", type=int, default=1, help="env worker processes (1: the env in the trainer's process)")
    p.add_argument("--env-batches", type=int, default=1, help="batches of workers stepped in turn (both trainers)")
    p.add_argument("--minibatch", type=int, default=4096, help="minibatch size in steps")
    p.add_argument("--epochs", type=int, default=1, help="update epochs, both trainers")
    p.add_argument("--steps", type=int, default=2_000_000, help="env steps a run (rounded down to whole batches)")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch thread counts to try")
    p.add_argument("--repeats", type=int, default=3, help="runs of each (trainer, threads), in alternating order")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--policy", choices=["mlp", "lstm"], default="mlp", help="feed-forward, or an LSTM in both trainers")
    p.add_argument(
        "--env", default="cartpole", help="a PufferLib Ocean C env (ours: puffer:<env>; PuffeRL: puffer_<env>)"
    )
    p.add_argument("--env-option", action="append", default=[], help="K=V, an env option for both (report_interval=64)")
    p.add_argument("--bf16", action="store_true", help="bf16 autocast in both (PuffeRL: precision bfloat16)")
    p.add_argument("--compile", action="store_true", help="torch.compile the policy in both")
    p.add_argument("--compile-mode", help="torch.compile's mode in both (default: each trainer's own)")
    p.add_argument("--puffer-dashboard", action="store_true", help="keep PuffeRL's terminal dashboard on (discarded)")


def run(quick: bool = False, threads=(1, 2), repeats: int = 3, quiet=lambda: 0.0, **kw) -> dict:
    if quick:
        kw["steps"], threads, repeats = 500_000, list(threads)[:1], 1
    work = vars(settings(**kw))
    work.pop("threads")
    raw = []
    for rep in range(repeats):
        for t in threads:
            for name in ("workbench", "pufferlib") if rep % 2 == 0 else ("pufferlib", "workbench"):
                busy = quiet()
                r = fresh("sps_puffer_cartpole", "run_ours" if name == "workbench" else "run_puffer", threads=t, **work)
                raw.append({**r, "trainer": name, "threads": t, "busy_before": round(busy, 3)})
                said = f"{r['sps']:,.0f} steps/s steady" if r.get("sps") else r.get("error", "?")
                print(f"  {name:<10} threads {t}: {said}", flush=True)
    figures, ci, best = {}, {}, {}
    for t in threads:
        sps = {n: [r["sps"] for r in raw if r["trainer"] == n and r["threads"] == t and r.get("sps")]
               for n in ("workbench", "pufferlib")}  # fmt: skip
        if not all(sps.values()):
            continue
        for n, xs in sps.items():
            figures[f"{n}_sps_t{t}"] = round(statistics.median(xs))
            best[n] = max(best.get(n, 0), figures[f"{n}_sps_t{t}"])
        figures[f"ratio_t{t}"] = round(figures[f"workbench_sps_t{t}"] / figures[f"pufferlib_sps_t{t}"], 3)
        if repeats > 1:
            ci[f"ratio_t{t}"] = bootstrap_ratio(sps["workbench"], sps["pufferlib"], stat=statistics.median)
    if len(best) == 2:
        figures["ratio_best"] = round(best["workbench"] / best["pufferlib"], 3)
    return {"settings": {**work, "threads": list(threads), "repeats": repeats}, "figures": figures, "ci95": ci,
            "raw": raw, "versions": versions("torch", "pufferlib", "numpy")}  # fmt: skip


def table(records: list) -> str:
    "A row a thread count of each full run: the medians of each trainer's steps/s, their ratio, its interval."

    def cells(rec):
        f, rows = rec["figures"], []
        for t in rec["settings"]["threads"]:
            if f"ratio_t{t}" in f:
                runs = lambda n: " / ".join(f"{r['sps']:,.0f}" for r in rec["raw"] if r["trainer"] == n and
                                            r["threads"] == t and r.get("sps"))  # fmt: skip
                rows.append([str(t), f"{f[f'workbench_sps_t{t}']:,} ({runs('workbench')})",
                             f"{f[f'pufferlib_sps_t{t}']:,} ({runs('pufferlib')})",
                             f"{f[f'ratio_t{t}']:.2f}{interval(rec, f'ratio_t{t}')}"])  # fmt: skip
        return rows

    return make_table(["torch threads", "workbench steps/s (each run)", "PuffeRL steps/s (each run)",
                       "ours / PuffeRL [95% CI]"], records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench sps_puffer_cartpole`)
    import sys

    from runner import main

    sys.exit(main(["sps_puffer_cartpole", *sys.argv[1:]]))
