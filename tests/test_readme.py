"""The README's Python examples run as written, each in a process of its own in an empty folder: its last line's
value (what a notebook cell would show) is what the text says it is."""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs the block read from stdin as a notebook cell runs: the last line, if an expression, is the cell's value.
CELL = """
import ast, sys
tree, ns = ast.parse(sys.stdin.read()), {}
last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
exec(compile(tree, "README.md", "exec"), ns)
value = eval(compile(ast.Expression(last.value), "README.md", "eval"), ns) if last else None
print(type(value).__name__)
"""


def python_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return [textwrap.dedent(b) for b in re.findall(r"^ *```python\n(.*?)^ *```$", text, re.S | re.M)]


def test_readme_examples_run(tmp_path):
    blocks = python_blocks()
    assert any("LMTrainConfig(" in b for b in blocks), "the README's code agent example is gone"
    for block in blocks:
        r = subprocess.run([sys.executable, "-c", CELL], input=block, cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)  # fmt: skip
        assert r.returncode == 0, (block, r.stderr[-3000:])
        if ".dashboard(" in block.strip().splitlines()[-1]:
            assert r.stdout.strip().splitlines()[-1] == "TrainingDashboard", (block, r.stdout[-2000:])
    assert not any(tmp_path.iterdir()), "an example that only shows a dashboard wrote files"
