// The CUDA executor's allocation plan (native-cuda/host/execution_schedule.h)
// holds exactly the bytes core/memory estimates, step by step, on every
// fixture and every memory method's order: what makes the executor's
// measured peak a check of the estimator.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/memory/estimate.h"
#include "core/memory/methods.h"
#include "core/io/plan_writer.h"
#include "core/plan/plan.h"
#include "native-cuda/host/execution_schedule.h"
#include "tests/test_util.h"

using namespace schedlab;
using namespace schedlab::gpu;

namespace {

std::vector<std::string> fixture_graphs() {
  std::vector<std::string> out;
  for (const char* dir : {"inductor", "exported"}) {
    std::filesystem::path root = test::data_path(dir);
    if (!std::filesystem::exists(root)) continue;
    for (const auto& e : std::filesystem::directory_iterator(root)) {
      const std::string f = e.path().filename().string();
      if (f.ends_with(".post.json")) out.push_back(std::string(dir) + "/" + f);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("execution schedule holds the estimated bytes at every step", "[gpu][schedule][fixtures]") {
  const auto graphs = fixture_graphs();
  REQUIRE(graphs.size() >= 6);
  for (const auto& path : graphs) {
    SECTION(path) {
      const Graph g = load_graph_file(test::data_path(path));
      const auto info = compute_planning_info(g, g.baseline_order());
      const auto graph = std::make_shared<const Graph>(g);
      for (const auto& method : memory_methods()) {
        const ExecutionPlan planned = plan_execution(graph, builtin_profile("h200"), method.name);
        const Order& order = planned.order;
        CHECK(planned.estimated_peak == estimate_peak_memory(g, info, order).peak);
        const auto est = estimate_peak_memory(g, info, order);
        const auto s = build_execution_schedule(g, info, order);
        INFO(std::string(method.name));
        CHECK(s.unbacked.empty());
        CHECK(s.peak_bytes == est.peak);
        CHECK(s.peak_step == est.peak_step);
        REQUIRE(s.live_bytes.size() + 1 == est.curve.size());
        CHECK(std::equal(s.live_bytes.begin(), s.live_bytes.end(), est.curve.begin()));

        // Every block is allocated once and released once, after it is allocated.
        std::vector<int> allocated(s.blocks.size(), 0), released(s.blocks.size(), 0);
        for (std::size_t t = 0; t < s.steps.size(); ++t) {
          for (auto b : s.steps[t].allocate) {
            ++allocated[b];
            CHECK(s.blocks[b].alloc_step == static_cast<std::int32_t>(t));
          }
          for (auto b : s.steps[t].release) {
            ++released[b];
            CHECK(s.blocks[b].alloc_step <= static_cast<std::int32_t>(t));
          }
        }
        for (auto b : s.release_at_end) ++released[b];
        CHECK(std::all_of(allocated.begin(), allocated.end(), [](int c) { return c == 1; }));
        CHECK(std::all_of(released.begin(), released.end(), [](int c) { return c == 1; }));
      }
    }
  }
}

TEST_CASE("a multi_output container allocates its items' storage at its own step", "[gpu][schedule]") {
  const Graph g = load_graph_file(test::data_path("inductor/convnet_2.post.json"));
  const auto info = compute_planning_info(g, g.baseline_order());
  const Order order = g.baseline_order();
  const auto s = build_execution_schedule(g, info, order);
  std::vector<std::int32_t> step(g.nodes.size());
  for (std::size_t t = 0; t < order.size(); ++t) step[order[t]] = static_cast<std::int32_t>(t);
  int items = 0;
  for (const DeviceBlock& b : s.blocks) {
    const BufId container = info.container_of[b.buf];
    if (container == kNone) continue;
    ++items;
    CHECK(b.alloc_step == step[g.buffers[container].producer]);
    CHECK(b.bytes == g.buffers[b.buf].bytes);
    // The item is released on its own schedule, not with its container.
    CHECK(b.last_step >= step[g.buffers[b.buf].producer]);
  }
  CHECK(items >= 9);
  for (const DeviceBlock& b : s.blocks) CHECK(g.buffers[b.buf].layout != Layout::MultiOutput);
}

TEST_CASE("execution order from a plan, a method, or refused", "[gpu][schedule]") {
  const std::string text = read_text_file(test::data_path("inductor/mlp_2.post.json"));
  const Graph g = load_graph(text);
  const auto info = compute_planning_info(g, g.baseline_order());

  const auto plan = nlohmann::json::parse(plan_json(text, "{}"));
  const Order from_plan = order_from_plan_json(g, plan.dump());
  CHECK(test::names(g, from_plan) == plan["order"].get<std::vector<std::string>>());
  CHECK(build_execution_schedule(g, info, from_plan).peak_bytes == plan["memory"]["peak"].get<std::int64_t>());

  const auto graph = std::make_shared<const Graph>(g);
  CHECK(plan_execution(graph, builtin_profile("h200"), "baseline").order == g.baseline_order());
  const ExecutionPlan by_plan = plan_execution(graph, builtin_profile("h200"), "baseline", plan.dump());
  CHECK(by_plan.order == from_plan);
  CHECK(by_plan.estimated_peak == plan["memory"]["peak"].get<std::int64_t>());
  CHECK_THROWS_WITH(plan_execution(graph, builtin_profile("h200"), "fastest"), Catch::Contains("unknown method \"fastest\""));
  CHECK_THROWS_WITH(order_from_plan_json(g, R"({"order": ["op0", "nope"]})"), Catch::Contains("order[1]: node \"nope\""));
  CHECK_THROWS_WITH(order_from_plan_json(g, R"({"graph": "x"})"), Catch::Contains("\"order\" array"));
  CHECK_THROWS_WITH(order_from_plan_json(g, "{"), Catch::Contains("not valid JSON"));

  Order reversed = g.baseline_order();
  std::reverse(reversed.begin(), reversed.end());
  CHECK_THROWS_WITH(build_execution_schedule(g, info, reversed), Catch::Contains("before one it depends on"));
  Order short_order = g.baseline_order();
  short_order.pop_back();
  CHECK_THROWS_WITH(build_execution_schedule(g, info, short_order), Catch::Contains("has 15 nodes"));
  Order twice = g.baseline_order();
  twice[1] = twice[0];
  CHECK_THROWS_WITH(build_execution_schedule(g, info, twice), Catch::Contains("appears twice"));
}
