// Pass timings at a mid size, printed as `bench:` lines (measured, never
// asserted; scripts/test.sh shows them). Each pass runs alone, in process,
// on its input order; the result must still be a valid order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/gen/distributed.h"

using namespace schedlab;

TEST_CASE("comm pass timings on a mid-size FSDP graph", "[comms][bench]") {
  DistributedGraphSpec spec;
  spec.layers = 625;  // 10 000 nodes, 1 875 collectives
  Graph g = generate_distributed_graph(spec);
  const auto runtimes = estimate_runtimes_us(g, builtin_profile(kDefaultHardwareProfile));
  const CommGraph cg = build_comm_graph(g, runtimes);
  const Order input = g.baseline_order();
  std::printf("bench: comm passes on %s (%d nodes), in process, best of 3 runs (overlap_schedule*: 1):\n", g.name.c_str(), g.num_nodes());
  for (const CommPass& pass : comm_passes()) {
    double best_ms = 1e300;
    Order out;
    const int runs = pass.name.starts_with("overlap_schedule") ? 1 : 3;
    for (int run = 0; run < runs; ++run) {
      const auto start = std::chrono::steady_clock::now();
      out = pass.run(cg, input, CommKnobs{}).order;
      best_ms = std::min(best_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    CHECK(respects_comm_deps(cg, out));
    std::printf("bench:   %-46s %9.1f ms\n", std::string(pass.name).c_str(), best_ms);
  }
}
