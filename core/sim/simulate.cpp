#include "core/sim/simulate.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/util/error.h"

namespace schedlab {

Simulation simulate_two_streams(const Graph& g, const Order& order, const std::vector<double>& runtime_us) {
  return simulate_two_streams(g, order, runtime_us, LaunchModel{});
}

Simulation simulate_two_streams(const Graph& g, const Order& order, const std::vector<double>& runtime_us, const LaunchModel& launch) {
  return simulate_two_streams(g, make_simulation_graph(g), order, runtime_us, launch);
}

SimulationGraph make_simulation_graph(const Graph& g) {
  SimulationGraph sg;
  sg.is_collective.assign(g.nodes.size(), 0);
  std::vector<std::pair<std::int32_t, std::int32_t>> inputs;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    sg.is_collective[v] = g.nodes[v].kind == NodeKind::Collective;
    for (const Dep& d : g.nodes[v].reads) {
      if (d.kind == DepKind::FakeWeak) continue;
      const NodeId p = g.buffers[d.buf].producer;
      if (p != kNone && g.nodes[p].kind == NodeKind::Collective) inputs.emplace_back(v, p);
    }
  }
  sg.collective_inputs = Adjacency::from_pairs(g.num_nodes(), inputs);
  return sg;
}

Simulation simulate_two_streams(const Graph& g, const SimulationGraph& sg, const Order& order, const std::vector<double>& runtime_us,
                                const LaunchModel& launch) {
  const std::int32_t n = g.num_nodes();
  const bool has_host = !launch.host_us.empty() || !launch.gap_us.empty();
  if (has_host && (launch.host_us.size() != runtime_us.size() || launch.gap_us.size() != runtime_us.size()))
    throw Error("simulation: the launch model does not match the graph's nodes");
  if (static_cast<std::int32_t>(runtime_us.size()) != n)
    throw Error("simulation: " + std::to_string(runtime_us.size()) + " runtimes for " + std::to_string(n) + " nodes");
  if (static_cast<std::int32_t>(order.size()) != n) throw Error("simulation: the order does not hold every node once");
  std::vector<std::uint8_t> seen(n, 0);
  for (NodeId v : order) {
    if (v < 0 || v >= n || seen[v]) throw Error("simulation: the order does not hold every node once");
    seen[v] = 1;
    if (!std::isfinite(runtime_us[v]) || runtime_us[v] < 0)
      throw Error("simulation: node \"" + g.nodes[v].name + "\": runtime is not a finite number of microseconds");
  }
  Simulation sim;
  std::vector<std::int32_t> timing_of(n, -1);  // node -> index into sim.collectives
  double compute_clock = 0, comm_free = 0;
  double host_clock = has_host ? launch.host_call_us : 0;
  sim.host_busy_us = host_clock;
  auto join = [&](std::int32_t c, NodeId blocker) {
    CollectiveTiming& ct = sim.collectives[c];
    if (ct.blocked != kNone) return;
    ct.blocked = blocker;
    if (ct.end_us > compute_clock) {
      ct.exposed_us = ct.end_us - compute_clock;
      compute_clock = ct.end_us;
    }
  };
  sim.spans.reserve(order.size());
  std::vector<std::int32_t> blocking;
  for (NodeId v : order) {
    const double rt = runtime_us[v];
    if (has_host) {
      host_clock += launch.host_us[v];
      sim.host_busy_us += launch.host_us[v];
    }
    if (sg.is_collective[v]) {
      CollectiveTiming ct;
      ct.collective = v;
      ct.issue_us = std::max(compute_clock, host_clock);
      ct.start_us = std::max(compute_clock, comm_free);
      ct.end_us = ct.start_us + rt;
      comm_free = ct.end_us;
      timing_of[v] = static_cast<std::int32_t>(sim.collectives.size());
      sim.collectives.push_back(ct);
      sim.spans.push_back({v, ct.start_us, ct.end_us, true});
      sim.comm_busy_us += rt;
      continue;
    }
    // Block on every running collective whose output this node reads, the
    // earliest-ending first so each stall is charged to the one that caused it.
    blocking.clear();
    for (NodeId p : sg.collective_inputs.row(v))
      if (timing_of[p] >= 0 && sim.collectives[timing_of[p]].blocked == kNone) blocking.push_back(timing_of[p]);
    std::sort(blocking.begin(), blocking.end(),
              [&](std::int32_t a, std::int32_t b) { return sim.collectives[a].end_us < sim.collectives[b].end_us; });
    for (std::int32_t c : blocking) join(c, v);
    // The kernel waits for its launch; the launch gap follows the previous kernel.
    if (has_host) compute_clock = std::max(compute_clock, host_clock) + launch.gap_us[v];
    sim.spans.push_back({v, compute_clock, compute_clock + rt, false});
    compute_clock += rt;
    sim.compute_busy_us += rt;
  }
  // Collectives nobody waited on expose what runs past the compute stream.
  std::vector<std::int32_t> open;
  for (std::int32_t c = 0; c < static_cast<std::int32_t>(sim.collectives.size()); ++c)
    if (sim.collectives[c].blocked == kNone) open.push_back(c);
  for (std::int32_t c : open) {
    CollectiveTiming& ct = sim.collectives[c];
    if (ct.end_us > compute_clock) {
      ct.exposed_us = ct.end_us - compute_clock;
      compute_clock = ct.end_us;
    }
  }
  sim.step_time_us = std::max({compute_clock, comm_free, host_clock});
  // Finite runtimes can still sum past the largest double.
  if (!std::isfinite(sim.step_time_us) || !std::isfinite(sim.comm_busy_us) || !std::isfinite(sim.compute_busy_us))
    throw Error("simulation: the runtimes sum to more than a finite number of microseconds");
  sim.compute_idle_us = sim.step_time_us - sim.compute_busy_us;
  for (const auto& ct : sim.collectives) sim.exposed_comm_us += ct.exposed_us;
  return sim;
}

}  // namespace schedlab
