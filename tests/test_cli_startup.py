"""The command line answers help and argument errors without importing torch (issue 60: `workbench --help` took 12-20 s
on a loaded machine, most of it torch): the settings, their flags and their checks are torch-free modules, the trainers
are imported when a run is built. Times are measured in `bench/cli_startup.py`, never asserted here."""

import json, subprocess, sys

import pytest

PROBE = """
import json, sys
from workbench.cli import main
try: code = main(sys.argv[1:])
except SystemExit as e: code = e.code
print("PROBE " + json.dumps({"code": code, "torch": "torch" in sys.modules}))
"""


def probe(*argv) -> tuple:
    "(exit code, whether torch was imported, stdout, stderr) of `workbench ARGV` in a fresh process."
    p = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120)
    line = next(x for x in p.stdout.splitlines() if x.startswith("PROBE "))
    got = json.loads(line[6:])
    return got["code"], got["torch"], p.stdout, p.stderr


@pytest.mark.parametrize(
    "argv, code, says",
    [
        (["--help"], 0, "train"),
        (["train", "--help"], 0, "--total-timesteps"),
        (["train", "--algo", "grpo", "--help"], 0, "--group-size"),
        (["sweep", "--help"], 0, "--trials"),
        (["train", "--bogus", "1"], 2, "unrecognized arguments: --bogus"),
        (["train", "--total-timesteps", "-5"], 2, "total_timesteps must be at least 1"),
        (["train", "--algo", "grpo", "--group-size", "1"], 2, "group_size"),
        (["nope"], 2, "invalid choice: 'nope'"),
    ],
)
def test_help_and_argument_errors_import_no_torch(argv, code, says):
    got, torch, out, err = probe(*argv)
    assert got == code and says in out + err, (got, out[-500:], err[-500:])
    assert not torch, f"workbench {' '.join(argv)} imported torch"
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err  # one line


def test_settings_modules_are_torch_free():
    "What lists and checks settings imports no torch; the trainers do, when a run is built."
    code = (
        "import sys, workbench.policy.config, workbench.policy.models, workbench.train.config, workbench.train.lm_config,"
        " workbench.train.team_config, workbench.train.runner, workbench.train.commands\n"
        "from workbench.policy import PolicyConfig\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "from workbench.train.runner import ALGORITHMS\n"
        "assert ALGORITHMS['ppo'].trainer.__name__ == 'PPOTrainer' and 'torch' in sys.modules"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]


def test_train_run_is_one_function():
    "`workbench.train_run` and the notebooks' `workbench.jobs.notebook.train_run` are the same, with one signature."
    import inspect

    import workbench
    from workbench.jobs.notebook import train_run

    assert train_run is workbench.train_run
    assert {"cfg", "every_s", "quiet", "sinks"} <= set(inspect.signature(train_run).parameters)
