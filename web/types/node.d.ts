// The package under node (node.cjs): the WebAssembly core, loaded from the
// package's own schedlab_core.wasm.
import createSchedlab, { ModuleSettings, SchedlabCore } from './core';

export * from './core';
export { createSchedlab };
/** The core, its .wasm read from the package (any other settings passed on). */
export declare function loadSchedlab(settings?: ModuleSettings): Promise<SchedlabCore>;
