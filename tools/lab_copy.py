"""`make lab`'s copies of the tutorials: JupyterLab opens `lab/tutorial.*.ipynb`, never the tracked files in `nbs/`.

Running a tutorial fills its notebook with outputs (megabytes of them once the lab autosaves) and invites edits (a
longer run, another env). Made in `nbs/`, those would show in `git status` and be what `make docs` and `make test` run.
So the lab works on copies in a folder git ignores: made once and kept after (they are yours), a note at the top saying
so; a copy older than its original says it in the terminal. A copy carries the kernel's own metadata (its spec's name,
the language's version), so that JupyterLab does not mark it changed the moment it opens, and its relative links point
back into `nbs/`.

    python tools/lab_copy.py [--to lab]      # makes what is missing; prints the copy of the live-training tutorial
"""

import argparse, json, os, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRST = "tutorial.live_training.ipynb"  # the one `make lab` opens
LINK = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:|#|/)([^)\s]+)\)", re.I)  # a relative Markdown link's target


def kernel_metadata() -> dict:
    "The notebook metadata JupyterLab writes once the default kernel (python3) is connected: its spec and language."
    from ipykernel.ipkernel import IPythonKernel
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    return {
        "kernelspec": {"display_name": spec.display_name, "language": spec.language, "name": "python3"},
        "language_info": dict(IPythonKernel.language_info),
    }


def note(original: Path, folder: Path) -> str:
    "The copy's first line under its title: whose copy it is, and that the original is what the build runs."
    name = lambda p: p.relative_to(ROOT) if ROOT in p.parents else p.name
    return (
        f"*Your copy of `{name(original)}`, made by `make lab`: change it and run it freely. Git ignores "
        f"`{name(folder)}/`, and the docs build and the tests run the original; delete this file for a fresh copy.*"
    )


def lab_copy(original: Path, folder: Path, metadata: dict) -> Path:
    "The copy of notebook `original` in `folder`, made (atomically) unless it is there; an existing copy is kept."
    copy = folder / original.name
    if copy.exists():
        return copy
    nb = json.loads(original.read_text())
    rel = os.path.relpath(original.parent, folder)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            cell["source"] = LINK.sub(lambda m: f"]({rel}/{m.group(1)})", text).splitlines(keepends=True)
    at = 1 if nb["cells"] and nb["cells"][0]["cell_type"] == "markdown" else 0  # under the title
    nb["cells"].insert(at, {"cell_type": "markdown", "id": "lab-copy-note", "metadata": {},
                            "source": [note(original, folder)]})  # fmt: skip
    nb["metadata"] = {**nb.get("metadata", {}), **metadata}
    folder.mkdir(parents=True, exist_ok=True)
    part = copy.with_name(f".{copy.name}.part")
    part.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    os.replace(part, copy)
    return copy


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--to", default="lab", help="the folder of the copies, under the repository (default: lab)")
    a = p.parse_args(argv)
    folder = (ROOT / a.to).resolve()
    if ROOT not in folder.parents:
        print(f"lab_copy: --to must be a folder inside the repository, got {a.to!r}", file=sys.stderr)
        return 2
    metadata, first = kernel_metadata(), None
    for original in sorted((ROOT / "nbs").glob("tutorial.*.ipynb")):
        made = not (folder / original.name).exists()
        copy = lab_copy(original, folder, metadata)
        where = copy.relative_to(ROOT)
        if made:
            print(f"[lab] made {where}, your copy of {original.relative_to(ROOT)}", file=sys.stderr)
        elif original.stat().st_mtime > copy.stat().st_mtime:
            print(
                f"[lab] {where} is older than {original.relative_to(ROOT)}: delete it for a fresh copy", file=sys.stderr
            )
        if original.name == FIRST:
            first = where
    if first:
        print(first)
    return 0


if __name__ == "__main__":
    sys.exit(main())
