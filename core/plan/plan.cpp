#include "core/plan/plan.h"

#include <cstdio>

#include "core/comms/report.h"
#include "core/cost/cost_model.h"
#include "core/io/graph_reader.h"
#include "core/memory/estimate.h"
#include "core/memory/planning_info.h"
#include "core/util/error.h"

namespace schedlab {

using nlohmann::json;

std::vector<std::string> split_list(std::string_view csv, std::string_view what) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= csv.size()) {
    std::size_t end = csv.find(',', start);
    if (end == std::string_view::npos) end = csv.size();
    std::string item(csv.substr(start, end - start));
    if (item.empty()) throw UsageError(std::string(what) + ": empty item in list \"" + std::string(csv) + "\"");
    out.push_back(std::move(item));
    start = end + 1;
  }
  return out;
}

namespace {

std::vector<std::string> list_option(const json& v, std::string_view key) {
  if (v.is_string()) {
    auto s = v.get<std::string>();
    if (s.empty()) return {};
    return split_list(s, key);
  }
  if (!v.is_array()) throw UsageError("options." + std::string(key) + ": expected a list of names");
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) throw UsageError("options." + std::string(key) + ": expected a list of names");
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace

PlanOptions parse_plan_options(std::string_view text) {
  PlanOptions opts;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return opts;
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw UsageError(std::string("options: not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw UsageError("options: expected a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "memory_methods") opts.memory_methods = list_option(it.value(), it.key());
    else if (it.key() == "skip_invalid_memory_methods") {
      if (!it.value().is_boolean()) throw UsageError("options.skip_invalid_memory_methods: expected true or false");
      opts.on_invalid_memory_order = it.value().get<bool>() ? InvalidOrderPolicy::Skip : InvalidOrderPolicy::Raise;
    } else if (it.key() == "comm_passes") opts.comm_passes = list_option(it.value(), it.key());
    else if (it.key() == "comm") opts.comm = parse_comm_knobs(it.value(), "options.comm");
    else if (it.key() == "fuse") {
      if (!it.value().is_boolean()) throw UsageError("options.fuse: expected true or false");
      opts.fuse = it.value().get<bool>();
    } else if (it.key() == "runtime_source") {
      if (!it.value().is_string() || (it.value() != "calibrated" && it.value() != "runtime_us"))
        throw UsageError("options.runtime_source: expected \"calibrated\" or \"runtime_us\"");
      opts.runtime_source = it.value().get<std::string>();
    } else if (it.key() == "hardware") {
      if (it.value().is_string()) opts.hardware = builtin_profile(it.value().get<std::string>());
      else opts.hardware = hardware_profile_from_json(it.value());
    }
    else throw UsageError("options: unknown option \"" + it.key() + "\"");
  }
  return opts;
}

PlanResult run_plan(const Graph& input, const PlanOptions& opts) {
  check_comm_pass_names(opts.comm_passes);
  PlanResult r;
  // Front end (dependencies -> dead code -> fusion) for a pre-fusion graph;
  // every later stage plans the fused graph.
  if (opts.fuse && needs_fusion(input)) {
    r.front_end = run_front_end(input, true, FusionOptions{});
    r.fused_graph = std::make_shared<const Graph>(build_fused_graph(input, r.front_end->deps, r.front_end->fusion.groups));
  }
  const Graph& g = r.planned(input);
  r.memory = reorder_for_peak_memory(g, g.baseline_order(), opts.memory_methods, opts.on_invalid_memory_order);
  r.order = r.memory.order();
  // Comm stage (as in Inductor, after memory reordering) and the two-stream simulation.
  r.runtimes_us = estimate_runtimes_us(g, opts.hardware);
  const bool calibrated = opts.runtime_source == "calibrated";
  r.simulated_runtimes_us = calibrated ? calibrated_runtimes_us(g, opts.hardware) : r.runtimes_us;
  const LaunchModel launch = calibrated ? launch_model(g, opts.hardware, false) : LaunchModel{};
  r.simulation_before_comm = simulate_two_streams(g, r.order, r.simulated_runtimes_us, launch);
  if (!opts.comm_passes.empty()) {
    r.comm = run_comm_passes(g, r.order, opts.comm_passes, opts.comm, r.runtimes_us);
    r.order = r.comm->order;
  }
  r.simulation = opts.comm_passes.empty() ? r.simulation_before_comm : simulate_two_streams(g, r.order, r.simulated_runtimes_us, launch);
  if (r.comm) {
    const MemoryPlanningInfo info = compute_planning_info(g, g.baseline_order());
    r.final_memory = estimate_peak_memory(g, info, r.order);
    r.final_peak_live = live_buffers_at(g, info, r.order, r.final_memory.peak_step);
  } else {
    r.final_memory = r.memory.estimate;
    r.final_peak_live = r.memory.peak_live;
  }
  r.predicted = predict(g, r.order, opts.hardware);
  return r;
}

namespace {

json names_of(const Graph& g, const Order& order) {
  json out = json::array();
  for (NodeId v : order) out.push_back(g.nodes[v].name);
  return out;
}

// The node running at `step` of `order`; empty past the last step.
std::string node_at_step(const Graph& g, const Order& order, std::int32_t step) {
  return step >= 0 && step < static_cast<std::int32_t>(order.size()) ? g.nodes[order[step]].name : std::string();
}

}  // namespace

json plan_to_json(const Graph& input, const PlanOptions& opts, const PlanResult& r) {
  const Graph& g = r.planned(input);
  json methods = json::object();
  json tried = json::array();
  for (const auto& m : r.memory.methods) {
    tried.push_back(m.method);
    if (!m.error.empty()) {
      methods[m.method] = {{"error", m.error}};
    } else {
      methods[m.method] = {{"peak", m.peak}, {"order", names_of(g, m.order)}};
    }
  }
  json live = json::array();
  for (const auto& lb : r.memory.peak_live) live.push_back({{"buffer", g.buffers[lb.buf].name}, {"bytes", lb.bytes}});
  // nlohmann copies lvalues out of initializer lists: move every part in.
  json memory = {
      {"methods", std::move(methods)},
      {"method_order", std::move(tried)},
      {"chosen", r.memory.methods[r.memory.chosen].method},
      {"peak", r.memory.estimate.peak},
      {"peak_step", r.memory.estimate.peak_step},
      {"curve", r.memory.estimate.curve},
      {"peak_live", std::move(live)},
  };
  json out = {
      {"format", "schedplan/1"},
      {"graph", g.name},
      {"nodes", g.nodes.size()},
      {"options", {{"memory_methods", opts.memory_methods}, {"comm_passes", opts.comm_passes}, {"comm", comm_knobs_to_json(opts.comm)}}},
      {"memory", std::move(memory)},
      {"order", names_of(g, r.order)},
      {"final",
       {{"peak_bytes", r.final_memory.peak},
        {"peak_step", r.final_memory.peak_step},
        {"peak_node", node_at_step(g, r.order, r.final_memory.peak_step)}}},
  };
  if (r.comm) out["comm"] = comm_pipeline_to_json(g, *r.comm, r.simulation_before_comm, r.simulation);
  out["simulation"] = simulation_to_json(g, r.simulation);
  out["simulation"]["runtime_source"] = opts.runtime_source == "calibrated" ? r.predicted.runtime_source : "runtime_us";
  out["options"]["fuse"] = opts.fuse;
  out["options"]["hardware"] = opts.hardware.name;
  out["options"]["runtime_source"] = opts.runtime_source;
  if (r.front_end) out["front_end"] = front_end_to_json(input, *r.front_end);
  out["runtime"] = runtime_report_json(g, opts.hardware);
  out["predicted"] = prediction_to_json(r.predicted);
  return out;
}

std::string human_bytes(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes < 0 ? -bytes : bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0) std::snprintf(buf, sizeof buf, "%s%lld B", bytes < 0 ? "-" : "", static_cast<long long>(v));
  else std::snprintf(buf, sizeof buf, "%s%.2f %s", bytes < 0 ? "-" : "", v, units[u]);
  return buf;
}

std::string plan_to_text(const Graph& input, const PlanResult& r) {
  const Graph& g = r.planned(input);
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
    const std::string node = node_at_step(g, order, est.peak_step);
    if (!node.empty()) text += " (while running " + node + ")";
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
  return out;
}

std::string plan_text_json(const Graph& g, const PlanOptions& opts, const PlanResult& r) {
  // Compact: a plan of 100k nodes is 25 MB indented and a third of the
  // whole run's time to print; readers want it parsed, people read --format text.
  return plan_to_json(g, opts, r).dump() + "\n";
}

std::string plan_trace_json(const Graph& g, const PlanResult& r) {
  return chrome_trace(r.planned(g), r.simulation, r.final_memory.curve).dump() + "\n";
}

std::string plan_json(std::string_view graph_json, std::string_view options_json) {
  PlanOptions opts = parse_plan_options(options_json);
  Graph g = load_graph(graph_json);
  PlanResult r = run_plan(g, opts);
  return plan_text_json(g, opts, r);
}

}  // namespace schedlab
