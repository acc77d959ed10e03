// wasm — Embind bindings: the JS face of core/, nothing more. Every entry
// point is a thin call into core; wasm/api.js (appended to the generated
// module) turns the {ok, kind, text} results into return values or thrown JS
// Errors, so no C++ exception ever crosses into JS.
//
// The API mirrors the CLI: plan() is core's plan_json(), the same function the
// CLI's `plan -o` writes, so the two outputs are byte for byte equal.
#include <emscripten/bind.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include <nlohmann/json.hpp>

#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/fusion/fusion.h"
#include "core/io/graph_reader.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/memory/estimate.h"
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
  return guarded([&] { return graph_summary(load_graph(graph_json)).dump(); });
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

// What the page's controls offer: the built-in hardware profiles and every
// comm-pass knob with Inductor's default.
CallResult plan_controls() {
  return guarded([] {
    return json{{"hardware", builtin_profile_names()}, {"default_hardware", std::string(kDefaultHardwareProfile)}, {"comm_knobs", json::parse(comm_knobs_json(CommKnobs{}))}}
        .dump();
  });
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
  // Returns the plan text.
  CallResult run(const std::string& graph_json, const std::string& options_json) {
    return guarded([&] {
      planned_ = false;
      PlanOptions opts = parse_plan_options(options_json);
      result_ = run_plan(load_graph(graph_json), opts);
      planned_ = true;
      const Graph& g = planned();
      info_ = compute_planning_info(g, g.baseline_order());
      orders_ = {g.baseline_order(), result_.order};
      return plan_text_json(opts, result_);
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

  // The lifetimes of the buffers of an order alive anywhere in steps
  // [from, to], for the page's stacked view around a step: start and last
  // live step, bytes, and what the buffer is (producer, kernel, dtype, shape,
  // last user, category).
  CallResult lifetimes(int order_index, int from, int to) {
    return guarded([&] {
      const Graph& g = planned();
      const Order& order = order_at(order_index);
      json out = json::array();
      for (const auto& lt : compute_memory_timeline(g, info_, order)) {
        if (lt.end_step < from || lt.start_step > to || lt.size_alloc <= 0) continue;
        const Buffer& b = g.buffers[lt.buf];
        // Freed after its last live step's node (a graph output never is).
        const bool freed = !lt.live_to_end && lt.end_step >= 0 && lt.end_step < static_cast<std::int32_t>(order.size());
        const std::string last_user = freed ? g.nodes[order[lt.end_step]].name : "";
        const Node* producer = b.is_input ? nullptr : &g.nodes[b.producer];
        const char* category = b.is_input                          ? "input"
                               : producer->collective              ? "collective"
                               : info_.is_graph_output[lt.buf] ? "output"
                                                                   : "activation";
        out.push_back({{"buffer", b.name}, {"bytes", lt.size_alloc}, {"start", lt.start_step}, {"end", lt.end_step},
                       {"to_end", lt.live_to_end}, {"producer", producer ? producer->name : ""},
                       {"kernel", producer ? producer->kernel : ""}, {"dtype", b.dtype}, {"shape", b.shape},
                       {"last_user", last_user}, {"category", category}});
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

  // The node names of an order, as a JSON array.
  CallResult names(int order_index) {
    return guarded([&] {
      const Graph& g = planned();
      json out = json::array();
      for (NodeId v : order_at(order_index)) out.push_back(g.nodes[v].name);
      return out.dump();
    });
  }

  CallResult curve(int order_index) {
    return guarded([&] {
      PeakMemoryEstimate est = estimate_peak_memory(planned(), info_, order_at(order_index));
      return json{{"peak", est.peak}, {"peak_step", est.peak_step}, {"curve", est.curve}}.dump();
    });
  }

  // Buffers alive at `step` of an order, largest first, with their producers.
  CallResult live_at(int order_index, int step) {
    return guarded([&] {
      const Graph& g = planned();
      const Order& order = order_at(order_index);
      if (step < 0 || step > static_cast<int>(order.size())) throw OptionError("step " + std::to_string(step) + ": out of range");
      json out = json::array();
      for (const auto& lb : live_buffers_at(g, info_, order, step)) {
        const Buffer& b = g.buffers[lb.buf];
        out.push_back({{"buffer", b.name}, {"bytes", lb.bytes}, {"producer", b.is_input ? "" : g.nodes[b.producer].name}});
      }
      return out.dump();
    });
  }

 private:
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
  PlanResult result_;
  MemoryPlanningInfo info_;
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
  class_<PlanSession>("RawPlanSession")
      .constructor<>()
      .function("run", &PlanSession::run)
      .function("trace", &PlanSession::trace)
      .function("traceBeforeComm", &PlanSession::trace_before_comm)
      .function("explain", &PlanSession::explain)
      .function("inputNames", &PlanSession::input_names)
      .function("bufferProducers", &PlanSession::buffer_producers)
      .function("lifetimes", &PlanSession::lifetimes)
      .function("summary", &PlanSession::summary)
      .function("names", &PlanSession::names)
      .function("curve", &PlanSession::curve)
      .function("liveAt", &PlanSession::live_at);
}
