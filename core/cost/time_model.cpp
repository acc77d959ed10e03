// The classes a calibrated time model has a law for.
#include "core/cost/time_model.h"

namespace schedlab {

const std::array<LawTermInfo, kLawTerms> kLawTermInfo = {{
    {LawTerm::Fixed, "fixed_us", true},
    {LawTerm::Compute, "compute_factor", true},
    {LawTerm::Fp32Compute, "fp32_compute_factor", false},
    {LawTerm::Memory, "memory_factor", true},
    {LawTerm::Spill, "spill_factor", false},
    {LawTerm::Wave, "wave_factor", false},
    {LawTerm::Narrow, "narrow_factor", false},
    {LawTerm::Fp32Fixed, "fp32_fixed_us", false},
    {LawTerm::Unaligned, "unaligned_factor", false},
    {LawTerm::LayoutConvert, "layout_convert_factor", false},
    {LawTerm::Transpose, "transpose_factor", false},
    {LawTerm::TransposeFixed, "transpose_fixed_us", false},
    {LawTerm::PointwiseConvFixed, "pointwise_conv_fixed_us", false},
    {LawTerm::DepthwiseFixed, "depthwise_fixed_us", false},
    {LawTerm::DepthwiseMemory, "depthwise_memory_factor", false},
    {LawTerm::DepthwiseCompute, "depthwise_compute_factor", false},
    {LawTerm::GroupedFixed, "grouped_fixed_us", false},
    {LawTerm::GroupedMemory, "grouped_memory_factor", false},
    {LawTerm::GroupedWave, "grouped_wave_factor", false},
    {LawTerm::AttentionDropout, "dropout_factor", false},
    {LawTerm::NarrowPatch, "narrow_patch_factor", false},
    {LawTerm::OnlineSoftmax, "online_softmax_factor", false},
    {LawTerm::UnalignedRows, "unaligned_rows_factor", false},
    {LawTerm::AttentionBias, "bias_factor", false},
    {LawTerm::AttentionBiasMemory, "bias_memory_factor", false},
}};

double law_us(const ClassLaw& law, const LawFeatures& features) {
  double us = 0;
  for (std::size_t t = 0; t < kLawTerms; ++t) us += law.factor[t] * features[t];
  return us;
}

std::optional<LawTerm> law_term_of_field(std::string_view field) {
  for (const LawTermInfo& t : kLawTermInfo)
    if (t.field == field) return t.term;
  return std::nullopt;
}

bool is_conv_family_term(LawTerm t) {
  switch (t) {
    case LawTerm::DepthwiseFixed:
    case LawTerm::DepthwiseMemory:
    case LawTerm::DepthwiseCompute:
    case LawTerm::GroupedFixed:
    case LawTerm::GroupedMemory:
    case LawTerm::GroupedWave: return true;
    default: return false;
  }
}

ClassLaw law_from_factors(double kernels_per_node, const std::vector<std::pair<LawTerm, double>>& given) {
  ClassLaw law;
  law.kernels_per_node = kernels_per_node;
  bool fp32_compute = false, families = false, patch = false;
  for (const auto& [term, value] : given) {
    law[term] = value;
    fp32_compute = fp32_compute || term == LawTerm::Fp32Compute;
    families = families || is_conv_family_term(term);
    patch = patch || term == LawTerm::NarrowPatch;
  }
  if (!fp32_compute) law[LawTerm::Fp32Compute] = law[LawTerm::Compute];
  if (!patch) law[LawTerm::NarrowPatch] = law[LawTerm::Narrow];
  law.routes_conv_families = families;
  return law;
}

bool class_needs_law(KernelClass c) { return c != KernelClass::Collective && c != KernelClass::None; }

double host_us_per_node(const TimeModel& m, KernelClass c) {
  switch (c) {
    case KernelClass::None: return 0.0;
    case KernelClass::TritonPointwise:
    case KernelClass::TritonReduction: return m.host_us_per_kernel;
    case KernelClass::Convolution: return m.host_us_per_convolution;
    case KernelClass::ConvolutionBackward: return m.host_us_per_convolution_backward;
    case KernelClass::Collective: return m.host_us_per_collective;
    default: return m.host_us_per_extern;
  }
}

bool is_item_node(const Graph& g, const Node& n) { return n.kind == NodeKind::Extern && classify_node(g, n) == KernelClass::None; }

TimeModel at_host_speed(const TimeModel& m, double probe_us) {
  if (!(m.host_probe_us > 0) || !(probe_us > 0)) return m;
  const double f = probe_us / m.host_probe_us;
  TimeModel out = m;
  for (double TimeModel::*cost : {&TimeModel::host_us_per_kernel, &TimeModel::host_us_per_extern, &TimeModel::host_us_per_collective,
                                  &TimeModel::host_us_per_collective_kernel, &TimeModel::host_us_per_item, &TimeModel::host_us_per_convolution,
                                  &TimeModel::host_us_per_convolution_backward, &TimeModel::host_call_us,
                                  &TimeModel::host_us_per_input, &TimeModel::host_us_per_allocation})
    out.*cost = m.*cost * f;
  out.host_probe_us = probe_us;
  return out;
}

}  // namespace schedlab
