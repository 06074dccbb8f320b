"""`--model org/name` through the Hugging Face cache, with the network out of reach: a tiny model saved into a
temporary cache laid out as the hub's client lays it out trains by its hub id; a hub id not in the cache is one line
and exit 2 when the user set HF_HUB_OFFLINE=1."""

import itertools, os, shutil

from conftest import last_json, workbench
from workbench.policy.tokens import TinyLMConfig, TokenPolicy
from workbench.runs.store import RunStore
from workbench.tasks.code import task_stream

REVISION = "0123456789abcdef0123456789abcdef01234567"


def cache_model(cache, repo: str, folder) -> None:
    "Lay a saved model folder into `cache` as the hub client stores `repo` at revision main."
    entry = cache / f"models--{repo.replace('/', '--')}"
    shutil.copytree(folder, entry / "snapshots" / REVISION)
    (entry / "refs").mkdir()
    (entry / "refs" / "main").write_text(REVISION)


def test_a_hub_id_not_in_the_cache_is_one_line_offline(tmp_path):
    """HF_HUB_OFFLINE=1 and a hub id the cache lacks: one line, exit 2, naming the command that downloads it. (A hub id
    the cache holds trains: `test_an_instruct_model_is_prompted_through_its_chat_template`, SFT and GRPO by its id.)"""
    cache = tmp_path / "hf-cache"
    cache.mkdir()
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    r = workbench("train", "--model", "wb-test/not-cached", "--algo", "sft", "--task", "code?level=easy", "--updates", "2",
                  "--device", "cpu", "--runs-dir", tmp_path / "runs", "--quiet", "--json", env=env, timeout=120)  # fmt: skip
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr[-2000:]
    assert "'wb-test/not-cached' is not in the Hugging Face cache" in lines[0] and "HF_HUB_OFFLINE is set" in lines[0]
    assert "hf download wb-test/not-cached" in lines[0]
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_an_instruct_model_is_prompted_through_its_chat_template(tmp_path):
    """A hub model whose tokenizer has a chat template, trained by its hub id from a cache laid out as the hub's client
    lays it out, the network out of reach: SFT learns the fenced answer to the templated prompt, GRPO samples it."""
    corpus = [t.prompt + t.reference for t in itertools.islice(task_stream("easy"), 200)]
    model = TokenPolicy.tiny(corpus, TinyLMConfig(hidden=32, layers=1, heads=2, ffn=64, vocab=300), seed=0)
    model.tokenizer.chat_template = CHATML
    model.save(tmp_path / "saved")
    cache = tmp_path / "hf-cache"
    cache_model(cache, "wb-test/tiny-instruct", tmp_path / "saved")
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    common = ["--model", "wb-test/tiny-instruct", "--task", "code?level=easy", "--updates", "2", "--batch-size", "2",
              "--eval-every", "0", "--device", "cpu", "--runs-dir", tmp_path / "runs", "--quiet", "--json"]  # fmt: skip
    for algo, own in (("sft", []), ("grpo", ["--group-size", "2"])):
        r = workbench("train", "--algo", algo, *common, *own, "--max-new-tokens", "8", env=env, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        run = RunStore(tmp_path / "runs").get_run(last_json(r.stdout)["run_id"])
        assert run["status"] == "finished" and run["config"]["model"]["model"] == "wb-test/tiny-instruct", run
    from workbench.train.checkpoint import find_checkpoint, load_checkpoint
    from workbench.train.lm import LMTrainConfig, build_policy, prepare_model

    state = load_checkpoint(find_checkpoint(last_json(r.stdout)["run_dir"]))
    assert state["config"]["model"]["prompt_format"] == "auto"
    snapshot = (
        cache / "models--wb-test--tiny-instruct" / "snapshots" / REVISION
    )  # (this process's hub cache is another)
    cfg = LMTrainConfig.from_dict({**state["config"], "model": {**state["config"]["model"], "model": str(snapshot)}})
    policy = build_policy(cfg, state)
    prepare_model(policy, cfg)
    assert policy.chat
    task = next(iter(task_stream("easy")))
    assert policy.render(task.prompt).startswith("<|im_start|>user\nComplete this Python function.")
    assert policy.answer(task.prompt, task.reference).startswith("```python\n" + task.prompt)
