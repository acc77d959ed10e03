#include <chrono>
#include <cstdio>

#include "cli/commands.h"
#include "core/io/graph_reader.h"
#include "core/plan/plan.h"
#include "core/util/error.h"

namespace schedlab::cli {

int cmd_plan(const Args& args) {
  ArgReader r(args);
  std::string graph_path, out_path, format, trace_path;
  nlohmann::json comm_knobs = nlohmann::json::object();
  PlanOptions opts;
  while (!r.done()) {
    std::string a = r.next();
    if (a == "-o" || a.rfind("--output", 0) == 0) out_path = r.value(a);
    else if (a.rfind("--memory-methods", 0) == 0) opts.memory_methods = split_list(r.value(a), "--memory-methods");
    else if (a.rfind("--comm-passes", 0) == 0) {
      std::string v = r.value(a);
      opts.comm_passes = v.empty() ? std::vector<std::string>{} : split_list(v, "--comm-passes");
    } else if (a.rfind("--comm-knob", 0) == 0) {
      // --comm-knob name=value, value as JSON (0.1, true, null); repeatable.
      std::string kv = r.value(a);
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--comm-knob: expected NAME=VALUE, got \"" + kv + "\"");
      try {
        comm_knobs[kv.substr(0, eq)] = nlohmann::json::parse(kv.substr(eq + 1));
      } catch (const nlohmann::json::parse_error&) {
        throw UsageError("--comm-knob " + kv.substr(0, eq) + ": value is not a number, true, false or null");
      }
      opts.comm = parse_comm_knobs(comm_knobs, "--comm-knob");
    } else if (a == "--skip-invalid-memory-methods") {
      opts.on_invalid_memory_order = InvalidOrderPolicy::Skip;
    } else if (a == "--no-fuse") {
      opts.fuse = false;
    } else if (a == "--fuse") {
      opts.fuse = true;
    } else if (a.rfind("--hardware", 0) == 0) {
      opts.hardware = load_hardware_profile(r.value(a));
    } else if (a.rfind("--runtime-source", 0) == 0) {
      opts.runtime_source = r.value(a);
      if (opts.runtime_source != "calibrated" && opts.runtime_source != "runtime_us")
        throw UsageError("--runtime-source: expected calibrated or runtime_us, got \"" + opts.runtime_source + "\"");
    } else if (a.rfind("--trace", 0) == 0) {
      trace_path = r.value(a);
    } else if (a.rfind("--format", 0) == 0) {
      format = r.value(a);
      if (format != "json" && format != "text") throw UsageError("--format: expected json or text, got \"" + format + "\"");
    } else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option \"" + a + "\"");
    else if (graph_path.empty()) graph_path = a;
    else throw UsageError("unexpected argument \"" + a + "\"");
  }
  if (graph_path.empty()) throw UsageError("missing GRAPH.json");
  if (format.empty()) format = out_path.empty() ? "text" : "json";

  Graph g = load_graph_file(graph_path);
  PlanResult result = run_plan(g, opts);
  std::string text = format == "json" ? plan_text_json(g, opts, result) : plan_to_text(g, result);
  write_output(out_path.empty() ? "-" : out_path, text);
  if (!trace_path.empty()) write_output(trace_path, plan_trace_json(g, result));
  if (!out_path.empty() && format == "json") std::fputs(plan_to_text(g, result).c_str(), stdout);
  exit_without_freeing();
  return 0;
}

int cmd_validate(const Args& args) {
  if (args.size() != 1) throw UsageError("expected exactly one GRAPH.json");
  Graph g = load_graph_file(args[0]);
  std::size_t deps = 0;
  for (const auto& n : g.nodes) deps += n.reads.size();
  std::printf("%s: ok: schedgraph/1 \"%s\", %d nodes, %d buffers, %d inputs, %zu reads, %zu outputs%s\n", args[0].c_str(), g.name.c_str(),
              g.num_nodes(), g.num_buffers() - g.num_inputs, g.num_inputs, deps, g.outputs.size(),
              g.is_pre_fusion() ? "" : ", fused");
  exit_without_freeing();
  return 0;
}

}  // namespace schedlab::cli
