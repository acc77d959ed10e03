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

// The runtimes and launch path the simulation times nodes by (the comm
// passes read the graph's runtime_us separately, as Inductor does).
struct Timing {
  std::vector<double> runtimes;
  LaunchModel launch;
};

Measured measure(const Graph& g, const MemoryPlanningInfo& info, const std::string& label, const Order& order, const Timing& t) {
  return {label, simulate_two_streams(g, order, t.runtimes, t.launch), estimate_peak_memory(g, info, order).peak};
}

}  // namespace

int cmd_simulate(const Args& args) {
  ArgReader r(args);
  std::string graph_path, trace_path, hardware(kDefaultHardwareProfile), runtime_source = "calibrated";
  std::vector<std::string> passes;
  bool compare = false, model_runtimes = false;
  CommKnobs knobs;
  while (!r.done()) {
    std::string a = r.next();
    if (a.rfind("--comm-passes", 0) == 0) passes = split_list(r.value(a), "--comm-passes");
    else if (a.rfind("--trace", 0) == 0) trace_path = r.value(a);
    else if (a.rfind("--hardware", 0) == 0) hardware = r.value(a);
    else if (a == "--model-runtimes") model_runtimes = true;
    else if (a.rfind("--runtime-source", 0) == 0) {
      runtime_source = r.value(a);
      if (runtime_source != "calibrated" && runtime_source != "runtime_us")
        throw UsageError("--runtime-source: expected calibrated or runtime_us, got \"" + runtime_source + "\"");
    }
    else if (a == "--compare") compare = true;
    else if (a.rfind("--budget", 0) == 0) {
      std::string v = r.value(a);
      try {
        double b = std::stod(v);
        if (!(b >= 0)) throw std::invalid_argument("negative");
        knobs.reorder_iterative_peak_memory_budget = knobs.sink_iterative_peak_memory_budget = knobs.overlap_schedule_peak_memory_budget = b;
      } catch (const std::exception&) {
        throw UsageError("--budget: expected a non-negative number, got \"" + v + "\"");
      }
    } else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option \"" + a + "\"");
    else if (graph_path.empty()) graph_path = a;
    else throw UsageError("unexpected argument \"" + a + "\"");
  }
  if (graph_path.empty()) throw UsageError("missing GRAPH.json");
  const HardwareProfile hw = load_hardware_profile(hardware);
  Graph g = load_graph_file(graph_path);
  // The comm passes read runtime_us (Inductor's estimate), else the cost
  // model; --model-runtimes ignores runtime_us (e.g. the fixtures' 2.11
  // matmul estimates) there too.
  const auto runtimes = estimate_runtimes_us(g, hw, !model_runtimes);
  const bool calibrated = runtime_source == "calibrated";
  const Timing timing{calibrated ? calibrated_runtimes_us(g, hw) : runtimes, calibrated ? launch_model(g, hw, false) : LaunchModel{}};
  MemoryPlan memory = reorder_for_peak_memory(g, g.baseline_order(), default_memory_methods());
  const Order input = memory.order();
  const MemoryPlanningInfo info = compute_planning_info(g, input);

  std::vector<Measured> rows;
  rows.push_back(measure(g, info, "memory-planned order", input, timing));
  Order chosen = input;
  if (!passes.empty()) {
    chosen = run_comm_passes(g, input, passes, knobs, runtimes).order;
    rows.push_back(measure(g, info, "after " + std::to_string(passes.size()) + " comm passes", chosen, timing));
  }
  if (compare) {
    rows.push_back(measure(g, info, "inductor recommended", run_comm_passes(g, input, inductor_recommended_comm_passes(), knobs, runtimes).order,
                           timing));
    rows.push_back(measure(g, info, "overlap_schedule", run_comm_passes(g, input, {"overlap_schedule"}, knobs, runtimes).order, timing));
  }
  const double budget = static_cast<double>(rows.front().peak) * (1.0 + knobs.overlap_schedule_peak_memory_budget);
  const std::string source = calibrated ? std::string(hw.time_model ? "the calibrated model" : "the roofline") + " (" + hw.name + ")"
                                        : model_runtimes ? "the cost model (" + hw.name + ")" : "runtime_us, else the cost model";
  std::printf("%s: %d nodes, %zu collectives, simulated with runtimes from %s; comm passes read %s\n", g.name.c_str(), g.num_nodes(),
              rows.front().sim.collectives.size(), source.c_str(), model_runtimes ? "the cost model" : "runtime_us (Inductor's estimate)");
  std::printf("%-24s %14s %14s %12s %12s %10s\n", "order", "step (us)", "exposed (us)", "idle (us)", "peak (MiB)", "<= budget");
  for (const auto& m : rows)
    std::printf("%-24s %14.1f %14.1f %12.1f %12.1f %10s\n", m.label.c_str(), m.sim.step_time_us, m.sim.exposed_comm_us, m.sim.compute_idle_us,
                static_cast<double>(m.peak) / (1 << 20), static_cast<double>(m.peak) <= budget ? "yes" : "NO");
  if (!trace_path.empty()) {
    write_output(trace_path, chrome_trace(g, simulate_two_streams(g, chosen, timing.runtimes, timing.launch)).dump() + "\n");
    std::printf("trace of the %s order written to %s\n", passes.empty() ? "memory-planned" : "comm-pass", trace_path.c_str());
  }
  return 0;
}

}  // namespace schedlab::cli
