"""Write the stage table of the development guide (`nbs/guides/development.ipynb`) from `nbs/`: one row a room, naming
every module notebook in it.

`python tools/stage_table.py` rewrites the table between its two markers in that notebook's markdown; `--check` only
says, in one line, whether it is current (tests/test_architecture.py runs the check). A notebook whose module belongs to no room
below stops both with the line that says where to add it.
"""

import argparse, json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- stage table: written by tools/stage_table.py from nbs/, do not edit by hand -->"
END = "<!-- end of the stage table -->"

ROOMS = [  # (the packages a row holds, what they do), in the order of the data flow
    (
        ("workbench.deps", "workbench.core", "workbench.answers"),
        "errors, typed configs, seeding, atomic files; the process settings dependencies force; a model's answer as a "
        "program",
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
        "training config, checkpoints, the losses, CUDA graphs (the rollout's step, the advantages, the update), the "
        "learner's backends, the rollout (its buffer, envs in batches), the loop's frame, PPO, the language-model "
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
    (
        ("workbench.docs",),
        "the documentation site: generated references (CLI, config keys, envs, REST API) and the site built from the "
        "notebooks",
    ),
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
    "The stage table's markdown, indented to sit in the guide's list item."
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


GUIDE = Path("nbs") / "guides" / "development.ipynb"


def _cell(root: Path) -> tuple:
    "The development guide as JSON, and its markdown cell that holds the table's markers."
    nb = json.loads((root / GUIDE).read_text())
    cell = next((c for c in nb["cells"] if BEGIN in "".join(c["source"])), None)
    if cell is None or END not in "".join(cell["source"]):
        raise ValueError(f"{GUIDE} has no stage table markers ({BEGIN!r} ... {END!r}): put them where the table goes")
    return nb, cell


def current(text: str) -> str:
    "The table as `text` has it now (between the markers)."
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def check(root: Path = ROOT):
    "None where the guide's table is current, else one line saying what is missing or stale and how to fix it."
    fix = "run `python tools/stage_table.py`"
    try:
        have, want = current("".join(_cell(root)[1]["source"])), table(root)
    except ValueError as e:
        return str(e)
    missing = [name for name in module_notebooks(root) if f"`{name}`" not in have]
    if missing:
        return f"{GUIDE}'s stage table misses nbs/{missing[0]}.ipynb: {fix}"
    return None if have == want.strip() else f"{GUIDE}'s stage table is stale: {fix}"


def write(root: Path = ROOT) -> None:
    nb, cell = _cell(root)
    head, rest = "".join(cell["source"]).split(BEGIN, 1)
    text = f"{head}{BEGIN}\n{table(root)}\n  {END}{rest.split(END, 1)[1]}"  # in the guide's list item
    cell["source"] = [line + "\n" for line in text.split("\n")[:-1]] + [text.split("\n")[-1]]
    (root / GUIDE).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether the table is current (exit 1 if not)")
    if parser.parse_args().check:
        problem = check()
        print(problem or f"{GUIDE}'s stage table is current")
        sys.exit(1 if problem else 0)
    try:
        write()
    except ValueError as e:
        sys.exit(str(e))
