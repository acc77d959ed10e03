// core/gen — generated distributed training graphs (one rank's view) for
// the overlap benchmarks: FSDP-style (per layer an all-gather of the
// parameters before use, in backward a second all-gather and a
// reduce-scatter of the gradients) and tensor-parallel (per layer a
// column-parallel and a row-parallel matmul and an all-reduce, over
// independent micro-batches so there is compute to overlap with). Nodes
// carry flops, dtypes and byte counts but no runtime_us: runtimes come from
// the cost model. Collectives are chained by fake weak deps as Inductor's
// decide_global_ordering_of_comms leaves them.
#pragma once

#include <cstdint>
#include <string>

#include "core/graph/graph.h"

namespace schedlab {

enum class DistributedPattern : std::uint8_t { Fsdp, TensorParallel };

struct DistributedGraphSpec {
  DistributedPattern pattern = DistributedPattern::Fsdp;
  std::int32_t layers = 8;
  std::int64_t hidden = 4096;   // model width h (MLP blocks h -> 4h -> h)
  std::int64_t tokens = 8192;   // tokens per rank (per micro-batch for tensor parallel)
  std::int32_t world_size = 8;  // FSDP shards over it; tensor parallel splits 4h over it
  std::int32_t microbatches = 2;  // tensor parallel only
  bool backward = true;           // FSDP only: add the backward pass
};

// Throws OptionError for a spec out of range (layers 1..100000, sizes >= 1).
Graph generate_distributed_graph(const DistributedGraphSpec& spec);

// "fsdp" | "tp" -> pattern; throws OptionError.
DistributedPattern parse_distributed_pattern(const std::string& s);

}  // namespace schedlab
