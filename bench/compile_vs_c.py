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

    python -m bench compile_vs_c                                   # 48 runs, ~20 min, recorded
    python -m bench compile_vs_c --pure-lstm --seconds 4 --max-wait 5   # RESULTS.md section 16 (56 runs;
                                  # the cartpole LSTM's compile+act-nokern alone compiles for ~5 min)
    python -m bench compile_vs_c --quick                           # a smoke test: trading, tiny sizes, c and torch
"""

import os, statistics, sys, tempfile, time

from benchutil import versions
from runner import fresh, make_table

JOBS = {
    "cartpole": {
        "env": "puffer:cartpole", "backend": "serial", "num_envs": 256, "num_steps": 64, "num_minibatches": 4,
        "update_epochs": 1, "learning_rate": 1e-3, "gamma": 0.99, "gae_lambda": 0.95, "hidden_size": 128,
        "num_layers": 1,
    },
    "trading": {"env": "trading", "num_envs": 64, "num_steps": 32, "num_minibatches": 4, "update_epochs": 4,
                "learning_rate": 3e-4},
}  # fmt: skip
TINY = {"num_envs": 8, "num_steps": 8, "num_minibatches": 2, "update_epochs": 1}  # --quick: a smoke test's sizes
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
    "One run in this (fresh) process (`runner.fresh`): build the trainer, warm up, time the steady updates."
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = spec["cache"]  # (before torch and workbench are imported here)
    os.environ.pop("WORKBENCH_KERNELS", None)
    if spec["mode"].endswith("-nokern"):
        os.environ["WORKBENCH_KERNELS"] = "0"
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


def one(spec: dict) -> dict:
    "One run in a fresh process, with a fresh inductor cache."
    with tempfile.TemporaryDirectory(prefix="compile-vs-c-") as cache:
        return fresh("compile_vs_c", "worker", spec=dict(spec, cache=cache))


def cases(jobs, policies, threads, modes, pure_lstm, sizes, warmup, seconds) -> list:
    "Every run, in the order they run: the modes of a case together, their order rotated from case to case."
    out, k = [], 0
    for job in jobs:
        for policy in policies:
            for t in threads:
                ms = list(modes) + ([m for m in PURE if m[:-7] in modes] if pure_lstm and policy == "lstm" else [])
                ms = ms[k % len(ms) :] + ms[: k % len(ms)]
                k += 1
                for mode in ms:
                    out.append({"job": job, "policy": policy, "threads": t, "mode": mode, "warmup": warmup,
                                "seconds": seconds, "config": {**JOBS[job], "policy": policy, **sizes}})  # fmt: skip
    return out


def options(p):
    p.add_argument("--jobs", nargs="+", choices=list(JOBS), default=list(JOBS))
    p.add_argument("--policies", nargs="+", choices=POLICIES, default=list(POLICIES))
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch threads (the kernels' follow it)")
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    p.add_argument("--pure-lstm", action="store_true", help="the LSTM's torch runs also without WORKBENCH_KERNELS")
    p.add_argument("--warmup", type=int, default=2, help="updates left out of steps/s (compilation is in the 1st)")
    p.add_argument("--seconds", type=float, default=6.0, help="time at least this long after the warm-up")


def key(r: dict, mode: str = "") -> str:
    return f"{r['job']}_{r['policy']}_t{r['threads']}" + (f"_{mode}" if mode else "")


FIGURES = {f"{j}_{p}_t{t}_{m}": "higher" for j in JOBS for p in POLICIES for t in (1, 2) for m in (*MODES, *PURE)}


def run(quick=False, jobs=tuple(JOBS), policies=POLICIES, threads=(1, 2), modes=MODES, pure_lstm=False, warmup=2,
        seconds=6.0, quiet=lambda: 0.0) -> dict:  # fmt: skip
    sizes = {}
    if quick:  # tiny sizes, the trading MLP on one thread, C against eager torch
        jobs, policies, threads, modes, warmup, seconds, sizes = ["trading"], ["mlp"], [1], ["c", "torch"], 1, 0.5, TINY
    raw, figures = [], {}
    for spec in cases(jobs, policies, threads, modes, pure_lstm, sizes, warmup, seconds):
        busy = quiet()
        r = {**{k: spec[k] for k in ("job", "policy", "threads", "mode")}, "busy_before": round(busy, 3), **one(spec)}
        raw.append(r)
        what = f"{r['job']:<8} {r['policy']:<11} threads {r['threads']} {r['mode']:<18}"
        if "error" in r:
            print(f"  {what} failed: {r['error']}", flush=True)
            continue
        figures[key(r, r["mode"])] = round(r["sps"])
        extra = f", {r['graph_breaks']} graph breaks, {r['graphs']} graphs" if "graphs" in r else ""
        print(f"  {what} {r['sps']:>10,.0f} steps/s ({r['updates']} updates; 1st update {r['first_update_s']:.1f} s, "
              f"then {r['update_s'] * 1e3:.0f} ms{extra}) [{r['learner']}; other load {busy:.0%}]", flush=True)  # fmt: skip
        for reason in r.get("break_reasons", []):
            print(f"      break: {reason}", flush=True)
    settings = {"jobs": list(jobs), "policies": list(policies), "threads": list(threads), "modes": list(modes),
                "pure_lstm": pure_lstm, "warmup": warmup, "seconds": seconds, "sizes": sizes}  # fmt: skip
    return {"settings": settings, "figures": figures, "raw": raw, "versions": versions("torch")}


def table(records: list) -> str:
    "A row a case of each full run: steps/s of each mode, and the best torch mode's share of C's."
    modes = (*MODES, *PURE)

    def cells(rec):
        f, s, rows = rec["figures"], rec["settings"], []
        for job in s["jobs"]:
            for policy in s["policies"]:
                for t in s["threads"]:
                    case = {"job": job, "policy": policy, "threads": t}
                    sps = {m: f.get(key(case, m)) for m in modes}
                    torch_modes = {m: v for m, v in sps.items() if m != "c" and v}
                    best = max(torch_modes, key=torch_modes.get) if torch_modes else None
                    ratio = f"{torch_modes[best] / sps['c']:.2f} (`{best}`)" if best and sps["c"] else "-"
                    rows.append([job, policy, str(t), *(f"{v:,}" if v else "-" for v in sps.values()), ratio])
        return rows

    return make_table(["job", "policy", "threads", *(f"`{m}`" for m in modes), "best torch / C"], records, cells)


if __name__ == "__main__":  # (the same as `python -m bench compile_vs_c`)
    from runner import main

    sys.exit(main(["compile_vs_c", *sys.argv[1:]]))
