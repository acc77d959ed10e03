#!/usr/bin/env bash
# Builds the WebAssembly targets into BUILD_DIR (incrementally: a second run
# only recompiles what changed):
#   BUILD_DIR/schedlab_core.js + .wasm  the Embind module (wasm/bindings.cpp)
#   BUILD_DIR/schedlab_tests.js + .wasm the Catch2 suite: node BUILD_DIR/schedlab_tests.js
#   BUILD_DIR/schedlab.js + .wasm       the CLI:          node BUILD_DIR/schedlab.js plan G.json
# usage: scripts/build-wasm.sh BUILD_DIR [TARGET...]   (default: all three)
# -O3: about 15% faster than -O2 on a 10k-node plan (tests/wasm/plan-parity.js bench).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: scripts/build-wasm.sh BUILD_DIR [schedlab_wasm|schedlab_tests|schedlab ...]" >&2
  exit 2
fi
build=$1
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(schedlab_wasm schedlab_tests schedlab)
root=$(cd "$(dirname "$0")/.." && pwd)

command -v emcmake >/dev/null || { echo "build-wasm: emcmake not found (apt-get install emscripten)" >&2; exit 1; }
# Debian's emcc runs node tools that live in /usr/share/nodejs.
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}

if [ ! -f "$build/CMakeCache.txt" ]; then
  emcmake cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O3 -DNDEBUG"
fi
cmake --build "$build" -j"${JOBS:-2}" --target "${targets[@]}"
