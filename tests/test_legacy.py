"""Runs written before the package moved into subpackages (commit 07687a3), and by the mains kept in `data/main-*`
(before issue 39's backend seam; before issue 57 gave each algorithm a config class), still load: their checkpoints
evaluate to the same returns, their store lists them, and training resumes from them into the same run. The commands run in
this process (`conftest.workbench_main`): what is tested is what they read, not how a process starts."""

import json
import shutil
from pathlib import Path

import pytest

from conftest import workbench_main

LEGACY = Path(__file__).parent / "data" / "legacy-07687a3"


@pytest.fixture
def legacy(tmp_path):
    shutil.copytree(LEGACY, tmp_path / "legacy")
    return tmp_path / "legacy"


def run(args, cwd):
    out = workbench_main(*args, cwd=cwd)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_old_checkpoints_evaluate_as_before(legacy):
    expected = json.loads((legacy / "expected_eval.json").read_text())
    mlp = next(legacy.glob("runs/legacy-mlp-*/checkpoints/best.pt")).relative_to(legacy)
    lstm = next(legacy.glob("runs/legacy-lstm-*")).relative_to(legacy)
    for target, key in ((mlp, "mlp_best"), (lstm, "lstm_latest")):
        got = json.loads(run(["eval", str(target), "--episodes", "3", "--json"], legacy).strip().splitlines()[-1])
        assert got == expected[key], key


def test_old_store_reads_and_old_run_resumes(legacy):
    from workbench.runs.store import RunStore

    store = RunStore(legacy / "runs")
    runs = {r["name"]: r for r in store.runs()}
    assert {n: r["status"] for n, r in runs.items()} == {"legacy-mlp": "finished", "legacy-lstm": "finished"}
    mlp = runs["legacy-mlp"]
    assert mlp["config"]["ppo"]["total_timesteps"] == 2048 and mlp["global_step"] == 2048
    assert len(store.metrics(mlp["id"], "charts/episodic_return")) > 0
    assert [c["step"] for c in store.checkpoints(mlp["id"])][:2] == [512, 1024]
    store.close()

    summary = json.loads(
        run(["train", "--resume", mlp["run_dir"], "--total-timesteps", "3072", "--quiet", "--json"], legacy)
        .strip()
        .splitlines()[-1]
    )
    assert (summary["run_id"], summary["global_step"], summary["status"]) == (mlp["id"], 3072, "finished")
    store = RunStore(legacy / "runs")
    assert len(store.runs()) == 2
    resumed = store.get_run(mlp["id"])
    assert (resumed["global_step"], resumed["status"]) == (3072, "finished")
    assert [e["kind"] for e in store.events(mlp["id"])].count("resumed") == 1
    store.close()


MAINS = {p.name: p for p in sorted((Path(__file__).parent / "data").glob("main-*"))}  # each kept main's runs
EXPECTED = {name: json.loads((p / "expected.json").read_text()) for name, p in MAINS.items()}


def cases(part: str) -> list:
    return [(main, name) for main in MAINS for name in sorted(EXPECTED[main][part])]


@pytest.fixture(scope="module")
def mains(tmp_path_factory):
    "A copy of each kept main's runs, made once for the module (the resumes continue them)."
    out = {}
    for main, src in MAINS.items():
        out[main] = tmp_path_factory.mktemp(main) / main
        shutil.copytree(src, out[main])
    return out


def run_dir_of(root: Path, name: str) -> Path:
    return next((root / "runs").glob(f"{name}-2*")).relative_to(root)


@pytest.mark.parametrize("main,name", cases("eval"))
def test_main_checkpoints_evaluate_as_before(mains, main, name):
    """PPO (MLP, LSTM, transformer), SFT, GRPO and team checkpoints of the mains before issue 39 and issue 57 evaluate
    as they did then."""
    expected, root = EXPECTED[main]["eval"][name], mains[main]
    episodes = "3" if name.startswith("ppo") else "4"
    got = json.loads(run(["eval", str(run_dir_of(root, name)), "--episodes", episodes, "--json"], root)
                     .strip().splitlines()[-1])  # fmt: skip
    got.pop("checkpoint")
    if name == "sft" and "max_new_tokens" not in expected:  # a field the evaluation gained since (issue 56): the answer
        assert got.pop("max_new_tokens") == 96  # length it used, the run's setting
    assert got == expected


@pytest.mark.parametrize("main,name", cases("resume"))
def test_main_runs_resume(mains, main, name):
    "Each kind of run of those mains resumes into the same run and reaches the same weights as that main did."
    import torch

    from workbench.train.checkpoint import find_checkpoint, load_checkpoint

    expected, root = EXPECTED[main]["resume"][name], mains[main]
    run_dir = run_dir_of(root, name)
    summary = json.loads(run(["train", "--resume", str(run_dir), *expected["flags"], "--quiet", "--json"], root)
                         .strip().splitlines()[-1])  # fmt: skip
    assert (summary["run_id"], summary["global_step"], summary["status"]) == (
        run_dir.name,
        expected["global_step"],
        "finished",
    )
    state = load_checkpoint(find_checkpoint(root / run_dir))
    models = state["models"] if "models" in state else {"": state["model"]}
    weights = {
        f"{role}.{k}" if role else k: v for role, m in models.items() for k, v in m.items() if v.is_floating_point()
    }
    assert weights.keys() == expected["weights"].keys()
    for k, (total, size) in expected["weights"].items():
        got = torch.tensor([weights[k].double().sum(), weights[k].double().abs().sum()])
        # the C kernels' float flags may move the last bits (issue 39 dropped -ffast-math); a real change moves more
        assert torch.allclose(got, torch.tensor([total, size], dtype=torch.float64), rtol=1e-3, atol=1e-3), k
