#include "core/memory/methods.h"

#include <array>

#include "core/util/error.h"

namespace schedlab {

Order memory_baseline(const Graph&, const MemoryPlanningInfo&, const Order& input) { return input; }

namespace {

constexpr std::array<MemoryMethod, 4> kMethods{{
    {"baseline", "the input order, unchanged", memory_baseline},
    {"lpmf", "least peak memory first: greedy on (peak if run now, net allocation, index)", topological_sort_lpmf},
    {"bfs", "FIFO: ready node whose predecessors ran earliest", topological_sort_bfs},
    {"dfs", "depth first from the lightest nodes, producers before consumers", topological_sort_dfs},
}};

}  // namespace

std::span<const MemoryMethod> memory_methods() { return kMethods; }

const MemoryMethod* find_memory_method(std::string_view name) {
  for (const auto& m : kMethods)
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> default_memory_methods() { return {"baseline", "lpmf", "bfs", "dfs"}; }

MemoryPlan reorder_for_peak_memory(const Graph& g, const Order& input, const std::vector<std::string>& methods,
                                   InvalidOrderPolicy on_invalid) {
  if (methods.empty()) throw UsageError("memory methods: the list is empty");
  std::vector<const MemoryMethod*> chosen;
  for (const auto& name : methods) {
    const MemoryMethod* m = find_memory_method(name);
    if (!m) {
      std::string known;
      for (const auto& k : kMethods) known += (known.empty() ? "" : ", ") + std::string(k.name);
      throw UsageError("memory methods: unknown method \"" + name + "\" (known: " + known + ")");
    }
    chosen.push_back(m);
  }
  const MemoryPlanningInfo info = compute_planning_info(g, input);
  MemoryPlan plan;
  bool have_best = false;
  for (const MemoryMethod* m : chosen) {
    MemoryMethodResult r;
    r.method = std::string(m->name);
    Order order = m->run(g, info, input);
    if (std::string why = order_violation(g, info, order); !why.empty()) {
      if (on_invalid == InvalidOrderPolicy::Raise)
        throw Error("memory planning: method \"" + r.method + "\" produced an invalid order: " + why +
                    " (--skip-invalid-memory-methods skips such a method)");
      r.error = why;
    } else {
      PeakMemoryEstimate est = estimate_peak_memory(g, info, order);
      r.peak = est.peak;
      r.order = std::move(order);
      if (!have_best || r.peak < plan.methods[plan.chosen].peak) {
        plan.chosen = plan.methods.size();
        plan.estimate = std::move(est);
        have_best = true;
      }
    }
    plan.methods.push_back(std::move(r));
  }
  if (!have_best) throw Error("memory planning: no method produced a valid order");
  plan.peak_live = live_buffers_at(g, info, plan.order(), plan.estimate.peak_step);
  return plan;
}

}  // namespace schedlab
