"""Training steps per second of the three policies on the trading job: MLP, LSTM and transformer, same work.

The work is the trading notebook's (`nbs/experiments/trading.ipynb`): the sample bars of AAPL, IBM, MSFT and
GOOG, 64 envs x 32 steps a rollout, 4 minibatches, 4 epochs, lr 3e-4, hidden size 64 (the LSTM: one layer of
64; the transformer: 2 layers, 2 heads, a window of 8). Each run is a fresh `workbench train` process with no
evaluations and no checkpoints; its steps per second are the trainer's own over the whole run. Runs go one at a
time, each after waiting for a quiet machine, the policies' order turned from one repeat to the next; the table
gives the median of the repeats and its ratio to the MLP's, with a bootstrap 95% interval (issue 22's goal: the
LSTM and the transformer at least half the MLP).

    python -m bench policy_sps                       # 200K steps a run, 3 repeats, torch threads 1 and 2
    python -m bench policy_sps --steps 100000 --repeats 1 --threads 1 --no-record
"""

import json, os, statistics, subprocess, sys, tempfile

from benchutil import versions
from runner import bootstrap_ratio, interval, make_table

POLICIES = ("mlp", "lstm", "transformer")
FIGURES = {f"{k}_t{t}": "higher" for t in (1, 2) for k in ("mlp_sps", "lstm_sps", "transformer_sps")}


def train(policy: str, threads: int, steps: int) -> dict:
    "One `workbench train` run of the trading job: its summary (sps among it), or {'error': its last line}."
    with tempfile.TemporaryDirectory(prefix="policy-sps-") as runs:
        cmd = [sys.executable, "-m", "workbench.cli", "train", "--env", "trading", "--policy", policy, "--num-envs", "64",
               "--num-steps", "32", "--num-minibatches", "4", "--update-epochs", "4", "--learning-rate", "3e-4",
               "--total-steps", str(steps), "--seed", "1", "--torch-threads", str(threads), "--eval-every", "0",
               "--checkpoint-every", "0", "--runs-dir", runs, "--quiet", "--json"]  # fmt: skip
        p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONWARNINGS="ignore"))
        if p.returncode:
            return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"}
        return json.loads(p.stdout.strip().splitlines()[-1])


def options(p):
    p.add_argument("--steps", type=int, default=200_000, help="env steps a run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch thread counts")


def run(quick: bool = False, steps: int = 200_000, repeats: int = 3, threads=(1, 2), quiet=lambda: 0.0) -> dict:
    if quick:
        steps, repeats, threads = 8_192, 1, [1]
    raw = []
    for rep in range(repeats):
        for t in threads:
            for policy in POLICIES[rep % 3 :] + POLICIES[: rep % 3]:
                busy = quiet()
                r = train(policy, t, steps)
                raw.append({"policy": policy, "threads": t, "sps": r.get("sps"), "busy_before": round(busy, 3),
                            **({"error": r["error"]} if "error" in r else {})})  # fmt: skip
                print(f"  {policy:<12} threads {t}: " + (r["error"] if "error" in r else f"{r['sps']:,.0f} steps/s"))
    figures, ci = {}, {}
    for t in threads:
        sps = {p: [r["sps"] for r in raw if r["policy"] == p and r["threads"] == t and r["sps"]] for p in POLICIES}
        if not all(sps.values()):
            continue
        for p in POLICIES:
            figures[f"{p}_sps_t{t}"] = round(statistics.median(sps[p]))
        for p in POLICIES[1:]:
            figures[f"{p}_over_mlp_t{t}"] = round(figures[f"{p}_sps_t{t}"] / figures[f"mlp_sps_t{t}"], 3)
            if repeats > 1:
                ci[f"{p}_over_mlp_t{t}"] = bootstrap_ratio(sps[p], sps["mlp"], stat=statistics.median)
    return {"settings": {"steps": steps, "repeats": repeats, "threads": list(threads)}, "figures": figures,
            "ci95": ci, "raw": raw, "versions": versions("torch")}  # fmt: skip


def table(records: list) -> str:
    "A row a thread count of each full run: each policy's median steps/s, the sequence policies' share of the MLP's."

    def cells(rec):
        f = rec["figures"]
        return [[str(t), *(f"{f[f'{p}_sps_t{t}']:,}" for p in POLICIES),
                 *(f"{f[f'{p}_over_mlp_t{t}']:.2f}{interval(rec, f'{p}_over_mlp_t{t}')}" for p in POLICIES[1:])]
                for t in rec["settings"]["threads"] if f"mlp_sps_t{t}" in f]  # fmt: skip

    return make_table(["torch threads", "MLP steps/s", "LSTM", "transformer", "LSTM / MLP [95% CI]",
                       "transformer / MLP [95% CI]"], records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench policy_sps`)
    from runner import main

    sys.exit(main(["policy_sps", *sys.argv[1:]]))
