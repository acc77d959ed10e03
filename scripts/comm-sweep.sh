#!/usr/bin/env bash
# scripts/comm-sweep.sh — on a machine with several GPUs: the collective and
# contention sweeps of python/dist/comm_sweep.py, at world size NGPU and 2
# (docs/gpu-validation.md, "Collectives and contention").
#
#   scripts/comm-sweep.sh OUT_DIR
#
# Environment: NGPU (default: all visible), PHASES (default
# "collectives collectives2 contention knobs"), CONTENTION_KNOB_COMPUTE (the
# compute classes the knob runs repeat).
set -uo pipefail
out=${1:?usage: scripts/comm-sweep.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# NVLink multicast stays off in every process (the lending machines require it).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
ngpu=${NGPU:-$(nvidia-smi -L | wc -l)}
phases=${PHASES:-collectives collectives2 contention knobs}
knob_compute=${CONTENTION_KNOB_COMPUTE:-gemm_8192x8192x8192 gemm_4096x4096x4096 attention triton_pointwise}
has() { [[ " $phases " == *" $1 "* ]]; }
status=0
t0=$SECONDS
stamp() { echo "[comm-sweep +$((SECONDS - t0)) s] $*"; }
sweep() { timeout "${SWEEP_TIMEOUT:-240}" torchrun --standalone "$@" || status=1; }

{ nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv; nvidia-smi topo -m; } \
  >"$out/topology.txt" 2>&1
if has collectives; then
  stamp "collectives at $ngpu ranks"
  sweep --nproc-per-node "$ngpu" python/dist/comm_sweep.py collectives --out "$out/collectives-w$ngpu.json"
fi
if has collectives2 && ((ngpu > 2)); then
  stamp "collectives at 2 ranks"
  CUDA_VISIBLE_DEVICES=0,1 sweep --nproc-per-node 2 python/dist/comm_sweep.py collectives --out "$out/collectives-w2.json"
fi
if has contention; then
  stamp "contention at $ngpu ranks"
  sweep --nproc-per-node "$ngpu" python/dist/comm_sweep.py contention --out "$out/contention-w$ngpu.json"
fi
if has knobs; then
  stamp "contention knobs"
  # shellcheck disable=SC2086
  sweep --nproc-per-node "$ngpu" python/dist/comm_sweep.py contention --knob high_priority \
    --compute $knob_compute --out "$out/contention-w$ngpu-high-priority.json"
  # shellcheck disable=SC2086
  NCCL_MAX_NCHANNELS=8 sweep --nproc-per-node "$ngpu" python/dist/comm_sweep.py contention \
    --compute $knob_compute --out "$out/contention-w$ngpu-nchannels8.json"
fi
stamp "done, status $status"
exit $status
