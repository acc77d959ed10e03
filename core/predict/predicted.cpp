// The `predicted` figures: calibrated times through the three-resource
// simulation, memory as executed through the caching allocator.
#include "core/predict/predicted.h"

#include <algorithm>
#include <cstdio>

#include "core/cost/kernel_class.h"

namespace schedlab {


std::vector<int> fresh_allocations_per_node(const Graph& g, const ExecutedMemory& executed) {
  std::vector<int> out(g.nodes.size(), 0);
  for (const ExecutedEvent& e : executed.events)
    if (e.kind == ExecutedEvent::Kind::Allocate && e.buf != kNone && e.at != kNone) ++out[e.at];
  return out;
}

LaunchModel launch_path(const Graph& g, const Pricing& p, bool cudagraphs, const ExecutedMemory* executed) {
  LaunchModel m;
  const LaunchCosts& costs = p.launch;
  if (costs.empty()) return m;
  if (cudagraphs) {
    m.host_us.assign(g.nodes.size(), 0.0);
    m.gap_us = costs.cudagraph_gap_us;
    return m;
  }
  m.host_us = costs.host_us;
  m.gap_us = costs.gap_us;
  m.host_waits = costs.host_waits;
  m.host_call_us = costs.host_call_us;
  m.host_call_epilogue_us = costs.host_call_epilogue_us;
  if (executed && costs.host_us_per_allocation > 0) {
    const std::vector<int> fresh = fresh_allocations_per_node(g, *executed);
    for (NodeId v = 0; v < g.num_nodes(); ++v)
      if (fresh[v] > 0) m.host_us[v] = costs.host_us_per_allocation * fresh[v] + m.host_us[v];
  }
  return m;
}

ContentionModel contention_model(const Pricing& p) {
  if (p.simulated != SimulatedTimes::Calibrated) return {};
  return {p.contention, p.beside_wait_us};
}

double default_mode_wall_us(const Graph& g, const Order& order, const Pricing& p, const ExecutedMemory& executed) {
  return simulate_two_streams(g, order, p.calibrated_us, launch_path(g, p, false, &executed), contention_model(p)).step_time_us;
}

Prediction predict(const Graph& g, const Order& order, const Pricing& pricing, ExecutedMemory executed, double default_mode_wall_us) {
  Prediction p;
  p.hardware = pricing.hardware;
  p.runtime_source = pricing.model;
  p.host_probe_us = pricing.host_probe_us;
  const std::vector<double>& us = pricing.calibrated_us;
  double inductor = 0;
  bool inductor_complete = true;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.nodes[v];
    const KernelClass c = pricing.classes[v];
    if (c == KernelClass::None || (c == KernelClass::Collective && !pricing.price_collectives)) continue;
    p.kernel_time_us = add_us(p.kernel_time_us, us[v], "kernel time");
    p.class_time_us[c] += us[v];
    if (n.runtime_us) inductor = add_us(inductor, *n.runtime_us, "Inductor's kernel time");
    else inductor_complete = false;
  }
  if (inductor_complete) p.inductor_kernel_time_us = inductor;
  p.memory = std::move(executed);
  p.wall_time_us = default_mode_wall_us;
  p.wall_time_us_cudagraphs = simulate_two_streams(g, order, us, launch_path(g, pricing, true), contention_model(pricing)).step_time_us;
  p.peak_bytes = p.memory.peak_bytes;
  p.reserved_bytes = p.memory.reserved_bytes;
  return p;
}

Prediction predict(const Graph& g, const Order& order, const HardwareProfile& hw, const std::map<std::string, std::int64_t>& observed_bytes,
                   bool price_collectives) {
  const Pricing pricing = price_graph(g, hw, {.price_collectives = price_collectives});
  ExecutedMemory executed = estimate_memory_as_executed(g, order, observed_bytes);
  const double wall = default_mode_wall_us(g, order, pricing, executed);
  return predict(g, order, pricing, std::move(executed), wall);
}

std::string prediction_to_text(const Prediction& p) {
  char line[512];
  std::string out;
  std::snprintf(line, sizeof line, "predicted on %s (%s model", p.hardware.c_str(), p.runtime_source.c_str());
  out += line;
  if (p.host_probe_us > 0) {
    std::snprintf(line, sizeof line, ", host probe %.1f us", p.host_probe_us);
    out += line;
  }
  std::snprintf(line, sizeof line, "): kernel time %.1f us, wall %.1f us (CUDA graphs %.1f us)", p.kernel_time_us, p.wall_time_us,
                p.wall_time_us_cudagraphs);
  out += line;
  if (p.inductor_kernel_time_us) {
    std::snprintf(line, sizeof line, "; Inductor's estimate (runtime_us) %.1f us", *p.inductor_kernel_time_us);
    out += line;
  }
  std::snprintf(line, sizeof line, "\npredicted memory as executed: peak %lld bytes, reserved %lld bytes (%d in-place reuses, %d pool reuses",
                static_cast<long long>(p.peak_bytes), static_cast<long long>(p.reserved_bytes), p.memory.inplace_reuses, p.memory.pool_reuses);
  out += line;
  const auto observed = std::count_if(p.memory.workspaces.begin(), p.memory.workspaces.end(),
                                      [](const KernelWorkspace& ws) { return ws.source == WorkspaceSource::Observed; });
  if (!p.memory.workspaces.empty()) {
    std::snprintf(line, sizeof line, "; kernel workspaces: %lld observed, %lld by rule", static_cast<long long>(observed),
                  static_cast<long long>(p.memory.workspaces.size()) - static_cast<long long>(observed));
    out += line;
  }
  out += ")\n";
  return out;
}

}  // namespace schedlab
