# Sourced by tools/gpu/run.sh on the device machine, from the repo root: installs the wheels of .gpu/whl into /tmp/site
# and builds .gpu/puffer (tools/gpu/prepare.sh) in place: its cartpole and breakout envs and _C advantage op (CUDA where nvcc is).
REPO=$(pwd)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PY=${PY:-python3}
PYV=$($PY -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
t0=$(date +%s)
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  $(ls .gpu/whl/*.whl | grep -v numpy-) .gpu/whl/numpy-*-cp$PYV-*.whl || { echo "setup: pip failed"; return 1; }
export PYTHONPATH=/tmp/site
rm -rf /tmp/puffer && cp -r .gpu/puffer /tmp/puffer
(cd /tmp/puffer && MAX_JOBS=16 TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} \
  $PY setup.py build_ext --inplace -j 16 >"$OUT/puffer_build.log" 2>&1) || { tail -30 "$OUT/puffer_build.log"; return 1; }
export PYTHONPATH=/tmp/puffer:/tmp/site:$REPO
cd /tmp && $PY -W ignore -c 'import numpy, torch, pufferlib, pufferlib._C, pufferlib.ocean.cartpole.binding, pufferlib.ocean.breakout.binding, workbench.train.ppo
print("setup ok:", "numpy", numpy.__version__, "torch", torch.__version__, "cuda", torch.cuda.is_available(),
      "advantage op", hasattr(torch.ops.pufferlib, "compute_puff_advantage"))' || return 1
cd "$REPO"
echo "setup took $(( $(date +%s) - t0 )) s"
