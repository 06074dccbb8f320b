#!/usr/bin/env bash
# `make lab`: JupyterLab on 127.0.0.1 with a token, in .venv's environment and kernel, rooted at
# the repository, opening your copy of the live-training tutorial (lab/). Arguments go on to `jupyter lab`
# (e.g. `bash tools/lab.sh --no-browser --port 8899`); later ones override the defaults here.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh      # also writes the lab's offline settings into .venv

root=$PWD
export VIRTUAL_ENV=$root/.venv PATH=$root/.venv/bin:$PATH   # notebooks and terminals see workbench, pytest...
export JUPYTER_PREFER_ENV_PATH=1                            # .venv's kernelspec and settings before ~/.local's
# The lab opens copies of the tutorials (in lab/, which git ignores; WORKBENCH_LAB_COPIES names another folder), so
# that running and saving them never changes the tracked notebooks the docs build and the tests run (tools/lab_copy.py).
tutorial=$(.venv/bin/python tools/lab_copy.py --to "${WORKBENCH_LAB_COPIES:-lab}")
token=$(.venv/bin/python -c 'import secrets; print(secrets.token_urlsafe(32))')
args=(--ServerApp.ip=127.0.0.1 --ServerApp.root_dir="$root" --IdentityProvider.token="$token")
[ -n "$tutorial" ] && args+=(--ServerApp.file_to_run="$tutorial")
[ "$(id -u)" = 0 ] && args+=(--allow-root)
runtime=$(.venv/bin/jupyter --runtime-dir)

# Once the server has written its runtime file (it then listens), print its URLs with the token.
# Jupyter's own log masks a token it did not make up; this one reads the one in use.
announce() {
  local info=$runtime/jpserver-$1.json
  for _ in $(seq 1200); do
    kill -0 "$1" 2>/dev/null || return 0
    if [ -s "$info" ] && .venv/bin/python - "$info" "$tutorial" <<'EOF' 2>/dev/null; then return 0; fi
import json, sys
info, tutorial = json.load(open(sys.argv[1])), sys.argv[2]
base = info["url"].rstrip("/")
urls = [f"{base}/lab/tree/{tutorial}", f"{base}/lab"] if tutorial else [f"{base}/lab"]
print(f"\n[lab] JupyterLab for {info['root_dir']} (Ctrl-C to stop):", *(f"[lab]   {u}?token={info['token']}" for u in urls),
      "", sep="\n", flush=True)
EOF
    sleep 0.25
  done
}
( announce $$ & )       # detached, so that no zombie is left under jupyter once it is done
exec .venv/bin/jupyter lab "${args[@]}" "$@"
