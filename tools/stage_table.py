"""Write the README's stage table from `nbs/`: one row a room, naming every module notebook in it.

`python tools/stage_table.py` rewrites the table between its two markers in README.md; `--check` only says, in one
line, whether it is current (tests/test_architecture.py runs the check). A notebook whose module belongs to no room
below stops both with the line that says where to add it.
"""

import argparse, json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- stage table: written by tools/stage_table.py from nbs/, do not edit by hand -->"
END = "<!-- end of the stage table -->"

ROOMS = [  # (the packages a row holds, what they do), in the order of the data flow
    (
        ("workbench.deps", "workbench.core"),
        "errors, typed configs, seeding, atomic files; the process settings dependencies force",
    ),
    (
        ("workbench.env",),
        "env specs, your own envs, registry and vectorisation, native envs (trading, Plan-Path, its text face)",
    ),
    (
        ("workbench.kernels",),
        "the C kernels: their build, PPO's arithmetic for each policy; the fused PPO path",
    ),
    (
        ("workbench.policy",),
        "action heads, the LSTM's replay and scan, actor-critic networks, ONNX export, token policies (language models)",
    ),
    (("workbench.runs",), "events and controls, the run store, sinks"),
    (
        ("workbench.judge",),
        "scoring: policy episodes, code analysis, sandbox, verdicts and the execution harness, response judges, "
        "objective, benchmark data, trading, batched execution",
    ),
    (
        ("workbench.tasks",),
        "code tasks (generated, the judge benchmark's, HumanEval, a task file), the code env, pass@k and its "
        "evaluation, the tester/coder team",
    ),
    (
        ("workbench.train",),
        "training config, checkpoints, the losses, the learner's backends, the loop's frame, PPO, the language-model "
        "settings, SFT, GRPO, teams, the one train-and-record path (`train_run`), `train --algo sft|grpo`",
    ),
    (("workbench.doctor",), "`workbench doctor`: a machine checked before a long run"),
    (
        ("workbench.jobs",),
        "reports, notebook jobs, batches, the scheduler, sweeps, population-based training, `workbench sweep`",
    ),
    (("workbench.app",), "the live session, its dashboard, `workbench serve`"),
    (("workbench.cli",), "the `workbench` command"),
    (("workbench",), "the names a notebook imports from `workbench`"),
]


def module_notebooks(root: Path = ROOT) -> dict:
    "Each module notebook's name (`nbs/NN*_*.ipynb`, without `.ipynb`) -> the module it exports."
    found = {}
    for nb in sorted((root / "nbs").glob("[0-9][0-9]*_*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        exp = [m.group(1) for c in cells for m in re.finditer(r"^#\| default_exp (\S+)", "".join(c["source"]), re.M)]
        if exp:
            found[nb.stem] = ("workbench." + exp[0]).removesuffix(".__init__")
    return found


def room_of(module: str) -> str:
    "`workbench.env.make` -> `workbench.env`; a top-level module is a room of its own."
    return ".".join(module.split(".")[:2])


def table(root: Path = ROOT) -> str:
    "The stage table's markdown, indented to sit in the README's list item."
    rows, notebooks = {}, module_notebooks(root)
    for name, module in notebooks.items():
        row = next((i for i, (rooms, _) in enumerate(ROOMS) if room_of(module) in rooms), None)
        if row is None:
            raise ValueError(
                f"nbs/{name}.ipynb exports {module}, which no row of ROOMS in tools/stage_table.py holds: add it"
            )
        rows.setdefault(row, []).append(name)
    lines = ["| stage | notebooks | package |", "|---|---|---|"]
    for i, (rooms, what) in enumerate(ROOMS):
        if i in rows:
            names, packages = ", ".join(f"`{n}`" for n in rows[i]), ", ".join(f"`{r}`" for r in rooms)
            cell = what.replace("|", "\\|")  # a `|` in a cell, even in backticks, ends the cell in GitHub's tables
            lines.append(f"| {cell} | {names} | {packages} |")
    return "\n".join("  " + line for line in lines)


def current(readme: str) -> str:
    "The table as the README has it now (between the markers)."
    if BEGIN not in readme or END not in readme:
        raise ValueError(f"README.md has no stage table markers ({BEGIN!r} ... {END!r}): put them where the table goes")
    return readme.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def check(root: Path = ROOT):
    "None where the README's table is current, else one line saying what is missing or stale and how to fix it."
    fix = "run `python tools/stage_table.py`"
    try:
        have, want = current((root / "README.md").read_text()), table(root)
    except ValueError as e:
        return str(e)
    missing = [name for name in module_notebooks(root) if f"`{name}`" not in have]
    if missing:
        return f"README.md's stage table misses nbs/{missing[0]}.ipynb: {fix}"
    return None if have == want.strip() else f"README.md's stage table is stale: {fix}"


def write(root: Path = ROOT) -> None:
    path = root / "README.md"
    readme = path.read_text()
    current(readme)  # the markers are there
    head, rest = readme.split(BEGIN, 1)
    path.write_text(f"{head}{BEGIN}\n{table(root)}\n  {END}{rest.split(END, 1)[1]}")  # in the README's list item


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether the table is current (exit 1 if not)")
    if parser.parse_args().check:
        problem = check()
        print(problem or "README.md's stage table is current")
        sys.exit(1 if problem else 0)
    try:
        write()
    except ValueError as e:
        sys.exit(str(e))
