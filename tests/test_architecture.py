"""The package's shape: modules in stages of the data flow, each importing only earlier stages (so no cycles),
none longer than a reader can hold, and nothing that changes the process when imported."""

import ast
import importlib.util
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


def imports_only(stmt) -> bool:
    "An import, or `if TYPE_CHECKING:` over imports (names for annotations only)."
    if isinstance(stmt, ast.If) and getattr(stmt.test, "id", None) == "TYPE_CHECKING":
        return all(imports_only(s) for s in stmt.body) and not stmt.orelse
    return isinstance(stmt, (ast.Import, ast.ImportFrom))


def test_every_exported_cell_is_followed_by_a_check():
    "In each module notebook, every exported cell (but the imports) is followed by a code cell that uses it."
    missing = []
    for nb in sorted((PKG.parent / "nbs").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        src = ["".join(c["source"]) if c["cell_type"] == "code" else None for c in cells]
        exported = [i for i, s in enumerate(src) if s is not None and s.startswith("#| export")]
        for n, i in enumerate(exported):
            if n == 0 and all(imports_only(stmt) for stmt in ast.parse(src[i]).body):
                continue  # the imports cell
            end = exported[n + 1] if n + 1 < len(exported) else len(src)
            if not any(s is not None and not s.startswith("#| hide") for s in src[i + 1 : end]):
                missing.append(f"{nb.name}: {src[i].splitlines()[1][:60]}")
    assert not missing, f"exported cells with no check after them: {missing}"


def test_the_graph_sees_imports_inside_functions(tmp_path):
    "An import inside a function is an edge like any other, so the stage and cycle checks above see it."
    path = tmp_path / "probe.py"
    path.write_text("def f():\n    from .core import WorkbenchError\n    import workbench.env.make\n")
    assert imported("workbench.probe", path) == {"workbench.core", "workbench.env.make"}


KERNEL_READERS = {  # the modules outside the kernels room that import it, and why
    "workbench.train.backend": "the learner's seam: it picks the C kernels or the torch reference for a run",
    "workbench.doctor": "its `kernels` check builds each kernel and says where they are",
}


def in_kernels_room(name: str) -> bool:
    return name == "workbench.kernels" or name.startswith("workbench.kernels.")


def foreign_ctypes(tree: ast.AST) -> list[int]:
    "The lines that use `ctypes` for more than libc's own calls (`ctypes.CDLL(None)` or `ctypes.CDLL('libc...')`)."
    libc = {
        id(node.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "CDLL"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "ctypes"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and (node.args[0].value is None or str(node.args[0].value).startswith("libc"))
    }
    return [
        node.lineno
        for node in ast.walk(tree)
        if (isinstance(node, ast.ImportFrom) and node.module == "ctypes")
        or (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "ctypes"
            and id(node) not in libc
        )
    ]


def test_only_the_kernels_room_and_the_backend_name_the_c_path():
    "Outside `workbench/kernels/` only KERNEL_READERS import it, and only it and the backend load C through `ctypes`."
    named = [
        f"{name} imports {dep}"
        for name, deps in GRAPH.items()
        for dep in sorted(deps)
        if in_kernels_room(dep) and not in_kernels_room(name) and name not in KERNEL_READERS
    ]
    assert not named, f"only workbench.kernels and {sorted(KERNEL_READERS)} may import the C kernels: {named}"
    loads = [
        f"{name}:{line}"
        for name, path in MODULES.items()
        if not in_kernels_room(name) and name != "workbench.train.backend"
        for line in foreign_ctypes(ast.parse(path.read_text()))
    ]
    assert not loads, f"ctypes beyond libc's calls outside the kernels room and the backend: {loads}"


# The registry (`train.runner.ALGORITHMS`) is the one place that knows every algorithm; an algorithm's own modules (its
# config class, its trainer) know it. Anywhere else a run's algorithm is asked of the registry or of its config class.
ALGORITHM_MODULES = {
    "workbench.train.runner",
    "workbench.train.config",
    "workbench.train.ppo",
    "workbench.train.lm_config",
    "workbench.train.sft",
    "workbench.train.grpo",
    "workbench.train.team_config",
    "workbench.train.team",
}


def algorithm_branches(tree: ast.AST, source: str, names: set) -> list:
    "Lines that compare something naming an algorithm (`algo`, `ALGO`, an `Algorithm`'s `.name`) with an algorithm's name."
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        consts = {
            c.value for o in operands for c in ast.walk(o) if isinstance(c, ast.Constant) and isinstance(c.value, str)
        }
        others = " ".join(ast.get_source_segment(source, o) or "" for o in operands)
        if consts & names and re.search(r"algo|ALGO|\.name\b|kind\b", others):
            found.append(node.lineno)
    return found


def test_no_branch_on_an_algorithm_name_outside_the_registry():
    "Issue 57: no `if algo == ...` outside the registry and the algorithms' own modules."
    from workbench.train.runner import ALGORITHMS

    names = set(ALGORITHMS) | {n.rpartition("-")[2] for n in ALGORITHMS}
    branches = [
        f"{name}:{line}"
        for name, path in MODULES.items()
        if name not in ALGORITHM_MODULES
        for line in algorithm_branches(ast.parse(path.read_text()), path.read_text(), names)
    ]
    assert not branches, f"branches on an algorithm's name outside the registry and the algorithms' modules: {branches}"


def test_the_branch_check_sees_one(tmp_path):
    source = 'def f(cfg, algo):\n    if algo == "grpo": return 1\n    return cfg.loss_type == "grpo"\n'
    assert algorithm_branches(ast.parse(source), source, {"grpo"}) == [2]  # the loss type's "grpo" is not an algorithm


def test_the_grpo_reading_order_points_at_its_code():
    "The reading order at the top of the GRPO notebook names each definition's file and line: they must still be there."
    cells = json.loads((PKG.parent / "nbs" / "05h_train.grpo.ipynb").read_text())["cells"]
    header = next("".join(c["source"]) for c in cells if "".join(c["source"]).startswith("## Reading one GRPO step"))
    cited = re.findall(r"`(workbench/[\w/]+\.py):(\d+)` `([\w.]+)`", header)
    assert len(cited) >= 12, cited
    wrong = []
    for path, line, name in cited:
        text = (PKG.parent / path).read_text().splitlines()[int(line) - 1]
        defined = rf"^\s*(def|class) {re.escape(name.rpartition('.')[2])}\b"
        if not re.match(defined, text):
            lines = (PKG.parent / path).read_text().splitlines()
            now = [i + 1 for i, t in enumerate(lines) if re.match(defined, t)]
            wrong.append(f"{path}:{line} {name} (now at {now})")
    assert not wrong, f"update the reading order in nbs/05h_train.grpo.ipynb: {wrong}"


MAX_FUNCTION_LINES = 60
LONG_FUNCTIONS: set = set()  # over the limit today, each to split, then drop here (none now)


def functions(tree: ast.AST, prefix: str):
    "(qualified name, lines) of every function and method in `tree`, nested ones included."
    for node in ast.iter_child_nodes(tree):
        name = f"{prefix}.{getattr(node, 'name', '')}"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield name, node.end_lineno - node.lineno + 1
        yield from functions(
            node, name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else prefix
        )


def test_functions_fit_a_screen():
    long = {
        f
        for name, path in MODULES.items()
        for f, n in functions(ast.parse(path.read_text()), name)
        if n > MAX_FUNCTION_LINES
    }
    assert long <= LONG_FUNCTIONS, f"functions over {MAX_FUNCTION_LINES} lines: {sorted(long - LONG_FUNCTIONS)}"
    assert LONG_FUNCTIONS <= long, (
        f"now within {MAX_FUNCTION_LINES} lines, drop them from LONG_FUNCTIONS: {sorted(LONG_FUNCTIONS - long)}"
    )


MAX_CELL_LINES = 120
LONG_CELLS: set = (
    set()
)  # (notebook, the cell's first name): export cells over the limit today, each to split (none now)


def export_cells():
    "(notebook, first name defined, lines of code) of every export cell; its directives and its data do not count."
    for nb in sorted((PKG.parent / "nbs").glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            src = "".join(cell["source"])
            if cell["cell_type"] != "code" or not src.startswith("#| export"):
                continue
            code = "\n".join(line for line in src.splitlines() if not line.startswith("#|"))
            tree, data = ast.parse(code), 0
            for stmt in tree.body:  # module-level literals (templates, rubrics, tables) are data, not code to read
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                    try:
                        ast.literal_eval(stmt.value)
                        data += stmt.end_lineno - stmt.lineno + 1
                    except ValueError:
                        pass
            names = [
                n.name if hasattr(n, "name") else next(t.id for t in ast.walk(n) if isinstance(t, ast.Name))
                for n in tree.body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign))
            ]
            yield nb.stem, (names or [""])[0], len(code.splitlines()) - data


def test_export_cells_fit_a_reading():
    long = {(nb, name) for nb, name, n in export_cells() if n > MAX_CELL_LINES}
    assert long <= LONG_CELLS, (
        f"export cells over {MAX_CELL_LINES} lines of code (split them): {sorted(long - LONG_CELLS)}"
    )
    assert LONG_CELLS <= long, (
        f"now within {MAX_CELL_LINES} lines, drop them from LONG_CELLS: {sorted(LONG_CELLS - long)}"
    )


def stage_table():
    spec = importlib.util.spec_from_file_location("stage_table", PKG.parent / "tools" / "stage_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_development_guide_lists_every_notebook():
    "The development guide's stage table is the one `tools/stage_table.py` writes from `nbs/`: every module notebook."
    problem = stage_table().check(PKG.parent)
    assert problem is None, problem


def test_a_missing_notebook_is_named(tmp_path):
    table = stage_table()
    (tmp_path / "nbs").mkdir()
    for name, exp in (("00_deps", "deps"), ("00a_core", "core")):
        cell = {"cell_type": "code", "source": [f"#| default_exp {exp}"]}
        (tmp_path / "nbs" / f"{name}.ipynb").write_text(json.dumps({"cells": [cell]}))
    guide = tmp_path / table.GUIDE
    guide.parent.mkdir(parents=True)
    guide.write_text(
        json.dumps({"cells": [{"cell_type": "markdown", "source": [f"# x\n\n{table.BEGIN}\n\n  {table.END}\n"]}]})
    )
    table.write(tmp_path)
    assert table.check(tmp_path) is None
    guide.write_text(guide.read_text().replace("`00a_core`", ""))
    assert table.check(tmp_path) == (
        f"{table.GUIDE}'s stage table misses nbs/00a_core.ipynb: run `python tools/stage_table.py`"
    )
    cell = {"cell_type": "code", "source": ["#| default_exp nowhere"]}
    (tmp_path / "nbs" / "05z_nowhere.ipynb").write_text(json.dumps({"cells": [cell]}))
    assert table.check(tmp_path).startswith("nbs/05z_nowhere.ipynb exports workbench.nowhere, which no row of ROOMS")


def test_every_parse_takes_the_parse_lock():
    """Python 3.11's parser shares its tree-depth count across threads (CPython gh-106905): a trainer's thread parsing
    answers while a dashboard's thread read config docs failed with `SystemError: AST constructor recursion depth
    mismatch`. So the package parses only through `core.parse_python`, which holds one lock (code strings that run in
    the sandbox, a process of their own, are not calls here and are not counted)."""
    direct = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            f = getattr(node, "func", None)
            if (
                isinstance(f, ast.Attribute)
                and f.attr == "parse"
                and isinstance(f.value, ast.Name)
                and f.value.id == "ast"
            ):
                direct.append(f"{name}:{node.lineno}")
    assert direct == ["workbench.core:" + str(_line_of("workbench.core", "return ast.parse(source, filename)"))], direct


def _line_of(module: str, text: str) -> int:
    return next(i for i, line in enumerate(MODULES[module].read_text().splitlines(), 1) if text in line)
