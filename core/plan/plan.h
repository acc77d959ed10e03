// core/plan — the pipeline every front end runs (CLI `plan`, WASM `plan`):
// graph -> front end -> memory reordering -> comm passes -> simulation, into
// one PlanResult of plain structs. core/io writes it as schedplan/1
// (docs/schedplan-1.md) and reads the options.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph/graph.h"
#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/cost/pricing.h"
#include "core/fusion/fusion.h"
#include "core/measure/measured_costs.h"
#include "core/memory/methods.h"
#include "core/predict/device_fit.h"
#include "core/predict/predicted.h"
#include "core/sim/ranks.h"
#include "core/sim/simulate.h"
#include "core/util/units.h"  // human_bytes, for the reports

namespace schedlab {

// Another rank of the step (`plan --rank-graphs`): its graph, and what
// names it in errors (its file).
struct RankGraph {
  std::string label;
  std::shared_ptr<const Graph> graph;
};

struct PlanOptions {
  std::vector<std::string> memory_methods = default_memory_methods();
  // A method whose order is invalid: raise (Inductor 2.11 open source) or skip it.
  InvalidOrderPolicy on_invalid_memory_order = InvalidOrderPolicy::Raise;
  std::vector<std::string> comm_passes;  // applied in order after memory reordering
  CommKnobs comm;                        // the comm passes' knobs ("comm": {...}), Inductor's defaults
  bool fuse = true;  // a pre-fusion graph first goes through dependencies -> dead code -> fusion
  HardwareProfile hardware = builtin_profile(kDefaultHardwareProfile);  // "hardware": name or profile object
  // false: every node is timed by the cost model, its runtime_us ignored
  // (`simulate --model-runtimes`; the fixtures' matmul estimates are far off).
  bool use_graph_runtimes = true;
  // What the simulation (step time, exposed comm, trace) times nodes by:
  // "calibrated" (the profile's fitted model, host and launch gaps included)
  // or "runtime_us" (the nodes' runtime_us, Inductor's estimate in exported
  // graphs, else the roofline). The comm passes always read runtime_us, as
  // Inductor does.
  std::string runtime_source = "calibrated";
  // "Will it fit?": the device's memory in bytes (`--device-memory 80GiB`,
  // "device_memory"); 0: not asked. The plan then reports `device_fit`.
  std::int64_t device_memory_bytes = 0;
  // Also run the compared comm passes (compared_comm_passes()) on the
  // memory-planned order, each as this pipeline runs it (`simulate
  // --compare`, `plan --compare`, schedplan/1 `compare`).
  bool compare = false;
  // The step's other ranks, rank 1 on: each planned with these options and
  // simulated beside this graph, rank 0 (core/sim/ranks.h; schedplan/1
  // `simulation.ranks`). Empty: one rank, as always.
  std::vector<RankGraph> other_ranks;
  // Per rank, rank 0 first: its compute speed factor (with_compute_scaled;
  // `--rank-skew`). Empty, or a rank past its end: 1.
  std::vector<double> rank_compute_factors;
  std::string rank_label;  // names this graph (rank 0) in the ranks' errors and reports; empty: its name
  // Measured costs fed back (`--measured-trace`, core/measure/measured_costs.h):
  // traces of real runs of the planned graph's order; the pricing stage
  // puts their measured times in the model's place. Null or empty: none.
  std::shared_ptr<const std::vector<MeasuredTrace>> measured_traces;
  // The graph whose node order the traces ran, when not the planned graph
  // (`--measured-trace-graph`: the same nodes in another order); its
  // measured times are carried to the planned graph by node name.
  std::shared_ptr<const Graph> measured_graph;
};

// One comm-pass list run beside the plan's own: the step `plan
// --comm-passes` with these passes reports, by construction (the same
// comms and simulation stages on the same memory plan and pricing).
struct ComparedPasses {
  std::string label;                     // "inductor recommended", "overlap_schedule"
  std::vector<std::string> comm_passes;
  Simulation simulation;                 // of the order the passes left
  std::int64_t peak_bytes = 0;           // that order's peak (the memory methods' estimator)
};

// The lists `compare` runs: Inductor's recommended comm passes and overlap_schedule.
std::vector<std::pair<std::string, std::vector<std::string>>> compared_comm_passes();

// The plan's graph and its other ranks simulated side by side.
struct PlanRanks {
  std::vector<std::string> labels;        // per rank (PlanOptions::rank_label, RankGraph::label)
  std::vector<std::shared_ptr<const Graph>> graphs;  // per rank: its planned graph, which node ids refer to
  std::vector<double> compute_factors;    // per rank
  RanksSimulation simulation;             // rank 0: the plan's own graph
};

struct PlanResult {
  // The graph given to run_plan, and for a pre-fusion one the fused graph
  // that every later stage (and every name in the report) refers to.
  std::shared_ptr<const Graph> input;
  std::shared_ptr<const Graph> fused_graph;
  const Graph& planned() const { return fused_graph ? *fused_graph : *input; }

  MemoryPlan memory;
  Order order;  // the final order
  // The final order's memory (after the comm passes, which may raise the
  // peak within their budget): the same estimator as the memory methods'.
  PeakMemoryEstimate final_memory;
  std::vector<LiveBuffer> final_peak_live;  // alive at final_memory.peak_step, largest first
  // The planned graph priced once on opts.hardware (core/cost/pricing.h):
  // what the comm passes read, what the simulation and the prediction time
  // by. Shared, as the graphs are: compared runs read the same one.
  std::shared_ptr<const Pricing> pricing;
  // With opts.measured_traces: what the pricing stage mapped (schedplan/1
  // `measured_costs`); null otherwise.
  std::shared_ptr<const MeasuredCosts> measured_costs;
  // After a bucketing comm pass made buckets: `pricing` with each bucket's
  // times in its members' place (core/comms/bucketing.h, bucketed_runtimes),
  // which the simulation and the prediction of the final order time by;
  // null otherwise. `pricing` itself stays the graph's, as `runtime` reports it.
  std::shared_ptr<const Pricing> bucketed_pricing;
  const Pricing& order_pricing() const { return bucketed_pricing ? *bucketed_pricing : *pricing; }
  // Memory as executed over `order`, once the launch path (its host pays per
  // fresh allocation) or the prediction needed it; reset when the order changes.
  std::optional<ExecutedMemory> executed;
  std::optional<CommPipelineResult> comm;  // when comm passes ran
  Simulation simulation_before_comm;       // of the memory-reordered order
  Simulation simulation;                   // of the final order
  std::optional<FrontEndResult> front_end;  // for a pre-fusion graph
  Prediction predicted;                     // of the final order (schedplan/1 `predicted`)
  std::optional<DeviceFit> device_fit;      // with opts.device_memory_bytes (schedplan/1 `device_fit`)
  std::vector<ComparedPasses> compared;     // opts.compare: each compared list, as the plan would run it
  std::optional<PlanRanks> ranks;           // with opts.other_ranks or factors (schedplan/1 `simulation.ranks`)
};

// One stage of the pipeline: it reads what the earlier stages left in the
// PlanResult and fills its own part.
struct PlanStage {
  std::string_view name;
  std::string_view fills;  // which PlanResult fields, for docs and bench
  void (*run)(PlanResult& r, const PlanOptions& opts);
};

// front_end -> memory -> pricing -> comms -> simulation -> predict ->
// compare -> ranks, in this order.
// Another order of the planned graph simulated as the plan's own are: the
// pricing's times, its launch path (the fresh allocations of memory as
// executed over that order) and its contention (the page's per-pass steps).
Simulation simulate_plan_order(const PlanResult& r, const Order& order);

// The final order as one rank of a several-rank simulation
// (core/sim/ranks.h): the inputs the simulation stage timed it by, its
// compute nodes' times times compute_factor (a slower or faster rank).
// With factor 1, simulate_ranks of it alone gives r.simulation.
RankInput plan_rank_input(const PlanResult& r, std::string label, double compute_factor = 1.0);

std::span<const PlanStage> plan_stages();

// Every stage in order: what `plan`, `simulate`, `bench`, the WASM module
// and schedlab-gpu all run. Throws OptionError for unknown names in `opts`.
PlanResult run_plan(std::shared_ptr<const Graph> input, const PlanOptions& opts);
PlanResult run_plan(Graph input, const PlanOptions& opts);
// The same, calling `before_stage` as each stage starts (the page's worker
// reports progress and per-stage times this way).
PlanResult run_plan(std::shared_ptr<const Graph> input, const PlanOptions& opts,
                    const std::function<void(const PlanStage&)>& before_stage);

// The human report (`plan --format text`).
std::string plan_to_text(const PlanResult& r);
// The final order, node by node (core/sim/overlap_view.h), timed as the
// simulation timed it (`plan --overlap-view`, `simulate --overlap-view`).
std::string plan_overlap_view_text(const PlanResult& r);

// "a,b,c" -> {"a","b","c"}; empty items are refused.
std::vector<std::string> split_list(std::string_view csv, std::string_view what);

// The name of the node running at `step` of `order`; empty past the last step.
std::string_view node_at_step(const Graph& g, const Order& order, std::int32_t step);


}  // namespace schedlab
