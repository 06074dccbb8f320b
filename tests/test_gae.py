"The tensor GAE against a plain per-env Python loop."

import numpy as np
import torch

from workbench.train.loss import compute_gae


def naive_gae(rewards, values, dones, next_value, gamma, lam):
    T, N = rewards.shape
    adv = np.zeros((T, N))
    for n in range(N):
        running = 0.0
        for t in reversed(range(T)):
            next_v = next_value[n] if t == T - 1 else values[t + 1, n]
            nonterminal = 1.0 - dones[t, n]
            delta = rewards[t, n] + gamma * next_v * nonterminal - values[t, n]
            running = delta + gamma * lam * nonterminal * running
            adv[t, n] = running
    return adv


def test_compute_gae_matches_naive_loop():
    rng = np.random.default_rng(0)
    for T, N, gamma, lam in [(1, 1, 0.99, 0.95), (7, 3, 0.9, 0.8), (64, 16, 0.995, 1.0), (5, 2, 1.0, 0.0)]:
        r, v = rng.normal(size=(T, N)), rng.normal(size=(T, N))
        d = (rng.random((T, N)) < 0.2).astype(float)
        nv = rng.normal(size=N)
        adv, ret = compute_gae(*(torch.tensor(x, dtype=torch.float64) for x in (r, v, d, nv)), gamma, lam)
        expected = naive_gae(r, v, d, nv, gamma, lam)
        np.testing.assert_allclose(adv.numpy(), expected, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(ret.numpy(), expected + v, rtol=1e-10, atol=1e-10)


def test_lambda_one_no_dones_is_discounted_return_minus_value():
    T, gamma = 6, 0.9
    r, v = torch.ones(T, 1, dtype=torch.float64), torch.zeros(T, 1, dtype=torch.float64)
    adv, _ = compute_gae(r, v, torch.zeros(T, 1, dtype=torch.float64), torch.zeros(1, dtype=torch.float64), gamma, 1.0)
    expected = [sum(gamma**k for k in range(T - t)) for t in range(T)]
    np.testing.assert_allclose(adv[:, 0].numpy(), expected)
