// Memory as executed under a cap on the caching allocator: the step runs at
// the smallest running cap and not one segment unit below, the cap lies
// between the allocated and the uncapped reserved peak, and bisection finds
// the same boundary as a plain scan of every cap on real graphs.
#include <catch2/catch.hpp>

#include <string>

#include "core/io/graph_reader.h"
#include "core/memory/capped.h"
#include "core/plan/plan.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {
constexpr std::int64_t kUnit = 2 << 20;

const ExecutedMemory& executed_of(const PlanResult& r) { return r.predicted.memory; }
}  // namespace

TEST_CASE("capped replay: the smallest running cap on real graphs", "[memory][cap]") {
  for (const char* name : {"inductor/mlp_2.post.json", "inductor/gpt2_2.post.json", "exported/convnet_bn_1_bwd.post.json", "exported/conv_grid_nchw_1_bwd.post.json"}) {
    INFO(name);
    const std::string path = test::data_path(name);
    const Graph g = load_graph_file(path);
    const PlanResult r = run_plan(Graph(g), PlanOptions{});
    const ExecutedMemory& ex = executed_of(r);
    for (bool workspaces : {true, false}) {
      INFO("workspaces " << workspaces);
      const CapReplayOptions o{32 << 20, workspaces};
      const CappedRun uncapped = run_under_cap(g, ex, 0, o);
      REQUIRE(uncapped.ran);
      const std::int64_t cap = smallest_running_cap(g, ex, o);
      CHECK(cap % kUnit == 0);
      CHECK(cap <= uncapped.peak_reserved_bytes + kUnit);
      CHECK(run_under_cap(g, ex, cap, o).ran);
      const CappedRun below = run_under_cap(g, ex, cap - kUnit, o);
      CHECK_FALSE(below.ran);
      CHECK(below.oom_request_bytes > 0);
      // The step's live bytes and the resident block must fit under any cap it runs at.
      CHECK(cap >= r.predicted.peak_bytes);
      // A plain scan from the bottom meets the same boundary: running is monotone in the cap here.
      std::int64_t first = kUnit;
      while (!run_under_cap(g, ex, first, o).ran) first += kUnit;
      CHECK(first == cap);
    }
    CHECK(smallest_running_cap(g, ex, {32 << 20, false}) <= smallest_running_cap(g, ex, {32 << 20, true}));
  }
}
