"""How well each judge agrees with the labels of the shipped benchmark (100 queries x 5 candidate responses).

Runs `workbench.judge.benchmark.run_benchmark` with the execution judge (sandboxed, 2 at a time), the static judge,
the transformer judge (bundled MiniLM, offline), the LLM judge when WORKBENCH_LLM_BASE_URL points at a server, and
two ensembles of them: the mean of their overall scores, and the global objective over their combined criteria.
Per judge: accuracy (score >= 0.5 means acceptable), ROC AUC, Spearman correlation with the labels, time per item,
and the mean score by kind of response.

    python -m bench judge_benchmark              # all 500 items (about 7 minutes on 2 cores)
    python -m bench judge_benchmark --tasks 20 --no-record   # the first 20 queries only
"""

import os

from benchutil import versions
from runner import make_table

JUDGES = ("exec", "static", "embedding", "llm", "ensemble (mean)", "ensemble (objective)")  # the tables' order
FIGURES = {f"{j}/roc_auc": "higher" for j in JUDGES}


def options(p):
    p.add_argument("--tasks", type=int, default=100, help="queries to use (5 items each)")


def run(quick: bool = False, tasks: int = 100) -> dict:
    from workbench.judge.benchmark import build_benchmark, run_benchmark
    from workbench.judge.objective import Objective
    from workbench.judge.responses import EmbeddingJudge, EnsembleJudge, ExecutionJudge, LLMJudge, StaticJudge
    from workbench.judge.sandbox import Limits, namespaces_available

    tasks = 4 if quick else tasks
    items = build_benchmark()[: 5 * tasks]
    judges = {
        "exec": ExecutionJudge(Limits(cpu_s=5, wall_s=10)),
        "static": StaticJudge(),
        "embedding": EmbeddingJudge(),
    }
    if os.environ.get("WORKBENCH_LLM_BASE_URL"):
        judges["llm"] = LLMJudge()
    members = dict(judges)
    judges["ensemble (mean)"] = EnsembleJudge(members)
    judges["ensemble (objective)"] = EnsembleJudge(members, objective=Objective())
    print(f"{len(items)} items; sandbox namespaces: {namespaces_available()}; LLM judge: {'llm' in judges}", flush=True)
    # The ensembles run their members again; each judge is timed on its own run.
    report = run_benchmark(judges, items, progress=lambda m: print("  " + m, flush=True))
    figures, raw = {}, {}
    for name, r in report.items():
        for k in ("accuracy", "roc_auc", "spearman", "ms_per_item"):
            figures[f"{name}/{k}"] = round(r[k], 4)
        raw[name] = {k: v for k, v in r.items() if k != "scores"}
    best_single = max(v["roc_auc"] for k, v in report.items() if not k.startswith("ensemble"))
    figures["objective_over_best_single_auc"] = round(report["ensemble (objective)"]["roc_auc"] - best_single, 4)
    settings = {"tasks": tasks, "items": len(items), "limits": [5, 10], "llm": "llm" in judges}
    return {"settings": settings, "figures": figures, "raw": raw,
            "versions": versions("torch", "sentence-transformers")}  # fmt: skip


def table(records: list) -> str:
    "A row a judge of each full run: accuracy, ROC AUC, Spearman, ms per item, mean score by kind of response."
    from workbench.judge.benchmark import KINDS

    def cells(rec):
        f, by = rec["figures"], lambda j: " / ".join(f"{rec['raw'][j]['mean_by_kind'][k]:.2f}" for k in KINDS)
        return [[j, *(f"{f[f'{j}/{k}']:.3f}" for k in ("accuracy", "roc_auc", "spearman")), f"{f[f'{j}/ms_per_item']:.1f}",
                 by(j)] for j in JUDGES if j in rec["raw"]]  # fmt: skip

    return make_table(["judge", "accuracy (score >= 0.5)", "ROC AUC", "Spearman", "ms per item",
                       "mean score: correct / wrong / slow / unsafe / irrelevant"], records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench judge_benchmark`)
    import sys

    from runner import main

    sys.exit(main(["judge_benchmark", *sys.argv[1:]]))
