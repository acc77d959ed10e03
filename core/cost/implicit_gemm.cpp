// Implicit-GEMM geometry of matmuls and convolutions (core/cost/implicit_gemm.h).
#include "core/cost/implicit_gemm.h"

#include <algorithm>
#include <array>

namespace schedlab {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The first output buffer with a shape of at least `rank` dims.
const Buffer* shaped_output(const Graph& g, const Node& n, std::size_t rank) {
  for (BufId b : n.outputs)
    if (g.buffers[b].shape.size() >= rank) return &g.buffers[b];
  return nullptr;
}

// A convolution's input channels: the activation read's dim 1 when its
// buffer has a shape; else (graph inputs carry only bytes) the per-sample
// elements over the output pixels times stride^spatial_dims, for the
// smallest stride that gives a whole number of channels dividing K.
// `grad_output`: the backward's gradient of the output, which is no input.
std::int64_t conv_in_channels(const Graph& g, const Node& n, const ImplicitGemm& s, std::int64_t pixels, std::size_t spatial_dims,
                              const Buffer* grad_output) {
  const std::int64_t weight_bytes = s.n * s.k * s.elem_bytes;
  const Buffer* input = nullptr;
  bool weight_skipped = false;
  for (const Dep& d : n.reads) {
    if (d.is_weak()) continue;
    const Buffer& b = g.buffers[d.buf];
    if (&b == grad_output) continue;
    if (b.bytes == weight_bytes && !weight_skipped) {
      weight_skipped = true;
      continue;
    }
    if (!input || b.bytes > input->bytes) input = &b;
  }
  if (!input || s.batch <= 0) return 0;
  if (input->shape.size() == spatial_dims + 2) return input->shape[1];
  if (input->bytes % (s.elem_bytes * s.batch) != 0) return 0;
  const std::int64_t per_sample = input->bytes / s.elem_bytes / s.batch;
  for (std::int64_t stride : std::array<std::int64_t, 6>{1, 2, 4, 8, 16, 32}) {
    std::int64_t area = pixels;
    for (std::size_t i = 0; i < spatial_dims; ++i) area *= stride;
    if (area <= 0 || per_sample % area != 0) continue;
    const std::int64_t channels = per_sample / area;
    if (channels >= 1 && s.k % channels == 0) return channels;
  }
  return 0;
}

std::int64_t product(const std::vector<std::int64_t>& v, std::size_t from) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

// A convolution's implicit GEMM from its recorded geometry (validated by
// the loader: ranks agree, groups divide the channels). A transposed
// convolution is the data gradient of a forward one: its GEMM runs over the
// input's pixels.
ImplicitGemm from_geometry(const Graph& g, const Node& n, const ConvolutionGeometry& geo, KernelClass c) {
  ImplicitGemm s;
  const std::int64_t taps = product(geo.weight, 2);
  const std::int64_t in_channels = geo.input[1];
  const std::int64_t out_channels = geo.output[1];
  s.in_channels = in_channels / geo.groups;
  s.m = geo.output[0] * product(geo.transposed ? geo.input : geo.output, 2);
  s.n = out_channels / geo.groups;
  s.k = s.in_channels * taps;
  // The element size: the weight's bytes per element (a graph input may
  // carry bytes only).
  const std::int64_t weight_numel = product(geo.weight, 0);
  for (const Dep& d : n.reads) {
    const Buffer& b = g.buffers[d.buf];
    if (d.is_weak() || weight_numel <= 0 || b.bytes % weight_numel != 0 || (!b.shape.empty() && b.shape != geo.weight)) continue;
    const std::int64_t e = b.bytes / weight_numel;
    if (e == 1 || e == 2 || e == 4 || e == 8) {
      s.elem_bytes = e;
      break;
    }
  }
  if (geo.groups > 1 && geo.groups == in_channels) s.family = ConvFamily::Depthwise;
  else if (geo.groups > 1) s.family = ConvFamily::Grouped;
  s.batch = s.family == ConvFamily::Grouped ? geo.groups : 1;
  bool unit = geo.groups == 1 && !geo.transposed && taps == 1;
  for (std::size_t i = 0; i < geo.stride.size(); ++i) unit = unit && geo.stride[i] == 1 && geo.padding[i] == 0;
  s.one_by_one = unit;
  s.memory_format = geo.memory_format;
  if (c == KernelClass::ConvolutionBackward) {
    const std::array<bool, 3> mask = geo.output_mask.value_or(std::array<bool, 3>{true, true, true});
    s.products = std::max<std::int64_t>(1, static_cast<std::int64_t>(mask[0]) + static_cast<std::int64_t>(mask[1]));
  }
  return s;
}

}  // namespace

std::optional<ImplicitGemm> implicit_gemm_shape(const Graph& g, const Node& n, KernelClass c) {
  if (!n.flops || *n.flops <= 0) return std::nullopt;
  if (n.convolution && (c == KernelClass::Convolution || c == KernelClass::ConvolutionBackward)) {
    ImplicitGemm s = from_geometry(g, n, *n.convolution, c);
    if (s.m > 0 && s.n > 0 && s.k > 0) return s;
    return std::nullopt;
  }
  ImplicitGemm s;
  if (c == KernelClass::Gemm) {
    const Buffer* out = shaped_output(g, n, 2);
    if (!out) return std::nullopt;
    for (std::size_t i = 0; i + 2 < out->shape.size(); ++i) s.batch *= out->shape[i];
    s.m = out->shape[out->shape.size() - 2];
    s.n = out->shape.back();
    const std::int64_t per_k = 2 * s.batch * s.m * s.n;
    if (per_k <= 0 || s.m <= 0 || s.n <= 0) return std::nullopt;
    s.k = *n.flops / per_k;
    if (s.k <= 0) return std::nullopt;
    return s;
  }
  if (c != KernelClass::Convolution && c != KernelClass::ConvolutionBackward) return std::nullopt;
  // [batch, out channels, spatial...]: the output, or for the backward the
  // gradient of the output (its first read with such a shape).
  const Buffer* out = nullptr;
  if (c == KernelClass::Convolution) out = shaped_output(g, n, 3);
  else
    for (const Dep& d : n.reads)
      if (!d.is_weak() && g.buffers[d.buf].shape.size() >= 3) {
        out = &g.buffers[d.buf];
        break;
      }
  if (!out) return std::nullopt;
  std::int64_t pixels = 1;
  for (std::size_t i = 2; i < out->shape.size(); ++i) pixels *= out->shape[i];
  s.batch = out->shape[0];
  s.m = s.batch * pixels;
  s.n = out->shape[1];
  s.elem_bytes = dtype_size(out->dtype);
  const std::int64_t per_k = 2 * s.m * s.n;
  if (per_k <= 0 || *n.flops % per_k != 0) return std::nullopt;
  s.k = *n.flops / per_k;
  if (c == KernelClass::ConvolutionBackward) {
    // Gradients of the input and of the weight are one product each: the
    // weight (n x k elements) says which.
    bool weight_found = false;
    for (std::int64_t products : {2, 1}) {
      if (s.k % products != 0 || s.elem_bytes <= 0) continue;
      for (const Dep& d : n.reads)
        if (!d.is_weak() && g.buffers[d.buf].bytes == s.n * (s.k / products) * s.elem_bytes) weight_found = true;
      if (weight_found) {
        s.products = products;
        s.k /= products;
        break;
      }
    }
    if (!weight_found) return std::nullopt;
  }
  if (s.k <= 0) return std::nullopt;
  if (s.elem_bytes > 0)
    s.in_channels = conv_in_channels(g, n, s, pixels, out->shape.size() - 2, c == KernelClass::ConvolutionBackward ? out : nullptr);
  s.batch = 1;  // the implicit GEMM is one [M, K] x [K, N] product
  return s;
}

namespace {
// Output tiles of 128 x 128 over the batch.
std::int64_t output_tiles(const ImplicitGemm& s) { return s.batch * ceil_div(s.m, kTileEdge) * ceil_div(s.n, kTileEdge); }
}  // namespace

std::int64_t tile_waves(const ImplicitGemm& s, int sm_count) { return ceil_div(output_tiles(s), std::max(sm_count, 1)); }

double wave_us(const ImplicitGemm& s, std::int64_t k, int sm_count, double peak_flops) {
  const double tile_flops = 2.0 * kTileEdge * kTileEdge * static_cast<double>(k);
  return static_cast<double>(s.products * tile_waves(s, sm_count)) * std::max(sm_count, 1) * tile_flops / peak_flops * 1e6;
}

std::int64_t split_k_loop(const ImplicitGemm& s, std::int64_t k, int sm_count) {
  const std::int64_t tiles = output_tiles(s);
  if (tiles <= 0 || tiles >= sm_count) return k;
  const std::int64_t slices = std::max<std::int64_t>(1, std::min<std::int64_t>(sm_count / tiles, k / kMinSplitK));
  return ceil_div(k, slices);
}

std::int64_t narrow_channel_k(const ImplicitGemm& s) {
  if (s.in_channels <= 0 || s.elem_bytes <= 0 || s.k % s.in_channels != 0) return 0;
  if ((s.in_channels * s.elem_bytes) % 16 == 0) return 0;
  const std::int64_t align = std::max<std::int64_t>(16 / s.elem_bytes, 1);
  return ceil_div(s.in_channels, align) * align * (s.k / s.in_channels);
}

}  // namespace schedlab
