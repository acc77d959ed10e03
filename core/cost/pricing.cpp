// A graph priced once: per-node times for the comm passes and the reports,
// and the order-independent part of the calibrated launch path.
#include "core/cost/pricing.h"

#include <algorithm>

#include "core/cost/law_features.h"
#include "core/cost/time_model.h"

namespace schedlab {
namespace {

// Per node, what the host's wrapper costs (its host terms' counts,
// core/cost/host_terms.def, priced) and the gaps the device leaves, per
// kernel the node's class launches.
LaunchCosts launch_costs(const Graph& g, const std::vector<KernelClass>& classes, const std::vector<KernelClass>& kernel_classes,
                         const TimeModel& tm, bool fake_collectives,
                         const std::optional<CollectiveTimes>& measured_collectives) {
  LaunchCosts l;
  const std::size_t n = g.nodes.size();
  l.host_us.assign(n, 0.0);
  l.gap_us.assign(n, 0.0);
  l.cudagraph_gap_us.assign(n, 0.0);
  l.host_waits.assign(n, 0);
  l.host_call_us = host_us(tm, call_host_counts(g));
  l.host_call_epilogue_us = tm.host_call_epilogue_us;  // LaunchModel keeps it within host_call_us
  l.host_us_per_allocation = tm.host_us_per_allocation;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const KernelClass c = classes[v];
    const Node& node = g.nodes[v];
    l.host_waits[v] = reads_back_to_host(node) ? 1 : 0;
    l.host_us[v] = host_us(tm, node_host_counts(node, c, fake_collectives ? fake_collective_kernels(node) : 0));
    // A collective on a real NCCL group costs the host what the profile's
    // sweep measured, where it has one (the fitted host terms come from the
    // zoo's fake process group).
    if (c == KernelClass::Collective && !fake_collectives && measured_collectives && measured_collectives->host_us_per_issue > 0)
      l.host_us[v] = measured_collectives->host_us_per_issue;
    if (c == KernelClass::None) continue;
    const double kernels = class_needs_law(c) ? law_of(tm, kernel_classes[v]).kernels_per_node : 1.0;
    l.gap_us[v] = kernels * tm.launch_gap_us;
    l.cudagraph_gap_us[v] = kernels * tm.cudagraph_gap_us;
  }
  return l;
}

// Per node, a collective's extra wait when it starts beside a kernel
// (Pricing::beside_wait_us): the profile's measured figure for collectives
// that stay inside one node, whose curves price them.
std::vector<double> beside_waits(const Graph& g, const HardwareProfile& hw) {
  std::vector<double> out(g.nodes.size(), 0.0);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.nodes[v];
    if (n.kind != NodeKind::Collective) continue;
    const Collective& c = *n.collective;
    const std::int64_t bytes = collective_payload(g, n).bytes;
    if (!estimate_collective_algorithms(c.kind, bytes, c.group_size, g.world_size, hw).crosses_nodes)
      out[v] = peer_wait_beside_us(*hw.collective_times, c.kind, c.group_size);
  }
  return out;
}

}  // namespace

int fake_collective_kernels(const Node& n) {
  if (!n.collective || n.collective->kind != CollectiveOp::AllGather) return 0;
  return static_cast<int>(std::min<std::int64_t>(n.collective->group_size, 1 << 20));
}

Pricing price_graph(const Graph& g, const HardwareProfile& hw, const PricingOptions& opts) {
  Pricing p;
  p.hardware = hw.name;
  p.model = hw.time_model ? "calibrated" : "roofline";
  p.host_probe_us = hw.time_model ? hw.time_model->host_probe_us : 0.0;
  p.simulated = opts.simulated;
  p.price_collectives = opts.price_collectives;
  const std::size_t n = g.nodes.size();
  p.classes.resize(n);
  p.kernel_classes.resize(n);
  p.pass_us.resize(n);
  p.pass_sources.resize(n);
  p.calibrated_us.resize(n);
  const CostFacts facts = cost_facts(g);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const KernelClass kernel = classify_kernel(g, g.nodes[v]);
    const KernelClass c = base_class(kernel);
    p.classes[v] = c;
    p.kernel_classes[v] = kernel;
    const RuntimeEstimate e = estimate_node_runtime(g, v, hw, opts.use_graph_runtimes);
    p.pass_us[v] = e.us;
    p.pass_sources[v] = e.source;
    p.calibrated_us[v] = !opts.price_collectives && c == KernelClass::Collective ? 0.0 : calibrated_node_runtime(g, v, kernel, facts, hw).us;
  }
  if (hw.time_model)
    for (std::size_t c = 0; c < kKernelClasses; ++c) p.law_classes.push_back(law_class(*hw.time_model, static_cast<KernelClass>(c)));
  if (hw.time_model) p.launch = launch_costs(g, p.classes, p.kernel_classes, *hw.time_model, !opts.price_collectives, hw.collective_times);
  // Collectives that take no time contend with nothing.
  if (hw.contention && opts.price_collectives) {
    p.contention.resize(n);
    for (NodeId v = 0; v < g.num_nodes(); ++v) p.contention[v] = contention_share(*hw.contention, p.classes[v]);
    if (hw.collective_times && !hw.collective_times->peer_wait_beside_us.empty()) p.beside_wait_us = beside_waits(g, hw);
  }
  return p;
}

}  // namespace schedlab
