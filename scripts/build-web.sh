#!/usr/bin/env bash
# Builds the WASM core and writes the complete static playground into OUT_DIR:
#   index.html, docs.html, style.css, schedlab-view.js (the widget), js/ (page
#   and worker), schedlab_core.js + .wasm, examples/ (the real fixtures of
#   tests/data/inductor and examples/index.json listing them).
# Any static server can serve OUT_DIR (scripts/serve-web.sh OUT_DIR does).
# usage: scripts/build-web.sh OUT_DIR   (WASM_BUILD_DIR, default build-wasm/, keeps the incremental WASM build)
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: scripts/build-web.sh OUT_DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1
wasm_build=${WASM_BUILD_DIR:-$root/build-wasm}

"$root/scripts/build-wasm.sh" "$wasm_build" schedlab_wasm

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/js" "$out/examples"
cp -R "$root/web/." "$out/"
cp "$wasm_build/schedlab_core.js" "$wasm_build/schedlab_core.wasm" "$out/"
mkdir -p "$out/examples"
cp "$root"/tests/data/inductor/*.pre.json "$root"/tests/data/inductor/*.post.json "$out/examples/"
chmod -R u+w "$out"
node - "$out/examples" <<'NODE'
// examples/index.json: the bundled fixtures, for the page's example menu.
const fs = require('fs');
const dir = process.argv[2];
const stages = { pre: 'before fusion', post: 'after fusion' };
const list = fs.readdirSync(dir)
  .filter((f) => /\.(pre|post)\.json$/.test(f))
  .sort()
  .map((file) => {
    const [, model, stage] = file.match(/^(.*)\.(pre|post)\.json$/);
    const nodes = JSON.parse(fs.readFileSync(`${dir}/${file}`, 'utf8')).nodes.length;
    return { file, label: `${model} · ${stages[stage]} · ${nodes} nodes` };
  });
fs.writeFileSync(`${dir}/index.json`, JSON.stringify(list, null, 1) + '\n');
NODE
echo "build-web: playground written to $out (serve it: scripts/serve-web.sh $out)"
