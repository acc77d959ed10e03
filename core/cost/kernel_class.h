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
};

inline constexpr std::array<KernelClass, 10> kKernelClassesWithLaws = {
    KernelClass::Gemm,           KernelClass::Attention,       KernelClass::AttentionBackward, KernelClass::Convolution,
    KernelClass::ConvolutionBackward, KernelClass::TritonPointwise, KernelClass::TritonReduction, KernelClass::Extern,
    KernelClass::Copy,           KernelClass::Collective};

std::string_view to_string(KernelClass c);  // "gemm", "attention", ..., "none"
std::optional<KernelClass> parse_kernel_class(std::string_view s);

KernelClass classify_node(const Graph& g, const Node& n);

}  // namespace schedlab
