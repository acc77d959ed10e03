#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSCHEDLAB_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)"
cd build && ctest --output-on-failure
