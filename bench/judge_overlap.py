"""Judges beside generation, on 2 CPU cores: GRPO steps/min with the sandboxed judges at work on each batch of
completions while the next batch is generated (`--judge-overlap on`) against judging each batch as it is handed over
(`--judge-overlap off`, the default on a CPU), on the code env's medium tasks.

The policy is the default tiny model after a short SFT (so that its completions are programs that run, as in a real
run, not text that fails to parse); both GRPO runs start from it with the same seed, so they generate the same
completions and get the same rewards. Runs alternate (serial, overlapped, serial, ...), `--rounds` of each.

    python bench/judge_overlap.py                 # ~4 min
    python bench/judge_overlap.py --rounds 1 --steps 3
"""

import argparse, json, statistics, tempfile


def sft(runs: str) -> str:
    from workbench.train.lm import LMTrainConfig
    from workbench.train.runner import train_run

    cfg = LMTrainConfig.from_dict({"algo": "sft", "updates": 200, "batch_size": 16, "eval_every": 0, "checkpoint_every": 0,
                                   "runs_dir": runs, "torch_threads": 2, "device": "cpu"})  # fmt: skip
    return train_run(cfg)[0]["run_dir"]


def grpo(init: str, overlap: bool, a) -> dict:
    from workbench.runs.events import Kind
    from workbench.train.grpo import GRPOTrainer
    from workbench.train.lm import LMTrainConfig

    cfg = LMTrainConfig.from_dict(
        {"algo": "grpo", "init": init, "task": "code?level=medium", "updates": a.steps + 1, "batch_size": a.tasks,
         "group_size": 8, "gen_batch": a.gen_batch, "judge_overlap": "on" if overlap else "off", "curriculum": False,
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


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--tasks", type=int, default=16, help="tasks a step (x 8 samples)")
    p.add_argument("--gen-batch", type=int, default=32, help="prompts a generation batch (the judges start on each)")
    a = p.parse_args()
    init = sft(tempfile.mkdtemp(prefix="overlap-"))
    rows = {False: [], True: []}
    for _ in range(a.rounds):
        for overlap in (False, True):
            r = grpo(init, overlap, a)
            rows[overlap].append(r)
            print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}), flush=True)
    med = {o: statistics.median(r["steps_per_min"] for r in rows[o]) for o in rows}
    wait = {o: statistics.median(r["judge_wait_s"] for r in rows[o]) for o in rows}
    print(f"steps/min (median of {a.rounds}): judges after generation {med[False]:.1f}, beside generation {med[True]:.1f} "
          f"({med[True] / med[False]:.2f}x); waited for the judges {wait[False]:.1f} s against {wait[True]:.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()
