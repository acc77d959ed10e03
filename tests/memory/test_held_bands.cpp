// One truth about memory: the stacked-lifetime view (held_bands) sums to the
// memory curve at every step of the baseline and the final order of every
// checked-in graph, multi-output kernels (convolution backward, cuDNN
// attention, topk, index_add) included.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/io/files.h"
#include "core/memory/estimate.h"
#include "core/plan/plan.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

// Every schedgraph/1 file under tests/data (before and after fusion).
std::vector<std::string> checked_in_graphs() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(test::data_path(""))) {
    const std::string f = e.path().filename().string();
    if (!e.is_regular_file() || f.size() < 10 || f.compare(f.size() - 5, 5, ".json") != 0) continue;
    if (f.find(".pre.json") == std::string::npos && f.find(".post.json") == std::string::npos) continue;
    out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The bands' sum at each step 0..order.size(), walked step by step.
std::vector<std::int64_t> stacked(const std::vector<HeldBand>& bands, std::size_t steps) {
  std::vector<std::int64_t> delta(steps + 2, 0);
  for (const auto& b : bands) {
    delta[static_cast<std::size_t>(b.start)] += b.bytes;
    delta[static_cast<std::size_t>(b.end) + 1] -= b.bytes;
  }
  std::vector<std::int64_t> out(steps + 1);
  std::int64_t cur = 0;
  for (std::size_t t = 0; t <= steps; ++t) out[t] = cur += delta[t];
  return out;
}

}  // namespace

TEST_CASE("the stacked view sums to the memory curve at every step of every checked-in graph", "[memory][held_bands]") {
  const auto graphs = checked_in_graphs();
  REQUIRE(graphs.size() >= 200);
  std::size_t multi_output_graphs = 0;
  for (const auto& path : graphs) {
    INFO(path);
    PlanResult r = run_plan(load_graph_file(path), PlanOptions{});
    const Graph& g = r.planned();
    const MemoryPlanningInfo& info = *r.memory.info;
    bool has_items = false;
    for (BufId b = 0; b < g.num_buffers(); ++b) has_items |= info.container_of[b] != kNone;
    multi_output_graphs += has_items;
    const Order baseline = g.baseline_order();
    const Order* const orders[] = {&baseline, &r.order};
    for (const Order* order : orders) {
      const auto curve = estimate_peak_memory(g, info, *order).curve;
      const auto bands = held_bands(g, info, *order);
      for (const auto& b : bands) {
        CHECK(b.start >= 0);
        CHECK(b.end <= static_cast<std::int32_t>(order->size()));
        CHECK(b.start <= b.end);
        CHECK(b.bytes > 0);  // the page stacks positive bands: none of these graphs frees what it did not allocate
      }
      CHECK(stacked(bands, order->size()) == curve);
    }
  }
  CHECK(multi_output_graphs >= 10);  // the kernels whose outputs the view used to drop
}

TEST_CASE("a multi-output kernel's items are held until their own last use", "[memory][held_bands]") {
  // tests/data/inductor has none; the UNet backward's convolution backward returns three tensors.
  const std::string path = test::data_path("exported/unet_gn_1_bwd.post.json");
  Graph g = load_graph_file(path);
  auto info = compute_planning_info(g, g.baseline_order());
  std::size_t items = 0;
  for (const auto& b : held_bands(g, info, g.baseline_order())) {
    if (b.owner == b.buf) continue;
    ++items;
    CHECK(info.container_of[b.buf] == b.owner);
    CHECK(b.bytes == info.size_free[b.buf]);
  }
  CHECK(items > 0);
}
