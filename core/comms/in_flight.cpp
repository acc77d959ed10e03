#include "core/comms/in_flight.h"

#include <algorithm>

#include "core/comms/passes.h"
#include "core/cost/cost_model.h"

namespace schedlab {

InFlightKind in_flight_kind(const Graph& g, NodeId collective) {
  const Node& n = g.nodes[collective];
  if (!n.collective) return InFlightKind::Other;
  switch (n.collective->kind) {
    case CollectiveOp::AllGather: return InFlightKind::AllGather;
    case CollectiveOp::ReduceScatter: return InFlightKind::ReduceScatter;
    case CollectiveOp::AllReduce: return InFlightKind::AllReduce;
    default: return InFlightKind::Other;
  }
}

bool InFlightLimits::any() const {
  return bytes >= 0 || std::any_of(count.begin(), count.end(), [](std::int32_t c) { return c >= 0; });
}

InFlightLimits InFlightLimits::from_knobs(const CommKnobs& k) {
  InFlightLimits out;
  out.count = {k.overlap_schedule_max_in_flight_all_gather, k.overlap_schedule_max_in_flight_reduce_scatter,
               k.overlap_schedule_max_in_flight_all_reduce, k.overlap_schedule_max_in_flight_other};
  if (k.overlap_schedule_max_in_flight_mib >= 0) out.bytes = static_cast<std::int64_t>(k.overlap_schedule_max_in_flight_mib) << 20;
  return out;
}

InFlightLimits InFlightLimits::at_most(std::int32_t max_count) const {
  InFlightLimits out = *this;
  if (max_count < 0) return out;
  for (std::int32_t& c : out.count) c = c < 0 ? max_count : std::min(c, max_count);
  return out;
}

bool InFlightPeak::within(const InFlightLimits& limits) const {
  for (std::size_t kind = 0; kind < kInFlightKinds; ++kind)
    if (limits.count[kind] >= 0 && count[kind] > limits.count[kind]) return false;
  return limits.bytes < 0 || bytes <= limits.bytes;
}

InFlightPeak max_in_flight(const CommGraph& cg, const Order& order) {
  const Graph& g = *cg.graph;
  std::vector<std::uint8_t> in_flight(static_cast<std::size_t>(cg.num_nodes()), 0);
  std::array<std::int32_t, kInFlightKinds> count{};
  std::int64_t bytes = 0;
  InFlightPeak peak;
  for (NodeId v : order) {
    for (BufId b : cg.data_bufs.row(v)) {  // v is the wait of every collective in flight it reads
      const NodeId c = cg.producer(b);
      if (!cg.is_collective(c) || !in_flight[c]) continue;
      in_flight[c] = 0;
      --count[static_cast<std::size_t>(in_flight_kind(g, c))];
      bytes -= collective_payload(g, g.nodes[c]).bytes;
    }
    if (cg.is_collective(v)) {
      in_flight[v] = 1;
      const auto kind = static_cast<std::size_t>(in_flight_kind(g, v));
      peak.count[kind] = std::max(peak.count[kind], ++count[kind]);
      bytes += collective_payload(g, g.nodes[v]).bytes;
      peak.bytes = std::max(peak.bytes, bytes);
    }
  }
  return peak;
}

}  // namespace schedlab
