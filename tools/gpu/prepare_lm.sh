#!/usr/bin/env bash
# Prepares .gpu/ for the code-agent GPU run (tools/gpu/grpo.sh): what tools/gpu/prepare.sh packs (PufferLib's source,
# which the LM path imports and does not need built, and the pure-Python wheels), without numpy 1.26 (the image's
# numpy 2 stays: with 1.26 first on the path transformers' Llama import failed there), plus TRL and datasets for the
# TRL reference. pandas (12 MB) does not fit the 64 MiB the device tool carries: the image's is used where it has one,
# else the TRL part reports that it could not run. Then, through the device tool, with `.gpu` carried:
#   bash tools/gpu/grpo.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/gpu/prepare.sh >/dev/null
rm -f .gpu/whl/numpy-*.whl
.venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 -d .gpu/whl \
  trl==1.16.0 datasets==5.0.1 pyarrow==21.0.0 xxhash==3.5.0 multiprocess==0.70.18 fsspec==2025.9.0 psutil==7.2.2
echo "tools/gpu/prepare_lm.sh: .gpu is $(du -sh .gpu | cut -f1), the repository $(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1) bytes (64 MiB carried in all)"
