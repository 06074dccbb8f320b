"""Teams of token agents on Plan-Path through the command line: `workbench train --team` (SFT, then GRPO with a model
a role), resumed from its checkpoint, evaluated with roles swapped; bad settings refused in one line from a real
process; the experiment notebook's token cell as a job. The commands whose claim is what they do, not their process,
run in this process (`conftest.workbench_main`)."""

import json

from conftest import ROOT, last_json, workbench, workbench_main
from workbench.app.pages import sample_rows
from workbench.runs.store import RunStore

SMALL = ["--hidden", "32", "--layers", "1", "--heads", "2", "--ffn", "64", "--vocab", "300", "--corpus-tasks", "50",
         "--size", "4", "--eval-grids", "8", "--device", "cpu"]  # fmt: skip


def test_team_sft_grpo_resume_and_swap(tmp_path):
    runs = tmp_path / "runs"
    r = workbench_main("train", "--team", "--algo", "sft", "--updates", "3", "--batch-size", "4", *SMALL, "--runs-dir", runs,
            "--quiet", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    sft = last_json(r.stdout)["run_dir"]
    r = workbench_main("train", "--team", "--algo", "grpo", "--init", sft, "--policy-map", "per_role", "--grouping", "agent",
            "--rounds", "2", "--updates", "2", "--batch-size", "2", "--group-size", "2", "--checkpoint-every", "1",
            *SMALL, "--runs-dir", runs, "--quiet", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    run = last_json(r.stdout)["run_dir"]
    r = workbench_main("train", "--resume", run, "--updates", "3", "--quiet", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    assert last_json(r.stdout)["global_step"] == 3
    # Its samples, as the run page's table reads them from the store: a role and round, how the team did, the advantage.
    (grpo,) = [row for row in RunStore(runs).runs() if row["config"]["algo"] == "team-grpo"]
    table = sample_rows(RunStore(runs).events(grpo["id"], "samples"))
    assert len(table) == 12 and set(table["outcome"]) <= {"team solved", "team failed"}, table  # 4 a step, 3 steps
    assert (
        set(table["turn"]) <= {"planner 1", "executor 1", "planner 2", "executor 2"}
        and table["advantage"].notna().all()
    )
    plain, swapped = (last_json(workbench_main("eval", run, "--episodes", "4", "--json", *extra).stdout)
                      for extra in ((), ("--swap-roles",)))  # fmt: skip
    assert not plain["swapped"] and swapped["swapped"] and plain["policy_map"] == "per_role"
    for mode in ("greedy", "sampled"):
        assert 0 <= swapped[mode]["success"] <= 1 and swapped[mode]["tasks"] == 4
    r = workbench_main("eval", sft, "--swap-roles", "--episodes", "4")
    assert r.returncode == 2 and "--swap-roles needs a model per role" in r.stderr


def test_code_team_sft_grpo_and_swap(tmp_path):
    "A tester and a coder on generated tasks: SFT, tree-sampled GRPO with a model a role (the sandbox runs both), roles swapped."
    grid = SMALL.index("--size")  # a grid side is no setting of code tasks
    runs, code = tmp_path / "runs", ["--task", "code", "--max-new-tokens", "48", *SMALL[:grid], *SMALL[grid + 2 :]]
    r = workbench_main("train", "--team", "--algo", "sft", "--updates", "2", "--batch-size", "2", *code, "--runs-dir", runs,
            "--quiet", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    sft = last_json(r.stdout)["run_dir"]
    r = workbench_main("train", "--team", "--algo", "grpo", "--init", sft, "--policy-map", "per_role", "--updates", "1",
            "--sampling", "tree", "--batch-size", "2", "--group-size", "2", *code, "--runs-dir", runs, "--quiet",
            "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    run = last_json(r.stdout)["run_dir"]
    r = workbench_main("eval", run, "--episodes", "4", "--swap-roles")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "over 4 test medium tasks" in r.stdout and "shortest path" not in r.stdout, r.stdout
    rows = RunStore(runs).runs()
    assert [row["config"]["team"]["roles"] for row in rows] == ["tester,coder"] * 2, rows


def test_a_bad_team_setting_is_one_line_from_the_command(tmp_path):
    "From a real process (the many cases run in-process in test_bad_input.py): one line, exit 2, nothing written."
    r = workbench("train", "--team", "--roles", "coder,tester", "--runs-dir", tmp_path / "runs")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "a team is planner,executor or solo" in lines[0], r.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_token_team_notebook_as_a_job(tmp_path):
    "nbs/experiments/multi_agent.ipynb with agents=token at smoke size: SFT, GRPO with a model a role, roles swapped."
    nb = ROOT / "nbs" / "experiments" / "multi_agent.ipynb"
    params = {"agents": "token", "policy_map": "per_role", "rounds": 2, "grouping": "turn", "sft_updates": 1, "grpo_updates": 1,
              "tasks_per_step": 2, "group_size": 2, "test_grids": 4, "runs_dir": tmp_path / "runs"}  # fmt: skip
    args = [a for k, v in params.items() for a in ("-p", k, str(v))]
    r = workbench_main("run", nb, *args, "--out", tmp_path / "reports", "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    job = json.loads(r.stdout.strip().splitlines()[-1])
    result = job["result"]
    assert job["status"] == "finished" and result["agents"] == "token" and result["global_step"] == 1, result
    for mode in ("greedy", "sampled", "swapped_greedy", "swapped_sampled"):
        assert 0 <= result[f"{mode}_success"] <= 1, result
    code = {**params, "task": "code", "rounds": 1, "grouping": "both", "sampling": "tree", "test_grids": 2}
    args = [a for k, v in code.items() for a in ("-p", k, str(v))]
    r = workbench_main("run", nb, *args, "--out", tmp_path / "reports", "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])["result"]
    assert result["env"].startswith("code?level=medium&roles=tester,coder") and result["greedy_path_ratio"] is None, (
        result
    )
    assert 0 <= result["swapped_greedy_success"] <= 1, result
