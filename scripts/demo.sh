#!/usr/bin/env bash
# The main job on a bundled example: install, build, plan a real Inductor
# graph (GPT-2 backward, exported from torch.compile) and print the report;
# then build the playground and serve it on 127.0.0.1 (prints the URL; Ctrl-C
# stops it). SCHEDLAB_NO_SERVE=1 stops after building the site.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --web
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target schedlab -j"$(nproc)" >/dev/null
mkdir -p out
build/schedlab plan tests/data/inductor/gpt2_2.post.json -o out/gpt2_2.plan.json
echo "plan written to out/gpt2_2.plan.json"
echo "building the playground (the first WebAssembly build takes several minutes)..."
scripts/build-web.sh out/web >/dev/null
[[ "${SCHEDLAB_NO_SERVE:-}" == 1 ]] && { echo "playground written to out/web"; exit 0; }
exec scripts/serve-web.sh out/web
