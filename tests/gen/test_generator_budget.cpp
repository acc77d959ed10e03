// Issue 30, class 4: the generators compute every size exactly (a product
// past 63 bits is refused naming the options, never written wrapped) and
// refuse, before allocating, a graph that cannot fit in the machine's memory.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "core/gen/budget.h"
#include "core/gen/distributed.h"
#include "core/gen/generators.h"
#include "core/util/error.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

using schedlab::test::error_of;

}  // namespace

TEST_CASE("generators: sizes computed exactly, graphs that cannot fit refused before they are built", "[gen][hostile]") {
  CHECK(generated_product({2, 3, 7}, "gen-dist", "x", "--o 1") == 42);
  CHECK(error_of([] { generated_product({std::int64_t{1} << 40, std::int64_t{1} << 30}, "gen-dist", "a matmul's flops", "--hidden 5"); }) ==
        "gen-dist: a matmul's flops (--hidden 5) overflows 63 bits");
  CHECK_THROWS_AS(check_generated_size("gen layered", "--nodes 1", ~std::uint64_t{0} / 2, 1), OptionError);
  CHECK_NOTHROW(check_generated_size("gen layered", "--nodes 1000", 1000, 3000));
  DistributedGraphSpec s;
  s.layers = 1, s.hidden = std::int64_t{1} << 19, s.tokens = std::int64_t{1} << 24;
  CHECK(error_of([&] { generate_distributed_graph(s); }) == "gen-dist: a matmul's flops (--hidden 524288 --tokens 16777216) overflows 63 bits");
  s.hidden = 1 << 10, s.tokens = 1 << 10;
  const Graph g = generate_distributed_graph(s);
  for (const Node& n : g.nodes) CHECK(n.flops.value_or(0) >= 0);
}

TEST_CASE("the documented maxima of the generators are refused up front where they cannot fit", "[gen][hostile]") {
  // 50M nodes reading 64 buffers each: about 1 TB, more than any machine the suite runs on (a wasm32 module has 4 GiB).
  LayeredSpec spec;
  spec.nodes = 50'000'000, spec.fan_in = 64;
  CHECK_THAT(error_of([&] { generate_layered(spec); }), Catch::StartsWith("gen layered: --nodes 50000000 --fan-in 64: about ") &&
                                                            Catch::Contains("bytes of memory"));
  DistributedGraphSpec tp;
  tp.pattern = DistributedPattern::TensorParallel, tp.layers = 100000, tp.microbatches = 64;
  if (machine_memory_bytes() < 100'000'000'000ull)  // 38.4M nodes and 96M deps: about 103 GB
    CHECK_THAT(error_of([&] { generate_distributed_graph(tp); }), Catch::StartsWith("gen-dist tp: --layers 100000 --microbatches 64: about "));
}
