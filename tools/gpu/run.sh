# Issue 22's GPU checks, on a lent GPU machine from the repo root, after tools/gpu/prepare.sh here:
#   device tool: run  command="bash tools/gpu/run.sh 2>&1"  carry=[".gpu"]  timeout_s=540
# Each stage is bounded so that the whole fits BUDGET seconds; its logs come back from $OUT.
# DEV=cpu N1=256 N2=512 STEPS=300000 TS=100000 PY=<python> bash tools/gpu/run.sh tries it on a CPU.
# STAGES picks the checks after setup and their order (default: all, as below).
export PYTHONUNBUFFERED=1
T0=$(date +%s)
DEV=${DEV:-cuda}; N1=${N1:-4096}; N2=${N2:-16384}; STEPS=${STEPS:-5000000}; TS=${TS:-3000000}; PY=${PY:-python3}
BUDGET=${BUDGET:-480}; STAGES=${STAGES:-graphs,mlp,lstm,async,breakout,learn,doctor,compile,cli,dp}
WORKERS=${WORKERS:-8}
stage() { echo; echo "== $1 (at $(( $(date +%s) - T0 )) s)"; }
lim() { local left=$(( BUDGET - ($(date +%s) - T0) )); [ $left -lt $1 ] && echo $(( left > 5 ? left : 5 )) || echo $1; }
stage setup
source tools/gpu/setup.sh || exit 1
nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,power.draw,memory.total --format=csv | tee "$OUT/nvidia.txt"
$PY -c 'import torch; print("cores", __import__("os").cpu_count(), "cudnn", torch.backends.cudnn.version())'

s_graphs() {
  stage "the rollout's step as a CUDA graph"
  timeout $(lim 60) $PY tools/gpu/graph_check.py 2>&1 | tee "$OUT/graph_check.txt"
}
s_learn() {
  stage "the same runs still learn: puffer:cartpole, 3 seeds, the rollout's step graphed and eager"
  R=/tmp/learn; rm -rf $R
  for seed in 1 2 3; do for g in cuda-graphs no-cuda-graphs; do
    timeout $(lim 40) $PY -m workbench.cli train --env puffer:cartpole --num-envs $N1 --device $DEV --seed $seed \
      --total-timesteps ${LEARN_STEPS:-2000000} --eval-every 0 --runs-dir $R/$g --name s$seed --quiet --json --$g >/dev/null 2>&1
    RUN=$(ls -d $R/$g/s$seed-*/ | head -1)
    echo "seed $seed $g: $(timeout $(lim 30) $PY -m workbench.cli eval "$RUN" --device $DEV --episodes 100 --json 2>/dev/null \
      | $PY -c 'import json, sys; r = json.loads(sys.stdin.read().strip().splitlines()[-1]); print("greedy", round(r["mean_return"], 1))')"
  done; done | tee "$OUT/learn.txt"
}
s_doctor() {
  stage doctor
  timeout $(lim 40) $PY -m workbench.cli doctor --device $DEV 2>&1 | tee "$OUT/doctor.txt"
}
s_mlp() {
  stage "gpu_sps mlp fp32, bf16"
  timeout $(lim 230) $PY bench/gpu_sps.py --device $DEV --num-envs $N1 $N2 --precisions fp32 fp32+eager bf16 --steps $STEPS \
    --worker-timeout 60 --json "$OUT/gpu_sps_mlp.json" 2>&1 | tee "$OUT/gpu_sps.txt"
}
s_lstm() {
  stage "gpu_sps lstm fp32"
  timeout $(lim 200) $PY bench/gpu_sps.py --device $DEV --policy lstm --num-envs $N1 --precisions fp32 --steps $STEPS --repeats ${REPEATS:-1} \
    --worker-timeout 45 --json "$OUT/gpu_sps_lstm.json" 2>&1 | tee -a "$OUT/gpu_sps.txt"
}
s_async() {
  stage "gpu_sps mlp fp32, envs in $WORKERS worker processes: one batch, and two stepped in turn (EnvPool)"
  for k in 1 2; do
    timeout $(lim 100) $PY bench/gpu_sps.py --device $DEV --num-envs $N2 --precisions fp32 --steps $STEPS --workers $WORKERS \
      --env-batches $k --worker-timeout 45 --json "$OUT/gpu_sps_async$k.json" 2>&1 | tee -a "$OUT/gpu_sps.txt"
  done
}
s_breakout() {
  stage "gpu_sps mlp fp32 on a heavier Ocean env: breakout"
  timeout $(lim 100) $PY bench/gpu_sps.py --device $DEV --env breakout --num-envs $N1 --precisions fp32 --steps $STEPS \
    --worker-timeout 45 --json "$OUT/gpu_sps_breakout.json" 2>&1 | tee -a "$OUT/gpu_sps.txt"
}
s_lstmprof() {
  stage "where the LSTM's time goes"
  timeout $(lim 150) $PY tools/gpu/lstm_profile.py --device $DEV --num-envs $N1 --transformer 2>&1 | tee "$OUT/lstm_profile.txt"
}
s_compile() {
  stage "gpu_sps mlp bf16+compile, and with compile's CUDA graphs (reduce-overhead)"
  timeout $(lim 150) $PY bench/gpu_sps.py --device $DEV --num-envs $N2 --precisions bf16+compile bf16+compile-graphs --steps $STEPS \
    --worker-timeout 75 --json "$OUT/gpu_sps_compile.json" 2>&1 | tee -a "$OUT/gpu_sps.txt"
}
s_cli() {
  stage "train and eval through the CLI"
  R=/tmp/runs; rm -rf $R
  timeout $(lim 60) $PY -m workbench.cli train --env puffer:cartpole --num-envs $N1 --device $DEV --bf16 \
    --total-timesteps $TS --runs-dir $R --name gpu --eval-every 5 --eval-episodes 200 --checkpoint-every 5 2>&1 | tail -4
  RUN=$(ls -d $R/*/ | head -1)
  timeout $(lim 40) $PY -m workbench.cli eval "$RUN" --device $DEV --episodes 100 2>&1 | tail -5
}
s_dp() {
  stage "data-parallel on the CPU cores"
  timeout $(lim 120) $PY bench/data_parallel.py --envs 64 --steps 300000 2>&1 | tail -12 | tee "$OUT/data_parallel.txt"
}

for s in ${STAGES//,/ }; do "s_$s"; done
stage done
