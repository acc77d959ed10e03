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
# H100) ride along in the H100's profile, the contention law in both.
sweeps=tests/data/dist4
python3 scripts/fit-comm.py $sweeps/h100-run*/collectives-w*.json $sweeps/h100-run*/contention-w4.json -o $sweeps/comm-fit.json \
    --source "4 x H100 SXM5 80GB (nvidia-h100-x4), NVSwitch, NCCL 2.28.9, PyTorch 2.11: tests/data/dist4/h100-run1 and h100-run2"
# The H200 prices collectives by its own curves (2 x H200 at 2 ranks,
# session 17; 4 x H200 at 4 ranks, session 14): at 4 KiB-4 MiB the H200s ran
# 10-28 % off the H100s' curves, faster at 2 ranks and slower at 4 (the
# machines' latency floors). Its contention law is the H100s' (no H200
# contention sweep at 4 ranks).
python3 scripts/fit-comm.py $sweeps/h200-run5/collectives-w4.json $sweeps/h200-run7/collectives-w2.json \
    $sweeps/h100-run*/contention-w4.json -o $sweeps/comm-fit-h200.json \
    --source "4 x H200 (nvidia-h200-x4, tests/data/dist4/h200-run5) and 2 x H200 (nvidia-h200-x2, h200-run7), NVSwitch, NCCL 2.28.9, PyTorch 2.11; contention: 4 x H100, h100-run1 and h100-run2"
# The finer classes' laws (docs/cost-model.md, "Kernel classes"), fitted on
# each GPU's class sweeps (python/zoo/class_sweep.py) beside the zoo: the
# sweeps' nodes fit only these laws. The two convolution backward families
# keep their parent's law: their own laws read 0.89 and 1.09 on MobileNet's
# and RegNetY's, where the parent's reads 1.67 and 1.72, but that excess
# offsets the dense convolution backward law's misses on the same graphs
# (RegNetY's unaligned NCHW 1x1 convolutions: cutlass align-1/2 kernels at
# 0.2-0.3), and the graphs' kernel times would move from 0.96 / 1.00 to 0.84
# / 0.82. A GPU without its own sweep (tests/data/class_sweep/GPU) carries
# the H100's laws (--class-laws-from: the same chip).
class_laws=indexing,scatter,extern_memory,depthwise_convolution,depthwise_convolution_native,depthwise_convolution_backward_native
class_laws+=,grouped_convolution,convolution_1d,convolution_1d_backward,triton_strided_pointwise,triton_strided_reduction
class_laws+=,gemm_unaligned,gemm_f32,triton_scatter,triton_scatter_reduction
# The H200 keeps its parent's law for grouped convolutions: a law of their
# own, fitted on its zoo's 9 (no H200 sweep yet) or carried from the H100,
# reads 0.745 / 0.764 on RegNetY's, where the H200's convolution law (its
# grouped terms fitted on the same 9 among the rest) reads 1.030.
class_laws_h200=${class_laws/,grouped_convolution,/,}
class_sweep() { [ -d "tests/data/class_sweep/$1" ] && echo "--class-sweep tests/data/class_sweep/$1"; true; }
# The launch path's sweep (class_sweep.py launch_path_sweep), on the GPUs
# it was measured on: its device-bound calls' leads fit the call's epilogue
# (docs/cost-model.md, "The call's epilogue"); the host figures stay the
# zoo's fit.
launch_sweep() { [ -d "tests/data/launch_sweep/$1" ] && echo "--launch-sweep tests/data/launch_sweep/$1"; true; }
# The wrapper's operations timed one by one on each GPU's host
# (python/zoo/wrapper_host_probe.py): an item of a multi-output result costs
# its tuple index and size assert, 0.4 µs; fitted freely, the items' column
# took 3.4-4.7 µs of what the calls returning tuples cost beside it, and
# priced the recommender's 32 embedding-bag items at 1.4 x its forward's
# wall. Attention calls have a host figure of their own for the rest.
wrapper_costs() { [ -f "tests/data/measured/$1/wrapper_host_costs.json" ] && echo "--wrapper-costs tests/data/measured/$1/wrapper_host_costs.json"; true; }
held=()
for model in llama_block vit unet_gn moe_dropless kv_decode bert_dynamic tp2d; do held+=(--exclude "/${model}_"); done
# The attention law's per-score, idle-wave and f32 terms (docs/cost-model.md,
# "Law terms") come from the attention grid and f32 mask sweeps, measured on
# the H200 alone: the H100's attention nodes (full waves, head dims 64 and
# 128 with a bias or dropout) exercise them without telling them from the
# compute term, so the H100 carries the H200's factors. So with the strided
# reductions' transposed-operand terms ("Transposed operands"): the H200's
# transposed reduction sweep fits them; the H100's zoo and strided sweep
# hold a handful of such kernels and no grid of rows against lengths (fitted
# on those alone: 1.24 ps and 4.0 ns, where the sweep gives 1.63 and 2.62).
sibling_terms=score_factor,attention_wave_factor,f32_bias_factor,f32_score_factor,transposed_element_factor,transposed_walk_factor
# The sustained tensor-core rate of long 16-bit matmuls (docs/cost-model.md,
# "Sustained rate"): fitted beside the H100's laws on the first 4 x H100
# lease's steps (the second lease's steps are held out); the H200 (same chip,
# same 700 W limit) carries the H100's figure.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" fit-profile tests/data/measured/h200 $(class_sweep h200) $(launch_sweep h200) $(wrapper_costs h200) --graphs tests/data/exported "${held[@]}" --name h200 \
    --class-laws $class_laws_h200 --comm $sweeps/comm-fit-h200.json -o "$tmp/h200.json" >/dev/null
"$bin" fit-profile tests/data/measured/h100 $(class_sweep h100) $(launch_sweep h100) $(wrapper_costs h100) --graphs tests/data/exported "${held[@]}" --name h100-sxm \
    --class-laws $class_laws --sibling "$tmp/h200.json" --sibling-terms $sibling_terms --comm $sweeps/comm-fit.json -o "$tmp/h100-sxm.json" >/dev/null
python3 scripts/fit-sustained-rate.py $sweeps/steps/run1 $sweeps/steps/run2 --schedlab "$bin" --hardware "$tmp/h100-sxm.json" \
    -o $sweeps/sustained-fit.json \
    --source "4 x H100 SXM5 80GB (nvidia-h100-x4), PyTorch 2.11: the first lease's five steps, tests/data/dist4/steps/run1 and run2"
# The H200 (its class laws it has no sweep for from the H100's first fit:
# the sibling terms those laws take are 0 either way), then the H100 with
# the H200 as its sibling. The H100 has no pitch sweep: its unaligned
# matmuls take the H200's gemm_unaligned law (fitted on the pitch sweep,
# its terms on each GPU's own peaks) instead of gemm's, which priced
# Swin-T's 49-token windows at 0.64 of their time outside the zoo. No 1-D
# sweep either: its 1-D convolutions forward take the H200's law (fitted on
# its conv grid's 1-D shapes) instead of their parent's, which priced them
# at 0.73 of their time summed over the library models (now 0.96; mean
# |ln(estimated / measured)| per node 0.23 -> 0.21 there, 0.30 -> 0.16 on
# the 1-D experiment, 0.33 -> 0.28 on its own sweep's three). The backward
# keeps its parent's law: the H200's reads the library's sum 0.76 -> 0.99
# but its nodes no better (0.41 -> 0.44 per node; the sweep's 0.14 -> 0.26).
"$bin" fit-profile tests/data/measured/h200 $(class_sweep h200) $(launch_sweep h200) $(wrapper_costs h200) --graphs tests/data/exported "${held[@]}" --name h200 \
    --class-laws $class_laws_h200 --class-laws-from "$tmp/h100-sxm.json" --comm $sweeps/comm-fit-h200.json \
    --sustained $sweeps/sustained-fit.json -o profiles/h200.json
"$bin" fit-profile tests/data/measured/h100 $(class_sweep h100) $(launch_sweep h100) $(wrapper_costs h100) --graphs tests/data/exported "${held[@]}" --name h100-sxm \
    --class-laws $class_laws --sibling profiles/h200.json --sibling-terms $sibling_terms --comm $sweeps/comm-fit.json --sustained $sweeps/sustained-fit.json \
    --class-laws-from profiles/h200.json --carry-classes gemm_unaligned,convolution_1d -o profiles/h100-sxm.json
python3 scripts/embed-profiles.py > core/cost/fitted_profiles.cpp
