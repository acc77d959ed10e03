#!/usr/bin/env bash
# The main job on a bundled example: install, build, plan a real Inductor
# graph (GPT-2 backward, exported from torch.compile) and print the report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSCHEDLAB_BUILD_TESTS=OFF >/dev/null
cmake --build build --target schedlab -j"$(nproc)" >/dev/null
mkdir -p out
build/schedlab plan tests/data/inductor/gpt2_2.post.json -o out/gpt2_2.plan.json
echo "plan written to out/gpt2_2.plan.json"
