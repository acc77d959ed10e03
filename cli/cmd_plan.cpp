// schedlab plan: the pipeline (core/plan) on one graph; the schedplan/1 file,
// a text report and optionally a Chrome trace.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "core/io/graph_reader.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/plan/plan.h"
#include "core/util/error.h"

namespace schedlab::cli {
namespace {

struct PlanArgs {
  std::string graph_path, out_path, format, trace_path;
  std::vector<std::string> rank_graph_paths;  // --rank-graphs: ranks 1.. of the step
  std::uint64_t max_input = kDefaultMaxInputBytes;
  bool overlap_view = false;
  PlanOptions opts;
};

int run(const PlanArgs& a) {
  const std::string format = !a.format.empty() ? a.format : a.out_path.empty() ? "text" : "json";
  if (a.overlap_view && format == "json" && a.out_path.empty())
    throw UsageError("--overlap-view: the view is part of the text report, which --format json without -o does not print");
  PlanOptions opts = a.opts;
  if (!a.rank_graph_paths.empty()) opts.rank_label = a.graph_path;
  for (const std::string& path : a.rank_graph_paths)
    opts.other_ranks.push_back({path, std::make_shared<const Graph>(load_graph_file(path, a.max_input))});
  PlanResult result = run_plan(load_graph_file(a.graph_path, a.max_input), opts);
  // The text report, with the per-node overlap view when asked for.
  const auto report = [&] { return plan_to_text(result) + (a.overlap_view ? plan_overlap_view_text(result) : std::string()); };
  // The plan and its trace: both or neither, each written as it is produced.
  const std::string out = a.out_path.empty() ? "-" : a.out_path;
  std::vector<OutputStream> outputs;
  if (format == "json") {
    outputs.push_back({out, [&](std::FILE* file, const std::string& name) { stream_plan_json(file, name, opts, result); }});
  } else {
    outputs.push_back(text_output(out, report()));
  }
  if (!a.trace_path.empty())
    outputs.push_back({a.trace_path, [&](std::FILE* file, const std::string& name) { stream_plan_trace_json(file, name, result); }});
  write_outputs(outputs);
  if (!a.out_path.empty() && format == "json") std::fputs(report().c_str(), stdout);
  exit_without_freeing();
  return 0;
}

}  // namespace

std::function<int()> define_plan(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  app.add_option("GRAPH.json", a->graph_path, "schedgraph/1 file, pre- or post-fusion (- for stdin)")->required();
  add_output_option(app, "-o,--output", a->out_path, "write the schedplan/1 file here (- for stdout)")->option_text("PLAN.json");
  add_memory_methods_option(app, a->opts.memory_methods);
  add_comm_passes_option(app, a->opts.comm_passes);
  add_comm_knob_option(app, a->opts.comm);
  app.add_flag("--compare", a->opts.compare,
               "also run Inductor's recommended comm passes and overlap_schedule on the memory-planned order (the plan's `compare`)");
  add_output_option(app, "--trace", a->trace_path, "also write Chrome trace events of the final order")->option_text("TRACE.json");
  app.add_option("--rank-graphs", a->rank_graph_paths,
                 "the step's other ranks' graphs (rank 1 on), each planned alike and simulated beside GRAPH.json (the plan's simulation.ranks)")
      ->option_text("GRAPH.json ...");
  app.add_flag_callback("--no-fuse", [a] { a->opts.fuse = false; }, "plan a pre-fusion graph as it is, without Inductor's fusion");
  app.add_flag_callback("--fuse", [a] { a->opts.fuse = true; }, "fuse a pre-fusion graph first (the default)");
  app.add_flag_callback("--skip-invalid-memory-methods", [a] { a->opts.on_invalid_memory_order = InvalidOrderPolicy::Skip; },
                        "leave out a method whose order is not a valid schedule instead of failing");
  add_hardware_option(app, a->opts.hardware);
  const std::function<void()> at_host_speed = add_host_probe_option(app, a->opts.hardware);
  const std::function<void()> read_measured_traces = add_measured_trace_option(app, a->opts);
  add_runtime_source_option(app, a->opts.runtime_source);
  add_device_memory_option(app, a->opts.device_memory_bytes);
  add_memory_budget_option(app, a->opts.comm);
  add_choice_option(app, "--format", a->format, {"json", "text"}, "what goes to PLAN.json or stdout (default: json with -o, else text)");
  app.add_flag("--overlap-view", a->overlap_view, "add the final order node by node to the report, with the simulation's stalls");
  add_max_input_bytes_option(app, a->max_input);
  return [a, at_host_speed, read_measured_traces] {
    at_host_speed();
    read_measured_traces();
    return run(*a);
  };
}

}  // namespace schedlab::cli
