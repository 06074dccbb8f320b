"""Real programs as training tasks (`code?source=codeio`): a slice of CodeI/O's 3,002 programs built as the full build
is (screened, run only in the sandbox, judged), its references passing every hidden test under the execution judge,
the same build twice, and GRPO and eval on it from the shell."""

import gzip
import json
import sys

from pathlib import Path

from conftest import last_json, workbench_main
from workbench.runs.store import RunStore
from workbench.judge.responses import ExecutionJudge
from workbench.judge.sandbox import Limits
from workbench.tasks.code import load_tasks
from workbench.tasks.codeio import build_codeio, read_programs, split_of, stats_path

SLICE = 60


def stats_of(path):
    return json.loads(stats_path(path).read_text())


def test_a_slice_builds_the_same_twice_and_its_references_pass_their_tests(tmp_path):
    path = build_codeio(programs=SLICE, cache=tmp_path / "a", show=False)
    stats = stats_of(path)
    rows = {r["id"]: r for r in read_programs(programs=SLICE)}
    # every program is kept or dropped with a reason; the counts add up
    assert stats["programs"] == SLICE and stats["kept"] + len(stats["dropped_ids"]) == SLICE
    assert sum(stats["dropped"].values()) == len(stats["dropped_ids"]) and all(stats["dropped_ids"].values())
    assert any(why.startswith("imports numpy") for why in stats["dropped_ids"].values())  # (the sandbox has no numpy)
    tasks = load_tasks(path)
    assert len(tasks) == stats["kept"] >= SLICE // 3
    assert all(t.meta["split"] == split_of(t.id) and t.entry == "main_solution" and len(t.tests) >= 3 for t in tasks)
    assert all(t.reference == rows[t.id]["code_sample"] for t in tasks)
    # the references pass all their hidden tests, judged apart from the build (one sandbox each)
    judge = ExecutionJudge(Limits(cpu_s=5, wall_s=20))
    scores = judge.score_batch([(t.prompt, t.program(t.reference), {"tests": t.tests}) for t in tasks])
    assert [(t.id, s.overall) for t, s in zip(tasks, scores)] == [(t.id, 1.0) for t in tasks]
    # a wrong answer fails them, naming the call
    wrong = judge.score(tasks[0].prompt, tasks[0].prompt + "    return None\n", {"tests": tasks[0].tests})
    assert wrong.overall == 0.0 and "main_solution(" in wrong.explanation and "returned None" in wrong.explanation
    # built again elsewhere: the same bytes
    again = build_codeio(programs=SLICE, cache=tmp_path / "b", show=False)
    assert gzip.decompress(again.read_bytes()) == gzip.decompress(path.read_bytes())
    # the same programs dropped (a reason may differ: which check saw a nondeterministic program first)
    assert stats_of(again)["dropped_ids"].keys() == stats["dropped_ids"].keys()


def test_grpo_trains_on_the_band_and_eval_scores_on_codeio_from_the_shell(tmp_path):
    """GRPO on CodeI/O (with the pass-rate band, its starting rates from an eval of the train split), and eval's
    per-task rows of the validation split."""
    task = "code?source=codeio&programs=40"
    small = ["--hidden", 32, "--layers", 1, "--heads", 2, "--ffn", 64, "--vocab", 300, "--corpus-tasks", 40]
    grpo = ["--algo", "grpo", "--task", task, "--updates", 2, "--batch-size", 2, "--group-size", 2, "--max-new-tokens", 16,
            "--eval-every", 2, "--eval-tasks", 3, "--device", "cpu", *small, "--runs-dir", tmp_path, "--quiet",
            "--json"]  # fmt: skip
    r = workbench_main("train", *grpo, "--band")
    assert r.returncode == 0, r.stderr
    summary = last_json(r.stdout)
    assert summary["status"] == "finished" and summary["global_step"] == 2
    store = RunStore(tmp_path)
    run_id = Path(summary["run_dir"]).name
    assert [row["value"] for row in store.metrics(run_id, "band/estimated")][
        -1
    ] == 4  # 2 steps x 2 tasks, each estimated
    assert len(store.metrics(run_id, "charts/spread_groups")) == 2
    store.close()

    out = tmp_path / "val.jsonl"
    r = workbench_main("eval", summary["run_dir"], "--task", task, "--split", "val", "--out", out, "--json")
    assert r.returncode == 0, r.stderr
    result = last_json(r.stdout)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert result["split"] == "val" and result["codeio"]["tasks"] == len(rows) > 0
    assert all(split_of(row["task"]) == "val" and row["level"] == "codeio" for row in rows)

    rates = tmp_path / "rates.jsonl"  # the starting rates of the band: k samples of the train split's tasks
    r = workbench_main("eval", summary["run_dir"], "--task", task, "--split", "train", "--samples", 2, "--episodes", 6,
                       "--temperature", 1.0, "--out", rates, "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert len(rates.read_text().splitlines()) == 12
    r = workbench_main("train", *grpo, "--band", "--band-rates", rates, "--init", summary["run_dir"])
    assert r.returncode == 0, r.stderr
    assert last_json(r.stdout)["status"] == "finished"


def test_the_held_out_report_pairs_each_task_before_and_after(tmp_path):
    """`python -m bench codeio_heldout --report`: before and after matched task by task, per seed and over both seeds,
    with the exact sign test on the tasks that changed (the held-out run itself takes hours: RESULTS 21)."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
    import codeio_heldout as mod

    def write(path, passes):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "".join(json.dumps({"task": f"t{i}", "sample": 0, "passed": p}) + "\n" for i, p in enumerate(passes))
        )

    write(tmp_path / "before" / "val.jsonl", [False] * 8 + [True, True])
    write(tmp_path / "seed0" / "val.jsonl", [True] * 6 + [False] * 2 + [True, False])  # 6 gained, 1 lost
    write(tmp_path / "seed1" / "val.jsonl", [False] * 8 + [True, True])  # no change
    table = mod.report(tmp_path, [0, 1]).splitlines()
    assert table[2:] == [
        "| val | 0 | 2/10 | 7/10 | 6 / 1 | 0.125 |",
        "| val | 1 | 2/10 | 2/10 | 0 / 0 | 1 |",
        "| val | all | 4/20 | 9/20 | 6 / 1 | 0.125 |",
    ], table
