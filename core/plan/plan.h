// core/plan — the pipeline every front end runs (CLI `plan`, WASM `plan`):
// graph -> memory reordering -> (later stages) -> one PlanResult, written as
// schedplan/1 (docs/schedplan-1.md). The CLI and the WASM module both call
// plan_json(), so their outputs are byte for byte the same.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/graph/graph.h"
#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/fusion/fusion.h"
#include "core/memory/methods.h"
#include "core/predict/predicted.h"
#include "core/sim/simulate.h"

namespace schedlab {

struct PlanOptions {
  std::vector<std::string> memory_methods = default_memory_methods();
  // A method whose order is invalid: raise (Inductor 2.11 open source) or skip it.
  InvalidOrderPolicy on_invalid_memory_order = InvalidOrderPolicy::Raise;
  std::vector<std::string> comm_passes;  // applied in order after memory reordering
  CommKnobs comm;                        // the comm passes' knobs ("comm": {...}), Inductor's defaults
  bool fuse = true;  // a pre-fusion graph first goes through dependencies -> dead code -> fusion
  HardwareProfile hardware = builtin_profile(kDefaultHardwareProfile);  // "hardware": name or profile object
  // What the simulation (step time, exposed comm, trace) times nodes by:
  // "calibrated" (the profile's fitted model, host and launch gaps included)
  // or "runtime_us" (the nodes' runtime_us, Inductor's estimate in exported
  // graphs, else the roofline). The comm passes always read runtime_us, as
  // Inductor does.
  std::string runtime_source = "calibrated";
};

// Reads {"memory_methods": [...] or "a,b", "comm_passes": ...}; unknown keys
// are refused so typos do not pass silently. Throws UsageError.
PlanOptions parse_plan_options(std::string_view options_json);

struct PlanResult {
  MemoryPlan memory;
  Order order;  // the final order
  // The final order's memory (after the comm passes, which may raise the
  // peak within their budget): the same estimator as the memory methods'.
  PeakMemoryEstimate final_memory;
  std::vector<LiveBuffer> final_peak_live;  // alive at final_memory.peak_step, largest first
  // Per-node runtimes (a node's runtime_us, else the cost model under
  // opts.hardware) the comm passes and the simulation use.
  std::vector<double> runtimes_us;
  std::vector<double> simulated_runtimes_us;  // what the simulation used (opts.runtime_source)
  std::optional<CommPipelineResult> comm;  // when comm passes ran
  Simulation simulation_before_comm;       // of the memory-reordered order
  Simulation simulation;                   // of the final order
  Prediction predicted;                    // of the final order (schedplan/1 `predicted`)
  // For a pre-fusion graph: the front end's result and the fused graph that
  // every later stage (and every name in the report) refers to.
  std::optional<FrontEndResult> front_end;
  std::shared_ptr<const Graph> fused_graph;
  const Graph& planned(const Graph& input) const { return fused_graph ? *fused_graph : input; }
};

PlanResult run_plan(const Graph& g, const PlanOptions& opts);

// `g` is the graph given to run_plan; names come from r.planned(g).
nlohmann::json plan_to_json(const Graph& g, const PlanOptions& opts, const PlanResult& r);
std::string plan_to_text(const Graph& g, const PlanResult& r);

// The schedplan/1 text of a plan: compact JSON, one line, newline-ended.
// The one serialization the CLI and the WASM module both use.
std::string plan_text_json(const Graph& g, const PlanOptions& opts, const PlanResult& r);

// The Chrome trace of the final order's simulation, with its memory counter
// track and collective-to-wait flows (what `plan --trace` writes and the
// page exports).
std::string plan_trace_json(const Graph& g, const PlanResult& r);

// Whole pipeline on text: load, plan, serialize.
std::string plan_json(std::string_view graph_json, std::string_view options_json);

// "a,b,c" -> {"a","b","c"}; empty items are refused.
std::vector<std::string> split_list(std::string_view csv, std::string_view what);

// Human units for reports: "36.1 MiB", "812 B".
std::string human_bytes(std::int64_t bytes);

}  // namespace schedlab
