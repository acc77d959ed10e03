#include "core/io/plan_writer.h"

#include <algorithm>
#include <functional>

#include "core/io/graph_reader.h"
#include "core/io/options.h"
#include "core/util/error.h"

namespace schedlab {
namespace {

void write_names(JsonWriter& w, const Graph& g, const Order& order) {
  w.begin_array();
  for (NodeId v : order) w.value(g.nodes[v].name);
  w.end_array();
}

void write_comm_knobs(JsonWriter& w, const CommKnobs& knobs) {
  // Sorted by name, as the plan's keys always are.
  std::vector<std::pair<std::string_view, std::function<void()>>> fields;
  for_each_written_comm_knob(knobs, [&](std::string_view name, const auto& member) {
    fields.emplace_back(name, [&w, &member] {
      if constexpr (std::is_same_v<std::decay_t<decltype(member)>, std::int32_t>) {
        if (member < 0) w.null();  // None: no limit
        else w.value(member);
      } else {
        w.value(member);
      }
    });
  });
  std::sort(fields.begin(), fields.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  w.begin_object();
  for (const auto& [name, write_value] : fields) {
    w.key(name);
    write_value();
  }
  w.end_object();
}

void write_options(JsonWriter& w, const PlanOptions& opts) {
  w.begin_object();
  w.key("comm");
  write_comm_knobs(w, opts.comm);
  w.key("comm_passes").array(opts.comm_passes);
  if (opts.compare) w.field("compare", true);
  if (opts.device_memory_bytes > 0) w.field("device_memory", opts.device_memory_bytes);
  w.field("fuse", opts.fuse);
  w.field("hardware", opts.hardware.name);
  w.key("memory_methods").array(opts.memory_methods);
  w.field("runtime_source", opts.runtime_source);
  w.end_object();
}

void write_device_fit(JsonWriter& w, const DeviceFit& f) {
  w.begin_object();
  w.field("allocator_margin_bytes", f.allocator_margin_bytes);
  w.field("allocator_need_bytes", f.allocator_need_bytes);
  w.field("allocator_need_low_bytes", f.allocator_need_low_bytes);
  w.field("allocator_verdict", f.allocator_verdict);
  w.field("data_dependent_buffers", f.data_dependent_buffers);
  w.field("device_bytes", f.device_bytes);
  w.key("fixed").begin_array();
  for (const auto& c : f.fixed) {
    w.begin_object().field("bytes", c.bytes).field("in_allocator", c.in_allocator).field("name", c.name).field("source", c.source);
    w.end_object();
  }
  w.end_array();
  w.field("margin_bytes", f.margin_bytes);
  w.field("need_bytes", f.need_bytes);
  w.field("need_low_bytes", f.need_low_bytes);
  w.field("reserved_peak_bytes", f.reserved_peak_bytes);
  w.field("uncertainty_bytes", f.uncertainty_bytes);
  w.field("verdict", f.verdict);
  w.end_object();
}

void write_overlap_stat(JsonWriter& w, const Graph& g, const OverlapStat& s) {
  w.begin_object();
  w.field("comm_time_us", s.comm_time_us);
  w.field("comp_time_us", s.comp_time_us);
  w.field("final_exposed_us", s.final_exposed_us);
  w.field("grouped", s.grouped);
  w.field("improvement_us", s.initial_exposed_us - s.final_exposed_us);
  w.field("initial_exposed_us", s.initial_exposed_us);
  w.field("limiting_factor", s.limiting_factor);
  w.field("moves", s.moves);
  w.field("node", g.nodes[s.node].name);
  w.end_object();
}

// A bucket of a bucketing pass: its members, key, bytes and prices beside
// the members' collectives issued one by one.
void write_bucket(JsonWriter& w, const Graph& g, const CollectiveBucket& b) {
  w.begin_object();
  w.field("bucketed_us", b.bucketed_us());
  w.field("bytes", b.bytes);
  w.field("collective_us", b.collective_us);
  w.field("copy_in_bytes", b.copy_in_bytes);
  w.field("copy_in_us", b.copy_in_us);
  w.field("copy_out_bytes", b.copy_out_bytes);
  w.field("copy_out_us", b.copy_out_us);
  w.field("dtype", b.key.dtype);
  w.field("extra_live_bytes", b.extra_live_bytes);
  w.field("group_size", b.key.group_size);
  w.field("kind", to_string(b.key.kind));
  w.key("members").begin_array();
  for (NodeId m : b.members) w.value(g.nodes[m].name);
  w.end_array();
  w.field("separate_us", b.separate_us);
  w.end_object();
}

// The `comm` section: per pass its statistics and tracked peaks, and the
// simulated effect of the whole stage.
void write_comm(JsonWriter& w, const Graph& g, const CommPipelineResult& r, const Simulation& before, const Simulation& after) {
  w.begin_object();
  w.field("exposed_comm_after_us", after.exposed_comm_us);
  w.field("exposed_comm_before_us", before.exposed_comm_us);
  w.key("passes").begin_array();
  for (const auto& step : r.steps) {
    w.begin_object();
    if (!step.result.added_fake_deps.empty()) w.field("added_fake_deps", step.result.added_fake_deps.size());
    if (!step.result.buckets.empty())
      w.key("buckets").array(step.result.buckets, [&g](JsonWriter& w2, const CollectiveBucket& b) { write_bucket(w2, g, b); });
    if (!step.result.budget_met) w.field("budget_met", false);
    w.field("pass", step.pass);
    if (step.result.peak_after >= 0) w.field("peak_after", step.result.peak_after);
    if (step.result.peak_before >= 0) w.field("peak_before", step.result.peak_before);
    w.key("stats").array(step.result.stats, [&g](JsonWriter& w2, const OverlapStat& s) { write_overlap_stat(w2, g, s); });
    if (step.result.step_after_us >= 0) w.field("step_after_us", step.result.step_after_us);
    if (step.result.step_before_us >= 0) w.field("step_before_us", step.result.step_before_us);
    w.end_object();
  }
  w.end_array();
  w.field("step_time_after_us", after.step_time_us);
  w.field("step_time_before_us", before.step_time_us);
  w.end_object();
}

// The front end's part: eliminated nodes, fused groups, rounds, refusal
// counts by reason. Names are the pre-fusion graph's.
void write_front_end(JsonWriter& w, const Graph& pre, const FrontEndResult& fe) {
  w.begin_object();
  w.key("eliminated").begin_array();
  for (NodeId v : fe.eliminated) w.value(pre.nodes[v].name);
  w.end_array();
  w.key("fused_groups").begin_array();
  for (const auto& grp : fe.fusion.groups) {
    if (grp.size() < 2) continue;
    w.begin_object();
    w.key("members").begin_array();
    for (NodeId v : grp) w.value(pre.nodes[v].name);
    w.end_array();
    w.field("name", fused_node_name(pre, grp));
    w.end_object();
  }
  w.end_array();
  w.field("input_nodes", pre.nodes.size());
  w.field("output_nodes", fe.fusion.groups.size());
  w.field("pairs_considered", fe.fusion.pairs_considered);
  w.key("refusals").begin_object();
  for (const auto& [reason, count] : fe.fusion.refusal_counts) w.field(reason, count);  // a std::map: sorted
  w.end_object();
  w.field("rounds", fe.fusion.rounds);
  w.key("stages").begin_array().value("dependencies").value("dead_code").value("fusion").end_array();
  w.end_object();
}

// Several ranks: per rank its figures (`graph`: its label), the slowest,
// and per collective (rank 0's node) its arrival skew.
void write_ranks(JsonWriter& w, const PlanRanks& ranks) {
  const RanksSimulation& sim = ranks.simulation;
  const Graph& g0 = *ranks.graphs[0];
  w.begin_object();
  w.key("collectives").begin_array();
  for (const RankCollective& c : sim.collectives) {
    w.begin_object();
    w.field("collective", g0.nodes[c.node[0]].name);
    w.field("earliest_issue_us", c.earliest_issue_us);
    w.field("earliest_rank", c.earliest_rank);
    w.field("latest_issue_us", c.latest_issue_us);
    w.field("latest_rank", c.latest_rank);
    w.field("skew_us", c.skew_us());
    w.end_object();
  }
  w.end_array();
  w.key("ranks").begin_array();
  for (std::size_t r = 0; r < sim.ranks.size(); ++r) {
    const Simulation& s = sim.ranks[r];
    w.begin_object();
    w.field("comm_busy_us", s.comm_busy_us);
    w.field("compute_busy_us", s.compute_busy_us);
    w.field("compute_factor", ranks.compute_factors[r]);
    w.field("compute_idle_us", s.compute_idle_us);
    w.field("exposed_comm_us", s.exposed_comm_us);
    w.field("graph", ranks.graphs[r]->name);
    w.field("label", ranks.labels[r]);
    w.field("rank", static_cast<int>(r));
    w.field("step_time_us", s.step_time_us);
    w.end_object();
  }
  w.end_array();
  w.field("slowest_rank", sim.slowest_rank);
  w.field("step_time_us", sim.step_time_us());
  w.end_object();
}

void write_simulation(JsonWriter& w, const Graph& g, const Simulation& sim, std::string_view runtime_source, const PlanRanks* ranks) {
  w.begin_object();
  w.key("collectives").begin_array();
  for (const auto& ct : sim.collectives) {
    w.begin_object();
    w.field("collective", g.nodes[ct.collective].name);
    w.field("end_us", ct.end_us);
    w.field("exposed_us", ct.exposed_us);
    w.field("issue_us", ct.issue_us);
    w.field("start_us", ct.start_us);
    w.key("waited_by");
    if (ct.blocked == kNone) w.null();
    else w.value(g.nodes[ct.blocked].name);
    w.end_object();
  }
  w.end_array();
  w.field("comm_busy_us", sim.comm_busy_us);
  w.field("compute_busy_us", sim.compute_busy_us);
  w.field("compute_idle_us", sim.compute_idle_us);
  w.field("exposed_comm_us", sim.exposed_comm_us);
  if (ranks) {
    w.key("ranks");
    write_ranks(w, *ranks);
  }
  w.field("runtime_source", runtime_source);
  w.field("step_time_us", sim.step_time_us);
  w.end_object();
}

void write_memory(JsonWriter& w, const Graph& g, const MemoryPlan& m) {
  w.begin_object();
  w.field("chosen", m.methods[m.chosen].method);
  w.key("curve").array(m.estimate.curve);
  w.key("method_order").begin_array();
  for (const auto& r : m.methods) w.value(r.method);
  w.end_array();
  // An object by method name, sorted; a name asked twice keeps its last run.
  std::vector<const MemoryMethodResult*> by_name;
  for (const auto& r : m.methods) by_name.push_back(&r);
  std::stable_sort(by_name.begin(), by_name.end(), [](const auto* a, const auto* b) { return a->method < b->method; });
  w.key("methods").begin_object();
  for (std::size_t i = 0; i < by_name.size(); ++i) {
    const MemoryMethodResult& r = *by_name[i];
    if (i + 1 < by_name.size() && by_name[i + 1]->method == r.method) continue;
    w.key(r.method).begin_object();
    if (!r.error.empty()) {
      w.field("error", r.error);
    } else {
      w.key("order");
      write_names(w, g, r.order);
      w.field("peak", r.peak);
    }
    w.end_object();
  }
  w.end_object();
  w.field("peak", m.estimate.peak);
  w.key("peak_live").begin_array();
  for (const auto& lb : m.peak_live) w.begin_object().field("buffer", g.buffers[lb.buf].name).field("bytes", lb.bytes).end_object();
  w.end_array();
  w.field("peak_step", m.estimate.peak_step);
  w.end_object();
}

std::int64_t output_bytes(const Graph& g, const Node& node) {
  std::int64_t sum = 0;
  for (BufId b : node.outputs) sum += g.buffers[b].bytes;
  return sum;
}

// The memory counter track and the collective -> waiter flows of a trace.
// The final order's peak, its step and the node running there.
void write_final(JsonWriter& w, const PlanResult& r) {
  w.begin_object();
  w.field("peak_bytes", r.final_memory.peak);
  w.field("peak_node", node_at_step(r.planned(), r.order, r.final_memory.peak_step));
  w.field("peak_step", r.final_memory.peak_step);
  w.end_object();
}

void write_prediction(JsonWriter& w, const Prediction& p) {
  w.begin_object();
  w.field("hardware", p.hardware);
  w.field("host_probe_us", p.host_probe_us);
  w.key("inductor_kernel_time_us");
  if (p.inductor_kernel_time_us) w.value(*p.inductor_kernel_time_us);
  else w.null();
  w.field("inplace_reuses", p.memory.inplace_reuses);
  w.field("kernel_time_us", p.kernel_time_us);
  // Keys sorted by name, as every object of a plan (the map is by enum).
  std::vector<std::pair<std::string_view, double>> by_class;
  for (const auto& [c, us] : p.class_time_us) by_class.emplace_back(to_string(c), us);
  std::sort(by_class.begin(), by_class.end());
  w.key("kernel_time_us_by_class").begin_object();
  for (const auto& [name, us] : by_class) w.field(name, us);
  w.end_object();
  w.field("peak_bytes", p.peak_bytes);
  w.field("pool_reuses", p.memory.pool_reuses);
  w.field("reserved_bytes", p.reserved_bytes);
  w.field("runtime_source", p.runtime_source);
  w.field("wall_time_us", p.wall_time_us);
  w.field("wall_time_us_cudagraphs", p.wall_time_us_cudagraphs);
  w.key("workspaces").begin_array();
  for (const KernelWorkspace& ws : p.memory.workspaces) {
    w.begin_object();
    w.field("bytes", ws.bytes);
    w.field("node", ws.name);
    w.field("source", to_string(ws.source));
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// Per-node runtimes as the pricing stage left them, in parallel arrays (an
// object per node would cost more than planning a 100k-node graph):
// `us`/`source`, what the comm passes read (runtime_us first: Inductor's
// estimate); `calibrated_us`, the calibrated model the reports use.
void write_runtime_report(JsonWriter& w, const Graph& g, const Pricing& p) {
  double total = 0, calibrated_total = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    total = add_us(total, p.pass_us[v], "runtime total");
    calibrated_total = add_us(calibrated_total, p.calibrated_us[v], "calibrated runtime total");
  }
  w.begin_object();
  w.field("calibrated_source", p.model);
  w.field("calibrated_total_us", calibrated_total);
  w.key("calibrated_us").array(p.calibrated_us);
  w.field("hardware", p.hardware);
  w.key("nodes").begin_array();
  for (const Node& n : g.nodes) w.value(n.name);
  w.end_array();
  w.key("source").array(p.pass_sources);
  w.field("total_us", total);
  w.key("us").array(p.pass_us);
  w.end_object();
}

// Each compared comm-pass list's step, as `plan --comm-passes` with it reports.
void write_compared(JsonWriter& w, const std::vector<ComparedPasses>& compared) {
  w.begin_array();
  for (const ComparedPasses& c : compared) {
    w.begin_object();
    w.key("comm_passes").array(c.comm_passes);
    w.field("compute_idle_us", c.simulation.compute_idle_us);
    w.field("exposed_comm_us", c.simulation.exposed_comm_us);
    w.field("label", c.label);
    w.field("peak_bytes", c.peak_bytes);
    w.field("step_time_us", c.simulation.step_time_us);
    w.end_object();
  }
  w.end_array();
}

void write_memory_track_and_flows(JsonWriter& w, const Graph& g, const Simulation& sim, const std::vector<std::int64_t>& curve) {
  constexpr int kPid = 1, kComputeLane = 1, kCommLane = 2;
  std::vector<std::int32_t> timing_of(g.nodes.size(), -1);
  for (std::int32_t c = 0; c < static_cast<std::int32_t>(sim.collectives.size()); ++c) timing_of[sim.collectives[c].collective] = c;
  std::vector<double> start_of(g.nodes.size(), 0.0);
  auto sample = [&](double ts, std::int64_t bytes) {
    w.begin_object().key("args").begin_object().field("bytes", bytes).end_object();
    w.field("name", "memory").field("ph", "C").field("pid", kPid).field("ts", ts).end_object();
  };
  for (std::size_t step = 0; step < sim.spans.size(); ++step) {
    const StreamSpan& s = sim.spans[step];
    start_of[s.node] = s.start_us;
    // A collective's step happens when it is issued on the compute stream,
    // so the samples stay in time order.
    sample(s.on_comm_stream ? sim.collectives[timing_of[s.node]].issue_us : s.start_us, curve[step]);
  }
  sample(sim.step_time_us, curve.back());
  for (std::int32_t c = 0; c < static_cast<std::int32_t>(sim.collectives.size()); ++c) {
    const CollectiveTiming& ct = sim.collectives[c];
    if (ct.blocked == kNone) continue;
    const std::string name = "wait " + g.nodes[ct.collective].name;
    w.begin_object().field("cat", "flow").field("id", c).field("name", name).field("ph", "s").field("pid", kPid);
    w.field("tid", kCommLane).field("ts", ct.start_us).end_object();
    w.begin_object().field("bp", "e").field("cat", "flow").field("id", c).field("name", name).field("ph", "f").field("pid", kPid);
    w.field("tid", kComputeLane).field("ts", start_of[ct.blocked]).end_object();
  }
}

// schedplan/1 `measured_costs` (docs/schedplan-1.md): what the pricing
// stage mapped of the measured traces.
void write_measured_costs(JsonWriter& w, const MeasuredCosts& m) {
  w.begin_object();
  w.key("classes").begin_object();
  for (const MeasuredClassRatio& c : m.classes) {
    w.key(to_string(c.kernel_class)).begin_object();
    w.field("interpolated", c.interpolated).field("mapped", c.mapped).field("pass_ratio", c.pass_ratio).field("ratio", c.ratio);
    w.end_object();
  }
  w.end_object();
  w.field("collectives", m.collectives).field("compute_nodes", m.compute_nodes).field("decontended_us", m.decontended_us);
  w.field("kernels", m.kernels).field("mapped_collectives", m.mapped_collectives).field("mapped_compute_nodes", m.mapped_compute_nodes);
  w.key("nodes").begin_array();
  for (const MeasuredNode& n : m.nodes) {
    w.begin_object().field("class", to_string(n.kernel_class)).field("measured_us", n.measured_us).field("name", n.name);
    w.field("priced_us", n.priced_us).end_object();
  }
  w.end_array();
  w.field("span_us", m.span_us).field("steps", m.steps);
  w.key("traces").array(m.traces);
  w.field("unmapped_kernel_us", m.unmapped_kernel_us).field("unmapped_kernels", m.unmapped_kernels);
  w.end_object();
}

}  // namespace

void write_plan(JsonWriter& w, const PlanOptions& opts, const PlanResult& r) {
  const Graph& input = *r.input;
  const Graph& g = r.planned();
  w.begin_object();
  if (r.comm) {
    w.key("comm");
    write_comm(w, g, *r.comm, r.simulation_before_comm, r.simulation);
  }
  if (!r.compared.empty()) {
    w.key("compare");
    write_compared(w, r.compared);
  }
  if (r.device_fit) {
    w.key("device_fit");
    write_device_fit(w, *r.device_fit);
  }
  w.key("final");
  write_final(w, r);
  w.field("format", "schedplan/1");
  if (r.front_end) {
    w.key("front_end");
    write_front_end(w, input, *r.front_end);
  }
  w.field("graph", g.name);
  if (r.measured_costs) {
    w.key("measured_costs");
    write_measured_costs(w, *r.measured_costs);
  }
  w.key("memory");
  write_memory(w, g, r.memory);
  w.field("nodes", g.nodes.size());
  w.key("options");
  write_options(w, opts);
  w.key("order");
  write_names(w, g, r.order);
  w.key("predicted");
  write_prediction(w, r.predicted);
  w.key("runtime");
  write_runtime_report(w, g, *r.pricing);
  w.key("simulation");
  write_simulation(w, g, r.simulation, opts.runtime_source == "calibrated" ? std::string_view(r.predicted.runtime_source) : "runtime_us",
                   r.ranks ? &*r.ranks : nullptr);
  w.end_object();
  w.raw("\n");
}

std::string final_section_json(const PlanResult& r) {
  JsonWriter w;
  write_final(w, r);
  return w.take_text();
}

std::string device_fit_section_json(const DeviceFit& f) {
  JsonWriter w;
  write_device_fit(w, f);
  return w.take_text();
}

std::string prediction_section_json(const Prediction& p) {
  JsonWriter w;
  write_prediction(w, p);
  return w.take_text();
}

std::string compare_section_json(const std::vector<ComparedPasses>& compared) {
  JsonWriter w;
  write_compared(w, compared);
  return w.take_text();
}

std::string plan_text_json(const PlanOptions& opts, const PlanResult& r) {
  JsonWriter w;
  write_plan(w, opts, r);
  return w.take_text();
}

void stream_plan_json(std::FILE* out, const std::string& name, const PlanOptions& opts, const PlanResult& r) {
  JsonWriter w(out, name);
  write_plan(w, opts, r);
  w.flush();
}

namespace {

// One process of a trace: its lanes "compute" and "comm", a complete event
// per node and one per stall.
void write_trace_events(JsonWriter& w, const Graph& g, const Simulation& sim, int kPid, const std::string& process) {
  constexpr int kComputeLane = 1, kCommLane = 2;
  auto metadata = [&](std::string_view name, int tid, std::string_view arg, auto value) {
    w.begin_object().key("args").begin_object().field(arg, value).end_object();
    w.field("name", name).field("ph", "M").field("pid", kPid);
    if (tid >= 0) w.field("tid", tid);
    w.end_object();
  };
  metadata("process_name", -1, "name", std::string_view(process));
  metadata("thread_name", kComputeLane, "name", std::string_view("compute"));
  metadata("thread_name", kCommLane, "name", std::string_view("comm"));
  metadata("thread_sort_index", kComputeLane, "sort_index", 0);
  metadata("thread_sort_index", kCommLane, "sort_index", 1);
  std::vector<std::int32_t> timing_of(g.nodes.size(), -1);
  for (std::int32_t c = 0; c < static_cast<std::int32_t>(sim.collectives.size()); ++c) timing_of[sim.collectives[c].collective] = c;
  for (const auto& s : sim.spans) {
    const Node& node = g.nodes[s.node];
    w.begin_object().key("args").begin_object();
    const CollectiveTiming* ct = node.collective ? &sim.collectives[timing_of[s.node]] : nullptr;
    if (ct) {
      w.field("collective", to_string(node.collective->kind));
      w.field("exposed_us", ct->exposed_us);
      w.field("group_size", node.collective->group_size);
      w.field("issued_us", ct->issue_us);
    }
    if (!node.kernel.empty()) w.field("kernel", node.kernel);
    w.field("kind", to_string(node.kind));
    w.field("output_bytes", output_bytes(g, node));
    if (ct) {
      w.field("payload_bytes", node.collective->bytes);
      if (ct->blocked != kNone) w.field("waited_by", g.nodes[ct->blocked].name);
    }
    w.end_object();
    w.field("cat", s.on_comm_stream ? "comm" : "compute");
    w.field("dur", s.end_us - s.start_us);
    w.field("name", node.name);
    w.field("ph", "X").field("pid", kPid);
    w.field("tid", s.on_comm_stream ? kCommLane : kComputeLane);
    w.field("ts", s.start_us);
    w.end_object();
  }
  for (const auto& ct : sim.collectives) {
    if (ct.exposed_us <= 0) continue;
    const Node& c = g.nodes[ct.collective];
    w.begin_object().key("args").begin_object().field("collective", c.name).field("payload_bytes", c.collective->bytes).end_object();
    w.field("cat", "exposed");
    w.field("dur", ct.exposed_us);
    w.field("name", "exposed " + c.name);
    w.field("ph", "X").field("pid", kPid).field("tid", kComputeLane);
    w.field("ts", ct.end_us - ct.exposed_us);
    w.end_object();
  }
}

}  // namespace

void write_chrome_trace(JsonWriter& w, const Graph& g, const Simulation& sim, const std::vector<std::int64_t>* memory_curve) {
  if (memory_curve && memory_curve->size() != sim.spans.size() + 1)
    throw Error("trace: " + std::to_string(memory_curve->size()) + " memory samples for " + std::to_string(sim.spans.size()) + " steps");
  w.begin_object();
  w.field("displayTimeUnit", "ms");
  w.key("otherData").begin_object().field("generator", "schedlab simulate").field("step_time_us", sim.step_time_us).end_object();
  w.key("traceEvents").begin_array();
  write_trace_events(w, g, sim, 1, "schedlab " + (g.name.empty() ? std::string("graph") : g.name));
  if (memory_curve) write_memory_track_and_flows(w, g, sim, *memory_curve);
  w.end_array();
  w.end_object();
  w.raw("\n");
}

std::string ranks_chrome_trace_json(const PlanRanks& ranks) {
  const RanksSimulation& sim = ranks.simulation;
  JsonWriter w;
  w.begin_object();
  w.field("displayTimeUnit", "ms");
  w.key("otherData").begin_object().field("generator", "schedlab simulate").field("slowest_rank", sim.slowest_rank);
  w.field("step_time_us", sim.step_time_us()).end_object();
  w.key("traceEvents").begin_array();
  for (std::size_t r = 0; r < sim.ranks.size(); ++r) {
    const Graph& g = *ranks.graphs[r];
    write_trace_events(w, g, sim.ranks[r], static_cast<int>(r) + 1,
                       "rank " + std::to_string(r) + " " + (g.name.empty() ? std::string("graph") : g.name));
    w.begin_object().key("args").begin_object().field("sort_index", static_cast<int>(r)).end_object();
    w.field("name", "process_sort_index").field("ph", "M").field("pid", static_cast<int>(r) + 1).end_object();
  }
  w.end_array();
  w.end_object();
  w.raw("\n");
  return w.take_text();
}

std::string ranks_json(const PlanRanks& ranks) {
  JsonWriter w;
  write_ranks(w, ranks);
  w.raw("\n");
  return w.take_text();
}

std::string chrome_trace_json(const Graph& g, const Simulation& sim) {
  JsonWriter w;
  write_chrome_trace(w, g, sim);
  return w.take_text();
}

std::string chrome_trace_json(const Graph& g, const Simulation& sim, const std::vector<std::int64_t>& memory_curve) {
  JsonWriter w;
  write_chrome_trace(w, g, sim, &memory_curve);
  return w.take_text();
}

std::string plan_trace_json(const PlanResult& r) {
  return chrome_trace_json(r.planned(), r.simulation, r.final_memory.curve);
}

void stream_plan_trace_json(std::FILE* out, const std::string& name, const PlanResult& r) {
  JsonWriter w(out, name);
  write_chrome_trace(w, r.planned(), r.simulation, &r.final_memory.curve);
  w.flush();
}

std::string comm_knobs_json(const CommKnobs& knobs) {
  JsonWriter w;
  write_comm_knobs(w, knobs);
  return w.take_text();
}

std::string hardware_profile_json(const HardwareProfile& hw) {
  JsonWriter w;
  w.begin_object();
  w.field("dram_bytes_per_s", hw.dram_bytes_per_s);
  w.key("flops_per_s").begin_object();
  for (const auto& [dtype, flops] : hw.flops_per_s) w.field(dtype, flops);  // a std::map: sorted
  w.end_object();
  w.field("kernel_launch_us", hw.kernel_launch_us);
  w.field("name", hw.name);
  w.field("network_bytes_per_s", hw.network_bytes_per_s);
  w.field("network_latency_us", hw.network_latency_us);
  w.field("nvlink_bytes_per_s", hw.nvlink_bytes_per_s);
  w.field("nvlink_latency_us", hw.nvlink_latency_us);
  w.field("ranks_per_node", hw.ranks_per_node);
  w.end_object();
  return w.take_text();
}

std::string plan_json(std::string_view graph_json, std::string_view options_json) {
  PlanOptions opts = parse_plan_options(options_json);
  PlanResult r = run_plan(load_graph(graph_json), opts);
  return plan_text_json(opts, r);
}

}  // namespace schedlab
