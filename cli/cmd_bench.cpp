// `schedlab bench GRAPH`: where the time goes (read, parse+validate,
// planning info, each memory method, estimation), then the whole pipeline as
// `plan` runs it (run_plan), stage by stage. Best of --repeat runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/io/options.h"
#include "core/io/graph_reader.h"
#include "core/memory/methods.h"
#include "core/plan/plan.h"
#include "core/util/error.h"

namespace schedlab::cli {
namespace {

double best_ms(int repeat, const std::function<void()>& fn) {
  double best = 1e300;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

struct BenchArgs {
  std::string path;
  std::uint64_t max_input = kDefaultMaxInputBytes;
  std::int32_t repeat = 3;
  std::vector<std::string> methods = default_memory_methods();
  std::vector<std::string> comm_passes;
};

// run_plan stage by stage: each stage's milliseconds, best of `repeat`, and
// the best whole run.
void bench_pipeline(const Graph& g, const BenchArgs& a) {
  PlanOptions opts;
  opts.memory_methods = a.methods;
  opts.comm_passes = a.comm_passes;
  const auto stages = plan_stages();
  std::vector<double> best(stages.size(), 1e300);
  double best_total = 1e300;
  const auto graph = std::make_shared<const Graph>(g);
  for (int i = 0; i < a.repeat; ++i) {
    std::vector<double> ms(stages.size(), 0.0);
    std::size_t at = 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto last = t0;
    const auto lap = [&](std::size_t next) {
      const auto now = std::chrono::steady_clock::now();
      if (next > 0) ms[next - 1] = std::chrono::duration<double, std::milli>(now - last).count();
      last = now;
    };
    const PlanResult result = run_plan(graph, opts, [&](const PlanStage&) { lap(at++); });
    lap(at);  // before the result is freed
    best_total = std::min(best_total, std::chrono::duration<double, std::milli>(last - t0).count());
    for (std::size_t s = 0; s < stages.size(); ++s) best[s] = std::min(best[s], ms[s]);
  }
  std::printf("  run_plan, stage by stage%s:\n", a.comm_passes.empty() ? "" : " (with the comm passes)");
  for (std::size_t s = 0; s < stages.size(); ++s) std::printf("    %-20s %10.1f ms\n", std::string(stages[s].name).c_str(), best[s]);
  std::printf("  %-22s %10.1f ms\n", "run_plan", best_total);
}

int run(const BenchArgs& a) {
  for (const auto& m : a.methods)
    if (!find_memory_method(m)) throw UsageError("--memory-methods: unknown method \"" + m + "\"");

  std::string text;
  double read_ms = best_ms(1, [&] { text = read_input(a.path, a.max_input); });
  Graph g;
  double load_ms = best_ms(a.repeat, [&] { g = load_graph(text); });
  std::size_t edges = 0;
  for (const auto& n : g.nodes) edges += n.reads.size();
  std::printf("graph %s: %d nodes, %zu reads, %.1f MB of JSON\n", a.path.c_str(), g.num_nodes(), edges, text.size() / 1e6);
  std::printf("  %-22s %10.1f ms\n", "read file", read_ms);
  std::printf("  %-22s %10.1f ms\n", "parse + validate", load_ms);
  const Order input = g.baseline_order();
  MemoryPlanningInfo info;
  double info_ms = best_ms(a.repeat, [&] { info = compute_planning_info(g, input); });
  std::printf("  %-22s %10.1f ms\n", "planning info", info_ms);
  double total = info_ms;
  for (const auto& name : a.methods) {
    const MemoryMethod* m = find_memory_method(name);
    Order order;
    double ms = best_ms(a.repeat, [&] { order = m->run(g, info, input); });
    std::int64_t peak = 0;
    double est_ms = best_ms(a.repeat, [&] { peak = estimate_peak_memory(g, info, order).peak; });
    total += ms + est_ms;
    std::printf("  %-22s %10.1f ms  (+%.1f ms estimate)  peak %s\n", ("method " + name).c_str(), ms, est_ms, human_bytes(peak).c_str());
  }
  std::printf("  %-22s %10.1f ms\n", "planning total", total);
  double plan_ms = best_ms(a.repeat, [&] { (void)reorder_for_peak_memory(g, input, a.methods); });
  std::printf("  %-22s %10.1f ms\n", "reorder_for_peak_memory", plan_ms);
  bench_pipeline(g, a);
  return 0;
}

}  // namespace

std::function<int()> define_bench(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  app.add_option("GRAPH.json", a->path, "schedgraph/1 file (- for stdin)")->required();
  add_int_option(app, "--repeat", a->repeat, 1, 1000, "best of this many runs (default " + std::to_string(a->repeat) + ")");
  add_memory_methods_option(app, a->methods);
  add_comm_passes_option(app, a->comm_passes);
  add_max_input_bytes_option(app, a->max_input);
  return [a] { return run(*a); };
}

}  // namespace schedlab::cli
