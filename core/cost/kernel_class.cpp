// Kernel classes from kind + kernel name (docs/cost-model.md, "Kernel classes").
#include "core/cost/kernel_class.h"

namespace schedlab {
namespace {

constexpr std::array<std::string_view, 11> kNames = {"gemm",   "attention",        "attention_backward", "convolution",
                                                      "convolution_backward", "triton_pointwise", "triton_reduction", "extern",
                                                      "copy",   "collective",       "none"};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// The op's own name: "torch.ops.aten.mm.default" -> "mm", "aten.randint.low_out"
// -> "randint" (namespace, op, overload), "extern_kernels.addmm" -> "addmm".
std::string_view op_name(std::string_view kernel) {
  std::string_view s = kernel;
  if (s.substr(0, 10) == "torch.ops.") s.remove_prefix(10);
  const std::size_t first = s.find('.');
  if (first == std::string_view::npos) return s;
  if (s.substr(0, first) == "extern_kernels") return s.substr(first + 1);
  std::string_view rest = s.substr(first + 1);
  return rest.substr(0, rest.find('.'));
}

// Single elementwise kernels a library call launches: copies, and the
// random fills of dropout masks and stochastic depth.
bool is_elementwise_op(std::string_view op) {
  for (std::string_view c : {"copy_", "clone", "_to_copy", "copy", "rand", "randn", "randint", "rand_like", "randn_like",
                             "randint_like", "bernoulli", "bernoulli_", "uniform_", "normal_"})
    if (op == c) return true;
  return false;
}

bool is_gemm_op(std::string_view op) {
  for (std::string_view g : {"mm", "addmm", "bmm", "baddbmm", "matmul", "_scaled_mm", "_int_mm", "addbmm", "linear"})
    if (op == g) return true;
  return false;
}

// A node with no kernel name whose outputs are all items of a multi-output
// kernel (or have no storage) only indexes into another node's result.
bool launches_nothing(const Graph& g, const Node& n) {
  if (!n.kernel.empty()) return false;
  for (BufId b : n.outputs) {
    Layout l = g.buffers[b].layout;
    if (l != Layout::MultiOutputItem && l != Layout::None) return false;
  }
  return true;
}

}  // namespace

std::string_view to_string(KernelClass c) { return kNames[static_cast<std::size_t>(c)]; }

std::optional<KernelClass> parse_kernel_class(std::string_view s) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == s) return static_cast<KernelClass>(i);
  return std::nullopt;
}

KernelClass classify_node(const Graph& g, const Node& n) {
  switch (n.kind) {
    case NodeKind::Wait:
    case NodeKind::Nop: return KernelClass::None;
    case NodeKind::Collective: return KernelClass::Collective;
    case NodeKind::Pointwise: return KernelClass::TritonPointwise;
    case NodeKind::Reduction: return KernelClass::TritonReduction;
    case NodeKind::Template:
      // Inductor's templates are matmuls unless named otherwise.
      return contains(n.kernel, "conv") ? KernelClass::Convolution : KernelClass::Gemm;
    case NodeKind::Extern: break;
  }
  if (launches_nothing(g, n)) return KernelClass::None;
  const std::string_view op = op_name(n.kernel);
  const bool backward = contains(n.kernel, "backward");
  if (contains(n.kernel, "attention")) return backward ? KernelClass::AttentionBackward : KernelClass::Attention;
  if (contains(n.kernel, "convolution")) return backward ? KernelClass::ConvolutionBackward : KernelClass::Convolution;
  if (is_gemm_op(op)) return KernelClass::Gemm;
  if (is_elementwise_op(op)) return KernelClass::Copy;
  return KernelClass::Extern;
}

}  // namespace schedlab
