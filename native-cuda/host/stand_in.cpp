#include "native-cuda/host/stand_in.h"

#include <cmath>

#include "core/cost/cost_model.h"

namespace schedlab::gpu {
namespace {

// The op name inside a kernel string: "extern_kernels.mm" -> "mm",
// "torch.ops.aten.addmm.default" -> "addmm".
std::string_view op_name(std::string_view kernel) {
  constexpr std::string_view kOverload = ".default";
  if (kernel.size() > kOverload.size() && kernel.substr(kernel.size() - kOverload.size()) == kOverload)
    kernel.remove_suffix(kOverload.size());
  auto dot = kernel.rfind('.');
  return dot == std::string_view::npos ? kernel : kernel.substr(dot + 1);
}

bool all_outputs_are_items(const Graph& g, const Node& n) {
  if (n.outputs.empty()) return false;
  for (BufId b : n.outputs)
    if (g.buffers[b].layout != Layout::MultiOutputItem) return false;
  return true;
}

}  // namespace

std::string_view to_string(StandInKind k) {
  switch (k) {
    case StandInKind::Gemm: return "gemm";
    case StandInKind::Memory: return "memory";
    case StandInKind::Collective: return "collective";
    case StandInKind::None: return "none";
  }
  return "none";
}

bool is_matmul_kernel(std::string_view kernel) {
  const std::string_view op = op_name(kernel);
  for (std::string_view mm : {"mm", "addmm", "bmm", "baddbmm", "matmul", "_scaled_mm", "_int_mm"})
    if (op == mm) return true;
  return false;
}

std::int64_t dtype_bytes(std::string_view dtype) {
  if (dtype == "f64" || dtype == "i64" || dtype == "c64") return 8;
  if (dtype == "f32" || dtype == "tf32" || dtype == "i32" || dtype == "u32") return 4;
  if (dtype == "bf16" || dtype == "f16" || dtype == "i16" || dtype == "u16") return 2;
  if (dtype == "f8" || dtype == "i8" || dtype == "u8" || dtype == "b8" || dtype == "bool") return 1;
  return 0;
}

std::optional<GemmShape> derive_gemm_shape(const std::vector<std::int64_t>& out_shape, std::optional<std::int64_t> flops,
                                           const std::vector<std::int64_t>& read_bytes, std::int64_t elem_bytes) {
  if (out_shape.size() < 2) return std::nullopt;
  GemmShape s;
  for (std::size_t i = 0; i + 2 < out_shape.size(); ++i) s.batch *= out_shape[i];
  s.m = out_shape[out_shape.size() - 2];
  s.n = out_shape[out_shape.size() - 1];
  if (s.batch <= 0 || s.m <= 0 || s.n <= 0) return std::nullopt;

  if (flops && *flops > 0) {
    const std::int64_t per_k = 2 * s.batch * s.m * s.n;
    if (*flops % per_k == 0) {
      s.k = *flops / per_k;
      s.derivation = "flops+shape";
      return s;
    }
  }
  // Without usable flops: one read is the M×K operand, another the K×N one
  // (batched like the output, or shared across the batch).
  if (elem_bytes <= 0) return std::nullopt;
  auto k_of = [&](std::int64_t bytes, std::int64_t rows) -> std::int64_t {
    const std::int64_t unit = elem_bytes * rows;
    return bytes > 0 && bytes % unit == 0 ? bytes / unit : 0;
  };
  for (std::size_t a = 0; a < read_bytes.size(); ++a) {
    const std::int64_t ka = k_of(read_bytes[a], s.batch * s.m);
    if (ka == 0) continue;
    for (std::size_t b = 0; b < read_bytes.size(); ++b) {
      if (b == a) continue;
      if (k_of(read_bytes[b], s.batch * s.n) == ka || k_of(read_bytes[b], s.n) == ka) {
        s.k = ka;
        s.derivation = "reads+shape";
        return s;
      }
    }
  }
  return std::nullopt;
}

GemmShape square_gemm_for_flops(std::int64_t flops) {
  GemmShape s;
  const auto side = std::max<std::int64_t>(1, std::llround(std::cbrt(static_cast<double>(flops) / 2.0)));
  s.m = s.n = s.k = side;
  s.derivation = "square";
  return s;
}

StandIn plan_stand_in(const Graph& g, const MemoryPlanningInfo& info, NodeId v) {
  const Node& node = g.nodes[v];
  StandIn s;
  s.dtype = std::string(node_dtype(g, node));
  switch (node.kind) {
    case NodeKind::Wait:
      s.why = "wait: the compute stream waits for its collective";
      return s;
    case NodeKind::Nop:
      s.why = "nop";
      return s;
    case NodeKind::Collective:
      s.kind = StandInKind::Collective;
      s.op = node.collective->kind;
      s.collective_bytes = node.collective->bytes;
      s.group_size = node.collective->group_size;
      s.why = "NCCL " + std::string(schedlab::to_string(s.op));
      if (s.collective_bytes == 0)
        // An in-place collective (all_reduce_) outputs only a mutation, so
        // its payload in the file is 0: what moves is the mutated buffer.
        for (BufId b : node.outputs)
          if (BufId target = g.buffers[b].mutation_of; target != kNone && g.buffers[target].bytes > 0) {
            s.collective_bytes = g.buffers[target].bytes;
            if (!g.buffers[target].dtype.empty()) s.dtype = g.buffers[target].dtype;
            s.why += " in place on " + g.buffers[target].name;
            break;
          }
      return s;
    default:
      break;
  }
  if (node.kind == NodeKind::Extern && node.kernel.empty() && all_outputs_are_items(g, node)) {
    s.why = "multi_output item: a view of its container's result";
    return s;
  }
  const bool flops_given = node.flops && *node.flops > 0;
  if ((node.kind == NodeKind::Extern || node.kind == NodeKind::Template) && (is_matmul_kernel(node.kernel) || flops_given)) {
    std::vector<std::int64_t> reads;
    for (const Dep& d : node.reads)
      if (!d.is_weak()) reads.push_back(d.bytes);
    const std::vector<std::int64_t> no_shape;
    const auto& shape = node.outputs.empty() ? no_shape : g.buffers[node.outputs[0]].shape;
    if (auto shape_gemm = derive_gemm_shape(shape, node.flops, reads, dtype_bytes(s.dtype))) {
      s.kind = StandInKind::Gemm;
      s.gemm = *shape_gemm;
    } else if (flops_given) {
      s.kind = StandInKind::Gemm;
      s.gemm = square_gemm_for_flops(*node.flops);
    }
    if (s.kind == StandInKind::Gemm) {
      s.why = "cuBLAS " + s.dtype + " GEMM " + std::to_string(s.gemm.batch) + "x" + std::to_string(s.gemm.m) + "x" +
              std::to_string(s.gemm.n) + "x" + std::to_string(s.gemm.k) + " (" + std::string(s.gemm.derivation) + ")";
      return s;
    }
  }
  s.kind = StandInKind::Memory;
  for (const Dep& d : node.reads)
    if (!d.is_weak()) s.read_bytes += d.bytes;
  for (const Dep& d : node.writes)
    if (!d.is_weak()) s.write_bytes += d.bytes;
  // A multi_output node's result lands in its items (its own write is 0 bytes).
  for (BufId b : node.outputs)
    if (g.buffers[b].layout == Layout::MultiOutput) s.write_bytes += info.size_alloc[b];
  s.why = "memory-bound: read " + std::to_string(s.read_bytes) + " B, write " + std::to_string(s.write_bytes) + " B";
  return s;
}

std::string_view gemm_compute_dtype(std::string_view dtype) {
  if (dtype == "bf16" || dtype == "f16") return dtype;
  return "f32";
}

std::int64_t collective_elem_bytes(std::string_view dtype) {
  const std::int64_t b = dtype_bytes(dtype);
  return b > 0 ? b : 1;
}

OperandBytes operand_bytes(const StandIn& s, std::int64_t ranks) {
  switch (s.kind) {
    case StandInKind::Gemm: {
      const std::int64_t e = dtype_bytes(gemm_compute_dtype(s.dtype));
      const GemmShape& g = s.gemm;
      return {e * g.batch * (g.m * g.k + g.k * g.n), e * g.batch * g.m * g.n};
    }
    case StandInKind::Memory:
      return {s.read_bytes, s.write_bytes};
    case StandInKind::Collective: {
      const std::int64_t e = collective_elem_bytes(s.dtype);
      const std::int64_t payload = s.collective_bytes / e * e;  // whole elements
      if (s.op == CollectiveOp::AllGather) return {payload / e / ranks * e, payload};
      if (s.op == CollectiveOp::ReduceScatter) return {payload * ranks, payload};
      return {payload, payload};
    }
    case StandInKind::None:
      break;
  }
  return {};
}

}  // namespace schedlab::gpu
