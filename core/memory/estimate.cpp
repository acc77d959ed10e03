#include "core/memory/estimate.h"

#include <algorithm>

#include "core/memory/memory_tracker.h"

namespace schedlab {
namespace {

std::vector<std::int32_t> steps_of(const Graph& g, const Order& order) {
  std::vector<std::int32_t> step(g.nodes.size(), -1);
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(order.size()); ++i) step[order[i]] = i;
  return step;
}

}  // namespace

std::vector<BufferLifetime> compute_memory_timeline(const Graph& g, const MemoryPlanningInfo& info, const Order& order) {
  const auto step = steps_of(g, order);
  const std::int32_t last = static_cast<std::int32_t>(order.size()) - 1;
  std::vector<BufferLifetime> out;
  auto last_reader = [&](BufId b, std::int32_t dflt) {
    std::int32_t e = dflt;
    for (auto s : info.buffer_succ_nodes.row(b)) e = std::max(e, step[s]);
    return e;
  };
  for (BufId b : info.freeable_inputs) {
    bool to_end = info.is_graph_output[b] != 0;
    out.push_back({b, info.size_alloc[b], info.size_free[b], 0, to_end ? last : last_reader(b, 0), to_end});
  }
  for (std::int32_t t = 0; t <= last; ++t) {
    for (BufId b : g.nodes[order[t]].outputs) {
      bool to_end = info.is_graph_output[b] != 0;
      out.push_back({b, info.size_alloc[b], info.size_free[b], t, to_end ? last : last_reader(b, t), to_end});
    }
  }
  return out;
}

PeakMemoryEstimate estimate_peak_memory(const Graph& g, const MemoryPlanningInfo& info, const Order& order) {
  const std::size_t n = order.size();
  std::vector<std::int64_t> delta(n + 1, 0);
  for (const auto& l : compute_memory_timeline(g, info, order)) {
    delta[static_cast<std::size_t>(l.start_step)] += l.size_alloc;
    delta[static_cast<std::size_t>(l.end_step) + 1] -= l.size_free;
  }
  PeakMemoryEstimate est;
  est.curve.resize(n + 1);
  std::int64_t cur = 0;
  for (std::size_t t = 0; t <= n; ++t) {
    cur += delta[t];
    est.curve[t] = cur;
    if (cur > est.peak) {
      est.peak = cur;
      est.peak_step = static_cast<std::int32_t>(t);
    }
  }
  return est;
}

AllocFreeEstimate estimate_peak_memory_allocfree(const Graph& g, const MemoryPlanningInfo& info, const Order& order) {
  const std::size_t n = order.size();
  AllocFreeEstimate est;
  est.last_use.assign(g.buffers.size(), kNone);
  est.node_alloc.assign(g.nodes.size(), 0);
  est.node_free.assign(g.nodes.size(), 0);
  est.post_alloc.resize(n);
  est.post_free.resize(n);
  MemoryTracker memory(g, info);
  std::int64_t before = 0;  // the freeable inputs count as the first step's allocation
  for (std::size_t t = 0; t < n; ++t) {
    const NodeId v = order[t];
    est.post_alloc[t] = memory.post_alloc_if_run(v);
    est.node_alloc[v] = est.post_alloc[t] - before;
    est.peak = std::max(est.peak, est.post_alloc[t]);
    est.node_free[v] = memory.run(v, [&](BufId b) { est.last_use[b] = v; });
    est.post_free[t] = before = memory.current();
  }
  return est;
}

std::int64_t allocfree_peak(const Graph& g, const MemoryPlanningInfo& info, const Order& order) {
  MemoryTracker memory(g, info);
  std::int64_t peak = 0;
  for (NodeId v : order) {
    peak = std::max(peak, memory.post_alloc_if_run(v));
    memory.run(v);
  }
  return peak;
}

std::vector<LiveBuffer> live_buffers_at(const Graph& g, const MemoryPlanningInfo& info, const Order& order, std::int32_t step) {
  std::vector<std::int64_t> held(g.buffers.size(), 0);
  for (const auto& l : compute_memory_timeline(g, info, order)) {
    std::int64_t v = (l.start_step <= step ? l.size_alloc : 0) - (l.end_step < step ? l.size_free : 0);
    BufId owner = info.container_of[l.buf] != kNone ? info.container_of[l.buf] : l.buf;
    held[owner] += v;
  }
  std::vector<LiveBuffer> out;
  for (BufId b = 0; b < static_cast<BufId>(held.size()); ++b)
    if (held[b] != 0) out.push_back({b, held[b]});
  std::stable_sort(out.begin(), out.end(), [](const LiveBuffer& a, const LiveBuffer& b) { return a.bytes > b.bytes; });
  return out;
}

std::vector<HeldBand> held_bands(const Graph& g, const MemoryPlanningInfo& info, const Order& order) {
  const auto lifetimes = compute_memory_timeline(g, info, order);
  const std::int32_t after_last = static_cast<std::int32_t>(order.size());
  std::vector<std::int32_t> start_of(g.buffers.size(), -1);
  std::vector<std::int64_t> unowned(g.buffers.size(), 0);  // a container's allocation not yet given to an item
  for (const auto& l : lifetimes) {
    start_of[l.buf] = l.start_step;
    if (l.size_alloc != l.size_free) unowned[l.buf] = l.size_alloc;
  }
  std::vector<HeldBand> out;
  out.reserve(lifetimes.size());
  for (const auto& l : lifetimes) {
    const BufId container = info.container_of[l.buf];
    if (l.size_alloc == l.size_free) {
      if (l.size_alloc > 0) out.push_back({l.buf, l.buf, l.size_alloc, l.start_step, l.end_step, l.live_to_end, false});
    } else if (container != kNone && start_of[container] >= 0) {
      // An item: its bytes are its container's, from the container's step.
      if (l.size_free > 0) out.push_back({l.buf, container, l.size_free, start_of[container], l.end_step, l.live_to_end, false});
      unowned[container] -= l.size_free;
    } else if (l.size_alloc < l.size_free) {
      // Freed without an allocation of its own (an item of a mutated container):
      // the curve drops by it, so the view does too, as a negative band.
      out.push_back({l.buf, l.buf, l.size_alloc - l.size_free, l.end_step + 1, after_last, false, true});
    }
  }
  for (const auto& l : lifetimes)
    if (unowned[l.buf] != 0) out.push_back({l.buf, l.buf, unowned[l.buf], l.start_step, after_last, false, true});
  return out;
}

std::string order_violation(const Graph& g, const MemoryPlanningInfo& info, const Order& order) {
  std::vector<std::int32_t> step(g.nodes.size(), -1);
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(order.size()); ++i) {
    NodeId v = order[i];
    if (v < 0 || v >= g.num_nodes()) return "step " + std::to_string(i) + " holds no node";
    if (step[v] != -1) return "node \"" + g.nodes[v].name + "\" is scheduled twice";
    step[v] = i;
  }
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    if (step[v] == -1)
      return "it ordered " + std::to_string(order.size()) + " of " + std::to_string(g.nodes.size()) + " nodes (node \"" +
             g.nodes[v].name + "\" is missing)";
  for (NodeId v : order)
    for (auto p : info.pred_nodes.row(v))
      if (step[p] > step[v])
        return "node \"" + g.nodes[v].name + "\" runs before \"" + g.nodes[p].name + "\", which it depends on";
  return {};
}

bool is_valid_order(const Graph& g, const MemoryPlanningInfo& info, const Order& order) {
  return order.size() == g.nodes.size() && order_violation(g, info, order).empty();
}

}  // namespace schedlab
