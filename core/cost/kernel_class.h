// core/cost — which kind of GPU kernel a node launches, from the graph alone.
//
// Contract: a pure function of the node's `kind`, its `kernel` field, its
// `flops` and its output layouts (docs/cost-model.md, "Kernel classes"), so
// a graph without measurements is priced exactly as a measured one. Each
// class has its own fitted time law (core/cost/time_model.h).
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include "core/graph/graph.h"

namespace schedlab {

enum class KernelClass : std::uint8_t {
  Gemm,             // mm / addmm / bmm / baddbmm / matmul / _scaled_mm externs, and templates
  Attention,        // scaled_dot_product_* / flash / efficient / cudnn attention, forward
  AttentionBackward,  // their backward (several kernels per node)
  Convolution,      // convolution
  ConvolutionBackward,  // convolution_backward (grad input and grad weight: several kernels)
  TritonPointwise,  // Inductor-generated pointwise kernels
  TritonReduction,  // Inductor-generated reduction kernels (persistent or not)
  Extern,           // every other extern kernel (fallbacks: sort, index_put, ...)
  Copy,             // single elementwise library kernels: copy_ / clone / _to_copy, random fills (randint, bernoulli, ...)
  Collective,       // NCCL collectives
  None,             // launches no kernel: waits, nops, multi-output items, views
  // The kernel classes of docs/cost-model.md's "Kernel classes" beyond the
  // ones above (issue 27): finer classes of kernels the ones above hold,
  // reported by `accuracy` under their own names. Each is priced by its own
  // law where a profile has one, else by its law parent's (law_parent).
  Indexing,         // gather-like externs: embedding, embedding_bag, index_select, gather, take, index
  Scatter,          // scatter-like externs (atomics): scatter(_add/_reduce), index_add, index_put, embedding and embedding-bag backward
  ExternMemory,     // an extern nothing above names: priced by the bytes it moves
  DepthwiseConvolution,        // groups = input channels > 1, cuDNN's per-channel kernels
  DepthwiseConvolutionNative,  // the same run by ATen's conv_depthwise2d (NCHW, not f16: cuDNN is not asked)
  DepthwiseConvolutionBackward,
  DepthwiseConvolutionBackwardNative,  // conv_depthwise2d_grad_weight / grad_input kernels
  GroupedConvolution,          // 1 < groups < input channels
  GroupedConvolutionBackward,
  Convolution1d,               // a dense one-dimensional convolution (ATen runs it as 2-D with a unit dim)
  Convolution1dBackward,
  TritonStridedPointwise,      // a Triton kernel one of whose operands moves along its fastest index with a stride, not contiguously
  TritonStridedReduction,
  GemmUnaligned,               // a 16-bit matmul one of whose M, N, K is not a multiple of 16 bytes (cuBLAS's align-1 kernels)
  GemmF32,                     // an f32 matmul: the CUDA cores' SIMT kernels (matmuls do not run on TF32 by default)
  TritonScatter,               // a Triton kernel that stores through a loaded index (index_put, index_add, scatter_add: atomic adds)
  TritonScatterReduction,      // the same fused behind a reduction (an embedding's or a position bias's gradient)
};

inline constexpr std::array<KernelClass, 10> kKernelClassesWithLaws = {
    KernelClass::Gemm,           KernelClass::Attention,       KernelClass::AttentionBackward, KernelClass::Convolution,
    KernelClass::ConvolutionBackward, KernelClass::TritonPointwise, KernelClass::TritonReduction, KernelClass::Extern,
    KernelClass::Copy,           KernelClass::Collective};

inline constexpr std::size_t kKernelClasses = static_cast<std::size_t>(KernelClass::TritonScatterReduction) + 1;

std::string_view to_string(KernelClass c);  // "gemm", "attention", ..., "none", "indexing", ...
std::optional<KernelClass> parse_kernel_class(std::string_view s);

// The class of the kernels node `n` launches, the finest the graph tells
// (the classes below None included). Where it comes from:
// docs/cost-model.md, "Kernel classes".
KernelClass classify_kernel(const Graph& g, const Node& n);

// The op's own name in an extern node's kernel: "torch.ops.aten.mm.default"
// -> "mm", "aten.randint.low_out" -> "randint" (namespace, op, overload),
// "extern_kernels.addmm" -> "addmm".
std::string_view op_name(std::string_view kernel);

// Whether node `n` is an ATen call that reads a device value back to the
// host before it returns (a count it sizes its output or its launches by):
// nonzero, masked_select, unique, bincount, item, and the embedding bag's
// dense backward (embedding_backward_cuda_kernel's segment counts). The
// host then waits for the GPU to finish the call's kernels
// (docs/simulation.md, "The host: a third resource").
bool reads_back_to_host(const Node& n);
// The class among the first eleven that holds class `c` (c itself for
// those): what the features of a law, the host's terms, the memory model
// and a plan's `class_time_us` read.
KernelClass base_class(KernelClass c);
// The class whose law prices class `c` while a profile has no law of c's
// own: its base class, but `copy` for indexing, scatters and unknown
// externs (bytes at the speed of the fitted memory-bound library kernels,
// not the law fitted on sorts). nullopt for the first eleven.
std::optional<KernelClass> law_parent(KernelClass c);
// Whether class `c` is one of the finer classes (below None).
inline bool is_fine_class(KernelClass c) { return static_cast<std::size_t>(c) > static_cast<std::size_t>(KernelClass::None); }

// An index expression's top-level terms ("32*d1 + d2 + 256*tmp0": three),
// split at + and - outside parentheses, trimmed, signs dropped.
std::vector<std::string_view> index_terms(std::string_view index);

// Whether an index expression goes through a loaded value (Inductor names
// it tmpN, or indirectN): a gather when read, a scatter when written.
bool is_indirect_index(std::string_view index);

// base_class(classify_kernel(g, n)).
KernelClass classify_node(const Graph& g, const Node& n);

}  // namespace schedlab
