"`ppo_loss` against CleanRL's ppo.py loss, transcribed line by line, on random minibatches."

import itertools

import torch

from workbench.train.loss import PPOStats, ppo_loss


def cleanrl_loss(newlogprob, entropy, newvalue, b_logprobs, b_values, b_advantages, b_returns, args):
    "The loss block of CleanRL's ppo.py (mb_inds dropped: the tensors are the minibatch)."
    logratio = newlogprob - b_logprobs
    ratio = logratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()
        clipfrac = ((ratio - 1.0).abs() > args["clip_coef"]).float().mean()
    mb_advantages = b_advantages
    if args["norm_adv"]:
        mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
    pg_loss1 = -mb_advantages * ratio
    pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args["clip_coef"], 1 + args["clip_coef"])
    pg_loss = torch.max(pg_loss1, pg_loss2).mean()
    if args["clip_vloss"]:
        v_loss_unclipped = (newvalue - b_returns) ** 2
        v_clipped = b_values + torch.clamp(newvalue - b_values, -args["clip_coef"], args["clip_coef"])
        v_loss_clipped = (v_clipped - b_returns) ** 2
        v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
    else:
        v_loss = 0.5 * ((newvalue - b_returns) ** 2).mean()
    entropy_loss = entropy.mean()
    loss = pg_loss - args["ent_coef"] * entropy_loss + v_loss * args["vf_coef"]
    return loss, (pg_loss, v_loss, entropy_loss, approx_kl, clipfrac)


def test_matches_cleanrl_with_every_flag():
    g = torch.Generator().manual_seed(0)
    n = 64
    for norm_adv, clip_vloss in itertools.product([True, False], [True, False]):
        logprobs, values = torch.randn(n, generator=g), torch.randn(n, generator=g)
        new_logprob = (logprobs + 0.3 * torch.randn(n, generator=g)).requires_grad_()
        new_value = (values + torch.randn(n, generator=g)).requires_grad_()
        entropy = torch.rand(n, generator=g).requires_grad_()
        advantages, returns = torch.randn(n, generator=g), torch.randn(n, generator=g)
        args = {"clip_coef": 0.2, "ent_coef": 0.01, "vf_coef": 0.5, "norm_adv": norm_adv, "clip_vloss": clip_vloss}
        inputs = (new_logprob, entropy, new_value, logprobs, values, advantages, returns)
        loss, stats = ppo_loss(*inputs, **args)
        want, want_stats = cleanrl_loss(*inputs, args)
        torch.testing.assert_close(loss, want)
        for name, got, expected in zip(PPOStats._fields, stats, want_stats):
            torch.testing.assert_close(got, expected.detach(), msg=name)
            assert not got.requires_grad, name
        grads = torch.autograd.grad(loss, (new_logprob, new_value, entropy))
        want_grads = torch.autograd.grad(want, (new_logprob, new_value, entropy))
        for got, expected in zip(grads, want_grads):
            torch.testing.assert_close(got, expected)


def test_identical_ratios_give_no_kl_and_no_clipping():
    n = 8
    logprobs = torch.randn(n)
    _, stats = ppo_loss(
        logprobs,
        torch.ones(n),
        torch.zeros(n),
        logprobs,
        torch.zeros(n),
        torch.randn(n),
        torch.zeros(n),
        clip_coef=0.2,
        ent_coef=0.0,
        vf_coef=0.5,
    )
    assert stats.approx_kl.item() == 0.0 and stats.clipfrac.item() == 0.0
    assert stats.value_loss.item() == 0.0 and stats.entropy.item() == 1.0
