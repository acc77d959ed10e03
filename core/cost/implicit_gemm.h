// core/cost — the implicit-GEMM view of a matmul or convolution node: the
// geometry the time law's tile terms are made of (docs/cost-model.md,
// "Tile and wave terms").
//
// cuBLAS and cuDNN run a matmul [B, M, K] x [K, N] and a convolution
// (M = batch x output pixels, N = output channels, K = input channels x
// kernel taps) as grids of output tiles, one tile per SM at a time. Two
// general effects follow from the shapes alone:
//
// - wave quantization: a grid of T tiles on S SMs takes ceil(T / S) waves,
//   each as long as one tile's K loop, however few tiles the last wave has
//   (a 1024 x 256 output is 16 tiles of 128 x 128: 12 % of an H100 busy);
// - narrow input channels: a convolution whose input channels are not a
//   multiple of 16 bytes (RGB images: 3 channels) cannot use the vectorized
//   tensor-core kernels; cuDNN pads the channels to that alignment and runs
//   a slow gather kernel whose time follows the padded K loop, per wave.
//
// Pure functions of the graph: the output shape, the flops, and the shapes
// or byte sizes of the buffers read.
#pragma once

#include <cstdint>
#include <optional>

#include "core/cost/kernel_class.h"
#include "core/graph/graph.h"

namespace schedlab {

inline constexpr std::int64_t kTileEdge = 128;  // the representative output tile, 128 x 128

// How cuDNN runs a convolution, from its geometry: one implicit GEMM over all
// channels (dense), a per-channel kernel (depthwise: groups = input
// channels), or GEMMs per group (grouped).
enum class ConvFamily : std::uint8_t { Dense, Depthwise, Grouped };

struct ImplicitGemm {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;  // a grouped convolution: `batch` GEMMs, one per group
  // Products of this shape the node runs: 1, or for a convolution backward
  // 2 when it computes both the input's and the weight's gradients.
  std::int64_t products = 1;
  // Convolutions: input channels per group (0 when they cannot be told from
  // the graph) and the element size in bytes.
  std::int64_t in_channels = 0, elem_bytes = 0;
  // Convolutions with a `convolution` geometry (else: dense, layout unknown).
  ConvFamily family = ConvFamily::Dense;
  bool one_by_one = false;  // 1x1 kernel, stride 1, no padding, one group: a plain matmul
  std::optional<MemoryFormat> memory_format;
};

// The shape of a gemm, convolution or convolution backward node (the
// forward convolution's: from its `convolution` geometry when it has one,
// else read off the gradient of its output and its weight), or nullopt
// (other classes, no flops, no shapes, sizes that do not divide).
std::optional<ImplicitGemm> implicit_gemm_shape(const Graph& g, const Node& n, KernelClass c);

// Waves of 128 x 128 output tiles over `sm_count` SMs (>= 1).
std::int64_t tile_waves(const ImplicitGemm& s, int sm_count);

// The time, at `peak_flops`, of the whole GPU running ceil(T / S) full waves
// of tiles over a K loop of `k`, for each of the node's products (µs): the
// compute term padded to whole waves.
double wave_us(const ImplicitGemm& s, std::int64_t k, int sm_count, double peak_flops);

// The K loop one tile runs when the library splits K across SMs (cuBLAS's
// and CUTLASS's split-K, a second kernel summing the parts): a grid of
// fewer tiles than SMs over a long K runs up to S / T slices of K, each at
// least kMinSplitK long. `k` itself when the grid fills the GPU.
inline constexpr std::int64_t kMinSplitK = 512;
std::int64_t split_k_loop(const ImplicitGemm& s, std::int64_t k, int sm_count);

// The padded K loop of a convolution with narrow input channels (channels x
// element size not a multiple of 16 bytes): channels rounded up to 16 bytes,
// times the kernel taps; 0 when the channels are aligned or unknown.
std::int64_t narrow_channel_k(const ImplicitGemm& s);

}  // namespace schedlab
