// core/comms/in_flight — collectives in flight along an order (XLA's
// latency-hiding scheduler's per-kind limits, Inductor's max_in_flight_gb).
//
// A collective is in flight from its step to the step of its wait: the
// first node of the order with a data dependency on its output, as the
// simulation blocks on it (core/sim); one nobody reads stays in flight to
// the end. Its bytes are its payload (core/cost collective_payload: the
// output bytes).
#pragma once

#include <array>
#include <cstdint>

#include "core/comms/comm_graph.h"

namespace schedlab {

struct CommKnobs;

// The kinds a limit is kept per: all-gather, reduce-scatter, all-reduce,
// and every other kind together.
enum class InFlightKind : std::uint8_t { AllGather, ReduceScatter, AllReduce, Other };
constexpr std::size_t kInFlightKinds = 4;
InFlightKind in_flight_kind(const Graph& g, NodeId collective);

struct InFlightLimits {
  std::array<std::int32_t, kInFlightKinds> count = {-1, -1, -1, -1};  // per kind; -1: no limit
  std::int64_t bytes = -1;                                             // all kinds together; -1: no cap
  bool any() const;
  // The knobs' limits (overlap_schedule_max_in_flight_*).
  static InFlightLimits from_knobs(const CommKnobs& k);
  // Each kind's count limit at most `max_count` (-1: unchanged).
  InFlightLimits at_most(std::int32_t max_count) const;
};

// The most collectives of each kind, and the most bytes, in flight at any
// step of `order` (counted after each step runs).
struct InFlightPeak {
  std::array<std::int32_t, kInFlightKinds> count = {0, 0, 0, 0};
  std::int64_t bytes = 0;
  bool within(const InFlightLimits& limits) const;
};
InFlightPeak max_in_flight(const CommGraph& cg, const Order& order);

}  // namespace schedlab
