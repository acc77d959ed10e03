// wasm — Embind bindings: the JS face of core/, nothing more. Every entry
// point is a thin call into core; wasm/api.js (appended to the generated
// module) turns the {ok, kind, text} results into return values or thrown JS
// Errors, so no C++ exception ever crosses into JS.
//
// The API mirrors the CLI: plan() is core's plan_json(), the same function the
// CLI's `plan -o` writes, so the two outputs are byte for byte equal.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <string>

#include <nlohmann/json.hpp>

#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/fusion/fusion.h"
#include "core/io/graph_reader.h"
#include "core/io/json_input.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/measure/fit.h"
#include "core/memory/estimate.h"
#include "core/memory/executed.h"
#include "core/memory/methods.h"
#include "core/memory/planning_info.h"
#include "core/plan/plan.h"
#include "core/sim/simulate.h"
#include "core/util/error.h"

namespace schedlab::wasm {
namespace {

using nlohmann::json;

// What a call returns to api.js: the result text, or the error message with
// its kind ("usage", "input" or "internal": the CLI's exit codes 2, 1, 3).
struct CallResult {
  bool ok = true;
  std::string kind;
  std::string text;
};

// Runs `body` and catches exactly what the CLI's main() catches, with the
// same messages (the CLI prefixes them with "schedlab COMMAND: ").
template <class Body>
CallResult guarded(Body&& body) {
  try {
    return {true, "", body()};
  } catch (const OptionError& e) {
    return {false, "usage", e.what()};
  } catch (const Error& e) {
    return {false, "input", e.what()};
  } catch (const std::bad_alloc&) {
    return {false, "internal", "out of memory"};
  } catch (const std::exception& e) {
    return {false, "internal", std::string("internal error: ") + e.what()};
  }
}

CallResult plan(const std::string& graph_json, const std::string& options_json) {
  return guarded([&] { return plan_json(graph_json, options_json); });
}

// The counts `schedlab validate` prints.
json graph_summary(const Graph& g) {
  std::size_t reads = 0;
  for (const auto& n : g.nodes) reads += n.reads.size();
  return {{"graph", g.name},
          {"nodes", g.num_nodes()},
          {"buffers", g.num_buffers() - g.num_inputs},
          {"inputs", g.num_inputs},
          {"reads", reads},
          {"outputs", g.outputs.size()},
          {"fused", !g.is_pre_fusion()}};
}

CallResult validate(const std::string& graph_json) {
  return guarded([&] {
    check_json_text(graph_json);  // the reader policy, as the CLI applies it to a file
    return graph_summary(load_graph(graph_json)).dump();
  });
}

CallResult memory_method_table() {
  return guarded([] {
    json out = json::array();
    const auto defaults = default_memory_methods();
    for (const auto& m : memory_methods()) {
      bool is_default = std::find(defaults.begin(), defaults.end(), m.name) != defaults.end();
      out.push_back({{"name", m.name}, {"summary", m.summary}, {"default", is_default}});
    }
    return out.dump();
  });
}

CallResult comm_pass_table() {
  return guarded([] {
    json out = json::array();
    for (const auto& p : comm_passes()) out.push_back({{"name", p.name}, {"summary", p.summary}, {"default", false}});
    return out.dump();
  });
}

// Checks plan options (parse_plan_options) without planning: the page asks
// before it selects a loaded profile file, so a bad one is named as the
// culprit and never sticks.
CallResult check_options(const std::string& options_json) {
  return guarded([&] {
    parse_plan_options(options_json);
    return std::string();
  });
}

// What the page's controls offer: the built-in hardware profiles and every
// comm-pass knob with Inductor's default.
CallResult plan_controls() {
  return guarded([] {
    return json{{"hardware", builtin_profile_names()}, {"default_hardware", std::string(kDefaultHardwareProfile)}, {"comm_knobs", json::parse(comm_knobs_json(CommKnobs{}))}}
        .dump();
  });
}

// Buffers whose size depends on data (schedgraph/1 `size_hint`): how many,
// the bytes the scheduler's figure counts them at (Inductor's hint, usually
// 0) and the bytes memory as executed prices them with (`hint_bytes`).
json data_dependent_sizes(const Graph& g) {
  std::int64_t count = 0, scheduler_bytes = 0, hint_bytes = 0;
  for (const Buffer& b : g.buffers) {
    if (!b.hint_bytes) continue;
    ++count;
    scheduler_bytes += b.bytes;
    hint_bytes += *b.hint_bytes;
  }
  return {{"buffers", count}, {"scheduler_bytes", scheduler_bytes}, {"hint_bytes", hint_bytes}};
}

// One planning run kept alive for the page: the plan text (byte for byte the
// CLI's `plan -o`), the Chrome trace of its simulation (`plan --trace`), and
// per-step views of the planned graph (the fused one when the input was
// pre-fusion): the memory curve of any order and the buffers live at a step,
// from core/memory's estimators with the baseline order's planning info, as
// the plan computes them. Order 0 is the planned graph's baseline, order 1
// the plan's final order.
class PlanSession {
 public:
  // The page's way in: the graph's bytes, which api.js copied into the WASM
  // heap at `data` (a 40 MB file is never a JS string converted byte by
  // byte), planned stage by stage: `on_stage(name)` is called as each stage
  // starts ("load", run_plan's stages, then "views"), so the worker can show
  // progress and time each stage. The plan text is written only when asked
  // for (planText).
  CallResult run_buffer(std::uintptr_t data, std::size_t size, const std::string& options_json, emscripten::val on_stage) {
    return guarded([&] {
      start(options_json);
      on_stage(std::string("load"));
      const std::string_view text(reinterpret_cast<const char*>(data), size);
      check_json_text(text);  // the reader policy, as the CLI applies it to a file: the same message
      auto input = std::make_shared<const Graph>(load_graph(text));
      PlanResult r = run_plan(std::move(input), opts_, [&](const PlanStage& stage) { on_stage(std::string(stage.name)); });
      on_stage(std::string("views"));
      finish(std::move(r));
      return std::string();
    });
  }

  // What the page's first report shows, under the plan's own keys (a subset
  // of schedplan/1; `final` and `predicted` written by core/io's plan writer,
  // as in the plan), plus the node the memory method's order runs at its
  // peak (`method_peak_node`): the page shows its summary without waiting
  // for the plan text (megabytes on a big graph) and its parse, which come
  // after (planText) for the fusion table, the comm tables and the export.
  // `simulation.collective_count` stands for the plan's list of collectives;
  // `compare`, with options.compare, is the plan's.
  CallResult overview() {
    return guarded([&] {
      const Graph& g = planned();
      const PlanResult& r = result_;
      json methods = json::object();
      json method_order = json::array();
      for (const auto& m : r.memory.methods) {
        method_order.push_back(m.method);
        methods[m.method] = m.error.empty() ? json{{"peak", m.peak}} : json{{"error", m.error}};
      }
      json out = {
          {"graph", g.name},
          {"nodes", g.nodes.size()},
          {"final", json::parse(final_section_json(r))},
          {"memory",
           {{"chosen", r.memory.methods[r.memory.chosen].method},
            {"method_order", std::move(method_order)},
            {"methods", std::move(methods)},
            {"peak", r.memory.estimate.peak},
            {"peak_step", r.memory.estimate.peak_step}}},
          {"method_peak_node", std::string(node_at_step(g, r.memory.order(), r.memory.estimate.peak_step))},
          {"options", {{"hardware", opts_.hardware.name}, {"comm_passes", opts_.comm_passes}}},
          {"simulation",
           {{"step_time_us", r.simulation.step_time_us},
            {"exposed_comm_us", r.simulation.exposed_comm_us},
            {"collective_count", r.simulation.collectives.size()}}},
          {"predicted", json::parse(prediction_section_json(r.predicted))},
          {"data_dependent", data_dependent_sizes(g)},
      };
      if (r.device_fit) out["device_fit"] = json::parse(device_fit_section_json(*r.device_fit));
      if (r.front_end) out["front_end"] = {{"input_nodes", r.input->nodes.size()}};
      if (!r.compared.empty()) out["compare"] = json::parse(compare_section_json(r.compared));
      if (r.comm)
        out["comm"] = {{"step_time_before_us", r.simulation_before_comm.step_time_us},
                       {"exposed_comm_before_us", r.simulation_before_comm.exposed_comm_us}};
      return out.dump();
    });
  }

  // Per comm pass, in the order applied: the pass, for each node of its
  // order the node's step in the order before it (`positions`; the page
  // counts the moved nodes as its order table does), the scheduler's peak of
  // the order before and after it, and the simulated step time and exposed
  // communication after it (simulate_plan_order: the plan's pricing), so every
  // pass reports its moves and its effect in the step's own units.
  CallResult pass_steps() {
    return guarded([&] {
      const Graph& g = planned();
      json out = json::array();
      if (!result_.comm) return out.dump();
      const PlanResult& r = result_;
      const Order* before = &r.memory.order();
      std::int64_t peak_before = r.memory.estimate.peak;
      for (const auto& step : r.comm->steps) {
        const Order& after = step.result.order;
        std::vector<std::int32_t> step_of(g.nodes.size(), -1);
        for (std::size_t i = 0; i < before->size(); ++i) step_of[(*before)[i]] = static_cast<std::int32_t>(i);
        std::vector<std::int32_t> positions(after.size());
        for (std::size_t i = 0; i < after.size(); ++i) positions[i] = step_of[after[i]];
        const std::int64_t peak_after = estimate_peak_memory(g, *info_, after).peak;
        const Simulation sim = simulate_plan_order(r, after);
        out.push_back({{"pass", step.pass}, {"positions", std::move(positions)}, {"peak_before", peak_before},
                       {"peak_after", peak_after}, {"step_time_us", sim.step_time_us}, {"exposed_comm_us", sim.exposed_comm_us}});
        before = &after;
        peak_before = peak_after;
      }
      return out.dump();
    });
  }

  // The plan's schedplan/1 text (byte for byte `schedlab plan -o`), written
  // on the first call after a run.
  CallResult plan_text_call() {
    return guarded([&] {
      planned();
      return plan_text();
    });
  }

  // The node names of an order joined by newlines (one string is far
  // cheaper to hand to JS than a JSON array of 100k strings).
  CallResult names_text(int order_index) {
    return guarded([&] {
      const Graph& g = planned();
      std::string out;
      for (NodeId v : order_at(order_index)) {
        if (!out.empty()) out += '\n';
        out += g.nodes[v].name;
      }
      return out;
    });
  }

  // For each step of the final order, the step of the same node in the
  // baseline order (the page's order table), as a view of the WASM heap
  // valid until the next call (api.js copies it); null when nothing is planned.
  emscripten::val baseline_steps() {
    if (!planned_) return emscripten::val::null();
    const Order& baseline = orders_[0];
    const Order& final_order = orders_[1];
    std::vector<std::int32_t> step_of(planned().nodes.size(), -1);
    for (std::size_t i = 0; i < baseline.size(); ++i) step_of[baseline[i]] = static_cast<std::int32_t>(i);
    baseline_steps_.resize(final_order.size());
    for (std::size_t i = 0; i < final_order.size(); ++i) baseline_steps_[i] = step_of[final_order[i]];
    return emscripten::val(emscripten::typed_memory_view(baseline_steps_.size(), baseline_steps_.data()));
  }

  // The name of the node at `step` of an order ("" past its last step).
  CallResult name_at(int order_index, int step) {
    return guarded([&] { return std::string(node_at_step(planned(), order_at(order_index), step)); });
  }

  // An order's memory curve as a view of the WASM heap (doubles: exact for
  // any byte count below 2^53), valid until the next call; api.js copies it.
  // null when nothing is planned or there is no such order.
  emscripten::val curve_view(int order_index) {
    if (!planned_ || order_index < 0 || order_index >= static_cast<int>(orders_.size())) return emscripten::val::null();
    const PeakMemoryEstimate& est = estimate_at(order_index);
    curve_doubles_.assign(est.curve.begin(), est.curve.end());
    return emscripten::val(emscripten::typed_memory_view(curve_doubles_.size(), curve_doubles_.data()));
  }

  // {peak, peak_step} of an order's curve.
  CallResult peak(int order_index) {
    return guarded([&] {
      const PeakMemoryEstimate& est = estimate_at(order_index);
      return json{{"peak", est.peak}, {"peak_step", est.peak_step}}.dump();
    });
  }

  // The Chrome trace of the final order's simulation, as `plan --trace`
  // writes it (on demand: it is large).
  CallResult trace() {
    return guarded([&] { return plan_trace_json(result_); });
  }

  // The Chrome trace of the order before the comm passes (the memory
  // method's), for the page's before/after timeline.
  CallResult trace_before_comm() {
    return guarded([&] { return chrome_trace_json(planned(), result_.simulation_before_comm); });
  }

  // `schedlab fuse --explain A B` on the input graph (names of the input,
  // pre-fusion, graph): whether A and B end in one group, and every refusal.
  CallResult explain(const std::string& a, const std::string& b) {
    return guarded([&] {
      if (!planned_) throw OptionError("plan session: nothing planned yet");
      const Graph& g = *result_.input;
      if (!g.is_pre_fusion()) throw OptionError("why not fused: this graph is already fused (open a pre-fusion graph)");
      const auto node_arg = [&](const std::string& name) {
        NodeId v = g.find_node(name);
        if (v == kNone) throw OptionError("why not fused: no node named \"" + name + "\"");
        return v;
      };
      FusionExplanation ex = explain_fusion(g, node_arg(a), node_arg(b), FusionOptions{});
      json refusals = json::array();
      for (const auto& r : ex.refusals) refusals.push_back({{"round", r.round}, {"node1", r.node1}, {"node2", r.node2}, {"reason", r.reason}});
      return json{{"a", a}, {"b", b}, {"fused", ex.fused}, {"group_a", ex.group_a}, {"group_b", ex.group_b},
                  {"eliminated_a", ex.eliminated_a}, {"eliminated_b", ex.eliminated_b}, {"refusals", std::move(refusals)},
                  {"final_reason", ex.final_reason}, {"max_pairwise_attempts", FusionOptions{}.max_pairwise_attempts}}
          .dump();
    });
  }

  // Memory as executed over the order a compiled call runs in (order_as_run:
  // Inductor's own memory reordering of the graph), event by event, to set
  // beside a measured allocator trace (a torch.cuda.memory._snapshot()):
  // {steps, events: [[kind "a" | "f" | "r", buffer ("": a kernel's
  // workspace), node, step, bytes ("a", "f") | donor ("r")]]}.
  CallResult executed_as_run() {
    return guarded([&] {
      const Graph& g = planned();
      const Order order = order_as_run(g);
      std::vector<std::int32_t> step_of(g.nodes.size(), -1);
      for (std::size_t i = 0; i < order.size(); ++i) step_of[order[i]] = static_cast<std::int32_t>(i);
      const ExecutedMemory m = estimate_memory_as_executed(g, order);
      json events = json::array();
      for (const ExecutedEvent& e : m.events) {
        const char* kind = e.kind == ExecutedEvent::Kind::Allocate ? "a" : e.kind == ExecutedEvent::Kind::Free ? "f" : "r";
        json item = json::array({kind, e.buf == kNone ? std::string() : g.buffers[e.buf].name, g.nodes[e.at].name, step_of[e.at]});
        if (e.kind == ExecutedEvent::Kind::Reuse) item.push_back(g.buffers[e.donor].name);
        else item.push_back(e.bytes);
        events.push_back(std::move(item));
      }
      return json{{"steps", order.size()}, {"events", std::move(events)}}.dump();
    });
  }

  // The bands of an order's stacked-lifetime view (core/memory held_bands:
  // they sum to the memory curve at every step) held anywhere in steps
  // [from, to]: start and last held step, bytes, and what the buffer is
  // (producer, kernel, dtype, shape, last user, category; `owner` the
  // multi-output container holding an item's bytes; `never_freed` bytes a
  // container allocated for an item it does not own; `data_dependent` a
  // size from Inductor's hint, `hint_bytes` the size to price with).
  CallResult lifetimes(int order_index, int from, int to) {
    return guarded([&] {
      const Graph& g = planned();
      const Order& order = order_at(order_index);
      const auto n = static_cast<std::int32_t>(order.size());
      json out = json::array();
      for (const auto& band : held_bands(g, *info_, order)) {
        if (band.end < from || band.start > to || band.bytes == 0) continue;
        const Buffer& b = g.buffers[band.buf];
        const bool freed = !band.live_to_end && !band.never_freed && band.end < n;
        const std::string last_user = freed ? g.nodes[order[band.end]].name : "";
        const Node* producer = b.is_input ? nullptr : &g.nodes[b.producer];
        const char* category = b.is_input                          ? "input"
                               : producer->collective              ? "collective"
                               : info_->is_graph_output[band.buf] ? "output"
                                                                   : "activation";
        json item = {{"buffer", b.name}, {"bytes", band.bytes}, {"start", band.start}, {"end", std::min(band.end, n - 1)},
                     {"to_end", band.live_to_end || band.never_freed}, {"producer", producer ? producer->name : ""},
                     {"kernel", producer ? producer->kernel : ""}, {"dtype", b.dtype}, {"shape", b.shape},
                     {"last_user", last_user}, {"category", category}};
        if (band.owner != band.buf) item["owner"] = g.buffers[band.owner].name;
        if (band.never_freed) item["never_freed"] = true;
        if (b.hint_bytes) {
          item["data_dependent"] = true;
          item["hint_bytes"] = *b.hint_bytes;
        }
        out.push_back(std::move(item));
      }
      return out.dump();
    });
  }

  // Counts of the input graph and of the planned one.
  CallResult summary() {
    return guarded([&] {
      const Graph& g = planned();  // throws before anything is planned
      return json{{"input", graph_summary(*result_.input)}, {"planned", graph_summary(g)}}.dump();
    });
  }

  // The input graph's node names (before fusion, for a pre-fusion input).
  CallResult input_names() {
    return guarded([&] {
      if (!planned_) throw OptionError("plan session: nothing planned yet");
      json out = json::array();
      for (const auto& n : result_.input->nodes) out.push_back(n.name);
      return out.dump();
    });
  }

  // Every buffer of the planned graph with the node that produces it ("" for
  // an input), as [[buffer, producer], ...]: the page's search by buffer name.
  CallResult buffer_producers() {
    return guarded([&] {
      const Graph& g = planned();
      json out = json::array();
      for (const auto& b : g.buffers) out.push_back({b.name, b.is_input ? "" : g.nodes[b.producer].name});
      return out.dump();
    });
  }

  // Buffers alive at `step` of an order, largest first, with their producers.
  CallResult live_at(int order_index, int step) {
    return guarded([&] {
      const Graph& g = planned();
      const Order& order = order_at(order_index);
      if (step < 0 || step > static_cast<int>(order.size())) throw OptionError("step " + std::to_string(step) + ": out of range");
      json out = json::array();
      for (const auto& lb : live_buffers_at(g, *info_, order, step)) {
        const Buffer& b = g.buffers[lb.buf];
        out.push_back({{"buffer", b.name}, {"bytes", lb.bytes}, {"producer", b.is_input ? "" : g.nodes[b.producer].name}});
      }
      return out.dump();
    });
  }

 private:
  void start(const std::string& options_json) {
    planned_ = false;
    plan_text_.clear();
    estimates_.clear();
    opts_ = parse_plan_options(options_json);
  }

  void finish(PlanResult r) {
    result_ = std::move(r);
    planned_ = true;
    const Graph& g = planned();
    // The memory stage's planning info (of the baseline order): the same the plan's estimates read.
    info_ = result_.memory.info;
    orders_ = {g.baseline_order(), result_.order};
  }

  const std::string& plan_text() {
    if (plan_text_.empty()) plan_text_ = plan_text_json(opts_, result_);
    return plan_text_;
  }

  // The memory estimate of an order, computed once (the final order's is the plan's own).
  const PeakMemoryEstimate& estimate_at(int order_index) {
    const Order& order = order_at(order_index);
    if (order_index == 1) return result_.final_memory;
    auto it = estimates_.find(order_index);
    if (it == estimates_.end()) it = estimates_.emplace(order_index, estimate_peak_memory(planned(), *info_, order)).first;
    return it->second;
  }

  const Graph& planned() const {
    if (!planned_) throw OptionError("plan session: nothing planned yet");
    return result_.planned();
  }
  const Order& order_at(int index) const {
    planned();
    if (index < 0 || index >= static_cast<int>(orders_.size())) throw OptionError("plan session: unknown order " + std::to_string(index));
    return orders_[index];
  }

  bool planned_ = false;  // false until a run succeeds
  PlanOptions opts_;
  PlanResult result_;
  std::string plan_text_;  // written on demand
  std::map<int, PeakMemoryEstimate> estimates_;
  std::vector<double> curve_doubles_;  // what curve_view() shows
  std::vector<std::int32_t> baseline_steps_;  // what baseline_steps() shows
  std::shared_ptr<const MemoryPlanningInfo> info_;
  std::vector<Order> orders_;
};

}  // namespace
}  // namespace schedlab::wasm

EMSCRIPTEN_BINDINGS(schedlab) {
  using namespace emscripten;
  using namespace schedlab::wasm;
  value_object<CallResult>("CallResult").field("ok", &CallResult::ok).field("kind", &CallResult::kind).field("text", &CallResult::text);
  function("rawPlan", &plan);
  function("rawValidate", &validate);
  function("rawCommPasses", &comm_pass_table);
  function("rawMemoryMethods", &memory_method_table);
  function("rawPlanControls", &plan_controls);
  function("rawCheckOptions", &check_options);
  class_<PlanSession>("RawPlanSession")
      .constructor<>()
      .function("runBuffer", &PlanSession::run_buffer)
      .function("planText", &PlanSession::plan_text_call)
      .function("passSteps", &PlanSession::pass_steps)
      .function("overview", &PlanSession::overview)
      .function("namesText", &PlanSession::names_text)
      .function("curveView", &PlanSession::curve_view)
      .function("baselineSteps", &PlanSession::baseline_steps)
      .function("nameAt", &PlanSession::name_at)
      .function("peak", &PlanSession::peak)
      .function("trace", &PlanSession::trace)
      .function("traceBeforeComm", &PlanSession::trace_before_comm)
      .function("explain", &PlanSession::explain)
      .function("inputNames", &PlanSession::input_names)
      .function("bufferProducers", &PlanSession::buffer_producers)
      .function("lifetimes", &PlanSession::lifetimes)
      .function("executedAsRun", &PlanSession::executed_as_run)
      .function("summary", &PlanSession::summary)
      .function("liveAt", &PlanSession::live_at);
}
