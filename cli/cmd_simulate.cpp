// schedlab simulate: the plan pipeline (core/plan: front end, memory, comm
// passes, two-stream simulation) with simulate's flags, reported as a table:
// the memory-planned order, optionally after comm passes; `--compare` measures
// the baseline, Inductor's recommended pipeline and overlap_schedule at the
// same knobs; `--trace` writes Chrome trace events of the chosen order.
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/io/graph_reader.h"
#include "core/memory/estimate.h"
#include "core/memory/methods.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/plan/plan.h"
#include "core/predict/predicted.h"
#include "core/sim/simulate.h"
#include "core/util/error.h"

namespace schedlab::cli {

namespace {

struct Measured {
  std::string label;
  Simulation sim;
  std::int64_t peak = 0;
};

}  // namespace

int cmd_simulate(const Args& args) {
  ArgReader r(args);
  std::uint64_t max_input = kDefaultMaxInputBytes;
  std::string graph_path, trace_path;
  bool compare = false, overlap = false;
  PlanOptions opts;  // the pipeline `plan` runs, with simulate's flags
  while (!r.done()) {
    std::string a = r.next();
    if (is_flag(a, "--max-input-bytes")) max_input = max_input_bytes_arg(r.value(a));
    else if (is_flag(a, "--comm-passes")) opts.comm_passes = split_list(r.value(a), "--comm-passes");
    else if (is_flag(a, "--trace")) trace_path = r.value(a);
    else if (is_flag(a, "--hardware")) opts.hardware = hardware_profile_arg(r.value(a));
    else if (a == "--model-runtimes") opts.use_graph_runtimes = false;
    else if (is_flag(a, "--runtime-source")) {
      opts.runtime_source = r.value(a);
      if (opts.runtime_source != "calibrated" && opts.runtime_source != "runtime_us")
        throw UsageError("--runtime-source: expected calibrated or runtime_us, got \"" + opts.runtime_source + "\"");
    }
    else if (a == "--no-fuse") opts.fuse = false;
    else if (a == "--compare") compare = true;
    else if (a == "--overlap-view") overlap = true;
    else if (is_flag(a, "--budget")) {
      const double b = number_arg("--budget", r.value(a), 0, 1e9);
      CommKnobs& k = opts.comm;
      k.reorder_iterative_peak_memory_budget = k.sink_iterative_peak_memory_budget = k.overlap_schedule_peak_memory_budget = b;
    } else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option \"" + a + "\"");
    else if (graph_path.empty()) graph_path = a;
    else throw UsageError("unexpected argument \"" + a + "\"");
  }
  if (graph_path.empty()) throw UsageError("missing GRAPH.json");
  const PlanResult plan = run_plan(load_graph_file(graph_path, max_input), opts);
  const Graph& g = plan.planned();
  const Order& input = plan.memory.order();

  std::vector<Measured> rows;
  rows.push_back({"memory-planned order", plan.simulation_before_comm, plan.memory.estimate.peak});
  if (plan.comm) rows.push_back({"after " + std::to_string(opts.comm_passes.size()) + " comm passes", plan.simulation, plan.final_memory.peak});
  if (compare) {
    // Other comm stages on the same memory-planned order, measured as the plan measures its own.
    const MemoryPlanningInfo info = compute_planning_info(g, g.baseline_order());
    auto measure = [&](const std::string& label, const std::vector<std::string>& passes) {
      const Order order = run_comm_passes(g, input, passes, opts.comm, plan.runtimes_us).order;
      rows.push_back({label, simulate_two_streams(g, order, plan.runtimes_us), estimate_peak_memory(g, info, order).peak});
    };
    measure("inductor recommended", inductor_recommended_comm_passes());
    measure("overlap_schedule", {"overlap_schedule"});
  }
  const double budget = static_cast<double>(rows.front().peak) * (1.0 + opts.comm.overlap_schedule_peak_memory_budget);
  std::printf("%s: %d nodes, %zu collectives, runtimes from %s\n", g.name.c_str(), g.num_nodes(), rows.front().sim.collectives.size(),
              opts.runtime_source == "calibrated" ? ("the calibrated model (" + opts.hardware.name + ")").c_str()
              : opts.use_graph_runtimes       ? "runtime_us, else the cost model"
                                              : ("the cost model (" + opts.hardware.name + ")").c_str());
  std::printf("%-24s %14s %14s %12s %12s %10s\n", "order", "step (us)", "exposed (us)", "idle (us)", "peak (MiB)", "<= budget");
  for (const auto& m : rows)
    std::printf("%-24s %14.1f %14.1f %12.1f %12.1f %10s\n", m.label.c_str(), m.sim.step_time_us, m.sim.exposed_comm_us, m.sim.compute_idle_us,
                static_cast<double>(m.peak) / (1 << 20), static_cast<double>(m.peak) <= budget ? "yes" : "NO");
  if (overlap) std::fputs(plan_overlap_view_text(plan).c_str(), stdout);
  if (!trace_path.empty()) {
    write_output(trace_path, chrome_trace_json(g, plan.simulation));
    std::printf("trace of the %s order written to %s\n", plan.comm ? "comm-pass" : "memory-planned", trace_path.c_str());
  }
  return 0;
}

}  // namespace schedlab::cli
