// Every memory method reproduces Inductor's order and peak on every real
// fixture (tests/data/inductor) and every exported graph (tests/data/exported).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/memory/methods.h"
#include "tests/test_util.h"

using namespace schedlab;
using nlohmann::json;

TEST_CASE("memory methods reproduce Inductor on every fixture", "[memory][fixtures]") {
  auto cases = test::fixture_cases();
  REQUIRE(cases.size() >= 23);  // 6 fixtures + 17 exports
  for (const auto& c : cases) {
    SECTION(c) {
      json expected = json::parse(read_text_file(test::data_path(c + ".expected.json")));
      if (!expected.contains("memory")) continue;
      Graph g = load_graph_file(test::data_path(c + ".post.json"));
      MemoryPlan plan = reorder_for_peak_memory(g, g.baseline_order(), default_memory_methods());
      for (const auto& m : plan.methods) {
        INFO(c << " method " << m.method);
        const json& em = expected["memory"][m.method];
        CHECK(m.error == "");
        CHECK(test::names(g, m.order) == em["order"].get<std::vector<std::string>>());
        CHECK(m.peak == em["peak"].get<std::int64_t>());
      }
      CHECK(plan.methods[plan.chosen].method == expected["memory"]["chosen"].get<std::string>());
      if (expected["memory"].contains("baseline_curve")) {
        auto info = compute_planning_info(g, g.baseline_order());
        CHECK(estimate_peak_memory(g, info, g.baseline_order()).curve ==
              expected["memory"]["baseline_curve"].get<std::vector<std::int64_t>>());
      }
    }
  }
}
