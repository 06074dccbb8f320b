"""The execution judge's throughput from two source trees (say, before and after a change to the harness), alternating.

    git worktree add /tmp/before <commit>
    python bench/judge_ab.py --old /tmp/before --new . --rounds 3

The work: the right answers (each task's reference) of 64 generated medium tasks (6 split tests each) and of the
first 64 HumanEval problems (one `check(candidate)` each), scored as GRPO scores a step (`score_batch`, the judge's
default batch and parallel). Each round runs each tree in a fresh subprocess with PYTHONPATH set to it. Prints every
run (seconds, responses that passed) and the ratio of the medians, old over new (above 1: the new tree is faster).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

WORK = """
import json, time
from workbench.tasks.code import held_out, humaneval_tasks
from workbench.judge.responses import ExecutionJudge
try: from workbench.judge.batch import BatchExecutionJudge as Judge   # the batching judge, where it is another class
except ImportError: Judge = ExecutionJudge
sets = {"gen": held_out("medium", n=64), "humaneval": humaneval_tasks()[:64]}
judge, out = Judge(), {}
judge.score_batch([(t.prompt, t.program(t.reference), {"tests": t.tests}) for t in sets["gen"][:2]])   # warm up
for name, tasks in sets.items():
    items = [(t.prompt, t.program(t.reference), {"tests": t.tests, "prompt": t.prompt, "entry": t.entry}) for t in tasks]
    t0 = time.perf_counter(); scores = judge.score_batch(items)
    out[name] = [time.perf_counter() - t0, sum(s.overall == 1.0 for s in scores)]
print(json.dumps(out))
"""


def run(tree: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(tree)}
    done = subprocess.run([sys.executable, "-c", WORK], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", required=True, help="the source tree before")
    p.add_argument("--new", default=".", help="the source tree after (default: this one)")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    times = {"old": {}, "new": {}}
    for r in range(args.rounds):
        for which, tree in (("old", args.old), ("new", args.new)):
            got = run(tree)
            for name, (seconds, passed) in got.items():
                times[which].setdefault(name, []).append(seconds)
                print(f"round {r + 1} {which:3} {name:9} {seconds:6.2f} s  {passed}/64 passed", flush=True)
    for name in times["new"]:
        old, new = statistics.median(times["old"][name]), statistics.median(times["new"][name])
        print(f"{name:9} median old {old:.2f} s, new {new:.2f} s: old/new {old / new:.2f}")


if __name__ == "__main__":
    main()
