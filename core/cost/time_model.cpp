// The laws and host terms of a calibrated time model.
#include "core/cost/time_model.h"

#include <algorithm>
#include <optional>

namespace schedlab {

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

double sustained_us(const TimeModel& m, KernelClass c, double law_time_us, double tensor_flops) {
  if (!(m.sustained_tensor_flops_per_s > 0) || !(tensor_flops > 0) || base_class(c) != KernelClass::Gemm) return law_time_us;
  return std::max(law_time_us, tensor_flops / m.sustained_tensor_flops_per_s * 1e6);
}

bool class_needs_law(KernelClass c) { return c != KernelClass::Collective && c != KernelClass::None; }

KernelClass law_class(const TimeModel& m, KernelClass c) {
  while (!m.laws.count(c))
    if (const std::optional<KernelClass> parent = law_parent(c)) c = *parent;
    else break;
  return c;
}

const ClassLaw& law_of(const TimeModel& m, KernelClass c) { return m.laws.at(law_class(m, c)); }

namespace {

// The host term of a node's one call, by its class; none for class None.
std::optional<HostTerm> call_term(KernelClass c) {
  switch (base_class(c)) {
    case KernelClass::None: return std::nullopt;
    case KernelClass::TritonPointwise:
    case KernelClass::TritonReduction: return HostTerm::Kernel;
    case KernelClass::Convolution: return HostTerm::Convolution;
    case KernelClass::ConvolutionBackward: return HostTerm::ConvolutionBackward;
    case KernelClass::Attention:
    case KernelClass::AttentionBackward: return HostTerm::Attention;
    case KernelClass::Collective: return HostTerm::Collective;
    default: return HostTerm::Extern;
  }
}

double& count_of(HostCounts& counts, HostTerm t) { return counts[static_cast<std::size_t>(t)]; }

}  // namespace

double host_us_per_node(const TimeModel& m, KernelClass c) {
  const std::optional<HostTerm> t = call_term(c);
  return t ? m.*kHostTermInfo[static_cast<std::size_t>(*t)].member : 0.0;
}

HostCounts call_host_counts(const Graph& g) {
  HostCounts counts{};
  count_of(counts, HostTerm::Call) = 1;
  count_of(counts, HostTerm::Input) = static_cast<double>(g.num_inputs);
  return counts;
}

HostCounts node_host_counts(const Node& n, KernelClass c, int collective_kernels) {
  HostCounts counts{};
  if (const std::optional<HostTerm> t = call_term(c)) count_of(counts, *t) = 1;
  else if (n.kind == NodeKind::Extern) count_of(counts, HostTerm::Item) = 1;  // is_item_node, c being None
  if (c == KernelClass::Collective) count_of(counts, HostTerm::CollectiveKernel) = collective_kernels;
  return counts;
}

double host_us(const TimeModel& m, const HostCounts& counts) {
  double us = 0;
  for (const HostTermInfo& t : kHostTermInfo)
    if (const double n = counts[static_cast<std::size_t>(t.term)]; n != 0) us += n * (m.*t.member);
  return us;
}

bool is_item_node(const Graph& g, const Node& n) { return n.kind == NodeKind::Extern && classify_node(g, n) == KernelClass::None; }

TimeModel at_host_speed(const TimeModel& m, double probe_us) {
  if (!(m.host_probe_us > 0) || !(probe_us > 0)) return m;
  const double f = probe_us / m.host_probe_us;
  TimeModel out = m;
  for (const HostTermInfo& t : kHostTermInfo) out.*t.member = m.*t.member * f;
  out.host_call_epilogue_us = m.host_call_epilogue_us * f;
  out.host_probe_us = probe_us;
  return out;
}

}  // namespace schedlab
