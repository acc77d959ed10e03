// The WebAssembly core (schedlab_core.js + .wasm; wasm/api.js is its API):
// what the widget's worker and node scripts call. docs/web.md, "The JS API".

/** A failed call: `message` is the CLI's message without its prefix. */
export declare class SchedlabError extends Error {
  name: 'SchedlabError';
  /** The CLI's exit codes 2, 1, 3: bad options, a refused input, anything else. */
  kind: 'usage' | 'input' | 'internal';
}

/** `schedlab validate`'s counts of a graph. */
export interface GraphSummary {
  graph: string;
  nodes: number;
  buffers: number;
  inputs: number;
  reads: number;
  outputs: number;
  fused: boolean;
}

/** A row of a registry (memory methods, comm passes). */
export interface RegistryEntry {
  name: string;
  summary: string;
  default: boolean;
}

export interface PlanControls {
  /** The built-in hardware profiles' names. */
  hardware: string[];
  default_hardware: string;
  /** Every comm knob with Inductor's default (null: no limit). */
  comm_knobs: Record<string, number | boolean | null>;
}

/**
 * The options core/io reads (`parse_plan_options`); JSON.stringify one for
 * `optionsJson`, or pass '' for the CLI's defaults.
 */
export interface PlanOptions {
  memory_methods?: string[] | string;
  comm_passes?: string[] | string;
  comm?: Record<string, number | boolean | null>;
  fuse?: boolean;
  /** A built-in profile's name, or a profile object as `--hardware FILE` reads it. */
  hardware?: string | Record<string, unknown>;
  skip_invalid_memory_methods?: boolean;
  runtime_source?: 'calibrated' | 'runtime_us';
}

export interface MemoryCurve {
  peak: number;
  peak_step: number;
  curve: Float64Array;
}

export interface LiveBuffer {
  buffer: string;
  bytes: number;
  producer: string;
}

export interface BufferLifetime {
  buffer: string;
  bytes: number;
  start: number;
  end: number;
  to_end: boolean;
  producer: string;
  kernel: string;
  dtype: string;
  shape: number[];
  last_user: string;
  category: 'input' | 'activation' | 'output' | 'collective';
}

/** One event of memory as executed: allocate or free (bytes), or reuse (the donor whose storage the buffer takes over); buffer "" is a kernel's workspace. */
export type ExecutedEvent = ['a' | 'f', string, string, number, number] | ['r', string, string, number, string];

/** Memory as executed over the order the compiled call runs in (Inductor's own memory reordering), event by event. */
export interface ExecutedAsRun {
  steps: number;
  events: ExecutedEvent[];
}

export interface FusionExplanation {
  fused: boolean;
  group_a: string[];
  group_b: string[];
  eliminated_a: boolean;
  eliminated_b: boolean;
  refusals: { round: number; node1: string; node2: string; reason: string }[];
  final_reason: string;
  max_pairwise_attempts: number;
}

/** The pipeline's stages, in the order `run` reports them. */
export type PlanStage = 'load' | 'front_end' | 'memory' | 'runtimes' | 'comms' | 'simulation' | 'views';

/** Orders of a session: 0 the planned graph's baseline, 1 the plan's final order. */
export type OrderIndex = 0 | 1;

/** A planning run kept in the WASM heap for per-step views. Call delete() when done. */
export interface PlanSession {
  run(graph: string | Uint8Array, optionsJson?: string, onStage?: (stage: PlanStage) => void): void;
  /** What a first report shows, under the plan's keys (schedplan/1), plus method_peak_node. */
  overview(): Record<string, unknown>;
  /** The schedplan/1 text, byte for byte `schedlab plan G -o PLAN.json`. */
  planText(): string;
  /** The Chrome trace text of the simulation (as `plan --trace`). */
  trace(): string;
  traceBeforeComm(): string;
  summary(): { input: GraphSummary; planned: GraphSummary };
  curve(order: OrderIndex): MemoryCurve;
  namesText(order: OrderIndex): string;
  nameAt(order: OrderIndex, step: number): string;
  baselineSteps(): Int32Array;
  liveAt(order: OrderIndex, step: number): LiveBuffer[];
  lifetimes(order: OrderIndex, from: number, to: number): BufferLifetime[];
  executedAsRun(): ExecutedAsRun;
  explain(a: string, b: string): FusionExplanation;
  inputNames(): string[];
  bufferProducers(): [string, string][];
  delete(): void;
}

export interface SchedlabCore {
  /** schedplan/1 text, byte for byte `schedlab plan G -o PLAN.json`. */
  plan(graphJson: string, optionsJson?: string): string;
  validate(graphJson: string): GraphSummary;
  memoryMethods(): RegistryEntry[];
  commPasses(): RegistryEntry[];
  planControls(): PlanControls;
  openPlanSession(): PlanSession;
  SchedlabError: typeof SchedlabError;
}

/** Emscripten's module settings (the ones schedlab's callers use). */
export interface ModuleSettings {
  /** The .wasm's bytes (node: emcc 3.1.6 cannot fetch a file path). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (file: string, prefix: string) => string;
  instantiateWasm?: (imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) => object;
  [setting: string]: unknown;
}

/** The factory schedlab_core.js defines (`createSchedlab`). */
declare function createSchedlab(settings?: ModuleSettings): Promise<SchedlabCore>;
export default createSchedlab;
