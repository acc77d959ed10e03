#!/usr/bin/env node
// CPU time of each stage of a plan in the WASM module under node: what the
// page's worker runs for a first report (session run, overview, curves and
// names), without the browser. CPU, not wall time, so that a shared machine
// skews it less; the first run includes the engine's warm-up.
// usage: node scripts/stage-cpu.js WASM_BUILD_DIR GRAPH.json [RUNS=3]
'use strict';
const fs = require('fs');
const path = require('path');

const [dir, graph, runsArg] = process.argv.slice(2);
if (!dir || !graph) {
  console.error('usage: node scripts/stage-cpu.js WASM_BUILD_DIR GRAPH.json [RUNS=3]');
  process.exit(2);
}
const runs = Number(runsArg || 3);
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

(async () => {
  const createSchedlab = require(path.resolve(dir, 'schedlab_core.js'));
  const core = await createSchedlab({ wasmBinary: fs.readFileSync(path.join(dir, 'schedlab_core.wasm')) });
  const bytes = fs.readFileSync(graph);
  for (let run = 0; run < runs; run++) {
    const session = core.openPlanSession();
    const ms = {};
    const start = cpuMs();
    let stage = null;
    let since = start;
    const enter = (next) => {
      const now = cpuMs();
      if (stage) ms[stage] = (ms[stage] || 0) + now - since;
      stage = next;
      since = now;
    };
    session.run(bytes, '', enter);
    enter('overview');
    session.overview();
    enter('curves');
    for (const order of [0, 1]) {
      session.curve(order);
      session.namesText(order);
    }
    session.baselineSteps();
    enter(null);
    const stages = Object.entries(ms).map(([name, t]) => `${name} ${t.toFixed(0)}`).join(', ');
    console.log(`run ${run + 1}: ${stages}; total ${(cpuMs() - start).toFixed(0)} ms CPU`);
    session.delete();
  }
})().catch((e) => {
  console.error(`stage-cpu: ${e.message}`);
  process.exit(1);
});
