#!/usr/bin/env bash
# Builds the WASM core and writes the complete static playground into OUT_DIR:
#   index.html, docs.html, style.css, schedlab-view.js (the widget), js/ (page
#   and worker), schedlab_core.js + .wasm, examples/ (the curated graphs of
#   web/examples.json, the real fixtures of tests/data/inductor and
#   examples/index.json listing them), docs/ (the format and the exporter).
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
rm -rf "$out/js" "$out/examples" "$out/docs"
cp -R "$root/web/." "$out/"
cp "$wasm_build/schedlab_core.js" "$wasm_build/schedlab_core.wasm" "$out/"
mkdir -p "$out/examples" "$out/docs"
cp "$root"/docs/schedgraph-1.md "$root"/docs/exporter.md "$out/docs/"
cp "$root"/tests/data/inductor/*.pre.json "$root"/tests/data/inductor/*.post.json "$out/examples/"
rm -f "$out/examples.json"
node - "$root" "$out/examples" <<'NODE'
// examples/index.json, the page's example menu: the curated examples of
// web/examples.json first (real exported graphs, one line each, the first the
// default a first visit opens, with the options they open with), then the
// fixtures of tests/data/inductor, each with its line.
const fs = require('fs');
const [root, dir] = process.argv.slice(2);
const stages = { pre: 'before fusion', post: 'after fusion' };
const cases = {
  mlp_2: 'a two-layer MLP training step', gpt2_2: 'a GPT-2 block', convnet_2: 'a small CNN with batch norm',
  ckpt_1: 'an MLP with activation checkpointing', fsdp_1: 'an FSDP step on 8 ranks (all-gather, reduce-scatter)',
  ddp_1: 'a DDP step on 8 ranks (all-reduce)',
};
const nodesOf = (file) => JSON.parse(fs.readFileSync(`${dir}/${file}`, 'utf8')).nodes.length;
const curated = JSON.parse(fs.readFileSync(`${root}/web/examples.json`, 'utf8')).map((ex) => {
  fs.copyFileSync(`${root}/tests/data/${ex.from}/${ex.file}`, `${dir}/${ex.file}`);
  const { from: _, ...entry } = ex;
  return { ...entry, label: `${ex.label} · ${nodesOf(ex.file)} nodes` };
});
const fixtures = fs.readdirSync(dir)
  .filter((f) => /\.(pre|post)\.json$/.test(f) && !curated.some((c) => c.file === f))
  .sort()
  .map((file) => {
    const [, model, stage] = file.match(/^(.*)\.(pre|post)\.json$/);
    const what = cases[model] || model;
    return { file, label: `${model} · ${stages[stage]} · ${nodesOf(file)} nodes`,
      description: `Inductor's own graph of ${what}, ${stages[stage]}${stage === 'pre' ? ': the page runs Inductor\'s fusion on it first' : ''}.` };
  });
fs.writeFileSync(`${dir}/index.json`, JSON.stringify([...curated, ...fixtures], null, 1) + '\n');
NODE
chmod -R u+w "$out"
echo "build-web: playground written to $out (serve it: scripts/serve-web.sh $out)"
