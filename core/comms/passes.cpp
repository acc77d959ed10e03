#include "core/comms/passes.h"

#include <array>

#include "core/util/error.h"
#include "core/util/permutation.h"

namespace schedlab {

using nlohmann::json;

namespace {

constexpr std::array<CommPass, 7> kPasses{{
    {"sink_waits", "Inductor: list scheduling that defers waits as late as dependencies allow", sink_waits},
    {"raise_comms", "Inductor: list scheduling that issues collectives (and their ancestors) as early as possible", raise_comms},
    {"reorder_compute_for_overlap", "Inductor: raise comms, sink waits, and follow each collective with ready compute covering its runtime",
     reorder_compute_for_overlap},
    {"decide_global_ordering_of_comms", "Inductor: chain collectives in the current order with fake weak deps (order unchanged)",
     decide_global_ordering_of_comms},
    {"reorder_communication_preserving_peak_memory",
     "Inductor: move each collective earlier by swaps, grouping its producers, within the peak-memory budget",
     reorder_communication_preserving_peak_memory},
    {"sink_waits_iterative", "Inductor: move each wait later by swaps, grouping its readers, within the peak-memory budget",
     sink_waits_iterative},
    {"overlap_schedule", "schedlab: list scheduling on simulated stream time: issue collectives early, fill their flight with "
                         "independent compute, defer waits, within the peak-memory budget",
     overlap_schedule},
}};

template <class T>
T knob_value(const json& v, const std::string& where) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) throw UsageError(where + ": expected true or false");
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (v.is_null()) return -1;
    if (!v.is_number_integer()) throw UsageError(where + ": expected an integer or null");
    return v.get<T>();
  } else {
    if (!v.is_number()) throw UsageError(where + ": expected a number");
    double d = v.get<double>();
    if (!(d >= 0) || d > 1e9) throw UsageError(where + ": expected a non-negative number");
    return d;
  }
}

// One table of (name, member) for parsing and printing alike.
template <class Fn>
void for_each_knob(CommKnobs& k, Fn&& fn) {
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

}  // namespace

CommKnobs parse_comm_knobs(const json& j, std::string_view where) {
  if (!j.is_object()) throw UsageError(std::string(where) + ": expected an object of knob names");
  CommKnobs k;
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool found = false;
    for_each_knob(k, [&](const char* name, auto& member) {
      if (it.key() != name) return;
      found = true;
      member = knob_value<std::decay_t<decltype(member)>>(it.value(), std::string(where) + "." + name);
    });
    if (!found) throw UsageError(std::string(where) + ": unknown knob \"" + it.key() + "\"");
  }
  return k;
}

json comm_knobs_to_json(const CommKnobs& knobs) {
  CommKnobs k = knobs;
  json out = json::object();
  for_each_knob(k, [&](const char* name, auto& member) {
    if constexpr (std::is_same_v<std::decay_t<decltype(member)>, std::int32_t>) {
      out[name] = member < 0 ? json(nullptr) : json(member);
    } else {
      out[name] = member;
    }
  });
  return out;
}

std::span<const CommPass> comm_passes() { return kPasses; }

const CommPass* find_comm_pass(std::string_view name) {
  for (const auto& p : kPasses)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> inductor_recommended_comm_passes() {
  return {"reorder_communication_preserving_peak_memory", "sink_waits_iterative", "reorder_communication_preserving_peak_memory"};
}

std::vector<std::string> inductor_default_comm_passes() { return {"reorder_compute_for_overlap", "sink_waits", "raise_comms"}; }

bool respects_comm_deps(const CommGraph& cg, const Order& order) {
  const auto step = positions_in_permutation(order, cg.num_nodes());
  if (!step) return false;
  for (NodeId v = 0; v < cg.num_nodes(); ++v)
    for (BufId b : cg.data_bufs.row(v))
      if ((*step)[cg.producer(b)] > (*step)[v]) return false;
  return true;
}

void check_comm_pass_names(const std::vector<std::string>& passes) {
  for (const auto& name : passes) {
    if (find_comm_pass(name)) continue;
    std::string known;
    for (const auto& k : kPasses) known += (known.empty() ? "" : ", ") + std::string(k.name);
    throw UsageError("comm passes: unknown pass \"" + name + "\" (known: " + known + ")");
  }
}

CommPipelineResult run_comm_passes(const Graph& g, const Order& input, const std::vector<std::string>& passes,
                                   const CommKnobs& knobs, const std::vector<double>& runtime_us) {
  check_comm_pass_names(passes);
  std::vector<const CommPass*> chosen;
  for (const auto& name : passes) chosen.push_back(find_comm_pass(name));
  CommPipelineResult out;
  out.final_graph = build_comm_graph(g, runtime_us);
  out.order = input;
  for (const CommPass* p : chosen) {
    CommPassResult r = p->run(out.final_graph, out.order, knobs);
    if (!respects_comm_deps(out.final_graph, r.order))
      throw Error("comm passes: " + std::string(p->name) + " produced an order that breaks a dependency");
    if (!r.added_fake_deps.empty()) {
      std::vector<FakeDep> all = out.final_graph.added_fake_deps;
      all.insert(all.end(), r.added_fake_deps.begin(), r.added_fake_deps.end());
      out.final_graph = build_comm_graph(g, out.final_graph.runtime_us, std::move(all));
    }
    out.order = r.order;
    out.steps.push_back({std::string(p->name), std::move(r)});
  }
  return out;
}

}  // namespace schedlab
