"""The package's shape: modules in stages of the data flow, each importing only earlier stages (so no cycles),
none longer than a reader can hold, and nothing that changes the process when imported."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "workbench"
MAX_LINES = 400


def stage_of(path: Path) -> tuple:
    "(number, letter) of the notebook a module is exported from: '05c_train.ppo.ipynb' -> (5, 'c')."
    head = path.read_text().split("\n", 4)
    nb = next(re.search(r"File to edit: \S*/nbs/(\S+)\.ipynb", line) for line in head if "File to edit" in line)
    number, letter = re.match(r"(\d+)([a-z]?)_", nb.group(1)).groups()
    return int(number), letter


def module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py")) if p.name != "_modidx.py"}


def imported(name: str, path: Path) -> set[str]:
    "The workbench modules `name` imports, anywhere in its body (function-level imports included)."
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]  # `import workbench.env.make.x` -> the module it names
            if t.startswith("workbench") and t != name:
                found.add(t)
    return found


GRAPH = {name: imported(name, path) for name, path in MODULES.items()}


def test_every_module_is_exported_from_a_numbered_notebook():
    for name, path in MODULES.items():
        if name != "workbench" and path.read_text().strip():  # nbdev leaves a package's `__init__` empty
            stage_of(path)


def test_modules_import_only_earlier_stages():
    later = []
    for name, deps in GRAPH.items():
        if name == "workbench":
            continue  # the package root only names the public API (lazily)
        for dep in deps:  # the package root holds only `__version__` and lazy names: anyone may read it
            if dep != "workbench" and stage_of(MODULES[dep]) >= stage_of(MODULES[name]):
                later.append(f"{name} {stage_of(MODULES[name])} imports {dep}")
    assert not later, later


def test_no_import_cycles():
    state = {}

    def visit(node, trail):
        if state.get(node) == "done":
            return
        assert state.get(node) != "open", f"import cycle: {' -> '.join(trail + [node])}"
        state[node] = "open"
        for dep in GRAPH[node]:
            visit(dep, trail + [node])
        state[node] = "done"

    for name in GRAPH:
        visit(name, [])


def test_modules_fit_a_reading():
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


PROCESS_CHANGES = {
    ("warnings", "filterwarnings"),
    ("warnings", "simplefilter"),
    ("signal", "signal"),
    ("os", "chdir"),
    ("os", "environ"),
    ("sys", "modules"),
    ("sys", "path"),
}


def test_only_deps_changes_the_process_at_import():
    "No module but `workbench.deps` touches warning filters, signals, the working folder or sys at module level."
    found = []
    for name, path in MODULES.items():
        if name == "workbench.deps":
            continue
        for stmt in ast.parse(path.read_text()).body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for node in ast.walk(stmt):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and (node.value.id, node.attr) in PROCESS_CHANGES
                ):
                    found.append(f"{name}:{stmt.lineno} {node.value.id}.{node.attr}")
    assert not found, found


def test_importing_changes_no_process_state(tmp_path):
    "Importing every module leaves the working folder and the signal handlers as they were."
    code = f"""
import json, os, signal, importlib
before = (sorted(os.listdir()), [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1)])
for name in {sorted(MODULES)!r}: importlib.import_module(name)
after = (sorted(os.listdir()), [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1)])
print(json.dumps({{"same": before == after, "cwd": os.getcwd() == {str(tmp_path)!r}}}))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["same"] and result["cwd"], result


def test_every_exported_cell_is_followed_by_a_check():
    "In each module notebook, every exported cell (but the imports) is followed by a code cell that uses it."
    missing = []
    for nb in sorted((PKG.parent / "nbs").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        src = ["".join(c["source"]) if c["cell_type"] == "code" else None for c in cells]
        exported = [i for i, s in enumerate(src) if s is not None and s.startswith("#| export")]
        for n, i in enumerate(exported):
            if n == 0 and all(isinstance(stmt, (ast.Import, ast.ImportFrom)) for stmt in ast.parse(src[i]).body):
                continue  # the imports cell
            end = exported[n + 1] if n + 1 < len(exported) else len(src)
            if not any(s is not None and not s.startswith("#| hide") for s in src[i + 1 : end]):
                missing.append(f"{nb.name}: {src[i].splitlines()[1][:60]}")
    assert not missing, f"exported cells with no check after them: {missing}"
