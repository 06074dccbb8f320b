# Issue 41's GPU run, on a lent GPU machine from the repo root, after tools/gpu/prepare_lm.sh here:
#   device tool: run  command="bash tools/gpu/grpo.sh 2>&1"  carry=[".gpu"]  timeout_s=540
# bench/grpo_gpu.py on the 0.5B-shaped model: the decoders' tokens/s at 128 x 256 and their agreement, our GRPO
# (compiled decoder) against TRL's on 16 tasks x G 8, peak memory; the record (machine, commit, figures, each part's result) in $OUT/records.
# PufferLib comes as its source, not built: the LM path imports it and needs nothing compiled (and the image's numpy 2
# stays first: with numpy 1.26 the image's transformers could not import Llama).
# PARTS=ours,trl runs some parts only. DEV=cpu SETUP=0 PY=$PWD/.venv/bin/python bash tools/gpu/grpo.sh tries the flow here (the bench's --cpu --tiny mode).
export PYTHONUNBUFFERED=1
T0=$(date +%s); PY=${PY:-python3}; OUT=${OUT:-/tmp/out}; BUDGET=${BUDGET:-450}; DEV=${DEV:-cuda}; mkdir -p "$OUT"
echo "== setup"
if [ "${SETUP:-1}" = 1 ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu/whl/*.whl \
    || { echo "setup: pip failed"; exit 1; }
  rm -rf /tmp/puffer && cp -r .gpu/puffer /tmp/puffer
  export PYTHONPATH=/tmp/puffer:/tmp/site:$(pwd)
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/nvidia.txt"
else export PYTHONPATH=$(pwd); fi
MODE=(); [ "$DEV" = cpu ] && MODE=(--cpu --tiny)
(cd /tmp && $PY -W ignore -c 'import numpy, torch, transformers, workbench.train.grpo, workbench.policy.decode
print("setup ok: numpy", numpy.__version__, "torch", torch.__version__, "transformers", transformers.__version__,
      "cuda", torch.cuda.is_available())') || exit 1
(cd /tmp && $PY -W ignore -c 'import trl, datasets; print("TRL", trl.__version__)') \
  || echo "TRL's reference cannot be imported here (the image lacks pandas?): its part will say so"
echo "setup took $(( $(date +%s) - T0 )) s"
echo "== python -m bench grpo_gpu (its record: \$OUT/records/grpo_gpu.jsonl; each part's JSON in grpo_gpu.txt as it comes)"
LEFT=$(( BUDGET - ($(date +%s) - T0) ))
timeout $LEFT $PY -m bench grpo_gpu "${MODE[@]}" --budget $(( LEFT - 15 )) --steps ${STEPS:-3} ${PARTS:+--parts $PARTS} \
  --records "$OUT/records" --record --max-wait 0 2>&1 \
  | grep -v Warning | tee "$OUT/grpo_gpu.txt"
echo "== done at $(( $(date +%s) - T0 )) s"
