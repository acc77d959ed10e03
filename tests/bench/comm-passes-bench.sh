#!/usr/bin/env bash
# Every comm pass, bucketing included, on a 100k-node FSDP graph beside the
# plan without comm passes (issue 31's figure: at most 3x), whole CLI runs,
# user+sys seconds, best of N. Prints `bench:` lines; asserts only that every
# plan ran. At the default width (4096) every collective moves 64 MiB or more
# and bucketing finds no bucket that pays; HIDDEN=512 gives latency-bound
# collectives that it merges.
#   [HIDDEN=H] tests/bench/comm-passes-bench.sh SCHEDLAB_CLI [LAYERS] [RUNS]
set -euo pipefail
cli=$1 layers=${2:-6250} runs=${3:-3} hidden=${HIDDEN:-4096}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" gen-dist fsdp --layers "$layers" --hidden "$hidden" -o "$dir/graph.json" >/dev/null
nodes=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["nodes"]))' "$dir/graph.json")
# every pass the CLI lists (plan --help: `--comm-passes ... ("" for none): a, b, ...`)
all_passes=$("$cli" plan --help | python3 -c '
import re, sys
line = next((l for l in sys.stdin if "--comm-passes" in l), "")
print(",".join(re.findall(r"[a-z_]+", line.split("):", 1)[1])) if "):" in line else "")')
[ -n "$all_passes" ] || { echo "comm-passes-bench: no comm pass listed by plan --help" >&2; exit 1; }

# user+sys seconds of one plan, best of $runs
best() {
  local passes=$1 out=$2 best_s="" s
  for _ in $(seq "$runs"); do
    s=$( { TIMEFORMAT='%U %S'; time "$cli" plan "$dir/graph.json" --no-fuse --comm-passes "$passes" -o "$out" >/dev/null; } 2>&1 | awk '{print $1 + $2}')
    best_s=$(python3 -c 'import sys; a=sys.argv[1]; b=float(sys.argv[2]); print(b if not a else min(float(a), b))' "$best_s" "$s")
  done
  echo "$best_s"
}
none=$(best "" "$dir/none.json")
bucket=$(best "bucket_collectives" "$dir/bucket.json")
all=$(best "$all_passes" "$dir/all.json")
python3 - "$dir/bucket.json" "$dir/all.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    plan = json.load(open(path))
    buckets = [b for p in plan["comm"]["passes"] for b in p.get("buckets", [])]
    print(f"bench:   {path.rsplit('/', 1)[-1]}: {len(buckets)} buckets of {sum(len(b['members']) for b in buckets)} collectives over its bucketing passes, "
          f"step {plan['simulation']['step_time_us']:.0f} us")
PY
echo "bench: comm passes on gen-dist fsdp --layers $layers --hidden $hidden ($nodes nodes), whole plan, user+sys s, best of $runs:"
echo "bench:   no comm passes                 $none s"
echo "bench:   bucket_collectives              $bucket s ($(python3 -c "print(f'{$bucket/$none:.2f}')") x)"
echo "bench:   all comm passes ($(echo "$all_passes" | tr ',' '\n' | wc -l))            $all s ($(python3 -c "print(f'{$all/$none:.2f}')") x; target <= 3 x)"
