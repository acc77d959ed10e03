// Inductor's _schedule_for_comm and the three passes built on it: a list
// scheduler over the ready set keyed by (lowest blocked collective, is a
// wait, input index). With `reorder_for_overlap`, each scheduled collective
// is followed by the best-ranked ready compute nodes until their runtimes
// cover its own.
#include <limits>
#include <set>
#include <tuple>

#include "core/comms/passes.h"
#include "core/util/error.h"

namespace schedlab {

namespace {

struct ScheduleObjective {
  bool raise_comms = false;
  bool sink_waits = false;
  bool reorder_for_overlap = false;
};

Order schedule_for_comm(const CommGraph& cg, const Order& order, ScheduleObjective obj) {
  const std::int32_t n = cg.num_nodes();
  using Key = std::tuple<std::int32_t, std::int32_t, std::int32_t, NodeId>;  // score_0, score_1, score_2, node
  std::vector<Key> key(n);
  std::vector<std::int32_t> score0 = obj.raise_comms ? lowest_blocked_collective(cg, order)
                                                     : std::vector<std::int32_t>(n, std::numeric_limits<std::int32_t>::max());
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(order.size()); ++i) {
    NodeId v = order[i];
    std::int32_t score1 = obj.sink_waits && cg.is_wait(v) ? 1 : 0;
    key[v] = {score0[v], score1, i, v};
  }
  // The ready set, and the part of it an overlapping candidate may come from
  // (neither a collective nor a wait). Keys are unique (the index), so the
  // min-heap of the reference and these ordered sets pop the same nodes.
  std::set<Key> ready, ready_compute;
  std::vector<std::int32_t> remaining(n);
  auto make_ready = [&](NodeId v) {
    ready.insert(key[v]);
    if (!cg.is_collective(v) && !cg.is_wait(v)) ready_compute.insert(key[v]);
  };
  for (NodeId v : order) {
    remaining[v] = cg.unmet_bufs.degree(v);
    if (remaining[v] == 0) make_ready(v);
  }
  Order scheduled;
  scheduled.reserve(n);
  auto schedule = [&](NodeId v) {
    scheduled.push_back(v);
    for (BufId b : cg.graph->nodes[v].outputs)
      for (NodeId u : cg.buffer_users.row(b))
        if (--remaining[u] == 0) make_ready(u);
  };
  while (!ready.empty()) {
    NodeId v = std::get<3>(*ready.begin());
    ready.erase(ready.begin());
    ready_compute.erase(key[v]);
    schedule(v);
    if (obj.reorder_for_overlap && cg.is_collective(v)) {
      double collective_cost = cg.runtime_us[v];
      while (collective_cost > 0 && !ready_compute.empty()) {
        NodeId c = std::get<3>(*ready_compute.begin());
        ready_compute.erase(ready_compute.begin());
        ready.erase(key[c]);
        schedule(c);
        collective_cost -= cg.runtime_us[c];
      }
    }
  }
  if (static_cast<std::int32_t>(scheduled.size()) != n)
    throw Error("comm passes: " + std::to_string(n - static_cast<std::int32_t>(scheduled.size())) +
                " nodes can never run: their dependencies form a cycle");
  return scheduled;
}

}  // namespace

CommPassResult sink_waits(const CommGraph& cg, const Order& order, const CommKnobs&) {
  return {schedule_for_comm(cg, order, {.raise_comms = false, .sink_waits = true, .reorder_for_overlap = false}), {}, {}, -1, -1};
}

CommPassResult raise_comms(const CommGraph& cg, const Order& order, const CommKnobs&) {
  return {schedule_for_comm(cg, order, {.raise_comms = true, .sink_waits = false, .reorder_for_overlap = false}), {}, {}, -1, -1};
}

CommPassResult reorder_compute_for_overlap(const CommGraph& cg, const Order& order, const CommKnobs&) {
  return {schedule_for_comm(cg, order, {.raise_comms = true, .sink_waits = true, .reorder_for_overlap = true}), {}, {}, -1, -1};
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
