// schedlab simulate: the two-stream model (core/sim) of a graph's
// memory-planned order, optionally after comm passes; `--compare` measures
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
#include "core/sim/simulate.h"
#include "core/util/error.h"

namespace schedlab::cli {

namespace {

struct Measured {
  std::string label;
  Simulation sim;
  std::int64_t peak = 0;
};

Measured measure(const Graph& g, const MemoryPlanningInfo& info, const std::string& label, const Order& order,
                 const std::vector<double>& runtimes) {
  return {label, simulate_two_streams(g, order, runtimes), estimate_peak_memory(g, info, order).peak};
}

}  // namespace

int cmd_simulate(const Args& args) {
  ArgReader r(args);
  std::uint64_t max_input = kDefaultMaxInputBytes;
  std::string graph_path, trace_path, hardware(kDefaultHardwareProfile);
  std::vector<std::string> passes;
  bool compare = false, model_runtimes = false;
  CommKnobs knobs;
  while (!r.done()) {
    std::string a = r.next();
    if (is_flag(a, "--max-input-bytes")) max_input = max_input_bytes_arg(r.value(a));
    else if (is_flag(a, "--comm-passes")) passes = split_list(r.value(a), "--comm-passes");
    else if (is_flag(a, "--trace")) trace_path = r.value(a);
    else if (is_flag(a, "--hardware")) hardware = r.value(a);
    else if (a == "--model-runtimes") model_runtimes = true;
    else if (a == "--compare") compare = true;
    else if (is_flag(a, "--budget")) {
      std::string v = r.value(a);
      const double b = number_arg("--budget", v, 0, 1e9);
      knobs.reorder_iterative_peak_memory_budget = knobs.sink_iterative_peak_memory_budget = knobs.overlap_schedule_peak_memory_budget = b;
    } else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option \"" + a + "\"");
    else if (graph_path.empty()) graph_path = a;
    else throw UsageError("unexpected argument \"" + a + "\"");
  }
  if (graph_path.empty()) throw UsageError("missing GRAPH.json");
  Graph g = load_graph_file(graph_path, max_input);
  // --model-runtimes ignores the graph's runtime_us (e.g. the fixtures' 2.11
  // matmul estimates) and times every node with the cost model.
  const auto runtimes = estimate_runtimes_us(g, builtin_profile(hardware), !model_runtimes);
  MemoryPlan memory = reorder_for_peak_memory(g, g.baseline_order(), default_memory_methods());
  const Order input = memory.order();
  const MemoryPlanningInfo info = compute_planning_info(g, input);

  std::vector<Measured> rows;
  rows.push_back(measure(g, info, "memory-planned order", input, runtimes));
  Order chosen = input;
  if (!passes.empty()) {
    chosen = run_comm_passes(g, input, passes, knobs, runtimes).order;
    rows.push_back(measure(g, info, "after " + std::to_string(passes.size()) + " comm passes", chosen, runtimes));
  }
  if (compare) {
    rows.push_back(measure(g, info, "inductor recommended", run_comm_passes(g, input, inductor_recommended_comm_passes(), knobs, runtimes).order,
                           runtimes));
    rows.push_back(measure(g, info, "overlap_schedule", run_comm_passes(g, input, {"overlap_schedule"}, knobs, runtimes).order, runtimes));
  }
  const double budget = static_cast<double>(rows.front().peak) * (1.0 + knobs.overlap_schedule_peak_memory_budget);
  std::printf("%s: %d nodes, %zu collectives, runtimes from %s\n", g.name.c_str(), g.num_nodes(), rows.front().sim.collectives.size(),
              model_runtimes ? ("the cost model (" + hardware + ")").c_str() : "runtime_us, else the cost model");
  std::printf("%-24s %14s %14s %12s %12s %10s\n", "order", "step (us)", "exposed (us)", "idle (us)", "peak (MiB)", "<= budget");
  for (const auto& m : rows)
    std::printf("%-24s %14.1f %14.1f %12.1f %12.1f %10s\n", m.label.c_str(), m.sim.step_time_us, m.sim.exposed_comm_us, m.sim.compute_idle_us,
                static_cast<double>(m.peak) / (1 << 20), static_cast<double>(m.peak) <= budget ? "yes" : "NO");
  if (!trace_path.empty()) {
    write_output(trace_path, chrome_trace_json(g, simulate_two_streams(g, chosen, runtimes)));
    std::printf("trace of the %s order written to %s\n", passes.empty() ? "memory-planned" : "comm-pass", trace_path.c_str());
  }
  return 0;
}

}  // namespace schedlab::cli
