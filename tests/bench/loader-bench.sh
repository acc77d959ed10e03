#!/usr/bin/env bash
# The loader beside simdjson on a 100k-node graph: 848 chained copies of a
# real backward graph (transformer_l_1_bwd, 118 fused nodes), made by the
# CLI's own generator. Prints `bench:` lines; asserts nothing but that both
# programs ran.
#   tests/bench/loader-bench.sh SCHEDLAB_CLI LOADER_BENCH [COPIES]
set -euo pipefail
cli=$1 bench=$2 copies=${3:-848}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" gen replicate "$here/../data/exported/transformer_l_1_bwd.post.json" --copies "$copies" --chained -o "$dir/graph.json" >/dev/null
"$bench" "$dir/graph.json" --repeat 5
