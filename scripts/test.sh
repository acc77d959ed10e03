#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through one ctest:
# the native Catch2 suite, the exporter's checks, the same suite compiled to
# WebAssembly under node, WASM/native plan parity, and the playground in
# headless Chromium; the adversarial corpus, and a clang ASan+UBSan build that
# runs the suite, the corpus and both libFuzzer targets (60 s each). The CUDA
# executor is compiled too where nvcc exists (it runs only on GPU machines:
# scripts/gpu-validate.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --web --hardening
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSCHEDLAB_BUILD_TESTS=ON -DSCHEDLAB_WEB_TESTS=ON \
      -DSCHEDLAB_HARDENING_TESTS=ON -DSCHEDLAB_BUILD_CUDA=ON >/dev/null
cmake --build build -j"$(nproc)"
cd build
set +e
# Two tests at a time where the machine has the cores: most are one
# process on one core (the sub-builds claim every slot: PROCESSORS).
ctest --output-on-failure -j"$(nproc)" 2>&1 | tee ctest.log
rc=${PIPESTATUS[0]}
set -e
# Speed is measured, never asserted: show the suite's benchmark lines, then
# repeat ctest's summary so that it stays the last line.
echo "benchmarks (measured by the tests, not asserted):"
grep -h '^bench:' Testing/Temporary/LastTest.log || echo "bench: none recorded"
grep -E 'tests passed, [0-9]+ tests failed out of' ctest.log | tail -1
exit "$rc"
