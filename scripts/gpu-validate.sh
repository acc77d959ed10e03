#!/usr/bin/env bash
# scripts/gpu-validate.sh — build schedlab-gpu on a GPU machine, calibrate a
# hardware profile, and execute the fixtures (docs/gpu-validation.md).
#
#   scripts/gpu-validate.sh OUT_DIR [PLANS_DIR]
#
# OUT_DIR gets nvidia-smi.txt, profile.json (the calibrated profile),
# calibration.json (every sample), and run-<graph>-<variant>.json reports:
#   baseline   the graph's baseline order, estimates from the datasheet h200
#   measured   the same order, estimates from the calibrated profile
#   plan       the order of PLANS_DIR/<graph>.plan.json (`schedlab plan
#              --no-fuse`), when given
#   serial     (collective graphs) everything on one stream: per-node times
#              without overlap
# Environment: BUILD_DIR (default build-cuda), CMAKE_PREFIX_PATH for
# nlohmann_json when the machine has none installed.
set -euo pipefail
out=${1:?usage: scripts/gpu-validate.sh OUT_DIR [PLANS_DIR]}
plans=${2:-}
build=${BUILD_DIR:-build-cuda}
mkdir -p "$out"
# NVLink multicast (NVLS) stays off: the lending machines require it.
export NCCL_NVLS_ENABLE=0

nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/nvidia-smi.txt"
ls /usr/local/cuda/lib64 | grep -i nccl || true

cmake -S . -B "$build" -DSCHEDLAB_BUILD_CUDA=ON -DSCHEDLAB_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >"$out/cmake.log"
cmake --build "$build" --target schedlab-gpu -j"$(nproc)" >>"$out/cmake.log"
bin="$build/native-cuda/schedlab-gpu"
status=0
run() { timeout 300 "$bin" run "$@" || status=1; }  # a failure (or a peak mismatch) is reported, the others still run

timeout 300 "$bin" calibrate -o "$out/profile.json" --details "$out/calibration.json"

for g in mlp_2 gpt2_2 convnet_2 ddp_1 fsdp_1; do
  graph="tests/data/inductor/$g.post.json"
  run "$graph" --profile h200 -o "$out/run-$g-baseline.json"
  run "$graph" --profile "$out/profile.json" -o "$out/run-$g-measured.json"
  if [ -n "$plans" ] && [ -f "$plans/$g.plan.json" ]; then
    run "$graph" --plan "$plans/$g.plan.json" --profile "$out/profile.json" -o "$out/run-$g-plan.json"
  fi
  if grep -q '"collective"' "$graph"; then
    run "$graph" --serial --profile "$out/profile.json" -o "$out/run-$g-serial.json"
  fi
done
exit $status
