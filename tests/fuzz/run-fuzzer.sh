#!/usr/bin/env bash
# Runs one libFuzzer target for a fixed number of seconds on the generated
# seed corpus; any sanitizer report or escaped exception fails the test and
# leaves the crashing input in WORK_DIR.
# usage: run-fuzzer.sh FUZZER TESTS_DATA_DIR WORK_DIR SECONDS [SEED_KIND]
# SEED_KIND: graph (default), profile, measured or trace (make_seeds.py --kind).
set -euo pipefail
fuzzer=${1:?usage: run-fuzzer.sh FUZZER TESTS_DATA_DIR WORK_DIR SECONDS [SEED_KIND]}
data=${2:?}; work=${3:?}; seconds=${4:?}; kind=${5:-graph}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"; mkdir -p "$work/corpus" "$work/seeds"
python3 "$here/make_seeds.py" "$data" "$work/seeds" --kind "$kind" >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
cd "$work"
set +e
"$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
  corpus seeds >fuzz.log 2>&1
rc=$?
set -e
grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' fuzz.log | sed "s|^|bench: $(basename "$fuzzer") |" || true
if [ $rc -ne 0 ]; then tail -40 fuzz.log; echo "$(basename "$fuzzer"): finding (exit $rc); inputs: $work"; exit 1; fi
echo "$(basename "$fuzzer"): ${seconds}s, no finding"
