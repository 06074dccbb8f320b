"""The default agent solves CartPole-v1 (`make demo`'s command): the greedy mean return of each run's `best.pt` over 100
episodes, on three seeds, with the C kernels built for this CPU and for a portable baseline (x86-64-v3, the code
another CPU's build would run). Each run stops at its first perfect evaluation (`--stop-at 500`): the same trajectory
as the full 150K-step run up to there (the learning rate anneals over the full budget either way), in a third of the
time (about 4 CPU s a run against 12).

A run's trajectory depends on its arithmetic: the same commit read 500.0 on one CPU and 474.6 on another for seed 1
(issue 55). So the claim is the median of three seeds at 475 or more, with room under it for one seed's bad luck on
some CPU (each at least 400); `bench/defaults_check.py` measures five seeds, three builds and Pendulum-v1 too."""

import os
import platform
import statistics

import pytest

from conftest import last_json, workbench, workbench_main

pytestmark = pytest.mark.slow
BUILDS = {"native": {}, "x86-64-v3": {"WORKBENCH_KERNEL_ARCH": "x86-64-v3"}}


def solve(seed, runs_dir, env) -> dict:
    r = workbench("train", "--env", "gym:CartPole-v1", "--seed", seed, "--runs-dir", runs_dir, "--quiet", "--json",
                  "--stop-at", 500, timeout=900, env=env)  # fmt: skip
    assert r.returncode == 0, r.stderr
    s = last_json(r.stdout)
    assert s["learner"] == "c" and s["cpu"], s  # the kernels trained it, and the run says on what
    e = workbench_main("eval", s["best_checkpoint"], "--episodes", 100, "--json", env=env)  # `make demo`'s evaluation
    assert e.returncode == 0, e.stderr
    result = last_json(e.stdout)
    assert result["episodes"] == 100
    return {**s, "greedy_100": result["mean_return"]}


@pytest.mark.parametrize("build", list(BUILDS))
def test_default_hyperparameters_solve_cartpole(runs_dir, build):
    if build != "native" and platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("x86-64-v3 is an x86 baseline")
    env = dict(os.environ, **BUILDS[build])
    runs = [solve(seed, runs_dir / str(seed), env) for seed in (1, 2, 3)]
    want = "-march=native" if build == "native" else "-march=x86-64-v3"
    assert all(want in r["kernel_flags"].split() for r in runs), [r["kernel_flags"] for r in runs]
    scores = [r["greedy_100"] for r in runs]
    assert statistics.median(scores) >= 475 and min(scores) >= 400, scores
