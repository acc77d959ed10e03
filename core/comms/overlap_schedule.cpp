// overlap_schedule and overlap_schedule_step: schedlab's own overlap passes
// (docs/comms.md). Both weigh candidate orders; overlap_schedule keeps the
// least exposed in the two-stream model of the pass's runtimes,
// overlap_schedule_step the shortest step as the plan simulates it
// (contention and launch path), with prefetching candidates besides
// (Candidates, try_prefetch_schedules). Both keep to the in-flight limits
// and the byte budget of the knobs. What follows describes
// overlap_schedule's search, which the step pass runs too (over 50 000
// nodes only its prefetching part).
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
// rise (the second only from the first step where the forecast would change
// a pick of the first). Cost: up to 54 greedy runs of
// O((N + E) log N + N x R), R the width of the ready set, plus up to 17 runs
// of the iterative passes (their bounds are in docs/comms.md); a run or a
// candidate seen before is answered from memory, and every run re-plans
// the input's planning info instead of computing its own.
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "core/comms/comm_ready_list.h"
#include "core/comms/in_flight.h"
#include "core/comms/iterative.h"
#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/memory/estimate.h"
#include "core/memory/memory_tracker.h"
#include "core/sim/simulate.h"
#include "core/util/range_max.h"

namespace schedlab {

namespace {

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
  // Issue each collective as soon as it is ready and the limits allow
  // (prefetch as far as they let), not just in time.
  bool eager = false;
  InFlightLimits limits = {};  // at most this many collectives per kind, and bytes, in flight
  std::vector<NodeId> collectives = {};  // in input order
  // Per collective (indexed by node): its in-flight kind and payload bytes.
  std::vector<std::uint8_t> collective_kind = {};
  std::vector<std::int64_t> collective_bytes = {};
  // Memory forecast: the input order's allocation curve, and per collective
  // the input position of its first reader (its wait).
  std::vector<std::int64_t> input_post_alloc = {};
  std::vector<std::int64_t> suffix_max_post_alloc = {};  // max of input_post_alloc[i..]
  std::vector<std::int32_t> first_reader_pos = {};
  RangeMax input_curve = {};  // over input_post_alloc
};

// What every greedy pass reads of the input order: positions, the
// collectives in order, and the memory forecast (from `input_memory`, the
// order's allocfree estimate, which the search also takes its peak from).
ScheduleContext make_schedule_context(const CommGraph& cg, const Order& order, const MemoryPlanningInfo& info, const AllocFreeEstimate& input_memory) {
  const std::int32_t n = cg.num_nodes();
  ScheduleContext ctx{.cg = cg, .order = order, .info = info, .index = std::vector<std::int32_t>(n), .blocked_collective = lowest_blocked_collective(cg, order)};
  ctx.collective_kind.assign(static_cast<std::size_t>(n), 0);
  ctx.collective_bytes.assign(static_cast<std::size_t>(n), 0);
  for (std::int32_t i = 0; i < n; ++i) {
    const NodeId v = order[i];
    ctx.index[v] = i;
    if (!cg.is_collective(v)) continue;
    ctx.collectives.push_back(v);
    ctx.collective_kind[v] = static_cast<std::uint8_t>(in_flight_kind(*cg.graph, v));
    ctx.collective_bytes[v] = collective_payload(*cg.graph, cg.graph->nodes[v]).bytes;
  }
  ctx.input_post_alloc = input_memory.post_alloc;
  ctx.suffix_max_post_alloc = ctx.input_post_alloc;
  for (std::int32_t i = n - 2; i >= 0; --i)
    ctx.suffix_max_post_alloc[i] = std::max(ctx.suffix_max_post_alloc[i], ctx.suffix_max_post_alloc[i + 1]);
  ctx.input_curve = RangeMax(ctx.input_post_alloc);
  ctx.first_reader_pos.assign(n, n - 1);
  for (std::int32_t i = n - 1; i >= 0; --i)
    for (BufId b : cg.data_bufs.row(order[i]))
      if (cg.is_collective(cg.producer(b))) ctx.first_reader_pos[cg.producer(b)] = i;
  return ctx;
}

// One greedy pass as a ready-list strategy. Collectives are issued only
// while memory stays within `issue_limit`; other nodes are held to `budget`
// when any candidate allows. `held_by_memory` marks collectives whose issue
// the limit delayed.
class OverlapListStrategy {
 public:
  OverlapListStrategy(const ScheduleContext& ctx, double issue_limit, double budget, std::vector<std::uint8_t>& held_by_memory)
      : ctx_(ctx),
        cg_(ctx.cg),
        rt_(ctx.cg.runtime_us),
        issue_limit_(issue_limit),
        budget_(budget),
        held_by_memory_(held_by_memory),
        memory_(*ctx.cg.graph, ctx.info),
        collective_end_(ctx.cg.num_nodes(), 0),
        collective_ready_(ctx.cg.num_nodes(), 0),
        start_at_(ctx.cg.num_nodes(), 0),
        counts_in_flight_(ctx.limits.any()),
        in_flight_(counts_in_flight_ ? ctx.cg.num_nodes() : 0, 0) {}

  void release(NodeId v) {
    if (cg_.is_collective(v)) {
      collective_ready_[v] = 1;
      return;
    }
    // When it can start: its collectives' ends, all known once it is ready
    // (they are among its dependencies), so taken once.
    start_at_[v] = 0;
    for (BufId b : cg_.data_bufs.row(v))
      if (cg_.is_collective(cg_.producer(b))) start_at_[v] = std::max(start_at_[v], collective_end_[cg_.producer(b)]);
    if (start_at_[v] > clock_) stalled_.emplace(start_at_[v], key_of(v));
    else make_current(v);
  }

  NodeId pick() {
    promote_started();
    // 1. Free waits and readers: their collective is done.
    if (!free_now_.empty()) return ctx_.order[free_now_.begin()->second];
    NodeId best_compute = first_fitting(compute_);
    const auto [best_stall, best_stall_at] = first_fitting_stall();
    if (ctx_.ranking == ScheduleContext::Ranking::FeedNext)
      if (NodeId feeding_next = first_fitting_feeding_next(); feeding_next != kNone) best_compute = feeding_next;
    // 2. The next collective, just in time.
    if (NodeId c = collective_to_issue(best_compute, best_stall, best_stall_at); c != kNone) return c;
    // 3. Compute that runs now; 4. the shortest stall; else the lightest node.
    if (best_compute != kNone) return best_compute;
    if (best_stall != kNone) return best_stall;
    return lightest_ready();  // kNone when only unready collectives remain: a dependency cycle
  }

  // Whether, without `forecast_compute`, the forecast would have refused a
  // node that was let in: else every answer of `fits` and so every pick
  // would have been the same with it.
  bool forecast_would_refuse() const { return forecast_would_refuse_; }

  void scheduled(NodeId v) {
    frontier_ = std::max(frontier_, ctx_.index[v]);
    memory_.run(v);
    if (counts_in_flight_) count_in_flight(v);
    if (cg_.is_collective(v)) {
      const double start = std::max(clock_, comm_free_);
      collective_end_[v] = comm_free_ = start + rt_[v];
      ++next_collective_;
    } else {
      unready(v);
      clock_ = std::max(clock_, start_at_[v]) + rt_[v];
    }
  }

 private:
  using Key = std::pair<std::int32_t, std::int32_t>;  // (lowest blocked collective, input index)

  Key key_of(NodeId v) const {
    return {ctx_.ranking == ScheduleContext::Ranking::FeedAll ? ctx_.blocked_collective[v] : 0, ctx_.index[v]};
  }
  // The ready nodes other than collectives are indexed by what each pick
  // asks for: those that can start now and cost nothing (waits, zero
  // runtime), the compute that can start now (also by the collective it
  // feeds), and those waiting on a collective, by start time.
  void make_current(NodeId v) {
    if (cg_.is_wait(v) || rt_[v] == 0) {
      free_now_.insert(key_of(v));
    } else {
      compute_.insert(key_of(v));
      compute_by_blocked_[ctx_.blocked_collective[v]].insert(key_of(v));
    }
  }
  void unready(NodeId v) {
    const Key key = key_of(v);
    if (stalled_.erase({start_at_[v], key})) return;
    if (free_now_.erase(key)) return;
    compute_.erase(key);
    compute_by_blocked_[ctx_.blocked_collective[v]].erase(key);
  }
  // Compute becomes current as the clock passes its start.
  void promote_started() {
    while (!stalled_.empty() && stalled_.begin()->first <= clock_) {
      make_current(ctx_.order[stalled_.begin()->second.second]);
      stalled_.erase(stalled_.begin());
    }
  }

  // A compute node fits when its allocation stays under the limit; with
  // `forecast_compute`, when the input order's remaining rise from there
  // would too (conservative: it assumes the rest of the input's peak is ahead).
  bool fits(NodeId v) const {
    const auto from = static_cast<std::size_t>(std::max(frontier_, ctx_.index[v]));
    const std::int64_t rise = std::max<std::int64_t>(0, ctx_.suffix_max_post_alloc[from] - ctx_.input_post_alloc[from]);
    const bool own_fits = static_cast<double>(memory_.post_alloc_if_run(v)) <= budget_;
    if (ctx_.forecast_compute) return static_cast<double>(memory_.post_alloc_if_run(v) + rise) <= budget_;
    if (own_fits && static_cast<double>(memory_.post_alloc_if_run(v) + rise) > budget_) forecast_would_refuse_ = true;
    return own_fits;
  }
  // The first node of `keys` (in order) that fits the budget.
  NodeId first_fitting(const std::set<Key>& keys) const {
    for (const Key& key : keys)
      if (fits(ctx_.order[key.second])) return ctx_.order[key.second];
    return kNone;
  }
  std::pair<NodeId, double> first_fitting_stall() const {
    for (const auto& [at, key] : stalled_)
      if (fits(ctx_.order[key.second])) return {ctx_.order[key.second], at};
    return {kNone, std::numeric_limits<double>::infinity()};
  }
  NodeId first_fitting_feeding_next() const {
    const auto it = compute_by_blocked_.find(static_cast<std::int32_t>(next_collective_));
    return it == compute_by_blocked_.end() ? kNone : first_fitting(it->second);
  }

  // Issuing a collective now holds its output until its reader; the compute
  // scheduled meanwhile will allocate about what it did in the input order.
  double forecast_if_issued(NodeId c) const {
    const auto to = static_cast<std::size_t>(std::max(frontier_, ctx_.first_reader_pos[c]));
    const std::int64_t rise = ctx_.input_curve.query(static_cast<std::size_t>(frontier_), to) - ctx_.input_post_alloc[frontier_];
    return static_cast<double>(memory_.post_alloc_if_run(c) + std::max<std::int64_t>(0, rise));
  }
  // The next collective (input order) when it is ready and due: now only if
  // the comm stream frees up before the next chance to issue (after the next
  // compute node or stall) and memory allows, or when nothing else can run
  // (issued over the limit rather than stall forever).
  NodeId collective_to_issue(NodeId best_compute, NodeId best_stall, double best_stall_at) {
    if (next_collective_ >= ctx_.collectives.size() || !collective_ready_[ctx_.collectives[next_collective_]]) return kNone;
    const NodeId c = ctx_.collectives[next_collective_];
    const double next_chance = best_compute != kNone ? clock_ + rt_[best_compute]
                               : best_stall != kNone  ? best_stall_at
                                                      : std::numeric_limits<double>::infinity();
    if ((ctx_.eager || comm_free_ <= next_chance) && in_flight_allows(c)) {
      if (forecast_if_issued(c) <= issue_limit_) return c;
      held_by_memory_[c] = 1;
    }
    return best_compute == kNone && best_stall == kNone ? c : kNone;
  }
  // v's step as the in-flight count sees it (core/comms/in_flight.h): the
  // wait of every collective in flight it reads, a collective in flight.
  void count_in_flight(NodeId v) {
    for (BufId b : cg_.data_bufs.row(v)) {
      const NodeId c = cg_.producer(b);
      if (!cg_.is_collective(c) || !in_flight_[c]) continue;
      in_flight_[c] = 0;
      --count_[ctx_.collective_kind[c]];
      bytes_in_flight_ -= ctx_.collective_bytes[c];
    }
    if (!cg_.is_collective(v)) return;
    in_flight_[v] = 1;
    ++count_[ctx_.collective_kind[v]];
    bytes_in_flight_ += ctx_.collective_bytes[v];
  }
  // Whether issuing c now keeps its kind's count and the bytes in flight
  // within the limits.
  bool in_flight_allows(NodeId c) const {
    if (!counts_in_flight_) return true;
    const std::int32_t limit = ctx_.limits.count[ctx_.collective_kind[c]];
    if (limit >= 0 && count_[ctx_.collective_kind[c]] >= limit) return false;
    return ctx_.limits.bytes < 0 || bytes_in_flight_ + ctx_.collective_bytes[c] <= ctx_.limits.bytes;
  }

  // The lightest ready node (first in key order among equals): the last resort.
  NodeId lightest_ready() const {
    NodeId lightest = kNone;
    auto consider = [&](const Key& key) {
      const NodeId v = ctx_.order[key.second];
      const std::int64_t size = ctx_.info.node_size[v];
      if (lightest == kNone || size < ctx_.info.node_size[lightest] || (size == ctx_.info.node_size[lightest] && key < key_of(lightest)))
        lightest = v;
    };
    for (const Key& key : free_now_) consider(key);
    for (const Key& key : compute_) consider(key);
    for (const auto& [at, key] : stalled_) consider(key);
    return lightest;
  }

  const ScheduleContext& ctx_;
  const CommGraph& cg_;
  const std::vector<double>& rt_;
  double issue_limit_, budget_;
  std::vector<std::uint8_t>& held_by_memory_;
  MemoryTracker memory_;
  std::vector<double> collective_end_;
  std::vector<std::uint8_t> collective_ready_;
  std::vector<double> start_at_;
  double clock_ = 0, comm_free_ = 0;  // the compute and comm streams' times
  std::set<Key> free_now_, compute_;
  std::map<std::int32_t, std::set<Key>> compute_by_blocked_;
  std::set<std::pair<double, Key>> stalled_;
  std::size_t next_collective_ = 0;
  std::int32_t frontier_ = 0;  // furthest input position scheduled so far
  mutable bool forecast_would_refuse_ = false;
  // In flight (only with limits): per collective, per kind, bytes.
  const bool counts_in_flight_;
  std::vector<std::uint8_t> in_flight_;
  std::array<std::int32_t, kInFlightKinds> count_{};
  std::int64_t bytes_in_flight_ = 0;
};

struct ListSchedule {
  Order order;
  std::vector<std::uint8_t> held_by_memory;
  bool same_with_forecast = false;  // forecast_compute would give the same schedule (known only when off)
};

ListSchedule list_schedule(const ScheduleContext& ctx, double issue_limit, double budget) {
  ListSchedule out;
  out.held_by_memory.assign(static_cast<std::size_t>(ctx.cg.num_nodes()), 0);
  OverlapListStrategy strategy(ctx, issue_limit, budget, out.held_by_memory);
  out.order = schedule_by_comm_deps(ctx.cg, ctx.order, strategy);
  out.same_with_forecast = !ctx.forecast_compute && !strategy.forecast_would_refuse();
  return out;
}

// Inductor's iterative passes as overlap_schedule runs them: the rankings
// often reach the same schedule, so each distinct (pass, budget, order) runs
// once; all runs share the planning info of the input, and what no order
// changes is built at the first run (overlap_schedule_step over 50 000
// nodes runs none).
class IterativeRuns {
 public:
  IterativeRuns(const CommGraph& cg, const CommKnobs& k, const MemoryPlanningInfo& info, const Order& order)
      : cg_(cg), k_(k), info_(info), order_(order) {}

  const Order& reorder(const Order& o, double budget) { return run(Pass::Reorder, o, budget); }
  const Order& sink_waits(const Order& o, double budget) { return run(Pass::SinkWaits, o, budget); }

 private:
  enum class Pass { Reorder, SinkWaits };
  const Order& run(Pass pass, const Order& o, double budget) {
    auto key = std::tuple(pass, budget, o);
    if (auto it = done_.find(key); it != done_.end()) return it->second;
    CommKnobs knobs = k_;
    knobs.reorder_iterative_peak_memory_budget = knobs.sink_iterative_peak_memory_budget = budget;
    constexpr auto kOrderOnly = comms_detail::IterativeReport::OrderOnly;
    if (!graph_) graph_.emplace(comms_detail::make_iterative_graph(cg_, k_, info_, order_));
    Order out = pass == Pass::Reorder ? comms_detail::reorder_communication_preserving_peak_memory(*graph_, o, knobs, kOrderOnly, tree_storage_).order
                                      : comms_detail::sink_waits_iterative(*graph_, o, knobs, kOrderOnly, tree_storage_).order;
    return done_.emplace(std::move(key), std::move(out)).first->second;
  }

  const CommGraph& cg_;
  const CommKnobs& k_;
  const MemoryPlanningInfo& info_;
  const Order& order_;
  std::optional<comms_detail::IterativeGraph> graph_;  // shared by every run
  comms_detail::OrderTree::Storage tree_storage_;  // each run's tree is built in the last one's
  std::map<std::tuple<Pass, double, Order>, Order> done_;
};

// What a pass picks its candidate by: the least exposed communication in
// the two-stream model of the pass's runtimes (overlap_schedule), or the
// shortest step as the plan simulates it, contention and launch path
// included (overlap_schedule_step: CollectivePrices::step_us).
enum class Objective { ExposedComm, StepTime };

// What a candidate must keep to: the peak (allocfree estimate) and the
// collectives in flight.
struct Admission {
  double budget = 0;
  InFlightLimits limits = {};
};

// The candidate schedules weighed so far. One is admitted only as a valid
// schedule within the admission; by exposed communication it is kept when
// it exposes less than the best so far (the input to start with), by step
// time the admitted ones are priced at the end (`choose`), and the fastest
// (of equal ones the lowest peak) kept only when faster than the input
// (where the input is admitted). A graph of n nodes prices clamp(200 000 / n, 2, 64) of them
// (as bucketing weighs its buckets): the input and the fastest of the rest
// by the two-stream model.
class Candidates {
 public:
  Candidates(const CommGraph& cg, const Order& input, std::int64_t input_peak, const MemoryPlanningInfo& info, const Admission& admission,
             Objective objective)
      : cg_(cg),
        info_(info),
        admission_(admission),
        objective_(objective),
        sim_graph_(make_simulation_graph(*cg.graph)),
        input_(input),
        input_peak_(input_peak),
        before_(simulate_two_streams(*cg.graph, sim_graph_, input, cg.runtime_us)),
        best_(before_),
        input_admitted_(admits(input, input_peak_)),
        peak_(input_peak_) {
    seen_.emplace(input, input_admitted_ ? std::optional(input_peak_) : std::nullopt);
  }

  // The candidate's peak when it is a valid schedule within the budget (then
  // it was weighed), else nothing. A schedule seen before is answered from
  // memory: weighing it again changes nothing.
  std::optional<std::int64_t> consider(const Order& candidate, std::vector<std::uint8_t> held_by_memory) {
    if (auto it = seen_.find(candidate); it != seen_.end()) return it->second;
    return seen_.emplace(candidate, weigh(candidate, std::move(held_by_memory))).first->second;
  }

  // By step time: price the admitted candidates and keep the fastest.
  void choose() {
    if (objective_ != Objective::StepTime) return;
    const std::size_t priced = static_cast<std::size_t>(std::clamp<std::int64_t>(200000 / std::max(1, cg_.num_nodes()), 2, 64));
    std::sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) { return a.sim.step_time_us < b.sim.step_time_us; });
    if (pending_.size() > priced - 1) pending_.resize(priced - 1);
    // The input last: a later pass prices its input, the order priced last
    // (the plan's step_us remembers it), and the input is the order kept most.
    Pending* fastest = nullptr;
    double fastest_us = std::numeric_limits<double>::infinity();
    for (Pending& p : pending_)  // equal steps: the lower peak
      if (const double t = step_us(p.order); t < fastest_us || (t == fastest_us && p.peak < fastest->peak)) {
        fastest_us = t;
        fastest = &p;
      }
    input_step_us_ = step_us(input_);
    if (fastest && (!input_admitted_ || fastest_us < input_step_us_)) keep(std::move(*fastest));
    chosen_step_us_ = found_ ? fastest_us : input_step_us_;
    pending_.clear();
  }

  bool found() const { return found_; }
  const Order& order() const { return found_ ? order_ : input_; }
  std::int64_t peak() const { return peak_; }
  std::int64_t input_peak() const { return input_peak_; }
  bool input_admitted() const { return input_admitted_; }
  const Simulation& before() const { return before_; }
  const Simulation& best() const { return best_; }
  const std::vector<std::uint8_t>& held_by_memory() const { return held_by_memory_; }
  double input_step_us() const { return input_step_us_; }
  double chosen_step_us() const { return chosen_step_us_; }

 private:
  struct Pending {
    Order order;
    Simulation sim;  // two-stream, the pass's runtimes
    std::int64_t peak = 0;
    std::vector<std::uint8_t> held_by_memory;
  };

  bool admits(const Order& o, std::int64_t peak) const {
    if (static_cast<double>(peak) > admission_.budget) return false;
    return !admission_.limits.any() || max_in_flight(cg_, o).within(admission_.limits);
  }
  // The plan's simulated step of `o` (its pricing, launch path and
  // contention); without prices, the two-stream model of the pass's runtimes.
  double step_us(const Order& o) const {
    if (cg_.prices && cg_.prices->step_us) return cg_.prices->step_us(o, {});
    return simulate_two_streams(*cg_.graph, sim_graph_, o, cg_.runtime_us).step_time_us;
  }
  void keep(Pending&& p) {
    order_ = std::move(p.order);
    best_ = std::move(p.sim);
    peak_ = p.peak;
    held_by_memory_ = std::move(p.held_by_memory);
    found_ = true;
  }

  std::optional<std::int64_t> weigh(const Order& candidate, std::vector<std::uint8_t> held_by_memory) {
    if (candidate.size() != static_cast<std::size_t>(cg_.num_nodes()) || !respects_comm_deps(cg_, candidate)) return std::nullopt;
    const std::int64_t peak = allocfree_peak(*cg_.graph, info_, candidate);
    if (!admits(candidate, peak)) return std::nullopt;
    Simulation sim = simulate_two_streams(*cg_.graph, sim_graph_, candidate, cg_.runtime_us);
    Pending p{candidate, std::move(sim), peak, std::move(held_by_memory)};
    if (objective_ == Objective::StepTime) pending_.push_back(std::move(p));
    else if ((!found_ && !input_admitted_) || p.sim.exposed_comm_us < best_.exposed_comm_us) keep(std::move(p));
    return peak;
  }

  const CommGraph& cg_;
  const MemoryPlanningInfo& info_;
  Admission admission_;
  Objective objective_;
  const SimulationGraph sim_graph_;  // every candidate is simulated on it
  const Order& input_;
  std::int64_t input_peak_;
  Simulation before_, best_;
  bool input_admitted_;
  Order order_;
  std::int64_t peak_;
  std::vector<std::uint8_t> held_by_memory_;
  bool found_ = false;
  std::vector<Pending> pending_;  // by step time: admitted, not yet priced
  double input_step_us_ = -1, chosen_step_us_ = -1;
  std::map<Order, std::optional<std::int64_t>> seen_;
};

struct OverlapSearch {
  const CommGraph& cg;
  const CommKnobs& k;
  double budget;             // the peak allowed: (1 + overlap budget) x the input's peak, at most the budget in bytes
  std::int64_t input_peak;
  IterativeRuns& runs;
  Candidates& candidates;
  // Whether overlap_schedule's candidates (the just-in-time list schedules,
  // their polish, Inductor's pipeline) and every ranking of the prefetching
  // ones are tried (else the prefetching ones under FeedAll only).
  bool full = true;
};

// overlap_schedule_step tries overlap_schedule's candidates, and the
// prefetching ones under every ranking, on graphs of at most this many
// nodes; on larger ones only the prefetching ones under FeedAll (4 list
// runs), as the iterative passes' runs (about 0.1 s each at 100k nodes, up
// to 17) would cost more than the rest of the plan. On `gen-dist fsdp
// --layers 6250` (h200) the step pass alone then simulates 54.28 s in 2.3 s
// of CPU (the full search: 54.28 s in 4.9 s; overlap_schedule: 55.04 s).
constexpr std::int32_t kStepFullSearchMaxNodes = 50000;

// Polish: Inductor's iterative passes, given only the budget that is left on
// top of `o` (whose peak is `peak`), sink waits and raise collectives past
// what is in between.
void consider_polished(OverlapSearch& search, const Order& o, std::int64_t peak, std::vector<std::uint8_t> held) {
  if (!search.full) return;
  const double left = std::max(0.0, search.budget / static_cast<double>(std::max<std::int64_t>(1, peak)) - 1.0);
  search.candidates.consider(search.runs.reorder(search.runs.sink_waits(o, left), left), std::move(held));
}

// 1. The list scheduler. Prefetching collectives and filling stalls hold
// memory while later compute allocates, so for each ranking the limits are
// lowered step by step until the whole schedule's real peak fits the budget
// (more headroom first: it hides more); that first fit is polished.
// A ranking's run with forecast_compute repeats its run without wherever
// the forecast refuses nothing that was let in: those steps' schedules are
// the same, already weighed (and, for the first fit, polished), so it
// starts after them, and is skipped when they are all it would have run.
void try_list_schedules(OverlapSearch& search, ScheduleContext& ctx) {
  constexpr int kLimitSteps = 8;
  using Ranking = ScheduleContext::Ranking;
  // What the limits tighten towards: the input's peak, or the budget where it is lower.
  const double input_peak = std::min(static_cast<double>(search.input_peak), search.budget);
  std::array<int, 3> steps_run{}, steps_same_with_forecast{};  // per ranking, of its run without forecast
  for (int variant = 0; variant < 6; ++variant) {
    const int ranking = variant % 3;
    ctx.ranking = std::array{Ranking::FeedAll, Ranking::FeedNext, Ranking::InputOrder}[ranking];
    ctx.forecast_compute = variant >= 3;
    if (ctx.forecast_compute && steps_same_with_forecast[ranking] == steps_run[ranking]) continue;
    for (int step = ctx.forecast_compute ? steps_same_with_forecast[ranking] : 0; step <= kLimitSteps; ++step) {
      // Both limits tighten together: the issue limit towards half the input
      // peak, the limit on filling stalls with compute towards the input peak.
      const double frac = static_cast<double>(step) / kLimitSteps;
      const double issue_limit = search.budget - (search.budget - input_peak * 0.5) * frac;
      const double compute_limit = search.budget - (search.budget - input_peak) * frac;
      ListSchedule candidate = list_schedule(ctx, issue_limit, compute_limit);
      if (!ctx.forecast_compute) {
        ++steps_run[ranking];
        if (candidate.same_with_forecast && steps_same_with_forecast[ranking] == step) ++steps_same_with_forecast[ranking];
      }
      if (auto peak = search.candidates.consider(candidate.order, candidate.held_by_memory)) {
        consider_polished(search, candidate.order, *peak, std::move(candidate.held_by_memory));
        break;  // a variant's first fit is its best
      }
    }
  }
}

// 1b. (by step time) Prefetching further: each collective issued as soon as
// it is ready, with at most 1, 2 or 4 of each kind in flight, or as many as
// the knobs allow, each ranking of ready compute (so compute of different
// micro-batches interleaves as the dependencies allow); the issue limit
// lowered until the schedule fits, as above, not polished.
void try_prefetch_schedules(OverlapSearch& search, ScheduleContext& ctx) {
  constexpr int kLimitSteps = 8;
  using Ranking = ScheduleContext::Ranking;
  const double input_peak = std::min(static_cast<double>(search.input_peak), search.budget);
  const InFlightLimits knob_limits = ctx.limits;
  ctx.eager = true;
  ctx.forecast_compute = false;
  for (std::int32_t depth : {1, 2, 4, -1}) {
    ctx.limits = knob_limits.at_most(depth);
    for (Ranking ranking : {Ranking::FeedAll, Ranking::FeedNext, Ranking::InputOrder}) {
      if (!search.full && ranking != Ranking::FeedAll) continue;
      ctx.ranking = ranking;
      for (int step = 0; step <= kLimitSteps; ++step) {
        const double frac = static_cast<double>(step) / kLimitSteps;
        const double issue_limit = search.budget - (search.budget - input_peak * 0.5) * frac;
        const double compute_limit = search.budget - (search.budget - input_peak) * frac;
        ListSchedule candidate = list_schedule(ctx, issue_limit, compute_limit);
        if (search.candidates.consider(candidate.order, std::move(candidate.held_by_memory))) break;
      }
    }
  }
  ctx.eager = false;
  ctx.limits = knob_limits;
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
std::vector<OverlapStat> overlap_stats(const CommGraph& cg, const Candidates& candidates, const char* no_better) {
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
    if (!candidates.found() && !candidates.input_admitted())
      s.limiting_factor = "cannot meet the memory budget or in-flight limits: no schedule within them, input kept";
    else if (!candidates.found()) s.limiting_factor = no_better;
    else if (ct.exposed_us <= 0) s.limiting_factor = "None";
    else if (candidates.held_by_memory()[ct.collective]) s.limiting_factor = "peak memory budget";
    else s.limiting_factor = "dependencies";
    stats.push_back(std::move(s));
  }
  return stats;
}

}  // namespace

namespace {

CommPassResult run_overlap_search(const CommGraph& cg, const Order& order, const CommKnobs& k, Objective objective) {
  const Graph& g = *cg.graph;
  const MemoryPlanningInfo info = planning_info_of(cg, order);
  const AllocFreeEstimate input_memory = estimate_peak_memory_allocfree(g, info, order);
  const std::int64_t input_peak = input_memory.peak;
  const double budget = overlap_peak_budget(k, input_peak);
  ScheduleContext ctx = make_schedule_context(cg, order, info, input_memory);
  ctx.limits = InFlightLimits::from_knobs(k);
  IterativeRuns runs(cg, k, info, order);
  Candidates candidates(cg, order, input_peak, info, {budget, ctx.limits}, objective);
  OverlapSearch search{cg, k, budget, input_peak, runs, candidates,
                       objective == Objective::ExposedComm || cg.num_nodes() <= kStepFullSearchMaxNodes};
  if (search.full) try_list_schedules(search, ctx);
  if (objective == Objective::StepTime) try_prefetch_schedules(search, ctx);
  if (search.full) try_inductor_pipeline(search, order);
  candidates.choose();
  CommPassResult result;
  result.order = candidates.order();
  result.peak_before = input_peak;
  result.peak_after = candidates.found() ? candidates.peak() : input_peak;
  result.stats = overlap_stats(cg, candidates,
                               objective == Objective::StepTime
                                   ? "no schedule within the memory budget and in-flight limits simulated a shorter step: input kept"
                                   : "no schedule within the memory budget exposed less: input kept");
  if (objective == Objective::StepTime) {
    result.step_before_us = candidates.input_step_us();
    result.step_after_us = candidates.chosen_step_us();
  }
  if (!candidates.found() && !candidates.input_admitted()) result.budget_met = false;
  return result;
}

}  // namespace

CommPassResult overlap_schedule(const CommGraph& cg, const Order& order, const CommKnobs& k) {
  return run_overlap_search(cg, order, k, Objective::ExposedComm);
}

CommPassResult overlap_schedule_step(const CommGraph& cg, const Order& order, const CommKnobs& k) {
  return run_overlap_search(cg, order, k, Objective::StepTime);
}

}  // namespace schedlab
