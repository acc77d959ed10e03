// The package under node (its "node" export): the WebAssembly core, the
// same module and API the widget's worker uses (types/core.d.ts), loaded
// from the package's own schedlab_core.wasm:
//
//   const { loadSchedlab } = require('schedlab-view');   // or: import { loadSchedlab } from 'schedlab-view'
//   const core = await loadSchedlab();
//   const plan = JSON.parse(core.plan(fs.readFileSync('graph.json', 'utf8'), ''));
'use strict';
const fs = require('fs');
const path = require('path');
const createSchedlab = require('./schedlab_core.js');

// emcc 3.1.6's module cannot fetch a file path under node: hand it the bytes.
function loadSchedlab(settings = {}) {
  return createSchedlab({ wasmBinary: fs.readFileSync(path.join(__dirname, 'schedlab_core.wasm')), ...settings });
}

module.exports = { loadSchedlab, createSchedlab };
