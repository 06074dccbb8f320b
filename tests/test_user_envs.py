"""A user's own env, from a module outside the package, reaches `workbench train` and `workbench eval` by its spec."""

import json
import subprocess
import sys

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


def test_gymnasium_env_from_the_users_module_trains_and_evaluates(tmp_path):
    (tmp_path / "reach1d.py").write_text(REACH)
    args = ["--env", "gym:reach1d:Reach1D-v0", "--total-timesteps", "4096", "--eval-every", "0", "--quiet", "--json"]
    summary = json.loads(run(["train", *args, "--runs-dir", "runs"], tmp_path).stdout.strip().splitlines()[-1])
    assert summary["status"] == "finished" and summary["global_step"] == 4096
    ev = run(["eval", summary["run_dir"], "--episodes", "10", "--json"], tmp_path)
    result = json.loads(ev.stdout.strip().splitlines()[-1])
    assert result["env"] == "gym:reach1d:Reach1D-v0" and result["episodes"] == 10 and result["mean_return"] > 0.5


def test_a_callable_in_the_users_module_is_an_env_spec(tmp_path):
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
        summary = json.loads(run(["train", *args], tmp_path).stdout.strip().splitlines()[-1])
        ev = json.loads(
            run(["eval", summary["run_dir"], "--episodes", "4", "--json"], tmp_path).stdout.splitlines()[-1]
        )
        assert (summary["status"], ev["env"], ev["episodes"]) == ("finished", spec, 4)
    out = run(["train", "--env", "reach1d:nothing", "--runs-dir", "runs2"], tmp_path, code=2)
    assert "module 'reach1d' has no callable 'nothing'" in out.stderr and not (tmp_path / "runs2").exists()


def test_a_spec_naming_a_missing_module_is_one_line_and_writes_nothing(tmp_path):
    out = run(["train", "--env", "gym:nowhere_to_be_found:Reach1D-v0", "--runs-dir", "runs"], tmp_path, code=2)
    assert out.stderr.strip().count("\n") == 0 and "no module named 'nowhere_to_be_found'" in out.stderr
    assert not (tmp_path / "runs").exists()
