"""GRPO of a real-sized model on one GPU: the decoders against each other, and Workbench's GRPO against TRL's.

The model is Qwen2.5-0.5B-shaped (896 wide, 24 blocks, 14 heads of which 2 key/value, 4,864 FFN, 151,936 tokens,
tied embeddings) with random weights, built here from its config with a BPE tokenizer trained on the task corpus
(nothing downloaded; ids the small tokenizer lacks decode to nothing), or `--model` (a folder or hub id in the cache).
In bf16 on CUDA. Parts, each in a process of its own (peak memory is each one's), results written as JSON lines:

* `decode`: generation tokens/s of each decoder (loop, compiled, vllm where installed) at `--batch` prompts x
  `--tokens` new tokens, sampled at temperature 1 with no stop sequence (every row runs to its length), after one
  warm-up call of the same shape (compilation), and its peak memory;
  then (`agree`) greedy completions of the loop and the compiled decoder (and vLLM) for the same weights, in fp32, on a
  2-block model of the same shape whose weights are scaled so that greedy tokens are not ties: how many equal;
* `logp`: the log-probability pass of GRPO's update (forward and backward) over `--prompts` x `--group` completions of
  `--tokens` tokens after 96-token prompts, on a 2-block model with the real vocabulary (the logits are what matter):
  packed and chunked (`policy.passes`, the default) against padded with every token's logits at once (the reference):
  the largest difference of their log-probabilities, each one's time and peak memory (on a CPU the process's peak RSS:
  the packed pass runs first, so the second peak is the padded one's);
* `ours` / `trl`: GRPO steps of `--prompts` tasks x G `--group` with up to `--tokens` new tokens, full weights, no KL,
  DAPO loss, the code env's reward (TRL through `workbench.tasks.eval.trl_reward`), no vLLM: updates/min over the steps
  after the first (which compiles), peak memory, and ours' time split, MFU estimate and sampler-trainer gap (in bf16 it
  samples from a bf16 copy of the weights); `ours-off`: ours one step off-policy (the next step's samples generated
  beside this step's update).

    python -m bench grpo_gpu                           # on a GPU: all of it (tools/gpu/grpo.sh runs it there)
    python -m bench grpo_gpu --quick                   # --cpu --tiny: the same parts on a CPU with a tiny model, ~1 min
"""

import itertools, json, sys, tempfile, time, types

from runner import fresh, make_table

QWEN_05B = dict(hidden_size=896, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2, intermediate_size=4864,
                vocab_size=151936, max_position_embeddings=32768, rope_theta=1e6, tie_word_embeddings=True)  # fmt: skip
TINY = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, intermediate_size=128,
            vocab_size=512, max_position_embeddings=512, tie_word_embeddings=True)  # fmt: skip


def prompts(n: int) -> list:
    from workbench.tasks.code import task_stream

    return [t.prompt for t in itertools.islice(task_stream("easy", 0, "train"), n)]


def make_model(folder: str, shape: dict, layers=None, scale: float = 1.0) -> str:
    "A Qwen2 model of `shape` with random weights (times `scale`) and a tokenizer trained here, saved in `folder`."
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from workbench.policy.models import train_tokenizer

    tok = train_tokenizer(prompts(300 if shape is TINY else 2000), min(shape["vocab_size"], 4096))
    cfg = Qwen2Config(**{**shape, **({"num_hidden_layers": layers} if layers else {})}, bos_token_id=None,
                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)  # fmt: skip
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(cfg)
    if scale != 1.0:
        with torch.no_grad():
            for w in model.parameters():
                w.mul_(scale)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def tiny_model(folder) -> str:
    "The tiny Qwen2 (random weights) in `folder`, made there unless it is: the quick runs' model of the LM benchmarks."
    from pathlib import Path

    if not (Path(folder) / "config.json").exists():
        make_model(str(folder), TINY)
    return str(folder)


def load(folder: str, device: str, dtype: str):
    import torch
    from workbench.policy.tokens import TokenPolicy

    policy = TokenPolicy.load(folder, dtype=getattr(torch, dtype))
    policy.model.to(device)
    return policy


def peak(device: str) -> float:
    import torch

    return round(torch.cuda.max_memory_allocated() / 2**30, 2) if device.startswith("cuda") else None


def decode(a) -> dict:
    """Tokens/s of each decoder at batch x tokens, after a warm-up call of the same shape, with its peak memory; then how
    many of each one's greedy completions equal the loop's (`agree`). One process: the model is built once."""
    import torch
    from workbench.policy.decode import make_decoder

    policy = load(a.folder, a.device, a.dtype)
    batch, out = prompts(a.batch), {"part": "decode", "batch": a.batch, "new_tokens": a.tokens}

    def once():
        t0 = time.perf_counter()
        done = policy.generate(batch, max_new_tokens=a.tokens, temperature=1.0, stop=(), batch_size=a.batch)
        if a.device.startswith("cuda"):
            torch.cuda.synchronize()
        return time.perf_counter() - t0, sum(len(s.completion_ids) for s in done)

    for backend in a.backends:
        try:
            policy.generator = make_decoder(backend, policy)
            if a.device.startswith("cuda"):
                torch.cuda.reset_peak_memory_stats()
            warm, _ = once()
            seconds, tokens = once()
            out[backend] = {"tokens": tokens, "seconds": round(seconds, 3), "tokens_per_s": round(tokens / seconds, 1),
                            "warmup_s": round(warm, 1), "peak_gib": peak(a.device)}  # fmt: skip
        except Exception as e:  # one decoder failing (vLLM missing a piece) leaves the others' figures
            out[backend] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
        policy.generator = None
    return {**out, **agree(a, [b for b in a.backends if b != "loop" and "error" not in out[b]])}


def agree(a, backends) -> dict:
    "Greedy completions of each decoder for the same weights (fp32): how many equal the loop's."
    from workbench.policy.decode import make_decoder

    folder = make_model(tempfile.mkdtemp(prefix="agree-"), TINY if a.tiny else QWEN_05B, layers=2, scale=6.0)
    policy = load(folder, a.device, "float32")
    batch = prompts(16)
    loop = [s.completion_ids for s in policy.generate(batch, max_new_tokens=48, temperature=0)]
    out = {"agree_prompts": len(batch), "distinct_loop_completions": len(set(map(tuple, loop)))}
    for backend in backends:
        policy.generator = make_decoder(backend, policy)
        other = [s.completion_ids for s in policy.generate(batch, max_new_tokens=48, temperature=0)]
        out[f"{backend}_agrees"] = sum(x == y for x, y in zip(loop, other))
    # GRPO's bf16 sampler (a bf16 copy of the weights) against the fp32 loop: whole completions alike, and the share of
    # each decoded alike before a first difference (these scaled weights make logits large: bf16 parts sooner than a
    # trained model's would)
    import torch
    from workbench.policy.decode import SamplerCopy

    policy.generator = None
    half = SamplerCopy(policy, "compiled" if a.device.startswith("cuda") else "loop", torch.bfloat16)
    other = [s.completion_ids for s in half.policy.generate(batch, max_new_tokens=48, temperature=0)]
    same = lambda x, y: next((i for i, (u, v) in enumerate(zip(x, y)) if u != v), min(len(x), len(y))) / max(1, len(x))
    out["bf16_copy_agrees"] = sum(x == y for x, y in zip(loop, other))
    out["bf16_copy_prefix_share"] = round(sum(same(x, y) for x, y in zip(loop, other)) / len(loop), 3)
    return out


def logp(a) -> dict:
    """The packed, chunked log-probability pass against the padded one on the same completions: the largest difference,
    and each one's seconds and peak memory (forward and backward)."""
    import resource
    import torch
    from workbench.policy.tokens import TokenPolicy

    torch.manual_seed(0)
    folder = make_model(tempfile.mkdtemp(prefix="logp-"), TINY if a.tiny else QWEN_05B, layers=2)
    policy = TokenPolicy.load(folder, dtype=getattr(torch, a.dtype))
    policy.model.to(a.device)
    vocab, n = policy.model.config.vocab_size, a.prompts * a.group
    g = torch.Generator().manual_seed(1)
    prompt_ids = [torch.randint(0, vocab, (96,), generator=g).tolist() for _ in range(n)]
    lengths = torch.randint(a.tokens // 4, a.tokens + 1, (n,), generator=g).tolist()  # completions of many lengths
    completion_ids = [torch.randint(0, vocab, (k,), generator=g).tolist() for k in lengths]
    out, values = {"part": "logp", "completions": n, "tokens": sum(lengths), "vocab": vocab}, {}
    for name, packed in (("packed", True), ("padded", False)):  # (packed first: a CPU's peak RSS only grows)
        policy.packed = packed
        if a.device.startswith("cuda"):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        lp, mask = policy.completion_logprobs(prompt_ids, completion_ids, 1.0)
        (lp * mask).sum().backward()
        if a.device.startswith("cuda"):
            torch.cuda.synchronize()
        policy.model.zero_grad(set_to_none=True)
        values[name] = (lp.detach().float() * mask).cpu()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
        out[name] = {"seconds": round(time.perf_counter() - t0, 2), "peak_gib": peak(a.device) or round(rss, 2)}
        del lp, mask
    out["max_abs_diff_nats"] = float((values["packed"] - values["padded"]).abs().max())
    return out


def ours(a) -> dict:
    from workbench.runs.events import Kind
    from workbench.train.grpo import GRPOTrainer
    from workbench.train.lm import LMTrainConfig

    cfg = LMTrainConfig.from_dict(
        {"algo": "grpo", "model": a.folder, "updates": a.steps + 1, "batch_size": a.prompts, "group_size": a.group,
         "max_new_tokens": a.tokens, "temperature": 1.0, "beta": 0.0, "loss_type": "dapo", "learning_rate": 1e-6,
         "warmup": 0, "eval_every": 0, "checkpoint_every": 0, "curriculum": False, "device": a.device,
         "bf16": a.dtype == "bfloat16", "generator": a.generator, "micro_batch": a.micro_batch,
         "gen_batch": a.prompts * a.group, "torch_threads": None if a.device.startswith("cuda") else 1,
         "off_policy": a.off_policy}
    )  # fmt: skip
    trainer, events = GRPOTrainer(cfg), []
    trainer.bus.subscribe(events.append)
    trainer.fit()
    trainer.bus.flush()
    steps = [e.data for e in events if e.kind == Kind.UPDATE][1:]  # the first compiles
    wall = sum(u["perf/step_time"] for u in steps)
    gen = sum(u["perf/generate_time"] for u in steps)
    tokens = sum(u.get("perf/tokens_per_s", 0.0) * u["perf/generate_time"] for u in steps)
    mean = lambda k: round(sum(u[k] for u in steps) / len(steps), 4)
    return {"part": "grpo", "trainer": "workbench" + ("-off-policy" if a.off_policy else ""), "generator": a.generator,
            "steps": len(steps), "updates_per_min": round(60 * len(steps) / wall, 2),
            "tokens_per_s_generating": round(tokens / max(gen, 1e-9), 1), "generate_share": round(gen / wall, 3),
            "mean_completion": round(tokens / (len(steps) * a.prompts * a.group), 1), "peak_gib": peak(a.device),
            "sampler": "bf16 copy" if trainer.sampler and trainer.sampler.policy.model.dtype != trainer.policy.model.dtype
            else "copy" if trainer.sampler else "the trained weights",
            "time_split_s": {k.split("/")[1]: mean(k) for k in steps[0] if k.startswith("time/")},
            "mfu": mean("perf/mfu"), "mismatch_rms": mean("perf/mismatch_rms"), "mismatch_max": mean("perf/mismatch_max"),
            "tis_clip": mean("losses/tis_clip")}  # fmt: skip


def trl(a) -> dict:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer
    from workbench.tasks.code import task_stream
    from workbench.tasks.eval import trl_reward

    import datasets.fingerprint as fingerprint

    hash_ = fingerprint.Hasher.hash.__func__

    def hash_or_random(cls, value):  # on the GPU image (Python 3.12) datasets' dill could not pickle a pyarrow type
        try:  # (MonthDayNano) while fingerprinting: a random fingerprint names the in-memory data instead, as datasets
            return hash_(cls, value)  # itself does where a transform cannot be hashed; nothing TRL computes changes
        except Exception:
            return fingerprint.generate_random_fingerprint()

    fingerprint.Hasher.hash = classmethod(hash_or_random)
    tasks = list(itertools.islice(task_stream("easy", 0, "train"), a.prompts * (a.steps + 1)))
    data = Dataset.from_list([{"prompt": t.prompt, "task": json.dumps(t.to_dict())} for t in tasks])
    times = []

    class Clock(TrainerCallback):
        def on_step_begin(self, *args, **kw):
            times.append(time.perf_counter())

    cuda = a.device.startswith("cuda")
    args = GRPOConfig(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=a.prompts * a.group, num_generations=a.group,
                      max_completion_length=a.tokens, temperature=1.0, beta=0.0, loss_type="dapo", learning_rate=1e-6,
                      max_steps=a.steps + 1, logging_steps=1, report_to="none", use_cpu=not cuda,
                      bf16=cuda and a.dtype == "bfloat16", save_strategy="no", dataloader_num_workers=0,
                      shuffle_dataset=False)  # fmt: skip
    trainer = GRPOTrainer(
        model=a.folder, reward_funcs=[trl_reward()], args=args, train_dataset=data, callbacks=[Clock()]
    )
    trainer.train()
    times.append(time.perf_counter())
    rate = round(60 * a.steps / (times[-1] - times[1]), 2)
    rewards = [x["rewards/code_reward/mean"] for x in trainer.state.log_history if "rewards/code_reward/mean" in x]
    return {
        "part": "grpo",
        "trainer": "trl",
        "steps": a.steps,
        "updates_per_min": rate,
        "peak_gib": peak(a.device),
        "reward_mean": sum(rewards) / len(rewards) if rewards else None,
    }  # our judges, as TRL logged them


def worker(**kw) -> dict:
    "One part in this (fresh) process (`runner.fresh`)."
    a = types.SimpleNamespace(**kw)
    if a.device == "cpu":  # one thread each, as grpo_throughput: the same footing, and CI's 2 cores not oversubscribed
        import torch

        torch.set_num_threads(1)
    a.off_policy = a.worker == "ours-off"
    return {"decode": decode, "logp": logp, "ours": ours, "ours-off": ours, "trl": trl}[a.worker](a)


def options(p):
    p.add_argument("--cpu", action="store_true", help="run on the CPU (with --tiny: a CI-sized check of every part)")
    p.add_argument("--tiny", action="store_true", help="a tiny model of the same kind, and small batches")
    p.add_argument("--model", help="a model folder or hub id instead of the random 0.5B-shaped one")
    p.add_argument("--batch", type=int, default=128, help="prompts decoded at once in the decode part")
    p.add_argument("--tokens", type=int, default=256, help="new tokens a completion")
    p.add_argument("--prompts", type=int, default=16, help="GRPO: tasks a step")
    p.add_argument("--group", type=int, default=8, help="GRPO: samples a task")
    p.add_argument("--steps", type=int, default=4, help="GRPO: steps timed after the first")
    p.add_argument("--generator", default="auto", help="GRPO (ours): the decoder")
    p.add_argument("--micro-batch", type=int, default=32, help="GRPO (ours): completions a forward/backward pass")
    p.add_argument("--backends", nargs="+", default=["loop", "compiled", "vllm"])
    p.add_argument("--parts", default="decode,logp,ours,trl,ours-off")
    p.add_argument("--budget", type=float, default=420, help="seconds for all parts; each part gets what is left")


HIGHER, LOWER = "higher", "lower"
FIGURES = {
    **{
        f"decode_{b}_{k}": d
        for b in ("loop", "compiled", "vllm")
        for k, d in (("tokens_per_s", HIGHER), ("peak_gib", LOWER))
    },
    **{f"logp_{w}_{k}": LOWER for w in ("packed", "padded") for k in ("seconds", "peak_gib")},
    **{
        f"{t}_{k}": d
        for t in ("ours", "ours_off", "trl")
        for k, d in (("updates_per_min", HIGHER), ("peak_gib", LOWER))
    },
    "ours_over_trl": HIGHER,
}
TRAINERS = {"workbench": "ours", "workbench-off-policy": "ours_off", "trl": "trl"}


def figures_of(results: list) -> dict:
    "The record's figures from the parts' results (a failed part gives none)."
    f = {}
    for r in results:
        if r.get("part") == "decode":
            for b in ("loop", "compiled", "vllm"):
                f |= {
                    f"decode_{b}_{k}": v for k in ("tokens_per_s", "peak_gib") if (v := r.get(b, {}).get(k)) is not None
                }
            if "compiled_agrees" in r:
                f["compiled_agrees"] = r["compiled_agrees"]
        elif r.get("part") == "logp" and "packed" in r:
            f |= {
                f"logp_{w}_{k}": v
                for w in ("packed", "padded")
                for k in ("seconds", "peak_gib")
                if (v := r[w].get(k)) is not None
            }
            f["logp_max_abs_diff_nats"] = r["max_abs_diff_nats"]
        elif r.get("part") == "grpo" and "updates_per_min" in r:
            f |= {
                f"{TRAINERS[r['trainer']]}_{k}": r[k] for k in ("updates_per_min", "peak_gib") if r.get(k) is not None
            }
    if "ours_updates_per_min" in f and "trl_updates_per_min" in f:
        f["ours_over_trl"] = round(f["ours_updates_per_min"] / f["trl_updates_per_min"], 3)
    return f


def run(quick=False, **kw) -> dict:
    a = types.SimpleNamespace(**kw)
    if quick:  # every part on the CPU with a tiny model (what `make test` runs)
        a.cpu, a.tiny, a.budget = True, True, min(a.budget, 240)
    a.device = "cpu" if a.cpu else "cuda"
    a.dtype = "float32" if a.device == "cpu" else "bfloat16"
    if a.tiny:
        a.batch, a.tokens, a.prompts, a.group, a.steps, a.micro_batch = min(a.batch, 8), min(a.tokens, 24), 2, 4, 2, 4
    import importlib.util

    if importlib.util.find_spec("vllm") is None or a.device == "cpu":
        a.backends = [b for b in a.backends if b != "vllm"]
    t0 = time.perf_counter()
    if a.model:
        from workbench.policy.models import model_folder

        a.folder = str(model_folder(a.model))
    else:
        a.folder = make_model(tempfile.mkdtemp(prefix="grpo-gpu-"), TINY if a.tiny else QWEN_05B)
    what = a.model or ("tiny" if a.tiny else "Qwen2.5-0.5B-shaped, random")
    print(f"model ready in {time.perf_counter() - t0:.0f} s: {what}", flush=True)
    results = []
    for part in [x for x in a.parts.split(",") if x]:
        left = a.budget - (time.perf_counter() - t0)
        if left < 10:
            print(f"{part}: skipped, out of time", flush=True)
            continue
        t = time.perf_counter()
        r = fresh("grpo_gpu", "worker", timeout=left, **{**vars(a), "worker": part})
        r = {"part": part, **r} if "error" in r else {**r, "wall_s": round(time.perf_counter() - t, 1)}
        results.append(r)
        print(json.dumps(r), flush=True)  # (each part as it comes: a run cut short keeps them in its log)
    settings = {k: v for k, v in vars(a).items() if k not in ("budget", "folder")}
    return {"settings": settings, "figures": figures_of(results), "raw": results}


def table(records: list) -> str:
    "A row a full run: the decoders' tokens/s, GRPO's updates/min (ours, TRL's, their ratio) and peak memory."

    def cells(rec):
        f, n = rec["figures"], rec["settings"]

        def g(k, fmt="{:,.0f}"):
            return fmt.format(f[k]) if k in f else "-"

        model = n.get("model") or ("tiny" if n["tiny"] else "Qwen2.5-0.5B-shaped")
        return [[f"{model}, {n['device']}, {n['dtype']}", f"{n['batch']} x {n['tokens']}", g("decode_loop_tokens_per_s"),
                 g("decode_compiled_tokens_per_s"), f"{n['prompts']} x G {n['group']}", g("ours_updates_per_min", "{:.2f}"),
                 g("trl_updates_per_min", "{:.2f}"), g("ours_over_trl", "**{:.2f}**"),
                 f"{g('ours_peak_gib', '{:.1f}')} / {g('trl_peak_gib', '{:.1f}')}"]]  # fmt: skip

    return make_table(["model", "decode rows x tokens", "loop tokens/s", "compiled tokens/s", "GRPO tasks x group",
                       "ours updates/min", "TRL", "ours / TRL", "GiB ours / TRL"], records, cells)  # fmt: skip


if __name__ == "__main__":  # (the same as `python -m bench grpo_gpu`)
    from runner import main

    sys.exit(main(["grpo_gpu", *sys.argv[1:]]))
