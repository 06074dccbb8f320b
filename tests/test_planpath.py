"""Plan-Path end to end: PPO trains a planner-executor team through `workbench train`, and `workbench eval` on the
held-out test grids reports the env's own statistics (success, the team's return, each role's local return)."""

import json

from conftest import workbench


def test_train_and_eval_a_team_on_test_grids(tmp_path):
    runs = tmp_path / "runs"
    # 4 updates: the claims are about what eval reports and on which grids, not how well the team learned
    r = workbench("train", "--env", "planpath?alpha=0.5", "--num-envs", "64", "--total-steps", "8192",
                  "--runs-dir", runs, "--quiet", "--json", timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    run = json.loads(r.stdout.strip().splitlines()[-1])["run_dir"]
    r = workbench("eval", run, "--split", "test", "--episodes", "20", "--json", timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["env"] == "planpath?alpha=0.5&split=test", result["env"]  # the run's own options, on the test grids
    for mode in (result, result["stochastic"]):
        stats = mode["env_stats"]
        assert 0 <= stats["success"] <= 1 and {"global_return", "planner_local", "executor_local"} <= set(stats), stats


def _tensors_equal(a, b) -> bool:
    "Two nested state dicts hold the same keys and the same values (tensors equal exactly)."
    import torch

    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_tensors_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_tensors_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    return a == b


def test_per_role_checkpoints_resume_exactly_and_roles_swap(tmp_path):
    """A per-role run saves each role's network and Adam state under its role; a trainer resumed from a checkpoint
    holds exactly what was saved, two resumes train on identically, `workbench train --resume` goes on, and
    `workbench eval --swap-roles` plays each role with the other's network."""
    from workbench.train.checkpoint import load_checkpoint
    from workbench.train.config import TrainConfig
    from workbench.train.ppo import PPOTrainer

    runs = tmp_path / "runs"
    r = workbench("train", "--env", "planpath?size=6&walls=0.15&alpha=0.5", "--policy-map", "per_role", "--num-envs", "32",
                  "--total-steps", "4096", "--checkpoint-every", "1", "--keep-last", "10", "--runs-dir", runs, "--quiet",
                  "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    run = json.loads(r.stdout.strip().splitlines()[-1])["run_dir"]
    steps = sorted((tmp_path / run).glob("checkpoints/step_*.pt"))
    assert len(steps) == 4, steps
    saved = load_checkpoint(steps[1])
    assert {k.split(".")[1] for k in saved["model"]} == {"planner", "executor"}
    assert [g["name"] for g in saved["optimizer"]["param_groups"]] == ["planner", "executor"]

    cfg = TrainConfig.from_stored(saved["config"])
    trained = []
    for _ in range(2):  # one after the other: a trainer restores the process's RNG from the checkpoint
        t = PPOTrainer(cfg, resume=load_checkpoint(steps[1]))
        now = t.state_dict()
        for key in ("model", "optimizer", "scheduler", "counters", "rng"):
            assert _tensors_equal(now[key], saved[key]), key
        t.collect_rollout()
        t.compute_advantages()
        t.update()
        trained.append(t.policy.state_dict())
        t.vecenv.close()
    assert _tensors_equal(*trained) and not _tensors_equal(trained[0], saved["model"])

    r = workbench("train", "--resume", steps[1], "--total-steps", "6144", "--quiet", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1])["global_step"] == 6144

    plain, swapped = (
        json.loads(
            workbench("eval", run, "--split", "val", "--episodes", "20", "--json", *extra).stdout.splitlines()[-1]
        )
        for extra in ((), ("--swap-roles",))
    )
    assert plain["route"] == {"planner": "planner", "executor": "executor"}
    assert swapped["route"] == {"planner": "executor", "executor": "planner"}
    assert {"success", "path_ratio"} & set(swapped["env_stats"])


def test_multi_agent_notebook_as_a_job(tmp_path):
    "nbs/experiments/multi_agent.ipynb at smoke size: a per-role team trained, scored on test grids, roles swapped."
    from conftest import ROOT

    nb = ROOT / "nbs" / "experiments" / "multi_agent.ipynb"
    r = workbench("run", nb, "-p", "policy_map", "per_role", "-p", "total_timesteps", "4096", "-p", "num_envs", "32",
                  "-p", "test_grids", "8", "-p", "runs_dir", tmp_path / "runs", "--out", tmp_path / "reports", "--json",
                  timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    job = json.loads(r.stdout.strip().splitlines()[-1])
    result = job["result"]
    assert job["status"] == "finished" and result["policy_map"] == "per_role" and result["global_step"] >= 4096
    for mode in ("greedy", "sampled", "swapped_greedy", "swapped_sampled"):
        assert 0 <= result[f"{mode}_success"] <= 1, result
    assert (tmp_path / "reports" / job["id"] / "index.html").exists()
