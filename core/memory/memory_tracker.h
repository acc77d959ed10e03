// core/memory — the allocfree accounting (estimate.h's
// estimate_peak_memory_allocfree) one node at a time, for callers that build
// or walk an order step by step: the estimator itself, overlap_schedule's
// list scheduler and the iterative comm passes' starting state.
//
// A node allocates its outputs when it runs. A buffer is freed after the
// later of its producer and its last user (buffer_succ_nodes: each user
// counts once) has run, or right after its producer when nothing uses it;
// graph outputs are never freed; freeable inputs are live from the start
// (one with no user is freed after the first step).
// This is compute_memory_timeline's rule (end step = max(start step, last
// reader's step)) counted down per buffer instead of searched per buffer, so
// the sums and the last uses equal the estimator's on any permutation, even
// one that runs a user before its buffer's producer.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph/graph.h"
#include "core/memory/planning_info.h"

namespace schedlab {

class MemoryTracker {
 public:
  MemoryTracker(const Graph& g, const MemoryPlanningInfo& info) : info_(info), users_left_(g.buffers.size(), 0), ran_(g.nodes.size(), 0) {
    for (BufId b = 0; b < g.num_buffers(); ++b) users_left_[b] = info.buffer_succ_nodes.degree(b);
    for (BufId b : info.freeable_inputs) current_ += info.size_alloc[b];
  }

  // Bytes live now: before the first node, the freeable inputs.
  std::int64_t current() const { return current_; }
  std::int64_t post_alloc_if_run(NodeId v) const { return current_ + info_.node_size[v]; }

  // Runs `v`: allocates its outputs, then frees each buffer whose last use it
  // is, calling `on_free(b)` for it. Returns the bytes freed.
  template <class OnFree>
  std::int64_t run(NodeId v, OnFree&& on_free) {
    current_ += info_.node_size[v];
    ran_[v] = 1;
    std::int64_t freed = 0;
    auto release = [&](BufId b) {
      if (info_.is_graph_output[b]) return;
      freed += info_.size_free[b];
      on_free(b);
    };
    // pred_buffers: the buffers v keeps alive, i.e. those it is a user of.
    for (BufId b : info_.pred_buffers.row(v))
      if (--users_left_[b] == 0 && produced(b)) release(b);
    for (BufId b : info_.outputs.row(v))
      if (users_left_[b] == 0) release(b);
    // A freeable input read only through fake weak deps has no user: it goes after the first step.
    if (!started_)
      for (BufId b : info_.freeable_inputs)
        if (info_.buffer_succ_nodes.degree(b) == 0) release(b);
    started_ = true;
    current_ -= freed;
    return freed;
  }
  std::int64_t run(NodeId v) {
    return run(v, [](BufId) {});
  }

 private:
  bool produced(BufId b) const {
    const NodeId p = info_.producer[b];
    return p == kNone || ran_[p];
  }

  const MemoryPlanningInfo& info_;
  std::vector<std::int32_t> users_left_;  // per buffer: users not yet run
  std::vector<std::uint8_t> ran_;         // per node
  std::int64_t current_ = 0;
  bool started_ = false;
};

}  // namespace schedlab
