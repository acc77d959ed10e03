// The worker API (js/planner.js, js/worker.js): a Planner owns one planning
// worker that runs the WebAssembly core off the page's thread; requests are
// promises. The widget shares one Planner per page; a page may make its own.
import type { GraphSummary, MemoryCurve, LiveBuffer, BufferLifetime, ExecutedAsRun, FusionExplanation, PlanControls, PlanOptions, RegistryEntry } from './core';

export type { PlanOptions } from './core';

export interface Capabilities {
  memoryMethods: RegistryEntry[];
  commPasses: RegistryEntry[];
  controls: PlanControls;
}

/** Progress while planning: the stage ('reading', 'planning') and what it is doing. */
export interface Progress {
  stage: string;
  detail: string;
}

/** What `plan` answers: the first report, without the plan's text. */
export interface PlanReply {
  /** The session's overview: the plan's first-report keys (schedplan/1). */
  plan: Record<string, any>;
  methodPeakNode: string;
  summary: { input: GraphSummary; planned: GraphSummary };
  baseline: MemoryCurve;
  final: MemoryCurve;
  /** The final order's node names joined by '\n'. */
  orderText: string;
  /** For each step of the final order, that node's step in the baseline. */
  baselineSteps: Int32Array;
  baselinePeakNode: string;
  planMs: number;
  /** [stage, milliseconds] in order. */
  stages: [string, number][];
}

/** A simulation's slices as parallel arrays (lane 0 compute, 1 comm, 2 exposed), flows and exposed time per collective. */
export interface TimelineLanes {
  name: string[];
  kernel: string[];
  lane: (0 | 1 | 2)[];
  ts: number[];
  dur: number[];
  flows: { from: string; to: string; fromTs: number; toTs: number }[];
  exposed: Record<string, number>;
}

/** A failed request: kind 'usage' | 'input' | 'internal' as the core's, or 'cancelled'. */
export interface PlannerError extends Error {
  kind: 'usage' | 'input' | 'internal' | 'cancelled';
}

/** The messages between a Planner and its worker. */
export type WorkerRequest =
  | { id: number; type: 'init'; base: string; wasmModule: WebAssembly.Module | null }
  | { id: number; type: 'warmUp' }
  | { id: number; type: 'plan'; source: Blob | string; options: PlanOptions | null }
  | { id: number; type: 'details' | 'planText' | 'trace' | 'inputNames' }
  | { id: number; type: 'timeline'; withBefore: boolean }
  | { id: number; type: 'live'; order: 'baseline' | 'chosen'; step: number }
  | { id: number; type: 'lifetimes'; order: 'baseline' | 'chosen'; from: number; to: number }
  | { id: number; type: 'executedAsRun' }
  | { id: number; type: 'explain'; a: string; b: string }
  | { id: number; type: 'findBuffers'; query: string };

export type WorkerReply =
  | { id: number; result: unknown }
  | { id: number; error: { message: string; kind: PlannerError['kind'] } }
  | { id: number; progress: Progress };

export declare class Planner {
  /** base: the folder holding js/worker.js, schedlab_core.js and .wasm (default: the package's). */
  constructor(base?: string);
  readonly base: string;
  capabilities(): Promise<Capabilities>;
  /** Ends a running plan at once (its promise rejects with kind 'cancelled') and starts a fresh worker. */
  cancel(): Promise<Capabilities>;
  plan(source: Blob | string, options?: PlanOptions | null, onProgress?: (progress: Progress) => void): Promise<PlanReply>;
  /** The last plan's schedplan/1 object for the secondary views (without per-method orders). */
  details(): Promise<Record<string, any>>;
  /** The last plan's schedplan/1 text, byte for byte the CLI's. */
  planText(): Promise<string>;
  /** The Chrome trace text of the last plan (as `plan --trace`). */
  trace(): Promise<string>;
  timeline(withBefore: boolean): Promise<{ after: TimelineLanes; before: TimelineLanes | null }>;
  live(order: 'baseline' | 'chosen', step: number): Promise<LiveBuffer[]>;
  lifetimes(order: 'baseline' | 'chosen', from: number, to: number): Promise<BufferLifetime[]>;
  /** Memory as executed over the order the compiled call runs in, to set beside a torch.cuda.memory._snapshot(). */
  executedAsRun(): Promise<ExecutedAsRun>;
  explain(a: string, b: string): Promise<FusionExplanation>;
  findBuffers(query: string): Promise<string[]>;
  inputNames(): Promise<string>;
  terminate(): void;
}
