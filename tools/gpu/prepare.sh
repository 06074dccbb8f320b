#!/usr/bin/env bash
# Prepares .gpu/ (git-ignored) for a lent GPU machine, whose image has Python 3.12 and a CUDA torch but not our
# dependencies, and no network: the pure-Python wheels our trainers and PuffeRL import, numpy 1.26.4 for cp312
# (PufferLib 3.0 needs numpy<2; it shadows the image's numpy 2 through PYTHONPATH), and PufferLib's sdist trimmed
# to its cartpole and breakout envs and its advantage op (setup.sh builds them there, with nvcc: about 55 s).
# Then, through the device tool, with `.gpu` carried:  bash tools/gpu/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PIP=(.venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 -d .gpu/whl)
rm -rf .gpu && mkdir -p .gpu/whl
"${PIP[@]}" --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 numpy==1.26.4
"${PIP[@]}" gymnasium==0.29.1 farama-notifications==0.0.6 pettingzoo==1.24.1 gym-notices==0.0.8 shimmy==1.3.0 \
  pyro-ppl==1.9.2 pyro-api==0.1.2 rich-argparse==1.8.0 dill==0.4.1 fastcore==1.14.5
.venv/bin/python -m pip wheel -q --no-deps --no-build-isolation -w .gpu/whl gym==0.23.0   # an sdist only
.venv/bin/python - <<'PY'   # the sdist, patched as tools/build_pufferlib.py builds it
import sys, tarfile
from pathlib import Path
sys.path.insert(0, "tools")
from build_pufferlib import VERSION, fetch_sdist, patch_source
with tarfile.open(fetch_sdist()) as tar: tar.extractall(".gpu", filter="data")
Path(f".gpu/pufferlib-{VERSION}").rename(".gpu/puffer")
patch_source(Path(".gpu/puffer"))
PY
cd .gpu/puffer
rm -rf pufferlib/resources pufferlib/ocean/impulse_wars examples pufferlib.egg-info   # 72 MB of assets; box2d
find pufferlib/ocean -name binding.c ! -path '*/cartpole/*' ! -path '*/breakout/*' -delete   # the benchmarks' envs
mkdir -p pufferlib/resources
sed -i "s/        '-flto',//" setup.py   # the image's gcc has no lto-wrapper for its ld
cd ../..
echo "tools/gpu/prepare.sh: .gpu is $(du -sh .gpu | cut -f1) (the device tool carries at most 64 MiB)"
