// core/cost — how long a node takes on a given GPU (docs/cost-model.md).
//
// Contract: pure functions of (Graph, NodeId, HardwareProfile). A node's own
// `runtime_us` always wins (measurements and exporters know best); otherwise
// compute nodes get a roofline estimate, max(flops / peak FLOP/s of the
// node's dtype, bytes read + written / DRAM bandwidth), collectives get an
// NCCL-style ring/tree model, and waits and nops cost nothing. All times are
// microseconds. Hardware comes from a built-in datasheet profile or a user
// JSON profile; a malformed profile is a schedlab::Error naming the field.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/cost/collective_times.h"
#include "core/cost/kernel_class.h"
#include "core/cost/time_model.h"
#include "core/graph/graph.h"

namespace schedlab {

struct HardwareProfile {
  std::string name;                           // "h100-sxm", "h200", "a100-80gb", "b200", or a user file's name
  double dram_bytes_per_s = 0;                // HBM bandwidth
  std::map<std::string, double> flops_per_s;  // by dtype: "f32","tf32","bf16","f16","f8"... dense peak
  double nvlink_bytes_per_s = 0;              // per-GPU uni-directional bus bandwidth inside a node
  double network_bytes_per_s = 0;             // per-GPU bandwidth across nodes
  double nvlink_latency_us = 0, network_latency_us = 0;  // per algorithm step
  int ranks_per_node = 8;
  double kernel_launch_us = 0;  // fixed overhead per compute kernel (0 in the built-ins, as in Inductor)
  // Fitted to measurements (core/cost/time_model.h); absent in datasheet profiles.
  std::optional<TimeModel> time_model;
  // Measured inside one node (core/cost/collective_times.h); absent: the
  // ring/tree model from the datasheet figures above prices collectives.
  std::optional<CollectiveTimes> collective_times;
  // How an overlapped collective and kernel slow each other; absent: they
  // overlap for free (core/sim).
  std::optional<ContentionLaw> contention;
};

inline constexpr std::string_view kDefaultHardwareProfile = "h200";  // the fixtures come from an H200

// Throws OptionError listing the known names.
const HardwareProfile& builtin_profile(std::string_view name);
std::vector<std::string> builtin_profile_names();
// Profile files are read and written by core/io/profiles.h.

// The peak FLOP/s the roofline uses for `dtype` (a buffer's dtype string):
// the profile's entry for it, else its "f32" entry (integer and unknown
// dtypes run on the FP32 pipes).
double peak_flops_for_dtype(const HardwareProfile& hw, std::string_view dtype);

struct RuntimeEstimate {
  double us = 0;
  std::string_view source;  // "runtime_us" | "roofline" | "collective" | "none"
};

// `trust_graph_runtime`: false ignores the nodes' `runtime_us` (e.g. the
// fixtures' Inductor estimates, which are far off for matmuls) and models
// every node.
RuntimeEstimate estimate_node_runtime(const Graph& g, NodeId v, const HardwareProfile& hw, bool trust_graph_runtime = true);
std::vector<double> estimate_runtimes_us(const Graph& g, const HardwareProfile& hw, bool trust_graph_runtime = true);

// The roofline alone (no runtime_us, no collective logic): exposed for tests
// and for fused nodes synthesized from members.
double roofline_us(std::int64_t flops, std::int64_t bytes, std::string_view dtype, const HardwareProfile& hw);

// `bytes` is the collective's payload as the format defines it (output
// bytes). Ring and tree are both modelled; the faster one is returned, as
// NCCL's tuner picks.
double estimate_collective_us(CollectiveOp op, std::int64_t bytes, std::int64_t group_size, std::int64_t world_size,
                              const HardwareProfile& hw);

// What a collective node moves (the format's payload: output bytes).
// `collective.bytes` when the file gives it (> 0); else, for in-place
// collectives (all_reduce_, which DTensor and functional collectives lower
// to, exported with 0 bytes), the bytes of the buffer it mutates; else its
// output buffers' bytes; else the largest buffer it reads (times the group
// for an all-gather). `source` names the rule that applied.
struct CollectivePayload {
  std::int64_t bytes = 0;
  std::string_view source;  // "collective.bytes" | "mutated_buffer" | "outputs" | "read_buffer" | "none"
};
CollectivePayload collective_payload(const Graph& g, const Node& n);

// Checked time arithmetic: an estimate or a sum that is not a finite,
// non-negative number of microseconds is an Error naming `what` (huge
// sizes, group sizes or runtimes must fail loudly, never hang or yield inf).
double finite_us(double us, std::string_view what);
double add_us(double a, double b, std::string_view what);

// The two algorithms separately, for reports and tests. A collective an
// algorithm does not implement (tree: anything but all-reduce) is +infinity.
struct CollectiveEstimate {
  double ring_us = 0, tree_us = 0;
  bool crosses_nodes = false;
};
CollectiveEstimate estimate_collective_algorithms(CollectiveOp op, std::int64_t bytes, std::int64_t group_size,
                                                  std::int64_t world_size, const HardwareProfile& hw);

// Bytes a node moves through DRAM: the sum of its memory/star read and write
// deps (weak deps only order and move nothing).
std::int64_t node_dram_bytes(const Node& n);

// The dtype that decides a node's peak: its first output buffer that names one.
std::string_view node_dtype(const Graph& g, const Node& n);

// The calibrated model, which reports (step time, exposed communication,
// traces, `predicted`) use: the profile's time model when it has one, else
// the roofline; never the node's `runtime_us` (Inductor's own estimate).
// Source "calibrated" | "roofline" | "collective" | "none". `facts`:
// cost_facts(g) (core/cost/law_features.h), computed once per graph.
struct CostFacts;
// `c`: classify_kernel(g, g.nodes[v]); its law is law_of(c). Every consumer reads these through a
// Pricing (core/cost/pricing.h).
RuntimeEstimate calibrated_node_runtime(const Graph& g, NodeId v, KernelClass c, const CostFacts& facts, const HardwareProfile& hw);
RuntimeEstimate calibrated_node_runtime(const Graph& g, NodeId v, const CostFacts& facts, const HardwareProfile& hw);
std::vector<double> calibrated_runtimes_us(const Graph& g, const HardwareProfile& hw);

}  // namespace schedlab
