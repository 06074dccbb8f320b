"""GRPO throughput on 2 CPU cores: workbench's GRPOTrainer against TRL's GRPOTrainer on the same work.

Same model (the default small transformer of `workbench train --algo grpo`, random weights, saved to a folder that
both load), same prompts (generated easy tasks), same G, the same longest completion, temperature 1, no KL, DAPO
loss, one update per generation batch, the same reward (the code env's judges in the sandbox; TRL gets them
through `workbench.tasks.eval.trl_reward`). Each trainer runs in a fresh subprocess, one after the other.

Reported: completion tokens generated per second of generation and GRPO updates per minute (wall time of whole
steps: generation, judging and the update). Caveat: our generation also ends at code stop sequences (a new `def`,
`#`, ...); TRL's ends only at the end-of-sequence token, so its completions run longer: compare tokens/s for the
generator, updates/min for the whole loop at the work each one does.

Updates per minute are the steady-state rate (`runner.steady_rate`: the slope of steps against time, after the first
step and the first 10%); the ratio to TRL carries a bootstrap 95% interval over the steps' durations.

    python -m bench grpo_throughput              # 12 steps each (TRL: pip install -e .[dev] brings it); ours also one
                                                 # step off-policy (the next step generated beside the update); recorded
    python -m bench grpo_throughput --quick      # 2 steps each, ours and TRL's only: a smoke test
"""

import itertools, json, sys, tempfile, time

from benchutil import versions
from runner import bootstrap_ratio, fresh, interval, make_table, steady_rate

TASKS, G, LENGTH = 8, 8, 48


def make_model(folder: str) -> None:
    from workbench.train.lm import LMTrainConfig, build_policy

    build_policy(LMTrainConfig()).save(folder)


def ours(folder: str, steps: int, off_policy: bool = False) -> dict:
    from workbench.runs.events import Kind
    from workbench.train.grpo import GRPOTrainer
    from workbench.train.lm import LMTrainConfig

    cfg = LMTrainConfig.from_dict(
        {
            "algo": "grpo",
            "model": folder,
            "updates": steps + 1,
            "batch_size": TASKS,
            "group_size": G,
            "max_new_tokens": LENGTH,
            "temperature": 1.0,
            "beta": 0.0,
            "loss_type": "dapo",
            "learning_rate": 1e-5,
            "warmup": 0,
            "eval_every": 0,
            "checkpoint_every": 0,
            "curriculum": False,
            "device": "cpu",
            "off_policy": off_policy,
        }
    )
    trainer, events = GRPOTrainer(cfg), []
    trainer.bus.subscribe(events.append)
    trainer.fit()
    trainer.bus.flush()
    updates = [e.data for e in events if e.kind == Kind.UPDATE][1:]  # the first step warms up
    gen_s = sum(u["perf/generate_time"] for u in updates)
    tokens = sum(u.get("perf/tokens_per_s", 0.0) * u["perf/generate_time"] for u in updates)
    return {
        "trainer": "workbench" + (" one step off-policy" if off_policy else ""),
        "steps": len(updates),
        "tokens_per_s": tokens / gen_s,
        "step_seconds": [u["perf/step_time"] for u in updates],
        "mean_completion": tokens / (len(updates) * TASKS * G),
    }


def trl(folder: str, steps: int) -> dict:
    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer
    from workbench.tasks.eval import trl_reward
    from workbench.tasks.code import task_stream

    torch.set_num_threads(1)
    tasks = list(itertools.islice(task_stream("easy", 0, "train"), TASKS * (steps + 1)))
    data = Dataset.from_list([{"prompt": t.prompt, "task": json.dumps(t.to_dict())} for t in tasks])
    times, logs = [], []

    class Clock(TrainerCallback):
        def on_step_begin(self, *a, **k):
            times.append(time.perf_counter())

        def on_log(self, args, state, control, logs_=None, **k):
            logs.append(k.get("logs") or logs_ or {})

    args = GRPOConfig(
        output_dir=tempfile.mkdtemp(),
        per_device_train_batch_size=TASKS * G,
        num_generations=G,
        max_completion_length=LENGTH,
        temperature=1.0,
        beta=0.0,
        loss_type="dapo",
        learning_rate=1e-5,
        max_steps=steps + 1,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        dataloader_num_workers=0,
        shuffle_dataset=False,
    )
    trainer = GRPOTrainer(model=folder, reward_funcs=[trl_reward()], args=args, train_dataset=data, callbacks=[Clock()])
    t0 = time.perf_counter()
    trainer.train()
    times.append(time.perf_counter())
    lengths = [float(x["completions/mean_length"]) for x in logs if "completions/mean_length" in x][1:]
    return {
        "trainer": "trl",
        "steps": steps,
        "step_seconds": [b - a for a, b in zip(times[1:], times[2:])],  # the first step warms up
        "mean_completion": sum(lengths) / len(lengths),
        "seconds": time.perf_counter() - t0,
    }


FIGURES = {"workbench": "higher", "trl": "lower", "ratio": "higher", "off_policy": "higher", "off_ratio": "higher"}


def per_min(step_seconds: list) -> float:
    "Steady-state updates a minute from the steps' durations."
    stamps = list(itertools.accumulate(step_seconds))
    return 60 * steady_rate([0.0, *stamps])


def run(quick: bool = False) -> dict:
    "Each trainer in a fresh process, one after the other, on one saved model: updates/min and the ratios to TRL."
    steps, folder = 2 if quick else 12, tempfile.mkdtemp(prefix="grpo-bench-")
    fresh("grpo_throughput", "make_model", folder=folder)
    raw = {"workbench": fresh("grpo_throughput", "ours", folder=folder, steps=steps),
           "trl": fresh("grpo_throughput", "trl", folder=folder, steps=steps)}  # fmt: skip
    if not quick:  # (the off-policy sampler's quick run: `grpo_offpolicy --quick`)
        raw["off_policy"] = fresh("grpo_throughput", "ours", folder=folder, steps=steps, off_policy=True)
    for who, r in raw.items():
        if "error" in r:
            raise SystemExit(f"grpo_throughput: {who} failed: {r['error']}")
    figures = {who: round(per_min(r["step_seconds"]), 2) for who, r in raw.items()}
    figures["ratio"] = round(figures["workbench"] / figures["trl"], 3)
    rates = {who: [60 / x for x in r["step_seconds"]] for who, r in raw.items()}
    ci = {"ratio": bootstrap_ratio(rates["workbench"], rates["trl"])}
    if "off_policy" in raw:
        figures["off_ratio"] = round(figures["off_policy"] / figures["trl"], 3)
        ci["off_ratio"] = bootstrap_ratio(rates["off_policy"], rates["trl"])
    settings = {"tasks": TASKS, "group": G, "max_new_tokens": LENGTH, "steps": steps, "torch_threads": 1}
    return {"settings": settings, "figures": figures, "ci95": ci, "raw": raw, "versions": versions("torch", "trl")}


def table(records: list) -> str:
    "RESULTS' table: a row a full run (or a figure carried over from before the records), its machine named."

    def cells(r):
        f = r["figures"]
        off = f"{f['off_policy']:.1f} ({f['off_ratio']:.2f}x{interval(r, 'off_ratio')})" if "off_policy" in f else "-"
        return [[f"{f['workbench']:.1f}", f"{f['trl']:.1f}", f"{f['ratio']:.2f}x{interval(r, 'ratio')}", off]]

    columns = ["workbench updates/min", "TRL", "workbench / TRL [95% CI]", "one step off-policy (uses the 2nd core)"]
    return make_table(columns, records, cells)


if __name__ == "__main__":
    from runner import main

    sys.exit(main(["grpo_throughput", *sys.argv[1:]]))
