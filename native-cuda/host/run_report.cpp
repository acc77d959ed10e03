#include "native-cuda/host/run_report.h"

#include <map>

#include "core/util/error.h"

namespace schedlab::gpu {

double comparable_estimate_us(const Graph& g, NodeId v, const StandIn& s, const HardwareProfile& hw, std::int64_t collective_ranks) {
  if (s.kind == StandInKind::Collective) {
    const bool ran = collective_ranks > 1;
    return estimate_collective_us(s.op, s.collective_bytes, ran ? collective_ranks : s.group_size,
                                  ran ? collective_ranks : g.world_size, hw);
  }
  return estimate_node_runtime(g, v, hw, /*trust_graph_runtime=*/false).us;
}

nlohmann::json run_report_json(const Graph& g, const ExecutionSchedule& schedule, const std::vector<StandIn>& stand_ins,
                               const HardwareProfile& hw, std::int64_t estimated_peak_bytes, const RunMeasurements& m) {
  using nlohmann::json;
  if (m.steps.size() != schedule.steps.size()) throw Error("run report: measurements do not match the schedule's steps");
  struct Totals {
    int nodes = 0;
    double estimated_us = 0, measured_us = 0;
  };
  std::map<std::string, Totals> by_kind;  // executed nodes only, so the two sums compare
  double estimated_total = 0, measured_total = 0;
  json nodes = json::array();
  for (std::size_t t = 0; t < schedule.steps.size(); ++t) {
    const NodeId v = schedule.steps[t].node;
    const Node& node = g.nodes[v];
    const StandIn& s = stand_ins[v];
    const NodeMeasurement& nm = m.steps[t];
    const double est = comparable_estimate_us(g, v, s, hw, m.collective_ranks);
    estimated_total += est;
    json row = {{"step", t},
                {"name", node.name},
                {"kind", std::string(to_string(node.kind))},
                {"stand_in", std::string(to_string(s.kind))},
                {"stand_in_detail", s.why},
                {"estimated_us", est}};
    if (node.runtime_us) row["graph_runtime_us"] = *node.runtime_us;
    if (s.kind == StandInKind::Collective) {
      if (m.collective_ranks > 1 && m.collective_ranks != s.group_size)
        row["estimated_us_at_graph_group"] = estimate_collective_us(s.op, s.collective_bytes, s.group_size, g.world_size, hw);
      row["payload_bytes"] = s.collective_bytes;
      if (s.collective_bytes != node.collective->bytes) {
        // What core/cost alone estimates from the file's payload, for comparison.
        row["graph_payload_bytes"] = node.collective->bytes;
        row["estimated_us_from_graph_payload"] = estimate_node_runtime(g, v, hw, false).us;
      }
    }
    if (nm.executed) {
      row["measured_us"] = nm.us;
      if (est > 0) row["measured_over_estimated"] = nm.us / est;
      measured_total += nm.us;
      Totals& k = by_kind[std::string(to_string(s.kind))];
      k.nodes += 1;
      k.estimated_us += est;
      k.measured_us += nm.us;
    } else {
      row["measured_us"] = nullptr;
      if (!nm.not_executed.empty()) row["not_executed"] = nm.not_executed;
    }
    nodes.push_back(std::move(row));
  }
  json kinds = json::object();
  for (const auto& [kind, k] : by_kind)
    kinds[kind] = {{"nodes", k.nodes}, {"estimated_us", k.estimated_us}, {"measured_us", k.measured_us},
                   {"measured_over_estimated", k.estimated_us > 0 ? json(k.measured_us / k.estimated_us) : json(nullptr)}};
  json unbacked = json::array();
  for (const auto& u : schedule.unbacked)
    unbacked.push_back({{"buffer", g.buffers[u.buf].name}, {"size_alloc", u.size_alloc}, {"size_free", u.size_free}});
  return {
      {"format", "schedlab-gpu-run/1"},
      {"graph", g.name},
      {"device", m.device_name},
      {"device_count", m.device_count},
      {"collective_ranks", m.collective_ranks},
      {"graph_world_size", g.world_size},
      {"hardware_profile", hw.name},
      {"repetitions", m.repetitions},
      {"nodes", nodes},
      {"totals",
       {{"estimated_us", estimated_total},
        {"measured_us", measured_total},
        {"measured_wall_us", m.wall_us},
        {"by_stand_in", kinds}}},
      {"memory",
       {{"estimated_peak_bytes", estimated_peak_bytes},
        {"schedule_peak_bytes", schedule.peak_bytes},
        {"schedule_peak_step", schedule.peak_step},
        {"measured_live_peak_bytes", m.memory.live_peak_bytes},
        {"measured_live_peak_step", m.memory.live_peak_step},
        {"peaks_agree", m.memory.live_peak_bytes == estimated_peak_bytes},
        {"pool_used_high_bytes", m.memory.pool_used_high_bytes},
        {"pool_reserved_high_bytes", m.memory.pool_reserved_high_bytes},
        {"device_used_delta_bytes", m.memory.device_used_delta_bytes},
        {"blocks", schedule.blocks.size()},
        {"unbacked_buffers", unbacked}}},
  };
}

}  // namespace schedlab::gpu
