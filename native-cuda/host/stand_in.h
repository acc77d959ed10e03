// native-cuda/host — which stand-in kernel the executor runs for a node, and
// its size, derived from the graph alone (see execution_schedule.h for the
// folder's contract).
//
//   matmul  extern/template nodes whose kernel is a matmul (mm, addmm, bmm,
//           baddbmm, matmul, _scaled_mm) or that carry flops: a cuBLAS GEMM.
//           M, N (and a batch) come from the output's shape, K from the flops
//           (flops = 2·batch·M·N·K) or, without flops, from the operand
//           reads (an M×K and a K×N read). With no usable shape: a square
//           GEMM of the node's flops.
//   memory  every other compute node: one kernel that reads the node's read
//           bytes and writes its write bytes (memory and star deps; a
//           multi_output node writes its items' bytes).
//   collective  NCCL with the node's op and payload; an in-place collective
//           (payload 0 in the file, all_reduce_) moves its mutated buffer.
//   none    waits (they synchronize), nops, and multi_output items (views
//           of their container's result: no kernel in Inductor either).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph/graph.h"
#include "core/memory/planning_info.h"

namespace schedlab::gpu {

enum class StandInKind : std::uint8_t { Gemm, Memory, Collective, None };
std::string_view to_string(StandInKind k);

struct GemmShape {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  // How the shape was found: "flops+shape", "reads+shape", "square".
  std::string_view derivation;
  std::int64_t flops() const { return 2 * batch * m * n * k; }
};

struct StandIn {
  StandInKind kind = StandInKind::None;
  std::string dtype = "f32";       // GEMM operand / collective element type
  GemmShape gemm;                  // kind == Gemm
  std::int64_t read_bytes = 0;     // kind == Memory
  std::int64_t write_bytes = 0;    // kind == Memory
  CollectiveOp op = CollectiveOp::AllReduce;  // kind == Collective
  std::int64_t collective_bytes = 0;          // payload (output bytes), as the format defines it
  std::int64_t group_size = 1;                // as the graph says
  std::string why;                 // one line for the report
};

// True when the kernel's op name is a matrix product ("extern_kernels.mm",
// "torch.ops.aten.addmm.default", ...).
bool is_matmul_kernel(std::string_view kernel);

// Bytes per element of a schedgraph dtype; 0 when unknown.
std::int64_t dtype_bytes(std::string_view dtype);

// M, N, K (and batch) of a matmul from its output shape and flops, or from
// its operand reads (bytes of each read dep) when flops are absent.
std::optional<GemmShape> derive_gemm_shape(const std::vector<std::int64_t>& out_shape, std::optional<std::int64_t> flops,
                                           const std::vector<std::int64_t>& read_bytes, std::int64_t elem_bytes);

// A square GEMM whose flops are the closest to `flops` (side = cbrt(flops/2)).
GemmShape square_gemm_for_flops(std::int64_t flops);

StandIn plan_stand_in(const Graph& g, const MemoryPlanningInfo& info, NodeId v);

// The element type a GEMM stand-in runs in: "bf16" and "f16" as given,
// "f32" for everything else (integer and f8 matmuls run as f32 GEMMs).
std::string_view gemm_compute_dtype(std::string_view dtype);

// Element size a collective moves: the dtype's, or 1 (bytes) when unknown.
std::int64_t collective_elem_bytes(std::string_view dtype);

// Scratch operand bytes a stand-in needs on each rank: `src` holds what it
// reads (both GEMM operands, the collective's send buffer), `dst` what it
// writes. A collective at `ranks` ranks: all-gather sends payload/ranks,
// reduce-scatter sends ranks × payload, the others send the payload.
struct OperandBytes {
  std::int64_t src = 0, dst = 0;
};
OperandBytes operand_bytes(const StandIn& s, std::int64_t ranks);

}  // namespace schedlab::gpu
