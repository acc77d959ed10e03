// Measured costs fed back (core/measure/measured_costs.h, `plan
// --measured-trace`): the trace reader's refusals, the step splitting, the
// kernel classes, and the mapping of a real 4-GPU step's kernels
// (tests/data/dist4) to its graph's nodes through the plan's pricing stage.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>

#include "core/cost/collective_times.h"
#include "core/cost/cost_model.h"
#include "core/cost/pricing.h"
#include "core/io/graph_reader.h"
#include "core/io/plan_writer.h"
#include "core/io/trace_reader.h"
#include "core/measure/measured_costs.h"
#include "core/plan/plan.h"
#include "core/util/error.h"
#include "tests/test_util.h"

using namespace schedlab;
using schedlab::test::data_path;

namespace {

std::string refusal(const std::string& text) {
  try {
    load_measured_trace(text, "t.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const std::string kStep = "dist4/steps/run1/fsdp/default/";

}  // namespace

TEST_CASE("measured traces: a bad trace is refused naming the file and the field", "[measured_costs]") {
  CHECK_THAT(refusal("{"), Catch::Matchers::StartsWith("t.json: not valid JSON"));
  CHECK(refusal("{\"x\": 1}") == "t.json: traceEvents: missing (expected a Chrome trace: torch.profiler's export_chrome_trace or python/dist's measured trace)");
  CHECK(refusal("{\"traceEvents\": 3}") == "t.json: traceEvents: expected an array of trace events");
  CHECK(refusal("{\"traceEvents\": [7]}") == "t.json: traceEvents[0]: expected an object");
  CHECK(refusal(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}, {"ph": "X", "cat": "kernel", "name": "k", "ts": 1}]})") ==
        "t.json: traceEvents[1].dur: missing (expected µs)");
  CHECK(refusal(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": 1}]})") == "t.json: traceEvents[0].ts: missing (expected µs)");
  CHECK(refusal(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 0, "dur": 1}]})") == "t.json: traceEvents[0].name: expected a string");
  CHECK(refusal(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": -1}]})") ==
        "t.json: traceEvents[0].dur: expected a finite number of µs in 0..1e12");
  CHECK(refusal(R"({"traceEvents": [{"ph": "X", "cat": "comm", "name": "k", "ts": "0", "dur": 1}]})") ==
        "t.json: traceEvents[0].ts: expected a finite number of µs");
  CHECK_THAT(refusal(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 1}]})"),
             Catch::Matchers::StartsWith("t.json: traceEvents: no GPU kernels"));
  CHECK_THAT(refusal("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"),
             Catch::Matchers::StartsWith("t.json: not valid JSON"));
}

TEST_CASE("measured traces: torch.profiler's steps split by annotation, else at idle gaps", "[measured_costs]") {
  // Two schedlab_step annotations; kernels launched (correlation) inside each.
  const std::string marked = R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "schedlab_step_0", "ts": 0, "dur": 100},
    {"ph": "X", "cat": "user_annotation", "name": "schedlab_step_1", "ts": 200, "dur": 100},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 1, "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 20, "dur": 1, "args": {"correlation": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 210, "dur": 1, "args": {"correlation": 3}},
    {"ph": "X", "cat": "kernel", "name": "triton_poi_fused_0", "ts": 50, "dur": 5, "args": {"correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL", "ts": 60, "dur": 5, "args": {"correlation": 2}},
    {"ph": "X", "cat": "kernel", "name": "nvjet_sm90", "ts": 250, "dur": 5, "args": {"correlation": 3}},
    {"ph": "X", "cat": "kernel", "name": "outside", "ts": 500, "dur": 5, "args": {"correlation": 9}}]})";
  const MeasuredTrace t = load_measured_trace(marked, "m.json");
  CHECK(t.format == "torch.profiler");
  REQUIRE(t.steps.size() == 2);
  CHECK(t.steps[0].size() == 2);
  CHECK(t.steps[0][1].comm);
  CHECK(t.steps[1].size() == 1);
  // ProfilerStep#N where no schedlab_step annotation is there.
  std::string profiler = marked;
  for (std::size_t at; (at = profiler.find("schedlab_step_")) != std::string::npos;) profiler.replace(at, 14, "ProfilerStep#");
  CHECK(load_measured_trace(profiler, "p.json").steps.size() == 2);
  // Without annotations: at idle gaps over 1 ms.
  const MeasuredTrace gaps = load_measured_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "a", "ts": 0, "dur": 5},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset", "ts": 500, "dur": 5},
    {"ph": "X", "cat": "kernel", "name": "b", "ts": 3000, "dur": 5}]})", "g.json");
  REQUIRE(gaps.steps.size() == 2);
  CHECK(gaps.steps[0].size() == 2);
}

TEST_CASE("measured traces: kernel names to classes", "[measured_costs]") {
  CHECK(kernel_token("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)") == "nccl:all_gather");
  CHECK(kernel_token("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL") == "nccl:reduce_scatter");
  CHECK(kernel_token("ncclDevKernel_AllReduce_Sum_f32_RING_LL") == "nccl:all_reduce");
  CHECK(kernel_token("ncclDevKernel_SendRecv") == "nccl:all_to_all");
  CHECK(kernel_token("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT") == "gemm");
  CHECK(kernel_token("triton_red_fused_sum_3") == "triton");
  CHECK(kernel_token("pytorch_flash::flash_fwd_kernel<...>") == "attention");
  CHECK(kernel_token("Memset (Device)") == "memset");
  CHECK(kernel_token("void at::native::vectorized_elementwise_kernel<4>") == "other");
}

TEST_CASE("measured traces: a real 4-GPU step's kernels map to its graph and price the plan", "[measured_costs]") {
  // fsdp's forward graph, in the order it ran (its file order), and the
  // measured trace of rank 0 (the forward and backward graphs' kernels).
  auto g = std::make_shared<const Graph>(load_graph_file(data_path(kStep + "fsdp_0_fwd.post.json")));
  const MeasuredTrace trace = load_measured_trace_file(data_path(kStep + "measured.rank0.trace.json"));
  CHECK(trace.format == "lanes");
  PlanOptions opts;
  opts.fuse = false;
  opts.memory_methods = {"baseline"};
  const PlanResult model = run_plan(g, opts);
  opts.measured_traces = std::make_shared<const std::vector<MeasuredTrace>>(std::vector<MeasuredTrace>{trace});
  const PlanResult fed = run_plan(g, opts);
  REQUIRE(fed.measured_costs);
  const MeasuredCosts& m = *fed.measured_costs;
  CHECK(m.collectives == 8);
  CHECK(m.mapped_collectives == 8);
  CHECK(m.compute_nodes == 16);
  CHECK(m.mapped_compute_nodes == 16);
  CHECK(m.steps == 1);
  // op2, the first GEMM: the trace's 345.9 µs nvjet kernel (nothing beside it).
  const Graph& pg = fed.planned();
  const auto op2 = std::find_if(pg.nodes.begin(), pg.nodes.end(), [](const Node& n) { return n.name == "op2"; }) - pg.nodes.begin();
  CHECK(m.measured_us[static_cast<std::size_t>(op2)] == Approx(345.888671875));
  CHECK(fed.pricing->calibrated_us[static_cast<std::size_t>(op2)] == Approx(345.888671875));
  CHECK(fed.pricing->pass_sources[static_cast<std::size_t>(op2)] == "measured");
  CHECK(fed.simulation.step_time_us > model.simulation.step_time_us);
  // The plan lists every mapped node beside the model's price of it (what
  // scripts/fit-sustained-rate.py fits from).
  REQUIRE(m.nodes.size() == 24);
  const auto listed = std::find_if(m.nodes.begin(), m.nodes.end(), [](const MeasuredNode& n) { return n.name == "op2"; });
  REQUIRE(listed != m.nodes.end());
  CHECK(listed->kernel_class == KernelClass::Gemm);
  CHECK(listed->measured_us == Approx(345.888671875));
  CHECK(listed->priced_us == model.pricing->calibrated_us[static_cast<std::size_t>(op2)]);
  CHECK(plan_text_json(opts, fed).find("\"measured_us\":345.88") != std::string::npos);
  CHECK(plan_text_json(opts, fed).find("\"measured_costs\":{") != std::string::npos);
  CHECK(plan_text_json(PlanOptions{}, model).find("measured_costs") == std::string::npos);
  // The same costs carried to another order of the same nodes, by name.
  const MeasuredCosts carried = carry_measured_costs(m, pg, pg, *model.pricing);
  CHECK(carried.mapped_compute_nodes == 16);
  CHECK(carried.measured_us == m.measured_us);
  // A graph another pass rewrote reuses names for other kernels (Inductor
  // names nodes by position): a node of the same name but another kernel or
  // size is not carried (it is interpolated by its class instead).
  Graph rewritten = pg;
  const auto op2_id = static_cast<std::size_t>(op2);
  rewritten.nodes[op2_id].flops = rewritten.nodes[op2_id].flops.value_or(0) * 2;
  const MeasuredCosts changed = carry_measured_costs(m, pg, rewritten, *model.pricing);
  CHECK(changed.measured_us[op2_id] < 0);
  for (std::size_t v = 0; v < pg.nodes.size(); ++v)
    if (v != op2_id) CHECK(changed.measured_us[v] == m.measured_us[v]);
}

TEST_CASE("measured traces: a trace of another graph is refused, naming the trace", "[measured_costs]") {
  auto g = std::make_shared<const Graph>(load_graph_file(data_path(kStep + "fsdp_0_fwd.post.json")));
  PlanOptions opts;
  opts.fuse = false;
  opts.memory_methods = {"baseline"};
  opts.measured_traces = std::make_shared<const std::vector<MeasuredTrace>>(std::vector<MeasuredTrace>{load_measured_trace(
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "void at::native::elementwise_kernel", "ts": 0, "dur": 5},
                          {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum", "ts": 9, "dur": 5}]})",
      "other.json")});
  try {
    run_plan(g, opts);
    FAIL("mapped");
  } catch (const Error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Matchers::StartsWith("other.json: no kernel of its 1 step(s) maps to a node of graph fsdp_0_fwd.post"));
  }
}

TEST_CASE("measured traces: an unmapped node takes the ratio of its class's mapped node nearest its size", "[measured_costs]") {
  // Four GEMMs: two mapped (a small, latency-bound one running 5 x its
  // price, a large one 1.1 x), two not. A class median would scale both
  // unmapped ones alike; by size, each takes its neighbour's ratio.
  Pricing p;
  p.classes.assign(4, KernelClass::Gemm);
  p.calibrated_us = {10.0, 1000.0, 20.0, 800.0};
  p.pass_us = {10.0, 1000.0, 20.0, 800.0};
  p.pass_sources.assign(4, "roofline");
  MeasuredCosts m;
  m.measured_us = {50.0, 1100.0, -1.0, -1.0};
  MeasuredClassRatio row;
  row.kernel_class = KernelClass::Gemm;
  row.mapped = 2;
  row.interpolated = 2;
  row.ratio = row.pass_ratio = 3.05;  // the median of 5 and 1.1
  m.classes = {row};
  apply_measured_costs(p, m);
  const std::vector<double> expected = {50.0, 1100.0, 100.0, 880.0};
  for (std::size_t v = 0; v < expected.size(); ++v) {
    CHECK(p.calibrated_us[v] == Approx(expected[v]));
    CHECK(p.pass_us[v] == Approx(expected[v]));
  }
  CHECK(p.pass_sources[2] == "interpolated");
  CHECK(p.pass_sources[0] == "measured");
}

TEST_CASE("measured traces: the decontention takes a collective back to alone by the simulation's law", "[measured_costs][contention]") {
  // ddp's step (run 1, rank 0): each 32 MiB all-reduce runs beside GEMMs
  // and pointwise kernels. A delay beside the GEMMs acts as the ratio
  // contended_comm_slowdown gives at the collective's priced time alone:
  // x1.2 + 40 us on a collective priced A us is x(1.2 + 40 / A).
  const std::string step = "dist4/steps/run1/ddp/default/";
  const Graph g = load_graph_file(data_path(step + "ddp_0_inf.post.json"));
  const std::vector<MeasuredTrace> traces{load_measured_trace_file(data_path(step + "measured.rank0.trace.json"))};
  HardwareProfile hw = builtin_profile("h100-sxm");
  const Pricing p = price_graph(g, hw);
  const NodeId first = g.find_node("op1");
  REQUIRE(g.nodes[first].kind == NodeKind::Collective);
  const double alone = p.calibrated_us[first];
  REQUIRE(alone > 0);
  auto law = [](double comm_slowdown, double delay_us) {
    ContentionLaw l;
    l.classes[KernelClass::Gemm] = {comm_slowdown, 1.4, 0.9, delay_us};
    l.classes[KernelClass::TritonPointwise] = {2.3, 1.1, 1.0};
    return l;
  };
  const MeasuredCosts ratio = map_measured_traces(g, p, law(1.2, 0), traces);
  const MeasuredCosts delayed = map_measured_traces(g, p, law(1.2, 40), traces);
  const MeasuredCosts as_ratio = map_measured_traces(g, p, law(1.2 + 40 / alone, 0), traces);
  int same_size = 0, beside_gemms = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    if (!delayed.mapped(v)) continue;
    INFO(g.nodes[v].name);
    if (g.nodes[v].kind != NodeKind::Collective) {
      CHECK(delayed.measured_us[v] == ratio.measured_us[v]);  // the kernels' side has no delay
    } else if (p.calibrated_us[v] == alone) {
      ++same_size;
      CHECK(delayed.measured_us[v] == Approx(as_ratio.measured_us[v]));
      CHECK(delayed.measured_us[v] <= ratio.measured_us[v]);
      beside_gemms += delayed.measured_us[v] < ratio.measured_us[v];  // more of its time was the GEMMs'
    }
  }
  CHECK(same_size >= 4);
  CHECK(beside_gemms >= 4);
  CHECK(delayed.decontended_us > ratio.decontended_us);
}
