// core/comms — the comm passes as interchangeable functions of one type,
// registered by name (the CLI, the WASM API and the page list the same
// table), their knobs (Inductor's config_comms names and 2.11 defaults), and
// the pipeline that applies a list of them in order.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/comms/comm_graph.h"

namespace schedlab {

// Every knob of config_comms the passes read, with Inductor's 2.11 default.
// The JSON keys are the config_comms names (see for_each_comm_knob).
struct CommKnobs {
  // reorder_communication_preserving_peak_memory
  double reorder_iterative_peak_memory_budget = 0.2;
  bool reorder_iterative_use_runtime_estimations = false;
  double reorder_iterative_extra_comm_comp_overlap = 0.5;
  bool reorder_iterative_unsafe_collectives_reorder = true;
  bool reorder_iterative_group_with_collectives = false;
  std::int32_t reorder_iterative_debug_limit_to_reorder = -1;  // -1: no limit (None)
  // sink_waits_iterative
  double sink_iterative_peak_memory_budget = 0.2;
  bool sink_iterative_use_runtime_estimations = false;
  double sink_iterative_extra_comm_comp_overlap = 0.5;
  bool sink_waits_iterative_unsafe_collectives_reorder = true;
  bool sink_waits_iterative_swap_with_collectives = false;
  std::int32_t sink_waits_iterative_debug_limit_to_sink = -1;  // -1: no limit (None)
  // Both iterative passes scale runtimes by these.
  double reorder_sink_runtime_estimations_comm_mult = 2.0;
  double reorder_sink_runtime_estimations_non_comm_mult = 1.0;
  // overlap_schedule (ours): peak may grow by this fraction of the input's peak.
  double overlap_schedule_peak_memory_budget = 0.2;
};

// The knob table: each knob's config_comms name and its member, once, for
// reading and writing alike (core/io/options.h, core/io/plan_writer.h).
// `Knobs` is CommKnobs or const CommKnobs.
template <class Knobs, class Fn>
void for_each_comm_knob(Knobs& k, Fn&& fn) {
  fn("reorder_iterative_peak_memory_budget", k.reorder_iterative_peak_memory_budget);
  fn("reorder_iterative_use_runtime_estimations", k.reorder_iterative_use_runtime_estimations);
  fn("reorder_iterative_extra_comm_comp_overlap", k.reorder_iterative_extra_comm_comp_overlap);
  fn("reorder_iterative_unsafe_collectives_reorder", k.reorder_iterative_unsafe_collectives_reorder);
  fn("reorder_iterative_group_with_collectives", k.reorder_iterative_group_with_collectives);
  fn("reorder_iterative_debug_limit_to_reorder", k.reorder_iterative_debug_limit_to_reorder);
  fn("sink_iterative_peak_memory_budget", k.sink_iterative_peak_memory_budget);
  fn("sink_iterative_use_runtime_estimations", k.sink_iterative_use_runtime_estimations);
  fn("sink_iterative_extra_comm_comp_overlap", k.sink_iterative_extra_comm_comp_overlap);
  fn("sink_waits_iterative_unsafe_collectives_reorder", k.sink_waits_iterative_unsafe_collectives_reorder);
  fn("sink_waits_iterative_swap_with_collectives", k.sink_waits_iterative_swap_with_collectives);
  fn("sink_waits_iterative_debug_limit_to_sink", k.sink_waits_iterative_debug_limit_to_sink);
  fn("reorder_sink_runtime_estimations_comm_mult", k.reorder_sink_runtime_estimations_comm_mult);
  fn("reorder_sink_runtime_estimations_non_comm_mult", k.reorder_sink_runtime_estimations_non_comm_mult);
  fn("overlap_schedule_peak_memory_budget", k.overlap_schedule_peak_memory_budget);
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
  std::vector<FakeDep> added_fake_deps;  // decide_global_ordering_of_comms only
  std::int64_t peak_before = -1;         // iterative passes: allocfree peaks
  std::int64_t peak_after = -1;
};

using CommPassFn = CommPassResult (*)(const CommGraph&, const Order&, const CommKnobs&);

struct CommPass {
  std::string_view name;
  std::string_view summary;
  CommPassFn run;
};

// Inductor's passes (comms.py).
CommPassResult sink_waits(const CommGraph& cg, const Order& order, const CommKnobs& k);
CommPassResult raise_comms(const CommGraph& cg, const Order& order, const CommKnobs& k);
CommPassResult reorder_compute_for_overlap(const CommGraph& cg, const Order& order, const CommKnobs& k);
CommPassResult decide_global_ordering_of_comms(const CommGraph& cg, const Order& order, const CommKnobs& k);
CommPassResult reorder_communication_preserving_peak_memory(const CommGraph& cg, const Order& order, const CommKnobs& k);
CommPassResult sink_waits_iterative(const CommGraph& cg, const Order& order, const CommKnobs& k);
// Ours (docs/comms.md): list scheduling on simulated stream time under a peak budget.
CommPassResult overlap_schedule(const CommGraph& cg, const Order& order, const CommKnobs& k);

std::span<const CommPass> comm_passes();
const CommPass* find_comm_pass(std::string_view name);
// Inductor's recommended iterative pipeline (reorder, sink, reorder).
std::vector<std::string> inductor_recommended_comm_passes();
// config.reorder_for_compute_comm_overlap_passes' default list.
std::vector<std::string> inductor_default_comm_passes();

// Throws UsageError naming the first unknown pass and listing the known ones.
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

// Applies `passes` in order to `input`. Throws UsageError for an unknown
// name (listing the known ones), Error when a pass breaks a dependency.
CommPipelineResult run_comm_passes(const Graph& g, const Order& input, const std::vector<std::string>& passes,
                                   const CommKnobs& knobs, const std::vector<double>& runtime_us);

// True when `order` is a permutation of all nodes that meets every data
// dependency of `cg`. Fake deps are not checked: the unsafe-reorder switches
// (on by default, as in Inductor) let the iterative passes cross them.
bool respects_comm_deps(const CommGraph& cg, const Order& order);

}  // namespace schedlab
