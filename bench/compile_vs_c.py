"""Does the C backend earn its place? PPO's steps/s on the C kernels against the torch backend, eager and compiled.

Issue 39: "where the best torch path is within 1.3x of C, remove that C". For each job x policy x torch threads,
one fresh process a run (the modes of a case one after another, their order rotated from case to case, so the
shared machine's drift hits all alike):

  * `c`           `learner="c"`: the C kernels (`workbench/kernels/`) for the rollout's step, the loss and its
                  gradient, clip and Adam, GAE;
  * `torch`       `learner="torch"`, eager;
  * `compile`     `learner="torch"` with `compile=True`: what the trainer offers, `torch.compile` (inductor, CPU) of
                  the policy for the update's forward pass only (its backward through AOTAutograd); the rollout's
                  step, GAE and Adam stay eager;
  * `compile+act` the same, and the rollout's step (the policy's forward and the head's sample) compiled too: done
                  here, by replacing the backend's `act` in the run's process; the package has no such option.

With `--pure-lstm`, the LSTM's torch modes run again with `WORKBENCH_KERNELS=0` (`*-nokern`): on `puffer:cartpole`,
where episodes begin at most steps of a block, the torch backend's LSTM replayed through `LSTMScan`, whose steps
were C (`lstm_scan.c`) too, so only these runs were torch alone. `lstm_scan.c` is gone since (RESULTS.md section
17): on a tree without it, `*-nokern` runs as the mode it repeats.

Jobs: `puffer:cartpole` as `sps_puffer_cartpole.py` runs it (256 agents x 64 steps, 4 minibatches of 4,096, 1
epoch, lr 1e-3, hidden 128, 1 layer: for the transformer one encoder layer of width 128, 2 heads, window 8), and the
trading job as `policy_sps.py` runs it (the trading notebook's: 64 envs x 32 steps, 4 minibatches x 4 epochs, lr
3e-4, the policies' defaults: hidden 64, the MLP 2 layers, the transformer 2 layers, 2 heads, window 8).

Steady state: `PPOTrainer.step()` (rollout, advantages, update) as `Trainer.fit` calls it, `--warmup` updates first
(compilation happens in the first), then updates until `--seconds` have passed (at least 3); steps/s over those.
The first update's seconds are reported apart: for the compiled modes, about the compile time. Each run has an
inductor cache of its own (`TORCHINDUCTOR_CACHE_DIR`, fresh), so every compile is a cold one. Dynamo's graph breaks
and graph counts are reported for the compiled modes.

    python bench/compile_vs_c.py --json bench/out/compile_vs_c.json            # 48 runs, ~20 min
    python bench/compile_vs_c.py --pure-lstm --seconds 4 --max-wait 5          # RESULTS.md section 16 (56 runs;
                                  # the cartpole LSTM's compile+act-nokern alone compiles for ~5 min)
    python bench/compile_vs_c.py --jobs trading --policies mlp --threads 1 --seconds 2 --tiny   # a smoke test
"""

import argparse, json, os, statistics, subprocess, sys, tempfile, time

from benchutil import versions, wait_for_quiet

JOBS = {
    "cartpole": {
        "env": "puffer:cartpole", "backend": "serial", "num_envs": 256, "num_steps": 64, "num_minibatches": 4,
        "update_epochs": 1, "learning_rate": 1e-3, "gamma": 0.99, "gae_lambda": 0.95, "hidden_size": 128,
        "num_layers": 1,
    },
    "trading": {"env": "trading", "num_envs": 64, "num_steps": 32, "num_minibatches": 4, "update_epochs": 4,
                "learning_rate": 3e-4},
}  # fmt: skip
TINY = {"num_envs": 8, "num_steps": 8, "num_minibatches": 2, "update_epochs": 1}  # --tiny: a smoke test's sizes
POLICIES = ("mlp", "lstm", "transformer")
MODES = ("c", "torch", "compile", "compile+act")
PURE = ("torch-nokern", "compile+act-nokern")  # --pure-lstm: the LSTM's torch runs without lstm_scan.c


def compiled_act(learner):
    "Replace the torch backend's rollout step by a `torch.compile`d one: the policy's forward and the head's sample."
    import torch

    policy = learner.policy

    def forward(x, state):
        params, value, state = policy(x, state)
        action, logprob = policy.head.sample(params)
        return action, logprob, value, state

    fn = torch.compile(forward)

    def act(x, state, actions, logprobs, values):
        action, logprob, value, state = fn(x, state)
        actions.copy_(action)
        logprobs.copy_(logprob)
        values.copy_(value)
        return state

    learner.act = act


def worker(spec: dict) -> dict:
    "One run in this (fresh) process: build the trainer, warm up, time the steady updates."
    import torch
    from torch._dynamo.utils import counters

    from workbench.train.config import TrainConfig
    from workbench.train.ppo import PPOTrainer

    mode = spec["mode"].removesuffix("-nokern")
    config = {
        **spec["config"], "learner": "c" if mode == "c" else "torch", "compile": mode.startswith("compile"),
        "torch_threads": spec["threads"], "seed": 1, "device": "cpu", "eval_every": 0, "checkpoint_every": 0,
        "total_timesteps": 10**9,
    }  # fmt: skip
    t0 = time.perf_counter()
    trainer = PPOTrainer(TrainConfig.from_dict(config))
    if mode == "compile+act":
        compiled_act(trainer.learner)
    build = time.perf_counter() - t0
    batch = trainer.cfg.env.num_envs * trainer.cfg.ppo.num_steps
    times = []
    with trainer.running():
        for i in range(10**9):
            t = time.perf_counter()
            trainer.step()
            trainer.count_update()
            trainer.scheduler.step()
            times.append(time.perf_counter() - t)
            steady = times[spec["warmup"] :]
            if len(steady) >= 3 and sum(steady) >= spec["seconds"]:
                break
    trainer.close()
    steady = times[spec["warmup"] :]
    out = {
        "learner": trainer.learner.name, "sps": batch * len(steady) / sum(steady), "updates": len(steady),
        "first_update_s": times[0], "update_s": statistics.median(steady), "build_s": build,
        "torch_threads": torch.get_num_threads(),
    }  # fmt: skip
    if mode.startswith("compile"):
        breaks = counters["graph_break"]
        out["graph_breaks"] = sum(breaks.values())
        out["break_reasons"] = [f"{n} x {r[:160]}" for r, n in breaks.most_common(4)]
        out["graphs"] = counters["stats"]["unique_graphs"]
    return out


def run(spec: dict) -> dict:
    "One run in a fresh process, with a fresh inductor cache."
    with tempfile.TemporaryDirectory(prefix="compile-vs-c-") as cache:
        env = dict(os.environ, PYTHONWARNINGS="ignore", TORCHINDUCTOR_CACHE_DIR=cache)
        env.pop("WORKBENCH_KERNELS", None)
        if spec["mode"].endswith("-nokern"):
            env["WORKBENCH_KERNELS"] = "0"
        p = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)],
            capture_output=True, text=True, env=env,
        )  # fmt: skip
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    if p.returncode or not lines:
        tail = [line for line in p.stderr.strip().splitlines() if line.strip()][-3:]
        return {"error": " | ".join(tail)[-400:] or f"exit {p.returncode}"}
    return json.loads(lines[-1])


def cases(args):
    "Every run, in the order they run: the modes of a case together, their order rotated from case to case."
    out, k = [], 0
    for job in args.jobs:
        for policy in args.policies:
            for threads in args.threads:
                modes = list(args.modes) + (
                    [m for m in PURE if m[:-7] in args.modes] if args.pure_lstm and policy == "lstm" else []
                )
                modes = modes[k % len(modes) :] + modes[: k % len(modes)]
                k += 1
                for mode in modes:
                    config = {**JOBS[job], "policy": policy, **(TINY if args.tiny else {})}
                    out.append({"job": job, "policy": policy, "threads": threads, "mode": mode, "config": config,
                                "warmup": args.warmup, "seconds": args.seconds})  # fmt: skip
    return out


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def table(results: list, args) -> None:
    modes = [m for m in (*MODES, *PURE) if any(r["mode"] == m for r in results)]
    print("\n| job | policy | threads | " + " | ".join(modes) + " | best torch | best torch / C |")
    print("|---|---|---:|" + "---:|" * len(modes) + "---|---:|")
    by = {(r["job"], r["policy"], r["threads"], r["mode"]): r for r in results}
    for job in args.jobs:
        for policy in args.policies:
            for threads in args.threads:
                runs = {m: by.get((job, policy, threads, m)) for m in modes}
                row = {m: r.get("sps") if r else None for m, r in runs.items()}
                torch_modes = {m: s for m, s in row.items() if m != "c" and s}
                best = max(torch_modes, key=torch_modes.get) if torch_modes else None
                ratio = f"{torch_modes[best] / row['c']:.2f}" if best and row.get("c") else "-"
                cells = " | ".join(f"{row[m]:,.0f}" if row[m] else "failed" if runs[m] else "-" for m in modes)
                print(f"| {job} | {policy} | {threads} | {cells} | {best} | {ratio} |")
    print("\nFirst update's seconds (compilation) and steady update's ms, compiled modes:")
    for r in results:
        if "graphs" in r:
            print(f"  {r['job']:<8} {r['policy']:<11} threads {r['threads']} {r['mode']:<18} "
                  f"{r['first_update_s']:6.1f} s, then {r['update_s'] * 1e3:7.1f} ms; "
                  f"{r['graph_breaks']} graph breaks, {r['graphs']} graphs")  # fmt: skip


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", nargs="+", choices=list(JOBS), default=list(JOBS))
    ap.add_argument("--policies", nargs="+", choices=POLICIES, default=list(POLICIES))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch threads (the kernels' follow it)")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    ap.add_argument("--pure-lstm", action="store_true", help="the LSTM's torch runs also without lstm_scan.c")
    ap.add_argument("--warmup", type=int, default=2, help="updates left out of steps/s (compilation is in the 1st)")
    ap.add_argument("--seconds", type=float, default=6.0, help="time at least this long after the warm-up")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes: a smoke test")
    ap.add_argument("--max-busy", type=float, default=0.15, help="wait until other processes use less than this ...")
    ap.add_argument("--max-wait", type=float, default=20.0, help="... for at most this many seconds")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))), flush=True)
        return
    print(f"# compile vs C; {versions('torch')}; load {load()}", flush=True)
    results = []
    for spec in cases(args):
        busy = wait_for_quiet(args.max_busy, args.max_wait)
        r = {**{k: spec[k] for k in ("job", "policy", "threads", "mode")}, "busy_before": busy, "load": load()}
        r.update(run(spec))
        results.append(r)
        what = f"{r['job']:<8} {r['policy']:<11} threads {r['threads']} {r['mode']:<18}"
        if "error" in r:
            print(f"  {what} failed: {r['error']}", flush=True)
            continue
        extra = f", {r['graph_breaks']} graph breaks, {r['graphs']} graphs" if "graphs" in r else ""
        print(f"  {what} {r['sps']:>10,.0f} steps/s ({r['updates']} updates; 1st update {r['first_update_s']:.1f} s, "
              f"then {r['update_s'] * 1e3:.0f} ms{extra}) [{r['learner']}; other load {busy:.0%}, "
              f"loadavg {r['load']}]", flush=True)  # fmt: skip
        for reason in r.get("break_reasons", []):
            print(f"      break: {reason}", flush=True)
    table(results, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"versions": versions("torch"), "args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
