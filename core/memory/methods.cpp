#include "core/memory/methods.h"

#include "core/util/error.h"

namespace schedlab {

Order memory_baseline(const Graph&, const MemoryPlanningInfo&, const Order& input) { return input; }

namespace {

constexpr MemoryMethod kMethods[] = {
#define SCHEDLAB_MEMORY_METHOD(name, function, is_default, summary) {#name, summary, function, is_default},
#include "core/memory/methods.def"
#undef SCHEDLAB_MEMORY_METHOD
};

}  // namespace

std::span<const MemoryMethod> memory_methods() { return kMethods; }

const MemoryMethod* find_memory_method(std::string_view name) {
  for (const auto& m : kMethods)
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> default_memory_methods() {
  std::vector<std::string> out;
  for (const auto& m : kMethods)
    if (m.is_default) out.emplace_back(m.name);
  return out;
}

MemoryPlan reorder_for_peak_memory(const Graph& g, const Order& input, const std::vector<std::string>& methods,
                                   InvalidOrderPolicy on_invalid) {
  if (methods.empty()) throw OptionError("memory methods: the list is empty");
  std::vector<const MemoryMethod*> chosen;
  for (const auto& name : methods) {
    const MemoryMethod* m = find_memory_method(name);
    if (!m) {
      std::string known;
      for (const auto& k : kMethods) known += (known.empty() ? "" : ", ") + std::string(k.name);
      throw OptionError("memory methods: unknown method \"" + name + "\" (known: " + known + ")");
    }
    chosen.push_back(m);
  }
  MemoryPlan plan;
  plan.info = std::make_shared<const MemoryPlanningInfo>(compute_planning_info(g, input));
  const MemoryPlanningInfo& info = *plan.info;
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
