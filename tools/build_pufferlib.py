"""Build and install PufferLib 3.0.0 from its PyPI source distribution, without GitHub.

PufferLib's setup.py downloads raylib (web build) and box2d from GitHub, which these
machines cannot reach; the Linux build only needs the raylib copy that ships inside the
sdist. We fetch the sdist from the package index, make the download targets exist so
setup.py skips them, drop the one env that needs box2d, and build a wheel that is cached
for the next set-up. See ../shared/notes/pufferlib.md.
"""

import argparse, hashlib, os, re, shutil, subprocess, sys, tarfile, tempfile, urllib.request
from pathlib import Path

VERSION = "3.0.0"
SDIST = f"pufferlib-{VERSION}.tar.gz"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "workbench"


def index_url() -> str:
    "The package index pip is configured with (PyPI by default)."
    url = os.environ.get("PIP_INDEX_URL")
    if not url:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", "global.index-url"], capture_output=True, text=True
        )
        url = out.stdout.strip() if out.returncode == 0 else ""
    return (url or "https://pypi.org/simple").rstrip("/")


def fetch_sdist() -> Path:
    "Download the sdist into the cache (once) and check its sha256 against the index."
    CACHE.mkdir(parents=True, exist_ok=True)
    page = urllib.request.urlopen(f"{index_url()}/pufferlib/", timeout=60).read().decode()
    m = re.search(r'href="([^"]*/' + re.escape(SDIST) + r')#sha256=([0-9a-f]{64})"', page)
    if not m:
        sys.exit(f"build_pufferlib: {SDIST} not found on {index_url()}")
    url, sha = m.groups()
    path = CACHE / SDIST
    if path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() == sha:
        return path
    tmp = path.with_suffix(".part")
    with urllib.request.urlopen(url, timeout=300) as r, open(tmp, "wb") as f:
        shutil.copyfileobj(r, f)
    if hashlib.sha256(tmp.read_bytes()).hexdigest() != sha:
        tmp.unlink()
        sys.exit(f"build_pufferlib: sha256 mismatch for {url}")
    tmp.rename(path)
    return path


def wheel_dir() -> Path:
    "Cached wheels are keyed by the torch build they were compiled against."
    import torch

    return CACHE / "wheels" / torch.__version__


def patch_source(src: Path) -> None:
    "Make the unpacked sdist build offline: its download targets exist (setup.py skips them), no box2d env."
    for d in ["raylib-5.5_webassembly", "box2d-web", "box2d-linux-amd64/include", "box2d-linux-amd64/src"]:
        (src / d).mkdir(parents=True, exist_ok=True)
    (src / "pufferlib/ocean/impulse_wars/binding.c").unlink(missing_ok=True)


def build_wheel(constraint: str) -> Path:
    "Patch the unpacked sdist and build a wheel into the cache."
    sdist = fetch_sdist()
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(sdist) as tar:
            tar.extractall(tmp, filter="data")
        src = Path(tmp) / f"pufferlib-{VERSION}"
        patch_source(src)
        env = dict(os.environ)
        import torch  # a CPU torch must not see nvcc, or setup.py tries a CUDA extension

        if torch.version.cuda is None:
            env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not (Path(p) / "nvcc").exists())
        out = wheel_dir()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-build-isolation",
                "--no-deps",
                "--constraint",
                constraint,
                "-w",
                str(out),
                str(src),
            ],
            check=True,
            env=env,
        )
    return next(out.glob(f"pufferlib-{VERSION}-*.whl"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--constraint")
    ap.add_argument(
        "--cached-path", action="store_true", help="print the wheel built before (else exit 3); install nothing"
    )
    args = ap.parse_args()
    wheels = sorted(wheel_dir().glob(f"pufferlib-{VERSION}-*.whl"))
    if args.cached_path:
        sys.exit(print(wheels[-1]) if wheels else 3)
    if not args.constraint:
        ap.error("--constraint is needed to build or install")
    wheel = wheels[-1] if wheels else build_wheel(os.path.abspath(args.constraint))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--constraint", args.constraint, str(wheel)], check=True
    )


if __name__ == "__main__":
    main()
