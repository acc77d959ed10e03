// Inductor's _schedule_for_comm and the three passes built on it: a list
// scheduler over the ready set keyed by (lowest blocked collective, is a
// wait, input index). With `reorder_for_overlap`, each scheduled collective
// is followed by the best-ranked ready compute nodes until their runtimes
// cover its own.
#include <limits>
#include <set>
#include <tuple>

#include "core/comms/comm_ready_list.h"
#include "core/comms/passes.h"
#include "core/util/error.h"

namespace schedlab {

namespace {

struct ScheduleObjective {
  bool raise_comms = false;
  bool sink_waits = false;
  bool reorder_for_overlap = false;
};

// The ready set keyed by (score_0, score_1, score_2 = input index), and the
// part of it an overlapping candidate may come from (neither a collective
// nor a wait). Keys are unique (the index), so the min-heap of the reference
// and these ordered sets pop the same nodes. After a collective, with
// `reorder_for_overlap`, the best ready compute is picked until its runtimes
// cover the collective's.
class ScheduleForCommStrategy {
 public:
  ScheduleForCommStrategy(const CommGraph& cg, const Order& order, ScheduleObjective obj) : cg_(cg), obj_(obj), key_(cg.num_nodes()) {
    const std::int32_t n = cg.num_nodes();
    std::vector<std::int32_t> score0 = obj.raise_comms ? lowest_blocked_collective(cg, order)
                                                       : std::vector<std::int32_t>(n, std::numeric_limits<std::int32_t>::max());
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(order.size()); ++i) {
      const NodeId v = order[i];
      const std::int32_t score1 = obj.sink_waits && cg.is_wait(v) ? 1 : 0;
      key_[v] = {score0[v], score1, i, v};
    }
  }

  void release(NodeId v) {
    ready_.insert(key_[v]);
    if (!cg_.is_collective(v) && !cg_.is_wait(v)) ready_compute_.insert(key_[v]);
  }
  NodeId pick() {
    if (collective_cost_ > 0 && !ready_compute_.empty()) return std::get<3>(*ready_compute_.begin());
    collective_cost_ = 0;
    return ready_.empty() ? kNone : std::get<3>(*ready_.begin());
  }
  void scheduled(NodeId v) {
    ready_.erase(key_[v]);
    ready_compute_.erase(key_[v]);
    if (collective_cost_ > 0) collective_cost_ -= cg_.runtime_us[v];  // v covered part of the collective
    else if (obj_.reorder_for_overlap && cg_.is_collective(v)) collective_cost_ = cg_.runtime_us[v];
  }

 private:
  using Key = std::tuple<std::int32_t, std::int32_t, std::int32_t, NodeId>;  // score_0, score_1, score_2, node
  const CommGraph& cg_;
  ScheduleObjective obj_;
  std::vector<Key> key_;
  std::set<Key> ready_, ready_compute_;
  double collective_cost_ = 0;  // what is left of the last collective's runtime to cover
};

Order schedule_for_comm(const CommGraph& cg, const Order& order, ScheduleObjective obj) {
  const std::int32_t n = cg.num_nodes();
  ScheduleForCommStrategy strategy(cg, order, obj);
  Order scheduled = schedule_by_comm_deps(cg, order, strategy);
  if (static_cast<std::int32_t>(scheduled.size()) != n)
    throw Error("comm passes: " + std::to_string(n - static_cast<std::int32_t>(scheduled.size())) +
                " nodes can never run: their dependencies form a cycle");
  return scheduled;
}

}  // namespace

CommPassResult sink_waits(const CommGraph& cg, const Order& order, const CommKnobs&) {
  return {schedule_for_comm(cg, order, {.raise_comms = false, .sink_waits = true, .reorder_for_overlap = false}), {}, {}, -1, -1, {}};
}

CommPassResult raise_comms(const CommGraph& cg, const Order& order, const CommKnobs&) {
  return {schedule_for_comm(cg, order, {.raise_comms = true, .sink_waits = false, .reorder_for_overlap = false}), {}, {}, -1, -1, {}};
}

CommPassResult reorder_compute_for_overlap(const CommGraph& cg, const Order& order, const CommKnobs&) {
  return {schedule_for_comm(cg, order, {.raise_comms = true, .sink_waits = true, .reorder_for_overlap = true}), {}, {}, -1, -1, {}};
}

CommPassResult decide_global_ordering_of_comms(const CommGraph& cg, const Order& order, const CommKnobs&) {
  // Each collective gets a fake dep on every buffer of the previous one, so
  // that every rank issues them in this order.
  CommPassResult r;
  r.order = order;
  NodeId previous = kNone;
  for (NodeId v : order) {
    if (!cg.is_collective(v)) continue;
    if (previous != kNone)
      for (BufId b : cg.graph->nodes[previous].outputs) r.added_fake_deps.push_back({v, b});
    previous = v;
  }
  return r;
}

}  // namespace schedlab
