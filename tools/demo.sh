#!/usr/bin/env bash
# The main job on its embedded default: train the default agent on CartPole, evaluate it on
# 100 fresh episodes, and say where the run folder is.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
export PYTHONUNBUFFERED=1
summary=$(.venv/bin/workbench train --env gym:CartPole-v1 --json "$@" | tail -n 1)
run_dir=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["run_dir"])' "$summary")
best=$(python3 -c 'import json,sys; s=json.loads(sys.argv[1]); print(s["best_checkpoint"] or s["last_checkpoint"])' "$summary")
echo "evaluating $best on 100 episodes"
.venv/bin/workbench eval "$best" --episodes 100
echo "run folder: $run_dir"
