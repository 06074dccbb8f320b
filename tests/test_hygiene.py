"Notebooks are the source: committed clean, and workbench/ is exactly what nbdev_export makes of them."

import json, shutil, subprocess, sys
from pathlib import Path

from conftest import ROOT

NOTEBOOKS = sorted(p for p in (ROOT / "nbs").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 8


def test_notebooks_have_no_outputs_or_execution_counts():
    dirty = []
    for p in NOTEBOOKS:
        nb = json.loads(p.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count") is not None):
                dirty.append(p.name)
                break
    assert not dirty, f"run nbdev_clean / clear outputs in: {dirty}"


def test_notebook_metadata_is_clean():
    "nbdev_clean keeps only cell tags (papermill's `parameters` tag)."
    for p in NOTEBOOKS:
        nb = json.loads(p.read_text())
        for cell in nb["cells"]:
            assert set(cell.get("metadata", {})) <= {"tags"}, f"{p.name}: cell metadata {cell['metadata']}"


def test_experiment_notebooks_have_one_parameters_cell():
    for p in NOTEBOOKS:
        if "experiments" not in p.parts:
            continue
        nb = json.loads(p.read_text())
        tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{p.name} has {len(tagged)} cells tagged 'parameters'"


def test_nbdev_clean_changes_nothing(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "nbs", copy / "nbs")
    shutil.copy(ROOT / "settings.ini", copy)
    subprocess.run([str(Path(sys.executable).parent / "nbdev_clean")], cwd=copy, check=True, capture_output=True)
    changed = [p.name for p in NOTEBOOKS if (copy / p.relative_to(ROOT)).read_text() != p.read_text()]
    assert not changed, f"nbdev_clean would change: {changed}"


def test_package_is_in_sync_with_notebooks(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "nbs", copy / "nbs")
    shutil.copy(ROOT / "settings.ini", copy)
    (copy / "workbench").mkdir()
    shutil.copy(ROOT / "workbench" / "__init__.py", copy / "workbench")
    subprocess.run([str(Path(sys.executable).parent / "nbdev_export")], cwd=copy, check=True, capture_output=True)
    ours = sorted(p.relative_to(ROOT / "workbench") for p in (ROOT / "workbench").rglob("*.py"))
    theirs = sorted(p.relative_to(copy / "workbench") for p in (copy / "workbench").rglob("*.py"))
    assert ours == theirs, "workbench/ has files nbdev_export does not make (or lacks some)"
    stale = [str(p) for p in ours if (ROOT / "workbench" / p).read_text() != (copy / "workbench" / p).read_text()]
    assert not stale, f"workbench/ is not what nbs/ exports (run nbdev_export): {stale}"


def test_the_slow_first_order_names_test_files_that_exist():
    "conftest's `SLOW_FIRST` (the order that keeps CI's two workers busy to the end) names no renamed or deleted file."
    from conftest import SLOW_FIRST

    assert not [name for name in SLOW_FIRST if not (ROOT / "tests" / name).exists()]
