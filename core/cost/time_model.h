// core/cost — the calibrated time model: what a node's kernels take on a
// real GPU, and what the host and the launch path add (docs/cost-model.md,
// "Calibrated time model").
//
// Contract: one law per kernel class (core/cost/kernel_class.h), fitted to
// measurements (core/measure/fit.h): a node's time is the sum over the
// law's terms of factor × feature, each feature a general effect read off
// the graph alone (core/cost/law_features.h), never a table of kernels:
//
//   fixed               the launch-to-finish floor, per kernel set (a
//                       convolution backward computing both gradients runs two)
//   compute             flops at the tensor-core peak of the node's dtype (tf32
//                       for f32 convolutions, which cuDNN runs on TF32 cores)
//   fp32_compute        flops at the f32 peak (f32 matmuls and attention run on
//                       the CUDA cores)
//   memory, spill       bytes at DRAM bandwidth, up to the L2 size and beyond it
//   wave, narrow        the tile terms of matmuls and dense convolutions
//                       (core/cost/implicit_gemm.h)
//   fp32_fixed          per node with flops that computes in f32 or tf32
//   unaligned           the compute of a 16-bit matmul with an operand whose row
//                       pitch is not a multiple of 16 bytes (cuBLAS falls back to
//                       its align-1 kernels)
//   layout_convert      convolution operands not in the memory format cuDNN runs
//                       in, copied first (read and written)
//   transpose, transpose_fixed   a non-1x1 convolution in NCHW: cuDNN transposes
//                       its operands for the tensor-core kernels
//   pointwise_conv_fixed the floor of a 1x1 unpadded stride-1 convolution,
//                       instead of `fixed` (cuBLAS runs it as a matmul)
//   depthwise_*, grouped_*  depthwise and grouped convolutions run their own
//                       kernels: their fixed, memory and compute (grouped: wave)
//                       terms replace the dense ones
//   narrow_patch        the narrow term of a convolution whose windows do not
//                       overlap (stride >= window: ViT's and ConvNeXt's patch
//                       stems): no input is read by two outputs, so cuDNN's
//                       padded-channel kernels get no reuse from the cache
//                       and run slower per padded K than overlapping stems
//   online_softmax      the elements of a Triton reduction computing an online
//                       softmax (reduction_types: online_softmax_reduce): two
//                       exponentials per element rescale its running sum
//   attention_dropout   an attention call with dropout: one f32 op per unmasked
//                       score at the f32 peak (its kernels draw one Philox
//                       random number per score, work the matmul flops omit)
//   attention_bias      an attention call with an additive mask or bias
//                       (attn_mask as a tensor: Hugging Face's causal and
//                       padding masks, ALiBi): one f32 op per score at the
//                       f32 peak (the kernels load and add a bias element per
//                       score, work the matmul flops omit)
//   bias_memory         the bytes of that bias at DRAM speed, apart from the
//                       memory and spill terms (which then price the query,
//                       key, value and output alone): a mask broadcast over
//                       heads is read once per head, from L2, where the
//                       query and key tiles stream from DRAM
//   unaligned_rows      the bytes (memory and spill, at DRAM speed) of a Triton
//                       reduction whose rows do not start on 16-byte
//                       boundaries (a full-size operand's row, rnumel
//                       elements, is not a multiple of 16 bytes: GPT-2's
//                       50,257-logit vocabulary in bf16): Triton cannot prove
//                       the alignment its vectorized loads and stores need
//
// i.e. an achieved efficiency that grows with size (each term one row of
// core/cost/law_terms.def). Collectives keep the NCCL-style model of the
// profile's link figures. The host (Inductor's Python wrapper; each figure
// one row of core/cost/host_terms.def) pays `host_us_per_kernel` per Triton launch, `host_us_per_extern`
// per extern call, `host_us_per_collective` per functional collective call
// (c10d's Python and dispatch; waits cost nothing) and
// `host_us_per_collective_kernel` per device kernel such a call launches from
// the host (the fake process group's all_gather: one copy per rank),
// `host_us_per_item` per item node (an item of a multi-output extern's result:
// the wrapper's tuple index and its size, stride and alignment asserts),
// `host_us_per_input` per graph input (the call unpacks every argument and
// asserts its size and stride), `host_us_per_allocation` per buffer the
// wrapper allocates afresh (its `empty_strided`; a buffer that reuses a dead
// one's storage, as memory as executed finds, costs nothing of it),
// `host_us_per_convolution` and `host_us_per_convolution_backward` per cuDNN
// convolution call (ATen's cuDNN path sets up descriptors and finds its
// execution plan on the host at every call; a backward does it for both
// gradients), and `host_call_us` per call; the device leaves `launch_gap_us`
// between back-to-back kernels; under CUDA graphs the host pays nothing and
// the gap is `cudagraph_gap_us`.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <utility>
#include <vector>
#include <string_view>

#include "core/cost/kernel_class.h"
#include "core/graph/graph.h"

namespace schedlab {

// The terms of a law, in the order of their factors in ClassLaw: one row
// each in core/cost/law_terms.def.
enum class LawTerm : std::uint8_t {
#define SCHEDLAB_LAW_TERM(name, field, required, base, conv_family, summary) name,
#include "core/cost/law_terms.def"
#undef SCHEDLAB_LAW_TERM
};
inline constexpr std::size_t kLawTerms = 0
#define SCHEDLAB_LAW_TERM(name, field, required, base, conv_family, summary) +1
#include "core/cost/law_terms.def"
#undef SCHEDLAB_LAW_TERM
    ;

struct LawTermInfo {
  LawTerm term;
  std::string_view field;    // the factor's name in a profile (time_model.laws.CLASS.FIELD)
  bool required;             // a profile must give it (the first laws had only these)
  bool base;                 // the fit always fits it, however few nodes exercise it
  bool conv_family;          // it prices depthwise or grouped convolutions
  std::string_view summary;  // its feature, in a few words
};
// Every term, in LawTerm order (core/cost/law_terms.def): the profile reader
// and writer, the fit, the embedded profiles and the docs all walk this one table.
inline constexpr std::array<LawTermInfo, kLawTerms> kLawTermInfo = {{
#define SCHEDLAB_LAW_TERM(name, field, required, base, conv_family, summary) {LawTerm::name, field, required, base, conv_family, summary},
#include "core/cost/law_terms.def"
#undef SCHEDLAB_LAW_TERM
}};
inline const LawTermInfo& law_term_info(LawTerm t) { return kLawTermInfo[static_cast<std::size_t>(t)]; }

using LawFeatures = std::array<double, kLawTerms>;  // a node's feature per term (µs, or counts for the fixed terms)

struct ClassLaw {
  std::array<double, kLawTerms> factor{};  // per term; 0: the term plays no part
  double kernels_per_node = 1;              // launches per node (attention backward launches several)
  // Whether depthwise and grouped convolutions have their own terms. Profiles
  // written before those terms existed price them with the dense ones.
  bool routes_conv_families = true;

  double& operator[](LawTerm t) { return factor[static_cast<std::size_t>(t)]; }
  double operator[](LawTerm t) const { return factor[static_cast<std::size_t>(t)]; }
};

// A law's time for a node of these features (µs).
double law_us(const ClassLaw& law, const LawFeatures& features);

// The term of a profile's law field name (kLawTermInfo), or nullopt.
std::optional<LawTerm> law_term_of_field(std::string_view field);
// Whether a term belongs to the depthwise or grouped convolution families.
inline bool is_conv_family_term(LawTerm t) { return law_term_info(t).conv_family; }
// A law from the factors a profile gives (term, value). Profiles written
// before a term existed read as they did: without `fp32_compute_factor`, f32
// compute takes `compute_factor`; without `narrow_patch_factor`, patch
// convolutions take `narrow_factor`; without any depthwise or grouped term,
// those convolutions are priced by the dense terms.
ClassLaw law_from_factors(double kernels_per_node, const std::vector<std::pair<LawTerm, double>>& given);

// The host terms (core/cost/host_terms.def): what Inductor's Python wrapper
// pays on the host, per call, per graph input, per node of a kind, per fresh
// allocation.
enum class HostTerm : std::uint8_t {
#define SCHEDLAB_HOST_TERM(name, field, per, when_absent, summary) name,
#include "core/cost/host_terms.def"
#undef SCHEDLAB_HOST_TERM
};
inline constexpr std::size_t kHostTerms = 0
#define SCHEDLAB_HOST_TERM(name, field, per, when_absent, summary) +1
#include "core/cost/host_terms.def"
#undef SCHEDLAB_HOST_TERM
    ;
// What a host term is paid per.
enum class HostTermPer : std::uint8_t { Call, Input, Node, Allocation };
// What a profile written before the term reads as.
enum class WhenAbsent : std::uint8_t { Required, Zero, Extern };
// A count per host term, in HostTerm order.
using HostCounts = std::array<double, kHostTerms>;

struct TimeModel {
  std::map<KernelClass, ClassLaw> laws;  // every class of kKernelClassesWithLaws but Collective
  double launch_gap_us = 0;              // device idle between back-to-back kernels, default mode
  double cudagraph_gap_us = 0;           // the same inside a CUDA graph
  // One figure per host term (µs), named as in profiles.
#define SCHEDLAB_HOST_TERM(name, field, per, when_absent, summary) double field = 0;
#include "core/cost/host_terms.def"
#undef SCHEDLAB_HOST_TERM
  // The host speed the host figures above hold at: the zoo's host probe (a
  // fixed pure-Python loop, docs/schedmeasured-1.md `host_probe_wall_us`)
  // in µs on the machines the fit measured; 0 when not known.
  double host_probe_us = 0;
  // Of `host_call_us`, what the host spends after the call's last launch:
  // the wrapper's epilogue (its frees and return) and what a timing harness
  // around the call adds. A kernel waits only for the rest (the prologue);
  // the call's host time is the same either way. 0 (profiles written before
  // it): all of it before the first launch.
  double host_call_epilogue_us = 0;
  int samples = 0;                       // kernels the fit saw (0: written by hand)
  int sm_count = 0;                      // SMs the tile terms quantize over (0: no tile terms)
  std::int64_t l2_bytes = 0;             // L2 cache size splitting the memory term (0: no split)
  // The dense 16-bit tensor-core rate a long matmul sustains at the GPU's
  // power limit (FLOP/s; 0: none). A 16-bit matmul is priced at least its
  // FLOPs at this rate: the laws, fitted on the zoo's products of at most
  // ~150 µs, extrapolate to ~920 TFLOP/s, while products of 0.1-0.7 TFLOP
  // in real steps run at ~790 (docs/cost-model.md, "Sustained rate";
  // scripts/fit-sustained-rate.py fits it from measured steps).
  double sustained_tensor_flops_per_s = 0;
};

// The calibrated time of a node of class `c` whose law gives `law_time_us`:
// at least its FLOPs at the sustained tensor-core rate when it is a 16-bit
// matmul (`tensor_flops` > 0: FLOPs priced at the tensor-core peak).
double sustained_us(const TimeModel& m, KernelClass c, double law_time_us, double tensor_flops);

// The law that prices class `c` under model `m`: c's own where the model
// has one, else its law parent's (kernel_class.h law_parent), up the chain.
const ClassLaw& law_of(const TimeModel& m, KernelClass c);
// The class whose law that is.
KernelClass law_class(const TimeModel& m, KernelClass c);

// A TimeModel member (an alias: nvcc's host pass reads `double TimeModel::*m`
// back with parentheses that -Wparentheses refuses).
using TimeModelMember = double TimeModel::*;

struct HostTermInfo {
  HostTerm term;
  std::string_view field;      // the TimeModel member's and the profile field's name
  TimeModelMember member;
  HostTermPer per;
  WhenAbsent when_absent;
  std::string_view summary;    // what the host pays it for
};
// Every host term, in HostTerm order (core/cost/host_terms.def): the
// profile reader and writer, at_host_speed, the fit, the launch path, the
// embedded profiles and the docs all walk this one table.
inline constexpr std::array<HostTermInfo, kHostTerms> kHostTermInfo = {{
#define SCHEDLAB_HOST_TERM(name, field, per, when_absent, summary) \
  {HostTerm::name, #field, &TimeModel::field, HostTermPer::per, WhenAbsent::when_absent, summary},
#include "core/cost/host_terms.def"
#undef SCHEDLAB_HOST_TERM
}};

// The host's counts of a call, per host term: the call itself and its graph inputs.
HostCounts call_host_counts(const Graph& g);
// What node `n` (of class `c`, classify_node) makes the host do in default
// mode, per host term: its one call, by class (a Triton launch, a cuDNN
// convolution or its backward, a collective call, any other extern; however
// many GPU kernels it starts), an item of a multi-output result (the
// wrapper's statement for it; waits and nops nothing), and
// `collective_kernels`, the device kernels a collective call launches
// itself (the fake process group's copies; 0 elsewhere).
HostCounts node_host_counts(const Node& n, KernelClass c, int collective_kernels);
// The host's µs for these counts: each count times its term's figure, summed in row order.
double host_us(const TimeModel& m, const HostCounts& counts);

// The classes a time model must have a law for.
bool class_needs_law(KernelClass c);

// The range of host probes a file or an option may state, in µs (the probe
// is 2000 Python multiply-adds: tens to hundreds of µs on real hosts); the
// bounds keep at_host_speed's factor finite.
inline constexpr double kMinHostProbeUs = 1e-3, kMaxHostProbeUs = 1e6;
inline bool valid_host_probe_us(double us) { return us >= kMinHostProbeUs && us <= kMaxHostProbeUs; }

// The model with its host figures restated for a host whose probe reads
// `probe_us`: every per-call, per-launch and per-item host cost scales by
// probe_us / m.host_probe_us (the wrapper's work is Python and dispatch,
// which run at the host's speed; the GPU's figures stay). Unchanged when
// either probe is unknown (0).
TimeModel at_host_speed(const TimeModel& m, double probe_us);

// The host's cost of launching one node of class `c` in default mode: one
// call per node (a Triton launch or an extern op), however many GPU kernels
// that call starts (items aside: class None costs nothing here).
double host_us_per_node(const TimeModel& m, KernelClass c);

// An item node: an extern without a kernel that only names an item of a
// multi-output extern's result (or a scalar read out of one; class None).
// The host pays `host_us_per_item` for it.
bool is_item_node(const Graph& g, const Node& n);

// Read and written with the profile (core/io/profiles.h).

}  // namespace schedlab
