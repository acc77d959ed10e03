// The fit: per-class non-negative least squares, launch gaps from the
// measured timelines, the host cost by a grid search over simulated walls.
#include "core/measure/fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <dirent.h>
#include <sys/stat.h>

#include "core/io/graph_reader.h"
#include "core/sim/simulate.h"
#include "core/util/error.h"

namespace schedlab {
namespace {

constexpr double kBackToBackUs = 10.0;
constexpr std::int64_t kHopperL2Bytes = std::int64_t{50} << 20;  // H100 SXM and H200  // a longer idle stretch means the host was late, not the GPU

// Least-squares weight of a sample measured at t us: 1/t^power. Kernel laws
// use 1.5, between absolute error (big kernels decide everything) and
// relative error (tiny kernels, mostly launch noise, do).
double weight(double t_us, double power) { return std::pow(std::max(t_us, 1e-3), -power); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// The law's columns: [fixed (x products), compute, memory up to L2, wave,
// narrow, f32, memory beyond L2, multi-output items (the host's only; 0 on
// every kernel sample, so the kernel laws never pick it)].
constexpr int kColumns = 8;
using Coefficients = std::array<double, kColumns>;

double feature(const NodeSample& x, int c) {
  switch (c) {
    case 0: return x.products;
    case 1: return x.compute_us;
    case 2: return x.cached_us;
    case 3: return x.wave_us;
    case 4: return x.narrow_us;
    case 5: return x.fp32;
    case 6: return x.spill_us;
    default: return x.items;
  }
}

// Weighted least squares on the chosen columns; returns false when singular
// or a coefficient is negative. Gaussian elimination (8x8 at most).
bool solve_subset(const std::vector<NodeSample>& s, unsigned mask, double weight_power, Coefficients& coef, double& sse) {
  std::array<int, kColumns> cols{};
  int k = 0;
  for (int c = 0; c < kColumns; ++c)
    if (mask & (1u << c)) cols[k++] = c;
  double a[kColumns][kColumns + 1] = {};
  for (const NodeSample& x : s) {
    const double w = weight(x.measured_us, weight_power);
    for (int i = 0; i < k; ++i) {
      for (int j = 0; j < k; ++j) a[i][j] += w * feature(x, cols[i]) * feature(x, cols[j]);
      a[i][kColumns] += w * feature(x, cols[i]) * x.measured_us;
    }
  }
  for (int i = 0; i < k; ++i) {
    int pivot = i;
    for (int r = i + 1; r < k; ++r)
      if (std::abs(a[r][i]) > std::abs(a[pivot][i])) pivot = r;
    if (std::abs(a[pivot][i]) < 1e-12) return false;
    for (int c = 0; c <= kColumns; ++c) std::swap(a[i][c], a[pivot][c]);
    for (int r = 0; r < k; ++r) {
      if (r == i) continue;
      const double f = a[r][i] / a[i][i];
      for (int c = i; c <= kColumns; ++c) a[r][c] -= f * a[i][c];
    }
  }
  coef = {};
  for (int i = 0; i < k; ++i) coef[cols[i]] = a[i][kColumns] / a[i][i];
  for (double c : coef)
    if (c < 0 || !std::isfinite(c)) return false;
  sse = 0;
  for (const NodeSample& x : s) {
    double pred = 0;
    for (int c = 0; c < kColumns; ++c) pred += coef[c] * feature(x, c);
    sse += (pred - x.measured_us) * (pred - x.measured_us) * weight(x.measured_us, weight_power);
  }
  return true;
}

}  // namespace

namespace {

// POSIX directory walk (std::filesystem is not in every toolchain the CLI
// builds with, WebAssembly included).
void collect_measured(const std::string& dir, std::vector<std::string>& out) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) collect_measured(path, out);
    else if (S_ISREG(st.st_mode) && name.size() > 14 && name.compare(name.size() - 14, 14, ".measured.json") == 0) out.push_back(path);
  }
  closedir(d);
}

}  // namespace

std::vector<std::string> find_measured_files(const std::vector<std::string>& dirs, const std::vector<std::string>& excludes) {
  std::vector<std::string> out;
  for (std::string d : dirs) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    struct stat st {};
    if (stat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw OptionError(d + ": not a folder");
    collect_measured(d, out);
  }
  std::erase_if(out, [&](const std::string& path) {
    for (const std::string& e : excludes)
      if (path.find(e) != std::string::npos) return true;
    return false;
  });
  std::sort(out.begin(), out.end());
  return out;
}

MeasuredCase load_measured_case(const std::string& path, const std::vector<std::string>& graph_dirs) {
  MeasuredCase c;
  c.path = path;
  c.measured = load_measured(read_text_file(path), path);
  std::string post = path.substr(0, path.size() - std::string(".measured.json").size()) + ".post.json";
  const std::string file = post.substr(post.find_last_of('/') + 1);
  struct stat st {};
  for (const std::string& dir : graph_dirs)
    if (stat(post.c_str(), &st) != 0 && stat((dir + "/" + file).c_str(), &st) == 0) post = dir + "/" + file;
  try {
    c.graph = load_graph_file(post);
  } catch (const Error& e) {
    throw Error(path + ": its graph " + post + ": " + e.what());
  }
  check_matches(c.measured, c.graph, path);
  apply_observed_workspaces(c.measured, c.graph);
  return c;
}

std::vector<NodeSample> node_samples(const MeasuredCase& c, const HardwareProfile& base, int sm_count, std::int64_t l2_bytes) {
  const Graph& g = c.graph;
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
    s.cls = classify_node(g, g.nodes[v]);
    if (s.kernels == 0 || !class_needs_law(s.cls)) continue;
    s.node = v;
    RooflineTerms t = roofline_terms(g, g.nodes[v], base, sm_count, l2_bytes);
    s.compute_us = t.compute_us;
    s.memory_us = t.memory_us;
    s.cached_us = t.cached_us;
    s.spill_us = t.spill_us;
    s.wave_us = t.wave_us;
    s.narrow_us = t.narrow_us;
    s.fp32 = t.fp32 ? 1.0 : 0.0;
    s.products = t.products;
    out.push_back(s);
  }
  return out;
}

// Non-negative least squares of the law: the best of the non-empty column
// subsets whose solution is >= 0 (columns that are 0 on every sample are
// singular and drop out).
static Coefficients fit_nnls(const std::vector<NodeSample>& samples, double weight_power) {
  Coefficients best{};
  double best_sse = std::numeric_limits<double>::infinity();
  for (unsigned mask = 1; mask < (1u << kColumns); ++mask) {
    Coefficients coef{};
    double sse = 0;
    if (solve_subset(samples, mask, weight_power, coef, sse) && sse < best_sse) {
      best_sse = sse;
      best = coef;
    }
  }
  return best;
}

ClassLaw fit_class_law(const std::vector<NodeSample>& samples) {
  ClassLaw best;
  if (samples.empty()) return best;
  const Coefficients coef = fit_nnls(samples, 1.5);
  best.fixed_us = coef[0];
  best.compute_factor = coef[1];
  best.memory_factor = coef[2];
  best.wave_factor = coef[3];
  best.narrow_factor = coef[4];
  best.fp32_fixed_us = coef[5];
  best.spill_factor = coef[6];
  double kernels = 0;
  for (const NodeSample& s : samples) kernels += s.kernels;
  best.kernels_per_node = kernels / static_cast<double>(samples.size());
  return best;
}

ProfileFit fit_profile(const std::vector<MeasuredCase>& cases, const HardwareProfile& base, const std::string& name) {
  if (cases.empty()) throw OptionError("fit: no measured graphs");
  ProfileFit fit;
  fit.cases = cases.size();
  // The tile terms quantize over the measured GPU's SMs (the files say how
  // many; the fit refuses a mix of GPUs, so they agree).
  // The same for the L2 size; files that do not say (the exporter wrote it
  // later) are from H100s and H200s, whose L2 is 50 MiB.
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  for (const MeasuredCase& c : cases) {
    sm_count = std::max(sm_count, c.measured.sm_count);
    l2_bytes = std::max(l2_bytes, c.measured.l2_cache_bytes);
  }
  if (l2_bytes == 0) l2_bytes = kHopperL2Bytes;
  std::map<KernelClass, std::vector<NodeSample>> by_class;
  for (const MeasuredCase& c : cases)
    for (NodeSample& s : node_samples(c, base, sm_count, l2_bytes)) by_class[s.cls].push_back(s);
  TimeModel tm;
  tm.sm_count = sm_count;
  tm.l2_bytes = l2_bytes;
  for (auto& [cls, samples] : by_class) {
    tm.laws[cls] = fit_class_law(samples);
    fit.samples += samples.size();
  }
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
  for (int round = 0; round < 2; ++round)
    for (auto [cls, from] : borrow)
      if (!tm.laws.count(cls) && tm.laws.count(from)) {
        tm.laws[cls] = tm.laws[from];
        fit.borrowed.push_back(std::string(to_string(cls)) + "<-" + std::string(to_string(from)));
      }
  for (KernelClass c : kKernelClassesWithLaws)
    if (class_needs_law(c) && !tm.laws.count(c))
      throw Error("fit: no measured kernel of class \"" + std::string(to_string(c)) + "\" nor of a class it could borrow from");
  tm.samples = static_cast<int>(fit.samples);

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
  tm.launch_gap_us = median(gaps);
  tm.cudagraph_gap_us = graph_gaps.empty() ? tm.launch_gap_us : median(graph_gaps);

  // The host: non-negative least squares of the call's host time (else its
  // wall time, which a launch-bound call follows) on its Triton launches,
  // convolution calls, convolution backward calls, collective calls, the
  // device kernels the collective calls launched (measured: the fake process
  // group's all_gather copies once per rank), other extern calls and
  // the multi-output items (`buf3 = buf2[0]` with its size, stride and
  // alignment asserts), weighted by relative error. The counts ride in the
  // kernel law's columns: fixed = the call, compute = Triton launches,
  // memory = other externs, wave = convolutions, narrow = convolution
  // backwards, f32 = collectives, spill = the collectives' kernels, items.
  std::vector<NodeSample> calls;
  for (const MeasuredCase& c : cases) {
    NodeSample s;
    for (const Node& n : c.graph.nodes) {
      switch (classify_node(c.graph, n)) {
        case KernelClass::None: s.items += is_item_node(c.graph, n) ? 1 : 0; break;
        case KernelClass::TritonPointwise:
        case KernelClass::TritonReduction: s.compute_us += 1; break;
        case KernelClass::Convolution: s.wave_us += 1; break;
        case KernelClass::ConvolutionBackward: s.narrow_us += 1; break;
        case KernelClass::Collective: s.fp32 += 1; break;
        default: s.cached_us += 1; break;
      }
    }
    for (const MeasuredKernel& k : c.measured.kernels)
      if (!k.node.empty() && classify_node(c.graph, c.graph.nodes[c.graph.find_node(k.node)]) == KernelClass::Collective) s.spill_us += 1;
    s.measured_us = c.measured.host_time_us.value_or(c.measured.wall_time_us);
    calls.push_back(s);
  }
  const Coefficients host = fit_nnls(calls, 2.0);
  tm.host_call_us = host[0];
  tm.host_us_per_kernel = host[1];
  tm.host_us_per_extern = host[2];
  tm.host_us_per_convolution = host[3];
  tm.host_us_per_convolution_backward = host[4];
  tm.host_us_per_collective = host[5];
  tm.host_us_per_collective_kernel = host[6];
  tm.host_us_per_item = host[7];

  fit.profile = base;
  fit.profile.name = name;
  fit.profile.kernel_launch_us = 0;  // the time model's fixed terms hold it
  fit.profile.time_model = std::move(tm);
  return fit;
}

}  // namespace schedlab
