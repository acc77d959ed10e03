#!/usr/bin/env bash
# The wheel, built once and installed elsewhere (issue 29), offline:
#   1. a fresh venv builds it: `pip wheel --no-index` of the checkout (the
#      in-tree backend, python/build_backend; BUILD_DIR's CMake tree is reused,
#      so nothing is compiled twice in CI);
#   2. another fresh venv installs it (`pip install --no-index`);
#   3. from a folder outside the checkout, the installed `schedlab` script
#      plans a real graph (byte for byte BUILD_DIR's CLI's plan), and
#      tests/package/installed.py checks the installed package: bindings,
#      exporter (torch-free parts, `python -m schedlab_export`), apply through
#      the bindings and through the shipped CLI.
# usage: tests/package/wheel-smoke.sh BUILD_DIR   (ctest: python_wheel)
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: tests/package/wheel-smoke.sh BUILD_DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

"$python" -m venv "$work/build-env"
SCHEDLAB_BUILD_DIR=$build "$work/build-env/bin/pip" wheel --no-index --no-deps --quiet -w "$work/dist" "$root"
wheel=$(ls "$work"/dist/schedlab-*.whl)
echo "built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) in $(($(date +%s) - start)) s"

"$python" -m venv "$work/use-env"
"$work/use-env/bin/pip" install --no-index --quiet "$wheel"
echo "installed in a second venv"

cd "$work"  # nothing of the checkout on sys.path from here on
graph=$root/tests/data/inductor/fsdp_1.post.json
"$work/use-env/bin/schedlab" plan "$graph" -o plan.json --comm-passes overlap_schedule >report.txt
"$build/schedlab" plan "$graph" -o expected.json --comm-passes overlap_schedule >/dev/null
cmp plan.json expected.json
grep -q '^graph fsdp_1.post' report.txt
echo "the installed schedlab script's plan is the build's, byte for byte"
"$work/use-env/bin/python" "$root/tests/package/installed.py" --root "$root" --venv "$work/use-env" --plan plan.json
echo "wheel smoke test passed in $(($(date +%s) - start)) s"
