"""The C kernels under AddressSanitizer and UBSan: built with `WORKBENCH_KERNEL_SANITIZE=1` (-O1, a cache key of their
own), the gradient checks of the kernels' notebooks run against torch's autograd on their small shapes (PPO's
MLP, LSTM and transformer kernels; GAE; the worker threads). A finding aborts the process, so it fails here."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ["01i_kernels.ppo", "01j_kernels.lstm", "02f_kernels.fused"]

# In the sanitized process: every kernel must build (a skip there would hide the check), then the notebooks run.
RUN = """
import sys
from pathlib import Path
from nbdev.test import test_nb
from workbench.kernels.build import build_kernel, SOURCES
for name in ("ppo.c", "ppo_lstm.c", "ppo_tf.c"):
    lib, why = build_kernel(SOURCES / name)
    if lib is None: sys.exit(f"{name} was not built with the sanitizers: {why}")
for nb in sys.argv[1:]:
    ok, _ = test_nb(Path(nb))
    if not ok: sys.exit(f"{nb} failed under the sanitizers")
print("sanitized: all passed")
"""


def sanitizer_runtime() -> str | None:
    "The compiler's ASan runtime, where it has the sanitizers (a program builds with them), else None."
    cc = os.environ.get("CC") or shutil.which("cc")
    if not cc:
        return None
    try:
        lib = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True, timeout=60).stdout
        built = subprocess.run(
            [cc, "-fsanitize=address,undefined", "-x", "c", "-", "-o", os.devnull],
            input="int main(void) { return 0; }\n", capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    lib = lib.strip()
    return lib if built.returncode == 0 and os.path.isabs(lib) and os.path.exists(lib) else None


def test_kernels_pass_their_gradient_checks_under_asan_and_ubsan(tmp_path):
    runtime = sanitizer_runtime()
    if runtime is None:
        pytest.skip("the C compiler has no AddressSanitizer/UBSan (or there is no compiler)")
    env = {
        **os.environ,
        "WORKBENCH_KERNEL_SANITIZE": "1",
        "WORKBENCH_KERNELS_STRICT": "1",
        "WORKBENCH_CACHE": str(tmp_path),  # a fresh build, whatever the user's cache holds
        "LD_PRELOAD": runtime,  # ASan's runtime must come first in a Python process
        "ASAN_OPTIONS": "detect_leaks=0",  # Python and torch keep their allocations until exit
        "UBSAN_OPTIONS": "print_stacktrace=1",
        "OMP_NUM_THREADS": "1",
    }
    env.pop("WORKBENCH_KERNELS", None)
    nbs = [str(ROOT / "nbs" / f"{name}.ipynb") for name in NOTEBOOKS]
    run = subprocess.run(
        [sys.executable, "-c", RUN, *nbs], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200
    )
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-6000:])
    assert "sanitized: all passed" in run.stdout
