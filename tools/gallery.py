"""Make the docs site's gallery of example reports (`nbs/gallery/`): a notebook job's report, a batch's and a sweep's,
from small real runs of `nbs/experiments/train.ipynb` and the CartPole sweep, made in a temporary folder.

    python tools/gallery.py      # a few minutes on 2 cores; then commit nbs/gallery/

The pages load plotly.js from `_static/` beside them (`--plotly shared`); that file is not committed: the site's build
puts the installed plotly.js there. Paths of the temporary folder are written as `.` so that nothing names this machine.
"""

import os, re, shutil, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WB = [sys.executable, "-m", "workbench.cli"]
SMALL = ["-p", "total_timesteps", "20000", "-p", "eval_episodes", "10", "-p", "eval_every", "5"]


def run(cmd: list, cwd: Path) -> None:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"gallery: {' '.join(cmd[2:])} failed:\n{r.stderr[-3000:]}")


def main() -> int:
    out = ROOT / "nbs" / "gallery"
    with tempfile.TemporaryDirectory(prefix="gallery-") as tmp:
        tmp = Path(tmp)
        shutil.copytree(ROOT / "nbs" / "experiments", tmp / "experiments")
        nb, common = "experiments/train.ipynb", ["--runs-dir", "runs", "--plotly", "shared", "--quiet"]
        run(WB + ["run", nb, *SMALL, "--out", "reports/run", *common], tmp)
        run(WB + ["batch", nb, "--grid", "seed=1,2", "--grid", "learning_rate=0.001,0.0025", *SMALL, "--max-parallel", "2",
                  "--out", "reports/batch", *common], tmp)  # fmt: skip
        run(WB + ["sweep", "--config", "experiments/sweeps/cartpole.toml", "--trials", "4", "--timeout", "30",
                  "--total-timesteps", "30000", "--method", "random", "--runs-dir", "runs", "--quiet"], tmp)  # fmt: skip
        from workbench.jobs.sweep_report import build_sweep_report

        os.chdir(tmp)  # the sweep's plan names its run store relative to where it ran
        sweep = next(p for p in (tmp / "runs" / "sweeps").iterdir() if p.is_dir() and not p.name.startswith("_"))
        build_sweep_report(sweep, plotly="shared")
        shutil.copytree(
            sweep, tmp / "reports" / "sweep" / sweep.name, ignore=shutil.ignore_patterns("*.pt", "checkpoints")
        )
        os.chdir(ROOT)
        shutil.rmtree(out, ignore_errors=True)
        keep = shutil.ignore_patterns("_static", "*.pt", "checkpoints", "logs", "*.log", "*.json", "*.db*", "*.ipynb")
        shutil.copytree(tmp / "reports", out, ignore=keep)
        for page in out.rglob("*"):
            if page.is_file() and page.suffix in (".html", ".ipynb"):
                text = page.read_text().replace(str(tmp), ".").replace(str(tmp.resolve()), ".")
                page.write_text(re.sub(r"/tmp/[A-Za-z0-9_./-]*gallery-[A-Za-z0-9_]+", ".", text))
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"nbs/gallery: {len(list(out.rglob('*.html')))} pages, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
