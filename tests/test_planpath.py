"""Plan-Path end to end: PPO trains a planner-executor team through `workbench train`, and `workbench eval` on the
held-out test grids reports the env's own statistics (success, the team's return, each role's local return)."""

import json

from conftest import workbench


def test_train_and_eval_a_team_on_test_grids(tmp_path):
    runs = tmp_path / "runs"
    r = workbench("train", "--env", "planpath?alpha=0.5", "--num-envs", "64", "--total-steps", "20000",
                  "--runs-dir", runs, "--quiet", "--json", timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    run = json.loads(r.stdout.strip().splitlines()[-1])["run_dir"]
    r = workbench("eval", run, "--split", "test", "--episodes", "40", "--json", timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["env"] == "planpath?alpha=0.5&split=test", result["env"]  # the run's own options, on the test grids
    for mode in (result, result["stochastic"]):
        stats = mode["env_stats"]
        assert 0 <= stats["success"] <= 1 and {"global_return", "planner_local", "executor_local"} <= set(stats), stats
