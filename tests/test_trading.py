"The trading env: determinism, no look-ahead, costs only on position changes, bad data, and training through the CLI."

import json, re

import numpy as np
import pytest

from conftest import workbench, workbench_main
from workbench.env.trading import (
    Bars,
    DataError,
    TradingEnv,
    load_bars,
    market_features,
    read_bars,
    sample_bars,
    synthetic_bars,
)


def rollout(env, steps, seed=0, actions=None):
    "Observations, rewards and flags of `steps` steps with seeded random actions."
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out = [obs.copy()]
    rewards, flags = [], []
    for _ in range(steps):
        a = actions if actions is not None else rng.integers(0, env.single_action_space.n, env.num_agents)
        obs, r, term, trunc, _ = env.step(a)
        out.append(obs.copy())
        rewards.append(r.copy())
        flags.append((term | trunc).copy())
    return np.array(out), np.array(rewards), np.array(flags)


@pytest.mark.parametrize("data", ["sample", "synthetic"])
def test_same_seed_same_episodes(data):
    a = rollout(TradingEnv(num_envs=16, seed=5, data=data, episode_length=64), 300, seed=5)
    b = rollout(TradingEnv(num_envs=16, seed=5, data=data, episode_length=64), 300, seed=5)
    c = rollout(TradingEnv(num_envs=16, seed=6, data=data, episode_length=64), 300, seed=6)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0])
    assert a[2].sum() >= 16 * 4  # episodes of 64 steps ended and restarted within the 300


def perturbed(bars, day):
    "The same bars with every bar after `day` changed (prices scaled by a random walk, volumes shuffled and tripled)."
    rng = np.random.default_rng(0)
    out = []
    for b in bars:
        t = int(np.searchsorted(b.dates, day, side="right"))  # bars t.. are after `day`
        scale = np.ones(len(b))
        scale[t:] = np.exp(np.cumsum(rng.normal(0, 0.05, len(b) - t)))
        vol = b.volume.copy()
        vol[t:] = rng.permutation(vol[t:]) * 3
        out.append(Bars(b.symbol, b.dates, b.open * scale, b.high * scale, b.low * scale, b.close * scale, vol))
    return out


def test_no_look_ahead_in_features():
    bars = sample_bars()
    t = 1500
    f, g = market_features(bars[0], 32), market_features(perturbed(bars, bars[0].dates[t])[0], 32)
    np.testing.assert_array_equal(f[: t + 1], g[: t + 1])  # bar t's features use bars up to t only
    assert not np.allclose(f[t + 1 :], g[t + 1 :])


def test_no_look_ahead_in_observations():
    "Walking the test split: observations up to bar t are the same whatever the bars after t are."
    bars = sample_bars()
    kw = dict(num_envs=4, split="test", episode_length=10, seed=0)
    env_a = TradingEnv(bars=bars, **kw)
    start = int(env_a.lo[0])
    t = start + 100
    env_b = TradingEnv(bars=perturbed(bars, bars[0].dates[t]), **kw)
    a, ra, _ = rollout(env_a, 150, actions=np.full(4, 2))
    b, rb, _ = rollout(env_b, 150, actions=np.full(4, 2))
    steps = t - start  # observation k is at bar start + k
    np.testing.assert_array_equal(a[: steps + 1], b[: steps + 1])
    assert not np.allclose(a[steps + 2 :], b[steps + 2 :])
    # The reward of the step from bar t to t+1 is the first to see bar t+1 (it is the outcome of acting at t).
    np.testing.assert_array_equal(ra[:steps], rb[:steps])


def test_costs_only_on_position_changes():
    bars = synthetic_bars(2000, seed=1)
    free = TradingEnv(num_envs=1, bars=bars, split="train", random_start=False, cost_bps=0, slippage_bps=0)
    paid = TradingEnv(num_envs=1, bars=bars, split="train", random_start=False, cost_bps=7, slippage_bps=3)
    plan = [2, 2, 2, 0, 0, 1, 1, 2, 2, 2]  # long, long, long, short, short, flat, flat, long...
    levels = np.array([-1.0, 0.0, 1.0])
    free.reset()
    paid.reset()
    pos = 0.0
    for a in plan:
        _, r0, *_ = free.step(np.array([a]))
        r0 = r0.copy()
        _, r1, *_ = paid.step(np.array([a]))
        traded = abs(levels[a] - pos)
        # The same bar's return, less 10 bp of the traded amount (in growth terms).
        expected = np.log(np.exp(r0[0]) - 10e-4 * traded)
        assert r1[0] == pytest.approx(expected, abs=2e-6), (a, pos)  # rewards are float32
        if traded == 0:
            assert r1[0] == pytest.approx(r0[0], abs=1e-12)
        pos = levels[a]


def test_flat_earns_nothing_and_long_earns_the_market():
    bars = synthetic_bars(2000, seed=2)
    env = TradingEnv(num_envs=1, bars=bars, split="train", random_start=False, cost_bps=0, slippage_bps=0)
    env.reset()
    t0 = int(env.t[0])
    _, r, *_ = env.step(np.array([1]))
    assert r[0] == 0.0
    _, r, *_ = env.step(np.array([2]))
    assert r[0] == pytest.approx(np.log(bars[0].close[t0 + 2] / bars[0].close[t0 + 1]), abs=1e-6)


def test_continuous_actions_and_sharpe_reward():
    env = TradingEnv(num_envs=8, data="synthetic", actions="continuous", reward="sharpe", drawdown_penalty=0.5, seed=0)
    assert env.single_action_space.shape == (1,)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        obs, r, *_ = env.step(rng.uniform(-2, 2, (8, 1)).astype(np.float32))  # clipped to [-1, 1]
        assert np.isfinite(obs).all() and np.isfinite(r).all()
    assert np.abs(env.pos).max() <= 1.0


GOOD = "date,open,high,low,close,volume\n" + "".join(
    f"2020-{1 + i // 28:02d}-{1 + i % 28:02d},10,11,9,{10 + (i % 7) / 10},{100 + i}\n" for i in range(300)
)


@pytest.mark.parametrize(
    "name,edit,message",
    [
        ("nocol.csv", lambda t: t.replace(",volume", ",vol"), "missing column(s) volume"),
        (
            "nan.csv",
            lambda t: re.sub(r"(2020-03-05,10,11,9,)[0-9.]+", r"\1", t),
            "NaN or non-number in column close at 2020-03-05",
        ),
        ("dup.csv", lambda t: t.replace("2020-03-06", "2020-03-05"), "duplicate date 2020-03-05"),
        ("unsorted.csv", lambda t: t.replace("2020-03-06", "2020-01-01"), "dates are not sorted"),
    ],
)
def test_bad_data_is_named(tmp_path, name, edit, message):
    (tmp_path / name).write_text(edit(GOOD))
    with pytest.raises(DataError) as e:
        TradingEnv(num_envs=1, data=str(tmp_path / name))
    assert str(tmp_path / name) in str(e.value) and message in str(e.value)


def test_too_few_bars(tmp_path):
    (tmp_path / "short.csv").write_text(GOOD)  # 300 bars: not enough for a 256-step episode after warm-up
    with pytest.raises(DataError, match="too few bars for split train") as e:
        TradingEnv(num_envs=1, data=str(tmp_path / "short.csv"))
    assert str(tmp_path / "short.csv") in str(e.value)
    env = TradingEnv(num_envs=2, data=str(tmp_path / "short.csv"), episode_length=32, test_years=0.05, val_years=0.05)
    assert env.symbols == ["short"]


def test_parquet_and_many_symbols(tmp_path):
    import pandas as pd

    bars = synthetic_bars(900, symbols=2, seed=4)
    frames = [
        pd.DataFrame(
            {
                "Date": b.dates.astype("datetime64[ns]"),
                "Symbol": b.symbol,
                "Open": b.open,
                "High": b.high,
                "Low": b.low,
                "Close": b.close,
                "Volume": b.volume,
            }
        )
        for b in bars
    ]
    pd.concat(frames).to_parquet(tmp_path / "two.parquet")
    loaded = read_bars(tmp_path / "two.parquet")
    assert [b.symbol for b in loaded] == ["SYN0", "SYN1"]
    np.testing.assert_allclose(loaded[1].close, bars[1].close)
    assert [b.symbol for b in load_bars(str(tmp_path / "two.parquet"), symbols=["SYN1"])] == ["SYN1"]


def test_train_then_evaluate_on_held_out_years(tmp_path):
    r = workbench(
        "train",
        "--env",
        "trading?symbols=AAPL,IBM&cost_bps=2",
        "--policy",
        "lstm",
        "--total-steps",
        "2048",
        "--num-envs",
        "32",
        "--num-steps",
        "32",
        "--eval-every",
        "0",
        "--device",
        "cpu",
        "--quiet",
        "--json",
        "--runs-dir",
        tmp_path / "runs",
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["global_step"] == 2048
    r = workbench("eval", summary["run_dir"], "--split", "test", "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["split"] == "test" and sorted(result["symbols"]) == ["AAPL", "IBM"]  # the run's own options
    for sym in ("AAPL", "IBM"):
        d = result["symbols"][sym]
        assert d["first_day"] >= "2011-03-02" and d["last_day"] == "2013-03-01"  # the held-out years only
        for key in (
            "total_return",
            "sharpe",
            "max_drawdown",
            "turnover",
            "hit_rate",
            "total_return_ci95",
            "sharpe_ci95",
        ):
            assert key in d["policy"], key
        assert d["flat"]["total_return"] == 0 and d["buy_and_hold"]["turnover"] == pytest.approx(
            1 / d["buy_and_hold"]["days"]
        )
    assert set(result["overall"]) == {"policy", "buy_and_hold", "flat"}
    r = workbench("eval", summary["run_dir"], "--split", "val")
    assert r.returncode == 0 and "split val (2010-03-0" in r.stdout and "buy_and_hold" in r.stdout, r.stdout + r.stderr


def test_bad_options_are_named(tmp_path):
    "In this process (`main`, no interpreter to start): exit 2 and the option named, nothing written."
    for env, message in (
        ("trading?cost=2", "unknown option 'cost' (make_trading takes"),
        ("trading?split=later", "split must be one of train, val, test"),
    ):
        r = workbench_main("train", "--env", env, "--total-steps", "64", "--runs-dir", tmp_path / "runs")
        assert r.returncode == 2 and message in r.stderr, r.stderr
    assert not (tmp_path / "runs").exists()


def test_trading_notebook_job_reports_held_out_scores(tmp_path):
    "nbs/experiments/trading.ipynb as a job: three policies trained, validation comparison, the test years in the report."
    from conftest import ROOT

    r = workbench(
        "run",
        ROOT / "nbs" / "experiments" / "trading.ipynb",
        "-p",
        "total_timesteps",
        "512",
        "-p",
        "num_envs",
        "16",
        "-p",
        "update_epochs",
        "1",
        "-p",
        "symbols",
        "AAPL,IBM",
        "--out",
        "reports",
        "--runs-dir",
        "runs",
        "--json",
        cwd=tmp_path,
        timeout=400,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    record = json.loads(r.stdout.strip().splitlines()[-1])
    result = record["result"]
    assert result["best_policy"] in ("mlp", "lstm", "transformer") and set(result["run_ids"]) == {
        "mlp",
        "lstm",
        "transformer",
    }
    assert isinstance(result["beats_buy_and_hold_on_val"], bool)
    page = (tmp_path / record["report"]).read_text()
    assert "on the test years:" in page and "buy_and_hold" in page and "Growth of 1 on the test years" in page
    verdict = (
        "beat buy-and-hold's Sharpe ratio"
        if result["beats_buy_and_hold_on_val"]
        else "None of the policies beat buy-and-hold"
    )
    assert verdict in page and "On the test years" in page and isinstance(result["beats_buy_and_hold_on_test"], bool)
