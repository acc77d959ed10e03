// The features of the calibrated laws (core/cost/law_features.h).
#include "core/cost/law_features.h"

#include <cctype>
#include <cmath>

#include <algorithm>
#include <limits>
#include <string>

#include "core/cost/implicit_gemm.h"
#include "core/util/affine_index.h"
#include "core/util/error.h"
#include "core/util/saturating.h"

namespace schedlab {
namespace {

// 16- and 8-bit work runs on the tensor cores at their full rate; f32 work
// runs on the CUDA cores (matmuls, attention) or the TF32 path
// (convolutions), each at its own peak and its own efficiency.
bool low_precision(std::string_view dtype) { return dtype == "bf16" || dtype == "f16" || dtype == "f8"; }

// A dep indexed through a loaded value (is_indirect_index: a gather)
// touches one element per iteration, wherever it lands.
// Whether a memory dep is a contiguous run over one index variable
// (`d0`, or `d0 - 4096`: one iteration size, the index the variable itself
// less a constant): the loads of a concatenation's inputs, each declared
// over the output's whole range and masked to its own slice.
bool contiguous_run(const Dep& d) {
  if (d.kind != DepKind::Memory || d.size.size() != 1 || d.index.empty() || !std::isalpha(static_cast<unsigned char>(d.index[0])))
    return false;
  const std::string& x = d.index;
  const auto digits_from = [&x](std::size_t i) {
    while (i < x.size() && std::isdigit(static_cast<unsigned char>(x[i]))) ++i;
    return i;
  };
  const std::size_t end_of_variable = digits_from(1);
  if (end_of_variable == 1) return false;         // a letter, then its number
  if (end_of_variable == x.size()) return true;   // `d0`
  const std::size_t offset = end_of_variable + 3;  // `d0 - 4096`
  return x.compare(end_of_variable, 3, " - ") == 0 && offset < x.size() && digits_from(offset) == x.size();
}

std::int64_t dep_priced_bytes(const Graph& g, const Dep& d) {
  // A contiguous run wider than its buffer can only be a masked one (a
  // concatenation's input): it moves at most the buffer. A broadcast read
  // (an index that revisits elements) keeps its declared bytes, as
  // Inductor counts them and the laws were fitted.
  const std::int64_t buffer = g.buffers[d.buf].bytes;
  const std::int64_t bytes = buffer > 0 && d.bytes > buffer && contiguous_run(d) ? buffer : d.bytes;
  if (d.kind != DepKind::Memory || !is_indirect_index(d.index) || d.size.empty()) return bytes;
  const std::int64_t elem = dtype_size(g.buffers[d.buf].dtype);
  if (elem == 0) return bytes;
  std::int64_t touched = elem;
  for (std::int64_t s : d.size) {
    if (s > 0 && touched > bytes / s) return bytes;  // more than the buffer: the buffer bounds it
    touched *= s;
  }
  return std::min(bytes, touched);
}

// ATen's reading of a 4-d or 5-d layout as channels-last (c10's
// is_channels_last_strides_2d/3d): the strides grow from the channels
// outward (C, the spatial dims from the last, N); ambiguous layouts (N111)
// count as contiguous.
bool is_channels_last(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& stride) {
  const std::size_t rank = shape.size();
  if ((rank != 4 && rank != 5) || stride.size() != rank || stride[1] == 0) return false;
  std::int64_t smallest = 0;
  std::vector<std::size_t> dims{1};
  for (std::size_t d = rank - 1; d >= 2; --d) dims.push_back(d);
  dims.push_back(0);
  for (std::size_t d : dims) {
    if (shape[d] == 0 || stride[d] < smallest) return false;
    if (d == 0 && smallest == stride[1]) return false;
    smallest = stride[d] * std::max<std::int64_t>(shape[d], 1);
  }
  return true;
}

// A matmul operand's row pitch in elements: the larger of its last two
// strides when the other is 1 (row- or column-major), else none (0); a
// buffer without strides is taken as row-major.
std::int64_t row_pitch(const Buffer& b) {
  const std::size_t r = b.shape.size();
  if (r < 2) return 0;
  if (b.stride.size() != r) return b.shape[r - 1];
  const std::int64_t a = b.stride[r - 1], c = b.stride[r - 2];
  if (std::min(a, c) != 1) return 0;
  return std::max(a, c);
}

// The byte alignment every row of a 16-bit matmul's operands and result
// starts on: the largest of 16, 8, 4, 2 that divides each row pitch in
// bytes (16 where no operand is 16-bit or has rows).
std::int64_t matmul_row_alignment(const Graph& g, const Node& n, std::int64_t elem) {
  std::int64_t alignment = 16;
  if (elem != 2) return alignment;
  auto narrow = [&](BufId b) {
    const std::int64_t pitch = row_pitch(g.buffers[b]);
    if (pitch <= 1) return;
    while (alignment > elem && (pitch * elem) % alignment != 0) alignment /= 2;
  };
  for (const Dep& d : n.reads)
    if (!d.is_weak()) narrow(d.buf);
  for (BufId b : n.outputs) narrow(b);
  return alignment;
}

// Whether a dense operand's strides are row-major (NCHW) over its non-unit
// dims.
bool is_row_major(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& stride) {
  std::int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;
    if (stride[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

// The strides an operand of `shape` has as a view of buffer `b`: the
// buffer's own when the shapes agree; when the operand's shape is a
// permutation of the buffer's with every size distinct (so the permutation
// is known), the buffer's strides so permuted: the view Inductor passes
// for a transposed activation (a Conformer's [time, batch, channels]
// gradient read as [batch, channels, time]). None otherwise.
std::optional<std::vector<std::int64_t>> operand_strides(const Buffer& b, const std::vector<std::int64_t>& shape) {
  if (b.stride.size() != b.shape.size() || b.shape.size() != shape.size()) return std::nullopt;
  if (b.shape == shape) return b.stride;
  std::vector<std::int64_t> stride(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (std::count(shape.begin(), shape.end(), shape[i]) != 1) return std::nullopt;
    const auto at = std::find(b.shape.begin(), b.shape.end(), shape[i]);
    if (at == b.shape.end()) return std::nullopt;
    stride[i] = b.stride[static_cast<std::size_t>(at - b.shape.begin())];
  }
  return stride;
}

// The bytes ATen copies before a convolution's cuDNN calls: its activation
// operands (input; a backward's gradient of the output) laid out otherwise
// than the memory format the call runs in, each copied once per call that
// reads it. A backward runs its input-gradient and weight-gradient calls
// apart, each making the output's gradient contiguous in that format (twice
// when both are asked for). A 1-d convolution's operands are made
// contiguous whatever their layout (ATen's convolution views them as 2-d
// after `input.contiguous()`, so a permuted 3-d input cannot go
// channels-last). A read with the shapes of both input and output counts
// as the output's gradient.
std::int64_t layout_copy_bytes(const Graph& g, const Node& n, const ConvolutionGeometry& geo) {
  if (!geo.memory_format) return 0;
  const bool one_d = geo.input.size() == 3;
  const bool want_channels_last = !one_d && *geo.memory_format == MemoryFormat::ChannelsLast;
  const int gradient_calls = geo.output_mask ? std::max(1, int((*geo.output_mask)[0]) + int((*geo.output_mask)[1])) : 1;
  std::int64_t bytes = 0;
  for (const Dep& d : n.reads) {
    if (d.is_weak()) continue;
    const Buffer& b = g.buffers[d.buf];
    auto stride = geo.output_mask ? operand_strides(b, geo.output) : std::nullopt;
    const bool is_output = stride.has_value();
    if (!is_output) stride = operand_strides(b, geo.input);
    if (!stride) continue;
    const std::vector<std::int64_t>& shape = is_output ? geo.output : geo.input;
    std::int64_t pixels = 1;
    for (std::size_t i = 2; i < shape.size(); ++i) pixels *= shape[i];
    // One channel or one pixel: both formats are the same bytes.
    if (pixels <= 1 || shape[1] <= 1) continue;
    const bool laid_out = want_channels_last ? is_channels_last(shape, *stride) : is_row_major(shape, *stride);
    if (laid_out) continue;
    for (int copy = 0; copy < (is_output ? gradient_calls : 1); ++copy) bytes = checked_add(bytes, b.bytes, "node \"" + n.name + "\" bytes");
  }
  return bytes;
}

// The bytes of a convolution's operands (input, weight, output; a backward's
// gradients of them as well) at the node's element size: what an NCHW
// call's transposes move.
double operand_bytes(const ConvolutionGeometry& geo, const ImplicitGemm& s) {
  auto numel = [](const std::vector<std::int64_t>& v) {
    double p = 1;
    for (std::int64_t x : v) p *= static_cast<double>(x);
    return p;
  };
  return (numel(geo.input) + numel(geo.weight) + numel(geo.output)) * static_cast<double>(s.elem_bytes) * static_cast<double>(s.products);
}

// The input pixels (batch x spatial) cuDNN's nchwToNhwc transposes for an
// NCHW convolution whose input has at most 4 channels: once per call that
// reads the input (a forward; a backward's weight gradient). Such a
// transpose writes rows of a few bytes, and runs at about 43 ps a pixel on
// an H200 whatever the dtype or the channel count of 1 to 4 (1.6 M pixels
// of a [32, 3, 224, 224] patch stem: 70 µs; 128,000 of a [8, 1, 16000]
// waveform: 7 µs), where the byte-priced `transpose` term sees 9.6 MB and
// 256 KB.
double narrow_input_pixels(const ConvolutionGeometry& geo) {
  if (geo.input.size() < 3 || geo.input[1] > 4) return 0;
  if (geo.output_mask && !(*geo.output_mask)[1]) return 0;
  double pixels = static_cast<double>(geo.input[0]);
  for (std::size_t i = 2; i < geo.input.size(); ++i) pixels *= static_cast<double>(geo.input[i]);
  return pixels;
}

void set(LawFeatures& f, LawTerm t, double v) { f[static_cast<std::size_t>(t)] = v; }
double get(const LawFeatures& f, LawTerm t) { return f[static_cast<std::size_t>(t)]; }

// Moves the dense compute and memory features of a depthwise or grouped
// convolution to its family's terms.
void route_family(LawFeatures& f, const ImplicitGemm& s, double wave) {
  const double compute = get(f, LawTerm::Compute) + get(f, LawTerm::Fp32Compute);
  const double memory = get(f, LawTerm::Memory) + get(f, LawTerm::Spill);
  for (LawTerm t : {LawTerm::Compute, LawTerm::Fp32Compute, LawTerm::Memory, LawTerm::Spill, LawTerm::Wave, LawTerm::Narrow})
    set(f, t, 0.0);
  if (s.family == ConvFamily::Depthwise) {
    set(f, LawTerm::DepthwiseFixed, static_cast<double>(s.products));
    set(f, LawTerm::DepthwiseMemory, memory);
    set(f, LawTerm::DepthwiseCompute, compute);
  } else {
    set(f, LawTerm::GroupedFixed, static_cast<double>(s.products));
    set(f, LawTerm::GroupedMemory, memory);
    set(f, LawTerm::GroupedWave, wave);
  }
}

// The µs the profile's f32 peak takes for `ops` operations: the unit of the
// terms that price work per element which no flop count holds.
double f32_ops_us(double ops, const HardwareProfile& hw) { return ops * 1e6 / peak_flops_for_dtype(hw, "f32"); }

// The `attention` record of an attention or attention-backward call, else
// null (other classes, and graphs exported before the record).
const AttentionCall* attention_call(const Node& n, KernelClass c) {
  if (c != KernelClass::Attention && c != KernelClass::AttentionBackward) return nullptr;
  return n.attention ? &*n.attention : nullptr;
}

// An attention call of a graph exported before the `attention` record, as
// far as its flops and its first item tell: the query's shape is the
// output's (forward) or its gradient's (backward), the head dim its last;
// the unmasked scores are the flops over 4 x head dim (forward: two
// products) or 10 x head dim (backward: five), and the key length the
// scores per query row (a causal call reads as half its keys). Neither a
// bias nor dropout can be told: those terms stay 0, as they were.
std::optional<AttentionCall> attention_from_items(const Node& n, KernelClass c, const CostFacts& facts) {
  if ((c != KernelClass::Attention && c != KernelClass::AttentionBackward) || !n.flops || *n.flops <= 0) return std::nullopt;
  for (BufId o : n.outputs) {
    const std::vector<std::int64_t>* shape = o < facts.first_item_shape.size() ? facts.first_item_shape[o] : nullptr;
    if (!shape || shape->size() < 3) continue;
    double rows = 1;
    for (std::size_t i = 0; i + 1 < shape->size(); ++i) rows *= static_cast<double>((*shape)[i]);
    const double head_dim = static_cast<double>(shape->back());
    if (!(rows >= 1) || !(head_dim >= 1)) continue;
    const double per_score = (c == KernelClass::AttentionBackward ? 10.0 : 4.0) * head_dim;
    const double keys = std::round(static_cast<double>(*n.flops) / per_score / rows);
    if (!(keys >= 1) || keys > 1e12) continue;
    AttentionCall a;
    a.query = *shape;
    a.key = *shape;
    a.key[a.key.size() - 2] = static_cast<std::int64_t>(keys);
    a.value = a.key;
    return a;
  }
  return std::nullopt;
}

// The µs to spend one f32 op per unmasked score of an attention call: the
// unit of the per-score terms. With dropout its kernels draw one Philox
// random number per score (and keep or zero it); with a bias (an additive
// mask) they load and add one bias element per score: costs the matmul
// flops do not count.
double attention_score_us(const AttentionCall& a, const HardwareProfile& hw) {
  return f32_ops_us(static_cast<double>(attention_scores(a)), hw);
}

// The compute an attention call's grid leaves idle in its last wave, in the
// unit of its compute term: FlashAttention-style kernels run one CTA per
// 128 rows per (batch, head), over the query rows forward and over the key
// rows backward (each CTA then loops over the other side), so T tiles on S
// SMs take ceil(T / S) waves of one tile's loop. A decoder's 128 queries
// against a long encoder output (48 tiles on 132 SMs) run at a third of the
// GPU; the idle share is ceil(T / S) * S / T - 1 of the compute. The f32
// calls run the memory-efficient kernels, whose tiles are 64 rows
// (fmha_cutlassF_f32_aligned_64x64, fmha_cutlassB_f32_aligned_64x64_k64).
double attention_idle_wave_us(const AttentionCall& a, KernelClass c, double compute_us, int sm_count, bool f32) {
  const std::size_t rank = a.query.size();
  if (sm_count <= 0 || rank < 3 || a.key.size() != rank || compute_us <= 0) return 0.0;
  double batch_heads = 1;
  for (std::size_t i = 0; i + 2 < rank; ++i) batch_heads *= static_cast<double>(a.query[i]);
  const double rows = static_cast<double>(c == KernelClass::AttentionBackward ? a.key[rank - 2] : a.query[rank - 2]);
  const double tile_rows = f32 ? static_cast<double>(kTileEdge / 2) : static_cast<double>(kTileEdge);
  const double tiles = batch_heads * std::ceil(rows / tile_rows);
  if (!(tiles >= 1)) return 0.0;
  const double sms = static_cast<double>(sm_count);
  return compute_us * (std::ceil(tiles / sms) * sms / tiles - 1.0);
}

// The bytes of an attention call's bias: what it reads of buffers whose last
// two dims are the scores' (query length x key length), other than the
// query, key and value themselves. 0 without a bias.
std::int64_t attention_bias_bytes(const Graph& g, const Node& n, const AttentionCall& a) {
  if (!a.bias || a.query.size() < 2 || a.key.size() < 2) return 0;
  const std::int64_t sq = a.query[a.query.size() - 2], sk = a.key[a.key.size() - 2];
  std::int64_t bytes = 0;
  for (const Dep& d : n.reads) {
    if (d.is_weak() || d.buf == kNone) continue;
    const std::vector<std::int64_t>& shape = g.buffers[d.buf].shape;
    if (shape.size() < 2 || shape[shape.size() - 2] != sq || shape.back() != sk) continue;
    if (shape == a.query || shape == a.key || shape == a.value) continue;
    bytes = checked_add(bytes, dep_priced_bytes(g, d), "node \"" + n.name + "\" bias bytes");
  }
  return bytes;
}

// The µs to spend one f32 op per element of a Triton reduction computing an
// online softmax (Inductor's online_softmax_reduce: a softmax's max and sum
// in one pass, rescaling the running sum by two exponentials per element),
// work its bytes do not measure: a language model's loss over a vocabulary
// runs far below DRAM speed. 0 for other nodes, and for graphs exported
// before `reduction_types`.
double online_softmax_us(const Node& n, KernelClass c, const HardwareProfile& hw) {
  if (c != KernelClass::TritonReduction) return 0.0;
  if (std::find(n.reduction_types.begin(), n.reduction_types.end(), "online_softmax_reduce") == n.reduction_types.end()) return 0.0;
  return f32_ops_us(static_cast<double>(n.numel) * static_cast<double>(n.rnumel), hw);
}

// Whether a Triton reduction's rows start off 16-byte boundaries: one of
// its full-size operands (a dep over every element, numel x rnumel, as a
// row of rnumel per output) has rows of a byte length that is not a
// multiple of 16. Triton specializes its kernels on that divisibility; an
// unaligned row pitch loses the vectorized accesses (a cross-entropy over
// 50,257 bf16 logits runs 1.2-2x slower than over 50,264).
bool unaligned_rows(const Graph& g, const Node& n, KernelClass c) {
  std::int64_t full = 0;
  if (c != KernelClass::TritonReduction || n.rnumel <= 1 || n.numel <= 0 || !exact_mul(n.numel, n.rnumel, full)) return false;
  for (const auto* deps : {&n.reads, &n.writes})
    for (const Dep& d : *deps) {
      if (d.is_weak() || d.kind != DepKind::Memory || d.size.empty() || is_indirect_index(d.index)) continue;
      std::int64_t elements = 1;
      bool fits = true;
      for (std::int64_t s : d.size) fits = fits && s > 0 && exact_mul(elements, s, elements);
      const std::int64_t elem = dtype_size(g.buffers[d.buf].dtype);
      if (fits && elements == full && elem > 0 && (n.rnumel % 16) * elem % 16 != 0) return true;
    }
  return false;
}

// Whether no input element is read by two outputs along any spatial dim:
// the stride reaches past the dilated window (a patch embedding: 16x16
// windows at stride 16).
bool windows_do_not_overlap(const ConvolutionGeometry& geo) {
  if (geo.transposed || geo.weight.size() < 3) return false;
  for (std::size_t d = 0; d + 2 < geo.weight.size(); ++d) {
    const std::int64_t extent = geo.dilation[d] * (geo.weight[d + 2] - 1) + 1;
    if (geo.stride[d] < extent) return false;
  }
  return true;
}

bool integer_dtype(std::string_view dtype) { return !dtype.empty() && (dtype[0] == 'i' || dtype[0] == 'u'); }

// The bytes of a node's outputs, a multi_output one at its items'.
std::int64_t output_bytes(const Graph& g, const Node& n, const CostFacts& facts) {
  std::int64_t bytes = 0;
  for (BufId b : n.outputs)
    bytes = checked_add(bytes, g.buffers[b].layout == Layout::MultiOutput ? facts.multi_output_bytes[b] : g.buffers[b].bytes,
                        "node \"" + n.name + "\" bytes");
  return bytes;
}

// Whether node `n` is an embedding bag's forward call (`embedding_bag`,
// `_embedding_bag`, `_embedding_bag_forward_only`): one row read per index,
// summed per bag.
bool is_bag_forward(const Node& n) {
  const std::string_view op = op_name(n.kernel);
  return op == "embedding_bag" || op == "_embedding_bag" || op == "_embedding_bag_forward_only";
}

// The largest non-weak read of a buffer whose dtype is (or is not) an integer one, other than `except`.
const Dep* largest_read(const Graph& g, const Node& n, bool integer, BufId except = kNone) {
  const Dep* best = nullptr;
  for (const Dep& d : n.reads) {
    if (d.is_weak() || d.buf == except || integer_dtype(g.buffers[d.buf].dtype) != integer) continue;
    if (!best || d.bytes > best->bytes) best = &d;
  }
  return best;
}

// --- a Triton scatter's atomics (docs/cost-model.md, "Scatter traffic") ---

// The contiguous run, in elements, that an indirect store's consecutive
// iterations write: the loop variables of its index other than the loaded
// value's terms (`32*d1 + d2 + 256*tmp0`: d2 of stride 1, then d1 of stride
// 32 = 256 elements), merged from stride 1 upward. 1 when the loaded value
// alone places each element (`tmp0`).
std::int64_t indirect_run(const Dep& d) {
  std::string affine;
  for (std::string_view term : index_terms(d.index))
    if (!is_indirect_index(term)) affine += (affine.empty() ? "" : " + ") + std::string(term);
  const auto form = parse_affine_index(affine.empty() ? "0" : affine, d.size.size(), "cd");
  if (!form) return 1;
  std::int64_t run = 1;
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t k = 0; k < form->strides.size(); ++k)
      if (form->strides[k] == run && d.size[k] > 1 && run <= std::numeric_limits<std::int64_t>::max() / d.size[k]) {
        run *= d.size[k];
        grew = true;
        break;
      }
  }
  return run;
}

// What a Triton scatter's atomics and gathers cost beyond the bytes its
// plain operands move (docs/cost-model.md, "Scatter traffic"). Its tables
// are not streamed: each run of updated elements costs its 32-byte sectors
// at the L2's atomic units. Where the tables it updates and gathers from
// outgrow the L2 together, that share of its atomics' 128-byte lines goes
// to DRAM and back, and that share of its gathers' rows read more than once
// is read again (a uniform spread); those sectors are not the L2's work.
// Updates of one element run one after another: the most per element (at
// a uniform spread, or as the exporter observed the index) bounds the
// kernel from below.
struct ScatterTraffic {
  std::int64_t table_bytes = 0;  // bytes of the deps of the updated tables, left out of `memory`
  double l2_sectors = 0;         // 32-byte sectors the atomics update in L2
  double spill_bytes = 0;        // DRAM traffic beyond the L2
  double written_bytes = 0;      // of that and the streamed outputs, the bytes written to DRAM while it runs
  double chain_updates = 0;      // atomic adds per table element (the most of any table)
  double lane_chain = 0;         // the chain times the same-address lanes of an instruction beyond kFreeLanes
  double wide_chain = 0;         // the chain times min(run, 8) / 8
};

// The elements a dep's loop touches: the product of its sizes.
double dep_elements(const Dep& d) {
  double elements = 1;
  for (std::int64_t s : d.size) elements *= static_cast<double>(std::max<std::int64_t>(s, 1));
  return elements;
}

// The elements of a Triton reduction's operands that run along another
// loop axis than most of its bytes (docs/cost-model.md, "Transposed
// operands"). Each memory dep of the node's loop nest (the sizes most of its
// bytes move over, three axes or more) runs along the innermost loop
// variable of stride 1 in its index; the axis most of those deps' bytes run
// along is the one a tile reads coalesced, and the others' full-size deps
// (broadcast along no loop variable) move a 32-byte sector an element: a
// LayerNorm's weight gradient beside its input gradient written transposed.
// 0 where they all run along one axis, or an index is not affine.
double transposed_elements(const Graph& g, const Node& n) {
  // The loop nest: the sizes of the memory deps with the most bytes (a
  // fused node may hold members of other nests, whose loop variables mean
  // other axes).
  std::vector<std::pair<const std::vector<std::int64_t>*, double>> nests;
  for (const auto* deps : {&n.reads, &n.writes})
    for (const Dep& d : *deps) {
      if (d.is_weak() || d.kind != DepKind::Memory || d.size.size() < 2) continue;
      auto it = std::find_if(nests.begin(), nests.end(), [&](const auto& e) { return *e.first == d.size; });
      if (it == nests.end()) it = nests.insert(nests.end(), {&d.size, 0.0});
      it->second += static_cast<double>(dep_priced_bytes(g, d));
    }
  if (nests.empty()) return 0;
  const std::vector<std::int64_t>& nest =
      *std::max_element(nests.begin(), nests.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  // A two-axis nest is a plain transpose, which Triton tiles in both axes
  // and runs at its bytes' price (the sweeps' 2-D ones read 0.79-1.27
  // without these terms); a reduction over two axes of three or more (a
  // batch and its tokens) walks the others' operands one sector apart.
  const std::size_t rank = nest.size();
  if (rank < 3) return 0;
  struct Axis {
    std::int64_t axis;
    double bytes = 0, elements = 0;
  };
  std::vector<Axis> axes;
  for (const auto* deps : {&n.reads, &n.writes})
    for (const Dep& d : *deps) {
      if (d.is_weak() || d.kind != DepKind::Memory || d.size != nest || is_indirect_index(d.index)) continue;
      const auto form = parse_affine_index(d.index, rank, "cd");
      if (!form) return 0;
      std::int64_t axis = -1;  // none of stride 1: a broadcast or a gather of columns, left out
      for (std::size_t k = 0; k < rank; ++k)
        if (form->strides[k] == 1 && d.size[k] > 1) axis = static_cast<std::int64_t>(k);
      const std::int64_t elem = dtype_size(g.buffers[d.buf].dtype);
      const double bytes = static_cast<double>(dep_priced_bytes(g, d));
      const double elements = dep_elements(d);
      if (axis < 0 || elements <= 1) continue;
      auto it = std::find_if(axes.begin(), axes.end(), [&](const Axis& a) { return a.axis == axis; });
      if (it == axes.end()) it = axes.insert(axes.end(), Axis{axis});
      it->bytes += bytes;
      // A dep broadcast along a loop variable (stride 0: a row's statistics)
      // reads the same sectors again: only full-size deps walk apart.
      if (elem > 0 && bytes >= elements * static_cast<double>(elem)) it->elements += elements;
    }
  if (axes.size() < 2) return 0;
  // The coalesced axis: the most bytes, ties to the innermost.
  const auto coalesced = std::max_element(axes.begin(), axes.end(), [](const Axis& a, const Axis& b) {
    return a.bytes != b.bytes ? a.bytes < b.bytes : a.axis < b.axis;
  });
  double transposed = 0;
  for (const Axis& a : axes)
    if (&a != &*coalesced) transposed += a.elements;
  return transposed;
}

// A warp's lanes that add into one address in one instruction run one
// after another at the L2; the first few overlap with the rest of the
// kernel's work. The atomic lane sweep (docs/cost-model.md, "Scatter
// traffic"): runs of 2 and 4 equal index values cost 1.1 and 1.3 x a run
// of 1, and from 8 lanes on each more adds the same time.
inline constexpr double kFreeLanes = 3;
inline constexpr double kWarpLanes = 32;

// The exporter's observation of the node's scatter index, or null where it
// made none (or saw an empty index).
const ScatterIndex* observed_index(const Node& n) {
  return n.scatter_index && n.scatter_index->updates > 0 ? &*n.scatter_index : nullptr;
}

// The lanes of one instruction that add into one address: where the
// exporter observed the index's runs (`scatter_index.mean_run`), as many
// consecutive iterations as a run of equal values covers, over the
// consecutive iterations that write distinct elements first (the store's
// contiguous run; none where its address skips iterations, as a reduction
// over keys into a bucket does), at most a warp. 1 without an observation.
double same_address_lanes(const Node& n, const Dep& d, double run) {
  const ScatterIndex* s = observed_index(n);
  if (!s) return 1;
  const double distinct = dep_elements(d) < static_cast<double>(std::max<std::int64_t>(n.numel, 1)) ? 1.0 : std::max(run, 1.0);
  return std::clamp(std::min(s->mean_run, kWarpLanes / distinct), 1.0, kWarpLanes);
}

// The atomic adds into the table element that takes the most, of a store
// of `updates` over runs of `run` elements into a table of `elements`: at
// a uniform spread updates / elements; where the exporter observed the
// node's index (`scatter_index`), its hottest row's share of the index's
// elements, each adding updates / (index elements x run) times into every
// element of its run (a relative-position bias: one bucket takes a third
// of the scores), never less than the uniform figure.
double chain_updates(const Node& n, double updates, double run, std::int64_t elements) {
  const double uniform = updates / static_cast<double>(std::max<std::int64_t>(1, elements));
  const ScatterIndex* s = observed_index(n);
  if (!s) return uniform;
  return std::max(uniform, static_cast<double>(s->max_row_updates) * updates / (static_cast<double>(s->updates) * run));
}

// --- an embedding bag's walk (docs/cost-model.md, "Embedding bags") ---

// ATen's embedding-bag forward kernels (sum, mean and max) run 1,024 blocks
// of 32 x 8 threads whatever the sizes: each warp takes one 32-column chunk
// of one bag at a time, over bags x ceil(columns / 32) chunks in a
// grid-stride loop, and sums that bag's rows one after another, each row's
// load waiting on its index's.
inline constexpr double kBagWarps = 1024.0 * 8.0;
inline constexpr double kBagChunkColumns = 32.0;

struct BagWalk {
  double chunks_per_warp = 0;  // the chunks the busiest warp takes
  double steps = 0;            // its lookups: chunks x the mean bag's indices
};

// The walk of an embedding bag's forward call (is_bag_forward), from its
// operands: the 2-D table (its largest read of a floating dtype), the
// indices (its largest integer read) and the offsets (its other integer
// read, one per bag). nullopt for any other node, or one whose operands do
// not read as such.
std::optional<BagWalk> bag_walk(const Graph& g, const Node& n) {
  if (!is_bag_forward(n)) return std::nullopt;
  const Dep* table = largest_read(g, n, false);
  const Dep* indices = largest_read(g, n, true);
  const Dep* offsets = indices ? largest_read(g, n, true, indices->buf) : nullptr;
  if (!table || !offsets) return std::nullopt;
  const Buffer &t = g.buffers[table->buf], &i = g.buffers[indices->buf], &o = g.buffers[offsets->buf];
  const std::int64_t index_elem = dtype_size(i.dtype), offset_elem = dtype_size(o.dtype);
  if (t.shape.size() != 2 || t.shape[1] <= 0 || index_elem <= 0 || offset_elem <= 0 || o.bytes < offset_elem) return std::nullopt;
  const double bags = static_cast<double>(o.bytes / offset_elem), lookups = static_cast<double>(i.bytes / index_elem);
  BagWalk w;
  w.chunks_per_warp = std::ceil(bags * std::ceil(static_cast<double>(t.shape[1]) / kBagChunkColumns) / kBagWarps);
  w.steps = w.chunks_per_warp * lookups / bags;
  return w;
}

ScatterTraffic scatter_traffic(const Graph& g, const Node& n, std::int64_t l2_bytes) {
  ScatterTraffic t;
  std::vector<BufId> tables, working_set;
  double sectors = 0, atomic_lines = 0;
  auto once = [](std::vector<BufId>& v, BufId b) {
    if (std::find(v.begin(), v.end(), b) == v.end()) v.push_back(b);
  };
  for (const Dep& d : n.writes) {
    if (d.kind != DepKind::Memory || !is_indirect_index(d.index)) continue;
    const Buffer& b = g.buffers[d.buf];
    const std::int64_t elem = dtype_size(b.dtype);
    if (elem == 0 || b.bytes <= 0) continue;
    once(tables, d.buf);
    if (b.mutation_of != kNone) once(tables, b.mutation_of);
    once(working_set, d.buf);
    // One update per iteration of the store: per output row of a reduction
    // (after it), per element where the dep spans the reduction too.
    const double numel = static_cast<double>(std::max<std::int64_t>(n.numel, 1));
    const double updates = dep_elements(d) > numel ? numel * static_cast<double>(std::max<std::int64_t>(n.rnumel, 1)) : numel;
    const double run = static_cast<double>(indirect_run(d)), run_bytes = run * static_cast<double>(elem);
    const double runs = updates / run;
    sectors += runs * std::ceil(run_bytes / 32);
    atomic_lines += runs * std::ceil(run_bytes / 128) * 128;
    const double chain = chain_updates(n, updates, run, b.bytes / elem);
    t.chain_updates = std::max(t.chain_updates, chain);
    t.lane_chain = std::max(t.lane_chain, chain * std::max(0.0, same_address_lanes(n, d, run) - kFreeLanes));
    t.wide_chain = std::max(t.wide_chain, chain * std::min(run, 8.0) / 8.0);
  }
  // The rest: the tables' own deps (left out of `memory`), gathers (rows
  // of other tables, read more than once where they touch more than the
  // table holds) and the plain operands it streams.
  double gather_traffic = 0, gather_excess = 0, streamed = 0, streamed_out = 0;
  auto is_table = [&](BufId b) { return std::find(tables.begin(), tables.end(), b) != tables.end(); };
  for (const auto* deps : {&n.reads, &n.writes})
    for (const Dep& d : *deps) {
      if (d.is_weak()) continue;
      if (is_table(d.buf)) {
        t.table_bytes = checked_add(t.table_bytes, dep_priced_bytes(g, d), "node \"" + n.name + "\" bytes");
      } else if (d.kind == DepKind::Memory && is_indirect_index(d.index)) {
        const double touched = static_cast<double>(dtype_size(g.buffers[d.buf].dtype)) * dep_elements(d);
        once(working_set, d.buf);
        gather_traffic += touched;
        gather_excess += std::max(0.0, touched - static_cast<double>(g.buffers[d.buf].bytes));
      } else {
        const double bytes = static_cast<double>(dep_priced_bytes(g, d));
        streamed += bytes;
        if (deps == &n.writes) streamed_out += bytes;
      }
    }
  // A line of a table comes back after the node has touched the rest of
  // its tables and, in proportion, streamed its plain operands: the L2
  // (least recently used) keeps it when that reuse distance fits.
  double table_bytes = 0;
  for (BufId b : working_set) table_bytes += static_cast<double>(g.buffers[b].bytes);
  const double table_traffic = atomic_lines + gather_traffic;
  const double reuse_distance = table_traffic > 0 ? table_bytes * (1.0 + streamed / table_traffic) : 0.0;
  const double miss = l2_bytes > 0 && reuse_distance > static_cast<double>(l2_bytes) ? 1.0 - static_cast<double>(l2_bytes) / reuse_distance : 0.0;
  t.l2_sectors = (1.0 - miss) * sectors;
  t.spill_bytes = miss * (2.0 * atomic_lines + gather_excess);
  // What it writes to DRAM while it runs: the missed lines of its atomics
  // going back, and its streamed outputs but the share the L2 can still
  // hold dirty when it ends.
  t.written_bytes = miss * atomic_lines + std::max(0.0, streamed_out - static_cast<double>(std::max<std::int64_t>(l2_bytes, 0)));
  return t;
}

}  // namespace

std::int64_t moved_bytes(const Graph& g, const Node& n, KernelClass kernel, const CostFacts& facts) {
  // The buffer whose deps are priced at most at `bound` bytes (kNone: none).
  BufId bounded = kNone;
  std::int64_t bound = 0;
  if (kernel == KernelClass::Indexing) {
    if (const Dep* table = largest_read(g, n, false)) {
      const Buffer& t = g.buffers[table->buf];
      bounded = table->buf;
      bound = output_bytes(g, n, facts);
      const Dep* index = largest_read(g, n, true);
      const std::int64_t index_elem = index ? dtype_size(g.buffers[index->buf].dtype) : 0;
      if (is_bag_forward(n) && index && index_elem > 0 && !t.shape.empty() && t.shape[0] > 0) {
        // A bag sums its rows: it reads one row per index, more than it writes.
        const std::int64_t rows = g.buffers[index->buf].bytes / index_elem, row_bytes = t.bytes / t.shape[0];
        bound = row_bytes > 0 && rows > t.bytes / row_bytes ? t.bytes : rows * row_bytes;
      }
    }
  } else if (kernel == KernelClass::Scatter) {
    for (BufId o : n.outputs)
      if (const BufId target = g.buffers[o].mutation_of; target != kNone) bounded = target;
    if (bounded != kNone)
      if (const Dep* updates = largest_read(g, n, false, bounded)) bound = updates->bytes;
  }
  std::int64_t total = 0;
  for (const auto* deps : {&n.reads, &n.writes})
    for (const Dep& d : *deps) {
      if (d.is_weak()) continue;
      const Buffer& b = g.buffers[d.buf];
      std::int64_t bytes = b.layout == Layout::MultiOutput ? facts.multi_output_bytes[d.buf] : dep_priced_bytes(g, d);
      if (bounded != kNone && (d.buf == bounded || b.mutation_of == bounded)) bytes = std::min(bytes, bound);
      total = checked_add(total, bytes, "node \"" + n.name + "\" bytes");
    }
  return total;
}

CostFacts cost_facts(const Graph& g) {
  CostFacts facts;
  facts.compute_dtype.assign(g.nodes.size(), std::string_view());
  facts.multi_output_bytes.assign(g.buffers.size(), 0);
  // A multi-output kernel's dtype is its first item's: the item nodes read
  // its multi-output buffer.
  std::vector<std::string_view> first_item_dtype(g.buffers.size());
  facts.first_item_shape.assign(g.buffers.size(), nullptr);
  for (const Node& n : g.nodes)
    for (BufId o : n.outputs)
      if (g.buffers[o].layout == Layout::MultiOutputItem)
        for (const Dep& d : n.reads) {
          if (g.buffers[d.buf].layout != Layout::MultiOutput) continue;
          if (first_item_dtype[d.buf].empty() && !g.buffers[o].dtype.empty()) first_item_dtype[d.buf] = g.buffers[o].dtype;
          if (!facts.first_item_shape[d.buf] && !g.buffers[o].shape.empty()) facts.first_item_shape[d.buf] = &g.buffers[o].shape;
        }
  // An item node reads its tuple once however many items it names.
  for (const Node& n : g.nodes) {
    std::int64_t items = 0;
    for (BufId o : n.outputs)
      if (g.buffers[o].layout == Layout::MultiOutputItem) items = saturating_add(items, g.buffers[o].bytes);
    if (items == 0) continue;
    for (const Dep& d : n.reads)
      if (g.buffers[d.buf].layout == Layout::MultiOutput) {
        facts.multi_output_bytes[d.buf] = saturating_add(facts.multi_output_bytes[d.buf], items);
        break;
      }
  }
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.nodes[v];
    std::string_view dtype;
    for (BufId b : n.outputs)
      if (dtype.empty()) dtype = !g.buffers[b].dtype.empty() ? std::string_view(g.buffers[b].dtype) : first_item_dtype[b];
    for (const Dep& d : n.reads)
      if (dtype.empty() && !d.is_weak()) dtype = g.buffers[d.buf].dtype;
    facts.compute_dtype[v] = dtype.empty() ? std::string_view("f32") : dtype;
  }
  return facts;
}

std::int64_t priced_bytes(const Graph& g, const Node& n) {
  std::int64_t total = 0;
  for (const auto* deps : {&n.reads, &n.writes})
    for (const Dep& d : *deps)
      if (!d.is_weak()) total = checked_add(total, dep_priced_bytes(g, d), "node \"" + n.name + "\" bytes");
  return total;
}

LawFeatures law_features(const Graph& g, NodeId v, const CostFacts& facts, const HardwareProfile& hw, const FeatureOptions& opts) {
  const Node& n = g.nodes[v];
  const KernelClass kernel = classify_kernel(g, n);
  const KernelClass c = base_class(kernel);
  const bool convolution = c == KernelClass::Convolution || c == KernelClass::ConvolutionBackward;
  // cuDNN runs f32 convolutions on TF32 tensor cores by default
  // (torch.backends.cudnn.allow_tf32 = True), unlike f32 matmuls.
  std::string_view dtype = facts.compute_dtype[v];
  if (dtype == "f32" && convolution && hw.flops_per_s.count("tf32")) dtype = "tf32";
  // ATen's own depthwise kernels (conv_depthwise2d) multiply on the CUDA
  // cores in f32 whatever the storage dtype: their flops run at the f32
  // peak, a bf16 call's as an f32 one's (priced at the bf16 tensor-core
  // peak, the depthwise sweep's bf16 calls read 0.52-0.66 of their time and
  // its f32 ones 1.10-1.72).
  const bool native_depthwise = kernel == KernelClass::DepthwiseConvolutionNative || kernel == KernelClass::DepthwiseConvolutionBackwardNative;
  if (native_depthwise) dtype = "f32";
  const double peak = peak_flops_for_dtype(hw, dtype);
  LawFeatures f{};
  set(f, LawTerm::Fixed, 1.0);
  if (n.flops && *n.flops > 0) {
    const double compute = static_cast<double>(*n.flops) / peak * 1e6;
    set(f, low_precision(dtype) ? LawTerm::Compute : LawTerm::Fp32Compute, compute);
    if (dtype == "f32" || dtype == "tf32") set(f, LawTerm::Fp32Fixed, 1.0);
  }
  const AttentionCall* attention = attention_call(n, c);
  const std::int64_t bias_bytes = attention ? attention_bias_bytes(g, n, *attention) : 0;
  const bool moves_bytes = kernel == KernelClass::Indexing || kernel == KernelClass::Scatter || kernel == KernelClass::ExternMemory;
  std::int64_t bytes = (moves_bytes ? moved_bytes(g, n, kernel, facts) : priced_bytes(g, n)) - bias_bytes;
  set(f, LawTerm::AttentionBiasMemory, static_cast<double>(bias_bytes) / hw.dram_bytes_per_s * 1e6);
  if (kernel == KernelClass::TritonScatter || kernel == KernelClass::TritonScatterReduction) {
    const ScatterTraffic t = scatter_traffic(g, n, opts.l2_bytes);
    bytes = std::max<std::int64_t>(0, bytes - t.table_bytes);
    set(f, LawTerm::AtomicSectors, t.l2_sectors * 1e-6);  // the factor: ps per sector
    set(f, LawTerm::IndirectSpill, t.spill_bytes / hw.dram_bytes_per_s * 1e6);
    set(f, LawTerm::WriteBack, t.written_bytes / hw.dram_bytes_per_s * 1e6);
    set(f, LawTerm::AtomicChain, t.chain_updates * 1e-3);
    set(f, LawTerm::AtomicLanes, t.lane_chain * 1e-3);
    set(f, LawTerm::AtomicWideChain, t.wide_chain * 1e-3);
  }
  const std::int64_t cached = opts.l2_bytes > 0 ? std::min(bytes, opts.l2_bytes) : bytes;
  set(f, LawTerm::Memory, static_cast<double>(cached) / hw.dram_bytes_per_s * 1e6);
  set(f, LawTerm::Spill, static_cast<double>(bytes - cached) / hw.dram_bytes_per_s * 1e6);
  if (attention && attention->dropout_p > 0) set(f, LawTerm::AttentionDropout, attention_score_us(*attention, hw));
  // f32 calls run the memory-efficient kernels, whose bias costs several
  // times what cuDNN's 16-bit kernels pay per score: a term of their own.
  if (attention && attention->bias)
    set(f, low_precision(dtype) ? LawTerm::AttentionBias : LawTerm::AttentionBiasF32, attention_score_us(*attention, hw));
  const std::optional<AttentionCall> inferred = attention ? std::nullopt : attention_from_items(n, c, facts);
  if (const AttentionCall* a = attention ? attention : inferred ? &*inferred : nullptr) {
    set(f, low_precision(dtype) ? LawTerm::AttentionScore : LawTerm::AttentionScoreF32, attention_score_us(*a, hw));
    const double compute = get(f, LawTerm::Compute) + get(f, LawTerm::Fp32Compute);
    set(f, LawTerm::AttentionWave, attention_idle_wave_us(*a, c, compute, opts.sm_count, !low_precision(dtype)));
  }
  set(f, LawTerm::OnlineSoftmax, online_softmax_us(n, c, hw));
  if (unaligned_rows(g, n, c)) set(f, LawTerm::UnalignedRows, get(f, LawTerm::Memory) + get(f, LawTerm::Spill));
  if (kernel == KernelClass::Indexing)
    if (const std::optional<BagWalk> walk = bag_walk(g, n)) {
      set(f, LawTerm::BagSteps, walk->steps * 1e-3);            // the factor: ns per lookup
      set(f, LawTerm::BagChunks, walk->chunks_per_warp * 1e-3);  // ns per chunk
    }
  if (kernel == KernelClass::TritonStridedReduction)
    if (const double transposed = transposed_elements(g, n); transposed > 0) {
      set(f, LawTerm::TransposedElements, transposed * 1e-6);  // the factor: ps per element
      // Each kept row's program walks the reduction one step after another.
      set(f, LawTerm::TransposedWalk, static_cast<double>(std::max<std::int64_t>(n.rnumel, 1)) * 1e-3);  // ns per step
    }
  const auto shape = implicit_gemm_shape(g, n, c);
  if (!shape) return f;
  // cuBLAS's f32 (SIMT) kernels split a long K over the idle SMs of a
  // small grid (a graph layer's weight gradient: 256 x 128 over 50,000
  // nodes); its tensor-core kernels' tiles are short enough not to.
  const std::int64_t wave_k = opts.sm_count > 0 && kernel == KernelClass::GemmF32 ? split_k_loop(*shape, shape->k, opts.sm_count) : shape->k;
  const double wave = opts.sm_count > 0 ? wave_us(*shape, wave_k, opts.sm_count, peak) : 0.0;
  if (c == KernelClass::Gemm) {
    set(f, LawTerm::Wave, wave);
    // Rows off 16-byte boundaries keep cuBLAS from its vectorized (TMA)
    // kernels: 8- and 4-byte rows run its align-2/4 kernels, rows of an odd
    // element count its align-1 ones, slower again (docs/cost-model.md,
    // "Law terms": the H200's pitch sweep).
    const std::int64_t alignment = matmul_row_alignment(g, n, dtype_size(dtype));
    if (alignment < 16) set(f, LawTerm::Unaligned, get(f, LawTerm::Compute));
    if (alignment < 4) set(f, LawTerm::OddPitch, get(f, LawTerm::Compute));
    return f;
  }
  if (!convolution) return f;
  set(f, LawTerm::Fixed, static_cast<double>(shape->products));
  set(f, LawTerm::Wave, wave);
  if (opts.sm_count > 0)
    if (const std::int64_t k = narrow_channel_k(*shape)) {
      const bool patch = n.convolution && windows_do_not_overlap(*n.convolution);
      set(f, patch ? LawTerm::NarrowPatch : LawTerm::Narrow, wave_us(*shape, k, opts.sm_count, peak));
    }
  if (!n.convolution) return f;  // no geometry: the dense terms alone
  const ConvolutionGeometry& geo = *n.convolution;
  const double dram_us_per_byte = 1e6 / hw.dram_bytes_per_s;
  set(f, LawTerm::LayoutConvert, 2.0 * static_cast<double>(layout_copy_bytes(g, n, geo)) * dram_us_per_byte);
  // ATen's own depthwise kernels read NCHW as it is: no cuDNN transposes.
  if (shape->memory_format == MemoryFormat::Contiguous && !shape->one_by_one && !native_depthwise) {
    set(f, LawTerm::Transpose, operand_bytes(geo, *shape) * dram_us_per_byte);
    set(f, LawTerm::TransposeFixed, static_cast<double>(shape->products));
    set(f, LawTerm::NarrowInputPixels, narrow_input_pixels(geo) * 1e-6);  // the factor: ps per pixel
  }
  // A 1x1 convolution runs as a matmul (cuBLAS): its own floor instead of
  // the implicit-GEMM kernels'.
  if (shape->one_by_one) {
    set(f, LawTerm::PointwiseConvFixed, get(f, LawTerm::Fixed));
    set(f, LawTerm::Fixed, 0.0);
  }
  // Their threads load one element at a time, each output's taps one after
  // another: what they move costs per element, not per byte (the sweep's
  // bf16 and f32 calls of one shape take the same time), so their bytes
  // are priced as f32 elements.
  if (native_depthwise && shape->elem_bytes > 0)
    for (LawTerm t : {LawTerm::Memory, LawTerm::Spill})
      set(f, t, get(f, t) * 4.0 / static_cast<double>(shape->elem_bytes));
  if (shape->family != ConvFamily::Dense && opts.route_conv_families) route_family(f, *shape, wave);
  return f;
}

}  // namespace schedlab
