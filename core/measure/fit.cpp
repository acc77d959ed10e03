// The fit in its four jobs: the samples (per node, features and measured
// time), the laws (per-class non-negative least squares, borrowing), the
// launch path (launch gaps from the measured timelines, the host terms by
// non-negative least squares of the calls' host times) and the profile
// assembled from them.
#include "core/measure/fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/memory/methods.h"
#include "core/predict/predicted.h"
#include "core/sim/simulate.h"
#include "core/util/error.h"

namespace schedlab {
namespace {

constexpr double kBackToBackUs = 10.0;
constexpr std::int64_t kHopperL2Bytes = std::int64_t{50} << 20;  // H100 SXM and H200  // a longer idle stretch means the host was late, not the GPU

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Solves a[0..k)[0..k) x = b by Gaussian elimination with partial
// pivoting; false when singular to working precision (a pivot below 1e-12 of
// the largest diagonal entry: a column nearly a combination of the others).
bool solve_dense(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  const std::size_t k = b.size();
  double diagonal = 0;
  for (std::size_t i = 0; i < k; ++i) diagonal = std::max(diagonal, std::abs(a[i][i]));
  const double tiny = 1e-12 * diagonal;
  for (std::size_t i = 0; i < k; ++i) {
    std::size_t pivot = i;
    for (std::size_t r = i + 1; r < k; ++r)
      if (std::abs(a[r][i]) > std::abs(a[pivot][i])) pivot = r;
    if (!(std::abs(a[pivot][i]) > tiny)) return false;
    std::swap(a[i], a[pivot]);
    std::swap(b[i], b[pivot]);
    for (std::size_t r = 0; r < k; ++r) {
      if (r == i) continue;
      const double f = a[r][i] / a[i][i];
      if (f == 0) continue;
      for (std::size_t c = i; c < k; ++c) a[r][c] -= f * a[i][c];
      b[r] -= f * b[i];
    }
  }
  x.assign(k, 0.0);
  for (std::size_t i = 0; i < k; ++i) x[i] = b[i] / a[i][i];
  for (double v : x)
    if (!std::isfinite(v)) return false;
  return true;
}

// Whether a law has a factor on a term that grows with the node: any term
// but the per-kernel constants (their profile fields end in `_us`).
bool scales_with_size(const ClassLaw& law) {
  for (const LawTermInfo& t : kLawTermInfo) {
    const bool constant = t.field.size() > 3 && t.field.substr(t.field.size() - 3) == "_us";
    if (!constant && law.factor[static_cast<std::size_t>(t.term)] > 0) return true;
  }
  return false;
}

}  // namespace

std::vector<double> nonnegative_least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                                              const std::vector<double>& w) {
  const std::size_t k = rows.empty() ? 0 : rows.front().size();
  // The weighted normal equations G x = h; a column of zeros stays at 0.
  std::vector<std::vector<double>> gram(k, std::vector<double>(k, 0.0));
  std::vector<double> h(k, 0.0);
  for (std::size_t s = 0; s < rows.size(); ++s)
    for (std::size_t i = 0; i < k; ++i) {
      if (rows[s][i] == 0) continue;
      h[i] += w[s] * rows[s][i] * y[s];
      for (std::size_t j = 0; j < k; ++j) gram[i][j] += w[s] * rows[s][i] * rows[s][j];
    }
  double scale = 0;
  for (std::size_t i = 0; i < k; ++i) scale = std::max(scale, std::abs(h[i]));
  const double tolerance = 1e-12 * std::max(scale, 1e-300);
  std::vector<double> x(k, 0.0);
  std::vector<bool> passive(k, false), dependent(k, false);
  // Solves the unconstrained problem on the passive set.
  auto solve_passive = [&](std::vector<double>& z) {
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < k; ++i)
      if (passive[i]) idx.push_back(i);
    std::vector<std::vector<double>> a(idx.size(), std::vector<double>(idx.size()));
    std::vector<double> b(idx.size()), sol;
    for (std::size_t r = 0; r < idx.size(); ++r) {
      b[r] = h[idx[r]];
      for (std::size_t c = 0; c < idx.size(); ++c) a[r][c] = gram[idx[r]][idx[c]];
    }
    z.assign(k, 0.0);
    if (!solve_dense(std::move(a), std::move(b), sol)) return false;
    for (std::size_t r = 0; r < idx.size(); ++r) z[idx[r]] = sol[r];
    return true;
  };
  for (std::size_t outer = 0; outer < 4 * k + 4; ++outer) {
    // The gradient of the (negated) objective; the most promising zero
    // coefficient joins the passive set.
    std::size_t best = k;
    double best_gradient = tolerance;
    for (std::size_t i = 0; i < k; ++i) {
      if (passive[i] || dependent[i] || gram[i][i] == 0) continue;
      double g = h[i];
      for (std::size_t j = 0; j < k; ++j) g -= gram[i][j] * x[j];
      if (g > best_gradient) best_gradient = g, best = i;
    }
    if (best == k) break;
    passive[best] = true;
    for (std::size_t inner = 0; inner < 4 * k + 4; ++inner) {
      std::vector<double> z;
      if (!solve_passive(z)) {  // a column dependent on the passive ones adds nothing: leave it out
        passive[best] = false;
        dependent[best] = true;
        break;
      }
      bool feasible = true;
      for (std::size_t i = 0; i < k; ++i) feasible = feasible && (!passive[i] || z[i] > 0);
      if (feasible) {
        x = z;
        break;
      }
      // Step toward z until the first passive coefficient reaches 0.
      double alpha = 1.0;
      for (std::size_t i = 0; i < k; ++i)
        if (passive[i] && z[i] <= 0) alpha = std::min(alpha, x[i] / (x[i] - z[i]));
      for (std::size_t i = 0; i < k; ++i) {
        if (!passive[i]) continue;
        x[i] += alpha * (z[i] - x[i]);
        if (x[i] <= 1e-15 * std::max(1.0, std::abs(z[i]))) {
          x[i] = 0;
          passive[i] = false;
        }
      }
    }
  }
  return x;
}

Order order_as_run(const Graph& g) { return reorder_for_peak_memory(g, g.baseline_order(), default_memory_methods()).order(); }

std::vector<NodeSample> node_samples(const MeasuredCase& c, const HardwareProfile& base, int sm_count, std::int64_t l2_bytes) {
  const Graph& g = c.graph;
  const CostFacts facts = cost_facts(g);
  std::vector<NodeSample> per_node(g.nodes.size());
  for (const MeasuredKernel& k : c.measured.kernels) {
    if (k.node.empty()) continue;
    NodeSample& s = per_node[g.find_node(k.node)];
    s.measured_us += k.duration_us;
    ++s.kernels;
  }
  std::vector<NodeSample> out;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    NodeSample& s = per_node[v];
    s.cls = classify_kernel(g, g.nodes[v]);
    if (s.kernels == 0 || !class_needs_law(s.cls)) continue;
    s.node = v;
    s.features = law_features(g, v, facts, base, {sm_count, l2_bytes, true});
    out.push_back(s);
  }
  return out;
}

ClassLaw fit_class_law(const std::vector<NodeSample>& samples, const ClassLaw* sibling, const std::vector<LawTerm>& sibling_terms,
                       const ClassLaw* parent) {
  ClassLaw law;
  if (samples.empty()) return law;
  // The base terms (core/cost/law_terms.def: time per launch, per flop,
  // per byte) are fitted, but for a non-required one that too few of a
  // finer class's nodes exercise: that takes its law parent's factor. A
  // term for a specific effect that too few of the class's nodes exercise
  // takes the sibling's factor (0 without one). Either share comes off the
  // measured times.
  std::vector<std::size_t> fitted;
  for (std::size_t t = 0; t < kLawTerms; ++t) {
    if (sibling && std::find(sibling_terms.begin(), sibling_terms.end(), static_cast<LawTerm>(t)) != sibling_terms.end()) {
      law.factor[t] = sibling->factor[t];
      continue;
    }
    int support = 0;
    for (const NodeSample& s : samples) support += s.features[t] != 0 ? 1 : 0;
    if (parent && kLawTermInfo[t].base && !kLawTermInfo[t].required && support < kMinTermSupport) law.factor[t] = parent->factor[t];
    else if (kLawTermInfo[t].base || support >= kMinTermSupport) fitted.push_back(t);
    else if (sibling) law.factor[t] = sibling->factor[t];
  }
  std::vector<std::vector<double>> rows;
  std::vector<double> y, w;
  for (const NodeSample& s : samples) {
    std::vector<double> row;
    for (std::size_t t : fitted) row.push_back(s.features[t]);
    rows.push_back(std::move(row));
    y.push_back(s.measured_us - law_us(law, s.features));
    w.push_back(1.0 / std::max(s.measured_us, 1e-3));
  }
  const std::vector<double> x = nonnegative_least_squares(rows, y, w);
  for (std::size_t i = 0; i < fitted.size(); ++i) law.factor[fitted[i]] = x[i];
  double kernels = 0;
  for (const NodeSample& s : samples) kernels += s.kernels;
  law.kernels_per_node = kernels / static_cast<double>(samples.size());
  return law;
}

MeasuredGpu measured_gpu(const std::vector<MeasuredCase>& cases) {
  MeasuredGpu gpu;
  for (const MeasuredCase& c : cases) {
    gpu.sm_count = std::max(gpu.sm_count, c.measured.sm_count);
    gpu.l2_bytes = std::max(gpu.l2_bytes, c.measured.l2_cache_bytes);
  }
  if (gpu.l2_bytes == 0) gpu.l2_bytes = kHopperL2Bytes;
  return gpu;
}

std::vector<KernelClass> all_fine_classes() {
  std::vector<KernelClass> out;
  for (std::size_t c = 0; c < kKernelClasses; ++c)
    if (is_fine_class(static_cast<KernelClass>(c))) out.push_back(static_cast<KernelClass>(c));
  return out;
}

std::vector<KernelClass> default_own_law_classes() {
  std::vector<KernelClass> out;
  for (KernelClass c : all_fine_classes())
    if (law_parent(c) != base_class(c)) out.push_back(c);
  return out;
}

std::map<KernelClass, std::vector<NodeSample>> gather_samples(const std::vector<MeasuredCase>& cases, const HardwareProfile& base,
                                                              const MeasuredGpu& gpu, const std::vector<KernelClass>& own_laws,
                                                              const std::vector<MeasuredCase>& class_sweeps) {
  std::vector<NodeSample> samples, swept;
  std::map<KernelClass, int> count;
  for (const MeasuredCase& c : cases)
    for (NodeSample& s : node_samples(c, base, gpu.sm_count, gpu.l2_bytes)) {
      ++count[s.cls];
      samples.push_back(std::move(s));
    }
  for (const MeasuredCase& c : class_sweeps)
    for (NodeSample& s : node_samples(c, base, gpu.sm_count, gpu.l2_bytes)) {
      ++count[s.cls];
      swept.push_back(std::move(s));
    }
  auto asked = [&](KernelClass c) { return is_fine_class(c) && std::find(own_laws.begin(), own_laws.end(), c) != own_laws.end(); };
  // A Triton scatter behind a reduction (an embedding's or a position
  // bias's gradient) is measured too rarely for a law of its own: asked for
  // beside the scatter's, the two share one law fitted on both (their
  // atomics and their tables' traffic are the same terms).
  const KernelClass scatter = KernelClass::TritonScatter, scatter_reduction = KernelClass::TritonScatterReduction;
  const bool pooled_scatters = asked(scatter) && asked(scatter_reduction) && count[scatter_reduction] < kMinTermSupport &&
                               count[scatter] + count[scatter_reduction] >= kMinTermSupport;
  auto has_own_law = [&](KernelClass c) {
    if (pooled_scatters && (c == scatter || c == scatter_reduction)) return true;
    return asked(c) && count[c] >= kMinTermSupport;
  };
  // A finer class fits its own law when asked to and measured enough;
  // else its samples fit the law that prices it, in the order measured.
  auto laws_fitted = [&](KernelClass c) -> std::vector<KernelClass> {
    if (pooled_scatters && (c == scatter || c == scatter_reduction)) return {scatter, scatter_reduction};
    while (is_fine_class(c) && !has_own_law(c)) c = *law_parent(c);
    return {c};
  };
  std::map<KernelClass, std::vector<NodeSample>> by_class;
  for (NodeSample& s : samples) {
    const std::vector<KernelClass> fitted = laws_fitted(s.cls);
    // A finer class of a family (a strided reduction, a grouped
    // convolution) with a law of its own still fits its family's law,
    // which is then the law it was without finer laws: a finer law refines
    // its nodes' prices and moves no other node's. The extern family's
    // finer classes, never priced by `extern` (fitted on sorts), are not
    // its samples.
    const KernelClass family = base_class(s.cls);
    if (fitted.front() != family && family != KernelClass::Extern) by_class[family].push_back(s);
    for (KernelClass c : fitted) by_class[c].push_back(s);
  }
  // A class sweep's nodes fit only the laws it was designed for: its other
  // kernels (fills, casts, the plain kernels around the swept ones, on
  // random data) are not the real models' mix the other laws price. Those
  // are the finer laws, and the attention laws: no sweep runs an attention
  // call but to measure it (the attention grid sweep).
  for (const NodeSample& s : swept) {
    if (has_own_law(s.cls))
      for (KernelClass c : laws_fitted(s.cls)) by_class[c].push_back(s);
    else if (s.cls == KernelClass::Attention || s.cls == KernelClass::AttentionBackward)
      by_class[s.cls].push_back(s);
  }
  return by_class;
}

LawFit fit_laws(const std::map<KernelClass, std::vector<NodeSample>>& by_class, const HardwareProfile* sibling,
                const std::vector<LawTerm>& sibling_terms) {
  LawFit fit;
  // cuDNN's transpose of a narrow NCHW input (`narrow_input_pixel_factor`)
  // is one kernel at one rate in every convolution class: fitted on
  // convolution_backward, whose nodes exercise it (the weight gradients of
  // RGB stems and waveforms), and pinned in the other convolution classes,
  // whose few such nodes would fit it to whatever else they cost.
  std::optional<double> narrow_input_rate;
  auto fit_class = [&](KernelClass cls, const std::vector<NodeSample>& samples) {
    const ClassLaw* sibling_law = nullptr;
    if (sibling && sibling->time_model)
      if (auto it = sibling->time_model->laws.find(cls); it != sibling->time_model->laws.end()) sibling_law = &it->second;
    std::optional<ClassLaw> donor;
    std::vector<LawTerm> pinned = sibling_terms;
    const KernelClass family = base_class(cls);
    if (narrow_input_rate && cls != KernelClass::ConvolutionBackward &&
        (family == KernelClass::Convolution || family == KernelClass::ConvolutionBackward)) {
      donor = sibling_law ? *sibling_law : ClassLaw{};
      donor->factor[static_cast<std::size_t>(LawTerm::NarrowInputPixels)] = *narrow_input_rate;
      pinned.push_back(LawTerm::NarrowInputPixels);
      sibling_law = &*donor;
    }
    // A finer class's parent is fitted first (kernel_class.h: every class
    // comes after its law parent), on the family's other nodes. A law two
    // classes share (the pooled Triton scatters, whose parents differ)
    // fits its terms on their nodes alone, as one law.
    const ClassLaw* parent_law = nullptr;
    const bool own_nodes = std::all_of(samples.begin(), samples.end(), [&](const NodeSample& s) { return s.cls == cls; });
    if (is_fine_class(cls) && own_nodes)
      if (auto it = fit.laws.find(*law_parent(cls)); it != fit.laws.end()) parent_law = &it->second;
    fit.laws[cls] = fit_class_law(samples, sibling_law, pinned, parent_law);
    // Each sample once: one of a finer class with its own law also fits its family's.
    for (const NodeSample& s : samples) fit.samples += s.cls == cls || !by_class.count(s.cls) ? 1 : 0;
  };
  // Two or three nodes do not make a law: a class with fewer than
  // kMinTermSupport measured nodes borrows a related class's law fitted on
  // more (below), and is fitted on its few only when none is.
  if (auto it = by_class.find(KernelClass::ConvolutionBackward); it != by_class.end() && static_cast<int>(it->second.size()) >= kMinTermSupport) {
    fit_class(it->first, it->second);
    narrow_input_rate = fit.laws[KernelClass::ConvolutionBackward][LawTerm::NarrowInputPixels];
  }
  for (auto& [cls, samples] : by_class)
    if (static_cast<int>(samples.size()) >= kMinTermSupport && !fit.laws.count(cls)) fit_class(cls, samples);
  const std::pair<KernelClass, KernelClass> borrow[] = {{KernelClass::AttentionBackward, KernelClass::Attention},
                                                        {KernelClass::ConvolutionBackward, KernelClass::Convolution},
                                                        {KernelClass::TritonPointwise, KernelClass::TritonReduction},
                                                        {KernelClass::TritonReduction, KernelClass::TritonPointwise},
                                                        {KernelClass::Gemm, KernelClass::Convolution},
                                                        {KernelClass::Attention, KernelClass::Gemm},
                                                        {KernelClass::Convolution, KernelClass::Gemm},
                                                        {KernelClass::Copy, KernelClass::TritonPointwise},
                                                        {KernelClass::Extern, KernelClass::TritonPointwise}};
  // Twice: a borrowed law may be borrowed again (convolution_backward <- convolution <- gemm).
  auto borrow_laws = [&] {
    for (int round = 0; round < 2; ++round)
      for (auto [cls, from] : borrow)
        if (!fit.laws.count(cls) && fit.laws.count(from)) {
          fit.laws[cls] = fit.laws[from];
          fit.borrowed.push_back(std::string(to_string(cls)) + "<-" + std::string(to_string(from)));
        }
  };
  borrow_laws();
  for (auto& [cls, samples] : by_class)
    if (!fit.laws.count(cls)) fit_class(cls, samples);  // a few nodes, and no related law to borrow
  borrow_laws();
  // A finer law whose fit keeps no term that grows with the node (only
  // per-kernel constants, `*_us`: every node the same time whatever it
  // moves or computes) cannot carry past the sizes it was fitted on: its
  // class keeps its law parent's.
  for (auto it = fit.laws.begin(); it != fit.laws.end();)
    it = is_fine_class(it->first) && !scales_with_size(it->second) ? fit.laws.erase(it) : std::next(it);
  for (KernelClass c : kKernelClassesWithLaws)
    if (class_needs_law(c) && !fit.laws.count(c))
      throw Error("fit: no measured kernel of class \"" + std::string(to_string(c)) + "\" nor of a class it could borrow from");
  return fit;
}

std::vector<KernelClass> carry_class_laws(const HardwareProfile& from, const std::vector<KernelClass>& classes, HardwareProfile& into) {
  std::vector<KernelClass> carried;
  if (!from.time_model || !into.time_model) return carried;
  auto& laws = into.time_model->laws;
  for (KernelClass c : classes) {
    const auto it = from.time_model->laws.find(c);
    if (!is_fine_class(c) || laws.count(c) || it == from.time_model->laws.end()) continue;
    laws[c] = it->second;
    carried.push_back(c);
  }
  return carried;
}

namespace {

// The host terms of one call, node by node in the order it ran: the call's
// own (its inputs' asserts; the call itself is kept apart) and each node's
// with the buffers it allocated afresh, and whether the node launches a
// kernel (an item does not).
struct CallHostCounts {
  HostCounts inputs{};
  std::vector<HostCounts> nodes;  // in order_as_run
  std::vector<char> launches;     // the same order
};

CallHostCounts call_host_counts_by_node(const MeasuredCase& c) {
  const Graph& g = c.graph;
  CallHostCounts out;
  out.inputs = call_host_counts(g);
  out.inputs[static_cast<std::size_t>(HostTerm::Call)] = 0;
  // The device kernels each collective call launched, as measured (the
  // fake process group's all_gather copies once per rank).
  std::vector<int> collective_kernels(g.nodes.size(), 0);
  for (const MeasuredKernel& k : c.measured.kernels)
    if (!k.node.empty()) ++collective_kernels[g.find_node(k.node)];
  const Order order = order_as_run(g);
  // The buffers the wrapper allocated afresh in the order the call ran (as
  // the accuracy report predicts it): memory as executed's, the others
  // reused a dead buffer.
  const std::vector<int> fresh = fresh_allocations_per_node(g, estimate_memory_as_executed(g, order));
  for (NodeId v : order) {
    const KernelClass cls = classify_node(g, g.nodes[v]);
    HostCounts node = node_host_counts(g.nodes[v], cls, cls == KernelClass::Collective ? collective_kernels[v] : 0);
    node[static_cast<std::size_t>(HostTerm::Allocation)] += fresh[v];
    out.nodes.push_back(node);
    out.launches.push_back(cls != KernelClass::None);
  }
  return out;
}

double priced(const HostCounts& counts, const HostCounts& us_per) {
  double us = 0;
  for (std::size_t t = 0; t < kHostTerms; ++t) us += counts[t] * us_per[t];
  return us;
}

// The measured lead of a device-bound call: from the call's start (its
// CUDA start event) to its first kernel, plus the end event's small wait
// after the last; nullopt unless the profiled timeline shows the device
// busy throughout (no idle gap of kBackToBackUs or more between kernels)
// for longer than the whole call took the host, so that the end event
// waited for the device and not for the host's return.
std::optional<double> device_bound_lead_us(const MeasuredGraph& m) {
  if (m.kernels.empty() || !m.host_time_us) return std::nullopt;
  std::vector<std::pair<double, double>> spans;
  for (const MeasuredKernel& k : m.kernels) spans.emplace_back(k.start_us, k.start_us + k.duration_us);
  std::sort(spans.begin(), spans.end());
  double end = spans.front().second;
  for (const auto& [s, e] : spans) {
    if (s - end >= kBackToBackUs) return std::nullopt;
    end = std::max(end, e);
  }
  const double span = end - spans.front().first;
  if (span <= *m.host_time_us || m.wall_time_us <= span) return std::nullopt;
  return m.wall_time_us - span;
}

}  // namespace

double fit_call_epilogue(const std::vector<MeasuredCase>& cases, const HostCounts& us_per, double host_probe_us, double launch_gap_us) {
  const double call_us = us_per[static_cast<std::size_t>(HostTerm::Call)];
  std::vector<double> prologues;
  for (const MeasuredCase& c : cases) {
    const std::optional<double> lead = device_bound_lead_us(c.measured);
    if (!lead) continue;
    const double speed = c.measured.host_probe_us && host_probe_us > 0 ? host_probe_us / *c.measured.host_probe_us : 1.0;
    // What the host did before the first launch besides the call's own
    // prologue: the inputs' asserts, then every node up to the first that
    // launches a kernel (items launch none), that one included; and the
    // device's launch gap before that kernel starts (the simulation adds it).
    const CallHostCounts counts = call_host_counts_by_node(c);
    double before = priced(counts.inputs, us_per) + launch_gap_us;
    for (std::size_t i = 0; i < counts.nodes.size(); ++i) {
      before += priced(counts.nodes[i], us_per);
      if (counts.launches[i]) break;
    }
    prologues.push_back(*lead * speed - before);
  }
  if (prologues.empty()) return 0;
  return call_us - std::clamp(median(prologues), 0.0, call_us);
}

HostCounts measured_host_counts(const MeasuredCase& c) {
  const CallHostCounts by_node = call_host_counts_by_node(c);
  HostCounts counts = by_node.inputs;
  counts[static_cast<std::size_t>(HostTerm::Call)] = 1;
  for (const HostCounts& node : by_node.nodes)
    for (std::size_t t = 0; t < kHostTerms; ++t) counts[t] += node[t];
  return counts;
}

LaunchPathFit fit_launch_path(const std::vector<MeasuredCase>& cases, const std::vector<MeasuredCase>& launch_sweeps,
                              const std::optional<WrapperItemCost>& item) {
  LaunchPathFit fit;
  // Launch gaps from the timelines; the CUDA-graph gap from the graph-mode walls.
  std::vector<double> gaps, graph_gaps;
  for (const MeasuredCase& c : cases) {
    const auto& ks = c.measured.kernels;
    for (std::size_t i = 1; i < ks.size(); ++i) {
      if (ks[i].stream != ks[i - 1].stream) continue;
      const double gap = ks[i].start_us - (ks[i - 1].start_us + ks[i - 1].duration_us);
      if (gap >= 0 && gap < kBackToBackUs) gaps.push_back(gap);
    }
    if (c.measured.wall_time_us_cudagraphs && !ks.empty())
      graph_gaps.push_back(std::max(0.0, *c.measured.wall_time_us_cudagraphs - c.measured.kernel_time_us) / static_cast<double>(ks.size()));
  }
  fit.launch_gap_us = median(gaps);
  fit.cudagraph_gap_us = graph_gaps.empty() ? fit.launch_gap_us : median(graph_gaps);

  // The host: non-negative least squares of the call's host time (else its
  // wall time, which a launch-bound call follows) on what its wrapper does,
  // one column per host term (core/cost/host_terms.def: the call itself,
  // its graph inputs, Triton launches, other extern calls, convolution
  // calls, convolution backward calls, attention calls, collective calls,
  // the device kernels the collective calls launched, the multi-output
  // items and the buffers allocated afresh), weighted by relative error; the
  // items' column fixed where the wrapper's item was timed alone. The hosts
  // the files were measured on ran at different speeds (the zoo's host
  // probe, 84-101 µs over the checked-in graphs' samples): each call's host
  // time is first restated at the median probe of the files that record
  // one, which the profile keeps as its host speed.
  std::vector<double> probes;
  for (const MeasuredCase& c : cases)
    if (c.measured.host_probe_us) probes.push_back(*c.measured.host_probe_us);
  fit.host_probe_us = median(probes);
  constexpr auto kItem = static_cast<std::size_t>(HostTerm::Item);
  const std::optional<double> item_us =
      item ? std::optional<double>(fit.host_probe_us > 0 ? item->item_us * fit.host_probe_us / median(item->host_probe_us) : item->item_us)
           : std::nullopt;
  std::vector<std::vector<double>> calls;
  std::vector<double> host_us, host_weight;
  for (const MeasuredCase& c : cases) {
    HostCounts counts = measured_host_counts(c);
    const double speed = c.measured.host_probe_us && fit.host_probe_us > 0 ? fit.host_probe_us / *c.measured.host_probe_us : 1.0;
    const double t = c.measured.host_time_us.value_or(c.measured.wall_time_us) * speed;
    // Weighted by the whole call's time: the items' fixed part is still
    // part of what the relative error is of.
    host_weight.push_back(1.0 / std::pow(std::max(t, 1e-3), 2.0));
    host_us.push_back(item_us ? t - counts[kItem] * *item_us : t);
    if (item_us) counts[kItem] = 0;
    calls.emplace_back(counts.begin(), counts.end());
  }
  const std::vector<double> host = nonnegative_least_squares(calls, host_us, host_weight);
  for (std::size_t t = 0; t < kHostTerms; ++t) fit.host[t] = host[t];
  if (item_us) fit.host[kItem] = *item_us;
  fit.host_call_epilogue_us = fit_call_epilogue(launch_sweeps.empty() ? cases : launch_sweeps, fit.host, fit.host_probe_us, fit.launch_gap_us);
  return fit;
}

ProfileFit fit_profile(const std::vector<MeasuredCase>& cases, const HardwareProfile& base, const std::string& name,
                       const HardwareProfile* sibling, const std::vector<KernelClass>& own_laws,
                       const std::vector<MeasuredCase>& class_sweeps, const std::vector<LawTerm>& sibling_terms,
                       const std::vector<MeasuredCase>& launch_sweeps, const std::optional<WrapperItemCost>& item) {
  if (cases.empty()) throw OptionError("fit: no measured graphs");
  std::vector<MeasuredCase> all = cases;
  all.insert(all.end(), class_sweeps.begin(), class_sweeps.end());
  const MeasuredGpu gpu = measured_gpu(all);
  LawFit laws = fit_laws(gather_samples(cases, base, gpu, own_laws, class_sweeps), sibling, sibling_terms);
  const LaunchPathFit path = fit_launch_path(cases, launch_sweeps, item);
  TimeModel tm;
  tm.laws = std::move(laws.laws);
  tm.samples = static_cast<int>(laws.samples);
  tm.sm_count = gpu.sm_count;
  tm.l2_bytes = gpu.l2_bytes;
  tm.launch_gap_us = path.launch_gap_us;
  tm.cudagraph_gap_us = path.cudagraph_gap_us;
  tm.host_probe_us = path.host_probe_us;
  tm.host_call_epilogue_us = path.host_call_epilogue_us;
  for (const HostTermInfo& t : kHostTermInfo) tm.*t.member = path.host[static_cast<std::size_t>(t.term)];
  ProfileFit fit;
  fit.cases = cases.size();
  fit.samples = laws.samples;
  fit.borrowed = std::move(laws.borrowed);
  fit.profile = base;
  fit.profile.name = name;
  fit.profile.kernel_launch_us = 0;  // the time model's fixed terms hold it
  fit.profile.time_model = std::move(tm);
  return fit;
}

}  // namespace schedlab
