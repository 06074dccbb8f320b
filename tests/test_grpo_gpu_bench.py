"""`python -m bench grpo_gpu --quick` (`--cpu --tiny`), the CPU-sized run of the GPU benchmark: every part (the
decoders' tokens/s and their agreement, the packed log-probability pass against the padded one, our GRPO on- and
off-policy and TRL's `GRPOTrainer` with our judges as its reward) runs and is recorded, so that the script is ready
when a GPU is lent."""

import json, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_grpo_gpu_bench_runs_on_a_cpu(tmp_path):
    cli = [sys.executable, "-m", "bench", "grpo_gpu", "--quick", "--record", "--records", tmp_path, "--max-wait", "0"]
    r = subprocess.run(list(map(str, cli)), capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    (rec,) = [json.loads(line) for line in (tmp_path / "grpo_gpu.jsonl").read_text().splitlines()]
    assert rec["settings"]["device"] == "cpu" and rec["settings"]["tiny"] and rec["machine"]["kind"], rec["settings"]
    decode, logp, ours, trl, off = rec["raw"]
    assert all(decode[b]["tokens_per_s"] > 0 for b in ("loop", "compiled")), decode
    assert decode["compiled_agrees"] == decode["agree_prompts"] == 16 and decode["distinct_loop_completions"] > 1, (
        decode
    )
    assert logp["max_abs_diff_nats"] < 1e-3 and logp["packed"]["peak_gib"] > 0 and logp["padded"]["seconds"] > 0, logp
    assert ours["trainer"] == "workbench" and ours["steps"] == 2 and ours["updates_per_min"] > 0, ours
    assert ours["mfu"] > 0 and {"generate", "judge", "logprob", "update", "waiting", "other"} <= set(
        ours["time_split_s"]
    )
    assert off["trainer"] == "workbench-off-policy" and off["updates_per_min"] > 0 and off["sampler"] == "copy", off
    assert trl["trainer"] == "trl" and trl["updates_per_min"] > 0, trl
    assert 0.0 <= trl["reward_mean"] <= 1.0, (
        trl
    )  # TRL's GRPOTrainer trained with our judges as its reward (`trl_reward`)
    f = rec["figures"]  # the record's figures, as the runner printed them
    assert f["ours_over_trl"] > 0 and f["decode_loop_tokens_per_s"] > 0 and f["logp_packed_seconds"] > 0, f
    assert "ours_updates_per_min:" in r.stdout and "decode_compiled_tokens_per_s:" in r.stdout
