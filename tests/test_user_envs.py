"""A user's own env, from a module outside the package, reaches `workbench train` and `workbench eval` by its spec."""

import importlib
import json
import os
import subprocess
import sys

import pytest

from conftest import workbench_main

CLI = [sys.executable, "-m", "workbench.cli"]

REACH = """
import gymnasium as gym
import numpy as np


class Reach1D(gym.Env):
    "Walk left or right on a line of 5 cells; reward 1 for reaching the right end within 10 steps."

    observation_space = gym.spaces.Box(0.0, 1.0, (5,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t = 0, 0
        return self._obs(), {}

    def _obs(self):
        obs = np.zeros(5, np.float32)
        obs[self.pos] = 1.0
        return obs

    def step(self, action):
        self.pos, self.t = min(4, max(0, self.pos + (1 if action == 1 else -1))), self.t + 1
        done = self.pos == 4
        return self._obs(), float(done), done, self.t >= 10 and not done, {}


gym.register("Reach1D-v0", entry_point=Reach1D)


def make(length=10):
    "A creator: any callable returning one Gymnasium env (its options come after '?' in the spec)."
    env = Reach1D()
    env.length = length
    return env
"""


def run(args, cwd, code=0):
    out = subprocess.run(CLI + args, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert out.returncode == code, out.stderr[-2000:]
    return out


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """The user's folder as the current one, for `workbench` run in this process (`in_process`): the modules imported
    from it and `sys.path` are put back afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # `workbench` adds the current folder, as `python -m` would
    yield tmp_path
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def in_process(args, code=0):
    "`workbench ARGS` in this process (no interpreter to start): its stdout and stderr, once it exited with `code`."
    importlib.invalidate_caches()  # the user's modules were written a moment ago
    r = workbench_main(*args)
    assert r.returncode == code, r.stderr[-2000:]
    return r.stdout, r.stderr


def test_gymnasium_env_from_the_users_module_trains_and_evaluates(tmp_path):
    (tmp_path / "reach1d.py").write_text(REACH)
    args = ["--env", "gym:reach1d:Reach1D-v0", "--total-timesteps", "4096", "--eval-every", "0", "--quiet", "--json"]
    summary = json.loads(run(["train", *args, "--runs-dir", "runs"], tmp_path).stdout.strip().splitlines()[-1])
    assert summary["status"] == "finished" and summary["global_step"] == 4096
    ev = run(["eval", summary["run_dir"], "--episodes", "10", "--json"], tmp_path)
    result = json.loads(ev.stdout.strip().splitlines()[-1])
    assert result["env"] == "gym:reach1d:Reach1D-v0" and result["episodes"] == 10 and result["mean_return"] > 0.5


def test_a_callable_in_the_users_module_is_an_env_spec(folder):
    "In this process: the same resolution as the command's (the current folder on `sys.path`), without its start-up."
    tmp_path = folder
    (tmp_path / "reach1d.py").write_text(REACH)
    for spec in ("reach1d:make?length=10", "reach1d:Reach1D"):
        args = [
            "--env",
            spec,
            "--total-timesteps",
            "2048",
            "--eval-every",
            "0",
            "--quiet",
            "--json",
            "--runs-dir",
            "runs",
        ]
        summary = json.loads(in_process(["train", *args])[0].strip().splitlines()[-1])
        ev = json.loads(in_process(["eval", summary["run_dir"], "--episodes", "4", "--json"])[0].splitlines()[-1])
        assert (summary["status"], ev["env"], ev["episodes"]) == ("finished", spec, 4)
    _, err = in_process(["train", "--env", "reach1d:nothing", "--runs-dir", "runs2"], code=2)
    assert "module 'reach1d' has no callable 'nothing'" in err and not (tmp_path / "runs2").exists()


def test_a_spec_naming_a_missing_module_is_one_line_and_writes_nothing(folder):
    _, err = in_process(["train", "--env", "gym:nowhere_to_be_found:Reach1D-v0", "--runs-dir", "runs"], code=2)
    assert err.strip().count("\n") == 0 and "no module named 'nowhere_to_be_found'" in err
    assert not (folder / "runs").exists()


REACHVEC = """
import gymnasium as gym
import numpy as np
import pufferlib


class ReachVec(pufferlib.PufferEnv):
    "Reach1D for num_envs agents at once, in numpy, writing into PufferLib's preallocated buffers."

    def __init__(self, num_envs=1, buf=None, seed=0, length=10):
        self.single_observation_space = gym.spaces.Box(0.0, 1.0, (5,), np.float32)
        self.single_action_space = gym.spaces.Discrete(2)
        self.num_agents, self.length = num_envs, length
        super().__init__(buf)
        self.pos, self.t = np.zeros(num_envs, np.int64), np.zeros(num_envs, np.int64)

    def _observe(self):
        self.observations[:] = 0
        self.observations[np.arange(self.num_agents), self.pos] = 1

    def reset(self, seed=None):
        self.pos[:] = 0
        self.t[:] = 0
        self._observe()
        return self.observations, []

    def step(self, actions):
        self.pos = np.clip(self.pos + np.where(actions == 1, 1, -1), 0, 4)
        self.t += 1
        done, out = self.pos == 4, self.t >= self.length
        self.rewards[:] = done
        self.terminals[:] = done
        self.truncations[:] = out & ~done
        ended = done | out
        self.pos[ended], self.t[ended] = 0, 0
        self._observe()
        return self.observations, self.rewards, self.terminals, self.truncations, []

    def close(self):
        pass
"""

TWOREACH = """
import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv


class TwoReach(ParallelEnv):
    "Two walkers on lines of 5 cells, each rewarded 1 for reaching its right end; the episode ends after 8 steps."

    metadata = {"name": "tworeach"}
    possible_agents = ["walker_0", "walker_1"]

    def observation_space(self, agent):
        return gym.spaces.Box(0.0, 1.0, (5,), np.float32)

    def action_space(self, agent):
        return gym.spaces.Discrete(2)

    def _obs(self):
        return {a: np.eye(5, dtype=np.float32)[self.pos[a]] for a in self.agents}

    def reset(self, seed=None, options=None):
        self.agents, self.t = list(self.possible_agents), 0
        self.pos = {a: 0 for a in self.agents}
        return self._obs(), {a: {} for a in self.agents}

    def step(self, actions):
        rewards = {}
        for a in self.agents:
            before = self.pos[a]
            self.pos[a] = min(4, max(0, before + (1 if actions[a] == 1 else -1)))
            rewards[a] = float(self.pos[a] == 4 and before != 4)
        self.t += 1
        end = self.t >= 8
        obs = self._obs()
        out = (obs, rewards, {a: False for a in self.agents}, {a: end for a in self.agents}, {a: {} for a in self.agents})
        if end:
            self.agents = []
        return out
"""


def train_and_eval(tmp_path, spec, *flags):
    "`workbench train` then `workbench eval` from the user's folder; the summary and the evaluation."
    args = ["train", "--env", spec, "--total-timesteps", "8192", "--quiet", "--json", "--runs-dir", "runs", *flags]
    summary = json.loads(run(args, tmp_path).stdout.strip().splitlines()[-1])
    ev = run(["eval", summary["run_dir"], "--episodes", "10", "--json"], tmp_path)
    return summary, json.loads(ev.stdout.strip().splitlines()[-1])


def test_a_native_puffer_env_from_the_users_module(tmp_path):
    (tmp_path / "reachvec.py").write_text(REACHVEC)
    summary, ev = train_and_eval(tmp_path, "reachvec:ReachVec?length=10")
    assert summary["status"] == "finished" and summary["best_score"] is not None
    assert ev["env"] == "reachvec:ReachVec?length=10" and ev["mean_return"] > 0.5


def test_a_pettingzoo_env_trains_and_evaluates_with_default_settings(tmp_path):
    (tmp_path / "tworeach.py").write_text(TWOREACH)
    summary, ev = train_and_eval(tmp_path, "tworeach:TwoReach")  # 8 agents (4 envs), evaluations every 10 updates
    assert summary["status"] == "finished" and summary["best_score"] is not None
    assert ev["episodes"] == 10 and set(ev["agents"]) == {"walker_0", "walker_1"} and ev["mean_return"] > 0.5
    from workbench.runs.store import RunStore

    run_id = os.path.basename(summary["run_dir"])
    run(
        ["export", summary["run_dir"], "--onnx", "tworeach.onnx"], tmp_path
    )  # rebuilds the env from the spec it recorded
    assert (tmp_path / "tworeach.onnx").stat().st_size > 0
    assert RunStore(tmp_path / "runs").metrics(run_id, "agent/walker_1/episodic_return"), "no per-agent statistics"


# Both ways a spec names a user's module, `gym:MODULE:ID` and `MODULE:CALLABLE` (the second with a multi-agent env).
# A native PufferEnv is found as TwoReach is: `test_a_native_puffer_env_from_the_users_module` trains and evaluates one.
NOTEBOOK_ENVS = [
    ("gym:reach1d:Reach1D-v0", "reach1d.py", REACH),
    ("tworeach:TwoReach", "tworeach.py", TWOREACH),
]


def test_user_envs_in_a_notebook_job(tmp_path):
    "User envs through `workbench run` of the experiment notebook, the module in the user's folder."
    from conftest import ROOT

    for spec, name, text in NOTEBOOK_ENVS:
        (tmp_path / name).write_text(text)
    for spec, _, _ in NOTEBOOK_ENVS:
        params = [
            "-p",
            "env",
            spec,
            "-p",
            "total_timesteps",
            "512",
            "-p",
            "update_epochs",
            "1",
            "-p",
            "eval_every",
            "0",
            "-p",
            "eval_episodes",
            "2",
        ]
        out = run(
            ["run", str(ROOT / "nbs" / "experiments" / "train.ipynb"), *params, "--out", "reports", "--json"], tmp_path
        )
        record = json.loads(out.stdout.strip().splitlines()[-1])
        assert record["status"] == "finished", (spec, out.stdout[-2000:])


ENTRY_POINT_PACKAGE = {
    "mypkg_envs/__init__.py": REACH.replace('gym.register("Reach1D-v0", entry_point=Reach1D)', ""),
    "mypkg_envs-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: mypkg-envs\nVersion: 0.1\n",
    "mypkg_envs-0.1.dist-info/entry_points.txt": "[workbench.envs]\nreach1d = mypkg_envs:make\n",
}


def test_an_installed_package_adds_envs_by_name(tmp_path):
    site = tmp_path / "site"
    for path, text in ENTRY_POINT_PACKAGE.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(site)}
    listing = json.loads(
        subprocess.run(
            CLI + ["envs", "--json"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        ).stdout
    )
    assert listing["installed"] == {"reach1d": "mypkg_envs:make"}
    args = [
        "train",
        "--env",
        "reach1d?length=10",
        "--total-timesteps",
        "1024",
        "--eval-every",
        "0",
        "--quiet",
        "--json",
    ]
    out = subprocess.run(CLI + args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and json.loads(out.stdout.splitlines()[-1])["status"] == "finished", out.stderr[-2000:]


TUPLE = """
import gymnasium as gym
import numpy as np


class TwoButtons(gym.Env):
    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Discrete(2)))

    def reset(self, seed=None, options=None):
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.zeros(1, np.float32), 0.0, True, False, {}


def not_an_env():
    return 42


def vec_but_gym(num_envs=1, buf=None, seed=0):
    return gym.make("CartPole-v1")
"""

MISTAKES = [
    ("reachvec:ReachVec?lenght=10", "unknown option 'lenght' (ReachVec takes length)"),
    ("reach1d:make?size=3", "unknown option 'size' (make takes length)"),
    ("gym:reach1d:Reach1D-v0?size=3", "unknown option 'size' (Reach1D takes no options)"),
    ("mistakes:TwoButtons", "action space Tuple(Discrete(2), Discrete(2)) is not supported"),
    ("mistakes:not_an_env", "returned int, not a Gymnasium env, a PettingZoo env or a PufferEnv"),
    (
        "mistakes:vec_but_gym",
        "a creator taking num_envs must return a pufferlib.PufferEnv of num_envs agents, not TimeLimit",
    ),
]


def test_each_mistake_is_one_line_exit_2_and_writes_nothing(folder):
    for name, text in (("reach1d.py", REACH), ("reachvec.py", REACHVEC), ("mistakes.py", TUPLE)):
        (folder / name).write_text(text)
    for spec, message in MISTAKES:
        _, err = in_process(["train", "--env", spec, "--runs-dir", "runs"], code=2)
        assert message in err and err.strip().count("\n") == 0, (spec, err)
        assert not (folder / "runs").exists(), spec


def test_a_class_or_a_single_env_creator_is_wrapped_when_registered(tmp_path):
    "The two mistakes the Python API used to punish with raw exceptions now just work."
    code = (
        REACH
        + """
from workbench.env import register_env
from workbench.env.make import opened_env
register_env("reach-class", Reach1D)
register_env("reach-lambda", lambda: gym.make("Reach1D-v0"))
for name in ("reach-class", "reach-lambda"):
    with opened_env(name, num_envs=3) as vecenv:
        vecenv.async_reset(0)
        assert vecenv.recv()[0].shape == (3, 5)
print("ok")
"""
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


ORPHANS = """
import sys
from workbench.env.make import make_env
vecenv = make_env("gym:CartPole-v1", num_envs=4, backend="multiprocessing", num_workers=2)
print(" ".join(str(p.pid) for p in vecenv.processes), flush=True)
sys.stdin.readline()     # "exit": the interpreter must exit although the env was never closed;
sys.exit(0)              # "kill": killed with SIGKILL while it waits here
"""


def test_multiprocessing_workers_never_outlive_their_parent(tmp_path):
    import psutil

    (tmp_path / "orphans.py").write_text(ORPHANS)
    for how in ("exit", "kill"):
        proc = subprocess.Popen(
            [sys.executable, "orphans.py"], cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        workers = [psutil.Process(int(pid)) for pid in proc.stdout.readline().split()]
        assert len(workers) == 2 and all(w.is_running() for w in workers)
        if how == "kill":
            proc.kill()
        else:
            proc.stdin.write("exit\n")
            proc.stdin.flush()
        proc.wait(timeout=60)  # an unclosed env used to hang the interpreter's exit forever
        gone, alive = psutil.wait_procs(workers, timeout=10)
        assert not alive, f"{how}: orphaned workers {[p.pid for p in alive]}"
