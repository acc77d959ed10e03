#!/usr/bin/env bash
# scripts/dist-validate.sh — on a machine with GPUs: build schedlab and
# schedlab-gpu, check schedlab_export.apply on one GPU, run the real
# distributed steps under torchrun on every GPU, and run schedlab-gpu one
# process per GPU (docs/gpu-validation.md, "Real distributed steps").
#
#   scripts/dist-validate.sh OUT_DIR
#
# Environment: BUILD_DIR (default build-cuda), CMAKE_PREFIX_PATH for
# nlohmann_json when the machine has none, NGPU (default: all visible),
# PHASES (default "build calibrate apply steps executor"), STEPS (default all),
# HARDWARE (default: the profile calibrated here, else profiles/measured-h200.json).
set -uo pipefail
out=${1:?usage: scripts/dist-validate.sh OUT_DIR}
build=${BUILD_DIR:-build-cuda}
phases=${PHASES:-build calibrate apply steps executor}
hardware=${HARDWARE:-profiles/measured-h200.json}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# NVLink multicast stays off in every process (the lending machines require it).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
ngpu=${NGPU:-$(nvidia-smi -L | wc -l)}
status=0
has() { [[ " $phases " == *" $1 "* ]]; }
t0=$SECONDS
stamp() { echo "[dist-validate +$((SECONDS - t0)) s] $*"; }

nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv | tee "$out/nvidia-smi.txt"
nvidia-smi topo -m >>"$out/nvidia-smi.txt" 2>&1 || true
python3 -c 'import torch; print("torch", torch.__version__, "gpus", torch.cuda.device_count())' | tee -a "$out/nvidia-smi.txt"

if has build; then
  stamp build
  cmake -S . -B "$build" -DSCHEDLAB_BUILD_CUDA=ON -DSCHEDLAB_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >"$out/cmake.log" 2>&1 &&
    cmake --build "$build" --target schedlab schedlab-gpu -j"$(nproc)" >>"$out/cmake.log" 2>&1 || { echo "build failed"; tail -30 "$out/cmake.log"; status=1; }
fi
schedlab=$PWD/$build/schedlab
gpu_bin=$PWD/$build/native-cuda/schedlab-gpu

if has calibrate && [ -x "$gpu_bin" ]; then
  stamp calibrate
  # A profile of this machine for schedlab's cost model (apply plans with it).
  timeout 120 "$gpu_bin" calibrate -o "$out/profile.json" --details "$out/calibration.json" && hardware=$out/profile.json
fi

if has apply; then
  stamp apply
  timeout 200 python3 python/dist/apply_check.py --schedlab "$schedlab" --out "$out/apply" || status=1
fi

if has steps; then
  stamp "steps on $ngpu GPUs"
  timeout ${STEPS_TIMEOUT:-330} torchrun --standalone --nproc-per-node "$ngpu" python/dist/run_steps.py --out "$out/steps" \
    --schedlab "$schedlab" --hardware "$hardware" --profile-steps 10 ${STEPS:+--steps $STEPS} || status=1
fi

if has executor && [ -x "$gpu_bin" ]; then
  stamp "schedlab-gpu, one process per GPU"
  mkdir -p "$out/executor"
  for g in ddp_1 fsdp_1; do
    graph=tests/data/inductor/$g.post.json
    # torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)
    timeout 120 torchrun --standalone --nproc-per-node "$ngpu" --no-python "$gpu_bin" run "$graph" \
      --profile "$hardware" -o "$out/executor/run-$g-torchrun.json" || status=1
    # an NCCL unique id through a file, ranks started by hand
    rm -f "$out/executor/$g.id"
    pids=()
    for ((r = 0; r < ngpu; r++)); do
      RANK=$r WORLD_SIZE=$ngpu LOCAL_RANK=$r timeout 120 "$gpu_bin" run "$graph" --nccl-id-file "$out/executor/$g.id" \
        --profile "$hardware" -o "$out/executor/run-$g-idfile.json" &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    # the single-process mode beside it (one process drives every GPU)
    timeout 120 "$gpu_bin" run "$graph" --ranks "$ngpu" --profile "$hardware" -o "$out/executor/run-$g-single.json" || status=1
  done
fi
stamp "done, status $status"
exit $status
