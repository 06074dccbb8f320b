"""The benchmarks' runner (`python -m bench`, `bench/runner.py`): RESULTS.md's generated tables and bench/README.md
are what the committed records and the registry give; a benchmark runs through it, recorded with its machine and
commit; `--compare last` flags a run slowed on purpose; bad input is one line and exit 2."""

import json, os, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import runner  # noqa: E402


def bench(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "bench", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})  # fmt: skip


def test_results_tables_and_readme_are_generated_from_the_records():
    for what in ("tables", "readme"):
        r = bench(what, "--check")
        assert r.returncode == 0, r.stdout + r.stderr
    for name in runner.BENCHMARKS:
        for rec in runner.records(name):  # every record names its machine, commit, settings and figures
            assert (
                rec["machine"]["kind"]
                and rec["commit"]
                and rec["settings_hash"] == runner.settings_hash(rec["settings"])
            )
            assert rec["figures"] and (rec.get("carried_over") or rec.get("raw")), rec


def test_a_slowed_run_is_flagged_against_the_last_record(tmp_path):
    "A quick run recorded, then the same with its timed loop slowed on purpose: --compare last flags it, exit 1."
    first = bench("planpath_sps", "--quick", "--record", "--max-wait", 0, "--records", tmp_path)
    assert first.returncode == 0, first.stderr
    (rec,) = runner.records("planpath_sps", tmp_path)
    assert rec["quick"] and rec["machine"]["cores"] and len(rec["raw"]["64"]["ours"]) == 2
    same = dict(rec, quick=False)  # (the reference must be a full run: rewrite the one quick record as one)
    (tmp_path / "planpath_sps.jsonl").write_text(json.dumps(same) + "\n")
    slow = bench("planpath_sps", "--quick", "--compare", "last", "--max-wait", 0, "--records", tmp_path,
                 env={"BENCH_INJECT_SLEEP": "0.05"})  # fmt: skip
    assert slow.returncode == 1, slow.stdout + slow.stderr
    assert "ours_64" in slow.stdout and "REGRESSION" in slow.stdout, slow.stdout


def test_help_names_the_runners_options_and_the_benchmarks_own():
    r = bench("zoo", "--help")
    assert r.returncode == 0 and "--compare" in r.stdout and "--set KEY=VALUE" in r.stdout and "--envs" in r.stdout


def test_compare_and_statistics():
    old = {"figures": {"a": 100.0, "b": 10.0}}
    new = {"figures": {"a": 96.0, "b": 10.2}}
    got = {k: worse for k, *_, worse in runner.compare(new, old, {"a": "higher", "b": "lower"})}
    assert got == {"a": True, "b": False}  # 4% fewer of a higher-is-better figure; 2% more of a lower-is-better one
    assert runner.steady_rate([0.0, 1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx(1.0)
    assert runner.steady_rate([0.0, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5]) == pytest.approx(2.0)  # the slow first step dropped
    lo, hi = runner.bootstrap_ratio([2.0, 2.1, 1.9, 2.0], [1.0, 1.05, 0.95, 1.0])
    assert lo < 2.0 < hi and hi - lo < 0.4


@pytest.mark.parametrize("args, says", [(["nope"], "no benchmark 'nope'"), ([], "name a benchmark"),
                                        (["planpath_sps", "--compare", "nowhere.json"], "--compare takes last"),
                                        (["planpath_sps", "--seeds", "1"], "unrecognized arguments: --seeds")])  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, says):
    r = bench(*args, "--records", tmp_path)
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not list(tmp_path.iterdir())


QUICK_ARGS = {"solve_cartpole": ["--trainers", "workbench", "sb3"]}  # (PuffeRL's side: `-m bench solve_cartpole`)
SANDBOXED = (
    "grpo_throughput",
    "grpo_offpolicy",
    "judge_benchmark",
    "judge_overlap",
    "real_model",
    "humaneval_harness",
)  # they start sandboxes: beside test_judges' checks


def quick_record(name: str, tmp_path) -> dict:
    """`--quick` of benchmark `name` through the runner, recorded into `tmp_path`: its record, checked to name its
    machine, commit and settings, and taken by the benchmark's RESULTS table."""
    r = bench(name, "--quick", "--record", "--records", tmp_path, "--out", tmp_path, "--max-wait", 0,
              *QUICK_ARGS.get(name, []), timeout=900)  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (rec,) = runner.records(name, tmp_path)
    assert rec["quick"] and rec["figures"] and rec["machine"]["kind"] and rec["commit"]
    assert rec["settings_hash"] == runner.settings_hash(rec["settings"])
    table = runner.load(name).table([dict(rec, quick=False)])
    assert rec["machine"]["kind"] in table and table.count("\n") >= 3, table
    return rec


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", [n for n in runner.BENCHMARKS if n not in ("planpath_sps", "zoo", "grpo_gpu", *SANDBOXED)]
)
def test_each_benchmark_runs_quick_through_the_runner(tmp_path, name):
    """`--quick` of each benchmark through the runner (`quick_record`). planpath_sps: the slowed run above; zoo and
    grpo_gpu: their own tests; those that start sandboxes: tests/test_judges.py and tests/test_bench_sandboxed.py,
    beside the checks that no sandbox is left. What the figures say at these sizes is not asserted."""
    quick_record(name, tmp_path)
