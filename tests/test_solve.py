"The default agent solves CartPole-v1: evaluation mean return >= 475 over 100 episodes."

import pytest

from conftest import workbench, last_json

pytestmark = pytest.mark.slow


def test_default_hyperparameters_solve_cartpole(runs_dir):
    r = workbench("train", "--env", "gym:CartPole-v1", "--runs-dir", runs_dir, "--quiet", "--json", timeout=900)
    assert r.returncode == 0, r.stderr
    s = last_json(r.stdout)
    e = workbench("eval", s["best_checkpoint"], "--episodes", 100, "--json")
    assert e.returncode == 0, e.stderr
    result = last_json(e.stdout)
    assert result["episodes"] == 100
    assert result["mean_return"] >= 475, result
