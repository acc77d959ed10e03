// Every memory method reproduces Inductor's order and peak on every real
// fixture (tests/data/inductor) and every exported graph (tests/data/exported).
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/memory/methods.h"
#include "tests/test_util.h"

using namespace schedlab;
using nlohmann::json;

namespace {

std::vector<std::string> expected_cases() {
  std::vector<std::string> out;
  for (const char* dir : {"inductor", "exported"}) {
    std::filesystem::path root = test::data_path(dir);
    if (!std::filesystem::exists(root)) continue;
    for (const auto& e : std::filesystem::directory_iterator(root)) {
      std::string f = e.path().filename().string();
      const std::string suffix = ".expected.json";
      if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0)
        out.push_back(std::string(dir) + "/" + f.substr(0, f.size() - suffix.size()));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("memory methods reproduce Inductor on every fixture", "[memory][fixtures]") {
  auto cases = expected_cases();
  REQUIRE(cases.size() >= 6);
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
