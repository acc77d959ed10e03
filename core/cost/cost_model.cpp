// Roofline and NCCL-style collective estimates; built-in datasheet profiles.
// The formulas and the datasheet sources are in docs/cost-model.md.
#include "core/cost/cost_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "core/cost/fitted_profiles.h"
#include "core/cost/law_features.h"
#include "core/graph/builder.h"
#include "core/util/error.h"

namespace schedlab {
namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;

// NCCL's per-step hardware latencies as Inductor's comm_analysis.py models
// them (low-latency protocol): NVLink 0.6 us, network 5 us.
constexpr double kNvlinkStepUs = 0.6;
constexpr double kNetworkStepUs = 5.0;

HardwareProfile make_hopper(std::string name, double dram_bytes_per_s) {
  // H100 SXM5 and H200 SXM share the GH100 compute figures (dense, no sparsity).
  HardwareProfile p;
  p.name = std::move(name);
  p.dram_bytes_per_s = dram_bytes_per_s;
  p.flops_per_s = {{"f64", 34 * kTera},   {"f32", 67 * kTera},    {"tf32", 494.7 * kTera},
                   {"bf16", 989.4 * kTera}, {"f16", 989.4 * kTera}, {"f8", 1978.9 * kTera}};
  p.nvlink_bytes_per_s = 450 * kGiga;  // NVLink 4: 900 GB/s bidirectional per GPU
  p.network_bytes_per_s = 50 * kGiga;  // one ConnectX-7 400 Gb/s NIC per GPU
  p.nvlink_latency_us = kNvlinkStepUs;
  p.network_latency_us = kNetworkStepUs;
  return p;
}

std::vector<HardwareProfile> make_builtins() {
  std::vector<HardwareProfile> out;
  // h100-sxm and h200: the datasheet figures plus a time model fitted to the
  // measurements in tests/data/measured/ (profiles/*.json, embedded).
  out.push_back(fitted_h100_sxm());
  out.push_back(fitted_h200());
  // The datasheet figures under their own names (the base the fits start from).
  out.push_back(make_hopper("h100-sxm-datasheet", 3.35 * kTera));
  out.push_back(make_hopper("h200-datasheet", 4.8 * kTera));

  HardwareProfile a100;
  a100.name = "a100-80gb";
  a100.dram_bytes_per_s = 2.039 * kTera;
  a100.flops_per_s = {{"f64", 9.7 * kTera}, {"f32", 19.5 * kTera}, {"tf32", 156 * kTera},
                      {"bf16", 312 * kTera}, {"f16", 312 * kTera}};
  a100.nvlink_bytes_per_s = 300 * kGiga;  // NVLink 3: 600 GB/s bidirectional
  a100.network_bytes_per_s = 25 * kGiga;  // HDR InfiniBand 200 Gb/s per GPU
  a100.nvlink_latency_us = kNvlinkStepUs;
  a100.network_latency_us = kNetworkStepUs;
  out.push_back(a100);

  HardwareProfile b200;
  b200.name = "b200";
  b200.dram_bytes_per_s = 8 * kTera;
  b200.flops_per_s = {{"f64", 37 * kTera},    {"f32", 80 * kTera},   {"tf32", 1125 * kTera}, {"bf16", 2250 * kTera},
                      {"f16", 2250 * kTera}, {"f8", 4500 * kTera}, {"f4", 9000 * kTera}};
  b200.nvlink_bytes_per_s = 900 * kGiga;  // NVLink 5: 1.8 TB/s bidirectional
  b200.network_bytes_per_s = 50 * kGiga;  // ConnectX-7 400 Gb/s per GPU (DGX B200)
  b200.nvlink_latency_us = kNvlinkStepUs;
  b200.network_latency_us = kNetworkStepUs;
  out.push_back(b200);
  return out;
}

const std::vector<HardwareProfile>& builtins() {
  static const std::vector<HardwareProfile> all = make_builtins();
  return all;
}

std::string known_names() {
  std::string out;
  for (const auto& p : builtins()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

// Base-2 ceiling logarithm for the tree depth; n >= 2. Bit arithmetic, not
// a doubling loop: a doubling span overflows for groups above 2^62.
double ceil_log2(std::int64_t n) {
  return static_cast<double>(std::bit_width(static_cast<std::uint64_t>(n - 1)));
}

}  // namespace

const HardwareProfile& builtin_profile(std::string_view name) {
  for (const auto& p : builtins())
    if (p.name == name) return p;
  throw OptionError("unknown hardware profile " + quoted_name(name) + " (built-in: " + known_names() + "; or a profile JSON file)");
}

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> out;
  for (const auto& p : builtins()) out.push_back(p.name);
  return out;
}

double peak_flops_for_dtype(const HardwareProfile& hw, std::string_view dtype) {
  auto it = hw.flops_per_s.find(std::string(dtype));
  if (it != hw.flops_per_s.end()) return it->second;
  it = hw.flops_per_s.find("f32");
  if (it == hw.flops_per_s.end()) throw Error("hardware profile \"" + hw.name + "\": no \"f32\" peak");
  return it->second;
}

std::int64_t node_dram_bytes(const Node& n) {
  std::int64_t total = 0;
  for (const auto* deps : {&n.reads, &n.writes})
    for (const Dep& d : *deps)
      if (!d.is_weak()) total = checked_add(total, d.bytes, "node \"" + n.name + "\" bytes");
  return total;
}

std::string_view node_dtype(const Graph& g, const Node& n) {
  for (BufId b : n.outputs)
    if (!g.buffers[b].dtype.empty()) return g.buffers[b].dtype;
  return "f32";
}

double finite_us(double us, std::string_view what) {
  if (!std::isfinite(us) || us < 0) throw Error(std::string(what) + ": estimated time is not a finite number of microseconds");
  return us;
}

double add_us(double a, double b, std::string_view what) { return finite_us(a + b, what); }

double roofline_us(std::int64_t flops, std::int64_t bytes, std::string_view dtype, const HardwareProfile& hw) {
  double transfer_s = static_cast<double>(bytes) / hw.dram_bytes_per_s;
  double compute_s = flops > 0 ? static_cast<double>(flops) / peak_flops_for_dtype(hw, dtype) : 0.0;
  return finite_us(std::max(compute_s, transfer_s) * 1e6 + hw.kernel_launch_us, "roofline");
}

CollectiveEstimate estimate_collective_algorithms(CollectiveOp op, std::int64_t bytes, std::int64_t group_size,
                                                  std::int64_t world_size, const HardwareProfile& hw) {
  CollectiveEstimate out;
  const double inf = std::numeric_limits<double>::infinity();
  if (group_size <= 1) return out;  // nothing moves
  const double n = static_cast<double>(group_size);
  // A group larger than one node's ranks must use the network; a job that
  // fits in one node never does.
  out.crosses_nodes = group_size > hw.ranks_per_node && world_size > hw.ranks_per_node;
  const double bus = out.crosses_nodes ? hw.network_bytes_per_s : hw.nvlink_bytes_per_s;
  const double step_us = out.crosses_nodes ? hw.network_latency_us : hw.nvlink_latency_us;

  // S: the buffer the algorithm factor applies to (NCCL's bus-bandwidth
  // convention: the full, un-sharded tensor). The payload is output bytes, so
  // reduce-scatter's full tensor is n times its output.
  double full = static_cast<double>(bytes);
  if (op == CollectiveOp::ReduceScatter) full *= n;
  auto time_us = [&](double steps, double factor) { return steps * step_us + full * factor / bus * 1e6; };

  switch (op) {
    case CollectiveOp::AllReduce:
      out.ring_us = time_us(2 * (n - 1), 2 * (n - 1) / n);
      // Tree: reduce up, broadcast down, pipelined: 2 log2(n) steps, every byte crosses a link twice.
      out.tree_us = time_us(2 * ceil_log2(group_size), 2.0);
      break;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll:
      out.ring_us = time_us(n - 1, (n - 1) / n);
      out.tree_us = inf;
      break;
    case CollectiveOp::Broadcast:
      // Pipelined chain: n-1 hops, every byte reaches every rank once.
      out.ring_us = time_us(n - 1, 1.0);
      out.tree_us = inf;
      break;
  }
  // Huge groups or payloads on a slow link must not reach the simulation as
  // infinity: the faster algorithm's time has to be a finite number.
  finite_us(std::min(out.ring_us, out.tree_us), "collective");
  return out;
}

double estimate_collective_us(CollectiveOp op, std::int64_t bytes, std::int64_t group_size, std::int64_t world_size,
                              const HardwareProfile& hw) {
  CollectiveEstimate e = estimate_collective_algorithms(op, bytes, group_size, world_size, hw);
  // Curves measured inside one node price what stays inside one node.
  if (hw.collective_times && !e.crosses_nodes)
    if (auto us = measured_collective_us(*hw.collective_times, op, bytes, group_size))
      return finite_us(*us, "collective");
  return std::min(e.ring_us, e.tree_us);
}

RuntimeEstimate estimate_node_runtime(const Graph& g, NodeId v, const HardwareProfile& hw, bool trust_graph_runtime) {
  const Node& n = g.nodes[v];
  if (trust_graph_runtime && n.runtime_us) return {*n.runtime_us, "runtime_us"};
  switch (n.kind) {
    case NodeKind::Wait:
    case NodeKind::Nop:
      // A wait's time is the collective's, already counted there (Inductor: 0).
      return {0.0, "none"};
    case NodeKind::Collective: {
      const Collective& c = *n.collective;
      try {
        return {estimate_collective_us(c.kind, collective_payload(g, n).bytes, c.group_size, g.world_size, hw), "collective"};
      } catch (const Error& e) {
        throw Error("node \"" + n.name + "\": " + e.what());
      }
    }
    default:
      try {
        return {roofline_us(n.flops.value_or(0), node_dram_bytes(n), node_dtype(g, n), hw), "roofline"};
      } catch (const Error& e) {
        throw Error("node \"" + n.name + "\": " + e.what());
      }
  }
}

CollectivePayload collective_payload(const Graph& g, const Node& n) {
  const Collective& c = *n.collective;
  if (c.bytes > 0) return {c.bytes, "collective.bytes"};
  // An in-place collective (all_reduce_ and kin) writes into a buffer it
  // mutates: that buffer is the payload.
  std::int64_t mutated = 0;
  for (BufId b : n.outputs)
    if (g.buffers[b].mutation_of != kNone) mutated = std::max(mutated, g.buffers[g.buffers[b].mutation_of].bytes);
  if (mutated > 0) return {mutated, "mutated_buffer"};
  std::int64_t outputs = 0;
  for (BufId b : n.outputs) outputs = checked_add(outputs, g.buffers[b].bytes, "node \"" + n.name + "\" output bytes");
  if (outputs > 0) return {outputs, "outputs"};
  // Nothing written has a size: the largest buffer it reads, scaled to the
  // output for a gather (each rank contributes one input's worth).
  std::int64_t read = 0;
  for (const Dep& d : n.reads)
    if (!d.is_weak()) read = std::max(read, g.buffers[d.buf].bytes);
  if (read > 0 && c.kind == CollectiveOp::AllGather) {
    if (read > std::numeric_limits<std::int64_t>::max() / c.group_size)
      throw Error("node \"" + n.name + "\": all-gather payload overflows 63 bits");
    read *= c.group_size;
  }
  return {read, read > 0 ? "read_buffer" : "none"};
}

RuntimeEstimate calibrated_node_runtime(const Graph& g, NodeId v, KernelClass c, const CostFacts& facts, const HardwareProfile& hw) {
  const Node& n = g.nodes[v];
  if (!hw.time_model || n.kind == NodeKind::Collective || n.kind == NodeKind::Wait || n.kind == NodeKind::Nop)
    return estimate_node_runtime(g, v, hw, false);
  if (c == KernelClass::None) return {0.0, "none"};
  const TimeModel& tm = *hw.time_model;
  const ClassLaw& law = law_of(tm, c);
  const LawFeatures f = law_features(g, v, facts, hw, {tm.sm_count, tm.l2_bytes, law.routes_conv_families});
  const double tensor_flops = f[static_cast<std::size_t>(LawTerm::Compute)] > 0 && n.flops ? static_cast<double>(*n.flops) : 0.0;
  return {finite_us(sustained_us(tm, c, law_us(law, f), tensor_flops), "node \"" + n.name + "\""), "calibrated"};
}

RuntimeEstimate calibrated_node_runtime(const Graph& g, NodeId v, const CostFacts& facts, const HardwareProfile& hw) {
  return calibrated_node_runtime(g, v, classify_kernel(g, g.nodes[v]), facts, hw);
}

std::vector<double> calibrated_runtimes_us(const Graph& g, const HardwareProfile& hw) {
  const CostFacts facts = cost_facts(g);
  std::vector<double> out(g.nodes.size());
  for (NodeId v = 0; v < g.num_nodes(); ++v) out[v] = calibrated_node_runtime(g, v, facts, hw).us;
  return out;
}

std::vector<double> estimate_runtimes_us(const Graph& g, const HardwareProfile& hw, bool trust_graph_runtime) {
  std::vector<double> out(g.nodes.size());
  for (NodeId v = 0; v < g.num_nodes(); ++v) out[v] = estimate_node_runtime(g, v, hw, trust_graph_runtime).us;
  return out;
}

}  // namespace schedlab
