// overlap_schedule: schedlab's own overlap pass (docs/comms.md).
//
// A list scheduler that runs the two-stream model of core/sim while it
// builds the order, so it knows at every step what the compute clock is and
// when each collective will end:
//   1. a ready wait (or any reader of a collective) whose collective has
//      already ended runs at once: it costs nothing;
//   2. the next collective, in the input's collective order (every rank
//      issues them identically), is issued as soon as it is ready, unless
//      the comm stream stays busy past the next chance to issue (after the
//      next compute node or stall: issuing now would gain nothing and hold
//      its output longer) or its output would break the memory budget;
//   3. otherwise the best ready compute node that does not block runs,
//      by one of three rankings (feed the earliest collective first; feed
//      the next one first, else input order; input order alone, which the
//      memory planner chose): all three are tried;
//   4. only when nothing else can run does the compute stream stall on the
//      wait whose collective ends first.
// Memory uses the allocfree accounting of core/memory, step by step: a
// collective is issued only while the running allocation stays under an
// issue limit, other nodes under (1 + budget) x the input's peak when any
// candidate allows. The issue limit starts at the budget and is lowered in
// steps until the real peak of the whole schedule fits; a schedule that
// never fits, or exposes more than the input, leaves the input unchanged.
// The pass is a small portfolio: the list schedules (three rankings of
// ready compute), each first fit polished by Inductor's iterative passes
// within the budget left, and Inductor's recommended pipeline with its
// per-pass budget lowered until the compounded peak fits; the least exposed
// schedule within the budget wins. Each ranking runs twice, compute held to
// the budget at its own step or by a forecast of the input order's remaining
// rise. Cost: up to 54 greedy runs of
// O((N + E) log N + N x R), R the width of the ready set, plus up to 17 runs
// of the iterative passes (their bounds are in docs/comms.md).
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "core/comms/iterative.h"
#include "core/comms/passes.h"
#include "core/memory/estimate.h"
#include "core/sim/simulate.h"

namespace schedlab {

namespace {

struct MemoryTracker {
  const MemoryPlanningInfo& info;
  std::vector<std::int32_t> readers_left;  // per buffer
  Adjacency kept_alive;                    // per node: buffers it keeps alive
  std::int64_t current = 0;

  MemoryTracker(const Graph& g, const MemoryPlanningInfo& i) : info(i), readers_left(g.buffers.size(), 0) {
    std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
    for (BufId b = 0; b < g.num_buffers(); ++b) {
      if (!info.planned[b]) continue;
      readers_left[b] = static_cast<std::int32_t>(info.buffer_succ_nodes.row(b).size());
      for (NodeId s : info.buffer_succ_nodes.row(b)) pairs.emplace_back(s, b);
    }
    kept_alive = Adjacency::from_pairs(g.num_nodes(), pairs);
    for (BufId b : info.freeable_inputs) current += info.size_alloc[b];
  }
  std::int64_t post_alloc_if_run(NodeId v) const { return current + info.node_size[v]; }
  void run(const Graph& g, NodeId v) {
    current += info.node_size[v];
    auto release = [&](BufId b) {
      if (!info.is_graph_output[b]) current -= info.size_free[b];
    };
    for (BufId b : kept_alive.row(v))
      if (--readers_left[b] == 0) release(b);
    for (BufId b : g.nodes[v].outputs)
      if (info.planned[b] && info.buffer_succ_nodes.row(b).empty()) release(b);
  }
};

}  // namespace

namespace {

// Range maximum over a fixed array (sparse table): O(N log N) to build, O(1) per query.
class RangeMax {
 public:
  explicit RangeMax(const std::vector<std::int64_t>& a) {
    levels_.push_back(a);
    for (std::size_t w = 1; 2 * w <= a.size(); w *= 2) {
      const auto& prev = levels_.back();
      std::vector<std::int64_t> next(prev.size() - w);
      for (std::size_t i = 0; i < next.size(); ++i) next[i] = std::max(prev[i], prev[i + w]);
      levels_.push_back(std::move(next));
    }
  }
  // max of a[lo..hi], lo <= hi
  std::int64_t query(std::size_t lo, std::size_t hi) const {
    std::size_t level = 0;
    while ((std::size_t{2} << level) <= hi - lo + 1) ++level;
    return std::max(levels_[level][lo], levels_[level][hi + 1 - (std::size_t{1} << level)]);
  }

 private:
  std::vector<std::vector<std::int64_t>> levels_;
};

struct ScheduleContext {
  const CommGraph& cg;
  const Order& order;
  const MemoryPlanningInfo& info;
  std::vector<std::int32_t> index, blocked_collective;
  // How ready compute is ranked: by the first collective it feeds, then
  // input order (raise_comms' idea); input order, but what feeds the next
  // collective to issue first; or input order alone (the memory planner's).
  enum class Ranking { FeedAll, FeedNext, InputOrder } ranking = Ranking::FeedAll;
  bool forecast_compute = false;
  std::vector<NodeId> collectives = {};  // in input order
  // Memory forecast: the input order's allocation curve, and per collective
  // the input position of its first reader (its wait).
  std::vector<std::int64_t> input_post_alloc = {};
  std::vector<std::int64_t> suffix_max_post_alloc = {};  // max of input_post_alloc[i..]
  std::vector<std::int32_t> first_reader_pos = {};
};

// What every greedy pass reads of the input order: positions, the
// collectives in order, and the memory forecast.
ScheduleContext make_schedule_context(const CommGraph& cg, const Order& order, const MemoryPlanningInfo& info) {
  const std::int32_t n = cg.num_nodes();
  ScheduleContext ctx{.cg = cg, .order = order, .info = info, .index = std::vector<std::int32_t>(n), .blocked_collective = lowest_blocked_collective(cg, order)};
  for (std::int32_t i = 0; i < n; ++i) {
    ctx.index[order[i]] = i;
    if (cg.is_collective(order[i])) ctx.collectives.push_back(order[i]);
  }
  ctx.input_post_alloc = estimate_peak_memory_allocfree(*cg.graph, info, order).post_alloc;
  ctx.suffix_max_post_alloc = ctx.input_post_alloc;
  for (std::int32_t i = n - 2; i >= 0; --i)
    ctx.suffix_max_post_alloc[i] = std::max(ctx.suffix_max_post_alloc[i], ctx.suffix_max_post_alloc[i + 1]);
  ctx.first_reader_pos.assign(n, n - 1);
  for (std::int32_t i = n - 1; i >= 0; --i)
    for (BufId b : cg.data_bufs.row(order[i]))
      if (cg.is_collective(cg.producer(b))) ctx.first_reader_pos[cg.producer(b)] = i;
  return ctx;
}

// One greedy pass. Collectives are issued only while memory stays within
// `issue_limit`; other nodes are held to `budget` when any candidate allows.
// `held_by_memory` marks collectives whose issue the limit delayed.
Order list_schedule(const ScheduleContext& ctx, double issue_limit, double budget, std::vector<std::uint8_t>& held_by_memory) {
  const CommGraph& cg = ctx.cg;
  const Graph& g = *cg.graph;
  const std::int32_t n = cg.num_nodes();
  const std::vector<double>& rt = cg.runtime_us;
  std::vector<double> collective_end(n, 0);
  auto ready_at = [&](NodeId v) {
    double t = 0;
    for (BufId b : cg.data_bufs.row(v)) {
      NodeId p = cg.producer(b);
      if (cg.is_collective(p)) t = std::max(t, collective_end[p]);
    }
    return t;
  };
  MemoryTracker memory(g, ctx.info);
  std::vector<std::int32_t> remaining(n);
  using Key = std::pair<std::int32_t, std::int32_t>;  // (lowest blocked collective, input index)
  std::vector<std::uint8_t> collective_ready(n, 0);
  auto key_of = [&](NodeId v) { return Key{ctx.ranking == ScheduleContext::Ranking::FeedAll ? ctx.blocked_collective[v] : 0, ctx.index[v]}; };
  // When a node can start: its collectives' ends, all known once it is
  // ready (they are among its dependencies), so taken once.
  std::vector<double> start_at(n, 0);
  // The ready nodes other than collectives, indexed by what each pick asks
  // for: those that can start now and cost nothing (waits, zero runtime),
  // the compute that can start now (also by the collective it feeds), and
  // those waiting on a collective, by start time. The compute ones become
  // current as the clock passes their start.
  double clock = 0, comm_free = 0;  // the compute and comm streams' times
  std::set<Key> free_now_set, compute_set;
  std::map<std::int32_t, std::set<Key>> compute_by_blocked;
  std::set<std::pair<double, Key>> stalled_set;
  auto make_current = [&](NodeId v) {
    if (cg.is_wait(v) || rt[v] == 0) {
      free_now_set.insert(key_of(v));
    } else {
      compute_set.insert(key_of(v));
      compute_by_blocked[ctx.blocked_collective[v]].insert(key_of(v));
    }
  };
  auto make_ready = [&](NodeId v) {
    if (cg.is_collective(v)) {
      collective_ready[v] = 1;
      return;
    }
    start_at[v] = ready_at(v);
    if (start_at[v] > clock) stalled_set.emplace(start_at[v], key_of(v));
    else make_current(v);
  };
  auto unready = [&](NodeId v) {
    const Key key = key_of(v);
    if (stalled_set.erase({start_at[v], key})) return;
    if (free_now_set.erase(key)) return;
    compute_set.erase(key);
    compute_by_blocked[ctx.blocked_collective[v]].erase(key);
  };
  for (NodeId v : ctx.order) {
    remaining[v] = cg.unmet_bufs.degree(v);
    if (remaining[v] == 0) make_ready(v);
  }
  Order out;
  out.reserve(n);
  std::size_t next_collective = 0;
  std::int32_t frontier = 0;  // furthest input position scheduled so far
  const RangeMax input_curve(ctx.input_post_alloc);
  // Issuing a collective now holds its output until its reader; the compute
  // scheduled meanwhile will allocate about what it did in the input order.
  auto forecast_if_issued = [&](NodeId c) {
    const auto to = static_cast<std::size_t>(std::max(frontier, ctx.first_reader_pos[c]));
    const std::int64_t rise = input_curve.query(static_cast<std::size_t>(frontier), to) - ctx.input_post_alloc[frontier];
    return static_cast<double>(memory.post_alloc_if_run(c) + std::max<std::int64_t>(0, rise));
  };
  auto schedule = [&](NodeId v) {
    out.push_back(v);
    frontier = std::max(frontier, ctx.index[v]);
    memory.run(g, v);
    if (cg.is_collective(v)) {
      double start = std::max(clock, comm_free);
      collective_end[v] = comm_free = start + rt[v];
      ++next_collective;
    } else {
      unready(v);
      clock = std::max(clock, start_at[v]) + rt[v];
    }
    for (BufId b : g.nodes[v].outputs)
      for (NodeId u : cg.buffer_users.row(b))
        if (--remaining[u] == 0) make_ready(u);
  };
  // A compute node fits when its allocation stays under the limit; with
  // `forecast_compute`, when the input order's remaining rise from there
  // would too (conservative: it assumes the rest of the input's peak is ahead).
  auto info_node_size = [&](NodeId v) { return ctx.info.node_size[v]; };
  auto fits = [&](NodeId v, double limit) {
    const auto from = static_cast<std::size_t>(std::max(frontier, ctx.index[v]));
    const std::int64_t rise = ctx.forecast_compute ? ctx.suffix_max_post_alloc[from] - ctx.input_post_alloc[from] : 0;
    return static_cast<double>(memory.post_alloc_if_run(v) + std::max<std::int64_t>(0, rise)) <= limit;
  };

  // The first node of `keys` (in order) that fits the budget.
  auto first_fitting = [&](const std::set<Key>& keys) {
    for (const Key& key : keys)
      if (fits(ctx.order[key.second], budget)) return ctx.order[key.second];
    return kNone;
  };
  // The lightest ready node (first in key order among equals): the last resort.
  auto lightest_ready = [&]() {
    NodeId lightest = kNone;
    auto consider = [&](const Key& key) {
      const NodeId v = ctx.order[key.second];
      if (lightest == kNone || info_node_size(v) < info_node_size(lightest) ||
          (info_node_size(v) == info_node_size(lightest) && key < key_of(lightest)))
        lightest = v;
    };
    for (const Key& key : free_now_set) consider(key);
    for (const Key& key : compute_set) consider(key);
    for (const auto& [at, key] : stalled_set) consider(key);
    return lightest;
  };

  while (static_cast<std::int32_t>(out.size()) < n) {
    while (!stalled_set.empty() && stalled_set.begin()->first <= clock) {
      make_current(ctx.order[stalled_set.begin()->second.second]);
      stalled_set.erase(stalled_set.begin());
    }
    // 1. Free waits and readers: their collective is done.
    if (!free_now_set.empty()) {
      schedule(ctx.order[free_now_set.begin()->second]);
      continue;
    }
    NodeId best_compute = first_fitting(compute_set), best_stall = kNone;
    double best_stall_at = std::numeric_limits<double>::infinity();
    for (const auto& [at, key] : stalled_set)
      if (fits(ctx.order[key.second], budget)) {
        best_stall = ctx.order[key.second];
        best_stall_at = at;
        break;
      }
    NodeId feeding_next = kNone;
    if (auto it = compute_by_blocked.find(static_cast<std::int32_t>(next_collective)); it != compute_by_blocked.end())
      feeding_next = first_fitting(it->second);
    if (ctx.ranking == ScheduleContext::Ranking::FeedNext && feeding_next != kNone) best_compute = feeding_next;
    // 2. The next collective, just in time: now only if the comm stream
    // frees up before the next chance to issue (after the next compute node
    // or stall).
    if (next_collective < ctx.collectives.size() && collective_ready[ctx.collectives[next_collective]]) {
      NodeId c = ctx.collectives[next_collective];
      const double next_chance = best_compute != kNone ? clock + rt[best_compute]
                                 : best_stall != kNone  ? best_stall_at
                                                        : std::numeric_limits<double>::infinity();
      if (comm_free <= next_chance) {
        if (forecast_if_issued(c) <= issue_limit) {
          schedule(c);
          continue;
        }
        held_by_memory[c] = 1;
      }
      if (best_compute == kNone && best_stall == kNone) {
        schedule(c);  // nothing else can run: issue it over the limit rather than stall forever
        continue;
      }
    }
    // 3. Compute that runs now; 4. the shortest stall; else the lightest node.
    if (best_compute != kNone) schedule(best_compute);
    else if (best_stall != kNone) schedule(best_stall);
    else if (NodeId lightest = lightest_ready(); lightest != kNone) schedule(lightest);
    else break;  // only unready collectives remain: a dependency cycle
  }
  return out;
}

// Inductor's iterative passes as overlap_schedule runs them: the rankings
// often reach the same schedule, so each distinct (pass, budget, order) runs
// once; all runs share the planning info of the input.
class IterativeRuns {
 public:
  IterativeRuns(const CommGraph& cg, const CommKnobs& k, const MemoryPlanningInfo& info) : cg_(cg), k_(k), info_(info) {}

  const Order& reorder(const Order& o, double budget) { return run(Pass::Reorder, o, budget); }
  const Order& sink_waits(const Order& o, double budget) { return run(Pass::SinkWaits, o, budget); }

 private:
  enum class Pass { Reorder, SinkWaits };
  const Order& run(Pass pass, const Order& o, double budget) {
    auto key = std::tuple(pass, budget, o);
    if (auto it = done_.find(key); it != done_.end()) return it->second;
    CommKnobs knobs = k_;
    knobs.reorder_iterative_peak_memory_budget = knobs.sink_iterative_peak_memory_budget = budget;
    Order out = pass == Pass::Reorder ? comms_detail::reorder_communication_preserving_peak_memory(cg_, o, knobs, info_).order
                                      : comms_detail::sink_waits_iterative(cg_, o, knobs, info_).order;
    return done_.emplace(std::move(key), std::move(out)).first->second;
  }

  const CommGraph& cg_;
  const CommKnobs& k_;
  const MemoryPlanningInfo& info_;
  std::map<std::tuple<Pass, double, Order>, Order> done_;
};

// The candidate schedules weighed so far: one is kept only within the
// memory budget and with less exposed communication than the best so far
// (the input to start with).
class Candidates {
 public:
  Candidates(const CommGraph& cg, const Order& input, const MemoryPlanningInfo& info, double budget)
      : cg_(cg), info_(info), budget_(budget), before_(simulate_two_streams(*cg.graph, input, cg.runtime_us)), best_(before_) {}

  // The candidate's peak when it is a valid schedule within the budget (then
  // it was weighed), else nothing.
  std::optional<std::int64_t> consider(Order candidate, std::vector<std::uint8_t> held_by_memory) {
    if (candidate.size() != static_cast<std::size_t>(cg_.num_nodes()) || !respects_comm_deps(cg_, candidate)) return std::nullopt;
    const std::int64_t peak = estimate_peak_memory_allocfree(*cg_.graph, info_, candidate).peak;
    if (static_cast<double>(peak) > budget_) return std::nullopt;
    Simulation sim = simulate_two_streams(*cg_.graph, candidate, cg_.runtime_us);
    if (sim.exposed_comm_us < best_.exposed_comm_us) {
      order_ = std::move(candidate);
      best_ = std::move(sim);
      peak_ = peak;
      held_by_memory_ = std::move(held_by_memory);
      found_ = true;
    }
    return peak;
  }

  bool found() const { return found_; }
  const Order& order() const { return order_; }
  std::int64_t peak() const { return peak_; }
  const Simulation& before() const { return before_; }
  const Simulation& best() const { return best_; }
  const std::vector<std::uint8_t>& held_by_memory() const { return held_by_memory_; }

 private:
  const CommGraph& cg_;
  const MemoryPlanningInfo& info_;
  double budget_;
  Simulation before_, best_;
  Order order_;
  std::int64_t peak_ = 0;
  std::vector<std::uint8_t> held_by_memory_;
  bool found_ = false;
};

struct OverlapSearch {
  const CommGraph& cg;
  const CommKnobs& k;
  double budget;             // the peak allowed: (1 + overlap budget) x the input's peak
  std::int64_t input_peak;
  IterativeRuns& runs;
  Candidates& candidates;
};

// Polish: Inductor's iterative passes, given only the budget that is left on
// top of `o` (whose peak is `peak`), sink waits and raise collectives past
// what is in between.
void consider_polished(OverlapSearch& search, const Order& o, std::int64_t peak, std::vector<std::uint8_t> held) {
  const double left = std::max(0.0, search.budget / static_cast<double>(std::max<std::int64_t>(1, peak)) - 1.0);
  search.candidates.consider(search.runs.reorder(search.runs.sink_waits(o, left), left), std::move(held));
}

// 1. The list scheduler. Prefetching collectives and filling stalls hold
// memory while later compute allocates, so for each ranking the limits are
// lowered step by step until the whole schedule's real peak fits the budget
// (more headroom first: it hides more); that first fit is polished.
void try_list_schedules(OverlapSearch& search, ScheduleContext& ctx) {
  constexpr int kLimitSteps = 8;
  using Ranking = ScheduleContext::Ranking;
  const double input_peak = static_cast<double>(search.input_peak);
  for (int variant = 0; variant < 6; ++variant) {
    ctx.ranking = std::array{Ranking::FeedAll, Ranking::FeedNext, Ranking::InputOrder}[variant % 3];
    ctx.forecast_compute = variant >= 3;
    for (int step = 0; step <= kLimitSteps; ++step) {
      // Both limits tighten together: the issue limit towards half the input
      // peak, the limit on filling stalls with compute towards the input peak.
      const double frac = static_cast<double>(step) / kLimitSteps;
      const double issue_limit = search.budget - (search.budget - input_peak * 0.5) * frac;
      const double compute_limit = search.budget - (search.budget - input_peak) * frac;
      std::vector<std::uint8_t> held(static_cast<std::size_t>(search.cg.num_nodes()), 0);
      Order candidate = list_schedule(ctx, issue_limit, compute_limit, held);
      if (auto peak = search.candidates.consider(candidate, held)) {
        consider_polished(search, candidate, *peak, std::move(held));
        break;  // a variant's first fit is its best
      }
    }
  }
}

// 2. Inductor's recommended pipeline, its per-pass budget lowered until the
// compounded peak fits ours (at the same knob its three passes may each add
// the budget), then polished.
void try_inductor_pipeline(OverlapSearch& search, const Order& input) {
  const std::vector<std::uint8_t> none_held(static_cast<std::size_t>(search.cg.num_nodes()), 0);
  for (double fraction : {1.0, 0.5, 0.25, 0.125, 0.0}) {
    const double budget = search.k.overlap_schedule_peak_memory_budget * fraction;
    const Order& o = search.runs.reorder(search.runs.sink_waits(search.runs.reorder(input, budget), budget), budget);
    if (auto peak = search.candidates.consider(o, none_held)) {
      consider_polished(search, o, *peak, none_held);
      break;
    }
  }
}

// Per collective: its exposure before and after, and what limited it.
std::vector<OverlapStat> overlap_stats(const CommGraph& cg, const Candidates& candidates) {
  const Simulation& before = candidates.before();
  const Simulation& chosen = candidates.found() ? candidates.best() : before;
  std::vector<double> exposed_before(static_cast<std::size_t>(cg.num_nodes()), 0);
  for (const auto& ct : before.collectives) exposed_before[ct.collective] = ct.exposed_us;
  std::vector<OverlapStat> stats;
  for (const auto& ct : chosen.collectives) {
    OverlapStat s;
    s.node = ct.collective;
    s.comm_time_us = cg.runtime_us[ct.collective];
    s.comp_time_us = cg.runtime_us[ct.collective] - ct.exposed_us;
    s.initial_exposed_us = exposed_before[ct.collective];
    s.final_exposed_us = ct.exposed_us;
    if (!candidates.found()) s.limiting_factor = "no schedule within the memory budget exposed less: input kept";
    else if (ct.exposed_us <= 0) s.limiting_factor = "None";
    else if (candidates.held_by_memory()[ct.collective]) s.limiting_factor = "peak memory budget";
    else s.limiting_factor = "dependencies";
    stats.push_back(std::move(s));
  }
  return stats;
}

}  // namespace

CommPassResult overlap_schedule(const CommGraph& cg, const Order& order, const CommKnobs& k) {
  const Graph& g = *cg.graph;
  const MemoryPlanningInfo info = compute_planning_info(g, order);
  const std::int64_t input_peak = estimate_peak_memory_allocfree(g, info, order).peak;
  const double budget = static_cast<double>(input_peak) * (1.0 + k.overlap_schedule_peak_memory_budget);
  ScheduleContext ctx = make_schedule_context(cg, order, info);
  IterativeRuns runs(cg, k, info);
  Candidates candidates(cg, order, info, budget);
  OverlapSearch search{cg, k, budget, input_peak, runs, candidates};
  try_list_schedules(search, ctx);
  try_inductor_pipeline(search, order);
  CommPassResult result;
  result.order = candidates.found() ? candidates.order() : order;
  result.peak_before = input_peak;
  result.peak_after = candidates.found() ? candidates.peak() : input_peak;
  result.stats = overlap_stats(cg, candidates);
  return result;
}

}  // namespace schedlab
