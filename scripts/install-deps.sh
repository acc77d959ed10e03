#!/usr/bin/env bash
# Installs what schedlab needs on a fresh Debian 12 machine, from Debian's
# packages and npm only. Idempotent: skips what is already there.
#   scripts/install-deps.sh          native build, Python bindings and tests
#   scripts/install-deps.sh --web    also Emscripten, Node, Chromium and playwright-core
#   scripts/install-deps.sh --hardening  also clang and its sanitizer/libFuzzer runtimes
#   (flags combine: --web --hardening)
set -euo pipefail
cd "$(dirname "$0")/.."

web=0
hardening=0
for arg in "$@"; do
  case "$arg" in
    --web) web=1 ;;
    --hardening) hardening=1 ;;
    *) echo "usage: scripts/install-deps.sh [--web] [--hardening]" >&2; exit 2 ;;
  esac
done

pkgs=(cmake g++ make catch2 nlohmann-json3-dev libcli11-dev)
pkgs+=(python3 python3-dev pybind11-dev python3-venv)  # the bindings (pybind/), the wheel and its smoke test
pkgs+=(libsimdjson-dev)  # only for the loader benchmark beside simdjson (tests/bench); never linked into core/
((web)) && pkgs+=(emscripten nodejs npm chromium node-typescript)  # node-typescript: tsc checks the npm package's types
((hardening)) && pkgs+=(clang libclang-rt-14-dev)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The image may carry its own node/npm outside dpkg: accept those.
if ((web)); then
  filtered=()
  for p in "${missing[@]}"; do
    if [[ "$p" == nodejs ]] && command -v node >/dev/null; then continue; fi
    if [[ "$p" == npm ]] && command -v npm >/dev/null; then continue; fi
    filtered+=("$p")
  done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ((web)) && [[ ! -d node_modules/playwright-core ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
