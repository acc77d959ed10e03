#include "core/sim/simulate.h"

#include <memory>
#include <optional>

#include "core/sim/rank_stepper.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/cost/collective_times.h"
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

// Whether the host waits for node v's kernels before it goes on.
bool host_waits_for(const LaunchModel& launch, NodeId v) { return !launch.host_waits.empty() && launch.host_waits[v]; }

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

  // Collective c (its work alone) may start from ready_us on: its issue on
  // this rank, or the last member rank's. If it starts beside a kernel, it
  // has beside_wait_us more work (ContentionModel::beside_wait_us).
  void issue(std::int32_t c, double work_us, double ready_us, double beside_wait_us) {
    if (queue_.empty()) head_start_ = std::max(ready_us, last_end_);
    queue_.push_back({c, work_us, work_us, ready_us, beside_wait_us});
  }
  bool done(std::int32_t c) const { return finished_.size() > static_cast<std::size_t>(c) && finished_[c]; }

  // No kernel runs from now_ to `until` (infinity: until the queue drains,
  // or until collective `stop` ends). A collective not yet running starts
  // only if it can by `until - latency_us`: a later one loses the SMs to the
  // kernel that starts at `until`.
  void run_alone(double until, std::int32_t stop = -1, double latency_us = 0) {
    while (!queue_.empty() && !(stop >= 0 && done(stop))) {
      const double start = std::max(head_start_, now_);
      if (start >= until || (!head_running_ && start > until - latency_us)) break;
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
  // (1 - start_fraction) of its work left, and not before it is ready; one
  // ready less than `start_latency_us` before t0 counts as ready beside it.
  double run_beside(double t0, double work_us, const ContentionShare& share) {
    const double compute_slowdown = share.compute_slowdown, start_fraction = share.start_fraction;
    run_alone(t0, -1, share.start_latency_us);
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
          if (head_start_ <= t) start_beside(t);
          break;
        }
        left -= start - t;
        t = start;
        start_beside(start);
      }
      Pending& h = queue_[head_];
      const double comm_slowdown = contended_comm_slowdown(share, h.alone_us);
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
    double work_us;   // left, alone
    double alone_us;  // its whole time alone
    double ready_us;
    double beside_wait_us;
  };
  // The head starts at `t` beside a kernel (or as one ends, having become
  // ready beside it): it waits for its peers beside_wait_us longer.
  void start_beside(double t) {
    head_start_ = t;
    head_running_ = true;
    queue_[head_].work_us += queue_[head_].beside_wait_us;
  }
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
      head_start_ = std::max(queue_[head_].ready_us, end);
    }
  }

  Simulation& sim_;
  std::vector<Pending> queue_;
  std::size_t head_ = 0;
  double head_start_ = 0, last_end_ = 0, now_ = 0;  // head_start_: when the head is (or became) ready, then when it started
  bool head_running_ = false;
  std::vector<std::uint8_t> finished_;
};

// The contended loop, advanced collective by collective (rank_stepper.h).
class ContendedStepper final : public RankStepper {
 public:
  ContendedStepper(const SimulationGraph& sg, const Order& order, const std::vector<double>& runtime_us, const LaunchModel& launch,
                   const ContentionModel& contention)
      : sg_(sg), order_(order), rt_(runtime_us), launch_(launch), contention_(contention), comm_(sim_) {
    const std::size_t n = runtime_us.size();
    if (contention.shares.size() != n || (!contention.beside_wait_us.empty() && contention.beside_wait_us.size() != n))
      throw Error("simulation: the contention model does not match the graph's nodes");
    has_host_ = !launch.host_us.empty() || !launch.gap_us.empty();
    timing_of_.assign(n, -1);
    span_of_.assign(n, 0);
    host_clock_ = has_host_ ? launch.host_prologue_us() : 0;
    sim_.host_busy_us = has_host_ ? launch.host_call_us : 0;
    sim_.spans.reserve(order.size());
  }

  std::optional<CollectiveArrival> next_collective() override {
    for (; pos_ < order_.size(); ++pos_) {
      const NodeId v = order_[pos_];
      const double rt = rt_[v];
      if (has_host_) {
        host_clock_ += launch_.host_us[v];
        sim_.host_busy_us += launch_.host_us[v];
      }
      if (sg_.is_collective[v]) {
        CollectiveTiming ct;
        ct.collective = v;
        ct.issue_us = std::max(compute_clock_, host_clock_);
        timing_of_[v] = static_cast<std::int32_t>(sim_.collectives.size());
        span_of_[v] = sim_.spans.size();
        sim_.collectives.push_back(ct);
        sim_.spans.push_back({v, 0, 0, true});
        ++pos_;
        return CollectiveArrival{ct.issue_us, ct.issue_us};
      }
      blocking_.clear();
      for (NodeId p : sg_.collective_inputs.row(v))
        if (timing_of_[p] >= 0 && sim_.collectives[timing_of_[p]].blocked == kNone) blocking_.push_back(timing_of_[p]);
      // Each stall is charged to the collective that caused it: they end in
      // issue order on the one stream.
      std::sort(blocking_.begin(), blocking_.end());
      for (std::int32_t c : blocking_) join(c, v);
      if (has_host_) compute_clock_ = std::max(compute_clock_, host_clock_) + launch_.gap_us[v];
      const double end = comm_.run_beside(compute_clock_, rt, contention_.shares[v]);
      sim_.spans.push_back({v, compute_clock_, end, false});
      sim_.compute_busy_us += end - compute_clock_;
      compute_clock_ = end;
      if (has_host_ && host_waits_for(launch_, v)) host_clock_ = std::max(host_clock_, end);
    }
    return std::nullopt;
  }

  void start_after(double ready_us) override {
    const std::int32_t c = static_cast<std::int32_t>(sim_.collectives.size()) - 1;
    const NodeId v = sim_.collectives[c].collective;
    comm_.issue(c, rt_[v], ready_us, contention_.beside_wait_us.empty() ? 0.0 : contention_.beside_wait_us[v]);
  }

  Simulation finish() override {
    comm_.run_alone(std::numeric_limits<double>::infinity());
    double comm_free = 0;
    for (CollectiveTiming& ct : sim_.collectives) {
      comm_free = std::max(comm_free, ct.end_us);
      sim_.comm_busy_us += ct.end_us - ct.start_us;
      sim_.spans[span_of_[ct.collective]].start_us = ct.start_us;
      sim_.spans[span_of_[ct.collective]].end_us = ct.end_us;
      if (ct.blocked == kNone && ct.end_us > compute_clock_) {
        ct.exposed_us = ct.end_us - compute_clock_;
        compute_clock_ = ct.end_us;
      }
    }
    close_step(sim_, compute_clock_, comm_free, host_clock_ + (has_host_ ? launch_.host_epilogue_us() : 0));
    return std::move(sim_);
  }

 private:
  void join(std::int32_t c, NodeId blocker) {
    CollectiveTiming& ct = sim_.collectives[c];
    if (ct.blocked != kNone) return;
    ct.blocked = blocker;
    comm_.run_alone(std::numeric_limits<double>::infinity(), c);
    if (ct.end_us > compute_clock_) {
      ct.exposed_us = ct.end_us - compute_clock_;
      compute_clock_ = ct.end_us;
    }
  }

  const SimulationGraph& sg_;
  const Order& order_;
  const std::vector<double>& rt_;
  const LaunchModel& launch_;
  const ContentionModel& contention_;
  Simulation sim_;
  CommStream comm_;
  bool has_host_ = false;
  std::vector<std::int32_t> timing_of_;
  std::vector<std::size_t> span_of_;
  std::vector<std::int32_t> blocking_;
  std::size_t pos_ = 0;
  double compute_clock_ = 0, host_clock_ = 0;
};

// The two-stream loop without contention, advanced collective by collective.
class FreeStepper final : public RankStepper {
 public:
  FreeStepper(const SimulationGraph& sg, const Order& order, const std::vector<double>& runtime_us, const LaunchModel& launch)
      : sg_(sg), order_(order), rt_(runtime_us), launch_(launch) {
    has_host_ = !launch.host_us.empty() || !launch.gap_us.empty();
    timing_of_.assign(runtime_us.size(), -1);  // node -> index into sim_.collectives
    host_clock_ = has_host_ ? launch.host_prologue_us() : 0;
    sim_.host_busy_us = has_host_ ? launch.host_call_us : 0;
    sim_.spans.reserve(order.size());
  }

  std::optional<CollectiveArrival> next_collective() override {
    for (; pos_ < order_.size(); ++pos_) {
      const NodeId v = order_[pos_];
      const double rt = rt_[v];
      if (has_host_) {
        host_clock_ += launch_.host_us[v];
        sim_.host_busy_us += launch_.host_us[v];
      }
      if (sg_.is_collective[v]) {
        CollectiveTiming ct;
        ct.collective = v;
        ct.issue_us = std::max(compute_clock_, host_clock_);
        timing_of_[v] = static_cast<std::int32_t>(sim_.collectives.size());
        sim_.collectives.push_back(ct);
        ++pos_;
        // This loop starts a collective from the compute stream's clock.
        return CollectiveArrival{compute_clock_, ct.issue_us};
      }
      // Block on every running collective whose output this node reads, the
      // earliest-ending first so each stall is charged to the one that caused it.
      blocking_.clear();
      for (NodeId p : sg_.collective_inputs.row(v))
        if (timing_of_[p] >= 0 && sim_.collectives[timing_of_[p]].blocked == kNone) blocking_.push_back(timing_of_[p]);
      std::sort(blocking_.begin(), blocking_.end(),
                [&](std::int32_t a, std::int32_t b) { return sim_.collectives[a].end_us < sim_.collectives[b].end_us; });
      for (std::int32_t c : blocking_) join(c, v);
      // The kernel waits for its launch; the launch gap follows the previous kernel.
      if (has_host_) compute_clock_ = std::max(compute_clock_, host_clock_) + launch_.gap_us[v];
      sim_.spans.push_back({v, compute_clock_, compute_clock_ + rt, false});
      compute_clock_ += rt;
      sim_.compute_busy_us += rt;
      if (has_host_ && host_waits_for(launch_, v)) host_clock_ = std::max(host_clock_, compute_clock_);
    }
    return std::nullopt;
  }

  void start_after(double ready_us) override {
    CollectiveTiming& ct = sim_.collectives.back();
    const double rt = rt_[ct.collective];
    ct.start_us = std::max(ready_us, comm_free_);
    ct.end_us = ct.start_us + rt;
    comm_free_ = ct.end_us;
    sim_.spans.push_back({ct.collective, ct.start_us, ct.end_us, true});
    sim_.comm_busy_us += rt;
  }

  Simulation finish() override {
    // Collectives nobody waited on expose what runs past the compute stream.
    for (CollectiveTiming& ct : sim_.collectives) {
      if (ct.blocked != kNone) continue;
      if (ct.end_us > compute_clock_) {
        ct.exposed_us = ct.end_us - compute_clock_;
        compute_clock_ = ct.end_us;
      }
    }
    close_step(sim_, compute_clock_, comm_free_, host_clock_ + (has_host_ ? launch_.host_epilogue_us() : 0));
    return std::move(sim_);
  }

 private:
  void join(std::int32_t c, NodeId blocker) {
    CollectiveTiming& ct = sim_.collectives[c];
    if (ct.blocked != kNone) return;
    ct.blocked = blocker;
    if (ct.end_us > compute_clock_) {
      ct.exposed_us = ct.end_us - compute_clock_;
      compute_clock_ = ct.end_us;
    }
  }

  const SimulationGraph& sg_;
  const Order& order_;
  const std::vector<double>& rt_;
  const LaunchModel& launch_;
  Simulation sim_;
  bool has_host_ = false;
  std::vector<std::int32_t> timing_of_;
  std::vector<std::int32_t> blocking_;
  std::size_t pos_ = 0;
  double compute_clock_ = 0, comm_free_ = 0, host_clock_ = 0;
};

// Throws Error where the inputs do not fit the graph.
void check_inputs(const Graph& g, const Order& order, const std::vector<double>& runtime_us, const LaunchModel& launch) {
  const std::int32_t n = g.num_nodes();
  const bool has_host = !launch.host_us.empty() || !launch.gap_us.empty();
  if (has_host && (launch.host_us.size() != runtime_us.size() || launch.gap_us.size() != runtime_us.size()))
    throw Error("simulation: the launch model does not match the graph's nodes");
  if (!launch.host_waits.empty() && launch.host_waits.size() != runtime_us.size())
    throw Error("simulation: the launch model's host waits do not match the graph's nodes");
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
}

}  // namespace

std::unique_ptr<RankStepper> make_rank_stepper(const Graph& g, const SimulationGraph& sg, const Order& order,
                                               const std::vector<double>& runtime_us, const LaunchModel& launch,
                                               const ContentionModel& contention) {
  check_inputs(g, order, runtime_us, launch);
  if (!contention.empty()) return std::make_unique<ContendedStepper>(sg, order, runtime_us, launch, contention);
  return std::make_unique<FreeStepper>(sg, order, runtime_us, launch);
}

Simulation simulate_two_streams(const Graph& g, const SimulationGraph& sg, const Order& order, const std::vector<double>& runtime_us,
                                const LaunchModel& launch, const ContentionModel& contention) {
  // One rank alone: each collective may start from its own arrival.
  const std::unique_ptr<RankStepper> rank = make_rank_stepper(g, sg, order, runtime_us, launch, contention);
  while (const std::optional<CollectiveArrival> arrival = rank->next_collective()) rank->start_after(arrival->start_from_us);
  return rank->finish();
}

}  // namespace schedlab
