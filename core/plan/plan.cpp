#include "core/plan/plan.h"

#include <algorithm>
#include <cstdio>

#include "core/cost/cost_model.h"
#include "core/memory/estimate.h"
#include "core/memory/planning_info.h"
#include "core/sim/overlap_view.h"
#include "core/util/error.h"

namespace schedlab {

std::vector<std::string> split_list(std::string_view csv, std::string_view what) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= csv.size()) {
    std::size_t end = csv.find(',', start);
    if (end == std::string_view::npos) end = csv.size();
    std::string item(csv.substr(start, end - start));
    if (item.empty()) throw OptionError(std::string(what) + ": empty item in list \"" + std::string(csv) + "\"");
    out.push_back(std::move(item));
    start = end + 1;
  }
  return out;
}

namespace {

// Dependencies -> dead code -> fusion, for a pre-fusion graph.
void front_end_stage(PlanResult& r, const PlanOptions& opts) {
  if (!opts.fuse || !needs_fusion(*r.input)) return;
  r.front_end = run_front_end(*r.input, true, FusionOptions{});
  r.fused_graph = std::make_shared<const Graph>(build_fused_graph(*r.input, r.front_end->deps, r.front_end->fusion.groups));
}

// The memory method's order as the final order, until the comm passes move it.
void take_memory_order(PlanResult& r) {
  r.order = r.memory.order();
  r.final_memory = r.memory.estimate;
  r.final_peak_live = r.memory.peak_live;
  r.executed.reset();
}

void memory_stage(PlanResult& r, const PlanOptions& opts) {
  const Graph& g = r.planned();
  r.memory = reorder_for_peak_memory(g, g.baseline_order(), opts.memory_methods, opts.on_invalid_memory_order);
  take_memory_order(r);
}

// Once per plan: every later stage reads these times.
void pricing_stage(PlanResult& r, const PlanOptions& opts) {
  const SimulatedTimes simulated = opts.runtime_source == "calibrated" ? SimulatedTimes::Calibrated : SimulatedTimes::PassTimes;
  const PricingOptions pricing_options{opts.use_graph_runtimes, simulated, true};
  Pricing p = price_graph(r.planned(), opts.hardware, pricing_options);
  // Measured costs fed back: the model's times of what the traces measured
  // (and of the rest of their kernel classes) replaced, for every later stage.
  if (opts.measured_traces && !opts.measured_traces->empty()) {
    auto measured = std::make_shared<const MeasuredCosts>(
        opts.measured_graph
            ? carry_measured_costs(map_measured_traces(*opts.measured_graph, price_graph(*opts.measured_graph, opts.hardware, pricing_options),
                                                       opts.hardware.contention, *opts.measured_traces),
                                   *opts.measured_graph, r.planned(), p)
            : map_measured_traces(r.planned(), p, opts.hardware.contention, *opts.measured_traces));
    apply_measured_costs(p, *measured);
    r.measured_costs = std::move(measured);
  }
  r.pricing = std::make_shared<const Pricing>(std::move(p));
}

// Memory as executed over r.order, estimated once per order (with the
// scheduler's estimate final_memory, made with the baseline's planning
// info, unless the order changes freeable inputs' sizes).
const ExecutedMemory& executed_memory(PlanResult& r) {
  if (!r.executed) {
    const Graph& g = r.planned();
    const bool sizes_depend_on_order = r.memory.info ? r.memory.info->freeable_sizes_depend_on_order : freeable_input_sizes_depend_on_order(g);
    r.executed = estimate_memory_as_executed(g, r.order, {}, sizes_depend_on_order ? nullptr : &r.final_memory);
  }
  return *r.executed;
}

// `order` simulated as the pricing says: its simulated times, the launch
// path when it times by the calibrated model (the host's fresh allocations
// those of `executed`, memory as executed over this order), and contention.
LaunchModel simulated_launch(const Graph& g, const Pricing& p, const ExecutedMemory* executed) {
  return p.simulates_launch_path() ? launch_path(g, p, false, executed) : LaunchModel{};
}

Simulation simulate_priced(const Graph& g, const Pricing& p, const Order& order, const ExecutedMemory* executed) {
  // The contention is the calibrated model's, as the launch path is.
  return simulate_two_streams(g, order, p.simulated_us(), simulated_launch(g, p, executed), contention_model(p));
}

// Another order simulated as the plan's own are, with `p`: memory as
// executed over that order where the launch path needs it. `info`: the
// memory plan's planning info; given, the scheduler's estimate that memory
// as executed starts from is made with it, as executed_memory does for the
// plan's own order (not where the order changes freeable inputs' sizes),
// instead of planning the order afresh.
Simulation simulate_plan_order(const Graph& g, const Pricing& p, const Order& order, const MemoryPlanningInfo* info = nullptr) {
  std::optional<ExecutedMemory> executed;
  if (p.simulates_launch_path() && p.prices_allocations()) {
    std::optional<PeakMemoryEstimate> estimate;
    if (info && !info->freeable_sizes_depend_on_order) estimate = estimate_peak_memory(g, *info, order);
    executed = estimate_memory_as_executed(g, order, {}, estimate ? &*estimate : nullptr);
  }
  return simulate_priced(g, p, order, executed ? &*executed : nullptr);
}

// The pricing with each bucket's times in its members' place.
Pricing with_buckets(const Pricing& p, const std::vector<CollectiveBucket>& buckets) {
  Pricing out = p;
  out.calibrated_us = bucketed_runtimes(std::move(out.calibrated_us), buckets);
  out.pass_us = bucketed_runtimes(std::move(out.pass_us), buckets);
  // A bucket is one collective: it waits for its peers once, as its first member.
  if (!out.beside_wait_us.empty())
    for (const CollectiveBucket& b : buckets)
      for (std::size_t i = 1; i < b.members.size(); ++i) out.beside_wait_us[b.members[i]] = 0;
  return out;
}

Simulation simulate_order(PlanResult& r) {
  const Pricing& p = r.order_pricing();
  return simulate_priced(r.planned(), p, r.order, p.simulates_launch_path() && p.prices_allocations() ? &executed_memory(r) : nullptr);
}

// As in Inductor, after memory reordering; the final order's memory is
// estimated again since the passes may raise the peak within their budget.
void comms_stage(PlanResult& r, const PlanOptions& opts) {
  const Graph& g = r.planned();
  r.simulation_before_comm = simulate_order(r);
  if (opts.comm_passes.empty()) return;
  std::shared_ptr<CollectivePrices> prices = collective_prices(g, opts.hardware);
  // Bucketing keeps its buckets only when this simulation of them is no
  // slower; overlap_schedule_step picks its order by it. The last order
  // priced without buckets is remembered: a pass after overlap_schedule_step
  // prices its input, the order that pass priced last.
  prices->step_us = [graph = r.fused_graph ? r.fused_graph : r.input, pricing = r.pricing, info = r.memory.info,
                     last = std::make_shared<std::pair<Order, double>>()](const Order& order, const std::vector<CollectiveBucket>& buckets) {
    if (buckets.empty() && !order.empty() && last->first == order) return last->second;
    const double step = simulate_plan_order(*graph, buckets.empty() ? *pricing : with_buckets(*pricing, buckets), order, info.get()).step_time_us;
    if (buckets.empty()) *last = {order, step};
    return step;
  };
  prices->simulation = [graph = r.fused_graph ? r.fused_graph : r.input, pricing = r.pricing, info = r.memory.info](const Order& order) {
    return simulate_plan_order(*graph, *pricing, order, info.get());
  };
  r.comm = run_comm_passes(g, r.order, opts.comm_passes, opts.comm, r.pricing->pass_us, std::move(prices), r.memory.info);
  r.order = r.comm->order;
  r.bucketed_pricing.reset();
  if (std::vector<CollectiveBucket> buckets = pipeline_buckets(*r.comm); !buckets.empty())
    r.bucketed_pricing = std::make_shared<const Pricing>(with_buckets(*r.pricing, buckets));
  r.executed.reset();
  const MemoryPlanningInfo& info = *r.memory.info;  // of g.baseline_order(), as the memory stage planned from
  r.final_memory = estimate_peak_memory(g, info, r.order);
  r.final_peak_live = live_buffers_at(g, info, r.order, r.final_memory.peak_step);
}

void simulation_stage(PlanResult& r, const PlanOptions&) { r.simulation = r.comm ? simulate_order(r) : r.simulation_before_comm; }

// The final order's `predicted` figures. Under the calibrated model (the
// default) the simulation is the default mode's wall: same order, times and
// launch path.
void predict_stage(PlanResult& r, const PlanOptions& opts) {
  const Graph& g = r.planned();
  const Pricing& p = r.order_pricing();
  const ExecutedMemory& executed = executed_memory(r);
  const double wall = p.simulated == SimulatedTimes::Calibrated ? r.simulation.step_time_us : default_mode_wall_us(g, r.order, p, executed);
  r.predicted = predict(g, r.order, p, std::move(*r.executed), wall);
  r.executed.reset();  // predicted.memory holds it
  if (opts.device_memory_bytes > 0) r.device_fit = check_device_fit(g, r.predicted, opts.device_memory_bytes);
}

// Each compared list through the same comms and simulation stages, from the
// same memory plan and pricing: a row equals `plan --comm-passes` with it.
void compare_stage(PlanResult& r, const PlanOptions& opts) {
  if (!opts.compare) return;
  for (auto& [label, passes] : compared_comm_passes()) {
    PlanResult run;
    run.input = r.input;
    run.fused_graph = r.fused_graph;
    run.memory = r.memory;
    take_memory_order(run);
    run.pricing = r.pricing;
    PlanOptions with = opts;
    with.comm_passes = passes;
    with.compare = false;
    comms_stage(run, with);
    simulation_stage(run, with);
    r.compared.push_back({label, passes, std::move(run.simulation), run.final_memory.peak});
  }
}

// The other ranks, each through the whole pipeline with the same options
// (a rank of this very graph reuses this plan), simulated beside this
// plan's final order as rank 0.
void ranks_stage(PlanResult& r, const PlanOptions& opts) {
  if (opts.other_ranks.empty() && opts.rank_compute_factors.empty()) return;
  const std::size_t count = std::max(opts.other_ranks.size() + 1, opts.rank_compute_factors.size());
  if (count != opts.other_ranks.size() + 1)
    throw OptionError("several ranks: " + std::to_string(opts.rank_compute_factors.size()) + " compute factors for " +
                      std::to_string(opts.other_ranks.size() + 1) + " ranks");
  PlanOptions alone = opts;
  alone.other_ranks.clear();
  alone.rank_compute_factors.clear();
  alone.compare = false;
  std::vector<PlanResult> others(opts.other_ranks.size());
  PlanRanks ranks;
  std::vector<RankInput> inputs;
  for (std::size_t i = 0; i < count; ++i) {
    const bool own = i == 0 || opts.other_ranks[i - 1].graph == r.input;
    if (!own) {
      if (!opts.other_ranks[i - 1].graph) throw Error("several ranks: " + opts.other_ranks[i - 1].label + ": no graph");
      others[i - 1] = run_plan(opts.other_ranks[i - 1].graph, alone);
    }
    const PlanResult& plan = own ? r : others[i - 1];
    ranks.graphs.push_back(plan.fused_graph ? plan.fused_graph : plan.input);
    const std::string& name = ranks.graphs.back()->name;
    ranks.labels.push_back(i > 0 ? opts.other_ranks[i - 1].label : !opts.rank_label.empty() ? opts.rank_label : name);
    ranks.compute_factors.push_back(i < opts.rank_compute_factors.size() ? opts.rank_compute_factors[i] : 1.0);
    inputs.push_back(plan_rank_input(plan, ranks.labels.back(), ranks.compute_factors.back()));
  }
  ranks.simulation = simulate_ranks(inputs);
  r.ranks = std::move(ranks);
}

constexpr PlanStage kStages[] = {
    {"front_end", "front_end, fused_graph", front_end_stage},
    {"memory", "memory, order, final_memory, final_peak_live", memory_stage},
    {"pricing", "pricing, measured_costs", pricing_stage},
    {"comms", "simulation_before_comm, comm, order, final_memory, final_peak_live", comms_stage},
    {"simulation", "simulation", simulation_stage},
    {"predict", "predicted, device_fit", predict_stage},
    {"compare", "compared", compare_stage},
    {"ranks", "ranks", ranks_stage},
};

}  // namespace

std::span<const PlanStage> plan_stages() { return kStages; }

Simulation simulate_plan_order(const PlanResult& r, const Order& order) { return simulate_plan_order(r.planned(), r.order_pricing(), order); }

RankInput plan_rank_input(const PlanResult& r, std::string label, double compute_factor) {
  const Graph& g = r.planned();
  const Pricing& p = r.order_pricing();
  RankInput in;
  in.label = std::move(label);
  in.graph = &g;
  in.order = r.order;
  in.runtime_us = compute_factor == 1.0 ? p.simulated_us() : with_compute_scaled(g, p.simulated_us(), compute_factor);
  // predicted.memory: memory as executed over the final order, which the
  // simulation stage's launch path read.
  in.launch = simulated_launch(g, p, p.prices_allocations() ? &r.predicted.memory : nullptr);
  in.contention = contention_model(p);
  return in;
}

std::vector<std::pair<std::string, std::vector<std::string>>> compared_comm_passes() {
  return {{"inductor recommended", inductor_recommended_comm_passes()}, {"overlap_schedule", {"overlap_schedule"}}};
}

PlanResult run_plan(std::shared_ptr<const Graph> input, const PlanOptions& opts) { return run_plan(std::move(input), opts, {}); }

PlanResult run_plan(std::shared_ptr<const Graph> input, const PlanOptions& opts,
                    const std::function<void(const PlanStage&)>& before_stage) {
  check_comm_pass_names(opts.comm_passes);
  PlanResult r;
  r.input = std::move(input);
  for (const PlanStage& stage : kStages) {
    if (before_stage) before_stage(stage);
    stage.run(r, opts);
  }
  return r;
}

PlanResult run_plan(Graph input, const PlanOptions& opts) { return run_plan(std::make_shared<const Graph>(std::move(input)), opts); }

std::string_view node_at_step(const Graph& g, const Order& order, std::int32_t step) {
  return step >= 0 && step < static_cast<std::int32_t>(order.size()) ? std::string_view(g.nodes[order[step]].name) : std::string_view();
}

std::string plan_to_text(const PlanResult& r) {
  const Graph& input = *r.input;
  const Graph& g = r.planned();
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "graph %s: %d nodes, %d buffers (%d inputs)\n", g.name.empty() ? "(unnamed)" : g.name.c_str(),
                g.num_nodes(), g.num_buffers() - g.num_inputs, g.num_inputs);
  out += line;
  if (r.front_end) {
    std::size_t fused = 0;
    for (const auto& grp : r.front_end->fusion.groups) fused += grp.size() > 1;
    std::snprintf(line, sizeof line, "front end: %d pre-fusion nodes, %zu dead removed, fused into %zu nodes (%zu groups) in %d rounds\n",
                  input.num_nodes(), r.front_end->eliminated.size(), r.front_end->fusion.groups.size(), fused, r.front_end->fusion.rounds);
    out += line;
  }
  out += "memory methods (peak):\n";
  const auto& chosen = r.memory.methods[r.memory.chosen];
  for (const auto& m : r.memory.methods) {
    if (!m.error.empty()) {
      std::snprintf(line, sizeof line, "  %-9s failed: %s\n", m.method.c_str(), m.error.c_str());
    } else {
      std::snprintf(line, sizeof line, "  %-9s %14s  (%lld bytes)%s\n", m.method.c_str(), human_bytes(m.peak).c_str(),
                    static_cast<long long>(m.peak), &m == &chosen ? "  <- chosen" : "");
    }
    out += line;
  }
  // The final order's peak (what runs), and the memory method's beside it,
  // each with its own step and the node its own order runs there.
  const auto peak_line = [&](const char* what, const PeakMemoryEstimate& est, const Order& order) {
    std::snprintf(line, sizeof line, "%s %s at step %d of %zu", what, human_bytes(est.peak).c_str(), est.peak_step, order.size());
    std::string text = line;
    const std::string_view node = node_at_step(g, order, est.peak_step);
    if (!node.empty()) text += " (while running " + std::string(node) + ")";
    return text + "\n";
  };
  out += peak_line("peak", r.final_memory, r.order);
  if (r.comm) out += peak_line(("  memory method's (" + chosen.method + ") peak").c_str(), r.memory.estimate, r.memory.order());
  out += r.final_peak_live.empty() ? "live at the peak: nothing\n" : "live at the peak, largest first:\n";
  std::size_t shown = 0;
  std::int64_t rest = 0;
  for (const auto& lb : r.final_peak_live) {
    if (shown < 10) {
      const Buffer& b = g.buffers[lb.buf];
      std::snprintf(line, sizeof line, "  %-24s %12s  %s\n", b.name.c_str(), human_bytes(lb.bytes).c_str(),
                    b.is_input ? "input" : ("from " + g.nodes[b.producer].name).c_str());
      out += line;
      ++shown;
    } else {
      rest += lb.bytes;
    }
  }
  if (r.final_peak_live.size() > shown) {
    std::snprintf(line, sizeof line, "  ... %zu more, %s\n", r.final_peak_live.size() - shown, human_bytes(rest).c_str());
    out += line;
  }
  out += prediction_to_text(r.predicted);
  if (r.device_fit) out += device_fit_to_text(*r.device_fit);
  if (!r.simulation.collectives.empty()) {
    std::snprintf(line, sizeof line, "two-stream simulation: step %.1f us, exposed comm %.1f us (%zu collectives)", r.simulation.step_time_us,
                  r.simulation.exposed_comm_us, r.simulation.collectives.size());
    out += line;
    if (r.comm) {
      std::snprintf(line, sizeof line, "; before comm passes: step %.1f us, exposed %.1f us", r.simulation_before_comm.step_time_us,
                    r.simulation_before_comm.exposed_comm_us);
      out += line;
    }
    out += "\n";
  }
  if (r.ranks) {
    const RanksSimulation& rs = r.ranks->simulation;
    std::snprintf(line, sizeof line, "several ranks: %zu, slowest rank %d, step %.1f us", rs.ranks.size(), rs.slowest_rank, rs.step_time_us());
    out += line;
    if (const std::vector<std::int32_t> largest = largest_skews(rs, 1); !largest.empty()) {
      const RankCollective& c = rs.collectives[largest[0]];
      std::snprintf(line, sizeof line, "; largest arrival skew %.1f us (%s, last rank %d)", c.skew_us(), g.nodes[c.node[0]].name.c_str(), c.latest_rank);
      out += line;
    }
    out += "\n";
  }
  for (const ComparedPasses& c : r.compared) {
    std::snprintf(line, sizeof line, "compared %s: step %.1f us, exposed comm %.1f us, peak %s\n", c.label.c_str(), c.simulation.step_time_us,
                  c.simulation.exposed_comm_us, human_bytes(c.peak_bytes).c_str());
    out += line;
  }
  return out;
}

std::string plan_overlap_view_text(const PlanResult& r) {
  const Graph& g = r.planned();
  return overlap_view_to_text(g, overlap_view(g, r.order, r.order_pricing().simulated_us(), r.simulation));
}

}  // namespace schedlab
