// core/gen — synthetic graphs for scale tests and benchmarks. Generators are
// deterministic in their seed and return validated Graphs (write them with
// core/io/graph_writer.h; they load back through the normal loader).
#pragma once

#include <cstdint>

#include "core/graph/graph.h"

namespace schedlab {

struct LayeredSpec {
  std::int32_t nodes = 1000;       // total compute nodes
  std::int32_t width = 32;         // nodes per layer
  std::int32_t fan_in = 2;         // reads per node from earlier layers
  std::int32_t skip = 4;           // how many layers back a read may reach
  double reduction_share = 0.1;    // share of reduction nodes
  double extern_share = 0.1;       // share of extern (matmul-like) nodes
  std::uint64_t seed = 1;
};

// Random layered DAG: each node reads fan_in buffers from the previous
// `skip` layers (at least one from the previous layer), sizes vary 4 KiB..4 MiB.
Graph generate_layered(const LayeredSpec& spec);

// K copies of `base` with names suffixed `__rI`. Chained: copy I's first node
// also reads the first graph output of copy I-1 (one connected graph);
// otherwise the copies are independent components.
Graph replicate_graph(const Graph& base, std::int32_t copies, bool chained);

}  // namespace schedlab
