#include "core/sim/simulate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/util/error.h"

namespace schedlab {

Simulation simulate_two_streams(const Graph& g, const Order& order, const std::vector<double>& runtime_us) {
  return simulate_two_streams(g, order, runtime_us, LaunchModel{});
}

Simulation simulate_two_streams(const Graph& g, const Order& order, const std::vector<double>& runtime_us, const LaunchModel& launch,
                                const ContentionModel& contention) {
  return simulate_two_streams(g, make_simulation_graph(g), order, runtime_us, launch, contention);
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

namespace {

// The step's totals once both streams (and the host) are done, for both
// loops: its time, the compute stream's idle time, the exposed sum.
void close_step(Simulation& sim, double compute_clock, double comm_free, double host_clock) {
  sim.step_time_us = std::max({compute_clock, comm_free, host_clock});
  // Finite runtimes can still sum past the largest double.
  if (!std::isfinite(sim.step_time_us) || !std::isfinite(sim.comm_busy_us) || !std::isfinite(sim.compute_busy_us))
    throw Error("simulation: the runtimes sum to more than a finite number of microseconds");
  sim.compute_idle_us = sim.step_time_us - sim.compute_busy_us;
  for (const auto& ct : sim.collectives) sim.exposed_comm_us += ct.exposed_us;
}

// The communication stream under contention: the collectives issued and not
// yet done, in issue order, each with the work it has left (µs alone). Its
// clock `now` is where its progress has been accounted to; the compute side
// moves it forward, alone through idle compute time and shared while a
// kernel runs.
class CommStream {
 public:
  explicit CommStream(Simulation& sim) : sim_(sim) {}

  void issue(std::int32_t c, double work_us) {
    if (queue_.empty()) head_start_ = std::max(sim_.collectives[c].issue_us, last_end_);
    queue_.push_back({c, work_us});
  }
  bool done(std::int32_t c) const { return finished_.size() > static_cast<std::size_t>(c) && finished_[c]; }

  // No kernel runs from now_ to `until` (infinity: until the queue drains,
  // or until collective `stop` ends).
  void run_alone(double until, std::int32_t stop = -1) {
    while (!queue_.empty() && !(stop >= 0 && done(stop))) {
      const double start = std::max(head_start_, now_);
      if (start >= until) break;
      if (!head_running_) head_start_ = start;
      head_running_ = true;
      Pending& h = queue_[head_];
      if (start + h.work_us <= until) {
        finish(start + h.work_us);
      } else {
        h.work_us -= until - start;
        now_ = until;
        return;
      }
    }
    if (std::isfinite(until)) now_ = std::max(now_, until);
  }

  // A kernel of `work_us` alone starts at `t0` (>= now_); returns its end. A
  // collective not yet running may start once the kernel has no more than
  // (1 - start_fraction) of its work left, and not before it is ready.
  double run_beside(double t0, double work_us, double comm_slowdown, double compute_slowdown, double start_fraction) {
    run_alone(t0);
    double t = t0, left = work_us;
    const double tail = (1 - start_fraction) * work_us;
    while (left > 0) {
      if (queue_.empty()) {
        t += left;
        break;
      }
      if (!head_running_) {
        const double start = std::max(head_start_, t + std::max(0.0, left - tail));
        if (start >= t + left) {  // the kernel ends alone; a collective ready by then takes the SMs it frees
          t += left;
          if (head_start_ <= t) {
            head_start_ = t;
            head_running_ = true;
          }
          break;
        }
        left -= start - t;
        t = start;
        head_start_ = start;
        head_running_ = true;
      }
      Pending& h = queue_[head_];
      const double kernel_dt = left * compute_slowdown, comm_dt = h.work_us * comm_slowdown;
      if (comm_dt < kernel_dt) {
        left -= comm_dt / compute_slowdown;
        t += comm_dt;
        finish(t);
      } else {
        h.work_us -= kernel_dt / comm_slowdown;
        t += kernel_dt;
        left = 0;
      }
    }
    now_ = t;
    return t;
  }

 private:
  struct Pending {
    std::int32_t c;
    double work_us;
  };
  void finish(double end) {
    const std::int32_t c = queue_[head_].c;
    CollectiveTiming& ct = sim_.collectives[c];
    ct.start_us = head_start_;
    ct.end_us = end;
    if (finished_.size() <= static_cast<std::size_t>(c)) finished_.resize(c + 1, 0);
    finished_[c] = 1;
    last_end_ = end;
    now_ = end;
    ++head_;
    head_running_ = false;
    if (head_ == queue_.size()) {
      queue_.clear();
      head_ = 0;
    } else {
      head_start_ = std::max(sim_.collectives[queue_[head_].c].issue_us, end);
    }
  }

  Simulation& sim_;
  std::vector<Pending> queue_;
  std::size_t head_ = 0;
  double head_start_ = 0, last_end_ = 0, now_ = 0;  // head_start_: when the head is (or became) ready, then when it started
  bool head_running_ = false;
  std::vector<std::uint8_t> finished_;
};

Simulation simulate_contended(const SimulationGraph& sg, const Order& order, const std::vector<double>& runtime_us,
                              const LaunchModel& launch, const ContentionModel& contention) {
  const std::size_t n = runtime_us.size();
  if (contention.comm_slowdown.size() != n || contention.compute_slowdown.size() != n || contention.comm_start_fraction.size() != n)
    throw Error("simulation: the contention model does not match the graph's nodes");
  const bool has_host = !launch.host_us.empty() || !launch.gap_us.empty();
  Simulation sim;
  std::vector<std::int32_t> timing_of(n, -1);
  std::vector<std::size_t> span_of(n, 0);
  double compute_clock = 0;
  double host_clock = has_host ? launch.host_call_us : 0;
  sim.host_busy_us = host_clock;
  CommStream comm(sim);
  auto join = [&](std::int32_t c, NodeId blocker) {
    CollectiveTiming& ct = sim.collectives[c];
    if (ct.blocked != kNone) return;
    ct.blocked = blocker;
    comm.run_alone(std::numeric_limits<double>::infinity(), c);
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
      timing_of[v] = static_cast<std::int32_t>(sim.collectives.size());
      span_of[v] = sim.spans.size();
      sim.collectives.push_back(ct);
      sim.spans.push_back({v, 0, 0, true});
      comm.issue(timing_of[v], rt);
      continue;
    }
    blocking.clear();
    for (NodeId p : sg.collective_inputs.row(v))
      if (timing_of[p] >= 0 && sim.collectives[timing_of[p]].blocked == kNone) blocking.push_back(timing_of[p]);
    // Each stall is charged to the collective that caused it: they end in
    // issue order on the one stream.
    std::sort(blocking.begin(), blocking.end());
    for (std::int32_t c : blocking) join(c, v);
    if (has_host) compute_clock = std::max(compute_clock, host_clock) + launch.gap_us[v];
    const double end = comm.run_beside(compute_clock, rt, contention.comm_slowdown[v], contention.compute_slowdown[v],
                                       contention.comm_start_fraction[v]);
    sim.spans.push_back({v, compute_clock, end, false});
    sim.compute_busy_us += end - compute_clock;
    compute_clock = end;
  }
  comm.run_alone(std::numeric_limits<double>::infinity());
  double comm_free = 0;
  for (CollectiveTiming& ct : sim.collectives) {
    comm_free = std::max(comm_free, ct.end_us);
    sim.comm_busy_us += ct.end_us - ct.start_us;
    sim.spans[span_of[ct.collective]].start_us = ct.start_us;
    sim.spans[span_of[ct.collective]].end_us = ct.end_us;
    if (ct.blocked == kNone && ct.end_us > compute_clock) {
      ct.exposed_us = ct.end_us - compute_clock;
      compute_clock = ct.end_us;
    }
  }
  close_step(sim, compute_clock, comm_free, host_clock);
  return sim;
}

}  // namespace

Simulation simulate_two_streams(const Graph& g, const SimulationGraph& sg, const Order& order, const std::vector<double>& runtime_us,
                                const LaunchModel& launch, const ContentionModel& contention) {
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
  if (!contention.empty()) return simulate_contended(sg, order, runtime_us, launch, contention);
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
  close_step(sim, compute_clock, comm_free, host_clock);
  return sim;
}

}  // namespace schedlab
