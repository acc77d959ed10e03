#include "core/plan/plan.h"

#include <cstdio>

#include "core/graph/loader.h"
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
    else if (it.key() == "comm_passes") opts.comm_passes = list_option(it.value(), it.key());
    else throw UsageError("options: unknown option \"" + it.key() + "\"");
  }
  return opts;
}

PlanResult run_plan(const Graph& g, const PlanOptions& opts) {
  if (!opts.comm_passes.empty())
    throw UsageError("comm passes: unknown pass \"" + opts.comm_passes.front() + "\" (none are available in this build)");
  PlanResult r;
  r.memory = reorder_for_peak_memory(g, g.baseline_order(), opts.memory_methods);
  r.order = r.memory.order();
  return r;
}

namespace {

json names_of(const Graph& g, const Order& order) {
  json out = json::array();
  for (NodeId v : order) out.push_back(g.nodes[v].name);
  return out;
}

}  // namespace

json plan_to_json(const Graph& g, const PlanOptions& opts, const PlanResult& r) {
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
  json memory = {
      {"methods", methods},
      {"method_order", tried},
      {"chosen", r.memory.methods[r.memory.chosen].method},
      {"peak", r.memory.estimate.peak},
      {"peak_step", r.memory.estimate.peak_step},
      {"curve", r.memory.estimate.curve},
      {"peak_live", live},
  };
  json out = {
      {"format", "schedplan/1"},
      {"graph", g.name},
      {"nodes", g.nodes.size()},
      {"options", {{"memory_methods", opts.memory_methods}, {"comm_passes", opts.comm_passes}}},
      {"memory", memory},
      {"order", names_of(g, r.order)},
  };
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

std::string plan_to_text(const Graph& g, const PlanResult& r) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "graph %s: %d nodes, %d buffers (%d inputs)\n", g.name.empty() ? "(unnamed)" : g.name.c_str(),
                g.num_nodes(), g.num_buffers() - g.num_inputs, g.num_inputs);
  out += line;
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
  const auto& est = r.memory.estimate;
  std::snprintf(line, sizeof line, "peak %s at step %d of %zu", human_bytes(est.peak).c_str(), est.peak_step, r.order.size());
  out += line;
  if (est.peak_step < static_cast<std::int32_t>(r.order.size()))
    out += " (while running " + g.nodes[r.order[est.peak_step]].name + ")";
  out += "\nlive at the peak, largest first:\n";
  std::size_t shown = 0;
  std::int64_t rest = 0;
  for (const auto& lb : r.memory.peak_live) {
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
  if (r.memory.peak_live.size() > shown) {
    std::snprintf(line, sizeof line, "  ... %zu more, %s\n", r.memory.peak_live.size() - shown, human_bytes(rest).c_str());
    out += line;
  }
  return out;
}

std::string plan_json(std::string_view graph_json, std::string_view options_json) {
  PlanOptions opts = parse_plan_options(options_json);
  Graph g = load_graph(graph_json);
  PlanResult r = run_plan(g, opts);
  return plan_to_json(g, opts, r).dump(1) + "\n";
}

}  // namespace schedlab
