"""Issue 56's held-out test: SmolLM2-135M-Instruct (LoRA) trained with GRPO on CodeI/O's training programs, scored
greedy before and after on HumanEval's 164 problems and on CodeI/O's 92 validation tasks (programs training never
drew), per seed, with the exact paired sign test over the tasks.

Every stage writes its own file under --stages (default `bench/codeio_heldout/`, committed: the per-task results are
the record's raw data) and is skipped when that file is there, so the whole test can be spread over several sessions
(on a 2-core CPU one seed takes about 90 minutes: 25 GRPO steps of 88 s, then ~18 min of HumanEval and ~37 min of
validation tasks). The "before" files are the untrained model's, shared by the seeds.

    python -m bench codeio_heldout --seeds 0 --updates 25      # the untrained scores once, then seed 0, recorded
    python -m bench codeio_heldout --seeds 0 1 --report        # the record from the files there, nothing run
    python -m bench codeio_heldout --quick                     # the same as --report over the committed files
"""

import json, subprocess, sys
from pathlib import Path

from runner import make_table

HERE = Path(__file__).resolve().parent

SETS = {"humaneval": ("code?source=humaneval", None), "val": ("code?source=codeio", "val")}


def workbench(*args) -> subprocess.CompletedProcess:
    "The CLI as a user runs it; its errors pass through."
    cmd = [str(Path(sys.executable).parent / "workbench"), *map(str, args)]
    print("$ workbench " + " ".join(map(str, args)), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if r.returncode:
        raise SystemExit(f"workbench {args[0]} failed with exit code {r.returncode}")
    return r


def evaluate(what, out: Path, a) -> None:
    "Greedy scores of `what` (a model name or a run folder) on each held-out set, a JSON line a task."
    for name, (spec, split) in SETS.items():
        f = out / f"{name}.jsonl"
        if f.exists():
            continue
        f.parent.mkdir(parents=True, exist_ok=True)
        model = ["--model", what] if not Path(what).is_dir() else [what, "--pick", "last"]
        workbench("eval", *model, "--task", spec, *(["--split", split] if split else []),
                  "--max-new-tokens", a.eval_tokens, *(["--episodes", a.tasks] if a.tasks else []), "--out", f)  # fmt: skip


def train(seed: int, out: Path, a) -> Path:
    "The GRPO run of one seed (its folder, from the summary kept beside it)."
    summary = out / "train.json"
    if not summary.exists():
        r = workbench("train", "--algo", "grpo", "--model", a.model, "--lora", 16, "--task", a.task, "--band",
                      "--batch-size", a.batch_size, "--group-size", a.group_size, "--micro-batch", a.micro_batch,
                      "--max-new-tokens", a.max_new_tokens, "--temperature", a.temperature, "--learning-rate", a.lr,
                      "--updates", a.updates, "--eval-every", 0, "--checkpoint-every", 10, "--seed", seed,
                      "--runs-dir", out / "runs", "--quiet", "--json")  # fmt: skip
        line = [x for x in r.stdout.splitlines() if x.startswith("{")][-1]
        out.mkdir(parents=True, exist_ok=True)
        tmp = summary.with_suffix(".part")
        tmp.write_text(line + "\n")
        tmp.replace(summary)
    return Path(json.loads(summary.read_text())["run_dir"])


def passed(f: Path) -> dict:
    return {
        r["task"]: bool(r["passed"]) for r in map(json.loads, f.read_text().splitlines()) if r.get("sample", 0) == 0
    }


def pairs(root: Path, seeds: list) -> list:
    "Before against after on each set, matched task by task: a row a seed, and all seeds' pairs, with the sign test."
    from workbench.tasks.eval import paired_test

    rows = []
    for name in SETS:
        bf = root / "before" / f"{name}.jsonl"
        if not bf.exists():
            continue
        before, pooled = passed(bf), ([], [])
        for s in seeds:
            af = root / f"seed{s}" / f"{name}.jsonl"
            if not af.exists():
                continue
            after = passed(af)
            keys = sorted(before.keys() & after.keys())
            a, b = [after[k] for k in keys], [before[k] for k in keys]
            pooled[0].extend(a), pooled[1].extend(b)
            rows.append(
                {"set": name, "seed": s, "before": sum(b), "after": sum(a), "tasks": len(keys), **paired_test(a, b)}
            )
        if len(seeds) > 1 and pooled[0]:
            rows.append({"set": name, "seed": "all", "before": sum(pooled[1]), "after": sum(pooled[0]),
                         "tasks": len(pooled[0]), **paired_test(*pooled)})  # fmt: skip
    return rows


def row_cells(r: dict, names: dict = {}) -> list:
    return [names.get(r["set"], r["set"]), str(r["seed"]), f"{r['before']}/{r['tasks']}", f"{r['after']}/{r['tasks']}",
            f"{r['a_better']} / {r['b_better']}", f"{r['p_value']:.3g}"]  # fmt: skip


COLUMNS = ["set", "seed", "before", "after", "after better / worse", "sign test p"]


def report(root: Path, seeds: list) -> str:
    "The before/after table of the files under `root`, in markdown."
    return "\n".join(["| " + " | ".join(COLUMNS) + " |", "|---|---|---:|---:|---:|---:|"]
                     + ["| " + " | ".join(row_cells(r)) + " |" for r in pairs(root, seeds)])  # fmt: skip


def options(p):
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--stages", type=Path, default=HERE / "codeio_heldout", help="the stage files' folder (resumable)")
    p.add_argument(
        "--report", dest="report_only", action="store_true", help="the record from the files there; run nothing"
    )
    p.add_argument("--model", default="smollm2")
    p.add_argument("--task", default="code?source=codeio&reward=objective&max_chars=600")
    p.add_argument("--updates", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--group-size", type=int, default=4)
    p.add_argument("--micro-batch", type=int, default=4)
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--eval-tokens", type=int, default=512, help="the evaluations' max new tokens (as RESULTS 20-21)")
    p.add_argument("--tasks", type=int, default=0, help="score each set's first N tasks only (a quick try; 0: all)")


FIGURES = {f"{n}_{s}_after": "higher" for n in SETS for s in ("seed0", "seed1", "seed2", "all")}


def run(quick=False, seeds=(0,), stages=HERE / "codeio_heldout", report_only=False, **kw) -> dict:
    import types

    a, root = types.SimpleNamespace(**kw), Path(stages)
    if quick:  # the record of the committed files: nothing trained or scored
        seeds, report_only = sorted(int(p.name[4:]) for p in root.glob("seed*") if p.name[4:].isdigit()), True
    if not report_only:
        evaluate(a.model, root / "before", a)
        for s in seeds:
            evaluate(str(train(s, root / f"seed{s}", a)), root / f"seed{s}", a)
    rows = pairs(root, list(seeds))
    print(report(root, list(seeds)))
    figures = {f"{r['set']}_{r['seed'] if r['seed'] == 'all' else 'seed' + str(r['seed'])}_{k}": r[k]
               for r in rows for k in ("before", "after", "p_value")}  # fmt: skip
    return {"settings": {"seeds": list(seeds), "stages": str(root.relative_to(HERE.parent)) if root.is_relative_to(HERE.parent)
                         else str(root), **vars(a)}, "figures": figures, "raw": rows}  # fmt: skip


def table(records: list) -> str:
    "The before/after rows of each full run (a row a set and seed, and both seeds' pairs)."
    names = {"humaneval": "HumanEval (greedy, 512 tokens)", "val": "CodeI/O val (greedy, 512 tokens)"}
    return make_table(COLUMNS, records, lambda rec: [row_cells(r, names) for r in rec["raw"]])


if __name__ == "__main__":  # (the same as `python -m bench codeio_heldout`)
    from runner import main

    sys.exit(main(["codeio_heldout", *sys.argv[1:]]))
