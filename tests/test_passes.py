"""Packed and chunked passes (`workbench.policy.passes`) give GRPO's and SFT's losses and gradients as the padded passes
do: for the tiny model trained whole, with LoRA adapters, and for a model whose head cannot be read (the fallback)."""

import pytest
import torch
from accelerate import Accelerator

from workbench.policy.passes import packed_logprobs
from workbench.policy.tokens import TinyLMConfig, TokenPolicy
from workbench.tasks.code import task_stream
from workbench.train.grpo_core import grpo_terms
from workbench.train.lm import completion_nll
from workbench.train.lm_config import CodeGRPOConfig

SIZES = TinyLMConfig(hidden=32, layers=2, heads=2, ffn=64, vocab=300)


@pytest.fixture(scope="module")
def setup():
    tasks = [t for _, t in zip(range(60), task_stream("easy", seed=0))]
    corpus = [t.prompt + t.reference + "\n" for t in tasks]
    policy = TokenPolicy.tiny(corpus, SIZES, seed=0)
    torch.manual_seed(0)
    samples = policy.generate([t.prompt for t in tasks[:6]], n=4, max_new_tokens=24, temperature=1.0)
    return corpus, tasks, policy.tokenizer, samples


def both(policy: TokenPolicy, loss_of, pairs: list) -> list:
    """(loss, {name: gradient}) of `loss_of(policy)` padded and packed (budget: two pairs a row, chunks of 7 tokens);
    the packed pass reads this model (it does not fall back to the padded one) for token id `pairs`."""
    with torch.no_grad():
        assert packed_logprobs(policy.model, *zip(*pairs), policy.pad_id) is not None
    out = []
    for packed in (False, True):
        policy.packed, policy.pack_tokens, policy.logp_chunk = packed, None, 7
        policy.model.zero_grad()
        loss = loss_of(policy)
        loss.backward()
        grads = {
            n: p.grad.clone() for n, p in policy.model.named_parameters() if p.requires_grad and p.grad is not None
        }
        out.append((loss.detach(), grads))
    return out


def assert_same(padded, packed):
    (loss_a, grads_a), (loss_b, grads_b) = padded, packed
    assert torch.allclose(loss_a, loss_b, rtol=1e-5, atol=1e-6), (loss_a, loss_b)
    assert grads_a.keys() == grads_b.keys() and grads_a
    for name in grads_a:
        a, b = grads_a[name], grads_b[name]
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-6 * max(1.0, a.abs().max().item())), name


@pytest.mark.parametrize("lora", [0, 4])
@pytest.mark.parametrize("loss_type", ["dapo", "grpo"])
def test_grpo_loss_and_gradients_packed_as_padded(setup, lora, loss_type):
    corpus, _, tokenizer, samples = setup
    policy = TokenPolicy.tiny(corpus, SIZES, seed=1, tokenizer=tokenizer)
    if lora:
        policy.add_lora(lora)
    g = CodeGRPOConfig(group_size=4, loss_type=loss_type, temperature=0.8)
    adv = torch.linspace(-1.5, 1.5, len(samples))
    accelerator = Accelerator(cpu=True)
    old = policy.completion_logprobs([s.prompt_ids for s in samples], [s.completion_ids for s in samples], 0.8)[
        0
    ].detach()
    old = old + 0.05 * torch.randn_like(old)  # a second epoch's ratio: not 1, so the clipping is exercised
    pairs = [(s.prompt_ids, s.completion_ids) for s in samples]
    assert_same(
        *both(policy, lambda p: grpo_terms(p, samples, adv, g, accelerator, old_logp=old, max_tokens=24)[0], pairs)
    )


def test_sft_loss_and_gradients_packed_as_padded(setup):
    corpus, tasks, tokenizer, _ = setup
    policy = TokenPolicy.tiny(corpus, SIZES, seed=2, tokenizer=tokenizer)
    pairs = [(t.prompt, t.reference) for t in tasks[:12]]
    ids = [(policy.encode(a), policy.encode(b) + [policy.eos_id]) for a, b in pairs]
    assert_same(*both(policy, lambda p: completion_nll(p, pairs, Accelerator(cpu=True))[0], ids))


def test_a_model_whose_head_cannot_be_read_falls_back_to_the_padded_pass(setup):
    "A model whose logits are scaled after its head: the packed pass sees it and the padded pass answers."
    corpus, _, tokenizer, samples = setup
    policy = TokenPolicy.tiny(corpus, SIZES, seed=3, tokenizer=tokenizer)
    forward = policy.model.forward

    def scaled(*args, **kw):
        out = forward(*args, **kw)
        out.logits = out.logits * 2.0
        return out

    policy.model.forward = scaled
    prompts, completions = [s.prompt_ids for s in samples], [s.completion_ids for s in samples]
    with torch.no_grad():
        want = policy.completion_logprobs(prompts, completions)[0]
        policy.packed = True
        got = policy.completion_logprobs(prompts, completions)[0]
    assert torch.equal(got, want)
