#include "core/sim/overlap_view.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "core/util/error.h"
#include "core/util/units.h"

namespace schedlab {

namespace {

// The collective's own op without its namespace and overload:
// "_c10d_functional.all_gather_into_tensor.default" -> "all_gather_into_tensor".
std::string_view short_op(std::string_view op) {
  if (op.starts_with("torch.ops.")) op.remove_prefix(10);
  if (auto dot = op.find('.'); dot != std::string_view::npos) op.remove_prefix(dot + 1);
  if (auto dot = op.rfind('.'); dot != std::string_view::npos) op = op.substr(0, dot);
  return op;
}

// "a, b, c, ..." (at most three names, then how many more).
std::string first_names(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > 3) s += ", +" + std::to_string(names.size() - 3);
  return s;
}

// "f32[4, 1024]" when the buffer says its dtype or shape.
std::string tensor_info(const Buffer& b) {
  if (b.dtype.empty() && b.shape.empty()) return "";
  std::string s = " " + b.dtype + "[";
  for (std::size_t i = 0; i < b.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(b.shape[i]);
  return s + "]";
}

}  // namespace

std::string node_summary(const Graph& g, NodeId v) {
  const Node& n = g.nodes[v];
  std::string s(to_string(n.kind));
  if (n.collective) {
    s += " " + std::string(short_op(n.collective->op)) + " " + std::to_string(n.collective->group_size) + " ranks " +
         human_bytes(n.collective->bytes);
  } else if (!n.kernel.empty()) {
    s += " " + n.kernel;
  }
  if (!n.members.empty()) s += " fused " + std::to_string(n.members.size()) + " (" + first_names(n.members) + ")";
  // Extern kernels and collectives also name what they wait on (node_summary's `ins`).
  if (n.kind == NodeKind::Extern || n.kind == NodeKind::Collective || n.kind == NodeKind::Wait) {
    std::vector<std::string> ins;
    for (const Dep& d : n.reads)
      if (d.kind != DepKind::FakeWeak && g.buffers[d.buf].producer != kNone && g.buffers[d.buf].producer != v &&
          std::find(ins.begin(), ins.end(), g.buffers[d.buf].name) == ins.end())
        ins.push_back(g.buffers[d.buf].name);
    if (!ins.empty()) s += " <- " + first_names(ins);
  }
  if (!n.outputs.empty()) {
    std::int64_t bytes = 0;
    for (BufId b : n.outputs) bytes = checked_add(bytes, g.buffers[b].bytes, "output bytes");
    s += " -> " + g.buffers[n.outputs.front()].name + tensor_info(g.buffers[n.outputs.front()]);
    if (n.outputs.size() > 1) s += " +" + std::to_string(n.outputs.size() - 1);
    s += " " + human_bytes(bytes);
  }
  return s;
}

OverlapView overlap_view(const Graph& g, const Order& order, const std::vector<double>& runtime_us, const Simulation& sim) {
  const std::int32_t n = g.num_nodes();
  if (static_cast<std::int32_t>(order.size()) != n || static_cast<std::int32_t>(runtime_us.size()) != n ||
      static_cast<std::int32_t>(sim.spans.size()) != n)
    throw Error("overlap view: the order, the runtimes and the simulation must each cover every node once");
  OverlapView view;
  view.simulation = sim;
  std::vector<double> start(n, 0);
  for (const StreamSpan& s : sim.spans) start[s.node] = s.start_us;
  std::vector<double> exposed(n, 0), latest_end(n, -1);
  std::vector<NodeId> exposed_by(n, kNone);
  for (const CollectiveTiming& ct : sim.collectives) {
    if (ct.blocked == kNone || ct.exposed_us <= 0) continue;
    exposed[ct.blocked] += ct.exposed_us;
    if (ct.end_us > latest_end[ct.blocked]) {
      latest_end[ct.blocked] = ct.end_us;
      exposed_by[ct.blocked] = ct.collective;
    }
  }
  // visualize_overlap's walk: the collective in flight is the last one
  // issued until a wait (any wait) ends it.
  NodeId in_flight = kNone;
  for (NodeId v : order) {
    const Node& node = g.nodes[v];
    OverlapRow row;
    row.node = v;
    row.runtime_us = runtime_us[v];
    row.start_us = start[v];
    row.exposed_comm_us = exposed[v];
    row.exposed_collective = exposed_by[v];
    row.summary = node_summary(g, v);
    if (node.kind == NodeKind::Collective) {
      view.inductor_estimate_us += runtime_us[v];
      in_flight = v;
    } else if (node.kind == NodeKind::Wait) {
      in_flight = kNone;
    } else if (in_flight == kNone) {
      view.inductor_estimate_us += runtime_us[v];
    } else {
      row.overlapped_by = in_flight;
      view.overlapped_compute_us += runtime_us[v];
    }
    view.rows.push_back(std::move(row));
  }
  return view;
}

std::string overlap_view_to_text(const Graph& g, const OverlapView& view) {
  std::string out =
      "overlap view (Inductor's visualize_overlap; '|' = runs while that collective is in flight; exposed = the "
      "simulation's stall before this node):\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %6s  %-20s %10s %10s  %-22s %s\n", "step", "node", "start us", "runtime us", "overlaps / exposed",
                "summary");
  out += line;
  for (std::size_t i = 0; i < view.rows.size(); ++i) {
    const OverlapRow& r = view.rows[i];
    std::string overlap;
    if (r.overlapped_by != kNone) overlap = "| " + g.nodes[r.overlapped_by].name;
    if (r.exposed_comm_us > 0) {
      char e[96];
      std::snprintf(e, sizeof e, "%swaits %.1f on %s", overlap.empty() ? "" : "; ", r.exposed_comm_us,
                    g.nodes[r.exposed_collective].name.c_str());
      overlap += e;
    }
    std::snprintf(line, sizeof line, "  %6zu  %-20s %10.1f %10.1f  %-22s ", i, g.nodes[r.node].name.c_str(), r.start_us, r.runtime_us,
                  overlap.c_str());
    out += line + r.summary + "\n";
  }
  double tail = 0;
  for (const CollectiveTiming& ct : view.simulation.collectives)
    if (ct.blocked == kNone) tail += ct.exposed_us;
  std::snprintf(line, sizeof line,
                "  Inductor's estimate (collectives + compute outside them): %.1f us; compute overlapped by a collective: %.1f us\n",
                view.inductor_estimate_us, view.overlapped_compute_us);
  out += line;
  std::snprintf(line, sizeof line,
                "  two-stream simulation: step %.1f us, exposed comm %.1f us (%.1f us of it after the last node)\n",
                view.simulation.step_time_us, view.simulation.exposed_comm_us, tail);
  out += line;
  return out;
}

}  // namespace schedlab
