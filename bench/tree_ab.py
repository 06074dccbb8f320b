"""The same work from two source trees (say, before and after a change), alternating: which tree is faster.

    git worktree add /tmp/before <commit>
    python -m bench tree_ab --old /tmp/before                          # PPO steps/s, torch on 1 thread, 4 rounds
    python -m bench tree_ab --old /tmp/before --threads 2 --policy lstm --rounds 6
    python -m bench tree_ab --old /tmp/before --work judge --rounds 3  # the execution judge's seconds
    python -m bench tree_ab --quick                                    # a smoke test: this tree against itself

Each run is a fresh process with PYTHONPATH set to its tree; the trees take turns going first from one round to the
next, so that a drift of the machine hits both. The works:

* `trainer`: our PPO trainer's steps/s on `sps_puffer_cartpole`'s work (256 agents of `puffer:cartpole`, 64 steps,
  minibatches of 4,096, 1 epoch);
* `judge`: the seconds to score the right answers (each task's reference) of 64 generated medium tasks (6 split tests
  each) and of the first 64 HumanEval problems (one `check(candidate)` each), as GRPO scores a step (`score_batch`,
  the judge's default batch and parallel), and how many passed (all of them, in a sound harness).

The figures: each tree's median and new / old (above 1: the new tree is faster) with a bootstrap 95% interval.
"""

import json, os, statistics, subprocess, sys, tempfile
from pathlib import Path

from runner import bootstrap_ratio, commit, fail, interval, make_table

CONFIG = {
    "env": "puffer:cartpole", "num_envs": 256, "num_steps": 64, "num_minibatches": 4, "update_epochs": 1,
    "learning_rate": 1e-3, "gamma": 0.99, "gae_lambda": 0.95, "hidden_size": 128, "num_layers": 1,
    "eval_every": 0, "checkpoint_every": 0, "device": "cpu",
}  # fmt: skip
TRAINER = (  # the trainer moved in issue 15: the new place, then the old one
    "import json, sys\ntry:\n    from workbench.train.ppo import PPOTrainer\n    from workbench.train.config import TrainConfig\n"
    "except ImportError:\n    from workbench.trainer import PPOTrainer, TrainConfig\n"
    "print(json.dumps({'sps': PPOTrainer(TrainConfig.from_dict(json.loads(sys.argv[1]))).fit()['sps']}))"
)
JUDGE = """
import json, sys, time
from workbench.tasks.code import held_out, humaneval_tasks
from workbench.judge.responses import ExecutionJudge
try: from workbench.judge.batch import BatchExecutionJudge as Judge   # the batching judge, where it is another class
except ImportError: Judge = ExecutionJudge
n = json.loads(sys.argv[1])["tasks"]
sets = {"gen": held_out("medium", n=n), "humaneval": humaneval_tasks()[:n]}
judge, out = Judge(), {}
judge.score_batch([(t.prompt, t.program(t.reference), {"tests": t.tests}) for t in sets["gen"][:2]])   # warm up
for name, tasks in sets.items():
    items = [(t.prompt, t.program(t.reference), {"tests": t.tests, "prompt": t.prompt, "entry": t.entry}) for t in tasks]
    t0 = time.perf_counter(); scores = judge.score_batch(items)
    out[name + "_s"], out[name + "_passed"] = time.perf_counter() - t0, sum(s.overall == 1.0 for s in scores)
print(json.dumps(out))
"""
MEASURES = {"trainer": {"sps": "higher"}, "judge": {"gen_s": "lower", "humaneval_s": "lower"}}
FIGURES = {f"{k}_{t}": d for m in MEASURES.values() for k, d in m.items() for t in ("old", "new")} | {
    f"{k}_new_over_old": "higher" for m in MEASURES.values() for k in m
}


def options(p):
    p.add_argument("--old", help="the source tree before (a git worktree of the old commit); required but with --quick")
    p.add_argument("--new", default=".", help="the source tree after (default: this one)")
    p.add_argument("--work", choices=list(MEASURES), default="trainer")
    p.add_argument("--rounds", type=int, default=4, help="runs of each tree, alternating which goes first")
    p.add_argument("--threads", type=int, default=1, help="trainer: torch threads")
    p.add_argument("--steps", type=int, default=1_000_000, help="trainer: env steps a run")
    p.add_argument("--policy", default="mlp", choices=["mlp", "lstm", "transformer"], help="trainer: the policy")
    p.add_argument("--tasks", type=int, default=64, help="judge: tasks of each set")


def one(tree: Path, work: str, spec: dict) -> dict:
    "One run of `work` from `tree`, in a fresh process: its figures, or {'error': its last line}."
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore"}
    code = TRAINER if work == "trainer" else JUDGE
    p = subprocess.run(
        [sys.executable, "-c", code, json.dumps(spec)], cwd=tree, env=env, capture_output=True, text=True
    )
    lines = [x for x in p.stdout.splitlines() if x.startswith("{")]
    if p.returncode or not lines:
        return {"error": (p.stderr.strip().splitlines() or [f"exit code {p.returncode}"])[-1][:300]}
    return json.loads(lines[-1])


def run(quick=False, old=None, new=".", work="trainer", rounds=4, threads=1, steps=1_000_000, policy="mlp", tasks=64,
        quiet=lambda: 0.0) -> dict:  # fmt: skip
    if quick:  # this tree against itself, a short trainer run each
        old, work, rounds, steps = old or new, "trainer", 2, 16_384
    if not old:
        fail("tree_ab: --old names the source tree before (git worktree add /tmp/before <commit>)")
    trees = {"old": Path(old).resolve(), "new": Path(new).resolve()}
    for which, tree in trees.items():
        if not (tree / "workbench" / "__init__.py").is_file():
            fail(f"tree_ab: --{which} {tree} has no workbench package")
    got = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="tree-ab-") as runs_dir:
        spec = ({**CONFIG, "policy": policy, "torch_threads": threads, "total_timesteps": steps, "runs_dir": runs_dir}
                if work == "trainer" else {"tasks": tasks})  # fmt: skip
        for r in range(rounds):
            for which in ("old", "new") if r % 2 == 0 else ("new", "old"):
                quiet()
                got[which].append(out := one(trees[which], work, spec))
                print(f"  round {r + 1} {which}: " + ", ".join(f"{k} {v:,.2f}" if isinstance(v, float) else f"{k} {v}"
                                                              for k, v in out.items()), flush=True)  # fmt: skip
    figures, ci = {}, {}
    for k, better in MEASURES[work].items():
        xs = {w: [o[k] for o in got[w] if k in o] for w in got}
        if xs["old"] and xs["new"]:
            figures |= {f"{k}_{w}": round(statistics.median(v), 3) for w, v in xs.items()}
            a, b = (xs["new"], xs["old"]) if better == "higher" else (xs["old"], xs["new"])  # (above 1: new faster)
            figures[f"{k}_new_over_old"] = round(statistics.median(a) / statistics.median(b), 3)
            if rounds > 1:
                ci[f"{k}_new_over_old"] = bootstrap_ratio(a, b, stat=statistics.median)
    trees_at = {w: commit(t) for w, t in trees.items()}
    settings = {"work": work, "rounds": rounds, **({"threads": threads, "steps": steps, "policy": policy}
                if work == "trainer" else {"tasks": tasks}), "trees": trees_at}  # fmt: skip
    return {"settings": settings, "figures": figures, "ci95": ci, "raw": got}


def table(records: list) -> str:
    "A row a measure of each full run: the two trees' commits, each one's median, new / old with its 95% interval."

    def cells(rec):
        f, s = rec["figures"], rec["settings"]
        what = f"{s['work']}" + (f", {s['policy']}, {s['threads']} thread(s)" if s["work"] == "trainer" else "")
        return [[f"{what}: {k}", f"{s['trees']['old']} / {s['trees']['new']}", str(s["rounds"]), f"{f[k + '_old']:,.2f}",
                 f"{f[k + '_new']:,.2f}", f"{f[k + '_new_over_old']:.3f}{interval(rec, k + '_new_over_old', 3)}"]
                for k in MEASURES[s["work"]] if k + "_old" in f]  # fmt: skip

    return make_table(["work", "old / new commit", "rounds", "old", "new", "new / old (above 1: faster) [95% CI]"],
                      records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench tree_ab`)
    from runner import main

    sys.exit(main(["tree_ab", *sys.argv[1:]]))
