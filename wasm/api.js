// wasm/api.js — appended to the generated module (--post-js): the public JS
// API over the raw Embind entry points of wasm/bindings.cpp. Each raw call
// returns {ok, kind, text}; here a failure becomes a thrown SchedlabError whose
// message is exactly the CLI's (without its "schedlab COMMAND: " prefix) and
// whose `kind` is "usage", "input" or "internal" (the CLI's exit codes 2, 1, 3).

class SchedlabError extends Error {
  constructor(message, kind) {
    super(message);
    this.name = 'SchedlabError';
    this.kind = kind;
  }
}

function schedlabUnwrap(result) {
  if (!result.ok) throw new SchedlabError(result.text, result.kind);
  return result.text;
}

Module['SchedlabError'] = SchedlabError;

// plan(graphJson, optionsJson) -> schedplan/1 text, byte for byte the CLI's `plan -o`.
// optionsJson: {"memory_methods": [...], "comm_passes": [...]} or "" for the defaults.
Module['plan'] = (graphJson, optionsJson = '') => schedlabUnwrap(Module['rawPlan'](graphJson, optionsJson));

// validate(graphJson) -> {graph, nodes, buffers, inputs, reads, outputs, fused}.
Module['validate'] = (graphJson) => JSON.parse(schedlabUnwrap(Module['rawValidate'](graphJson)));

// memoryMethods() -> [{name, summary, default}], the core's registry in its order.
Module['memoryMethods'] = () => JSON.parse(schedlabUnwrap(Module['rawMemoryMethods']()));

// commPasses() -> [{name, summary, default}], the comm pass registry in its order.
Module['commPasses'] = () => JSON.parse(schedlabUnwrap(Module['rawCommPasses']()));

// planControls() -> {hardware: [built-in profile names], default_hardware,
//   comm_knobs: {knob: Inductor's default}}: what the page's controls offer.
Module['planControls'] = () => JSON.parse(schedlabUnwrap(Module['rawPlanControls']()));

// Checks plan options (`optionsJson` as plan() takes it) without planning;
// throws the SchedlabError plan() would.
Module['checkOptions'] = (optionsJson) => { schedlabUnwrap(Module['rawCheckOptions'](optionsJson)); };

// openPlanSession() -> a planning run kept in the WASM heap for per-step views:
//   run(graph, optionsJson, onStage) plans `graph` (its JSON text, or its
//     bytes as a Uint8Array: copied into the heap as they are, the fast way
//     for a big file), calling onStage(name) as each stage starts ("load",
//     the pipeline's stages "front_end", "memory", "pricing", "comms",
//     "simulation", "predict", "compare", then "views");
//   planText() -> the plan's schedplan/1 text (as plan()), written on demand;
//   overview() -> what a first report shows, under the plan's keys: graph,
//     nodes, final, memory (chosen, method_order, methods' peaks or errors,
//     peak, peak_step), options (hardware, comm_passes), simulation
//     (step_time_us, exposed_comm_us, collective_count), predicted, comm
//     (step_time_before_us, exposed_comm_before_us), front_end (input_nodes),
//     compare (with options.compare: schedplan/1's rows), and method_peak_node (the memory method's order at its peak step);
//   trace() -> the Chrome trace text of its simulation (as `plan --trace`);
//   traceBeforeComm() -> the Chrome trace text of the order before the comm passes;
//   explain(a, b) -> `fuse --explain A B` on the input graph: {fused, group_a,
//     group_b, eliminated_a, eliminated_b, refusals: [{round, node1, node2,
//     reason}], final_reason, max_pairwise_attempts};
//   inputNames() -> the input graph's node names;
//   bufferProducers() -> [[buffer, producer]] of the planned graph ("" for inputs);
//   lifetimes(i, from, to) -> [{buffer, bytes, start, end, to_end, producer,
//     kernel, dtype, shape, last_user, category}] for the buffers of order i
//     alive anywhere in steps [from, to] (category: input, activation,
//     output or collective);
//   executedAsRun() -> {steps, events: [[kind, buffer, node, step, bytes |
//     donor]]}: memory as executed over the order the compiled call runs in
//     (kind "a" allocate, "f" free, "r" reuse of the donor's storage; buffer
//     "" a kernel's workspace), for a measured allocator trace;
//   summary() -> {input, planned}: validate()'s counts of the input graph and
//     of the planned one (the fused graph when the input was pre-fusion);
//   for order i of the planned graph (0: its baseline, 1: the plan's final
//   order): namesText(i) -> the names joined by '\n', nameAt(i, step) -> the
//   node at that step ("" past the last), baselineSteps() -> Int32Array: for
//   each step of the final order, that node's step in the baseline order,
//   curve(i) -> {peak, peak_step, curve: Float64Array}, liveAt(i, step) ->
//   [{buffer, bytes, producer}] (largest first).
// Call delete() when done.
Module['openPlanSession'] = () => {
  const raw = new Module['RawPlanSession']();
  return {
    run: (graph, optionsJson = '', onStage = () => {}) => {
      const bytes = typeof graph === 'string' ? new TextEncoder().encode(graph) : graph;
      const ptr = _malloc(Math.max(1, bytes.length));
      if (!ptr) throw new SchedlabError('out of memory', 'internal');
      try {
        HEAPU8.set(bytes, ptr);
        schedlabUnwrap(raw.runBuffer(ptr, bytes.length, optionsJson, onStage));
      } finally {
        _free(ptr);
      }
    },
    planText: () => schedlabUnwrap(raw.planText()),
    passSteps: () => JSON.parse(schedlabUnwrap(raw.passSteps())),
    overview: () => JSON.parse(schedlabUnwrap(raw.overview())),
    trace: () => schedlabUnwrap(raw.trace()),
    traceBeforeComm: () => schedlabUnwrap(raw.traceBeforeComm()),
    explain: (a, b) => JSON.parse(schedlabUnwrap(raw.explain(a, b))),
    inputNames: () => JSON.parse(schedlabUnwrap(raw.inputNames())),
    bufferProducers: () => JSON.parse(schedlabUnwrap(raw.bufferProducers())),
    lifetimes: (order, from, to) => JSON.parse(schedlabUnwrap(raw.lifetimes(order, from, to))),
    executedAsRun: () => JSON.parse(schedlabUnwrap(raw.executedAsRun())),
    summary: () => JSON.parse(schedlabUnwrap(raw.summary())),
    namesText: (order) => schedlabUnwrap(raw.namesText(order)),
    nameAt: (order, step) => schedlabUnwrap(raw.nameAt(order, step)),
    baselineSteps: () => {
      const view = raw.baselineSteps();
      if (!view) throw new SchedlabError('plan session: nothing planned yet', 'usage');
      return view.slice();
    },
    curve: (order) => {
      const { peak, peak_step } = JSON.parse(schedlabUnwrap(raw.peak(order)));
      return { peak, peak_step, curve: raw.curveView(order).slice() };
    },
    liveAt: (order, step) => JSON.parse(schedlabUnwrap(raw.liveAt(order, step))),
    delete: () => raw.delete(),
  };
};
