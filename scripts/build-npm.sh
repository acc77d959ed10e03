#!/usr/bin/env bash
# Makes web/ the complete npm package `schedlab-view` (web/package.json): builds
# the WASM core (incrementally, in WASM_BUILD_DIR, default build-wasm/) and
# copies schedlab_core.js and .wasm into web/ (git ignores them there), so that
# `npm install ./web` and `npm pack ./web` work. `npm pack` runs it itself
# (the package's prepack script).
# usage: scripts/build-npm.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
wasm_build=${WASM_BUILD_DIR:-$root/build-wasm}
"$root/scripts/build-wasm.sh" "$wasm_build" schedlab_wasm >&2
for f in schedlab_core.js schedlab_core.wasm; do
  cp "$wasm_build/$f" "$root/web/$f.tmp$$"
  mv "$root/web/$f.tmp$$" "$root/web/$f"
done
echo "build-npm: web/ holds the package schedlab-view (npm pack ./web, or npm install ./web)" >&2
