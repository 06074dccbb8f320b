"""The workbench command end to end: a smoke run, evaluation, listing, and bad input through the installed command (the
full table of bad input runs in-process in tests/test_bad_input.py)."""

import json
from pathlib import Path

import pytest

from conftest import TINY, last_json, workbench, workbench_main


def test_train_then_eval_smoke(runs_dir):
    r = workbench(
        "train",
        "--env",
        "gym:CartPole-v1",
        "--total-steps",
        256,
        *TINY,
        "--eval-every",
        4,
        "--eval-episodes",
        2,
        "--runs-dir",
        runs_dir,
        "--name",
        "smoke",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    s = last_json(r.stdout)
    for key in ("run_dir", "global_step", "sps", "mean_return", "best_checkpoint"):
        assert key in s
    assert s["global_step"] == 256 and s["sps"] > 0
    run_dir = Path(s["run_dir"])
    assert run_dir.parent == runs_dir and run_dir.name.startswith("smoke-")
    assert json.loads((run_dir / "config.json").read_text())["ppo"]["total_timesteps"] == 256
    assert (runs_dir / "workbench.db").exists()
    e = workbench("eval", s["best_checkpoint"], "--episodes", 5, "--json")
    assert e.returncode == 0, e.stderr
    result = last_json(e.stdout)
    assert result["episodes"] == 5 and "std_return" in result and result["stochastic"]["episodes"] == 5
    assert result["greedy"] is True and result["stochastic"]["greedy"] is False


def test_config_file_and_flag_precedence(runs_dir, tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[ppo]\nlearning_rate = 0.0007\nent_coef = 0.02\n[env]\nnum_envs = 4\n")
    r = workbench(
        "train",
        "--config",
        cfg,
        "--ent-coef",
        "0.05",
        "--total-steps",
        64,
        "--num-steps",
        16,
        "--num-minibatches",
        2,
        "--update-epochs",
        1,
        "--eval-every",
        0,
        "--quiet",
        "--device",
        "cpu",
        "--runs-dir",
        runs_dir,
        "--json",
    )
    assert r.returncode == 0, r.stderr
    saved = json.loads((Path(last_json(r.stdout)["run_dir"]) / "config.json").read_text())
    assert saved["ppo"]["learning_rate"] == 0.0007  # from the file
    assert saved["ppo"]["ent_coef"] == 0.05  # the flag wins
    assert saved["env"]["num_envs"] == 4


@pytest.mark.parametrize(
    "policy,env,extra",
    [
        ("lstm", "gym:CartPole-v1", []),
        ("transformer", "gym:CartPole-v1", []),
        ("mlp", "gym:Pendulum-v1", ["--obs-norm"]),
        ("mlp", "puffer:cartpole", []),
        ("mlp", "gym:CartPole-v1", ["--bf16"]),
        ("mlp", "gym:CartPole-v1", ["--compile"]),  # torch.compile's CPU path (inductor), ~15 s
    ],
)
def test_policies_and_envs_train(runs_dir, policy, env, extra):
    # In this process, but bf16 (accelerate's state is set once a process) and torch.compile (inductor's caches and
    # threads stay out of this one): a process each
    run = workbench if {"--compile", "--bf16"} & set(extra) else workbench_main
    r = run(
        "train", "--env", env, "--policy", policy, "--total-steps", 64, *TINY, *extra, "--runs-dir", runs_dir, "--json"
    )
    assert r.returncode == 0, r.stderr
    assert last_json(r.stdout)["global_step"] == 64


def test_envs_lists_sources():
    r = workbench_main("envs", "--json")
    assert r.returncode == 0, r.stderr
    listing = last_json(r.stdout)
    assert "puffer:cartpole" in listing["puffer"] and "gym:CartPole-v1" in listing["gym"]
    text = workbench_main("envs")
    assert "PufferLib Ocean envs" in text.stdout and "gym:Pendulum-v1" in text.stdout


# Every bad input has its row in tests/test_bad_input.py, run in-process through `main` (a process costs seconds of
# imports). These two go through the installed command, a process of its own: a bad env (refused after the config
# loads) and a flag argparse does not know, each one line on stderr, exit 2 and nothing created.
BAD_TRAIN = [
    (["--env", "gym:NoSuchEnv-v0"], "unknown env 'gym:NoSuchEnv-v0'"),
    (["--no-such-flag", "1"], "unrecognized arguments: --no-such-flag"),
]


@pytest.mark.parametrize("argv,message", BAD_TRAIN, ids=[m for _, m in BAD_TRAIN])
def test_bad_train_input(runs_dir, argv, message):
    r = workbench("train", *argv, "--runs-dir", runs_dir)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert not runs_dir.exists(), "bad input must create nothing"


def test_wandb_sink_offline(runs_dir, tmp_path):
    import os

    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DIR": str(tmp_path)}
    env.pop("WANDB_API_KEY", None)
    r = workbench("train", "--total-steps", 64, *TINY, "--wandb", "--runs-dir", runs_dir, "--json", env=env)
    assert r.returncode == 0, r.stderr
    run_dir = Path(last_json(r.stdout)["run_dir"])
    offline = list(run_dir.glob("wandb/offline-run-*/run-*.wandb"))
    assert offline and offline[0].stat().st_size > 0


def test_tensorboard_event_files(tmp_path):
    "`--tensorboard`: TensorBoard event files in the run folder, under CleanRL's keys, readable by TensorBoard itself."
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    r = workbench(
        "train",
        *TINY,
        "--total-timesteps",
        256,
        "--eval-every",
        4,
        "--eval-episodes",
        2,
        "--tensorboard",
        "--runs-dir",
        tmp_path / "runs",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    run_dir = Path(last_json(r.stdout)["run_dir"])
    acc = EventAccumulator(str(run_dir / "tensorboard"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {
        "charts/episodic_return",
        "losses/value_loss",
        "losses/approx_kl",
        "perf/sps",
        "eval/mean_return",
    } <= tags, tags
    assert [s.step for s in acc.Scalars("perf/sps")] == [32 * i for i in range(1, 9)]
    assert "hyperparameters/text_summary" in acc.Tags()["tensors"]


def test_eval_of_a_code_agent_on_its_users_task_file(tmp_path):
    """`workbench eval <code agent's run> --task FILE`: the tasks of a JSON-lines file written here, scored whole. The run
    writes one token, so every completion stays in the prompt's trailing comment: the task whose prompt already solves it
    passes and the other fails, whatever the model learnt. The spec form takes samples and turns; PPO's flags are refused."""
    r = workbench("train", "--algo", "sft", "--updates", 2, "--batch-size", 2, "--hidden", 32, "--layers", 1, "--heads", 2,
                  "--ffn", 64, "--vocab", 300, "--corpus-tasks", 30, "--eval-every", 0, "--max-new-tokens", 1,
                  "--device", "cpu", "--runs-dir", tmp_path / "runs", "--quiet", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    run = last_json(r.stdout)["run_dir"]
    tasks = tmp_path / "mine.jsonl"
    rows = [
        {
            "id": "solved",
            "prompt": "def inc(x):\n    return x + 1\n# ",
            "entry": "inc",
            "tests": ["assert inc(1) == 2"],
        },
        {"id": "unsolved", "prompt": "def dec(x):\n    return x\n# ", "entry": "dec", "tests": ["assert dec(1) == 0"]},
    ]
    tasks.write_text("".join(json.dumps(row) + "\n" for row in rows))
    e = workbench("eval", run, "--task", tasks, "--json")
    assert e.returncode == 0, e.stderr[-2000:]
    result = last_json(e.stdout)
    assert result["task"] == f"code?source=file&path={tasks}" and result["split"] is None
    assert result["file"]["tasks"] == 2 and result["passed"] == [1, 0] and result["overall"]["pass@1"] == 0.5
    assert not {"easy", "medium", "hard"} & set(result)
    e = workbench("eval", run, "--task", f"code?source=file&path={tasks}&turns=2", "--samples", 2, "--json")
    assert e.returncode == 0, e.stderr[-2000:]
    result = last_json(e.stdout)
    assert result["passed"] == [2, 0] and result["file"]["pass@2"] == 0.5
    assert result["multi_turn"]["turns"] == 2 and result["multi_turn"]["overall"]["pass@1"] == 0.5
    from workbench.train.checkpoint import find_checkpoint

    for flag in (["--env", "gym:CartPole-v1"], ["--swap-roles"]):
        e = workbench("eval", run, *flag)
        assert e.returncode == 2 and e.stderr.strip().splitlines() == [
            f"workbench: error: {flag[0]} does not apply to {find_checkpoint(run, 'best')}, a code agent's "
            "checkpoint: its evaluation takes --task SPEC, --samples, --turns, --temperature, --max-new-tokens, --out FILE, "
            "--split and --episodes"
        ], e.stderr
