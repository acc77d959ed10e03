#include "core/comms/passes.h"

#include <algorithm>

#include "core/util/error.h"
#include "core/util/permutation.h"

namespace schedlab {

namespace {

constexpr CommPass kPasses[] = {
#define SCHEDLAB_COMM_PASS(name, function, summary) {#name, summary, function},
#include "core/comms/passes.def"
#undef SCHEDLAB_COMM_PASS
};

}  // namespace

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

std::int32_t simulation_budget(std::int32_t n) { return std::clamp<std::int32_t>(500000 / std::max(1, n), 2, 64); }

double overlap_peak_budget(const CommKnobs& k, std::int64_t input_peak) {
  double budget = static_cast<double>(input_peak) * (1.0 + k.overlap_schedule_peak_memory_budget);
  if (k.overlap_schedule_memory_budget_mib >= 0)
    budget = std::min(budget, static_cast<double>(std::int64_t{k.overlap_schedule_memory_budget_mib} << 20));
  return budget;
}

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
    throw OptionError("comm passes: unknown pass \"" + name + "\" (known: " + known + ")");
  }
}

CommPipelineResult run_comm_passes(const Graph& g, const Order& input, const std::vector<std::string>& passes,
                                   const CommKnobs& knobs, const std::vector<double>& runtime_us,
                                   std::shared_ptr<const CollectivePrices> prices,
                                   std::shared_ptr<const MemoryPlanningInfo> planning) {
  check_comm_pass_names(passes);
  std::vector<const CommPass*> chosen;
  for (const auto& name : passes) chosen.push_back(find_comm_pass(name));
  CommPipelineResult out;
  out.final_graph = build_comm_graph(g, runtime_us);
  out.final_graph.prices = prices;
  // Planned once; each pass re-plans it for its own order.
  if (!planning && !chosen.empty()) planning = std::make_shared<const MemoryPlanningInfo>(compute_planning_info(g, input));
  out.final_graph.planning = planning;
  out.order = input;
  for (const CommPass* p : chosen) {
    CommPassResult r = p->run(out.final_graph, out.order, knobs);
    if (!respects_comm_deps(out.final_graph, r.order))
      throw Error("comm passes: " + std::string(p->name) + " produced an order that breaks a dependency");
    if (!r.added_fake_deps.empty()) {
      std::vector<FakeDep> all = out.final_graph.added_fake_deps;
      all.insert(all.end(), r.added_fake_deps.begin(), r.added_fake_deps.end());
      out.final_graph = build_comm_graph(g, out.final_graph.runtime_us, std::move(all));
      out.final_graph.prices = prices;
      out.final_graph.planning = planning;
    }
    out.order = r.order;
    out.steps.push_back({std::string(p->name), std::move(r)});
  }
  return out;
}

std::vector<CollectiveBucket> pipeline_buckets(const CommPipelineResult& r) {
  for (auto step = r.steps.rbegin(); step != r.steps.rend(); ++step)
    if (!step->result.buckets.empty()) return step->result.buckets;
  return {};
}

}  // namespace schedlab
