// Loads the Embind module (schedlab_core.js + .wasm) built by
// scripts/build-wasm.sh under node. emcc 3.1.6 cannot fetch its .wasm from a
// file path under Node 20, so the bytes are handed over as wasmBinary.
'use strict';
const fs = require('fs');
const path = require('path');

async function loadSchedlab(wasmDir) {
  const dir = path.resolve(wasmDir);
  const createSchedlab = require(path.join(dir, 'schedlab_core.js'));
  return createSchedlab({ wasmBinary: fs.readFileSync(path.join(dir, 'schedlab_core.wasm')) });
}

module.exports = { loadSchedlab };
