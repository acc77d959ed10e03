// The `predicted` figures: calibrated times through the three-resource
// simulation, memory as executed through the caching allocator.
#include "core/predict/predicted.h"

#include <algorithm>
#include <cstdio>

#include "core/cost/kernel_class.h"

namespace schedlab {


int fake_collective_kernels(const Node& n) {
  if (!n.collective || n.collective->kind != CollectiveOp::AllGather) return 0;
  return static_cast<int>(std::min<std::int64_t>(n.collective->group_size, 1 << 20));
}

std::vector<int> fresh_allocations_per_node(const Graph& g, const ExecutedMemory& executed) {
  std::vector<int> out(g.nodes.size(), 0);
  for (const ExecutedEvent& e : executed.events)
    if (e.kind == ExecutedEvent::Kind::Allocate && e.buf != kNone && e.at != kNone) ++out[e.at];
  return out;
}

LaunchModel launch_model(const Graph& g, const HardwareProfile& hw, bool cudagraphs, bool fake_collectives, const ExecutedMemory* executed) {
  LaunchModel m;
  if (!hw.time_model) return m;
  const TimeModel& tm = *hw.time_model;
  m.host_us.assign(g.nodes.size(), 0.0);
  m.gap_us.assign(g.nodes.size(), 0.0);
  m.host_call_us = cudagraphs ? 0.0 : tm.host_call_us + tm.host_us_per_input * static_cast<double>(g.num_inputs);
  if (!cudagraphs && executed && tm.host_us_per_allocation > 0) {
    const std::vector<int> fresh = fresh_allocations_per_node(g, *executed);
    for (NodeId v = 0; v < g.num_nodes(); ++v) m.host_us[v] += tm.host_us_per_allocation * fresh[v];
  }
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const KernelClass c = classify_node(g, g.nodes[v]);
    if (c == KernelClass::None) {
      // An item of a multi-output result launches nothing; the wrapper's
      // statement for it costs the host (waits and nops nothing).
      if (!cudagraphs && is_item_node(g, g.nodes[v])) m.host_us[v] += tm.host_us_per_item;
      continue;
    }
    const double kernels = class_needs_law(c) ? tm.laws.at(c).kernels_per_node : 1.0;
    // A collective on a real NCCL group costs the host what the profile's
    // sweep measured, where it has one.
    const bool real_collective = c == KernelClass::Collective && !fake_collectives && hw.collective_times &&
                                 hw.collective_times->host_us_per_issue > 0;
    if (!cudagraphs) m.host_us[v] += real_collective ? hw.collective_times->host_us_per_issue : host_us_per_node(tm, c);
    if (!cudagraphs && fake_collectives && c == KernelClass::Collective)
      m.host_us[v] += fake_collective_kernels(g.nodes[v]) * tm.host_us_per_collective_kernel;
    m.gap_us[v] = kernels * (cudagraphs ? tm.cudagraph_gap_us : tm.launch_gap_us);
  }
  return m;
}

ContentionModel contention_model(const Graph& g, const HardwareProfile& hw) {
  ContentionModel m;
  if (!hw.contention) return m;
  m.comm_slowdown.assign(g.nodes.size(), 1.0);
  m.compute_slowdown.assign(g.nodes.size(), 1.0);
  m.comm_start_fraction.assign(g.nodes.size(), 0.0);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const ContentionShare share = contention_share(*hw.contention, classify_node(g, g.nodes[v]));
    m.comm_slowdown[v] = share.comm_slowdown;
    m.compute_slowdown[v] = share.compute_slowdown;
    m.comm_start_fraction[v] = share.start_fraction;
  }
  return m;
}

namespace {

// predict's figures for runtimes `us` (calibrated; unpriced collectives
// already zeroed).
Prediction predict_from_runtimes(const Graph& g, const Order& order, const HardwareProfile& hw, const std::vector<double>& us,
                                 std::optional<double> default_mode_wall_us, const std::map<std::string, std::int64_t>& observed_bytes,
                                 bool price_collectives, const PeakMemoryEstimate* scheduler_estimate,
                                 const ExecutedMemory* executed) {
  Prediction p;
  p.hardware = hw.name;
  p.runtime_source = hw.time_model ? "calibrated" : "roofline";
  p.host_probe_us = hw.time_model ? hw.time_model->host_probe_us : 0.0;
  double inductor = 0;
  bool inductor_complete = true;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.nodes[v];
    const KernelClass c = classify_node(g, n);
    if (c == KernelClass::None || (c == KernelClass::Collective && !price_collectives)) continue;
    p.kernel_time_us = add_us(p.kernel_time_us, us[v], "kernel time");
    p.class_time_us[c] += us[v];
    if (n.runtime_us) inductor = add_us(inductor, *n.runtime_us, "Inductor's kernel time");
    else inductor_complete = false;
  }
  if (inductor_complete) p.inductor_kernel_time_us = inductor;
  p.memory = executed ? *executed : estimate_memory_as_executed(g, order, observed_bytes, scheduler_estimate);
  // Collectives that take no time contend with nothing.
  const ContentionModel contention = price_collectives ? contention_model(g, hw) : ContentionModel{};
  p.wall_time_us = default_mode_wall_us
                       ? *default_mode_wall_us
                       : simulate_two_streams(g, order, us, launch_model(g, hw, false, !price_collectives, &p.memory), contention).step_time_us;
  p.wall_time_us_cudagraphs = simulate_two_streams(g, order, us, launch_model(g, hw, true, !price_collectives), contention).step_time_us;
  p.peak_bytes = p.memory.peak_bytes;
  p.reserved_bytes = p.memory.reserved_bytes;
  return p;
}

}  // namespace

Prediction predict(const Graph& g, const Order& order, const HardwareProfile& hw, const std::map<std::string, std::int64_t>& observed_bytes,
                   bool price_collectives) {
  std::vector<double> us = calibrated_runtimes_us(g, hw);
  if (!price_collectives)
    for (NodeId v = 0; v < g.num_nodes(); ++v)
      if (classify_node(g, g.nodes[v]) == KernelClass::Collective) us[v] = 0;
  return predict_from_runtimes(g, order, hw, us, std::nullopt, observed_bytes, price_collectives, nullptr, nullptr);
}

Prediction predict(const Graph& g, const Order& order, const HardwareProfile& hw, const std::vector<double>& calibrated_us,
                   std::optional<double> default_mode_wall_us, const PeakMemoryEstimate* scheduler_estimate,
                   const ExecutedMemory* executed) {
  return predict_from_runtimes(g, order, hw, calibrated_us, default_mode_wall_us, {}, true, scheduler_estimate, executed);
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
