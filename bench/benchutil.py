"""Helpers shared by the benchmark scripts: a busy-machine check, versions, the greedy evaluation and our trainer of the
learning benchmarks, sweeps on the command line, PuffeRL's defaults (fresh worker processes: `runner.fresh`)."""

import ast, configparser, importlib.metadata, os, platform, re, subprocess, sys, time

from pathlib import Path

import numpy as np


def _cpu_times():
    with open("/proc/stat") as f:
        fields = [float(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields), idle


def cpu_busy(seconds: float = 1.0) -> float:
    "Fraction of all cores busy over the next `seconds` (we sleep meanwhile, so it is other processes)."
    total0, idle0 = _cpu_times()
    time.sleep(seconds)
    total1, idle1 = _cpu_times()
    return 1.0 - (idle1 - idle0) / max(total1 - total0, 1e-9)


def wait_for_quiet(max_busy: float, max_wait: float) -> float:
    """The machine is shared: before a timed run, wait (up to `max_wait` s) until other processes use less
    than `max_busy` of the cores. Returns the last busy fraction seen (recorded with each result)."""
    deadline = time.time() + max_wait
    busy = cpu_busy()
    while busy > max_busy and time.time() < deadline:
        busy = cpu_busy(2.0)
    return busy


def version(package: str) -> str:
    "An installed distribution's version, else the module's __version__ (a source tree on PYTHONPATH)."
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(importlib.import_module(package), "__version__", "?"))


def versions(*packages) -> dict:
    v = {p: version(p) for p in packages}
    v.update(python=platform.python_version(), cpus=os.cpu_count())
    return v


def tracebacks(stderr: str, limit: int = 2500) -> str:
    """The Python tracebacks in a launcher's `stderr` (each worker's, to its exception's line; a `[rank1]:` prefix
    kept) and any C++ abort's message, the last `limit` characters: what failed, which the launcher's summary after
    them does not say."""
    out, inside = [], False
    for line in stderr.splitlines():
        text = re.sub(r"^\[(default)?\d*rank\d+\]:\s?", "", line)
        inside = inside or text.startswith("Traceback (most recent call last)")
        if inside or re.match(r"terminate called|  what\(\):|Fatal Python error", text):  # (and a C++ abort's words)
            out.append(line)
            inside = not (text and not text[0].isspace() and not text.startswith("Traceback"))  # the exception's line
    return "\n".join(out)[-limit:] or "(no Python traceback)"


def puffer_default_train_config() -> dict:
    """PuffeRL's [train] defaults, read from pufferlib/config/default.ini the way its CLI reads them
    (its `load_config` also parses sys.argv, so we do not call it)."""
    import pufferlib

    parser = configparser.ConfigParser()
    parser.read(os.path.join(os.path.dirname(pufferlib.__file__), "config", "default.ini"))
    cfg = {}
    for key, value in parser["train"].items():
        try:
            cfg[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            cfg[key] = value.strip()
    return cfg


def greedy_returns(env_id: str, act, episodes: int = 100, seed: int = 10_000) -> list:
    """Returns of `episodes` greedy episodes of `env_id` played side by side (env i reset with seed + i); `act` maps
    an (n, obs_dim) float32 batch to n actions. The same function scores both trainers."""
    import gymnasium as gym

    envs = [gym.make(env_id) for _ in range(episodes)]
    space = envs[0].action_space
    box = isinstance(space, gym.spaces.Box)
    obs = np.stack([env.reset(seed=seed + i)[0] for i, env in enumerate(envs)]).astype(np.float32)
    returns, running = np.zeros(episodes), np.ones(episodes, dtype=bool)
    while running.any():
        actions = np.asarray(act(obs))
        if box:
            actions = np.clip(actions.reshape(episodes, *space.shape), space.low, space.high)
        for i in np.flatnonzero(running):
            o, r, terminated, truncated, _ = envs[i].step(actions[i] if box else int(actions.reshape(-1)[i]))
            obs[i] = o
            returns[i] += r
            running[i] = not (terminated or truncated)
    for env in envs:
        env.close()
    return returns.tolist()


def tuned_trainer(spec: str, seed: int, budget: int, ours: dict | None = None, **more) -> tuple:
    """(our PPOTrainer as `workbench train --env spec` builds it, the settings it took beside the defaults): the env's
    tuned row with `ours` over it, then `more`; on the CPU, no evaluations, no files (the learning benchmarks')."""
    from workbench.train.config import TrainConfig, tuned_settings
    from workbench.train.ppo import PPOTrainer

    tuned = {**tuned_settings(spec), **(ours or {})}
    cfg = TrainConfig.from_dict({**tuned, "env": spec, "seed": seed, "device": "cpu", "total_timesteps": budget,
                                 "eval_every": 0, "checkpoint_every": 0, **more})  # fmt: skip
    return PPOTrainer(cfg), {k: v for k, v in cfg.flat().items() if k in tuned}


def sweep(work, runs_name: str, *flags) -> tuple:
    """`workbench sweep` of `work`/space.toml with `flags` into the runs folder `work`/`runs_name`, on the command line
    (a failure ends the benchmark with its error): (the run store it wrote, its wall seconds)."""
    from workbench.runs.store import RunStore

    runs, t0 = Path(work) / runs_name, time.time()
    cmd = [str(Path(sys.executable).parent / "workbench"), "sweep", "--config", str(Path(work) / "space.toml"),
           *map(str, flags), "--runs-dir", str(runs), "--json", "--quiet"]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"workbench sweep {' '.join(map(str, flags))} failed: {r.stderr[-2000:]}")
    return RunStore(runs), time.time() - t0
