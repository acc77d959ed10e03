// Estimated against measured: tables and the scatter plot.
#include "core/measure/accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/io/json_writer.h"
#include "core/predict/predicted.h"

namespace schedlab {
namespace {

double ratio(double est, double meas) { return meas > 0 ? est / meas : (est > 0 ? INFINITY : 1.0); }

std::int64_t reserved_growth(const ExecutedMemory& sim, const MeasuredGraph& m) {
  const std::int64_t growth = sim.reserved_bytes - sim.reserved_before_bytes;
  const std::int64_t free_before = m.reserved_before_bytes - m.allocated_before_bytes;
  const std::int64_t simulated_free_before = sim.reserved_before_bytes - sim.allocated_before_bytes;
  return std::max<std::int64_t>(0, growth - std::max<std::int64_t>(0, free_before - simulated_free_before));
}

ErrorSummary summarize(std::vector<double> errors) {
  ErrorSummary s;
  if (errors.empty()) return s;
  std::sort(errors.begin(), errors.end());
  const std::size_t mid = errors.size() / 2;
  s.median = errors.size() % 2 ? errors[mid] : (errors[mid - 1] + errors[mid]) / 2;
  s.worst = errors.back();
  return s;
}

// The class whose law priced class `c` under the pricing's profile (c
// itself without a time model).
KernelClass law_class_of(const Pricing& p, KernelClass c) { return p.law_classes.empty() ? c : p.law_classes.at(static_cast<std::size_t>(c)); }

// Each kernel class's calibrated time against the measured kernels mapped
// to its nodes, added into `classes`.
void add_class_times(const Graph& g, const MeasuredGraph& m, const Pricing& pricing, bool collectives_measured,
                     std::map<KernelClass, ClassAccuracy>& classes, std::vector<NodeAccuracy>& nodes) {
  std::vector<double> measured(g.nodes.size(), 0.0);
  std::vector<int> kernels(g.nodes.size(), 0);
  std::vector<std::string_view> first(g.nodes.size());
  for (const MeasuredKernel& k : m.kernels)
    if (!k.node.empty()) {
      const NodeId v = g.find_node(k.node);
      measured[v] += k.duration_us;
      if (kernels[v]++ == 0) first[v] = k.name;
    }
  const std::vector<double>& estimated = pricing.calibrated_us;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const KernelClass cls = pricing.kernel_classes[v];
    if (cls == KernelClass::None || (cls == KernelClass::Collective && !collectives_measured)) continue;
    ClassAccuracy& ca = classes[cls];
    ca.cls = cls;
    ca.law = law_class_of(pricing, cls);
    ca.est_us += estimated[v];
    ca.meas_us += measured[v];
    ca.nodes += 1;
    if (kernels[v] > 0) nodes.push_back({g.name, g.nodes[v].name, cls, kernels[v], estimated[v], measured[v], std::string(first[v])});
  }
}

// The profile with its host figures at the measuring host's speed, and the
// factor that took; the profile itself when either speed is unknown.
std::pair<HardwareProfile, double> at_measuring_host(const HardwareProfile& hw, const MeasuredGraph& m) {
  if (!hw.time_model || !(hw.time_model->host_probe_us > 0) || !m.host_probe_us) return {hw, 1.0};
  HardwareProfile out = hw;
  out.time_model = at_host_speed(*hw.time_model, *m.host_probe_us);
  return {std::move(out), *m.host_probe_us / hw.time_model->host_probe_us};
}

}  // namespace

AccuracyReport measure_accuracy(const std::vector<MeasuredCase>& cases, const HardwareProfile& hw, bool collectives_measured,
                                bool at_measured_host_speed) {
  AccuracyReport r;
  r.hardware = hw.name;
  std::map<KernelClass, ClassAccuracy> classes;
  for (const MeasuredCase& c : cases) {
    const Graph& g = c.graph;
    // Predicted in the order the measured call ran, not the graph's file
    // order (ViT's backward: 46.9 MB in file order, 43.3 MB in the order
    // Inductor picked, 43.7 MB measured).
    const Order ran = order_as_run(g);
    const auto [host_hw, host_speed] = at_measured_host_speed ? at_measuring_host(hw, c.measured) : std::pair{hw, 1.0};
    const Pricing pricing = price_graph(g, host_hw, {.price_collectives = collectives_measured});
    ExecutedMemory executed = estimate_memory_as_executed(g, ran);
    const double wall = default_mode_wall_us(g, ran, pricing, executed);
    Prediction p = predict(g, ran, pricing, std::move(executed), wall);
    GraphAccuracy a;
    a.graph = g.name;
    a.path = c.path;
    a.host_speed_factor = host_speed;
    a.kernel_est_us = p.kernel_time_us;
    a.kernel_meas_us = c.measured.kernel_time_us;
    if (!collectives_measured)
      for (const MeasuredKernel& k : c.measured.kernels)
        if (!k.node.empty() && classify_node(g, g.nodes[g.find_node(k.node)]) == KernelClass::Collective) a.kernel_meas_us -= k.duration_us;
    a.wall_est_us = p.wall_time_us;
    a.wall_meas_us = c.measured.wall_time_us;
    a.wall_cudagraphs_est_us = p.wall_time_us_cudagraphs;
    a.wall_cudagraphs_meas_us = c.measured.wall_time_us_cudagraphs;
    a.peak_meas = c.measured.peak_allocated_bytes;
    a.reserved_meas = c.measured.peak_reserved_bytes;
    a.data_dependent = !c.measured.unbacked.empty();
    if (c.measured.allocator_at_start) {
      // The file recorded the measuring process's cache at the call's
      // start: replay from it (its inputs are among the recorded blocks),
      // both peaks, instead of the plan's cold start.
      const ExecutedMemory recorded = estimate_memory_as_executed(g, ran, {}, nullptr, &*c.measured.allocator_at_start);
      a.recorded_start = true;
      a.peak_est = recorded.peak_bytes;
      a.reserved_est = recorded.reserved_bytes;
      r.graphs.push_back(std::move(a));
      add_class_times(g, c.measured, pricing, collectives_measured, classes, r.nodes);
      continue;
    }
    a.peak_est = p.peak_bytes;
    // Reserved memory before the call holds the whole process's tensors, not
    // just the graph's inputs: start from the measured figure, and add what
    // the allocator simulation grows by during the call less what the
    // measured start state has free beyond the simulated one's (segments
    // the process's other tensors left partly free: reserved - allocated
    // before the call, less the free tails of the inputs' own segments,
    // which the simulation already has): allocations fill that room first.
    a.reserved_est = c.measured.reserved_before_bytes + reserved_growth(p.memory, c.measured);
    r.graphs.push_back(std::move(a));
    add_class_times(g, c.measured, pricing, collectives_measured, classes, r.nodes);
  }
  for (auto& [cls, ca] : classes)
    if (ca.meas_us > 0) r.classes.push_back(ca);
  return r;
}

std::string accuracy_nodes_tsv(const AccuracyReport& r) {
  std::string out = "graph\tnode\tclass\tkernels\tmeasured_us\testimated_us\tratio\tfirst_kernel\n";
  char numbers[128];
  for (const NodeAccuracy& n : r.nodes) {
    std::snprintf(numbers, sizeof numbers, "\t%d\t%.3f\t%.3f\t%.3f\t", n.kernels, n.meas_us, n.est_us, ratio(n.est_us, n.meas_us));
    std::string kernel = n.first_kernel;
    for (char& ch : kernel)
      if (ch == '\t' || ch == '\n') ch = ' ';
    out += n.graph + "\t" + n.node + "\t" + std::string(to_string(n.cls)) + numbers + kernel + "\n";
  }
  return out;
}

std::string memory_events_json(const std::vector<MeasuredCase>& cases) {
  JsonWriter w;
  w.begin_object().key("graphs").begin_array();
  for (const MeasuredCase& c : cases) {
    const Graph& g = c.graph;
    const AllocatorState* start = c.measured.allocator_at_start ? &*c.measured.allocator_at_start : nullptr;
    const ExecutedMemory m = estimate_memory_as_executed(g, order_as_run(g), {}, nullptr, start);
    w.begin_object().field("graph", g.name).field("measured", c.path).field("start", start ? "recorded" : "cold");
    w.field("peak_bytes", m.peak_bytes).field("reserved_bytes", m.reserved_bytes);
    w.key("events").begin_array();
    for (std::size_t i = 0; i < m.events.size(); ++i) {
      const ExecutedEvent& e = m.events[i];
      const EventBlock& b = m.blocks[i];
      const char* action = e.kind == ExecutedEvent::Kind::Allocate ? "a" : e.kind == ExecutedEvent::Kind::Free ? "f" : "r";
      w.begin_array().value(action).value(e.buf == kNone ? std::string() : g.buffers[e.buf].name).value(g.nodes[e.at].name);
      if (e.kind == ExecutedEvent::Kind::Reuse) w.value(g.buffers[e.donor].name);
      else w.value(e.bytes);
      w.value(b.address).value(b.block_bytes).value(b.allocated_after).value(b.reserved_after).end_array();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
  return w.take_text() + "\n";
}

std::vector<ClassAccuracy> base_class_totals(const AccuracyReport& r) {
  std::map<KernelClass, ClassAccuracy> totals;
  for (const ClassAccuracy& c : r.classes) {
    const KernelClass base = base_class(c.cls);
    ClassAccuracy& t = totals[base];
    t.cls = t.law = base;
    t.est_us += c.est_us;
    t.meas_us += c.meas_us;
    t.nodes += c.nodes;
  }
  std::vector<ClassAccuracy> out;
  for (auto& [c, t] : totals) out.push_back(t);
  return out;
}

ErrorSummary kernel_time_error(const AccuracyReport& r) {
  std::vector<double> e;
  for (const auto& g : r.graphs) e.push_back(std::abs(ratio(g.kernel_est_us, g.kernel_meas_us) - 1));
  return summarize(e);
}

ErrorSummary wall_time_error(const AccuracyReport& r) {
  std::vector<double> e;
  for (const auto& g : r.graphs) e.push_back(std::abs(ratio(g.wall_est_us, g.wall_meas_us) - 1));
  return summarize(e);
}

std::string accuracy_to_text(const AccuracyReport& r) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "accuracy on %s: %zu graphs (estimated / measured)\n", r.hardware.c_str(), r.graphs.size());
  out += line;
  std::snprintf(line, sizeof line, "%-34s %11s %7s %11s %7s %7s %7s %7s %8s\n", "graph", "kernel(us)", "ratio", "wall(us)", "ratio", "cg", "peak",
                "reserv", "start");
  out += line;
  for (const auto& g : r.graphs) {
    const std::string cg = g.wall_cudagraphs_meas_us ? std::to_string(ratio(g.wall_cudagraphs_est_us, *g.wall_cudagraphs_meas_us)).substr(0, 5) : "-";
    std::snprintf(line, sizeof line, "%-34s %11.1f %7.3f %11.1f %7.3f %7s %7.3f %7.3f %8s%s\n", g.graph.substr(0, 34).c_str(), g.kernel_meas_us,
                  ratio(g.kernel_est_us, g.kernel_meas_us), g.wall_meas_us, ratio(g.wall_est_us, g.wall_meas_us), cg.c_str(),
                  ratio(static_cast<double>(g.peak_est), static_cast<double>(g.peak_meas)),
                  ratio(static_cast<double>(g.reserved_est), static_cast<double>(g.reserved_meas)), g.recorded_start ? "recorded" : "cold",
                  g.data_dependent ? "  (data-dependent)" : "");
    out += line;
  }
  out += "start: the allocator replay's start state, the cache the measured file recorded at the call's start, or cold (empty, as a plan)\n";
  double slowest = 0, fastest = 0;
  for (const auto& g : r.graphs)
    if (g.host_speed_factor != 1) {
      slowest = slowest == 0 ? g.host_speed_factor : std::max(slowest, g.host_speed_factor);
      fastest = fastest == 0 ? g.host_speed_factor : std::min(fastest, g.host_speed_factor);
    }
  if (slowest > 0) {
    std::snprintf(line, sizeof line,
                  "walls: host costs at each run's host speed (its host probe over the profile's: %.3f to %.3f; --fixed-host-speed: at the profile's)\n",
                  fastest, slowest);
    out += line;
  }
  out += "per kernel class (summed over the graphs):\n";
  std::snprintf(line, sizeof line, "  %-38s %8s %14s %14s %7s  %s\n", "class", "nodes", "measured(us)", "estimated(us)", "ratio", "law");
  out += line;
  for (const auto& c : r.classes) {
    // A finer class without a law of its own says whose law priced it.
    const std::string law = c.law == c.cls ? "own" : std::string(to_string(c.law));
    std::snprintf(line, sizeof line, "  %-38s %8d %14.1f %14.1f %7.3f  %s\n", std::string(to_string(c.cls)).c_str(), c.nodes, c.meas_us,
                  c.est_us, ratio(c.est_us, c.meas_us), law.c_str());
    out += line;
  }
  const ErrorSummary k = kernel_time_error(r), w = wall_time_error(r);
  std::snprintf(line, sizeof line, "kernel time error: median %.1f %%, worst %.1f %%; wall time error: median %.1f %%, worst %.1f %%\n",
                100 * k.median, 100 * k.worst, 100 * w.median, 100 * w.worst);
  out += line;
  return out;
}

std::string accuracy_svg(const AccuracyReport& r) {
  struct Point {
    double meas, est;
    const char* color;
    std::string label;
  };
  std::vector<Point> pts;
  for (const auto& g : r.graphs) {
    pts.push_back({g.kernel_meas_us, g.kernel_est_us, "#1f77b4", g.graph + " kernel time"});
    pts.push_back({g.wall_meas_us, g.wall_est_us, "#d62728", g.graph + " wall time"});
  }
  for (const auto& c : r.classes) pts.push_back({c.meas_us, c.est_us, "#2ca02c", std::string(to_string(c.cls)) + " (class total)"});
  // A point off the finite range is left out of the plot, so the axes (and
  // the count of decades the grid loops over) stay finite.
  std::erase_if(pts, [](const Point& p) { return !std::isfinite(p.meas) || !std::isfinite(p.est); });
  double lo = INFINITY, hi = 0;
  for (const auto& p : pts)
    for (double v : {p.meas, p.est})
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(lo < hi)) lo = 1, hi = 10;
  const double l0 = std::floor(std::log10(lo)), l1 = std::ceil(std::log10(hi));
  const int decades = static_cast<int>(l1 - l0);  // at most 632 between the smallest and largest double
  constexpr double kSize = 480, kPad = 60;
  auto pos = [&](double v) { return (std::log10(std::max(v, std::pow(10.0, l0))) - l0) / (l1 - l0) * kSize; };
  auto xml_escape = [](const std::string& s) {
    std::string o;
    for (char ch : s) o += ch == '<' ? "&lt;" : ch == '>' ? "&gt;" : ch == '&' ? "&amp;" : ch == '"' ? "&quot;" : std::string(1, ch);
    return o;
  };
  std::string svg;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
                kSize + 2 * kPad, kSize + 2 * kPad);
  svg += buf;
  svg += "<title>schedlab accuracy on " + xml_escape(r.hardware) + ": estimated against measured (us)</title>\n";
  std::snprintf(buf, sizeof buf, "<g transform=\"translate(%.0f,%.0f)\">\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#888\"/>\n", kPad,
                kPad, kSize, kSize);
  svg += buf;
  for (int k = 0; k <= decades; ++k) {
    const double e = l0 + k;
    const double p = pos(std::pow(10.0, e));
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#eee\"/><line x1=\"0\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                  "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">1e%.0f</text><text x=\"-6\" y=\"%.1f\" text-anchor=\"end\">1e%.0f</text>\n",
                  p, p, kSize, kSize - p, kSize, kSize - p, p, kSize + 16, e, kSize - p + 4, e);
    svg += buf;
  }
  // The diagonal and the ±10 % band.
  for (double f : {1.0, 1.1, 1 / 1.1}) {
    const double shift = std::log10(f) / (l1 - l0) * kSize;
    std::snprintf(buf, sizeof buf, "<line x1=\"0\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"%s\"/>\n", kSize - shift, kSize,
                  -shift, f == 1.0 ? "#444" : "#aaa", f == 1.0 ? "none" : "4 3");
    svg += buf;
  }
  for (const auto& p : pts) {
    if (!(p.meas > 0 && p.est > 0)) continue;
    std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" fill-opacity=\"0.75\"><title>", pos(p.meas),
                  kSize - pos(p.est), p.color);
    svg += buf;
    std::snprintf(buf, sizeof buf, ": measured %.1f us, estimated %.1f us (%.3f)</title></circle>\n", p.meas, p.est, p.est / p.meas);
    svg += xml_escape(p.label) + buf;
  }
  std::snprintf(buf, sizeof buf,
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">measured (us)</text>"
                "<text transform=\"translate(-44,%.0f) rotate(-90)\" text-anchor=\"middle\">estimated (us)</text>\n",
                kSize / 2, kSize + 36, kSize / 2);
  svg += buf;
  svg += "<text x=\"8\" y=\"16\" fill=\"#1f77b4\">kernel time per graph</text><text x=\"8\" y=\"30\" fill=\"#d62728\">wall time per graph</text>"
         "<text x=\"8\" y=\"44\" fill=\"#2ca02c\">kernel class totals</text>\n</g>\n</svg>\n";
  return svg;
}

}  // namespace schedlab
