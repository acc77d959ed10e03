// schedlab simulate: the plan pipeline (core/plan: front end, memory, comm
// passes, two-stream simulation) with simulate's flags, reported as a table:
// the memory-planned order, optionally after comm passes; `--compare` adds
// the plan's compared rows (Inductor's recommended pipeline and
// overlap_schedule at the same knobs, each what `plan --comm-passes` with it
// reports); `--trace` writes Chrome trace events of the chosen order.
// Several graphs (one per rank), `--ranks N` or `--rank-skew` simulate
// several ranks of the step (core/sim/ranks.h): each rank's graph planned
// alike, the ranks meeting at their collectives; `--format json` writes that
// report (one rank for one graph), `--trace` one process per rank.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/cost/cost_model.h"
#include "core/io/files.h"
#include "core/io/graph_reader.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/plan/plan.h"
#include "core/sim/ranks.h"
#include "core/sim/simulate.h"
#include "core/util/error.h"

namespace schedlab::cli {

namespace {

struct Measured {
  std::string label;
  Simulation sim;
  std::int64_t peak = 0;
};

struct SimulateArgs {
  std::vector<std::string> graph_paths;
  std::string trace_path, format = "text", rank_skew;
  int ranks = 0;  // --ranks, when given
  std::uint64_t max_input = kDefaultMaxInputBytes;
  bool overlap_view = false;
  double budget = 0;  // --budget, when given
  PlanOptions opts;  // the pipeline `plan` runs, with simulate's flags
};

// "--rank-skew 0:1.0,2:1.03": rank -> compute speed factor, 1 elsewhere.
std::vector<double> compute_factors(const std::string& spec, std::size_t ranks) {
  std::vector<double> factor(ranks, 1.0);
  if (spec.empty()) return factor;
  for (const std::string& item : split_list(spec, "--rank-skew")) {
    const std::size_t colon = item.find(':');
    const std::string where = "--rank-skew: \"" + item + "\"";
    if (colon == std::string::npos) throw UsageError(where + " is not RANK:FACTOR");
    std::size_t used = 0;
    long rank = -1;
    double f = 0;
    try {
      rank = std::stol(item.substr(0, colon), &used);
      if (used != colon) throw std::invalid_argument("rank");
      const std::string value = item.substr(colon + 1);
      f = std::stod(value, &used);
      if (used != value.size()) throw std::invalid_argument("factor");
    } catch (const std::exception&) {
      throw UsageError(where + " is not RANK:FACTOR");
    }
    if (rank < 0 || static_cast<std::size_t>(rank) >= ranks)
      throw UsageError(where + ": rank " + std::to_string(rank) + " is not one of the " + std::to_string(ranks) + " ranks");
    if (!(f > 0) || !std::isfinite(f) || f > 1e6) throw UsageError(where + ": the factor is not a positive number");
    factor[static_cast<std::size_t>(rank)] = f;
  }
  return factor;
}

// Several ranks: the plan's ranks stage (each rank's graph planned alike,
// simulated side by side), reported per rank.
int run_ranks(const SimulateArgs& a) {
  if (a.opts.compare) throw UsageError("--compare: one rank's report; not with several ranks");
  if (a.overlap_view) throw UsageError("--overlap-view: one rank's report; not with several ranks");
  if (a.ranks > 0 && a.graph_paths.size() > 1 && static_cast<std::size_t>(a.ranks) != a.graph_paths.size())
    throw UsageError("--ranks " + std::to_string(a.ranks) + ": " + std::to_string(a.graph_paths.size()) + " graphs given, one per rank");
  const std::size_t count = a.graph_paths.size() > 1 ? a.graph_paths.size() : static_cast<std::size_t>(std::max(a.ranks, 1));
  PlanOptions opts = a.opts;
  opts.rank_compute_factors = compute_factors(a.rank_skew, count);
  opts.rank_label = a.graph_paths[0];
  if (!a.trace_path.empty()) check_outputs({a.trace_path});
  auto graph = std::make_shared<const Graph>(load_graph_file(a.graph_paths[0], a.max_input));
  for (std::size_t r = 1; r < count; ++r) {
    // One graph for every rank: the same graph, planned once.
    if (a.graph_paths.size() == 1) opts.other_ranks.push_back({a.graph_paths[0], graph});
    else opts.other_ranks.push_back({a.graph_paths[r], std::make_shared<const Graph>(load_graph_file(a.graph_paths[r], a.max_input))});
  }
  const PlanResult plan = run_plan(graph, opts);
  const PlanRanks& ranks = *plan.ranks;
  const RanksSimulation& sim = ranks.simulation;
  if (a.format == "json") {
    std::fputs(ranks_json(ranks).c_str(), stdout);
  } else {
    std::printf("%zu ranks, %zu collectives each, matched by their order of issue; runtimes from %s\n", count, sim.collectives.size(),
                opts.runtime_source == "calibrated" ? ("the calibrated model (" + opts.hardware.name + ")").c_str() : "runtime_us");
    std::printf("%-5s %9s %12s %13s %12s  %s\n", "rank", "compute x", "step (us)", "exposed (us)", "idle (us)", "graph");
    for (std::size_t r = 0; r < count; ++r) {
      const Simulation& s = sim.ranks[r];
      std::printf("%-5zu %9.3f %12.1f %13.1f %12.1f  %s\n", r, ranks.compute_factors[r], s.step_time_us, s.exposed_comm_us, s.compute_idle_us,
                  ranks.labels[r].c_str());
    }
    std::printf("slowest rank: %d (%s), step %.1f us\n", sim.slowest_rank, ranks.labels[sim.slowest_rank].c_str(), sim.step_time_us());
    const std::vector<std::int32_t> largest = largest_skews(sim, 5);
    if (!largest.empty() && sim.collectives[largest[0]].skew_us() > 0) {
      std::printf("largest arrival skews (latest issue minus earliest):\n");
      for (std::int32_t k : largest) {
        const RankCollective& c = sim.collectives[k];
        if (c.skew_us() <= 0) break;
        std::printf("  %-24s %10.1f us  first rank %d, last rank %d\n", ranks.graphs[0]->nodes[c.node[0]].name.c_str(), c.skew_us(),
                    c.earliest_rank, c.latest_rank);
      }
    } else {
      std::printf("no arrival skew: every rank issues every collective at the same time\n");
    }
  }
  if (!a.trace_path.empty()) {
    write_output(a.trace_path, ranks_chrome_trace_json(ranks));
    if (a.format != "json") std::printf("trace of %zu ranks written to %s\n", count, a.trace_path.c_str());
  }
  return 0;
}

int run(const SimulateArgs& a) {
  if (a.graph_paths.size() > 1 || a.ranks > 0 || !a.rank_skew.empty() || a.format == "json") return run_ranks(a);
  const PlanOptions& opts = a.opts;
  const PlanResult plan = run_plan(load_graph_file(a.graph_paths[0], a.max_input), opts);
  if (!a.trace_path.empty()) check_outputs({a.trace_path});  // refused before the report, not after it
  const Graph& g = plan.planned();

  std::vector<Measured> rows;
  rows.push_back({"memory-planned order", plan.simulation_before_comm, plan.memory.estimate.peak});
  if (plan.comm) rows.push_back({"after " + std::to_string(opts.comm_passes.size()) + " comm passes", plan.simulation, plan.final_memory.peak});
  for (const ComparedPasses& c : plan.compared) rows.push_back({c.label, c.simulation, c.peak_bytes});
  const double budget = static_cast<double>(rows.front().peak) * (1.0 + opts.comm.overlap_schedule_peak_memory_budget);
  std::printf("%s: %d nodes, %zu collectives, runtimes from %s\n", g.name.c_str(), g.num_nodes(), rows.front().sim.collectives.size(),
              opts.runtime_source == "calibrated" ? ("the calibrated model (" + opts.hardware.name + ")").c_str()
              : opts.use_graph_runtimes       ? "runtime_us, else the cost model"
                                              : ("the cost model (" + opts.hardware.name + ")").c_str());
  std::printf("%-24s %14s %14s %12s %12s %10s\n", "order", "step (us)", "exposed (us)", "idle (us)", "peak (MiB)", "<= budget");
  for (const auto& m : rows)
    std::printf("%-24s %14.1f %14.1f %12.1f %12.1f %10s\n", m.label.c_str(), m.sim.step_time_us, m.sim.exposed_comm_us, m.sim.compute_idle_us,
                static_cast<double>(m.peak) / (1 << 20), static_cast<double>(m.peak) <= budget ? "yes" : "NO");
  if (a.overlap_view) std::fputs(plan_overlap_view_text(plan).c_str(), stdout);
  if (!a.trace_path.empty()) {
    write_output(a.trace_path, chrome_trace_json(g, plan.simulation));
    std::printf("trace of the %s order written to %s\n", plan.comm ? "comm-pass" : "memory-planned", a.trace_path.c_str());
  }
  return 0;
}

}  // namespace

std::function<int()> define_simulate(CLI::App& app) {
  auto a = std::make_shared<SimulateArgs>();
  app.add_option("GRAPH.json", a->graph_paths,
                 "schedgraph/1 file, pre- or post-fusion (- for stdin); several: one per rank, rank 0 first, simulated side by side")
      ->required();
  add_int_option(app, "--ranks", a->ranks, 1, 65536, "simulate N ranks (of the one graph given, or one per graph given)");
  app.add_option("--rank-skew", a->rank_skew, "per-rank compute speed factors, RANK:FACTOR,... (1.03: 3 % slower; others 1)")
      ->option_text("R:F,...");
  add_choice_option(app, "--format", a->format, {"json", "text"}, "text (the default) or the several-rank report as JSON");
  add_memory_methods_option(app, a->opts.memory_methods);
  add_comm_passes_option(app, a->opts.comm_passes);
  app.add_flag("--compare", a->opts.compare,
               "also run Inductor's recommended comm passes and overlap_schedule on the same memory-planned order, each as plan --comm-passes does");
  CLI::Option* budget = add_number_option(app, "--budget", a->budget, 0, 1e9,
                                          "peak-memory budget of every comm pass that has one, a fraction of the input's peak "
                                          "(default " + std::to_string(CommKnobs{}.overlap_schedule_peak_memory_budget) + ")");
  add_output_option(app, "--trace", a->trace_path, "write Chrome trace events of the chosen order")->option_text("TRACE.json");
  app.add_flag_callback("--model-runtimes", [a] { a->opts.use_graph_runtimes = false; }, "time every node with the cost model, ignoring runtime_us");
  add_runtime_source_option(app, a->opts.runtime_source);
  add_hardware_option(app, a->opts.hardware);
  const std::function<void()> at_host_speed = add_host_probe_option(app, a->opts.hardware);
  const std::function<void()> read_measured_traces = add_measured_trace_option(app, a->opts);
  app.add_flag_callback("--no-fuse", [a] { a->opts.fuse = false; }, "simulate a pre-fusion graph as it is, without Inductor's fusion");
  app.add_flag("--overlap-view", a->overlap_view, "add the final order node by node, with the simulation's stalls");
  add_max_input_bytes_option(app, a->max_input);
  return [a, budget, at_host_speed, read_measured_traces] {
    at_host_speed();
    read_measured_traces();
    if (budget->count() > 0) {
      CommKnobs& k = a->opts.comm;
      k.reorder_iterative_peak_memory_budget = k.sink_iterative_peak_memory_budget = k.overlap_schedule_peak_memory_budget = a->budget;
    }
    return run(*a);
  };
}

}  // namespace schedlab::cli
