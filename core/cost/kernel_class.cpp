// Kernel classes from kind + kernel name (docs/cost-model.md, "Kernel classes").
#include "core/cost/kernel_class.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <system_error>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/cost/implicit_gemm.h"

namespace schedlab {
namespace {

constexpr std::array<std::string_view, kKernelClasses> kNames = {
    "gemm",
    "attention",
    "attention_backward",
    "convolution",
    "convolution_backward",
    "triton_pointwise",
    "triton_reduction",
    "extern",
    "copy",
    "collective",
    "none",
    "indexing",
    "scatter",
    "extern_memory",
    "depthwise_convolution",
    "depthwise_convolution_native",
    "depthwise_convolution_backward",
    "depthwise_convolution_backward_native",
    "grouped_convolution",
    "grouped_convolution_backward",
    "convolution_1d",
    "convolution_1d_backward",
    "triton_strided_pointwise",
    "triton_strided_reduction",
    "gemm_unaligned",
    "gemm_f32",
    "triton_scatter",
    "triton_scatter_reduction"};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

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

bool is_one_of(std::string_view op, std::initializer_list<std::string_view> ops) {
  for (std::string_view o : ops)
    if (op == o) return true;
  return false;
}

// The externs the `extern` law was fitted on: sorts and selections, whose
// kernels (radix passes, scans, several launches) run far below memory
// speed.
bool is_sort_like_op(std::string_view op) {
  return is_one_of(op, {"topk", "sort", "argsort", "msort", "nonzero", "nonzero_static", "unique", "_unique", "_unique2",
                        "unique_consecutive", "unique_dim", "unique_dim_consecutive", "kthvalue", "median", "nanmedian", "mode",
                        "randperm", "searchsorted", "bucketize", "multinomial"});
}

// ATen ops whose CUDA implementation copies a device count to the host
// (`.item()`, a cudaMemcpy into pageable memory): the calling thread blocks
// until the stream has run the call's kernels.
bool is_host_sync_op(std::string_view op) {
  return is_one_of(op, {"nonzero", "masked_select", "unique", "_unique", "_unique2", "unique_consecutive", "unique_dim",
                        "unique_dim_consecutive", "bincount", "item", "_local_scalar_dense", "_embedding_bag_backward",
                        "_embedding_bag_dense_backward"});
}

bool is_indexing_op(std::string_view op) {
  return is_one_of(op, {"embedding", "_embedding_bag", "embedding_bag", "_embedding_bag_forward_only", "index_select", "gather",
                        "take", "take_along_dim", "index", "_unsafe_index"});
}

bool is_scatter_op(std::string_view op) {
  return is_one_of(op, {"scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_", "index_add",
                        "index_add_", "index_put", "index_put_", "_index_put_impl_", "index_reduce", "index_reduce_", "index_copy",
                        "index_copy_", "masked_scatter", "masked_scatter_", "embedding_dense_backward", "embedding_backward",
                        "_embedding_bag_backward", "_embedding_bag_dense_backward", "_embedding_bag_per_sample_weights_backward",
                        "segment_reduce", "_segment_reduce", "_segment_reduce_backward"});
}

// The dtype of the convolution's activation: the read shaped as its input.
std::string_view conv_input_dtype(const Graph& g, const Node& n, const ConvolutionGeometry& geo) {
  for (const Dep& d : n.reads)
    if (!d.is_weak() && g.buffers[d.buf].shape == geo.input) return g.buffers[d.buf].dtype;
  return {};
}

// ATen's choice for a depthwise convolution (Convolution.cpp,
// _select_conv_backend, use_cudnn_depthwise): cuDNN when it runs
// channels-last, or for a 1-D or 2-D one in f16 (where its workload checks
// mostly pass); otherwise its own conv_depthwise2d / 3d kernels. A
// transposed convolution is never ATen's depthwise.
bool runs_native_depthwise(const Graph& g, const Node& n, const ConvolutionGeometry& geo) {
  if (geo.transposed || geo.memory_format == MemoryFormat::ChannelsLast) return false;
  return !(conv_input_dtype(g, n, geo) == "f16" && geo.input.size() <= 4);
}

// The finer class of a convolution with a geometry: its family, and for a
// depthwise one whether ATen runs it natively.
KernelClass convolution_class(const Graph& g, const Node& n, KernelClass base) {
  if (!n.convolution) return base;
  const ConvolutionGeometry& geo = *n.convolution;
  const bool backward = base == KernelClass::ConvolutionBackward;
  const std::int64_t in_channels = geo.input.size() > 1 ? geo.input[1] : 0;
  if (geo.groups > 1 && geo.groups == in_channels) {
    const bool native = runs_native_depthwise(g, n, geo);
    if (backward) return native ? KernelClass::DepthwiseConvolutionBackwardNative : KernelClass::DepthwiseConvolutionBackward;
    return native ? KernelClass::DepthwiseConvolutionNative : KernelClass::DepthwiseConvolution;
  }
  if (geo.groups > 1) return backward ? KernelClass::GroupedConvolutionBackward : KernelClass::GroupedConvolution;
  if (geo.weight.size() == 3) return backward ? KernelClass::Convolution1dBackward : KernelClass::Convolution1d;
  return base;
}

// The finer class of a matmul: f32 runs on the CUDA cores; a 16-bit one
// with a dimension whose bytes are not a multiple of 16 runs cuBLAS's
// align-1 kernels.
KernelClass gemm_class(const Graph& g, const Node& n) {
  std::string_view dtype;
  for (BufId b : n.outputs)
    if (dtype.empty()) dtype = g.buffers[b].dtype;
  if (dtype == "f32") return KernelClass::GemmF32;
  const std::int64_t elem = dtype_size(dtype);
  if (elem != 2) return KernelClass::Gemm;
  const auto shape = implicit_gemm_shape(g, n, KernelClass::Gemm);
  if (!shape) return KernelClass::Gemm;
  for (std::int64_t dim : {shape->m, shape->n, shape->k})
    if (dim > 0 && (dim * elem) % 16 != 0) return KernelClass::GemmUnaligned;
  return KernelClass::Gemm;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// A factor of an index expression, all digits: its value, saturated at the
// largest int64 (an exported number may have more digits than any stride;
// the rules only compare coefficients with 1).
std::int64_t factor_value(std::string_view digits) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  return ec == std::errc::result_out_of_range ? std::numeric_limits<std::int64_t>::max() : v;
}

// a * b and a + b of non-negative numbers, saturated at the largest int64.
std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  return a != 0 && b > kMax / a ? kMax : a * b;
}
std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  return b > kMax - a ? kMax : a + b;
}

// The coefficient of the variable `var` in an affine index (the product of
// the numbers multiplying it, saturated at the largest int64), 0 where it
// does not appear, and -1 where it appears inside a function
// (ModularIndexing, FloorDiv: not affine).
std::int64_t coefficient_of(std::string_view index, std::string_view var) {
  std::int64_t found = 0;
  for (std::string_view term : index_terms(index)) {
    std::int64_t coef = 1;
    bool has_var = false, affine = true;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= term.size(); ++i) {
      if (i < term.size() && term[i] != '*') continue;
      const std::string_view factor = trimmed(term.substr(start, i - start));
      start = i + 1;
      if (factor == var) has_var = true;
      else if (!factor.empty() && std::all_of(factor.begin(), factor.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        coef = saturating_mul(coef, factor_value(factor));
      else affine = false;
    }
    if (!has_var) {
      if (!affine && term.find(var) != std::string_view::npos) {
        // the variable inside a function, or beside another variable
        for (std::size_t at = term.find(var); at != std::string_view::npos; at = term.find(var, at + 1)) {
          const std::size_t end = at + var.size();
          const bool starts = at == 0 || !std::isalnum(static_cast<unsigned char>(term[at - 1]));
          const bool ends = end == term.size() || !std::isalnum(static_cast<unsigned char>(term[end]));
          if (starts && ends) return -1;
        }
      }
      continue;
    }
    if (!affine) return -1;
    found = saturating_add(found, coef);
  }
  return found;
}

// Whether a Triton kernel moves an operand along its fastest-moving
// iteration index with a stride (a transpose, a reduction over columns):
// a memory dep whose last iteration variable (c<k-1> or d<k-1> of its k
// sizes, Inductor's canonical names) has an affine coefficient other than
// 0 (broadcast) or 1 (contiguous). Gathers (indirect indices) are not strided.
bool moves_strided(const Node& n) {
  for (const auto* deps : {&n.reads, &n.writes})
    for (const Dep& d : *deps) {
      if (d.kind != DepKind::Memory || d.size.size() < 1 || d.size.back() <= 1) continue;
      if (is_indirect_index(d.index)) continue;
      const std::string last = std::to_string(d.size.size() - 1);
      for (const char* prefix : {"c", "d"}) {
        const std::int64_t coef = coefficient_of(d.index, std::string(prefix) + last);
        if (coef > 1) return true;
      }
    }
  return false;
}

// Whether a Triton kernel stores through a loaded index: an accumulating
// scatter (atomic adds where indices collide) or an indexed store.
bool writes_indirect(const Node& n) {
  for (const Dep& d : n.writes)
    if (d.kind == DepKind::Memory && is_indirect_index(d.index)) return true;
  return false;
}

// The finer class of a Triton kernel: a scatter before a strided access.
KernelClass triton_class(const Node& n, bool reduction) {
  if (writes_indirect(n)) return reduction ? KernelClass::TritonScatterReduction : KernelClass::TritonScatter;
  if (moves_strided(n)) return reduction ? KernelClass::TritonStridedReduction : KernelClass::TritonStridedPointwise;
  return reduction ? KernelClass::TritonReduction : KernelClass::TritonPointwise;
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

std::string_view op_name(std::string_view kernel) {
  std::string_view s = kernel;
  if (s.substr(0, 10) == "torch.ops.") s.remove_prefix(10);
  const std::size_t first = s.find('.');
  if (first == std::string_view::npos) return s;
  if (s.substr(0, first) == "extern_kernels") return s.substr(first + 1);
  std::string_view rest = s.substr(first + 1);
  return rest.substr(0, rest.find('.'));
}

std::vector<std::string_view> index_terms(std::string_view index) {
  std::vector<std::string_view> terms;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= index.size(); ++i) {
    const char c = i < index.size() ? index[i] : '+';
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == '+' || c == '-')) {
      if (const std::string_view term = trimmed(index.substr(start, i - start)); !term.empty()) terms.push_back(term);
      start = i + 1;
    }
  }
  return terms;
}

bool is_indirect_index(std::string_view index) {
  for (std::string_view prefix : {std::string_view("tmp"), std::string_view("indirect")}) {
    for (std::size_t at = index.find(prefix); at != std::string_view::npos; at = index.find(prefix, at + 1)) {
      const bool starts = at == 0 || !(std::isalnum(static_cast<unsigned char>(index[at - 1])) || index[at - 1] == '_');
      const std::size_t digits = at + prefix.size();
      if (starts && digits < index.size() && std::isdigit(static_cast<unsigned char>(index[digits]))) return true;
    }
  }
  return false;
}

std::string_view to_string(KernelClass c) { return kNames[static_cast<std::size_t>(c)]; }

std::optional<KernelClass> parse_kernel_class(std::string_view s) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == s) return static_cast<KernelClass>(i);
  return std::nullopt;
}

KernelClass classify_kernel(const Graph& g, const Node& n) {
  switch (n.kind) {
    case NodeKind::Wait:
    case NodeKind::Nop: return KernelClass::None;
    case NodeKind::Collective: return KernelClass::Collective;
    case NodeKind::Pointwise: return triton_class(n, false);
    case NodeKind::Reduction: return triton_class(n, true);
    case NodeKind::Template:
      // Inductor's templates are matmuls unless named otherwise.
      return contains(n.kernel, "conv") ? convolution_class(g, n, KernelClass::Convolution) : gemm_class(g, n);
    case NodeKind::Extern: break;
  }
  if (launches_nothing(g, n)) return KernelClass::None;
  const std::string_view op = op_name(n.kernel);
  const bool backward = contains(n.kernel, "backward");
  if (contains(n.kernel, "attention")) return backward ? KernelClass::AttentionBackward : KernelClass::Attention;
  if (contains(n.kernel, "convolution"))
    return convolution_class(g, n, backward ? KernelClass::ConvolutionBackward : KernelClass::Convolution);
  if (is_gemm_op(op)) return gemm_class(g, n);
  if (is_elementwise_op(op)) return KernelClass::Copy;
  if (is_sort_like_op(op)) return KernelClass::Extern;
  if (is_indexing_op(op)) return KernelClass::Indexing;
  if (is_scatter_op(op)) return KernelClass::Scatter;
  return KernelClass::ExternMemory;
}

bool reads_back_to_host(const Node& n) { return n.kind == NodeKind::Extern && is_host_sync_op(op_name(n.kernel)); }

KernelClass base_class(KernelClass c) {
  switch (c) {
    case KernelClass::Indexing:
    case KernelClass::Scatter:
    case KernelClass::ExternMemory: return KernelClass::Extern;
    case KernelClass::DepthwiseConvolution:
    case KernelClass::DepthwiseConvolutionNative:
    case KernelClass::GroupedConvolution:
    case KernelClass::Convolution1d: return KernelClass::Convolution;
    case KernelClass::DepthwiseConvolutionBackward:
    case KernelClass::DepthwiseConvolutionBackwardNative:
    case KernelClass::GroupedConvolutionBackward:
    case KernelClass::Convolution1dBackward: return KernelClass::ConvolutionBackward;
    case KernelClass::TritonStridedPointwise:
    case KernelClass::TritonScatter: return KernelClass::TritonPointwise;
    case KernelClass::TritonStridedReduction:
    case KernelClass::TritonScatterReduction: return KernelClass::TritonReduction;
    case KernelClass::GemmUnaligned:
    case KernelClass::GemmF32: return KernelClass::Gemm;
    default: return c;
  }
}

std::optional<KernelClass> law_parent(KernelClass c) {
  if (!is_fine_class(c)) return std::nullopt;
  const KernelClass base = base_class(c);
  return base == KernelClass::Extern ? KernelClass::Copy : base;
}

KernelClass classify_node(const Graph& g, const Node& n) { return base_class(classify_kernel(g, n)); }

}  // namespace schedlab
