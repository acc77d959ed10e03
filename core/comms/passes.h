// core/comms — the comm passes as interchangeable functions of one type,
// registered by name (the CLI, the WASM API and the page list the same
// table), their knobs (Inductor's config_comms names and 2.11 defaults), and
// the pipeline that applies a list of them in order.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/comms/bucketing.h"
#include "core/comms/comm_graph.h"

namespace schedlab {

// Every knob of config_comms the passes read, with Inductor's 2.11 default
// (core/comms/knobs.def: one row per knob).
struct CommKnobs {
#define SCHEDLAB_COMM_KNOB(type, name, default_value) type name = default_value;
#define SCHEDLAB_COMM_KNOB_WHEN_SET SCHEDLAB_COMM_KNOB
#include "core/comms/knobs.def"
#undef SCHEDLAB_COMM_KNOB_WHEN_SET
#undef SCHEDLAB_COMM_KNOB
};

// The knob table: each knob's config_comms name and its member, for reading
// and writing alike (core/io/options.h, core/io/plan_writer.h). `Knobs` is
// CommKnobs or const CommKnobs.
template <class Knobs, class Fn>
void for_each_comm_knob(Knobs& k, Fn&& fn) {
#define SCHEDLAB_COMM_KNOB(type, name, default_value) fn(#name, k.name);
#define SCHEDLAB_COMM_KNOB_WHEN_SET SCHEDLAB_COMM_KNOB
#include "core/comms/knobs.def"
#undef SCHEDLAB_COMM_KNOB_WHEN_SET
#undef SCHEDLAB_COMM_KNOB
}

// The knobs a plan names (its options.comm): every knob, but a
// SCHEDLAB_COMM_KNOB_WHEN_SET one only when it differs from its default.
template <class Fn>
void for_each_written_comm_knob(const CommKnobs& k, Fn&& fn) {
#define SCHEDLAB_COMM_KNOB(type, name, default_value) fn(#name, k.name);
#define SCHEDLAB_COMM_KNOB_WHEN_SET(type, name, default_value) \
  if (k.name != static_cast<type>(default_value)) fn(#name, k.name);
#include "core/comms/knobs.def"
#undef SCHEDLAB_COMM_KNOB_WHEN_SET
#undef SCHEDLAB_COMM_KNOB
}

// Per-collective statistics (Inductor's ReorderInfo / SinkWaitInfo). Times
// are in microseconds of the pass's (scaled) runtimes; `node` is the
// collective (reorder passes) or the wait (sink passes).
struct OverlapStat {
  NodeId node = kNone;
  double comm_time_us = -1;
  double comp_time_us = -1;
  double initial_exposed_us = -1;
  double final_exposed_us = -1;
  std::int32_t moves = 0;
  std::int32_t grouped = 0;
  std::string limiting_factor = "None";
};

struct CommPassResult {
  Order order;
  std::vector<OverlapStat> stats;
  std::vector<FakeDep> added_fake_deps;  // decide_global_ordering_of_comms; bucketing (bucket_unit_deps)
  std::int64_t peak_before = -1;         // iterative passes: allocfree peaks
  std::int64_t peak_after = -1;
  std::vector<CollectiveBucket> buckets;  // bucketing passes only
  // overlap_schedule_step: the plan's simulated step of its input and of its
  // order (-1: not priced).
  double step_before_us = -1, step_after_us = -1;
  // false: no order, the input included, met the memory budget and in-flight
  // limits (overlap_schedule*: the input is kept); true otherwise.
  bool budget_met = true;
};

using CommPassFn = CommPassResult (*)(const CommGraph&, const Order&, const CommKnobs&);

struct CommPass {
  std::string_view name;
  std::string_view summary;
  CommPassFn run;
};

// Every pass's function, from the one table (passes.def): Inductor's
// (comms.py) and ours (docs/comms.md).
#define SCHEDLAB_COMM_PASS(name, function, summary) CommPassResult function(const CommGraph& cg, const Order& order, const CommKnobs& k);
#include "core/comms/passes.def"
#undef SCHEDLAB_COMM_PASS

std::span<const CommPass> comm_passes();
const CommPass* find_comm_pass(std::string_view name);
// Inductor's recommended iterative pipeline (reorder, sink, reorder).
std::vector<std::string> inductor_recommended_comm_passes();
// config.reorder_for_compute_comm_overlap_passes' default list.
std::vector<std::string> inductor_default_comm_passes();

// How many simulations a pass that weighs orders by the plan's simulation
// (bucketing's model check, defer_stalled_compute) may run on a graph of `n`
// nodes: enough for every bucket or stall of a real step, a few on a
// 100k-node graph.
std::int32_t simulation_budget(std::int32_t n);

// The peak (allocfree bytes) an overlap pass may reach from an input whose
// peak is `input_peak`: (1 + overlap_schedule_peak_memory_budget) x it, and
// at most overlap_schedule_memory_budget_mib where that is set.
double overlap_peak_budget(const CommKnobs& k, std::int64_t input_peak);

// Throws OptionError naming the first unknown pass and listing the known ones.
void check_comm_pass_names(const std::vector<std::string>& passes);

struct CommPipelineStep {
  std::string pass;
  CommPassResult result;
};

struct CommPipelineResult {
  std::vector<CommPipelineStep> steps;
  Order order;          // the last step's order (the input when there are no steps)
  CommGraph final_graph;  // with every fake dep the steps added
};

// Applies `passes` in order to `input`. Throws OptionError for an unknown
// name (listing the known ones), Error when a pass breaks a dependency.
// `prices`: what bucketing prices merged collectives and copies with.
// `planning`: the planning info of some order of `g` (the plan's memory
// plan's), which the passes re-plan for theirs; null: planned from `input`.
CommPipelineResult run_comm_passes(const Graph& g, const Order& input, const std::vector<std::string>& passes,
                                   const CommKnobs& knobs, const std::vector<double>& runtime_us,
                                   std::shared_ptr<const CollectivePrices> prices = nullptr,
                                   std::shared_ptr<const MemoryPlanningInfo> planning = nullptr);

// The buckets the pipeline ends with: the last bucketing step's (a second
// bucketing pass buckets the order the first left, members already together).
std::vector<CollectiveBucket> pipeline_buckets(const CommPipelineResult& r);

// True when `order` is a permutation of all nodes that meets every data
// dependency of `cg`. Fake deps are not checked: the unsafe-reorder switches
// (on by default, as in Inductor) let the iterative passes cross them.
bool respects_comm_deps(const CommGraph& cg, const Order& order);

}  // namespace schedlab
