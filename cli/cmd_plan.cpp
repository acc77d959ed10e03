#include <chrono>
#include <cstdio>

#include "cli/commands.h"
#include "core/io/graph_reader.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/plan/plan.h"
#include "core/util/error.h"

namespace schedlab::cli {

int cmd_plan(const Args& args) {
  ArgReader r(args);
  std::uint64_t max_input = kDefaultMaxInputBytes;
  std::string graph_path, out_path, format, trace_path;
  bool overlap = false;
  PlanOptions opts;
  while (!r.done()) {
    std::string a = r.next();
    if (is_flag(a, "--max-input-bytes")) max_input = max_input_bytes_arg(r.value(a));
    else if (a == "-o" || is_flag(a, "--output")) out_path = r.value(a);
    else if (is_flag(a, "--memory-methods")) opts.memory_methods = split_list(r.value(a), "--memory-methods");
    else if (is_flag(a, "--comm-passes")) {
      std::string v = r.value(a);
      opts.comm_passes = v.empty() ? std::vector<std::string>{} : split_list(v, "--comm-passes");
    } else if (is_flag(a, "--comm-knob")) {
      // --comm-knob name=value, value as JSON (0.1, true, null); repeatable.
      std::string kv = r.value(a);
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--comm-knob: expected NAME=VALUE, got \"" + kv + "\"");
      set_comm_knob(opts.comm, std::string_view(kv).substr(0, eq), std::string_view(kv).substr(eq + 1), "--comm-knob");
    } else if (a == "--skip-invalid-memory-methods") {
      opts.on_invalid_memory_order = InvalidOrderPolicy::Skip;
    } else if (a == "--no-fuse") {
      opts.fuse = false;
    } else if (a == "--overlap-view") {
      overlap = true;
    } else if (a == "--fuse") {
      opts.fuse = true;
    } else if (is_flag(a, "--hardware")) {
      opts.hardware = hardware_profile_arg(r.value(a));
    } else if (is_flag(a, "--runtime-source")) {
      opts.runtime_source = r.value(a);
      if (opts.runtime_source != "calibrated" && opts.runtime_source != "runtime_us")
        throw UsageError("--runtime-source: expected calibrated or runtime_us, got \"" + opts.runtime_source + "\"");
    } else if (is_flag(a, "--trace")) {
      trace_path = r.value(a);
    } else if (is_flag(a, "--format")) {
      format = r.value(a);
      if (format != "json" && format != "text") throw UsageError("--format: expected json or text, got \"" + format + "\"");
    } else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option \"" + a + "\"");
    else if (graph_path.empty()) graph_path = a;
    else throw UsageError("unexpected argument \"" + a + "\"");
  }
  if (graph_path.empty()) throw UsageError("missing GRAPH.json");
  if (format.empty()) format = out_path.empty() ? "text" : "json";
  if (overlap && format == "json" && out_path.empty())
    throw UsageError("--overlap-view: the view is part of the text report, which --format json without -o does not print");

  PlanResult result = run_plan(load_graph_file(graph_path, max_input), opts);
  // The text report, with the per-node overlap view when asked for.
  const auto report = [&] { return plan_to_text(result) + (overlap ? plan_overlap_view_text(result) : std::string()); };
  // The plan and its trace: both or neither, each written as it is produced.
  std::vector<OutputStream> outputs;
  if (format == "json") {
    outputs.push_back({out_path.empty() ? "-" : out_path, [&](std::FILE* out, const std::string& name) { stream_plan_json(out, name, opts, result); }});
  } else {
    outputs.push_back(text_output(out_path.empty() ? "-" : out_path, report()));
  }
  if (!trace_path.empty())
    outputs.push_back({trace_path, [&](std::FILE* out, const std::string& name) { stream_plan_trace_json(out, name, result); }});
  write_outputs(outputs);
  if (!out_path.empty() && format == "json") std::fputs(report().c_str(), stdout);
  exit_without_freeing();
  return 0;
}

}  // namespace schedlab::cli
