"""How well each judge agrees with the labels of the shipped benchmark (100 queries x 5 candidate responses).

Runs `workbench.judge_bench.run_benchmark` with the execution judge (sandboxed, 2 at a time), the static judge,
the transformer judge (bundled MiniLM, offline), the LLM judge when WORKBENCH_LLM_BASE_URL points at a server, and
two ensembles of them: the mean of their overall scores, and the global objective over their combined criteria.
Prints, per judge: accuracy (score >= 0.5 means acceptable), ROC AUC, Spearman correlation with the labels,
time per item, and the mean score by kind of response.

    python bench/judge_benchmark.py              # all 500 items (about 7 minutes on 2 cores)
    python bench/judge_benchmark.py --tasks 20   # the first 20 queries only
"""

import argparse, json, os

from benchutil import versions


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100, help="queries to use (5 items each)")
    args = ap.parse_args()
    from workbench.judge.benchmark import build_benchmark, run_benchmark, KINDS
    from workbench.judge.objective import Objective
    from workbench.judge.responses import EmbeddingJudge, EnsembleJudge, ExecutionJudge, LLMJudge, StaticJudge
    from workbench.judge.sandbox import Limits, namespaces_available

    items = build_benchmark()[: 5 * args.tasks]
    limits = Limits(cpu_s=5, wall_s=10)
    judges = {"exec": ExecutionJudge(limits), "static": StaticJudge(), "embedding": EmbeddingJudge()}
    if os.environ.get("WORKBENCH_LLM_BASE_URL"):
        judges["llm"] = LLMJudge()
    members = dict(judges)
    judges["ensemble (mean)"] = EnsembleJudge(members)
    judges["ensemble (objective)"] = EnsembleJudge(members, objective=Objective())
    print(
        f"{len(items)} items ({len(items) // 5} queries); sandbox namespaces: {namespaces_available()}; "
        f"LLM judge: {'on' if 'llm' in judges else 'off (no WORKBENCH_LLM_BASE_URL)'}",
        flush=True,
    )
    # The ensembles re-run their members; to keep the time per item honest, each judge is timed on its own run.
    report = run_benchmark(judges, items, progress=lambda m: print("  " + m, flush=True))
    print(
        f"\n{'judge':22} {'accuracy':>8} {'ROC AUC':>8} {'Spearman':>8} {'ms/item':>8}   mean score by kind ({', '.join(KINDS)})"
    )
    for name, r in report.items():
        kinds = " ".join(f"{r['mean_by_kind'][k]:.2f}" for k in KINDS)
        print(
            f"{name:22} {r['accuracy']:>8.3f} {r['roc_auc']:>8.3f} {r['spearman']:>8.3f} {r['ms_per_item']:>8.1f}   {kinds}"
            + (f"   ({len(r['failed'])} failed)" if r["failed"] else "")
        )
    best_single = max(v["roc_auc"] for k, v in report.items() if not k.startswith("ensemble"))
    ens = report["ensemble (objective)"]["roc_auc"]
    print(
        f"\nensemble (objective) AUC {ens:.3f} vs best single judge {best_single:.3f}: "
        f"{'beats every single judge' if ens > best_single else 'does NOT beat every single judge'}"
    )
    print(
        json.dumps(
            {
                "report": {k: {kk: vv for kk, vv in v.items() if kk != "scores"} for k, v in report.items()},
                "items": len(items),
                "versions": versions("torch", "sentence-transformers"),
            }
        )
    )


if __name__ == "__main__":
    main()
