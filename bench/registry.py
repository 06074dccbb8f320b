"""The benchmarks `python -m bench` knows: each one's name (its script in bench/, unless `module` says), what it
measures and about how long a full run takes on a 2-core build machine. bench/README.md is written from it."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Benchmark:
    name: str
    measures: str
    minutes: float  # a full run on a 2-core build machine, about
    module: str = ""  # the script in bench/ (default: the name)


BENCHMARKS = {
    b.name: b
    for b in [
        Benchmark(
            "planpath_sps", "Plan-Path grid steps/s on one core: the numpy env against one Python object a grid", 1.5
        ),
        Benchmark(
            "trading_sps", "trading env steps/s on one core: the numpy env against a one-account Gymnasium env", 1.5
        ),
        Benchmark("grpo_throughput", "GRPO updates/min: workbench (on- and off-policy) against TRL's GRPOTrainer", 4),
        Benchmark(
            "grpo_offpolicy", "GRPO one step off-policy against on-policy: reward curves and val pass@1, 3 seeds", 12
        ),
        Benchmark(
            "solve_cartpole",
            "time to solve CartPole-v1 (greedy 100-episode mean >= 475): workbench against PuffeRL and SB3, per seed",
            3,
        ),
        Benchmark(
            "sps_puffer_cartpole",
            "PPO training steps/s on PufferLib's C cartpole: workbench against PuffeRL, the same work, 1 and 2 threads",
            6,
        ),
        Benchmark(
            "policy_sps",
            "PPO steps/s of the MLP, LSTM and transformer policies on the trading job, 1 and 2 threads",
            8,
        ),
        Benchmark(
            "judge_benchmark",
            "each judge's agreement with the labelled benchmark (500 items): accuracy, ROC AUC, Spearman, ms/item",
            7,
        ),
        Benchmark(
            "judge_overlap",
            "GRPO steps/min with the sandboxed judges beside generation against after it, on 2 cores",
            4,
        ),
        Benchmark(
            "dashboard_overhead",
            "training steps/s with the live dashboard open in Chromium, against none, alternating",
            4,
        ),
        Benchmark(
            "job_overhead", "a notebook job's overhead over a script, 2 processes against 1, a batch's speed-up", 7
        ),
        Benchmark(
            "data_parallel",
            "PPO in 2 processes (shared-memory all-reduce, DDP over gloo) against 1 with the same total batch",
            3,
        ),
        Benchmark(
            "sweep_cartpole", "Protein against random search: the best time to solve CartPole-v1 found in 16 trials", 44
        ),
        Benchmark("pbt_pendulum", "population-based training against the same population with fixed settings", 6),
        Benchmark("runs_page", "the Runs page's load in Chromium and the store's read, at 20, 200 and 1,000 runs", 2),
        Benchmark(
            "ocean",
            "PPO on PufferLib's Ocean envs (squared, pong): perf against PuffeRL with PufferLib's configs, 3 seeds",
            30,
        ),
        Benchmark(
            "defaults_check",
            "the defaults' greedy return over seeds and three builds of the arithmetic (CartPole-v1, Pendulum-v1)",
            25,
        ),
        Benchmark(
            "compile_vs_c",
            "PPO steps/s of the C kernels against the torch backend, eager and torch.compile'd, per job x policy x threads",
            20,
        ),
        Benchmark(
            "kernel_flags",
            "the C kernels built with the old -ffast-math flags against today's: training steps/s, or each call's time",
            15,
        ),
        Benchmark(
            "gpu_sps",
            "PPO steps/s on one GPU: workbench against PuffeRL on a C env with thousands of agents (fp32, bf16, compiled)",
            8,
        ),
        Benchmark(
            "grpo_gpu",
            "on one GPU, a 0.5B-shaped Qwen2: the decoders' tokens/s, the log-probability pass, GRPO against TRL's",
            7,
        ),
        Benchmark(
            "tree_ab",
            "the same work from two source trees, alternating (--old TREE): PPO steps/s, or the judge's seconds",
            5,
        ),
        Benchmark(
            "codeio_heldout",
            "SmolLM2-135M GRPO on CodeI/O's programs: greedy pass@1 before and after on HumanEval and held-out programs",
            180,
        ),
        Benchmark(
            "humaneval_harness",
            "our HumanEval harness against a maker's published score: greedy pass@1 of models as they are",
            20,
        ),
        Benchmark(
            "real_model",
            "a real pretrained model (SmolLM2-135M-Instruct, LoRA) through GRPO: greedy pass@1 before and after, held out",
            35,
        ),
        Benchmark(
            "cli_startup",
            "the command line's start-up: --help, a bad flag, a short run's first step (--old TREE: against a commit)",
            2,
        ),
        Benchmark(
            "zoo",
            "PPO's greedy return against SB3 with rl-zoo's rows, same env, budget and seeds (--envs, --seeds, --set)",
            60,
        ),
    ]
}
