"""Training steps per second of the three policies on the trading job: MLP, LSTM and transformer, same work.

The work is the trading notebook's (`nbs/experiments/trading.ipynb`): the sample bars of AAPL, IBM, MSFT and
GOOG, 64 envs x 32 steps a rollout, 4 minibatches, 4 epochs, lr 3e-4, hidden size 64 (the LSTM: one layer of
64; the transformer: 2 layers, 2 heads, a window of 8). Each run is a fresh `workbench train` process with no
evaluations and no checkpoints; its steps per second are the trainer's own over the whole run. Runs go one at a
time, each after waiting for a quiet machine, and the table gives the median of the repeats and its ratio to the
MLP's (issue 22's goal: the LSTM and the transformer at least half the MLP).

    python bench/policy_sps.py                       # 300K steps a run, 3 repeats, torch threads 1 and 2
    python bench/policy_sps.py --steps 100000 --repeats 1 --threads 1
"""

import argparse, json, os, statistics, subprocess, sys, tempfile

from benchutil import versions, wait_for_quiet

POLICIES = ("mlp", "lstm", "transformer")


def run(policy: str, threads: int, args) -> dict:
    with tempfile.TemporaryDirectory(prefix="policy-sps-") as runs:
        cmd = [sys.executable, "-m", "workbench.cli", "train", "--env", "trading", "--policy", policy]
        cmd += ["--num-envs", "64", "--num-steps", "32", "--num-minibatches", "4", "--update-epochs", "4"]
        cmd += [
            "--learning-rate",
            "3e-4",
            "--total-steps",
            str(args.steps),
            "--seed",
            "1",
            "--torch-threads",
            str(threads),
        ]
        cmd += ["--eval-every", "0", "--checkpoint-every", "0", "--runs-dir", runs, "--quiet", "--json"]
        p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONWARNINGS="ignore"))
        if p.returncode:
            return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"}
        return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=300_000, help="env steps a run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch thread counts")
    ap.add_argument("--max-busy", type=float, default=0.15, help="wait until other processes use less than this ...")
    ap.add_argument("--max-wait", type=float, default=60.0, help="... for at most this many seconds")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    print(
        f"# trading job, 64 envs x 32 steps, 4 minibatches x 4 epochs, {args.steps:,} steps a run; {versions('torch')}"
    )
    results = []
    for rep in range(args.repeats):
        for threads in args.threads:
            for policy in POLICIES:
                busy = wait_for_quiet(args.max_busy, args.max_wait)
                r = run(policy, threads, args)
                results.append({"policy": policy, "threads": threads, "sps": r.get("sps"), "busy_before": busy, **r})
                sps = "failed: " + r["error"] if "error" in r else f"{r['sps']:,.0f} steps/s"
                print(f"  {policy:<12} threads {threads}: {sps}  [other load before: {busy:.0%}]", flush=True)
    print(f"\n{'threads':>7} " + " ".join(f"{p:>12}" for p in POLICIES) + "   lstm / mlp   transformer / mlp")
    for threads in args.threads:
        med = {}
        for p in POLICIES:
            xs = [r["sps"] for r in results if r["policy"] == p and r["threads"] == threads and r["sps"]]
            med[p] = statistics.median(xs) if xs else float("nan")
        print(
            f"{threads:>7} "
            + " ".join(f"{med[p]:>12,.0f}" for p in POLICIES)
            + f"   {med['lstm'] / med['mlp']:>10.2f}   {med['transformer'] / med['mlp']:>16.2f}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
