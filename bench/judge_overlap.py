"""Judges beside generation, on 2 CPU cores: GRPO steps/min with the sandboxed judges at work on each batch of
completions while the next batch is generated (`--judge-overlap on`) against judging each batch as it is handed over
(`--judge-overlap off`, the default on a CPU), on the code env's medium tasks.

The policy is the default tiny model after a short SFT (so that its completions are programs that run, as in a real
run, not text that fails to parse); both GRPO runs start from it with the same seed, so they generate the same
completions and get the same rewards. Runs alternate (serial, overlapped, serial, ...), `--rounds` of each.

    python -m bench judge_overlap                 # ~4 min; recorded
    python -m bench judge_overlap --rounds 1 --steps 3 --no-record
"""

import statistics, tempfile

from runner import bootstrap_ratio, fresh, interval, make_table

FIGURES = {"steps_per_min_off": "higher", "steps_per_min_on": "higher", "on_over_off": "higher"}


def sft(runs: str, updates: int = 200) -> dict:
    from workbench.train.lm import LMTrainConfig
    from workbench.train.runner import train_run

    cfg = LMTrainConfig.from_dict({"algo": "sft", "updates": updates, "batch_size": 16, "eval_every": 0,
                                   "checkpoint_every": 0, "runs_dir": runs, "torch_threads": 2, "device": "cpu"})  # fmt: skip
    return {"run_dir": train_run(cfg)[0]["run_dir"]}


def grpo(init: str, overlap: bool, steps: int, tasks: int, gen_batch: int) -> dict:
    from workbench.runs.events import Kind
    from workbench.train.grpo import GRPOTrainer
    from workbench.train.lm import LMTrainConfig

    cfg = LMTrainConfig.from_dict(
        {"algo": "grpo", "init": init, "task": "code?level=medium", "updates": steps + 1, "batch_size": tasks,
         "group_size": 8, "gen_batch": gen_batch, "judge_overlap": "on" if overlap else "off", "curriculum": False,
         "eval_every": 0, "checkpoint_every": 0, "torch_threads": 2, "device": "cpu"}
    )  # fmt: skip
    trainer, events = GRPOTrainer(cfg), []
    trainer.bus.subscribe(events.append)
    trainer.fit()
    trainer.bus.flush()
    steps = [e.data for e in events if e.kind == Kind.UPDATE][1:]  # the first warms up
    total = lambda k: sum(s[k] for s in steps)  # noqa: E731
    return {"overlap": overlap, "steps_per_min": 60 * len(steps) / total("perf/step_time"),
            "generate_s": total("perf/generate_time"), "judge_busy_s": total("perf/judge_busy_s"),
            "judge_wait_s": total("perf/judge_wait_s"), "reward": statistics.mean(s["charts/reward"] for s in steps),
            "executions_per_s": statistics.mean(s["perf/executions_per_s"] for s in steps),
            "timeouts": total("charts/timeouts")}  # fmt: skip


def options(p):
    p.add_argument("--rounds", type=int, default=2, help="runs of each mode, alternating")
    p.add_argument("--steps", type=int, default=6, help="timed GRPO steps a run (after one warm-up)")
    p.add_argument("--tasks", type=int, default=16, help="tasks a step (x 8 samples)")
    p.add_argument("--gen-batch", type=int, default=32, help="prompts a generation batch (the judges start on each)")


def run(quick: bool = False, rounds: int = 2, steps: int = 6, tasks: int = 16, gen_batch: int = 32) -> dict:
    "One short SFT, then GRPO from it with the judges after and beside generation, alternating, each a fresh process."
    sft_updates = 200
    if quick:
        rounds, steps, tasks, gen_batch, sft_updates = 1, 1, 2, 8, 10  # 16 samples: two batches, the judges beside one
    init = fresh("judge_overlap", "sft", runs=tempfile.mkdtemp(prefix="overlap-"), updates=sft_updates)
    if "error" in init:
        raise SystemExit(f"judge_overlap: the SFT run failed: {init['error']}")
    raw = []
    for _ in range(rounds):
        for overlap in (False, True):
            r = fresh("judge_overlap", "grpo", init=init["run_dir"], overlap=overlap, steps=steps, tasks=tasks,
                      gen_batch=gen_batch)  # fmt: skip
            if "error" in r:
                raise SystemExit(f"judge_overlap: a GRPO run failed: {r['error']}")
            raw.append(r)
            print(
                f"  judges {'beside' if overlap else 'after'} generation: {r['steps_per_min']:.1f} steps/min",
                flush=True,
            )
    rate = {o: [r["steps_per_min"] for r in raw if r["overlap"] == o] for o in (False, True)}
    figures = {"steps_per_min_off": round(statistics.median(rate[False]), 2),
               "steps_per_min_on": round(statistics.median(rate[True]), 2)}  # fmt: skip
    figures["on_over_off"] = round(figures["steps_per_min_on"] / figures["steps_per_min_off"], 3)
    ci = {"on_over_off": bootstrap_ratio(rate[True], rate[False], stat=statistics.median)} if rounds > 1 else {}
    settings = {"rounds": rounds, "steps": steps, "tasks": tasks, "gen_batch": gen_batch, "sft_updates": sft_updates}
    return {"settings": settings, "figures": figures, "ci95": ci, "raw": raw}


def table(records: list) -> str:
    "A row a mode of each full run: GRPO steps/min (median; each run), judging's executions/s, its ratio to `off`."

    def cells(rec):
        f, rows = rec["figures"], []
        for mode, on in (("after each batch (off)", False), ("beside generation (on)", True)):
            runs = [r for r in rec["raw"] if r["overlap"] == on]
            each = " / ".join(f"{r['steps_per_min']:.1f}" for r in runs if "steps_per_min" in r)
            execs = (f"{min(r['executions_per_s'] for r in runs):.0f}-{max(r['executions_per_s'] for r in runs):.0f}"
                     if all("executions_per_s" in r for r in runs) else runs[0].get("executions", "-"))  # fmt: skip
            ratio = f"{f['on_over_off']:.2f}{interval(rec, 'on_over_off')}" if on else "1"
            rows.append([mode, f"{f['steps_per_min_' + ('on' if on else 'off')]:.1f}" + (f" ({each})" if each else ""),
                         execs, ratio])  # fmt: skip
        return rows

    return make_table(["judges", "GRPO steps/min (each run)", "judging: executions/s while busy", "against off [95% CI]"],
                      records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench judge_overlap`)
    import sys

    from runner import main

    sys.exit(main(["judge_overlap", *sys.argv[1:]]))
