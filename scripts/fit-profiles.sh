#!/usr/bin/env bash
# Refits the built-in profiles from the checked-in measurements and embeds
# them (docs/cost-model.md, "Built-in profiles"): the H200 first, then the
# H100 with the H200 as its sibling (same GH100 chip: a law term too few H100
# nodes exercise takes the H200's factor). The held-out models stay out of
# both fits. A test checks that this gives exactly the files.
#
#     scripts/fit-profiles.sh [BUILD_DIR]     # default build/
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build}/schedlab"
[ -x "$bin" ] || { echo "fit-profiles: $bin not found (build the schedlab target first)" >&2; exit 2; }
# The measured collectives and contention (python/dist/comm_sweep.py on 4 x
# H100; the H200 shares NVLink 4 and NVSwitch) ride along in both profiles.
sweeps=tests/data/dist4
python3 scripts/fit-comm.py $sweeps/h100-run*/collectives-w*.json $sweeps/h100-run*/contention-w4.json -o $sweeps/comm-fit.json \
    --source "4 x H100 SXM5 80GB (nvidia-h100-x4), NVSwitch, NCCL 2.28.9, PyTorch 2.11: tests/data/dist4/h100-run1 and h100-run2"
held=()
for model in llama_block vit unet_gn moe_dropless kv_decode bert_dynamic tp2d; do held+=(--exclude "/${model}_"); done
# The sustained tensor-core rate of long 16-bit matmuls (docs/cost-model.md,
# "Sustained rate"): fitted beside the H100's laws on the first 4 x H100
# lease's steps (the second lease's steps are held out); the H200 (same chip,
# same 700 W limit) carries the H100's figure.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" fit-profile tests/data/measured/h200 --graphs tests/data/exported "${held[@]}" --name h200 --comm $sweeps/comm-fit.json \
    -o "$tmp/h200.json" >/dev/null
"$bin" fit-profile tests/data/measured/h100 --graphs tests/data/exported "${held[@]}" --name h100-sxm --sibling "$tmp/h200.json" \
    --comm $sweeps/comm-fit.json -o "$tmp/h100-sxm.json" >/dev/null
python3 scripts/fit-sustained-rate.py $sweeps/steps/run1 $sweeps/steps/run2 --schedlab "$bin" --hardware "$tmp/h100-sxm.json" \
    -o $sweeps/sustained-fit.json \
    --source "4 x H100 SXM5 80GB (nvidia-h100-x4), PyTorch 2.11: the first lease's five steps, tests/data/dist4/steps/run1 and run2"
"$bin" fit-profile tests/data/measured/h200 --graphs tests/data/exported "${held[@]}" --name h200 --comm $sweeps/comm-fit.json \
    --sustained $sweeps/sustained-fit.json -o profiles/h200.json
"$bin" fit-profile tests/data/measured/h100 --graphs tests/data/exported "${held[@]}" --name h100-sxm --sibling profiles/h200.json \
    --comm $sweeps/comm-fit.json --sustained $sweeps/sustained-fit.json -o profiles/h100-sxm.json
python3 scripts/embed-profiles.py > core/cost/fitted_profiles.cpp
