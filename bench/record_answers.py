"""Record a chat model's whole answers to HumanEval problems, uncut, for the extraction tests
(`tests/data/answers.jsonl`, read by `tests/test_code_harness.py`).

The model is prompted as `workbench eval` prompts it (its chat template around the task) and decodes greedily with
no stop sequence, so each record holds everything the model wrote: the tests cut it as generation would
(`answers.answer_end`) and read its program (`answer_program`), whatever its shape.

    make smollm && python bench/record_answers.py --tasks 24        # SmolLM2-135M-Instruct, HumanEval/0..23
"""

import argparse, json, os, time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="smollm2")
    p.add_argument("--tasks", type=int, default=24, help="the first N HumanEval problems")
    p.add_argument("--max-new-tokens", type=int, default=320)
    p.add_argument("--out", default="tests/data/answers.jsonl")
    a = p.parse_args()

    import torch

    from workbench.tasks.code import humaneval_tasks
    from workbench.train.lm import LMTrainConfig, build_policy, prepare_model

    cfg = LMTrainConfig.from_dict({"model": a.model})
    policy = build_policy(cfg)
    prepare_model(policy, cfg)
    tasks = humaneval_tasks()[: a.tasks]
    t0 = time.time()
    decode = policy.generator.generate if policy.generator is not None else policy._generate
    samples = []
    policy.model.eval()
    with torch.no_grad():  # greedy, and no stop sequence: the whole answer (`generate` would cut it)
        for i in range(0, len(tasks), 8):
            samples += decode([t.prompt for t in tasks[i : i + 8]], a.max_new_tokens, 0.0, 1.0, (), None)
    part = a.out + ".part"
    with open(part, "w") as f:
        for t, s in zip(tasks, samples):
            f.write(json.dumps({"model": a.model, "task": t.id, "answer": s.text, "truncated": s.truncated}) + "\n")
    os.replace(part, a.out)
    print(f"{len(tasks)} answers of {a.model} in {time.time() - t0:.0f} s: {a.out}")


if __name__ == "__main__":
    main()
