"""A machine without a C compiler (`CC=/bin/false`, an empty kernel cache): the notebooks that use the C kernels still
pass (their C checks skip with a reason; the torch backend trains), one line says why there are no kernels, and a
training run from the shell finishes on the torch backend."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import last_json

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.stem for p in (ROOT / "nbs").glob("0[12]*kernels.*.ipynb")) + [
    "02a_policy.replay",
    "02b_policy.nets",
    "05d_train.backend",
    "05e_train.ppo",
]

RUN = """
import sys
from pathlib import Path
from nbdev.test import test_nb
for nb in sys.argv[1:]:
    ok, _ = test_nb(Path(nb))
    if not ok: sys.exit(f"{nb} failed without a C compiler")
from workbench.kernels.build import kernels_missing
print("no kernels:", kernels_missing())
"""


def no_compiler(tmp_path) -> dict:
    return {**os.environ, "CC": "/bin/false", "WORKBENCH_CACHE": str(tmp_path / "cache"), "WORKBENCH_KERNELS": "1"}


def test_notebooks_pass_without_a_compiler(tmp_path):
    paths = [str(ROOT / "nbs" / f"{n}.ipynb") for n in NOTEBOOKS]
    assert all(Path(p).exists() for p in paths), paths
    r = subprocess.run([sys.executable, "-c", RUN, *paths], env=no_compiler(tmp_path), cwd=ROOT / "nbs",
                       capture_output=True, text=True, timeout=900)  # fmt: skip
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    assert "no kernels: false failed on" in r.stdout, r.stdout[-2000:]


def test_a_run_without_a_compiler_says_so_once_and_trains_on_torch(tmp_path):
    r = subprocess.run([sys.executable, "-m", "workbench.cli", "train", "--total-steps", "2048", "--num-envs", "4",
                        "--runs-dir", str(tmp_path / "runs"), "--quiet", "--json"],
                       env=no_compiler(tmp_path), capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    said = [line for line in r.stderr.splitlines() if line.startswith("workbench:")]
    assert len(said) == 1 and "no C kernels" in said[0] and "torch backend" in said[0], r.stderr
    assert last_json(r.stdout)["status"] == "finished"
    from workbench.runs.store import RunStore

    store = RunStore(tmp_path / "runs")
    (run,) = store.runs()
    assert {m["value"] for m in store.metrics(run["id"], "perf/kernels")} == {0.0}
    running = [e["data"] for e in store.events(run["id"], "status") if e["data"]["status"] == "running"]
    assert running[0]["learner"] == "torch"
    store.close()


def test_learner_c_without_a_compiler_refuses_in_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "workbench.cli", "train", "--learner", "c", "--total-steps", "2048",
                        "--runs-dir", str(tmp_path / "runs"), "--quiet"],
                       env=no_compiler(tmp_path), capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 2, r.stderr[-2000:]
    said = r.stderr.strip().splitlines()
    assert len(said) == 1 and "C backend cannot train this run: no C kernels" in said[0], r.stderr
    assert "false failed on" in said[0] and "--learner torch" in said[0], said
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir()), "nothing half-written"
