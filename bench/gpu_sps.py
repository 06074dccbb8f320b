"""Training throughput on one GPU: workbench's PPOTrainer against PufferLib 3.0's PuffeRL on a C env, same work.

Issue 22's GPU set, ready for when a GPU is lent (CI and the 2-core machine have none). Each trainer runs in a fresh
process through `sps_puffer_cartpole.py`'s workers (the same settings on both sides, see that file) on PufferLib's
C cartpole with thousands of agents in one env object, on CUDA, in fp32, in bf16 and in bf16 with torch.compile;
while a run goes, this process samples the GPU's utilisation and memory through NVML every 0.2 s. The table gives
steps/s over the steady part of each run (from its 2nd update), ours over PuffeRL's for the same settings, and the
mean GPU utilisation. The goal: at least 1M steps/s and ahead of PuffeRL.

    python -m bench gpu_sps                                  # 4096 and 16384 agents, 20M steps a run
    python -m bench gpu_sps --num-envs 4096 --steps 5000000 --records $OUT/records   # (tools/gpu/run.sh's form)
    python -m bench gpu_sps --num-envs 4096 --precisions fp32 --policy lstm   # our LSTM against PuffeRL's LSTMWrapper
    python -m bench gpu_sps --device cpu --num-envs 256 --steps 300000 --no-compile --no-record   # on a CPU
    python -m bench gpu_sps --num-envs 16384 --precisions fp32 --workers 8 --env-batches 2   # EnvPool: halves in turn
    python -m bench gpu_sps --env breakout --num-envs 4096 --precisions fp32   # a heavier Ocean env than cartpole
    python -m bench gpu_sps --quick                          # a smoke test: 64 agents, 3 updates (on a CPU without CUDA)

PuffeRL uses its CUDA advantage kernel when PufferLib was built with nvcc (its import says which); ours computes
GAE in torch on the device.
"""

import statistics, sys, threading, time, types

from benchutil import versions
from runner import bootstrap_ratio, fail, fresh, interval, make_table


class GpuSampler:
    "Mean GPU utilisation and peak memory of device 0 through NVML while it runs (nothing without a GPU)."

    def __init__(self, period: float = 0.2):
        self.period, self.util, self.mem, self._stop = period, [], [], threading.Event()
        try:
            import warnings

            with warnings.catch_warnings():  # the pynvml wheel's notice that nvidia-ml-py replaces it
                warnings.simplefilter("ignore")
                import pynvml
            pynvml.nvmlInit()
            self.nvml, self.handle = pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception:
            self.nvml = None

    def __enter__(self):
        if self.nvml:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()
        return self

    def _run(self):
        while not self._stop.wait(self.period):
            self.util.append(self.nvml.nvmlDeviceGetUtilizationRates(self.handle).gpu)
            self.mem.append(self.nvml.nvmlDeviceGetMemoryInfo(self.handle).used / 2**30)

    def __exit__(self, *exc):
        self._stop.set()
        if self.nvml:
            self.thread.join()

    def summary(self) -> dict:
        if not self.util:
            return {"gpu_util": None, "gpu_mem_gb": None}
        return {"gpu_util": statistics.mean(self.util), "gpu_mem_gb": max(self.mem)}


# Settings of a row: "+eager" is ours with the rollout's step run eagerly instead of replayed as a CUDA graph (PuffeRL
# has no such switch: that row runs ours alone, beside the fp32 row's graphed run).
PRECISIONS = {
    "fp32": {},
    "fp32+eager": {"no_cuda_graphs": True},
    "bf16": {"bf16": True},
    "bf16+compile": {"bf16": True, "compile": True},
    "bf16+compile-graphs": {"bf16": True, "compile": True, "compile_mode": "reduce-overhead"},  # both trainers' graphs
    "fp32+compile-graphs": {"compile": True, "compile_mode": "reduce-overhead"},  # torch's graphs in place of ours
}


def one(trainer: str, num_envs: int, precision: str, args) -> dict:
    batch = num_envs * args.horizon
    work = dict(threads=args.threads, num_envs=num_envs, horizon=args.horizon, minibatch=min(args.minibatch, batch),
                updates=max(3, args.steps // batch), policy=args.policy, env=args.env, env_option=args.env_option or [],
                device=args.device, workers=args.workers, env_batches=args.env_batches, **PRECISIONS[precision])  # fmt: skip
    with GpuSampler() as gpu:
        t0 = time.perf_counter()
        function = "run_ours" if trainer == "workbench" else "run_puffer"
        result = fresh("sps_puffer_cartpole", function, timeout=args.worker_timeout, **work)
        wall = time.perf_counter() - t0
    return {"trainer": trainer, "num_envs": num_envs, "precision": precision, "wall_s": wall, **result, **gpu.summary()}


def options(p):
    p.add_argument("--device", default="cuda", help="cuda (the point), or cpu to try the script")
    p.add_argument("--env", default="cartpole", help="PufferLib Ocean C env")
    p.add_argument("--env-option", action="append", help="K=V, an env option for both trainers (report_interval=64)")
    p.add_argument("--num-envs", type=int, nargs="+", default=[4096, 16384], help="agents in the one env object")
    p.add_argument("--horizon", type=int, default=64)
    p.add_argument("--minibatch", type=int, default=32768)
    p.add_argument("--steps", type=int, default=20_000_000, help="env steps a run")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads in each worker")
    p.add_argument("--workers", type=int, default=1, help="env worker processes (1: the env in the trainer's process)")
    p.add_argument("--env-batches", type=int, default=1, help="batches of env workers stepped in turn (both trainers)")
    p.add_argument("--policy", default="mlp", choices=["mlp", "lstm"], help="lstm: ours against LSTMWrapper")
    p.add_argument(
        "--precisions", nargs="+", default=["fp32", "fp32+eager", "bf16", "bf16+compile"], choices=list(PRECISIONS)
    )
    p.add_argument("--no-compile", action="store_true", help="leave out the torch.compile runs")
    p.add_argument("--worker-timeout", type=float, default=300, help="seconds before a run counts as failed")
    p.add_argument("--repeats", type=int, default=1, help="runs of each trainer, in turn; the ratio of the medians")
    p.add_argument("--ours-only", action="store_true", help="leave PuffeRL out: our settings against each other")


FIGURES = {f"{w}_{n}_{p}": "higher" for w in ("ours", "puffer", "ratio") for n in (2**k for k in range(6, 21))
           for p in PRECISIONS}  # fmt: skip


def report(r: dict, trainer: str, n: int, precision: str):
    util = "-" if r["gpu_util"] is None else f"{r['gpu_util']:.0f}%"
    sps = f"{r['sps']:>12,.0f} steps/s" if r.get("sps") else f"failed: {r.get('error')}"
    print(f"  {trainer:<10} {n:>6} agents {precision:<13} {sps}  GPU {util}", flush=True)
    if r.get("split_ms"):  # where our iteration's time went
        print("             ms an iteration: " + ", ".join(f"{k} {v:.1f}" for k, v in r["split_ms"].items()))


def run(quick=False, **kw) -> dict:
    import warnings

    warnings.filterwarnings("ignore", message="The pynvml package is deprecated")
    import torch

    a = types.SimpleNamespace(**kw)
    if quick:  # a smoke test of the script: 64 agents, 3 short updates, fp32, on the CPU where there is no GPU
        a.num_envs, a.steps, a.precisions, a.repeats = [64], 64 * a.horizon * 3, ["fp32"], 1
        a.device = a.device if torch.cuda.is_available() else "cpu"
    if a.device == "cuda" and not torch.cuda.is_available():
        fail("gpu_sps: no CUDA GPU here (run it where one is lent, or pass --device cpu to try it)")
    gpu = torch.cuda.get_device_name(0) if a.device == "cuda" else "none"
    envs = f"{a.workers} env workers in {a.env_batches} batch(es)" if a.workers > 1 else "envs in-process"
    opts = f" ({', '.join(a.env_option)})" if a.env_option else ""
    print(f"# {a.env}{opts}, {a.policy}, {envs}, on {a.device} ({gpu})")
    precisions = [p for p in a.precisions if not (a.no_compile and "compile" in p)]
    raw, figures, ci = [], {}, {}
    for n in a.num_envs:
        for precision in precisions:
            pair = {"workbench": [], "pufferlib": []}
            for _ in range(a.repeats):  # the two trainers in turn, so that a drift of the machine hits both
                for trainer in ("workbench",) if "eager" in precision or a.ours_only else ("workbench", "pufferlib"):
                    raw.append(r := one(trainer, n, precision, a))
                    report(r, trainer, n, precision)
                    if r.get("sps"):
                        pair[trainer].append(r["sps"])
            for trainer, key in (("workbench", "ours"), ("pufferlib", "puffer")):
                if pair[trainer]:
                    figures[f"{key}_{n}_{precision}"] = round(statistics.median(pair[trainer]))
            if pair["workbench"] and pair["pufferlib"]:
                figures[f"ratio_{n}_{precision}"] = round(
                    figures[f"ours_{n}_{precision}"] / figures[f"puffer_{n}_{precision}"], 3
                )
                if a.repeats > 1:
                    ci[f"ratio_{n}_{precision}"] = bootstrap_ratio(
                        pair["workbench"], pair["pufferlib"], stat=statistics.median
                    )
    settings = {k: v for k, v in vars(a).items() if k != "worker_timeout"} | {"precisions": precisions}
    return {"settings": settings, "figures": figures, "ci95": ci, "raw": raw,
            "versions": versions("torch", "pufferlib"), "device": gpu}  # fmt: skip


def table(records: list) -> str:
    "A row a size x precision of each full run: ours and PuffeRL's steps/s (medians of the repeats), their ratio."

    def cells(rec):
        f, s, rows = rec["figures"], rec["settings"], []
        where = ([f"{s['env']}"] if s["env"] != "cartpole" else []) + [
            s["policy"].upper() if s["policy"] == "mlp" else "LSTM 128"
        ]
        where += [
            f"{s['workers']} env workers" + (f", {s['env_batches']} batches in turn" if s["env_batches"] > 1 else "")
        ] * (s["workers"] > 1)
        where += [f"`{o}` (both)" for o in s.get("env_option") or []]
        for n in s["num_envs"]:
            for p in s["precisions"]:
                if f"ours_{n}_{p}" in f:
                    ours, theirs = f[f"ours_{n}_{p}"], f.get(f"puffer_{n}_{p}")
                    ratio = f"**{f[f'ratio_{n}_{p}']:.2f}**{interval(rec, f'ratio_{n}_{p}')}" if theirs else ""
                    rows.append(
                        [
                            ", ".join(where[:1] + [f"{n:,} agents", p] + where[1:]),
                            f"{ours:,}",
                            f"{theirs:,}" if theirs else "",
                            ratio,
                        ]
                    )
        return rows

    return make_table(["settings", "ours steps/s", "PuffeRL", "ours / PuffeRL [95% CI]"], records, cells)


if __name__ == "__main__":  # (the same as `python -m bench gpu_sps`)
    from runner import main

    sys.exit(main(["gpu_sps", *sys.argv[1:]]))
