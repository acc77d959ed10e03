// Measured kernels mapped to a graph's nodes, and the pricing with them.
#include "core/measure/measured_costs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>

#include "core/util/error.h"

namespace schedlab {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// What a node launches, as kernel_token names it; empty: nothing to map
// (waits, views) or a collective (mapped apart).
std::string node_token(KernelClass base) {
  switch (base) {
    case KernelClass::Gemm: return "gemm";
    case KernelClass::Attention:
    case KernelClass::AttentionBackward: return "attention";
    case KernelClass::Convolution:
    case KernelClass::ConvolutionBackward: return "convolution";
    case KernelClass::TritonPointwise:
    case KernelClass::TritonReduction: return "triton";
    case KernelClass::Copy:
    case KernelClass::Extern: return "other";
    default: return {};
  }
}

std::string collective_token(const Node& n) {
  return n.collective ? "nccl:" + std::string(to_string(n.collective->kind)) : "nccl:other";
}

// The class a kernel of `token` runs as, for the contention law where no
// node maps to it.
KernelClass token_class(const std::string& token) {
  if (token == "gemm") return KernelClass::Gemm;
  if (token == "attention") return KernelClass::Attention;
  if (token == "convolution") return KernelClass::Convolution;
  if (token == "triton") return KernelClass::TritonPointwise;
  if (token == "copy" || token == "memset") return KernelClass::Copy;
  return KernelClass::Extern;
}

constexpr std::size_t kMaxAlignmentCells = std::size_t{1} << 26;

// A fitting alignment of `nodes` (tokens, in the graph's order) to `kernels`
// (tokens, by start): kernels before the first mapped one and after the
// last are free, a kernel skipped between costs a little (an extra kernel
// of a library call), a node skipped more (its kernel missing). Returns per
// node the kernel it maps to, or -1.
std::vector<int> align(const std::vector<std::string>& nodes, const std::vector<std::string>& kernels, const std::string& where) {
  const std::size_t n = nodes.size(), m = kernels.size();
  std::vector<int> out(n, -1);
  if (n == 0 || m == 0) return out;
  if ((n + 1) * (m + 1) > kMaxAlignmentCells)
    throw Error(where + ": a step of " + std::to_string(m) + " kernels against " + std::to_string(n) +
                " nodes is too large to align (more than 2^26 cells)");
  constexpr float kNodeSkip = 0.5f, kKernelSkip = 0.01f;
  // score[i][j]: the best alignment of nodes[i..] within kernels[j..];
  // move: 0 match, 1 skip node, 2 skip kernel.
  const std::size_t w = m + 1;
  std::vector<float> next(w, 0.0f), cur(w, 0.0f);
  std::vector<std::uint8_t> move((n + 1) * w, 0);
  for (std::size_t j = 0; j <= m; ++j) next[j] = 0.0f;  // row n: every node placed, the rest free
  for (std::size_t i = n; i-- > 0;) {
    cur[m] = next[m] - kNodeSkip;
    move[i * w + m] = 1;
    const float kernel_skip = i == 0 ? 0.0f : kKernelSkip;
    for (std::size_t j = m; j-- > 0;) {
      float best = next[j] - kNodeSkip;
      std::uint8_t how = 1;
      if (const float skip = cur[j + 1] - kernel_skip; skip > best) best = skip, how = 2;
      if (nodes[i] == kernels[j] && next[j + 1] + 1.0f >= best) best = next[j + 1] + 1.0f, how = 0;
      cur[j] = best;
      move[i * w + j] = how;
    }
    std::swap(cur, next);
  }
  std::size_t i = 0, j = 0;
  while (i < n && j <= m) {
    const std::uint8_t how = move[i * w + j];
    if (how == 0) out[i++] = static_cast<int>(j++);
    else if (how == 1) ++i;
    else ++j;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size();
  return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

// Per kernel of a step, its time overlapped by kernels of the other kind
// (compute beside comm), per class of those: what the contention law takes
// back. Quadratic in the overlapping pairs only (kernels by start).
struct Overlap {
  std::size_t other;  // the kernel beside
  double us;
};
std::vector<std::vector<Overlap>> overlaps(const std::vector<TraceKernel>& step) {
  std::vector<std::vector<Overlap>> out(step.size());
  for (std::size_t a = 0; a < step.size(); ++a) {
    const double end = step[a].start_us + step[a].duration_us;
    for (std::size_t b = a + 1; b < step.size() && step[b].start_us < end; ++b) {
      if (step[a].comm == step[b].comm) continue;
      const double us = std::min(end, step[b].start_us + step[b].duration_us) - step[b].start_us;
      if (us <= 0) continue;
      out[a].push_back({b, us});
      out[b].push_back({a, us});
    }
  }
  return out;
}

std::string quoted(const std::string& name) { return "\"" + (name.size() > 80 ? name.substr(0, 80) + "..." : name) + "\""; }

// The mapped counts, the ratios per class and the mapped nodes, from
// m.measured_us on graph g.
void count_and_ratios(MeasuredCosts& m, const Graph& g, const Pricing& p) {
  m.mapped_compute_nodes = m.mapped_collectives = 0;
  m.classes.clear();
  m.nodes.clear();
  std::map<KernelClass, std::pair<std::vector<double>, std::vector<double>>> ratios;
  for (std::size_t v = 0; v < m.measured_us.size(); ++v) {
    if (m.measured_us[v] < 0) continue;
    m.nodes.push_back({g.nodes[v].name, p.kernel_classes[v], m.measured_us[v], p.calibrated_us[v]});
    const KernelClass c = p.classes[v];
    if (c == KernelClass::Collective) ++m.mapped_collectives;
    else ++m.mapped_compute_nodes;
    auto& [calibrated, pass] = ratios[c];
    if (p.calibrated_us[v] > 0) calibrated.push_back(m.measured_us[v] / p.calibrated_us[v]);
    if (p.pass_us[v] > 0) pass.push_back(m.measured_us[v] / p.pass_us[v]);
  }
  for (auto& [c, r] : ratios) {
    MeasuredClassRatio row;
    row.kernel_class = c;
    for (std::size_t v = 0; v < m.measured_us.size(); ++v) {
      if (p.classes[v] != c) continue;
      if (m.measured_us[v] >= 0) ++row.mapped;
      else ++row.interpolated;
    }
    if (!r.first.empty()) row.ratio = median(r.first);
    if (!r.second.empty()) row.pass_ratio = median(r.second);
    m.classes.push_back(row);
  }
}

}  // namespace

std::string kernel_token(std::string_view kernel_name) {
  const std::string k = lower(kernel_name);
  if (k.rfind("nccl", 0) == 0) {
    if (has(k, "allgather")) return "nccl:all_gather";
    if (has(k, "reducescatter")) return "nccl:reduce_scatter";
    if (has(k, "allreduce")) return "nccl:all_reduce";
    if (has(k, "sendrecv") || has(k, "send") || has(k, "recv")) return "nccl:all_to_all";
    if (has(k, "broadcast")) return "nccl:broadcast";
    return "nccl:other";
  }
  if (k.rfind("triton", 0) == 0) return "triton";
  if (k.rfind("memset", 0) == 0) return "memset";
  if (k.rfind("memcpy", 0) == 0) return "copy";
  if (has(k, "gemm") || has(k, "nvjet") || has(k, "xmma") || has(k, "cublas") || has(k, "matmul") || (has(k, "cutlass") && !has(k, "conv")))
    return "gemm";
  if (has(k, "flash") || has(k, "fmha") || has(k, "attention") || has(k, "sdpa")) return "attention";
  if (has(k, "conv") || has(k, "wgrad") || has(k, "dgrad")) return "convolution";
  return "other";
}

MeasuredCosts map_measured_traces(const Graph& g, const Pricing& p, const std::optional<ContentionLaw>& contention,
                                  const std::vector<MeasuredTrace>& traces) {
  MeasuredCosts out;
  const std::size_t n = g.nodes.size();
  out.measured_us.assign(n, -1.0);
  // The graph's order (the one that ran), split into compute and comm.
  std::vector<NodeId> compute, comm;
  std::vector<std::string> compute_tokens, comm_tokens;
  for (NodeId v : g.baseline_order()) {
    const KernelClass c = p.classes[static_cast<std::size_t>(v)];
    if (c == KernelClass::Collective) {
      comm.push_back(v);
      comm_tokens.push_back(collective_token(g.nodes[static_cast<std::size_t>(v)]));
    } else if (std::string t = node_token(c); !t.empty()) {
      compute.push_back(v);
      compute_tokens.push_back(std::move(t));
    }
  }
  out.compute_nodes = static_cast<int>(compute.size());
  out.collectives = static_cast<int>(comm.size());
  // The rate of one side beside a kernel of class c: the collective's
  // (its priced time alone, `comm_alone_us`, sets the delay's share), or the
  // kernel's.
  const auto slowdown = [&](KernelClass c, bool of_comm, double comm_alone_us) {
    if (!contention) return 1.0;
    const ContentionShare s = contention_share(*contention, c);
    return std::max(1.0, of_comm ? contended_comm_slowdown(s, comm_alone_us) : s.compute_slowdown);
  };
  std::vector<std::vector<double>> samples(n);
  std::vector<double> decontended_per_step, span_per_step;
  for (const MeasuredTrace& t : traces) {
    out.traces.push_back(t.path);
    bool any = false;
    for (const std::vector<TraceKernel>& step : t.steps) {
      ++out.steps;
      std::vector<std::size_t> compute_kernels, comm_kernels;
      std::vector<std::string> ck_tokens, mk_tokens;
      std::vector<std::string> tokens(step.size());
      for (std::size_t k = 0; k < step.size(); ++k) {
        tokens[k] = kernel_token(step[k].name);
        (step[k].comm ? comm_kernels : compute_kernels).push_back(k);
        (step[k].comm ? mk_tokens : ck_tokens).push_back(tokens[k]);
      }
      const std::vector<int> compute_map = align(compute_tokens, ck_tokens, t.path);
      // The graph's collectives are those the step issued while its compute
      // ran: from the end of the compute kernel before its first mapped one
      // to the start of the one after its last (a training step's forward
      // and backward graphs may issue the same collectives).
      double window_start = -1e300, window_end = 1e300;
      if (auto first = std::find_if(compute_map.begin(), compute_map.end(), [](int k) { return k >= 0; }); first != compute_map.end()) {
        const auto last = std::find_if(compute_map.rbegin(), compute_map.rend(), [](int k) { return k >= 0; });
        // (a memset is a library call's own: cuBLAS's before its GEMM)
        for (int k = *first - 1; k >= 0; --k) {
          if (ck_tokens[static_cast<std::size_t>(k)] == "memset") continue;
          const TraceKernel& before = step[compute_kernels[static_cast<std::size_t>(k)]];
          window_start = before.start_us + before.duration_us;
          break;
        }
        for (std::size_t k = static_cast<std::size_t>(*last + 1); k < compute_kernels.size(); ++k) {
          if (ck_tokens[k] == "memset") continue;
          window_end = step[compute_kernels[k]].start_us;
          break;
        }
      }
      std::vector<std::size_t> window_comm;
      std::vector<std::string> window_tokens;
      for (std::size_t i = 0; i < comm_kernels.size(); ++i) {
        const TraceKernel& k = step[comm_kernels[i]];
        if (k.start_us < window_start || k.start_us >= window_end) continue;
        window_comm.push_back(comm_kernels[i]);
        window_tokens.push_back(mk_tokens[i]);
      }
      comm_kernels = std::move(window_comm);
      const std::vector<int> comm_map = align(comm_tokens, window_tokens, t.path);
      // Per kernel: the node it maps to (its first kernel, and the unmapped
      // kernels of the same class after it in its stream).
      std::vector<NodeId> owner(step.size(), kNone);
      const auto own = [&](const std::vector<NodeId>& nodes, const std::vector<int>& map, const std::vector<std::size_t>& kernels) {
        for (std::size_t i = 0; i < nodes.size(); ++i) {
          if (map[i] < 0) continue;
          std::size_t k = static_cast<std::size_t>(map[i]);
          owner[kernels[k]] = nodes[i];
          for (++k; k < kernels.size() && owner[kernels[k]] == kNone && tokens[kernels[k]] == tokens[kernels[k - 1]] &&
                    !(i + 1 < nodes.size() && map[i + 1] == static_cast<int>(k));
               ++k)
            owner[kernels[k]] = nodes[i];
        }
      };
      own(compute, compute_map, compute_kernels);
      own(comm, comm_map, comm_kernels);
      // Each kernel's time alone, and per node the sum of its kernels'.
      const std::vector<std::vector<Overlap>> beside = overlaps(step);
      std::vector<double> node_us(n, -1.0);
      double decontended = 0, first_start = 1e300, last_end = -1e300;
      for (std::size_t k = 0; k < step.size(); ++k) {
        ++out.kernels;
        const NodeId v = owner[k];
        if (v == kNone) {
          ++out.unmapped_kernels;
          out.unmapped_kernel_us += step[k].duration_us;
          continue;
        }
        first_start = std::min(first_start, step[k].start_us);
        last_end = std::max(last_end, step[k].start_us + step[k].duration_us);
        double alone = step[k].duration_us;
        for (const Overlap& o : beside[k]) {
          // The law is the compute kernel's class's, on either side.
          const std::size_t compute_kernel = step[k].comm ? o.other : k;
          const std::size_t comm_kernel = step[k].comm ? k : o.other;
          const NodeId cv = owner[compute_kernel], mv = owner[comm_kernel];
          const KernelClass c = cv != kNone ? p.classes[static_cast<std::size_t>(cv)] : token_class(tokens[compute_kernel]);
          // The collective's time alone: its priced time, else its measured one.
          const double comm_alone_us = mv != kNone ? p.calibrated_us[static_cast<std::size_t>(mv)] : step[comm_kernel].duration_us;
          alone -= o.us - o.us / slowdown(c, step[k].comm, comm_alone_us);
        }
        alone = std::max(alone, 0.0);
        decontended += step[k].duration_us - alone;
        double& us = node_us[static_cast<std::size_t>(v)];
        us = (us < 0 ? 0 : us) + alone;
      }
      decontended_per_step.push_back(decontended);
      if (last_end >= first_start) span_per_step.push_back(last_end - first_start);
      for (std::size_t v = 0; v < n; ++v)
        if (node_us[v] >= 0) samples[v].push_back(node_us[v]), any = true;
    }
    if (!any)
      throw Error(t.path + ": no kernel of its " + std::to_string(t.steps.size()) + " step(s) maps to a node of graph " +
                  (g.name.empty() ? std::string("(unnamed)") : g.name) +
                  " (expected the kernels of a run of the graph's node order: its GEMMs, Triton kernels and NCCL collectives)");
  }
  if (!decontended_per_step.empty()) out.decontended_us = median(decontended_per_step);
  if (!span_per_step.empty()) out.span_us = median(span_per_step);
  for (std::size_t v = 0; v < n; ++v)
    if (!samples[v].empty()) out.measured_us[v] = median(samples[v]);
  count_and_ratios(out, g, p);
  return out;
}

namespace {

// Whether two graphs' nodes of one name are the same node: Inductor names a
// graph's nodes by position (op0, op1, ...), so a graph another pass
// rewrote (Inductor's FX overlap and bucketing passes) reuses names for
// other kernels. Same kind, kernel, fused members, sizes, flops and output
// bytes: what the pricing reads.
bool same_node(const Graph& a, const Node& x, const Graph& b, const Node& y) {
  if (x.kind != y.kind || x.kernel != y.kernel || x.members != y.members || x.numel != y.numel || x.rnumel != y.rnumel ||
      x.flops != y.flops || x.outputs.size() != y.outputs.size())
    return false;
  for (std::size_t i = 0; i < x.outputs.size(); ++i)
    if (a.buffers[x.outputs[i]].bytes != b.buffers[y.outputs[i]].bytes) return false;
  return true;
}

}  // namespace

MeasuredCosts carry_measured_costs(const MeasuredCosts& m, const Graph& from, const Graph& to, const Pricing& p) {
  MeasuredCosts out = m;
  std::map<std::string_view, NodeId> by_name;
  for (std::size_t v = 0; v < from.nodes.size(); ++v)
    if (m.measured_us[v] >= 0) by_name.emplace(from.nodes[v].name, static_cast<NodeId>(v));
  out.measured_us.assign(to.nodes.size(), -1.0);
  out.compute_nodes = out.collectives = 0;
  bool any = false;
  for (std::size_t v = 0; v < to.nodes.size(); ++v) {
    const KernelClass c = p.classes[v];
    if (c == KernelClass::Collective) ++out.collectives;
    else if (!node_token(c).empty()) ++out.compute_nodes;
    auto it = by_name.find(to.nodes[v].name);
    if (it != by_name.end() && same_node(from, from.nodes[it->second], to, to.nodes[v]))
      out.measured_us[v] = m.measured_us[it->second], any = true;
  }
  if (!any)
    throw Error("measured graph " + quoted(from.name) + ": none of its measured nodes is a node of graph " + quoted(to.name) +
                " (expected the same graph in another order: same names, kinds, kernels and sizes)");
  count_and_ratios(out, to, p);
  return out;
}

namespace {

// One kernel class's mapped nodes, by their priced time: an unmapped node
// takes the measured / priced ratio of the mapped node of its class whose
// priced time is nearest its own (log scale), so a ratio measured on small,
// latency-bound kernels never scales a large one (interpolation by size).
struct MappedBySize {
  std::vector<std::pair<double, double>> priced_and_ratio;  // sorted by priced time

  double ratio_near(double priced_us, double fallback) const {
    if (priced_and_ratio.empty() || !(priced_us > 0)) return fallback;
    auto hi = std::lower_bound(priced_and_ratio.begin(), priced_and_ratio.end(), std::make_pair(priced_us, -1.0));
    if (hi == priced_and_ratio.end()) return priced_and_ratio.back().second;
    if (hi == priced_and_ratio.begin()) return hi->second;
    auto lo = std::prev(hi);
    return std::log(priced_us / lo->first) <= std::log(hi->first / priced_us) ? lo->second : hi->second;
  }
};

std::map<KernelClass, MappedBySize> mapped_by_size(const MeasuredCosts& m, const std::vector<KernelClass>& classes,
                                                   const std::vector<double>& priced_us) {
  std::map<KernelClass, MappedBySize> out;
  for (std::size_t v = 0; v < m.measured_us.size(); ++v)
    if (m.measured_us[v] >= 0 && priced_us[v] > 0)
      out[classes[v]].priced_and_ratio.emplace_back(priced_us[v], m.measured_us[v] / priced_us[v]);
  for (auto& [c, mapped] : out) std::sort(mapped.priced_and_ratio.begin(), mapped.priced_and_ratio.end());
  return out;
}

}  // namespace

void apply_measured_costs(Pricing& p, const MeasuredCosts& m) {
  std::map<KernelClass, const MeasuredClassRatio*> by_class;
  for (const MeasuredClassRatio& r : m.classes) by_class[r.kernel_class] = &r;
  const auto calibrated = mapped_by_size(m, p.classes, p.calibrated_us);
  const auto pass = mapped_by_size(m, p.classes, p.pass_us);
  for (std::size_t v = 0; v < p.calibrated_us.size(); ++v) {
    if (m.measured_us[v] >= 0) {
      p.calibrated_us[v] = p.pass_us[v] = m.measured_us[v];
      p.pass_sources[v] = "measured";
      if (!p.beside_wait_us.empty()) p.beside_wait_us[v] = 0;  // a measured collective's time holds its wait
    } else if (auto it = by_class.find(p.classes[v]); it != by_class.end()) {
      const auto c = calibrated.find(p.classes[v]);
      const auto q = pass.find(p.classes[v]);
      p.calibrated_us[v] *= c == calibrated.end() ? it->second->ratio : c->second.ratio_near(p.calibrated_us[v], it->second->ratio);
      p.pass_us[v] *= q == pass.end() ? it->second->pass_ratio : q->second.ratio_near(p.pass_us[v], it->second->pass_ratio);
      p.pass_sources[v] = "interpolated";
    }
  }
}

}  // namespace schedlab
