# The GPU checks (issues 22 and 44), on a lent GPU machine from the repo root, after tools/gpu/prepare.sh here:
#   device tool: run  command="bash tools/gpu/run.sh 2>&1"  carry=[".gpu"]  timeout_s=540
# Each stage is bounded so that the whole fits BUDGET seconds, and none begins after it. Its logs and JSON go to
# /tmp/gpu_logs, packed after every stage into $OUT/logs.tgz (the device tool brings back at most 8 files).
# SETUP=0 DEV=cpu N1=256 N2=512 STEPS=300000 TS=100000 LEARN_STEPS=100000 PY=.venv/bin/python bash tools/gpu/run.sh tries it
# on a CPU, in the project's environment (setup.sh's wheels are for the GPU image's Python 3.12).
# STAGES picks the checks after setup and their order (default: all, as below).
export PYTHONUNBUFFERED=1
T0=$(date +%s)
DEV=${DEV:-cuda}; N1=${N1:-4096}; N2=${N2:-16384}; STEPS=${STEPS:-5000000}; TS=${TS:-3000000}; PY=${PY:-python3}
BUDGET=${BUDGET:-480}; STAGES=${STAGES:-graphs,mlp,lstm,learn,big,breakout,compile,prof,settle,quiet,async,doctor,cli,dp}
WORKERS=${WORKERS:-8}
stage() { echo; echo "== $1 (at $(( $(date +%s) - T0 )) s)"; }
lim() { local left=$(( BUDGET - ($(date +%s) - T0) )); [ $left -lt $1 ] && echo $(( left > 5 ? left : 5 )) || echo $1; }
RESULTS=${OUT:-/tmp/out}; OUT=/tmp/gpu_logs; rm -rf "$OUT"; mkdir -p "$OUT" "$RESULTS"
# gpu_sps goes through the bench runner: its records (machine, commit, figures) land in $OUT/records/gpu_sps.jsonl
GPU_SPS="$PY -m bench gpu_sps --records $OUT/records --max-wait 0"
pack() { tar czf "$RESULTS/logs.tgz" -C "$OUT" . 2>/dev/null; }
stage setup
if [ "${SETUP:-1}" = 1 ]; then source tools/gpu/setup.sh || { pack; exit 1; }; fi
nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,power.draw,memory.total --format=csv | tee "$OUT/nvidia.txt"
$PY -c 'import torch; print("cores", __import__("os").cpu_count(), "cudnn", torch.backends.cudnn.version())'

s_graphs() {
  stage "the rollout's step as a CUDA graph"
  timeout $(lim 60) $PY tools/gpu/graph_check.py $DEV 2>&1 | tee "$OUT/graph_check.txt"
}
s_learn() {
  stage "the same runs still learn: puffer:cartpole, 3 seeds, with CUDA graphs and eagerly"
  timeout $(lim 120) $PY tools/gpu/learn_check.py --device $DEV --num-envs $N1 --steps ${LEARN_STEPS:-3000000} 2>&1 | tee "$OUT/learn.txt"
}
s_big() {
  stage "gpu_sps mlp fp32 at ${NBIG:-32768 65536} agents in $WORKERS worker processes"
  timeout $(lim 120) $GPU_SPS --device $DEV --num-envs ${NBIG:-32768 65536} --precisions fp32 --steps $(( STEPS * 4 )) \
    --workers $WORKERS --worker-timeout 45 2>&1 | tee -a "$OUT/gpu_sps.txt"
}
s_quiet() {
  stage "gpu_sps mlp fp32 with cartpole's log every 64 steps (report_interval=64, both trainers): $N2 in-process, ${NBIG:-65536} in $WORKERS workers"
  timeout $(lim 60) $GPU_SPS --device $DEV --num-envs $N2 --precisions fp32 --steps $STEPS --env-option report_interval=64 \
    --worker-timeout 40 2>&1 | tee -a "$OUT/gpu_sps.txt"
  timeout $(lim 90) $GPU_SPS --device $DEV --num-envs ${NBIG:-65536} --precisions fp32 --steps $(( STEPS * 4 )) \
    --workers $WORKERS --env-option report_interval=64 --worker-timeout 40 2>&1 | tee -a "$OUT/gpu_sps.txt"
}
s_settle() {
  stage "ours only, fp32 and bf16 in turn, 3 times at $N2 agents and twice at $N1"
  for n in $N2 $N2 $N1 $N2 $N1; do
    timeout $(lim 45) $GPU_SPS --device $DEV --num-envs $n --precisions fp32 bf16 --steps $STEPS --ours-only \
      --worker-timeout 20 2>&1 | grep -v "^#\|pynvml" | tee -a "$OUT/settle.txt"
  done
}
s_doctor() {
  stage doctor
  timeout $(lim 40) $PY -m workbench.cli doctor --device $DEV 2>&1 | tee "$OUT/doctor.txt"
}
s_mlp() {
  stage "gpu_sps mlp fp32, bf16"
  timeout $(lim 230) $GPU_SPS --device $DEV --num-envs $N1 $N2 --precisions fp32 fp32+eager bf16 --steps $STEPS \
    --worker-timeout 60 2>&1 | tee "$OUT/gpu_sps.txt"
}
s_lstm() {
  stage "gpu_sps lstm fp32"
  timeout $(lim 200) $GPU_SPS --device $DEV --policy lstm --num-envs $N1 --precisions fp32 --steps $STEPS --repeats ${REPEATS:-1} \
    --worker-timeout 45 2>&1 | tee -a "$OUT/gpu_sps.txt"
}
s_async() {
  stage "gpu_sps mlp fp32, envs in $WORKERS worker processes: one batch, and two stepped in turn (EnvPool)"
  for k in 1 2; do
    timeout $(lim 100) $GPU_SPS --device $DEV --num-envs $N2 --precisions fp32 --steps $STEPS --workers $WORKERS \
      --env-batches $k --worker-timeout 45 2>&1 | tee -a "$OUT/gpu_sps.txt"
  done
}
s_breakout() {
  stage "gpu_sps mlp fp32 on a heavier Ocean env: breakout"
  timeout $(lim 100) $GPU_SPS --device $DEV --env breakout --num-envs $N1 --precisions fp32 --steps $STEPS \
    --worker-timeout 45 2>&1 | tee -a "$OUT/gpu_sps.txt"
}
s_prof() {
  stage "where an iteration's time goes: the MLP at $N2 agents and the LSTM at $N1, op by op"
  timeout $(lim 90) $PY tools/gpu/iteration_profile.py --device $DEV --num-envs $N2 2>&1 | tee "$OUT/iteration_profile.txt"
  timeout $(lim 90) $PY tools/gpu/iteration_profile.py --device $DEV --num-envs $N1 --policy lstm 2>&1 | tee -a "$OUT/iteration_profile.txt"
}
s_lstmprof() {
  stage "where the LSTM's time goes"
  timeout $(lim 150) $PY tools/gpu/lstm_profile.py --device $DEV --num-envs $N1 --transformer 2>&1 | tee "$OUT/lstm_profile.txt"
}
s_compile() {
  stage "torch.compile's CUDA graphs (reduce-overhead) in place of ours, ours only; then bf16+compile against PuffeRL's"
  timeout $(lim 100) $GPU_SPS --device $DEV --num-envs $N2 --precisions fp32 fp32+compile-graphs --steps $STEPS \
    --ours-only --worker-timeout 90 2>&1 | tee -a "$OUT/gpu_sps.txt"
  timeout $(lim 150) $GPU_SPS --device $DEV --num-envs $N2 --precisions bf16+compile bf16+compile-graphs --steps $STEPS \
    --worker-timeout 75 2>&1 | tee -a "$OUT/gpu_sps.txt"
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

for s in ${STAGES//,/ }; do   # a stage begun with little time left gets at least 5 s a command: none is begun after BUDGET
  if [ $(( BUDGET - ($(date +%s) - T0) )) -lt 15 ]; then echo "== $s: not run (the budget of $BUDGET s is spent)"; else "s_$s"; fi
  pack
done
stage done
