// schedlab simulate: the plan pipeline (core/plan: front end, memory, comm
// passes, two-stream simulation) with simulate's flags, reported as a table:
// the memory-planned order, optionally after comm passes; `--compare` adds
// the plan's compared rows (Inductor's recommended pipeline and
// overlap_schedule at the same knobs, each what `plan --comm-passes` with it
// reports); `--trace` writes Chrome trace events of the chosen order.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/cost/cost_model.h"
#include "core/io/files.h"
#include "core/io/graph_reader.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/plan/plan.h"
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
  std::string graph_path, trace_path;
  std::uint64_t max_input = kDefaultMaxInputBytes;
  bool overlap_view = false;
  double budget = 0;  // --budget, when given
  PlanOptions opts;  // the pipeline `plan` runs, with simulate's flags
};

int run(const SimulateArgs& a) {
  const PlanOptions& opts = a.opts;
  const PlanResult plan = run_plan(load_graph_file(a.graph_path, a.max_input), opts);
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
  app.add_option("GRAPH.json", a->graph_path, "schedgraph/1 file, pre- or post-fusion (- for stdin)")->required();
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
