"""GRPO throughput on 2 CPU cores: workbench's GRPOTrainer against TRL's GRPOTrainer on the same work.

Same model (the default small transformer of `workbench train --algo grpo`, random weights, saved to a folder that
both load), same prompts (generated easy tasks), same G, the same longest completion, temperature 1, no KL, DAPO
loss, one update per generation batch, the same reward (the code env's judges in the sandbox; TRL gets them
through `workbench.tasks.eval.trl_reward`). Each trainer runs in a fresh subprocess, one after the other.

Reported: completion tokens generated per second of generation and GRPO updates per minute (wall time of whole
steps: generation, judging and the update). Caveat: our generation also ends at code stop sequences (a new `def`,
`#`, ...); TRL's ends only at the end-of-sequence token, so its completions run longer: compare tokens/s for the
generator, updates/min for the whole loop at the work each one does.

    python bench/grpo_throughput.py              # 12 steps each (TRL: pip install -e .[dev] brings it); ours also
                                                 # one step off-policy (the next step generated beside the update)
    python bench/grpo_throughput.py --steps 3    # a smoke test
"""

import argparse, itertools, json, os, subprocess, sys, tempfile, time

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
    tokens = sum(u["perf/tokens_per_s"] * u["perf/generate_time"] for u in updates)
    wall = sum(u["perf/step_time"] for u in updates)
    return {
        "trainer": "workbench" + (" one step off-policy" if off_policy else ""),
        "steps": len(updates),
        "tokens_per_s": tokens / gen_s,
        "updates_per_min": 60 * len(updates) / wall,
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
    wall = times[-1] - times[1]  # the first step warms up
    lengths = [float(x["completions/mean_length"]) for x in logs if "completions/mean_length" in x][1:]
    gen = [float(x["step_time"]) for x in logs if "step_time" in x][1:]
    tokens = sum(lengths) * TASKS * G
    return {
        "trainer": "trl",
        "steps": steps,
        "updates_per_min": 60 * steps / wall,
        "mean_completion": sum(lengths) / len(lengths),
        "tokens_per_s_whole_step": tokens / wall,
        "seconds": time.perf_counter() - t0,
        "step_time_logged": sum(gen),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--worker", choices=["ours", "ours-off", "trl"])
    p.add_argument("--folder")
    a = p.parse_args()
    if a.worker:
        work = {"ours": ours, "ours-off": lambda f, n: ours(f, n, off_policy=True), "trl": trl}[a.worker]
        print("RESULT " + json.dumps(work(a.folder, a.steps)))
        return
    folder = tempfile.mkdtemp(prefix="grpo-bench-")
    make_model(folder)
    results = {}
    for who in ("ours", "trl", "ours-off"):
        r = subprocess.run(
            [sys.executable, __file__, "--worker", who, "--folder", folder, "--steps", str(a.steps)],
            capture_output=True,
            text=True,
            env={**os.environ, "TRANSFORMERS_VERBOSITY": "error"},
        )
        line = next((x for x in r.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            print(f"{who}: failed ({(r.stderr.strip().splitlines() or ['?'])[-1]})")
            continue
        results[who] = json.loads(line[7:])
        print(json.dumps(results[who]))
    if "ours" in results and "trl" in results:
        o, t = results["ours"], results["trl"]
        print(
            f"updates/min: workbench {o['updates_per_min']:.1f}, TRL {t['updates_per_min']:.1f} "
            f"({o['updates_per_min'] / t['updates_per_min']:.2f}x); mean completion {o['mean_completion']:.1f} vs "
            f"{t['mean_completion']:.1f} tokens; generated tokens per second of whole step: workbench "
            f"{o['mean_completion'] * TASKS * G * o['updates_per_min'] / 60:.0f}, TRL {t['tokens_per_s_whole_step']:.0f}"
        )
    if "ours-off" in results and "trl" in results:
        f, t = results["ours-off"]["updates_per_min"], results["trl"]["updates_per_min"]
        print(f"one step off-policy: workbench {f:.1f} updates/min ({f / t:.2f}x TRL)")


if __name__ == "__main__":
    main()
