#include "core/sim/simulate.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/util/error.h"

namespace schedlab {

using nlohmann::json;

Simulation simulate_two_streams(const Graph& g, const Order& order, const std::vector<double>& runtime_us) {
  return simulate_two_streams(g, order, runtime_us, LaunchModel{});
}

Simulation simulate_two_streams(const Graph& g, const Order& order, const std::vector<double>& runtime_us, const LaunchModel& launch) {
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
  for (NodeId v : order) {
    const Node& node = g.nodes[v];
    const double rt = runtime_us[v];
    if (has_host) {
      host_clock += launch.host_us[v];
      sim.host_busy_us += launch.host_us[v];
    }
    if (node.kind == NodeKind::Collective) {
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
    std::vector<std::int32_t> blocking;
    for (const Dep& d : node.reads) {
      if (d.kind == DepKind::FakeWeak) continue;
      NodeId p = g.buffers[d.buf].producer;
      if (p != kNone && timing_of[p] >= 0 && sim.collectives[timing_of[p]].blocked == kNone) blocking.push_back(timing_of[p]);
    }
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

namespace {

std::int64_t output_bytes(const Graph& g, const Node& node) {
  std::int64_t sum = 0;
  for (BufId b : node.outputs) sum += g.buffers[b].bytes;
  return sum;
}

}  // namespace

json chrome_trace(const Graph& g, const Simulation& sim) {
  constexpr int kPid = 1, kComputeLane = 1, kCommLane = 2;
  json events = json::array();
  const std::string process = "schedlab " + (g.name.empty() ? std::string("graph") : g.name);
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"args", {{"name", process}}}});
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", kComputeLane}, {"args", {{"name", "compute"}}}});
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", kCommLane}, {"args", {{"name", "comm"}}}});
  events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", kPid}, {"tid", kComputeLane}, {"args", {{"sort_index", 0}}}});
  events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", kPid}, {"tid", kCommLane}, {"args", {{"sort_index", 1}}}});
  std::vector<std::int32_t> timing_of(g.nodes.size(), -1);
  for (std::int32_t c = 0; c < static_cast<std::int32_t>(sim.collectives.size()); ++c) timing_of[sim.collectives[c].collective] = c;
  for (const auto& s : sim.spans) {
    const Node& node = g.nodes[s.node];
    json args = {{"kind", std::string(to_string(node.kind))}, {"output_bytes", output_bytes(g, node)}};
    if (!node.kernel.empty()) args["kernel"] = node.kernel;
    if (node.collective) {
      const CollectiveTiming& ct = sim.collectives[timing_of[s.node]];
      args["collective"] = std::string(to_string(node.collective->kind));
      args["payload_bytes"] = node.collective->bytes;
      args["group_size"] = node.collective->group_size;
      args["issued_us"] = ct.issue_us;
      args["exposed_us"] = ct.exposed_us;
      if (ct.blocked != kNone) args["waited_by"] = g.nodes[ct.blocked].name;
    }
    events.push_back({{"name", node.name},
                      {"cat", s.on_comm_stream ? "comm" : "compute"},
                      {"ph", "X"},
                      {"pid", kPid},
                      {"tid", s.on_comm_stream ? kCommLane : kComputeLane},
                      {"ts", s.start_us},
                      {"dur", s.end_us - s.start_us},
                      {"args", args}});
  }
  for (const auto& ct : sim.collectives) {
    if (ct.exposed_us <= 0) continue;
    events.push_back({{"name", "exposed " + g.nodes[ct.collective].name},
                      {"cat", "exposed"},
                      {"ph", "X"},
                      {"pid", kPid},
                      {"tid", kComputeLane},
                      {"ts", ct.end_us - ct.exposed_us},
                      {"dur", ct.exposed_us},
                      {"args", {{"collective", g.nodes[ct.collective].name}, {"payload_bytes", g.nodes[ct.collective].collective->bytes}}}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", {{"generator", "schedlab simulate"}, {"step_time_us", sim.step_time_us}}}};
}

json simulation_to_json(const Graph& g, const Simulation& sim) {
  json colls = json::array();
  for (const auto& ct : sim.collectives) {
    json c = {{"collective", g.nodes[ct.collective].name}, {"issue_us", ct.issue_us}, {"start_us", ct.start_us},
              {"end_us", ct.end_us}, {"exposed_us", ct.exposed_us}};
    c["waited_by"] = ct.blocked == kNone ? json(nullptr) : json(g.nodes[ct.blocked].name);
    colls.push_back(std::move(c));
  }
  return {{"step_time_us", sim.step_time_us}, {"compute_busy_us", sim.compute_busy_us}, {"compute_idle_us", sim.compute_idle_us},
          {"comm_busy_us", sim.comm_busy_us}, {"exposed_comm_us", sim.exposed_comm_us}, {"collectives", colls}};
}

json chrome_trace(const Graph& g, const Simulation& sim, const std::vector<std::int64_t>& memory_curve) {
  if (memory_curve.size() != sim.spans.size() + 1)
    throw Error("trace: " + std::to_string(memory_curve.size()) + " memory samples for " + std::to_string(sim.spans.size()) + " steps");
  constexpr int kPid = 1, kComputeLane = 1, kCommLane = 2;
  json trace = chrome_trace(g, sim);
  json& events = trace["traceEvents"];
  std::vector<std::int32_t> timing_of(g.nodes.size(), -1);
  for (std::int32_t c = 0; c < static_cast<std::int32_t>(sim.collectives.size()); ++c) timing_of[sim.collectives[c].collective] = c;
  std::vector<double> start_of(g.nodes.size(), 0.0);
  for (std::size_t step = 0; step < sim.spans.size(); ++step) {
    const StreamSpan& s = sim.spans[step];
    start_of[s.node] = s.start_us;
    // A collective's step happens when it is issued on the compute stream,
    // so the samples stay in time order.
    const double ts = s.on_comm_stream ? sim.collectives[timing_of[s.node]].issue_us : s.start_us;
    events.push_back({{"name", "memory"}, {"ph", "C"}, {"pid", kPid}, {"ts", ts}, {"args", {{"bytes", memory_curve[step]}}}});
  }
  events.push_back({{"name", "memory"}, {"ph", "C"}, {"pid", kPid}, {"ts", sim.step_time_us}, {"args", {{"bytes", memory_curve.back()}}}});
  for (std::int32_t c = 0; c < static_cast<std::int32_t>(sim.collectives.size()); ++c) {
    const CollectiveTiming& ct = sim.collectives[c];
    if (ct.blocked == kNone) continue;
    const std::string name = "wait " + g.nodes[ct.collective].name;
    events.push_back({{"name", name}, {"cat", "flow"}, {"ph", "s"}, {"id", c}, {"pid", kPid}, {"tid", kCommLane}, {"ts", ct.start_us}});
    events.push_back({{"name", name}, {"cat", "flow"}, {"ph", "f"}, {"bp", "e"}, {"id", c}, {"pid", kPid}, {"tid", kComputeLane},
                      {"ts", start_of[ct.blocked]}});
  }
  return trace;
}

}  // namespace schedlab
