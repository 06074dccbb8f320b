"""Bad input of every kind, as a table: each case is refused with exit code 2 (or the project's own error type, from
Python) and one line naming the problem, no traceback, and nothing written. The commands run in-process (`main`), in a
folder of their own that must stay as it was."""

import contextlib, json, math, os
from pathlib import Path

import pytest

from conftest import ROOT, workbench_main
from workbench.core import WorkbenchError

TRAIN_NB = str(ROOT / "nbs" / "experiments" / "train.ipynb")
HUGE = "a" * 300

TRAIN = [
    (["--env", "gym:NoSuchEnv-v0"], "unknown env 'gym:NoSuchEnv-v0'"),
    (["--env", "puffer:nosuch"], "unknown env 'puffer:nosuch'"),
    (["--env", "atari:pong"], "no module named 'atari'"),
    (["--env", "my-envs:make"], "unknown env source 'my-envs'"),
    (["--env", ""], "env spec must be a non-empty string"),
    (["--env", "trading?cost_bps=abc"], "option 'cost_bps' expects a finite number, got 'abc'"),
    (["--env", "trading?cost_bps=inf"], "option 'cost_bps' expects a finite number, got 'inf'"),
    (["--env", "trading?symbol=AAPL"], "unknown option 'symbol' (make_trading takes"),
    (["--env", "trading?data=missing.csv"], "missing.csv"),
    (["--env", "trading?split=nope"], "split"),
    (["--env", "planpath?alpha=1.5"], "planpath: alpha must be in [0, 1], got 1.5"),
    (["--env", "planpath?roles=coder,tester"], "planpath: roles must be 'planner,executor' or 'solo'"),
    (["--env", "planpath?map=S#/#G"], "planpath: the map's goal cannot be reached from its start"),
    (["--env", "planpath", "--num-envs", "7"], "has 2 agents per env: num_envs must be a multiple of 2, got 7"),
    (
        ["--env", "planpath", "--policy-map", "planner=a,critic=b"],
        "policy_map names role 'critic', but the env's roles are planner, executor",
    ),
    (["--env", "planpath", "--policy-map", "planner"], "policy_map must be shared, per_role or role=id,role=id"),
    (["--env", "gym:CartPole-v1?length=3"], "unknown option 'length' (CartPoleEnv takes render_mode)"),
    (["--env", "gym:CartPole-v1?bad"], "option 'bad' is not NAME=VALUE"),
    (["--env", "nosuchenv"], "unknown env 'nosuchenv'"),
    (["--learning-rate", "-3e-4"], "learning_rate must be positive"),
    (["--learning-rate", "0"], "learning_rate must be positive"),
    (["--learning-rate", "fast"], "config key 'learning_rate' expects float, got 'fast'"),
    (["--num-envs", "1000000000"], "would need about"),
    (["--num-steps", "100000000", "--num-envs", "64"], "the rollout buffer"),
    (["--total-timesteps", "1.5"], "config key 'total_timesteps' expects int"),
    (["--total-timesteps", "0"], "total_timesteps must be at least 1"),
    (["--total-timesteps", "many"], "config key 'total_timesteps' expects int"),
    (["--num-envs", "2.5"], "config key 'num_envs' expects int"),
    (["--num-envs", "0"], "num_envs must be at least 1"),
    (["--num-steps", "0"], "num_steps must be at least 1"),
    (["--num-minibatches", "0"], "num_minibatches must be at least 1"),
    (["--num-envs", "3", "--num-steps", "5", "--num-minibatches", "4"], "is not divisible by num_minibatches 4"),
    (["--update-epochs", "0"], "update_epochs must be at least 1"),
    (["--clip-coef", "2"], "clip_coef must be in [0, 1]"),
    (["--ent-coef", "-1"], "ent_coef must be non-negative"),
    (["--max-grad-norm", "-1"], "max_grad_norm must be non-negative"),
    (["--gamma", "1.5"], "gamma must be in [0, 1]"),
    (["--gae-lambda", "-0.1"], "gae_lambda must be in [0, 1]"),
    (["--target-kl", "0"], "target_kl must be positive or None"),
    (["--env", "gym:CartPole-v1", "--sde"], "--sde (state-dependent exploration) needs continuous actions"),
    (["--env", "gym:Pendulum-v1", "--sde", "--sde-sample-freq", "0"], "sde_sample_freq must be a positive number"),
    (["--env", "gym:Pendulum-v1", "--sde", "--sde-sample-freq", "-4"], "sde_sample_freq must be a positive number"),
    (["--env", "gym:Pendulum-v1", "--sde-sample-freq", "4"], "sde_sample_freq applies to state-dependent exploration"),
    (
        ["--env", "gym:Pendulum-v1", "--no-tuned", "--sde", "--learner", "c"],
        "the C kernels have no state-dependent exploration",
    ),
    (["--env", "planpath?roles=planner,executor", "--sde"], "needs continuous actions"),
    (
        ["--env-batches", "2"],
        "env_batches 2 steps batches of envs in worker processes: it needs --backend multiprocessing",
    ),
    (["--env-batches", "0"], "env_batches must be at least 1"),
    (["--compile-mode", "reduce-overhead"], "compile_mode reduce-overhead applies to torch.compile: add --compile"),
    (["--compile", "--compile-mode", "fast"], "config key 'compile_mode' must be one of"),
    (
        ["--backend", "multiprocessing", "--num-workers", "4", "--env-batches", "3"],
        "must be divisible by env_batches (3)",
    ),
    (
        ["--env", "gym:Pendulum-v1", "--sde", "--backend", "multiprocessing", "--env-batches", "2"],
        "it runs with env_batches 1",
    ),
    (["--policy", "cnn"], "config key 'policy' must be one of"),
    (["--hidden-size", "0"], "hidden_size must be at least 1"),
    (["--policy", "transformer", "--num-heads", "3"], "num_heads (3) must divide hidden_size (64)"),
    (["--window", "0"], "window must be at least 1"),
    (["--seed", "-1"], "seed must be in [0, 2**31)"),
    (["--seed", "1180591620717411303424"], "seed must be in [0, 2**31)"),
    (["--seed", "abc"], "config key 'seed' expects int"),
    (["--device", "tpu"], "config key 'device' must be one of"),
    (["--backend", "ray"], "config key 'backend' must be one of"),
    (["--num-workers", "0"], "num_workers must be at least 1"),
    (["--num-envs", "6", "--backend", "multiprocessing", "--num-workers", "4"], "must be divisible by num_workers"),
    (["--checkpoint-every", "-1"], "checkpoint_every must be >= 0"),
    (["--eval-every", "-1"], "eval_every must be >= 0"),
    (["--keep-last", "0"], "keep_last must be at least 1"),
    (["--eval-episodes", "0"], "eval_episodes must be at least 1"),
    (["--torch-threads", "0"], "torch_threads must be at least 1"),
    (["--name", HUGE], "run name must be 1 to 100 characters"),
    (["--name", "a/b"], "run name must be 1 to 100 characters without '/'"),
    (["--runs-dir", "a-file"], "runs folder 'a-file' cannot hold the run store"),
    (["--runs-dir", "/proc/workbench-runs"], "cannot hold the run store"),
    (["--no-such-flag", "1"], "unrecognized arguments: --no-such-flag"),
    (["--learning-rat", "0.001"], "unrecognized arguments: --learning-rat"),  # no abbreviations
    (["--resume", "missing.pt"], "checkpoint not found"),
    (["--resume", ""], "--resume must be a checkpoint file or run folder, got ''"),  # not a new run
    (["--resume", "corrupt.pt"], "is corrupt or not a workbench checkpoint"),
    (["--config", "missing.toml"], "config file not found"),
    (["--config", "unknown.yaml"], "unknown config (from"),
    (["--config", "badtype.toml"], "config key 'gamma' expects float, got 'high'"),
    (["--config", "broken.toml"], "cannot parse config file"),
    (["--config", "inf.yaml"], "config key 'learning_rate' must be a finite number"),
    (["--config", "list.yaml"], "must hold a table of keys"),
    (["--config", "params.txt"], "must end in"),
]
# every float setting refuses the non-finite values, whichever way they come in
FLOATS = ["learning-rate", "ent-coef", "vf-coef", "clip-coef", "max-grad-norm", "gamma", "gae-lambda", "target-kl"]
TRAIN += [
    ([f"--{k}", v], f"config key '{k.replace('-', '_')}' must be a finite number")
    for k in FLOATS
    for v in ("inf", "nan", "-inf")
]

OTHERS = [
    (["eval", "missing.pt"], "checkpoint not found"),
    (["eval", "corrupt.pt"], "is corrupt"),
    (["eval", "missing.pt", "--episodes", "0"], "--episodes must be at least 1"),
    (["eval", "missing.pt", "--split", "nope"], "invalid choice: 'nope'"),
    (["eval", "missing.pt", "--episodes", "x"], "invalid int value"),
    (["eval"], "workbench eval needs a checkpoint file or run folder (or --model NAME"),
    (["eval", "--model", "tiny"], "the tiny model is made by training: evaluate a run of it"),
    (["eval", "--model", "no-such-model-dir"], "model folder 'no-such-model-dir' does not exist"),
    (["eval", "--model", "no-such-model-dir", "--env", "gym:CartPole-v1"], "--env does not apply to --model"),
    (["eval", "missing.pt", "--gguf-file", "m.gguf"], "--gguf-file applies to --model"),
    (["eval", "missing.pt", "--model", "smollm2"], "give a checkpoint (or run folder) or --model, not both"),
    (["export", "missing.pt"], "say where to write the model: --onnx FILE"),
    (["export", "missing.pt", "--onnx", "p.onnx"], "checkpoint not found"),
    (["export", "missing.pt", "--onnx", "/nonexistent/dir/p.onnx"], "does not exist (create it first)"),
    (["envs", "--bogus"], "unrecognized arguments: --bogus"),
    (["serve", "--port", "99999"], "--port must be in 0..65535"),
    (["serve", "--port", "-1"], "--port must be in 0..65535"),
    (["serve", "--port", "abc"], "invalid int value"),
    (["serve", "--address", "0.0.0.0"], "refusing to serve on non-loopback address"),
    (["serve", "--token", "short"], "--token must be at least 8 characters"),
    (["serve", "--port", "busy"], "Address already in use"),
    (["run", "missing.ipynb"], "missing.ipynb"),
    (["run", TRAIN_NB, "-p", "learning_rat", "0.1"], "unknown parameter 'learning_rat' for train.ipynb"),
    (["run", TRAIN_NB, "-p", "seed", "three"], "parameter seed of train.ipynb must be int"),
    (["run", TRAIN_NB, "-p", "learning_rate", "inf"], "learning_rate"),
    (["run", TRAIN_NB, "-f", "missing.yaml"], "missing.yaml"),
    (["run", TRAIN_NB, "--processes", "0"], "--processes must be at least 1"),
    (["batch", TRAIN_NB, "--grid", "seed="], "seed"),
    (["batch", TRAIN_NB, "--grid", "nosuch=1,2"], "nosuch"),
    (["batch", TRAIN_NB, "--grid", "seed=1,2", "--max-parallel", "0"], "--max-parallel must be at least 1"),
    (["judge", "score", "--response", "x"], "--query"),
    (["judge", "score", "--query", "q", "--response-file", "missing.py"], "missing.py"),
    (["judge", "benchmark", "--tasks", "0"], "--tasks must be"),
    (["judge", "benchmark", "--judges", "nosuch"], "nosuch"),
    (["nosuchcommand"], "invalid choice: 'nosuchcommand'"),
]

# Language-model agents and teams of them: each kind of setting with a range, checked before anything is built
TRAIN += [
    (
        ["--algo", "grpo", "--group-size", "1000000000"],
        "GRPO's step (batch_size 32 x group_size 1,000,000,000 x turns 1)",
    ),
    (["--algo", "grpo", "--group-size", "1"], "group_size must be at least 2"),
    (["--algo", "grpo", "--batch-size", "100000000000"], "GRPO's step (batch_size 100,000,000,000"),
    (["--algo", "sft", "--batch-size", "1000000000000"], "SFT's step (batch_size 1,000,000,000,000)"),
    (["--algo", "sft", "--batch-size", "0"], "batch_size must be at least 1"),
    (["--algo", "grpo", "--task", "code?turns=1000000000"], "x turns 1,000,000,000)"),
    (["--algo", "grpo", "--temperature", "0"], "GRPO samples each task's group: temperature must be above 0, got 0.0"),
    (["--algo", "grpo", "--temperature", "nan"], "config key 'temperature' must be a finite number"),
    (["--algo", "grpo", "--top-p", "0"], "top_p must be in (0, 1]"),
    (["--algo", "grpo", "--beta", "-1"], "beta must be non-negative"),
    (["--algo", "grpo", "--epsilon", "1"], "epsilon must be in [0, 1)"),
    (["--algo", "grpo", "--epsilon-high", "-0.1"], "epsilon_high must be non-negative"),
    (["--algo", "grpo", "--review", "1"], "review must be in [0, 1)"),
    (["--algo", "grpo", "--promote-at", "1.5"], "need 0 <= demote_at < promote_at <= 1"),
    (["--algo", "grpo", "--band", "--band-low", "0.9", "--band-high", "0.1"], "need 0 <= band_low < band_high <= 1"),
    (["--algo", "grpo", "--band-rates", "rates.jsonl"], "band_rates are the band's starting rates: give --band too"),
    (["--algo", "grpo", "--band", "--band-rates", "missing.jsonl"], "cannot read the band rates missing.jsonl"),
    (["--algo", "grpo", "--task", "code?programs=40"], "programs is for the CodeI/O source (source=codeio)"),
    (["--algo", "grpo", "--task", "code?max_chars=300"], "max_chars narrows a fixed source's training tasks"),
    (["--algo", "grpo", "--task", "code?source=benchmark&max_chars=3"], "no training task's reference is at most 3"),
    (["--algo", "grpo", "--window", "100000000000000"], "the curriculum's window (100,000,000,000,000)"),
    (["--algo", "grpo", "--max-new-tokens", "10000000"], "max_new_tokens 10,000,000 leaves no room for the prompt"),
    (["--algo", "grpo", "--max-new-tokens", "0"], "max_new_tokens must be at least 1"),
    (["--algo", "sft", "--lora", "8"], "lora does not apply to the tiny model"),
    (["--algo", "grpo", "--prompt-format", "chat"], "prompt_format chat does not apply to the tiny model"),
    (["--algo", "grpo", "--prompt-format", "json"], "prompt_format"),
    (["--algo", "grpo", "--generator", "fast"], "generator"),
    (["--algo", "grpo", "--generator", "vllm", "--device", "cpu"], "generator vllm"),
    (["--algo", "grpo", "--micro-batch", "-1"], "micro_batch must be 0 (the whole step) or more, got -1"),
    (["--algo", "grpo", "--gen-batch", "0"], "gen_batch must be at least 1"),
    (["--algo", "grpo", "--judge-workers", "0"], "judge_workers must be at least 1"),
    (["--algo", "sft", "--gguf-file", "m.gguf"], "gguf_file does not apply to the tiny model"),
    (["--algo", "sft", "--lora", "-1"], "lora must be 0 (off) or a rank, got -1"),
    (["--algo", "sft", "--vocab", "1"], "tiny model vocab must be at least 258"),
    (["--algo", "sft", "--hidden", "6", "--heads", "2"], "must be even"),
    (["--algo", "sft", "--hidden", "0"], "tiny model size hidden must be at least 1"),
    (["--algo", "sft", "--hidden", "1000000"], "the model ("),
    (["--algo", "sft", "--corpus-tasks", "1000000000000"], "the tokenizer's corpus (corpus_tasks 1,000,000,000,000)"),
    (["--algo", "sft", "--sft-demos", "1000000000000"], "SFT's demonstrations (sft_demos 1,000,000,000,000"),
    (["--algo", "sft", "--eval-tasks", "0"], "eval_tasks must be 1 to 1,000"),
    (["--algo", "sft", "--eval-tasks", "1000000"], "eval_tasks must be 1 to 1,000"),
    (["--algo", "sft", "--learning-rate", "0"], "learning_rate must be positive"),
    (["--algo", "sft", "--warmup", "-1"], "warmup must be non-negative"),
    (["--algo", "sft", "--updates", "0"], "updates must be at least 1"),
    (["--algo", "sft", "--seed", "-1"], "seed must be in [0, 2**31)"),
    (["--algo", "sft", "--task", "code?examples=7"], "examples must be 0 to 6"),
    (["--algo", "sft", "--task", "code?source=benchmark&level=hard"], "level does not apply to source=benchmark"),
    (["--algo", "sft", "--task", "code?path=tasks.jsonl"], "path does not apply to source=gen"),
    (["--team", "--size", "100000"], "a 100,000 x 100,000 grid does not fit the model's context of 512 tokens"),
    (["--team", "--size", "5000", "--context", "20000"], "the held-out grids (1,000 a set, 5,000 x 5,000)"),
    (["--team", "--size", "1"], "need size >= 2"),
    (["--team", "--walls", "0.9"], "walls in [0, 0.6]"),
    (["--team", "--rounds", "1000000"], "rounds must be 1 to 100, got 1,000,000"),
    (
        ["--team", "--algo", "grpo", "--rounds", "100", "--group-size", "100000"],
        "GRPO's step (batch_size 32 x group_size 100,000 x 2 roles x rounds 100)",
    ),
    # settings the team's algorithm never reads: refused, not ignored (issue 55), naming who reads them (issue 57)
    (["--team", "--group-size", "4"], "--group-size is a setting of grpo, team-grpo runs, not of team-sft runs"),
    (["--team", "--temperature", "0.5"], "--temperature is a setting of grpo, team-grpo runs, not of team-sft runs"),
    (["--team", "--alpha", "0.7"], "--alpha is a setting of team-grpo runs, not of team-sft runs"),
    (["--team", "--grouping", "turn"], "--grouping is a setting of team-grpo runs, not of team-sft runs"),
    (["--team", "--algo", "grpo", "--top-p", "0.9"], "--top-p is a setting of grpo runs, not of team-grpo runs"),
    (["--team", "--algo", "grpo", "--window", "8"], "--window is a setting of ppo, grpo runs, not of team-grpo runs"),
    (["--team", "--rounds", "0"], "rounds must be at least 1"),
    (["--team", "--algo", "grpo", "--group-size", "1000000000"], "group_size 1,000,000,000"),
    (["--team", "--algo", "grpo", "--temperature", "0"], "temperature must be above 0"),
    (["--team", "--algo", "grpo", "--alpha", "2"], "alpha must be in [0, 1]"),
    (["--team", "--eval-grids", "0"], "eval_grids must be 1 to 1,000"),
    (["--team", "--task", "code", "--max-new-tokens", "64", "--size", "8"], "size is a setting of path tasks"),
    (["--team", "--level", "hard"], "level is a setting of code tasks"),
    (["--team", "--lora", "8"], "lora does not apply to the tiny model"),
    (["--team", "--vocab", "256"], "tiny model vocab must be at least 258"),
    (["--team", "--algo", "grpo", "--alpha", "1.5"], "alpha must be in [0, 1], got 1.5"),
    (
        ["--team", "--policy-map", "planner=a,coder=b"],
        "policy_map names role 'coder', but the env's roles are planner, executor",
    ),
    (["--team", "--algo", "grpo", "--grouping", "role"], "grouping"),
    (["--team", "--roles", "coder,tester"], "a team is planner,executor or solo"),
    (["--team", "--task", "code"], "a code team writes programs: max_new_tokens must be at least 48, got 24"),
    (
        ["--team", "--task", "code", "--max-new-tokens", "64", "--roles", "planner,executor"],
        "a code team is tester,coder or solo",
    ),
    (
        ["--team", "--task", "code", "--max-new-tokens", "64", "--level", "expert"],
        "level must be one of easy, medium, hard",
    ),
    (["--team", "--task", "maze"], "task"),
    (["--team", "--algo", "grpo", "--path-reward", "steps"], "path_reward"),
    (["--team", "--algo", "grpo", "--sampling", "forest"], "sampling"),
    (["--algo", "sft", "--task", "code?level=expert"], "unknown level 'expert'"),
    (["--algo", "sft", "--task", "code?turns=0"], "turns must be at least 1"),
    (["--algo", "sft", "--sft-demos", "-1"], "sft_demos must be 0 (fresh tasks) or more"),
    (["--algo", "sft", "--task", "code?reward=style"], "unknown reward 'style'"),
    (["--algo", "sft", "--model", "./missing-model"], "does not exist"),
    (["--algo", "sft", "--model", "./not-a-model"], "is not a causal language model folder"),
    (["--algo", "sft", "--task", "code?source=file&path=corrupt-tasks.jsonl"], "corrupt-tasks.jsonl"),
    (["--algo", "sft", "--grup-size", "4"], "unrecognized arguments"),
]
SWEEP = str(ROOT / "nbs" / "experiments" / "sweeps" / "cartpole.toml")
OTHERS += [
    (
        ["judge", "score", "--query", "q", "--response", "r", "--tests-file", "bad.json"],
        "--tests-file bad.json is not JSON",
    ),
    (
        ["judge", "score", "--query", "q", "--response", "r", "--tests-file", "dict.json"],
        "must hold a JSON list of test",
    ),
    (["judge", "score", "--query", "q", "--response", "r", "--tests-file", "mixed.json"], "an item that is not one"),
    (
        ["judge", "score", "--query", "q", "--response", "r", "--test", "assert 1", "--time-budget", "-1"],
        "--time-budget must be a positive number of seconds, got -1.0",
    ),
    (
        ["judge", "score", "--query", "q", "--response", "r", "--test", "assert 1", "--time-budget", "nan"],
        "--time-budget must be a positive number of seconds, got nan",
    ),
    (
        ["judge", "score", "--query", "q", "--response", "r", "--test", "assert 1", "--time-budget", "0"],
        "--time-budget",
    ),
    (
        ["judge", "score", "--query", "q", "--response", "r", "--test", "assert 1", "--time-budget", "inf"],
        "--time-budget",
    ),
    (["judge", "benchmark", "--tasks", "101"], "--tasks must be between 1 and 100"),
    (["serve", "--allow-host", "http://lab.example/"], "--allow-host 'http://lab.example/' is not a host name"),
    (["serve", "--allow-host", ""], "is not a host name"),
    (["serve", "--address", ""], "--address must not be empty"),
    (["sweep", "--config", SWEEP, "--trials", "0"], "trials must be a whole number of at least 1"),
    (["sweep", "--config", SWEEP, "--max-parallel", "0"], "max_parallel must be a whole number of at least 1"),
    (["sweep", "--config", SWEEP, "--timeout", "-1"], "timeout must be a positive number of seconds"),
    (["sweep", "--config", SWEEP, "--timeout", "nan"], "timeout must be a positive number of seconds"),
    (["sweep", "--config", SWEEP, "--downsample", "0"], "downsample must be a whole number of at least 1"),
    (
        ["sweep", "--config", SWEEP, "--method", "pbt", "--population", "0"],
        "population must be a whole number of at least 2",
    ),
    (["sweep", "--config", SWEEP, "--method", "pbt", "--rounds", "0"], "rounds must be a whole number of at least 1"),
    (["sweep", "--config", SWEEP, "--method", "pbt", "--quantile", "2"], "quantile must be in (0, 0.5]"),
    (["sweep", "--config", SWEEP, "--method", "pbt", "--resample", "2"], "resample must be in [0, 1]"),
    (["sweep", "--config", SWEEP, "--threshold", "nan"], "threshold must be a finite number"),
    (["sweep", "--config", SWEEP, "--sweep-seed", "-1"], "seed must be a whole number of at least 0"),
    (["sweep", "--config", SWEEP, "--trials", "100000000"], "trials must be at most 10,000"),
    (["sweep", "--config", SWEEP, "--max-parallel", "100000"], "max_parallel must be at most 256"),
    (["tag", "some-run", "best", "--runs-dir", "missing"], "no run store in 'missing'"),
    (["tag", "some-run", "two words"], "a tag is 1 to 40 letters, digits or -_.:/ characters"),
]

# Issue 55, found by a hostile tester: each was work started (or a hang, or a traceback) instead of one line
OTHERS += [
    # 1. an empty run id (or batch, job, sweep id, or checkpoint) names nothing, not everything
    (["tag", "", "good"], "a run id must be non-empty text, got ''"),
    (["tag", " ", "good", "--remove"], "a run id must be non-empty text, got ' '"),
    (["sweep", "--resume", ""], "--resume needs a sweep's id, got ''"),
    (["batch", TRAIN_NB, "--resume", ""], "--resume names a batch (its id or folder), got ''"),
    (["report", "", "--out", "."], "a job or batch id must be non-empty, got ''"),
    (["eval", ""], "the checkpoint must be a checkpoint file or run folder, got ''"),
    (["export", " ", "--onnx", "x.onnx"], "the checkpoint must be a checkpoint file or run folder, got ' '"),
    # 2. sweep flags that do not apply to this kind of sweep
    (["sweep", "--config", SWEEP, "-p", "seed", "3"], "-p sets a notebook's parameters, and this sweep trains"),
    (["sweep", "--config", SWEEP, "-f", "params.txt"], "-f sets a notebook's parameters, and this sweep trains"),
    (["sweep", TRAIN_NB, "--config", SWEEP, "--learning-rate", "0.1"], "--learning-rate is a training flag, and this"),
    (["sweep", "--config", SWEEP, "--name", "x"], "--name does not apply to a sweep"),
    (["sweep", "--config", SWEEP, "--population", "3"], "--population is an option of pbt, and this sweep's method is"),
    (["sweep", "--config", SWEEP, "--method", "pbt", "--trials", "3"], "--trials is an option of a search, and pbt"),
    (["sweep", "--resume", "some-sweep", "--trials", "3"], "--trials does not apply with --resume"),
    (["sweep", "--resume", "some-sweep", "--config", SWEEP], "--config does not apply with --resume"),
    # 4. an export folder that cannot be made where it goes: before the model is loaded
    (["export", "missing.pt", "--hf", "/proc/hf-out"], "--hf /proc/hf-out: cannot write in '/proc'"),
    (["export", "missing.pt", "--hf", "no/such/hf-out"], "its folder 'no/such' does not exist (create it first)"),
    (["export", "missing.pt", "--hf", "."], "give a new folder's path"),
    # 6. a Ray address that is malformed or where nothing answers: before the sweep (or batch) exists
    (["sweep", "--config", SWEEP, "--ray", "999.1.1.1:1"], "--ray 999.1.1.1:1: 999.1.1.1 is not an IP address"),
    (["sweep", "--config", SWEEP, "--ray", "127.0.0.1"], "--ray '127.0.0.1' is not a Ray cluster's address"),
    (["sweep", "--config", SWEEP, "--ray", "127.0.0.1:70000"], "port 70000 is not in 1..65535"),
    (["sweep", "--config", SWEEP, "--ray", "no_such host:6379"], "is not a Ray cluster's address"),
    (["sweep", "--config", SWEEP, "--ray", "closed"], "no Ray cluster answers there"),
    (["sweep", "--config", SWEEP, "--ray", ""], "is not a Ray cluster's address"),
    (["batch", TRAIN_NB, "--ray", "999.1.1.1:1"], "999.1.1.1 is not an IP address"),
    (["batch", TRAIN_NB, "--ray", "closed"], "no Ray cluster answers there"),
]

FILES = {
    "a-file": "not a folder",
    "corrupt.pt": "\x00garbage" * 10,
    "unknown.yaml": "learning_rat: 0.1\n",
    "badtype.toml": "[ppo]\ngamma = 'high'\n",
    "broken.toml": "[ppo\n",
    "inf.yaml": "learning_rate: .inf\n",
    "list.yaml": "- 1\n- 2\n",
    "params.txt": "seed: 1\n",
}
FILES.update(
    {"bad.json": '["assert f(1) == 2"', "dict.json": '{"test": "assert f(1) == 2"}', "mixed.json": '["assert 1", 2]'}
)
FILES.update(
    {
        "not-a-model/config.json": '{"model_type": "nonsense"}',
        "corrupt-tasks.jsonl": '{"id": "a", "prompt": "def f(x):\\n"\nnot json\n',
        "not-gzip.jsonl.gz": "plain text, not gzip\n",
        "he-no-check.jsonl": '{"task_id": "X/0", "prompt": "def f(x):\\n", "entry_point": "f", "test": "assert f(1)"}\n',
    }
)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def listing(root: Path) -> dict:
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*")}


def run_main(argv: list) -> tuple[int, str]:
    "`workbench ARGV` in this process: its exit code and stderr."
    r = workbench_main(*argv)
    return r.returncode, r.stderr


@pytest.mark.parametrize(
    "argv,message",
    [(["train", *a], m) for a, m in TRAIN] + OTHERS,
    ids=[" ".join(["train", *a])[:60] for a, _ in TRAIN] + [" ".join(a)[:60] for a, _ in OTHERS],
)
def test_bad_command_line_input(folder, argv, message):
    import socket

    before = listing(folder)
    with socket.socket() as busy, socket.socket() as closed:  # a loopback port in use, and one where nothing listens
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        closed.bind(("127.0.0.1", 0))
        ports = {"busy": str(busy.getsockname()[1]), "closed": f"127.0.0.1:{closed.getsockname()[1]}"}
        argv = [ports.get(a, a) for a in argv]
        code, err = run_main(argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and message in lines[0], (code, err[-1500:])
    assert "Traceback" not in err
    assert listing(folder) == before, "bad input must write nothing"


# ---- issue 57: a setting of another algorithm, for every pair of families, from each way a config is given
# (the algorithm given, its `workbench train` flags, a key only another family's algorithms take, its value, who takes it)
OTHER_FAMILY = [
    ("ppo", [], "sft_demos", 7, "sft"),
    ("ppo", [], "group_size", 4, "grpo, team-grpo"),
    ("ppo", [], "rounds", 2, "team-sft, team-grpo"),
    ("sft", ["--algo", "sft"], "num_envs", 4, "ppo"),
    ("sft", ["--algo", "sft"], "beta", 0.1, "grpo, team-grpo"),
    ("sft", ["--algo", "sft"], "eval_grids", 8, "team-sft, team-grpo"),
    ("grpo", ["--algo", "grpo"], "learner", "c", "ppo"),
    ("grpo", ["--algo", "grpo"], "sft_levels", "easy", "sft"),
    ("grpo", ["--algo", "grpo"], "alpha", 0.7, "team-grpo"),
    ("team-sft", ["--team"], "gamma", 0.9, "ppo"),
    ("team-sft", ["--team"], "sft_demos", 7, "sft"),
    ("team-sft", ["--team"], "temperature", 0.5, "grpo, team-grpo"),
    ("team-grpo", ["--team", "--algo", "grpo"], "band", True, "grpo"),
]


@pytest.mark.parametrize("way", ["flag", "toml", "python"])
@pytest.mark.parametrize("algo,argv,key,value,takes", OTHER_FAMILY, ids=[f"{r[0]}-{r[2]}" for r in OTHER_FAMILY])
def test_a_setting_of_another_algorithm_is_refused(folder, way, algo, argv, key, value, takes):
    "Refused in one line naming the algorithms that take it, before any work, whichever way it comes."
    from workbench.train.runner import ALGORITHMS

    before, flag = listing(folder), "--" + key.replace("_", "-")
    says = f"{flag if way == 'flag' else key} is a setting of {takes} runs, not of {algo} runs: leave it out"
    if (
        way == "python"
    ):  # a notebook's config (a job's parameters, `TrainingSession(...)`) is made through the same class
        with pytest.raises(WorkbenchError) as e:
            ALGORITHMS[algo].config(**{key: value})
        assert says in str(e.value) and "\n" not in str(e.value), str(e.value)
    else:
        if way == "toml":
            (folder / "other.toml").write_text(f"{key} = {json.dumps(value)}\n")
            before = listing(folder)
        given = [flag] if value is True else [flag, str(value)]
        code, err = run_main(["train", *argv, *(given if way == "flag" else ["--config", "other.toml"])])
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and says in lines[0], (code, err[-1500:])
    assert listing(folder) == before, "bad input must write nothing"


def test_bad_trading_data_is_one_line(folder):
    (folder / "AAPL.csv").write_text("date,open,high,low,close,volume\nnot-a-date,1,1,1,1,1\n2000-01-04,1,1,1,1,1\n")
    (folder / "NOCLOSE.csv").write_text("date,open,high,low,volume\n2000-01-03,1,1,1,1\n")
    for data, message in (("AAPL.csv", "AAPL.csv"), ("NOCLOSE.csv", "close")):
        before = listing(folder)
        code, err = run_main(["train", "--env", f"trading?data={data}"])
        assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
        assert listing(folder) == before


@pytest.fixture(scope="module")
def made_runs(tmp_path_factory):
    "Checkpoints of three kinds of run, each copied to a file: a PPO policy of CartPole, a code agent (SFT) and a token team."
    import shutil

    from conftest import TINY, workbench
    from workbench.train.checkpoint import find_checkpoint

    fx = tmp_path_factory.mktemp("bad-input-runs")
    small = ["--hidden", "32", "--layers", "1", "--heads", "2", "--ffn", "64", "--vocab", "300", "--corpus-tasks", "20",
             "--updates", "1", "--batch-size", "2", "--eval-every", "0", "--device", "cpu", "--quiet"]  # fmt: skip
    for name, flags in (
        ("cartpole", ["--env", "gym:CartPole-v1", *TINY, "--total-timesteps", "64"]),
        ("lm", ["--algo", "sft", *small]),
        ("team", ["--team", *small, "--size", "4"]),
    ):
        r = workbench("train", *flags, "--runs-dir", fx / "runs", "--name", name, "--json")
        assert r.returncode == 0, r.stderr[-2000:]
        shutil.copy(
            find_checkpoint(json.loads(r.stdout.strip().splitlines()[-1])["run_dir"], "last"), fx / f"{name}.pt"
        )
    return fx


RUNS = [  # `RUN/x.pt` is a checkpoint of `made_runs`
    (["train", "--resume", "RUN/lm.pt", "--algo", "grpo"], "to train grpo from it, start a new run with --init"),
    (["train", "--resume", "RUN/team.pt", "--algo", "ppo"], "is a team-sft run's checkpoint"),
    (
        ["eval", "RUN/cartpole.pt", "--split", "test"],
        "--split applies to envs with held-out splits (trading, planpath)",
    ),
    (["eval", "RUN/cartpole.pt", "--task", "code?level=easy"], "--task does not apply to"),
    (["eval", "RUN/cartpole.pt", "--samples", "4"], "--samples does not apply to"),
    (["eval", "RUN/cartpole.pt", "--turns", "2"], "--turns does not apply to"),
    (["eval", "RUN/cartpole.pt", "--temperature", "0.5"], "--temperature does not apply to"),
    (["eval", "RUN/cartpole.pt", "--seed", "-1"], "--seed must be in [0, 2**31)"),
    (["eval", "RUN/cartpole.pt", "--env", "gym:Pendulum-v1"], "was trained on spaces"),
    (["train", "--resume", "RUN/cartpole.pt", "--env", "gym:Pendulum-v1"], "do not match env"),
    (["eval", "RUN/lm.pt", "--env", "gym:CartPole-v1"], "--env does not apply to"),
    (["eval", "RUN/lm.pt", "--env", "missing.jsonl"], "its evaluation takes --task SPEC, --samples"),
    (["eval", "RUN/lm.pt", "--swap-roles"], "--swap-roles does not apply to"),
    (["eval", "RUN/lm.pt", "--task", "missing.jsonl"], "cannot read the task file missing.jsonl"),
    (["eval", "RUN/lm.pt", "--task", "a-file"], "task file a-file, line 1: not JSON"),
    (["eval", "RUN/lm.pt", "--task", "code?level=expert"], "unknown level 'expert'"),
    (["eval", "RUN/lm.pt", "--task", "gym:CartPole-v1"], "cannot read the task file gym:CartPole-v1"),
    (["eval", "RUN/lm.pt", "--task", "code?source=benchmark", "--split", "val"], "--split applies to generated tasks"),
    (["eval", "RUN/lm.pt", "--task", "code?turns=2", "--turns", "3"], "give the attempts once"),
    (["eval", "RUN/lm.pt", "--split", "train"], "--split val or test"),
    (["eval", "RUN/lm.pt", "--device", "tpu"], "device must be auto, cpu or cuda"),
    (["eval", "RUN/lm.pt", "--episodes", "100000"], "--episodes (tasks of each level) must be 1 to 1,000, got 100000"),
    (["eval", "RUN/lm.pt", "--samples", "0"], "--samples must be 1 to 1,000, got 0"),
    (["eval", "RUN/lm.pt", "--samples", "1000000"], "--samples must be 1 to 1,000"),
    (["eval", "RUN/lm.pt", "--turns", "1000"], "--turns must be 1 to 100"),
    (["eval", "RUN/lm.pt", "--turns", "0"], "--turns must be 1 to 100, got 0"),
    (["eval", "RUN/lm.pt", "--max-new-tokens", "0"], "--max-new-tokens must be 1 to 4,096, got 0"),
    (["eval", "RUN/lm.pt", "--max-new-tokens", "600"], "--max-new-tokens 600 leaves no room for a prompt"),
    (["eval", "RUN/lm.pt", "--task", "not-gzip.jsonl.gz"], "cannot read the task file not-gzip.jsonl.gz"),
    (
        ["eval", "RUN/lm.pt", "--out", "no-such-dir/rows.jsonl"],
        "--out no-such-dir/rows.jsonl: give a file in an existing",
    ),
    (["eval", "RUN/lm.pt", "--task", "he-no-check.jsonl"], "a HumanEval-format test defines check(candidate)"),
    (["eval", "RUN/cartpole.pt", "--max-new-tokens", "8"], "--max-new-tokens does not apply to"),
    (["eval", "RUN/cartpole.pt", "--out", "rows.jsonl"], "--out does not apply to"),
    (["eval", "RUN/lm.pt", "--temperature", "0.5"], "--temperature applies to sampled attempts"),
    (["eval", "RUN/lm.pt", "--samples", "2", "--temperature", "0"], "--temperature must be a positive number, got 0.0"),
    (
        ["eval", "RUN/lm.pt", "--samples", "2", "--temperature", "inf"],
        "--temperature must be a positive number, got inf",
    ),
    (["eval", "RUN/team.pt", "--task", "code"], "--task does not apply to"),
    (
        ["eval", "RUN/team.pt", "--env", "planpath"],
        "its evaluation takes --swap-roles, --temperature, --split and --episodes",
    ),
    (["eval", "RUN/team.pt", "--episodes", "1000000"], "--episodes (held-out grids or tasks) must be 1 to 1,000"),
    (["eval", "RUN/team.pt", "--swap-roles"], "--swap-roles needs a model per role"),
    (["export", "RUN/lm.pt", "--onnx", "x.onnx"], "a code agent's checkpoint: ONNX export is for PPO policies"),
    (["export", "RUN/team.pt", "--onnx", "x.onnx"], "a token team's checkpoint: ONNX export is for PPO policies"),
    (["export", "RUN/cartpole.pt", "--hf", "hf-out"], "a PPO policy's checkpoint (export it with --onnx FILE)"),
    (["export", "RUN/team.pt", "--hf", "hf-out"], "a team's checkpoint (a model a role): --hf exports a code agent's"),
    (["export", "RUN/lm.pt", "--hf", "RUN/"], "it exists and is not an empty folder"),
    (["export", "RUN/lm.pt", "--hf", "hf-out", "--onnx", "x.onnx"], "give --onnx FILE (a PPO policy) or --hf DIR"),
    (["train", "--algo", "grpo", "--init", "RUN/lm.pt", "--hidden", "64"], "hidden 64 does not apply with init"),
    (
        ["train", "--algo", "grpo", "--init", "RUN/lm.pt", "--max-new-tokens", "600"],
        "max_new_tokens 600 leaves no room",
    ),
    (["train", "--algo", "grpo", "--init", "RUN/cartpole.pt"], "is not a lm run's checkpoint"),
    (["train", "--team", "--init", "RUN/lm.pt"], "is not a team run's checkpoint"),
]


@pytest.mark.parametrize("argv,message", RUNS, ids=[" ".join(a)[:60] for a, _ in RUNS])
def test_bad_input_about_a_run(folder, made_runs, argv, message):
    "Flags that do not fit the kind of run (or their ranges): one line, the only one, exit 2, and nothing written anywhere."
    before, runs_before = listing(folder), listing(made_runs)
    code, err = run_main([str(made_runs / a[4:]) if a.startswith("RUN/") else a for a in argv])
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and message in lines[0], (code, err[-1500:])
    assert "Traceback" not in err
    assert listing(folder) == before and listing(made_runs) == runs_before, "bad input must write nothing"


def _cartpole_policy():
    from workbench.env.make import make_env
    from workbench.policy import PolicyConfig, make_policy

    with contextlib.closing(make_env("gym:CartPole-v1", num_envs=1)) as env:
        return make_policy(env.single_observation_space, env.single_action_space, PolicyConfig())


def _python_cases(folder):
    from workbench.env import make_env, register_env
    from workbench.env.make import EnvConfig
    from workbench.env.spec import parse_spec
    from workbench.judge.episodes import evaluate_policy
    from workbench.judge.batch import BatchExecutionJudge
    from workbench.judge.responses import ExecutionJudge
    from workbench.judge.sandbox import Limits, run_sandboxed
    from workbench.policy import PolicyConfig
    from workbench.runs.store import RunStore
    from workbench.train.config import PPOConfig, RunConfig, TrainConfig
    from workbench.train.lm import LMTrainConfig, check_token_memory
    from workbench.train.team import TeamTrainConfig

    return [
        (lambda: TrainConfig.from_dict(None), "config must be a mapping of settings"),
        (lambda: TrainConfig.from_dict({"policy": {"policy": "cnn"}}), "must be one of"),
        (lambda: TrainConfig.from_dict({"learning_rat": 0.1}), "unknown config key 'learning_rat'"),
        (lambda: PPOConfig(learning_rate="abc"), "config key 'learning_rate' expects float, got 'abc'"),
        (lambda: PPOConfig(clip_coef=math.nan), "config key 'clip_coef' must be a finite number"),
        (lambda: PPOConfig(vf_coef=math.inf), "config key 'vf_coef' must be a finite number"),
        (lambda: PPOConfig(total_timesteps=1.5), "config key 'total_timesteps' expects int, got 1.5"),
        (lambda: PolicyConfig(hidden_size=True), "config key 'hidden_size' expects int, got True"),
        (lambda: RunConfig(seed=2**70), "seed must be in [0, 2**31)"),
        (lambda: EnvConfig(env=5), "config key 'env' expects str, got 5"),
        (lambda: make_env(num_envs="8"), "config key 'num_envs' expects int, got '8'"),
        (lambda: make_env("gym:CartPole-v1", num_envs=0), "num_envs must be at least 1"),
        (lambda: RunStore(folder / "a-file"), "cannot hold the run store"),
        (lambda: register_env("", lambda: None), "env names are words"),
        (lambda: register_env("x", "not callable"), "the creator must be callable"),
        (lambda: parse_spec(""), "env spec must be a non-empty string"),
        (lambda: evaluate_policy(_cartpole_policy(), "gym:Acrobot-v1", episodes=2), "the policy was built for"),
        (lambda: Limits(cpu_s=-1), "sandbox limit cpu_s must be positive"),
        (lambda: Limits(cpu_s=math.nan), "config key 'cpu_s' must be a finite number"),
        (lambda: run_sandboxed(None), "the sandbox runs Python source text, got NoneType"),
        (lambda: run_sandboxed("pass", limits={"cpu_s": 1}), "limits must be a Limits"),
        (lambda: BatchExecutionJudge(parallel=0), "parallel must be a whole number from 1 to 1024"),
        (lambda: ExecutionJudge(batch=10**9), "batch must be a whole number from 1 to 1024"),
        (lambda: ExecutionJudge().score("q", None, {"tests": ["assert f() == 1"]}), "a response is text, got NoneType"),
        (lambda: ExecutionJudge().score("q", "x = 1", {"tests": [1]}), "needs context['tests']"),
        (lambda: LMTrainConfig.from_dict({"algo": "grpo", "temperature": 0}), "temperature must be above 0"),
        (lambda: LMTrainConfig.from_dict({"lora": 8}), "lora does not apply to the tiny model"),
        (lambda: LMTrainConfig.from_dict({"vocab": 1}), "vocab must be at least 258"),
        (
            lambda: check_token_memory(LMTrainConfig.from_dict({"algo": "grpo", "group_size": 10**9})),
            "would need about",
        ),
        (lambda: TeamTrainConfig.from_dict({"size": 100_000}), "grid does not fit the model's context"),
        (lambda: TeamTrainConfig.from_dict({"rounds": 10**6}), "rounds must be 1 to 100"),
    ]


def test_bad_python_api_input(folder):
    "The Python API raises the project's own error types, with the command line's messages, and writes nothing."
    before = listing(folder)
    for i, (call, message) in enumerate(_python_cases(folder)):
        with pytest.raises(WorkbenchError) as e:
            call()
        assert message in str(e.value) and "\n" not in str(e.value), (i, str(e.value))
    assert listing(folder) == before
    assert os.getcwd() == str(folder)


# ---- issue 55: what a hostile tester found, each refused in one line before any work


def test_empty_run_id_tags_no_run(folder):
    "An empty (or blank) run id prefix matched every run: `tag '' good` tagged the store's only run."
    from workbench.runs.store import RunStore

    store = RunStore(folder / "runs")
    run_id = store.create_run("only", {})
    store.close()
    before = listing(folder)
    for prefix in ("", " "):
        code, err = run_main(["tag", prefix, "good", "--runs-dir", "runs"])
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "a run id must be non-empty text" in lines[0], (code, err)
    assert listing(folder) == before
    store = RunStore(folder / "runs")
    assert store.tags().get(run_id, []) == []
    store.close()


def test_unreachable_ray_address_is_one_line_at_once(tmp_path):
    "Through the real command: a malformed or silent Ray address is one line in seconds, and no sweep or folder exists."
    import socket
    import time

    from conftest import workbench

    with socket.socket() as closed:  # a loopback port where nothing listens (only loopback is ever probed)
        closed.bind(("127.0.0.1", 0))
        for address, says in (
            ("999.1.1.1:1", "is not an IP address"),
            (f"127.0.0.1:{closed.getsockname()[1]}", "no Ray"),
        ):
            t0 = time.monotonic()
            r = workbench("sweep", "--config", SWEEP, "--ray", address, "--runs-dir", "runs", cwd=tmp_path, timeout=60)
            lines = r.stderr.strip().splitlines()
            assert r.returncode == 2 and len(lines) == 1 and says in lines[0], r.stderr[-1500:]
            assert time.monotonic() - t0 < 10
    assert list(tmp_path.iterdir()) == [], "no store, no sweep folder"


def test_eval_reads_only_the_tasks_it_needs(folder, made_runs):
    """`eval --task FILE` read the whole file (100,000 tasks: 85 s) to evaluate 2: now it stops at the tasks it evaluates
    (here a file whose third line is not JSON evaluates its first two), and named ids it does not hold are one line."""
    rows = [
        {"id": f"t{i}", "prompt": f"def f{i}(x):\n", "entry": f"f{i}", "tests": [f"assert f{i}(1) == 1"]}
        for i in range(2)
    ]
    (folder / "big.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n" * 1000)
    before = listing(folder)
    lm = str(made_runs / "lm.pt")
    for task, n, tasks in (("big.jsonl", "2", 2), ("code?source=file&path=big.jsonl&ids=t1", "5", 1)):
        r = workbench_main("eval", lm, "--task", task, "--episodes", n, "--json")
        assert r.returncode == 0, r.stderr[-1500:]
        assert json.loads(r.stdout.strip().splitlines()[-1])["file"]["tasks"] == tasks
    (folder / "two.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, err = run_main(["eval", lm, "--task", "code?source=file&path=two.jsonl&ids=t1,t7,t8"])
    lines = err.strip().splitlines()
    assert (
        code == 2 and len(lines) == 1 and "has no task 't7', 't8': 2 of the 3 ids named are not among its 2" in lines[0]
    )
    code, err = run_main(["eval", lm, "--task", "big.jsonl", "--episodes", "3"])  # the third is read, and refused
    assert code == 2 and "task file big.jsonl, line 3: not JSON" in err, err
    (folder / "two.jsonl").unlink()
    assert listing(folder) == before


def test_export_hf_checks_before_it_writes(folder, made_runs):
    "`export_hf(run, dir, prompts=0)` raised ValueError after writing the folder: now every argument is checked first."
    from workbench.core import ConfigError
    from workbench.train.commands import export_hf

    before = listing(folder)
    for args, says in (
        ((made_runs / "lm.pt", "hf", 0), "prompts (held-out prompts whose logits are compared) must be"),
        ((made_runs / "lm.pt", "/proc/hf"), "cannot write in '/proc'"),
        ((made_runs / "lm.pt", None), "--hf takes the path of a new folder to write, got None"),
    ):
        with pytest.raises(ConfigError) as e:
            export_hf(*args)
        assert says in str(e.value) and "\n" not in str(e.value), str(e.value)
    assert listing(folder) == before


API_NAMES = {  # what the misuse table calls: name -> its module
    "make_policy": "workbench.policy", "PolicyConfig": "workbench.policy", "export_onnx": "workbench.policy.export",
    "check_onnx": "workbench.policy.export", "CompiledDecoder": "workbench.policy.decode",
    "make_decoder": "workbench.policy.decode", "RunStore": "workbench.runs.store", "Controls": "workbench.runs.events",
    "evaluate_policy": "workbench.judge.episodes", "Objective": "workbench.judge.objective",
    "load_tasks": "workbench.tasks.code", "CodeEnv": "workbench.tasks.env", "notebook_parameters": "workbench.jobs.notebook",
    "run_job": "workbench.jobs.notebook", "plan_batch": "workbench.jobs.batch", "check_ray_address": "workbench.jobs.schedule",
    "algorithm_of": "workbench.train.runner", "train_run": "workbench.train.runner", "new_trainer": "workbench.train.runner",
    "TrainingSession": "workbench.app.session", "MetricHistory": "workbench.app.session",
    "export_hf": "workbench.train.commands", "PPOTrainer": "workbench.train.ppo",
    "find_checkpoint": "workbench.train.checkpoint", "load_checkpoint": "workbench.train.checkpoint",
}  # fmt: skip


NAN, INF = float("nan"), float("inf")
# (the call, the project's error type it raises, a fragment of its one line); each raised a raw Python error (or
# went on: the knobs, Controls, RunStore('')) before issue 55's fixes
API_MISUSE = [
    (
        "make_policy(box, discrete, 'lstm')",
        lambda a: a["make_policy"](a["policy"].obs_space, a["policy"].action_space, "lstm"),
        "ConfigError",
        "make_policy takes a PolicyConfig (e.g. PolicyConfig(policy='lstm')), got str",
    ),
    (
        "export_onnx(None, 'p.onnx')",
        lambda a: a["export_onnx"](None, "p.onnx"),
        "ExportError",
        "export_onnx takes a policy",
    ),
    (
        "export_onnx(policy, None)",
        lambda a: a["export_onnx"](a["policy"], None),
        "ExportError",
        "takes the path of an .onnx file",
    ),
    (
        "export_onnx(policy, '/proc/no/p.onnx')",
        lambda a: a["export_onnx"](a["policy"], "/proc/no/p.onnx"),
        "ExportError",
        "cannot make the folder '/proc/no'",
    ),
    (
        "check_onnx(policy, 'missing.onnx')",
        lambda a: a["check_onnx"](a["policy"], "missing.onnx"),
        "ExportError",
        "no ONNX model at missing.onnx",
    ),
    (
        "check_onnx('policy', 'missing.onnx')",
        lambda a: a["check_onnx"]("policy", "missing.onnx"),
        "ExportError",
        "takes a policy",
    ),
    (
        "CompiledDecoder('policy')",
        lambda a: a["CompiledDecoder"]("policy"),
        "PolicyError",
        "CompiledDecoder decodes a TokenPolicy (TokenPolicy.tiny or TokenPolicy.load), got str",
    ),
    ("make_decoder('auto', None)", lambda a: a["make_decoder"]("auto", None), "PolicyError", "decodes a TokenPolicy"),
    (
        "RunStore(None)",
        lambda a: a["RunStore"](None),
        "ConfigError",
        "the runs folder must be a path (e.g. 'runs'), got None",
    ),
    (
        "RunStore('')",
        lambda a: a["RunStore"](""),
        "ConfigError",
        "the runs folder must be a path (e.g. 'runs'), got ''",
    ),
    (
        "Controls().set(learning_rate=nan)",
        lambda a: a["Controls"]().set(learning_rate=NAN),
        "ConfigError",
        "live setting learning_rate must be a finite number, got nan",
    ),
    ("Controls().set(ent_coef=inf)", lambda a: a["Controls"]().set(ent_coef=INF), "ConfigError", "got inf"),
    (
        "evaluate_policy(None, 'gym:CartPole-v1')",
        lambda a: a["evaluate_policy"](None, "gym:CartPole-v1"),
        "ConfigError",
        "evaluate_policy plays a policy (what make_policy or load_policy returns), got NoneType",
    ),
    (
        "evaluate_policy(policy, spec, episodes='3')",
        lambda a: a["evaluate_policy"](a["policy"], "gym:CartPole-v1", "3"),
        "ConfigError",
        "episodes must be at least 1 (a whole number), got '3'",
    ),
    (
        "Objective('satisfaction')",
        lambda a: a["Objective"]("satisfaction"),
        "JudgeError",
        "objective weights are a dict",
    ),
    (
        "Objective({'satisfaction': nan})",
        lambda a: a["Objective"]({"satisfaction": NAN}),
        "JudgeError",
        "objective weights must be finite numbers",
    ),
    (
        "load_tasks(None)",
        lambda a: a["load_tasks"](None),
        "TaskError",
        "a task file is a path (a JSON-lines file), got None",
    ),
    (
        "CodeEnv('code?level=easy')",
        lambda a: a["CodeEnv"]("code?level=easy"),
        "TaskError",
        "a code env's config is a CodeEnvConfig",
    ),
    (
        "notebook_parameters(None)",
        lambda a: a["notebook_parameters"](None),
        "JobError",
        "a notebook is the path of an .ipynb",
    ),
    ("run_job(None)", lambda a: a["run_job"](None), "JobError", "a notebook is the path of an .ipynb file, got None"),
    (
        "plan_batch(None, [])",
        lambda a: a["plan_batch"](None, []),
        "JobError",
        "a notebook is the path of an .ipynb file",
    ),
    (
        "check_ray_address('999.1.1.1:1')",
        lambda a: a["check_ray_address"]("999.1.1.1:1"),
        "JobError",
        "is not an IP address",
    ),
    (
        "algorithm_of('abc')",
        lambda a: a["algorithm_of"]("abc"),
        "ConfigError",
        "a run's config must be a TrainConfig, LMTrainConfig or TeamTrainConfig, got str",
    ),
    ("train_run('abc')", lambda a: a["train_run"]("abc"), "ConfigError", "a run's config must be a TrainConfig"),
    (
        "new_trainer({'env': 'gym:CartPole-v1'})",
        lambda a: a["new_trainer"]({"env": "gym:CartPole-v1"}),
        "ConfigError",
        "(from a dict of settings: TrainConfig.from_dict(settings))",
    ),
    (
        "TrainingSession(config='abc')",
        lambda a: a["TrainingSession"](config="abc"),
        "ConfigError",
        "a session's config must be a TrainConfig, LMTrainConfig or TeamTrainConfig, got str",
    ),
    ("TrainingSession(config={})", lambda a: a["TrainingSession"](config={}), "ConfigError", "got dict"),
    (
        "TrainingSession(samples_size='x')",
        lambda a: a["TrainingSession"](samples_size="x"),
        "ConfigError",
        "samples_size must be a whole number of at least 1, got 'x'",
    ),
    ("MetricHistory(max_points=0)", lambda a: a["MetricHistory"](max_points=0), "ConfigError", "max_points must be"),
    (
        "session.learning_rate = nan",
        lambda a: setattr(a["TrainingSession"](), "learning_rate", NAN),
        "ConfigError",
        "knob learning_rate must be a finite number above 0, got nan",
    ),
    (
        "session.ent_coef = nan",
        lambda a: setattr(a["TrainingSession"](), "ent_coef", NAN),
        "ConfigError",
        "knob ent_coef must be a finite number at least 0, got nan",
    ),
    (
        "session.learning_rate = 'fast'",
        lambda a: setattr(a["TrainingSession"](), "learning_rate", "fast"),
        "ConfigError",
        "got 'fast'",
    ),
    (
        "session.set_hparams(learning_rate=inf)",
        lambda a: a["TrainingSession"]().set_hparams(learning_rate=INF),
        "ConfigError",
        "config key 'learning_rate' must be a finite number, got inf",
    ),
    (
        "export_hf('missing.pt', 'hf', prompts=0)",
        lambda a: a["export_hf"]("missing.pt", "hf", prompts=0),
        "ConfigError",
        "prompts (held-out prompts whose logits are compared) must be 1 to 100, got 0",
    ),
    (
        "export_hf(None, 'hf')",
        lambda a: a["export_hf"](None, "hf"),
        "CheckpointError",
        "the checkpoint must be a checkpoint file or run folder, got None",
    ),
    ("PPOTrainer('abc')", lambda a: a["PPOTrainer"]("abc"), "ConfigError", "PPOTrainer takes a TrainConfig"),
    ("find_checkpoint(None)", lambda a: a["find_checkpoint"](None), "CheckpointError", "or of a run folder, got None"),
    ("load_checkpoint('')", lambda a: a["load_checkpoint"](""), "CheckpointError", "the path of a .pt file, got ''"),
]


@pytest.fixture(scope="module")
def api():
    import importlib

    import gymnasium

    a = {name: getattr(importlib.import_module(module), name) for name, module in API_NAMES.items()}
    a["policy"] = a["make_policy"](gymnasium.spaces.Box(-1, 1, (4,)), gymnasium.spaces.Discrete(2), a["PolicyConfig"]())
    return a


@pytest.mark.parametrize("label,call,error,message", API_MISUSE, ids=[m[0] for m in API_MISUSE])
def test_api_misuse_raises_the_projects_errors(folder, api, label, call, error, message):
    "The Python API, called with plainly wrong arguments: the project's own error type, one line, nothing written."
    before = listing(folder)
    with pytest.raises(WorkbenchError) as e:
        call(api)
    assert type(e.value).__name__ == error and message in str(e.value) and "\n" not in str(e.value), (
        type(e.value).__name__,
        str(e.value),
    )
    assert listing(folder) == before
