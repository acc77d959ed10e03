// core/cost — the features a calibrated law multiplies (core/cost/time_model.h,
// docs/cost-model.md "Calibrated time model"): each a general effect read off
// the graph alone, in microseconds at the profile's datasheet rates, or a
// count for the fixed terms.
//
// - Bytes: the node's memory and star deps, but a dep indexed through a
//   loaded value (an indirect `tmpN` index: a gather such as a loss's target
//   lookup) moves one element per iteration, not its whole buffer.
// - Dtype: the node's first output's; a multi-output kernel (attention, a
//   convolution backward) takes its first item's, else its first read's.
// - Convolutions with a `convolution` geometry are routed by algorithm
//   family: dense (implicit GEMM; 1x1 unpadded stride-1 ones as matmuls),
//   depthwise, grouped; a layout transpose when cuDNN runs them in NCHW, a
//   copy of any operand not in the layout it runs in.
// - Matmuls: the tile terms; the unaligned term for a 16-bit product
//   with an operand whose row pitch is not a multiple of 16 bytes, and the
//   odd-pitch term on top where a pitch is an odd element count.
// - Attention calls with an `attention` record and dropout: the unmasked
//   scores at one f32 op each (the random number each one draws).
// - Indexing, scatter and unknown externs (kernel_class.h): the bytes they
//   move (moved_bytes): a gather reads the rows it indexes, not its table;
//   a scatter into a buffer in place touches the rows it updates; a tuple
//   result's items count as written.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/cost/time_model.h"

namespace schedlab {

// What the features need of the whole graph, computed once (O(N + E)).
struct CostFacts {
  std::vector<std::string_view> compute_dtype;  // per node
  std::vector<std::int64_t> multi_output_bytes;  // per buffer: a multi_output buffer's items' bytes (else 0)
  // per buffer: the shape of a multi_output buffer's first item (else null);
  // an attention call's output (forward) or its query's gradient (backward)
  std::vector<const std::vector<std::int64_t>*> first_item_shape;
};
CostFacts cost_facts(const Graph& g);

// Bytes the calibrated model prices a node by (its memory and star deps,
// indirect ones at one element per iteration). Checked: an overflow is an
// Error naming the node.
std::int64_t priced_bytes(const Graph& g, const Node& n);

// Bytes an extern of class indexing, scatter or extern_memory moves (the
// memory features of those classes): its reads and writes, but
// - indexing: the table (its largest non-integer read) at the rows it
//   gathers: an embedding bag's index count x the table's row bytes, other
//   gathers their result's bytes, each at most the table;
// - scatter: the buffer it updates in place (read, and written through a
//   `mutation_of` output) at most at the updates' bytes (its largest other
//   non-integer read) each way;
// - a write to a multi_output buffer at its items' bytes.
// Checked: an overflow is an Error naming the node.
std::int64_t moved_bytes(const Graph& g, const Node& n, KernelClass kernel, const CostFacts& facts);

struct FeatureOptions {
  int sm_count = 0;            // SMs the tile terms quantize over (0: no tile terms)
  std::int64_t l2_bytes = 0;   // the memory term's split (0: every byte is `memory`)
  bool route_conv_families = true;  // depthwise and grouped convolutions take their own terms
};
// The features of node `v` under the profile's peaks and DRAM bandwidth.
LawFeatures law_features(const Graph& g, NodeId v, const CostFacts& facts, const HardwareProfile& hw, const FeatureOptions& opts);

}  // namespace schedlab
