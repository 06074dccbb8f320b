"Serial and Multiprocessing backends: the same seed gives the same trajectories; training runs on both."

import numpy as np
import pytest

from conftest import TINY, workbench, last_json
from workbench.env.make import make_env

pytestmark = pytest.mark.multiproc


def trajectory(backend, steps=300, **kw):
    env = make_env("gym:CartPole-v1", num_envs=4, seed=11, backend=backend, **kw)
    try:
        env.async_reset(11)
        frames = [env.recv()[0].copy()]
        rng = np.random.default_rng(0)
        for _ in range(steps):
            env.send(rng.integers(0, 2, 4))
            obs, rewards, terminals, truncations = env.recv()[:4]
            frames.append(np.concatenate([obs.ravel(), rewards, terminals, truncations]))
        return np.stack(frames[1:]), frames[0]
    finally:
        env.close()


def test_serial_and_multiprocessing_trajectories_match():
    serial, first_serial = trajectory("serial")
    multi, first_multi = trajectory("multiprocessing", num_workers=2)
    np.testing.assert_array_equal(first_serial, first_multi)
    np.testing.assert_array_equal(serial, multi)
    assert serial[:, -8:-4].any(), "some episodes should end within 300 random steps"


def test_training_on_multiprocessing_backend(runs_dir):
    r = workbench(
        "train",
        "--env",
        "gym:CartPole-v1",
        "--backend",
        "multiprocessing",
        "--num-workers",
        2,
        "--total-steps",
        64,
        *TINY,
        "--runs-dir",
        runs_dir,
        "--json",
    )
    assert r.returncode == 0, r.stderr
    assert last_json(r.stdout)["global_step"] == 64
