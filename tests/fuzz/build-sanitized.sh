#!/usr/bin/env bash
# Configures and builds the ASan+UBSan tree (clang): the suite, the CLI it
# spawns, and the libFuzzer targets. Incremental on a second run.
# usage: build-sanitized.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=${1:?usage: build-sanitized.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: build-sanitized.sh SOURCE_DIR BUILD_DIR}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
        -DSCHEDLAB_SANITIZE=ON -DSCHEDLAB_FUZZ=ON -DSCHEDLAB_WERROR=OFF -DSCHEDLAB_BUILD_TESTS=ON -DSCHEDLAB_PYTHON=OFF "${launcher[@]}" >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target schedlab schedlab_tests fuzz_loader fuzz_plan fuzz_profile fuzz_measured fuzz_trace
