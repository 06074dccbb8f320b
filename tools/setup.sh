#!/usr/bin/env bash
# Set up .venv with everything Workbench needs. Idempotent: a second run with nothing
# changed returns in well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
VENV=.venv
STAMP=$VENV/.workbench-setup
CONSTRAINTS=tools/constraints.txt
want=$(cat pyproject.toml tools/setup.sh tools/build_pufferlib.py "$CONSTRAINTS" | sha256sum | cut -d' ' -f1)

# The browser tests drive Debian's chromium (Playwright's own browser download is not reachable here).
if [ ! -x /usr/bin/chromium ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "[setup] installing Debian's chromium for the browser tests" >&2
    { apt-get install -y chromium || { apt-get update && apt-get install -y chromium; }; } >/tmp/workbench-apt.log 2>&1 \
      || echo "[setup] could not install chromium (see /tmp/workbench-apt.log): the browser tests will fail" >&2
  else
    echo "[setup] /usr/bin/chromium is missing: install it (sudo apt-get install -y chromium) for the browser tests" >&2
  fi
fi

# JupyterLab in .venv (`make lab`) makes no network calls of its own: no "get notified about
# official Jupyter news?" prompt, no news or update checks, an extension manager that lists what
# is installed without asking PyPI, and a python3 kernelspec that names .venv's python. Written on
# every run (before the early return below), changing files only where they differ.
lab_settings() {
  "$VENV/bin/python" - "$VENV" <<'EOF'
import json, os, sys
venv = os.path.abspath(sys.argv[1])

def update(path, merge):
    "Apply `merge` to the JSON file at `path` (created if missing); write only if that changed it."
    try:
        old = json.load(open(path)) if os.path.exists(path) else {}
        new = merge(json.loads(json.dumps(old)))
        if new != old:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + ".part", "w") as f: json.dump(new, f, indent=2); f.write("\n")
            os.replace(path + ".part", path)   # a new file: never written through a link into an installer's cache
    except (OSError, ValueError, LookupError, AttributeError) as e:
        print(f"[setup] could not write the lab's offline settings into {path} ({e!r}): fix or delete that file", file=sys.stderr)

def settings(d):    # JupyterLab's defaults for every user of this environment
    d.setdefault("@jupyterlab/apputils-extension:notification", {}).update(fetchNews="false", checkForUpdates=False)
    return d

def server(d):
    d.setdefault("LabApp", {}).update(news_url=None, extension_manager="readonly",
                                      check_for_updates_class="jupyterlab.NeverCheckForUpdate")
    return d

def kernel(d):   # ipykernel's spec says "python"; one copied from another environment names that one's python
    if d and os.path.basename(d["argv"][0]).startswith("python"): d["argv"][0] = os.path.join(venv, "bin", "python")
    return d

update(f"{venv}/share/jupyter/lab/settings/overrides.json", settings)
update(f"{venv}/etc/jupyter/jupyter_lab_config.json", server)
update(f"{venv}/share/jupyter/kernels/python3/kernel.json", kernel)
EOF
}

# The docs site's search from a file:// folder runs its worker through iframe-worker's shim (Material's offline plugin
# would load it from a CDN): taken from the npm registry once, kept in .venv.
SHIM=$VENV/share/workbench/iframe-worker-shim.js
docs_shim() {
  [ -f "$SHIM" ] && return 0
  command -v npm >/dev/null || { echo "[setup] npm is missing: the docs site's search will work from make docs-serve only, not from file://" >&2; return 0; }
  local tmp; tmp=$(mktemp -d)
  if (cd "$tmp" && npm pack --silent iframe-worker@1.0.4 >/dev/null 2>&1 && tar xzf iframe-worker-1.0.4.tgz package/shim/index.js); then
    mkdir -p "$(dirname "$SHIM")" && cp "$tmp/package/shim/index.js" "$SHIM"
  else echo "[setup] could not fetch iframe-worker from npm: the docs site's search will work from make docs-serve only" >&2; fi
  rm -rf "$tmp"
}

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x "$VENV/bin/workbench" ]; then
  lab_settings
  [ -d "$VENV" ] && docs_shim
  exit 0
fi

say() { echo "[setup] $(date +%T) $*" >&2; }   # the time: what each step costs shows in a CI log
[ -x "$VENV/bin/python" ] || { say "creating $VENV"; "$PYTHON" -m venv "$VENV"; }
pip=("$VENV/bin/python" -m pip install --quiet --constraint "$CONSTRAINTS")
# uv installs what pip would (the same versions, checked with both freezes) in a third of the time: it unpacks and
# compiles in parallel (a fresh set-up: pip 142 s, uv about 45 s). The bytecode is kept: these machines set
# PYTHONDONTWRITEBYTECODE=1, so without it each import compiles its modules again (the notebooks took 178 s instead of
# 124; a whole CI run 28 min instead of 19, when uv compiled only the last step's packages). Files are copied from uv's
# cache, not linked to it: a file the environment changes (the kernel spec, below) must not change the cache's copy,
# and with it every environment installed from it. pip stays the fallback: where uv can't be had, or fails.
"${pip[@]}" uv==0.13.8 >/dev/null 2>&1 || say "could not install uv: pip installs everything (slower)"
install() {   # install "$@" with uv (compiled: uv compiles what it installs in that call), or with pip
  if [ -x "$VENV/bin/uv" ]; then
    "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" --link-mode copy --compile-bytecode \
      --constraint "$CONSTRAINTS" "$@" && return 0
    say "uv failed: trying pip"
  fi
  "${pip[@]}" "$@"
}

# torch: the CPU wheel that lies on this machine's disk where pip is told of one (pip's find-links), which uv does not
# read; else pip, whose configuration knows where it is.
say "installing torch (CPU) and build tools"
wheel=""
for d in ${PIP_FIND_LINKS:-} $("$VENV/bin/python" -m pip config get global.find-links 2>/dev/null || true); do
  for w in "$d"/torch-2.13.0+cpu-cp311-*.whl; do [ -f "$w" ] && wheel=$w; done
done
if [ -n "$wheel" ]; then install "$wheel" numpy==1.26.4 Cython wheel "setuptools>=64"
else "${pip[@]}" torch==2.13.0 && install numpy==1.26.4 Cython wheel "setuptools>=64"; fi

if ! "$VENV/bin/python" -c 'import importlib.metadata as m, pufferlib, pufferlib.vector, sys; sys.exit(m.version("pufferlib") != "3.0.0")' 2>/dev/null; then
  # A wheel this machine built before (for this torch) goes straight in: the plain install below spends ~20 s
  # downloading the sdist and failing to reach GitHub where these machines cannot.
  if cached=$("$VENV/bin/python" tools/build_pufferlib.py --cached-path 2>/dev/null) && install "$cached"; then
    say "installed pufferlib 3.0.0 from the wheel built before (~/.cache/workbench/wheels)"
  else
    say "installing pufferlib 3.0.0 (plain pip install first)"
    # No build isolation: an isolated build env would pull a multi-GB CUDA torch.
    if ! "${pip[@]}" --no-build-isolation pufferlib==3.0.0 >/tmp/workbench-pufferlib-plain.log 2>&1; then
      say "plain install failed ($(grep -m1 -oE "[A-Za-z]*Error: .{0,80}" /tmp/workbench-pufferlib-plain.log || echo "see /tmp/workbench-pufferlib-plain.log")); building from the PyPI sdist"
      "$VENV/bin/python" tools/build_pufferlib.py --constraint "$CONSTRAINTS"
    fi
  fi
fi

say "installing workbench and its dependencies"
install --no-build-isolation -e ".[dev]"
# `code?source=codeio` reads the CodeI/O programs in reasoning-gym's wheel (a data file): the package's own dependencies
# (a dozen puzzle libraries) are not needed for that, and it is never imported.
install --no-deps reasoning-gym==0.1.25

lab_settings
docs_shim
echo "$want" > "$STAMP"
say "done: $("$VENV/bin/python" -W ignore::FutureWarning -c 'import torch, pufferlib; print("torch", torch.__version__, "pufferlib", pufferlib.__version__)')"
