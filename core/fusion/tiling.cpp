// The Triton backend's tiling, as its fusion rules read it (codegen/simd.py):
// SIMDScheduling.candidate_tilings, select_tiling (get_tiling_and_scores
// without a coalescing analysis, max_tiles 2, no tiled reductions),
// get_first_compatible_tiling and SIMDKernel.is_compatible
// (_split_iteration_ranges). Only pointwise kernels are tiled here: a
// reduction kernel keeps its default tiling (config.triton.tile_reductions
// is off), and every tiling the fusion rules ask for is a pointwise one.
//
// A node's loops are its SchedulerNode._sizes[0] (member_loops: the first
// memory write's sizes, permuted by loop reordering); its deps' strides are
// those of the exported memory deps (pointwise_read_writes is read_writes
// for a pointwise node), evaluated per exported loop and permuted with it.
#include <algorithm>
#include <cctype>

#include "core/fusion/affine_index.h"
#include "core/fusion/fusion_engine.h"
#include "core/util/saturating.h"

namespace schedlab::fusion_detail {
namespace {

// CandidateTiling.is_good_size.
bool is_good_size(std::int64_t s) { return s >= 32 && s % 32 == 0; }

std::int64_t product(std::span<const std::int64_t> sizes) {
  std::int64_t p = 1;
  for (auto s : sizes) p = saturating_mul(p, s);
  return p;
}

// A bare symbol among a size's expressions and its hint ("s50" = 128).
void note_hint(SymbolHints& hints, const std::string& expr, std::int64_t hint) {
  if (expr.size() < 2 || !std::all_of(expr.begin() + 1, expr.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) return;
  if (expr[0] == 's') hints.emplace(expr, hint);
}

bool has_unbacked_symbol(const std::string& expr) {
  for (std::size_t i = 0; i < expr.size(); ++i)
    if (expr[i] == 'u' && (i == 0 || !std::isalnum(static_cast<unsigned char>(expr[i - 1]))) && i + 1 < expr.size() &&
        std::isdigit(static_cast<unsigned char>(expr[i + 1])))
      return true;
  return false;
}

}  // namespace

// Size symbols take the hints the graph pairs with them (a dep's
// `size_expr`, a node's `group_expr`, where one is a bare symbol).
bool FusionEngine::member_strides(NodeId m) {
  strides_bufs_.clear();
  strides_writes_.clear();
  strides_.clear();
  strides_unbacked_ = false;
  if (!symbol_hints_ready_) {
    symbol_hints_ready_ = true;
    for (const Node& n : g_.nodes) {
      if (!n.numel_expr.empty()) note_hint(symbol_hints_, n.numel_expr, n.numel);
      if (!n.rnumel_expr.empty()) note_hint(symbol_hints_, n.rnumel_expr, n.rnumel);
      for (const auto* deps : {&n.reads, &n.writes})
        for (const Dep& d : *deps)
          for (std::size_t i = 0; i < d.size_expr.size() && i < d.size.size(); ++i) note_hint(symbol_hints_, d.size_expr[i], d.size[i]);
    }
  }
  const MemberLoops& loops_of = member_loops(m);
  if (!loops_of.known) return false;
  const Node& n = g_.nodes[m];
  const std::size_t loops = loops_of.sizes->size();
  for (const auto* deps : {&n.reads, &n.writes})
    for (const Dep& d : *deps) {
      if (d.kind != DepKind::Memory) continue;
      for (const std::string& e : d.size_expr)
        if (has_unbacked_symbol(e)) strides_unbacked_ = true;
      strides_bufs_.push_back(d.buf);
      if (deps == &n.writes) strides_writes_.push_back(d.buf);
      if (auto affine = parse_affine_index(d.index, loops)) {  // most indices: the strides are the coefficients
        strides_.insert(strides_.end(), affine->strides.begin(), affine->strides.end());
      } else {
        auto expr = IndexExpr::parse(d.index);
        auto strides = expr ? expr->strides(loops, symbol_hints_) : std::nullopt;
        if (!strides) return false;
        strides_.insert(strides_.end(), strides->begin(), strides->end());
      }
    }
  return true;
}

// SIMDScheduling.candidate_tilings(node, numel, 1) of a pointwise member:
// the untiled candidate, then per memory dep (reads, then writes) the split
// after its first loop of stride 1, when loops with a stride follow it,
// scored by the elements it touches (x2 for a write, x2 per good-sized
// side) and kept when that reaches the node's numel.
bool FusionEngine::candidate_tilings(NodeId m, std::int64_t numel, const std::vector<MemberTiling::Candidate>*& out) {
  MemberLoops& loops_of = member_loops(m);
  if (!loops_of.known) return false;
  const std::vector<std::int64_t>& ranges = *loops_of.sizes;
  if (ranges.size() <= 1) {  // one loop: nothing to split (nor strides to read, nor anything to keep)
    static const std::vector<MemberTiling::Candidate> kNoCandidates;
    out = &kNoCandidates;
    return true;
  }
  MemberTiling& ml = member_extra(loops_of).tiling;
  out = &ml.candidates;
  if (ml.candidates_version == loops_of.version && ml.candidates_numel == numel) return ml.candidates_known;
  ml.candidates_version = loops_of.version;
  ml.candidates_numel = numel;
  ml.candidates.clear();
  ml.candidates_known = member_strides(m);
  if (!ml.candidates_known || strides_unbacked_) return ml.candidates_known;
  auto complete = [&](std::initializer_list<std::int64_t> splits) {  // complete_partial_tiling
    Tiling t;
    std::int64_t tiled = 1;
    for (auto s : splits) {
      t.v[static_cast<std::size_t>(t.len++)] = s;
      tiled = saturating_mul(tiled, s);
    }
    t.v[static_cast<std::size_t>(t.len++)] = tiled > 0 && numel % tiled == 0 ? numel / tiled : -1;
    return t;
  };
  const std::int64_t total = product(ranges);
  ml.candidates.push_back({complete({total}), 0, kNone});
  std::vector<std::int64_t> strides(ranges.size());
  const std::size_t loops = ranges.size();
  for (std::size_t k = 0; k < strides_bufs_.size(); ++k) {
    const BufId buf = strides_bufs_[k];
    const std::int64_t* exported = strides_.data() + k * loops;
    for (std::size_t i = 0; i < ranges.size(); ++i) strides[i] = exported[exported_loop(loops_of, i)];
    auto one = std::find(strides.begin(), strides.end(), 1);
    if (one == strides.end()) continue;
    const auto split = static_cast<std::size_t>(one - strides.begin()) + 1;
    if (split == ranges.size()) continue;
    if (std::all_of(strides.begin() + static_cast<std::ptrdiff_t>(split), strides.end(), [](std::int64_t s) { return s == 0; }))
      continue;  // broadcast after the split: not a real split
    const std::int64_t y = product(std::span(ranges).first(split)), x = product(std::span(ranges).subspan(split));
    std::int64_t score = 1;
    for (std::size_t i = 0; i < ranges.size(); ++i)
      if (strides[i] != 0) score = saturating_mul(score, ranges[i]);
    if (std::find(strides_writes_.begin(), strides_writes_.end(), buf) != strides_writes_.end()) score = saturating_mul(score, 2);
    if (is_good_size(y)) score = saturating_mul(score, 2);
    if (is_good_size(x)) score = saturating_mul(score, 2);
    if (score >= total) ml.candidates.push_back({complete({y, x}), score, buf});
  }
  return true;
}

// SIMDKernel.is_compatible(groups, node.get_ranges()): the member's loops,
// in order, split over the groups, a loop spanning two groups when it
// outgrows the first and is a multiple of it. (The newer three-group split
// never succeeds for the groups asked here: their last group is 1 or they
// are two.)
bool FusionEngine::loops_fit(std::span<const std::int64_t> groups, NodeId m) {
  const MemberLoops& ml = member_loops(m);
  if (!ml.known) return true;  // loops not known: not refused on them
  std::array<std::int64_t, 3> remaining{};
  const std::size_t n = groups.size();
  std::copy(groups.begin(), groups.end(), remaining.begin());
  auto add_range = [&](std::size_t i, std::int64_t size) {
    if (size == 0 || remaining[i] % size != 0) return false;
    remaining[i] /= size;
    return true;
  };
  std::size_t current = 0;
  for (std::int64_t size : *ml.sizes) {
    if (size == 1) continue;
    while (current < n && remaining[current] == 1) ++current;
    if (current + 1 < n && size > remaining[current]) {
      if (remaining[current] == 0 || size % remaining[current] != 0) return false;
      const std::int64_t first = remaining[current], second = size / remaining[current];
      if (!add_range(current, first) || !add_range(current + 1, second)) return false;
    } else {
      if (current >= n || !add_range(current, size)) return false;
    }
  }
  return std::all_of(remaining.begin(), remaining.begin() + static_cast<std::ptrdiff_t>(n), [](std::int64_t r) { return r == 1; });
}

// SIMDScheduling.select_tiling(first + second, numel) for a pointwise
// kernel: candidates of each member, a dep's name counted once (the first
// member's), ranked by score (Counter.most_common: stable), the first
// compatible with every member's loops; else the default {x: numel, r0_: 1}.
bool FusionEngine::select_tiling(std::span<const NodeId> first, std::span<const NodeId> second, std::int64_t numel, Tiling& out) {
  std::vector<MemberTiling::Candidate>& ranked = ranked_scratch_;
  std::vector<BufId>& seen = seen_names_scratch_;
  ranked.clear();
  seen.clear();
  bool seen_none = false;
  for (auto members : {first, second})
    for (NodeId m : members) {
      const std::vector<MemberTiling::Candidate>* candidates = nullptr;
      if (!candidate_tilings(m, numel, candidates)) return false;
      for (const auto& c : *candidates) {
        if (c.name == kNone) {
          if (seen_none) continue;
          seen_none = true;
        } else {
          if (std::find(seen.begin(), seen.end(), c.name) != seen.end()) continue;
          seen.push_back(c.name);
        }
        ranked.push_back(c);
      }
    }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.score > b.score; });
  for (const auto& c : ranked) {
    auto groups = std::span<const std::int64_t>(c.tiling.v.data(), static_cast<std::size_t>(c.tiling.len));
    bool fits = true;
    for (auto members : {first, second})
      for (NodeId m : members) fits = fits && loops_fit(groups, m);
    if (fits) {
      out = c.tiling;
      return true;
    }
  }
  out = Tiling{{numel, 1, 0}, 2};
  return true;
}

// A node's own tiling (node.get_tiling(numel, 1) at its own numel), kept
// until its loops change.
bool FusionEngine::group_tiling(GroupId gid, Tiling& out) {
  const Group& grp = groups_[gid];
  // Members of one loop each have no candidates: the default tiling, not kept.
  bool several_loops = false;
  for (NodeId m : grp.members) {
    const MemberLoops& ml = member_loops(m);
    if (!ml.known) return false;
    several_loops = several_loops || ml.sizes->size() > 1;
  }
  if (!several_loops) {
    out = Tiling{{grp.numel, 1, 0}, 2};
    return true;
  }
  auto [it, added] = group_tilings_.try_emplace(gid);
  if (added) it->second.known = select_tiling(grp.members, {}, grp.numel, it->second.tiling);
  out = it->second.tiling;
  return it->second.known;
}

}  // namespace schedlab::fusion_detail
