// Fusion legality after Inductor 2.11: Scheduler.can_fuse, can_fuse_vertical,
// fusable_weak_dep, fusable_read_and_write, can_fusion_increase_peak_memory,
// will_fusion_create_cycle, InductorChoices.can_fuse/_horizontal, and the
// Triton backend's SIMDScheduling.can_fuse. Reason strings are WhyNoFuse's.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include "core/fusion/affine_index.h"
#include "core/fusion/fusion_engine.h"
#include "core/util/epoch_marks.h"
#include "core/util/saturating.h"

namespace schedlab::fusion_detail {

// Bytes per element, for element counts (Inductor's buffer reuse key, get_numel).
std::int64_t dtype_itemsize(std::string_view dtype) {
  const std::int64_t size = dtype_size(dtype);
  return size > 0 ? size : 4;
}

// WhyNoFuse's text for each refusal.
std::string_view why_name(Why why) {
  static constexpr const char* kText[] = {
      "",
      "same node",
      "node1 is extern or nop",
      "node2 is extern or nop",
      "node1 must go before node2",
      "prologue fusion only supported for pointwise nodes",
      "templates can only fuse epilogues",
      "template epilogue not satisfied",
      "no shared data",
      "exceeds max fusion",
      "Fusion will increase peak memory",
      "memory deps did not match",
      "intermediate nodes between node1 & node2",
      "score_fusion_memory_threshold",
      "Nodes are too far away. Fusing them may increase peak memory.",
      "numel/rnumel mismatch (reduce)",
      "numel/rnumel mismatch (non-reduce)",
      "nodes numel incompatibility",
      "will create cycle",
      "the C++ backend cannot fuse their loops",
      "the C++ backend fuses at most 16 nodes horizontally",
      "foreach do not have same length",
      "foreach ops cannot be fused with reductions currently",
      "candidate producer is not dep of any foreach consumer",
      "candidate consumer has no dep in any foreach producer",
      "tiling mismatch",
      "nodes numel/rnumel incompatibility",
      "invalid tiling for reduction",
  };
  static_assert(sizeof kText / sizeof kText[0] == static_cast<std::size_t>(Why::Count));
  return kText[static_cast<std::size_t>(why)];
}

std::string Verdict::text() const {
  std::string out(why_name(why));
  if (why == Why::ReduceMismatch || why == Why::NonReduceMismatch) {
    char buf[128];
    std::snprintf(buf, sizeof buf, " (%lld, %lld), (%lld, %lld)", static_cast<long long>(numel1), static_cast<long long>(numel2),
                  static_cast<long long>(rnumel1), static_cast<long long>(rnumel2));
    out += buf;
  }
  return out;
}

std::uint32_t FusionEngine::next_dep_epoch() { return next_epoch(dep_mark_, dep_epoch_); }

std::uint32_t FusionEngine::next_buf_epoch() { return next_epoch(buf_mark_, buf_epoch_); }

std::uint32_t FusionEngine::next_group_epoch() { return next_epoch(group_mark_, group_epoch_); }

// Sum of size hints over the deps both nodes read or write: a merge of
// their sorted dep sets. The pair loop asks this of millions of pairs, and
// marking one node's deps in a table over all deps missed the cache on
// every dep; the two sorted lists are read front to back. (Hints are never
// negative, so the saturating sum does not depend on the order.)
std::int64_t FusionEngine::score_fusion_memory(GroupId n1, GroupId n2) {
  const std::vector<DepId>& a = groups_[n1].touched;
  const std::vector<DepId>& b = groups_[n2].touched;
  std::int64_t total = 0;
  for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end();) {
    if (*i < *j) {
      ++i;
    } else if (*j < *i) {
      ++j;
    } else {
      total = saturating_add(total, dep_table_[*i].size_hint);
      ++i;
      ++j;
    }
  }
  return total;
}

void FusionEngine::list_touched(Group& grp) {
  grp.touched = grp.reads;
  grp.touched.insert(grp.touched.end(), grp.writes.begin(), grp.writes.end());
  std::sort(grp.touched.begin(), grp.touched.end());
  grp.touched.erase(std::unique(grp.touched.begin(), grp.touched.end()), grp.touched.end());
}

// Is some member of `of_members` an operation-level ancestor of some member
// of `in_ancestors_of`? (Inductor: group.ancestors & other.get_operation_names().)
bool FusionEngine::any_op_ancestor(GroupId of_members, GroupId in_ancestors_of) const {
  // A path between members is a path between the current nodes, which topo_ orders.
  if (rank_of(of_members) > rank_of(in_ancestors_of)) return false;
  const std::uint64_t pair = pair_key(of_members, in_ancestors_of);
  if (const std::uint8_t* known = known_ancestry_.find(pair)) return *known != 0;
  const bool ancestor = reach_.any_ancestor(groups_[of_members].members, groups_[in_ancestors_of].members);
  known_ancestry_.insert(pair, ancestor ? 1 : 0);
  return ancestor;
}

// The rounds ask about the same pairs again and again (they still share
// data), and most verdicts of a pair cannot change while both nodes live
// as they are: a node's members are fixed until it fuses (then its id
// retires), ancestry between members is a question about the fixed
// pre-fusion graph, and the shared bytes, sizes, orders and backend groups
// come from the two nodes alone. Such a verdict is remembered and given
// again, reason and all, so the report counts every refusal as before.
// Not remembered: what follows a passing can_fuse_vertical (its
// "intermediate nodes" test can turn true once a node between them fuses
// with a producer of node2), pairs with a foreach node or a subnode, nodes
// whose deps were pruned or reordered, and the loop-reordering round.
Verdict FusionEngine::can_fuse_remembered(GroupId n1, GroupId n2, std::uint64_t& tried) {
  const bool remembered = remembers_verdicts(n1, n2);
  if (remembered && (tried & kVerdictBits)) return replayed(n1, n2, static_cast<Why>((tried & kVerdictBits) - 1));
  bool lasting = true;
  Verdict why = decide_fusion(n1, n2, lasting);
  if (remembered && lasting) tried |= static_cast<std::uint64_t>(why.why) + 1;
  return why;
}

Verdict FusionEngine::can_fuse(GroupId n1, GroupId n2) {
  bool lasting = true;
  return decide_fusion(n1, n2, lasting);
}

bool FusionEngine::remembers_verdicts(GroupId n1, GroupId n2) const {
  return !reorder_round_ && (node_traits_[static_cast<std::size_t>(n1)] & node_traits_[static_cast<std::size_t>(n2)] & kKeepsVerdicts);
}

void FusionEngine::note_node_traits(GroupId gid) {
  if (node_traits_.size() < groups_.size()) node_traits_.resize(groups_.size() * 2, 0);
  const Group& grp = groups_[static_cast<std::size_t>(gid)];
  std::uint8_t traits = 0;
  if (!grp.deps_changed && !grp.is_foreach() && grp.container == kNone) traits |= kKeepsVerdicts;
  if (grp.is_template || grp.is_foreach()) traits |= kTriedBothWays;
  if (grp.is_foreach()) traits |= kForeach;
  if (std::any_of(grp.unmet.begin(), grp.unmet.end(), [&](DepId d) { return is_weak_dep(d); })) traits |= kWeakUnmet;
  node_traits_[static_cast<std::size_t>(gid)] = traits;
}

// A remembered reason with the numbers its text carries (the nodes' groups).
Verdict FusionEngine::replayed(GroupId n1, GroupId n2, Why why) const {
  if (why != Why::ReduceMismatch && why != Why::NonReduceMismatch) return {why};
  const Group& a = groups_[n1];
  const Group& b = groups_[n2];
  return {why, a.numel, b.numel, a.rnumel, b.rnumel};
}

Verdict FusionEngine::decide_fusion(GroupId n1, GroupId n2, bool& lasting) {
  if (n1 == n2) return {Why::SameNode};
  const Group& a = groups_[n1];
  const Group& b = groups_[n2];
  if (a.unfusable) return {Why::Node1Extern};
  if (b.unfusable) return {Why::Node2Extern};
  if (any_op_ancestor(n2, n1)) return {Why::MustGoBefore};
  if (b.is_template) {
    // Prologue fusion needs the template's allowed prologue inputs, which
    // the format does not carry: templates take epilogues only.
    if (a.reduction || a.is_template) return {Why::PrologueNotPointwise};
    return {Why::TemplateEpiloguesOnly};
  }
  if (a.is_template && (b.aliasing_or_mutation || b.reduction)) return {Why::TemplateEpilogue};

  std::int64_t shared = score_fusion_memory(n1, n2);
  if (reorder_round_ && shared < opts_.score_fusion_memory_threshold) {
    std::int64_t reordered = shared_data_after_reordering_loop(n1, n2);
    if (reordered >= 0) shared = reordered;
  }
  // InductorChoices.can_fuse (aggressive_fusion off).
  if (shared == 0) return {Why::NoSharedData};
  if (!a.is_foreach() && !b.is_foreach() && a.members.size() + b.members.size() > static_cast<std::size_t>(opts_.max_fusion_size))
    return {Why::ExceedsMaxFusion};
  if (can_fusion_increase_peak_memory(n1, n2, shared)) return {Why::IncreasesPeakMemory};

  if (any_op_ancestor(n1, n2)) {  // node2 depends on node1's outputs
    if (Verdict why = can_fuse_vertical(n1, n2); !why.ok()) return why;
    lasting = false;
    if (a.is_foreach() || b.is_foreach()) return foreach_can_fuse(n1, n2);  // the backend's first check
    return backend_can_fuse(n1, n2, true);
  }
  if (shared < opts_.score_fusion_memory_threshold) return {Why::ScoreThreshold};
  const std::int32_t proximity = std::max(std::abs(a.min_order - b.max_order), std::abs(b.min_order - a.max_order));
  if (proximity > opts_.max_horizontal_distance) return {Why::TooFarApart};
  if (a.is_foreach() || b.is_foreach()) return foreach_can_fuse(n1, n2);
  return backend_can_fuse(n1, n2, false);
}

std::int64_t FusionEngine::rank_of(GroupId gid) const {
  // Asked for most candidate pairs: without foreach nodes the node itself
  // is not read (a cache miss per node on big graphs).
  if (!has_subnodes_) return topo_.label(gid);
  // An op-level path into or out of a subnode is one into or out of its
  // foreach node, so the foreach node's place bounds it.
  const GroupId container = groups_[gid].container;
  return topo_.label(container != kNone ? container : gid);
}

// ForeachKernelSchedulerNode.can_fuse, which the Triton backend asks first
// when either node is a foreach node.
Verdict FusionEngine::foreach_can_fuse(GroupId producer, GroupId consumer) {
  const Group& p = groups_[producer];
  const Group& c = groups_[consumer];
  if (p.is_foreach() && c.is_foreach()) {
    if (p.subnodes.size() != c.subnodes.size()) return {Why::ForeachLength};
    for (std::size_t i = 0; i < p.subnodes.size(); ++i)
      if (Verdict why = can_fuse(groups_[producer].subnodes[i], groups_[consumer].subnodes[i]); !why.ok()) return why;
    return {};
  }
  if (c.is_foreach()) {
    if (p.reduction) return {Why::ForeachReduction};
    GroupId sub = consumer_subnode_for(consumer, producer);
    if (sub == kNone) return {Why::ForeachNotConsumer};
    return can_fuse(producer, sub);
  }
  if (c.reduction) return {Why::ForeachReduction};
  GroupId sub = producer_subnode_for(producer, consumer);
  if (sub == kNone) return {Why::ForeachNoProducer};
  return can_fuse(sub, consumer);
}

// The subnode reading one of the producer's outputs (the first output found).
GroupId FusionEngine::consumer_subnode_for(GroupId foreach, GroupId producer) const {
  const auto& read_to_node = groups_[foreach].read_to_node;
  for (BufId b : groups_[producer].buffers)
    if (auto it = read_to_node.find(b); it != read_to_node.end()) return it->second;
  return kNone;
}

// The one subnode producing what the consumer reads; none when it reads
// from several (Inductor does not fuse those).
GroupId FusionEngine::producer_subnode_for(GroupId foreach, GroupId consumer) const {
  GroupId found = kNone;
  for (DepId d : groups_[consumer].reads) {
    NodeId p = dep_table_[d].producer;
    if (p == kNone || owner_[p] != foreach) continue;
    if (found != kNone && found != subnode_of_[p]) return kNone;
    found = subnode_of_[p];
  }
  return found;
}

bool FusionEngine::fusable_read_and_write(DepId read, DepId write) const {
  const DepEntry& r = dep_table_[read];
  const DepEntry& w = dep_table_[write];
  // A star read would need a store mode on the write, which the format has not.
  if (r.kind != DepKind::Memory || w.kind != DepKind::Memory) return false;
  if (r.latest_buf != w.buf || r.indirect || w.indirect) return false;
  const std::string* r_index = r.index;
  const std::string* w_index = w.index;
  const std::vector<std::int64_t>* r_size = r.size;
  const std::vector<std::int64_t>* w_size = w.size;
  NormalForm rn, wn;
  if (r.size->size() != w.size->size()) {
    // loop_ordering_after_fusion: compare with contiguous loops merged.
    auto ra = parse_affine_index(*r.index, r.size->size());
    auto wa = parse_affine_index(*w.index, w.size->size());
    if (ra && wa) {
      rn = normalize_loops(*ra, *r.size);
      wn = normalize_loops(*wa, *w.size);
      r_index = &rn.index;
      w_index = &wn.index;
      r_size = &rn.sizes;
      w_size = &wn.sizes;
    }
  }
  if (*r_index != *w_index || r_size->size() < w_size->size()) return false;
  return std::equal(w_size->begin(), w_size->end(), r_size->begin());
}

// A weak (mutation-ordering) dep of node2 on node1 may be fused over when
// node2 mutates in place exactly the elements node1 reads.
bool FusionEngine::fusable_weak_dep(DepId weak, GroupId n1, GroupId n2) const {
  const Group& a = groups_[n1];
  const Group& b = groups_[n2];
  BufId wb = dep_table_[weak].buf;
  if (std::find(a.buffers.begin(), a.buffers.end(), wb) == a.buffers.end()) return false;
  // The format does not say which mutation a weak dep orders; node2's first
  // mutating output stands for it (nodes mutate at most one buffer).
  BufId mutating = kNone;
  for (BufId o : b.buffers)
    if (g_.buffers[o].mutation_of != kNone) {
      mutating = o;
      break;
    }
  if (mutating == kNone) return false;
  DepId write = -1;
  int count = 0;
  for (DepId w : b.writes)
    if (dep_table_[w].buf == mutating) {
      write = w;
      ++count;
    }
  if (count != 1) return false;
  const DepEntry& wd = dep_table_[write];
  if (wd.kind != DepKind::Memory || wd.indirect) return false;
  BufId real = deps_.storage_root[mutating];
  for (DepId r : a.reads) {
    const DepEntry& rd = dep_table_[r];
    if (rd.buf != real) continue;
    if (rd.kind != DepKind::Memory || rd.indirect || *rd.index != *wd.index || *rd.size != *wd.size) return false;
  }
  return true;
}

Verdict FusionEngine::can_fuse_vertical(GroupId n1, GroupId n2) {
  const Group& a = groups_[n1];
  const Group& b = groups_[n2];
  // node2's unmet deps by (renamed) buffer, through a per-buffer slot: a
  // node reading R buffers costs O(R) here, not O(R^2), and nothing is allocated.
  const std::uint32_t slotted = next_buf_epoch();
  std::size_t used = 0;
  auto bucket = [&](BufId name, bool create) -> std::vector<DepId>* {
    if (buf_mark_[name] != slotted) {
      if (!create) return nullptr;
      buf_mark_[name] = slotted;
      buf_slot_[name] = static_cast<std::int32_t>(used);
      if (used == buckets_.size()) buckets_.emplace_back();
      buckets_[used++].clear();
    }
    return &buckets_[static_cast<std::size_t>(buf_slot_[name])];
  };
  for (DepId d : b.unmet) {
    if (is_weak_dep(d))
      if (fusable_weak_dep(d, n1, n2)) continue;
    bucket(dep_table_[d].latest_buf, true)->push_back(d);
  }
  for (DepId cd : a.writes) {
    if (dep_table_[cd].kind != DepKind::Memory) continue;
    auto* list = bucket(dep_table_[cd].latest_buf, false);
    if (!list) continue;
    // Inductor removes from the list it iterates, so the element after a
    // removed one is skipped; kept for identical results.
    for (std::size_t i = 0; i < list->size(); ++i)
      if (fusable_read_and_write((*list)[i], cd)) list->erase(list->begin() + static_cast<std::ptrdiff_t>(i));
  }
  // The buffers still unmatched: one of node1's own is a mismatch; one made
  // by a descendant of node1 means a node in between. (Which check fails
  // first does not depend on the order the buffers are visited in.)
  const std::uint32_t own = next_buf_epoch();
  for (BufId buf : a.buffers) buf_mark_[buf] = own;
  const std::uint32_t producer_seen = next_group_epoch();
  std::vector<GroupId>& producers = vertical_producers_;
  producers.clear();
  for (std::size_t i = 0; i < used; ++i)
    for (DepId d : buckets_[i]) {
      BufId buf = dep_table_[d].buf;
      if (buf_mark_[buf] == own) return {Why::MemoryDepsMismatch};
      NodeId producer = dep_table_[d].producer;
      if (producer == kNone || owner_[producer] == kNone || group_mark_[owner_[producer]] == producer_seen) continue;
      group_mark_[owner_[producer]] = producer_seen;
      producers.push_back(owner_[producer]);
    }
  for (GroupId p : producers)
    if (any_op_ancestor(n1, p)) return {Why::IntermediateNodes};
  return {};
}

namespace {

// A size as Inductor's fusion compares it: a sympy expression. Plain numbers
// compare as numbers; once either side has symbols the printed expressions
// are compared, so u0 and u1 (both hinted 0) differ, as in Inductor.
struct SymbolicSize {
  std::int64_t hint = 0;
  std::string expr;  // "" for a plain number
  std::string text() const { return expr.empty() ? std::to_string(hint) : expr; }
};

bool same_size(const SymbolicSize& a, const SymbolicSize& b) {
  if (a.expr.empty() && b.expr.empty()) return a.hint == b.hint;
  return a.text() == b.text();
}

// A monomial (integer coefficient times symbols with powers), enough of
// sympy's Mul for products of loop sizes: "8*s50" * "256" prints "2048*s50".
struct Monomial {
  std::int64_t coefficient = 1;
  std::map<std::string, std::int64_t> powers;  // sympy orders a Mul's symbols by name
};

std::optional<Monomial> parse_monomial(const std::string& text) {
  Monomial m;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('*', start);
    if (end != std::string::npos && end + 1 < text.size() && text[end + 1] == '*') {  // "s0**2"
      std::size_t next = text.find('*', end + 2);
      std::string base = text.substr(start, end - start), exp = text.substr(end + 2, next == std::string::npos ? std::string::npos : next - end - 2);
      if (base.empty() || exp.empty() || exp.size() > 9 || !std::all_of(exp.begin(), exp.end(), ::isdigit)) return std::nullopt;
      m.powers[base] += std::stol(exp);
      if (next == std::string::npos) break;
      start = next + 1;
      continue;
    }
    std::string factor = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (factor.empty()) return std::nullopt;
    if (std::all_of(factor.begin(), factor.end(), ::isdigit)) {
      if (factor.size() > 18 || !exact_mul(m.coefficient, std::stoll(factor), m.coefficient)) return std::nullopt;
    } else if (std::all_of(factor.begin(), factor.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; })) {
      m.powers[factor] += 1;
    } else {
      return std::nullopt;  // sums, quotients, functions: not a monomial
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return m;
}

std::string print_monomial(const Monomial& m) {
  std::string out = m.coefficient == 1 && !m.powers.empty() ? "" : std::to_string(m.coefficient);
  for (const auto& [symbol, power] : m.powers) {
    if (!out.empty()) out += "*";
    out += symbol + (power == 1 ? "" : "**" + std::to_string(power));
  }
  return out;
}

// numel * rnumel as sympy prints it when both are monomials; otherwise a
// product that only an identically printed product equals.
SymbolicSize product(const SymbolicSize& a, const SymbolicSize& b) {
  std::int64_t hint = 0;
  if (!exact_mul(a.hint, b.hint, hint)) hint = -1;  // no real size equals it
  if (a.expr.empty() && b.expr.empty()) return {hint, ""};
  auto ma = parse_monomial(a.text()), mb = parse_monomial(b.text());
  if (ma && mb && exact_mul(ma->coefficient, mb->coefficient, ma->coefficient)) {
    for (const auto& [symbol, power] : mb->powers) ma->powers[symbol] += power;
    return {hint, print_monomial(*ma)};
  }
  return {hint, "(" + a.text() + ")*(" + b.text() + ")"};
}

SymbolicSize numel_of(const Group& g) { return {g.numel, std::string(g.numel_expr)}; }
SymbolicSize rnumel_of(const Group& g) { return {g.rnumel, std::string(g.rnumel_expr)}; }

}  // namespace

// SIMDScheduling.can_fuse (Triton). Sizes compare symbolically; the tiling
// checks read the members' loops and strides (tiling.cpp).
Verdict FusionEngine::backend_can_fuse(GroupId n1, GroupId n2, bool vertical) {
  if (g_.device == "cpu") return cpp_can_fuse(n1, n2, vertical);
  const Group& a = groups_[n1];
  const Group& b = groups_[n2];
  const bool same_group = same_size(numel_of(a), numel_of(b)) && same_size(rnumel_of(a), rnumel_of(b));
  if (a.reduction && b.reduction) {
    if (same_group) return {};
    return {Why::ReduceMismatch, a.numel, b.numel, a.rnumel, b.rnumel};
  }
  if (!a.reduction && !b.reduction) {
    if (!same_group) return {Why::NonReduceMismatch, a.numel, b.numel, a.rnumel, b.rnumel};
    if (a.is_template || b.is_template || !opts_.tiling_prevents_pointwise_fusion) return {};
    // A side's own 2-D tiling must survive the fusion: tiling1 == tiling3
    // (and tiling2 == tiling3 when that side tiles too).
    Tiling t1, t2, t3;
    if (!group_tiling(n1, t1) || !group_tiling(n2, t2) || (t1.len <= 2 && t2.len <= 2)) return {};
    if (!select_tiling(groups_[n1].members, groups_[n2].members, groups_[n1].numel, t3)) return {};
    const bool keeps = t1.len > 2 ? (t1 == t3 && (t2.len <= 2 || t2 == t3)) : t2 == t3;
    return keeps ? Verdict{} : Verdict{Why::TilingMismatch};
  }
  // A pointwise node and a reduction (the reduction first is asked the other way round).
  const GroupId pid = a.reduction ? n2 : n1;
  const Group& p = groups_[pid];
  const Group& r = a.reduction ? a : b;
  if (same_size(numel_of(p), product(numel_of(r), rnumel_of(r)))) {
    // Every pointwise member's loops split over (numel, rnumel) ...
    const std::array<std::int64_t, 2> reduction_groups{r.numel, r.rnumel};
    for (NodeId m : p.members)
      if (!loops_fit(reduction_groups, m)) return {Why::NumelRnumelIncompatible};
    // ... and the pointwise side is untiled, or tiled as (numel, rnumel).
    Tiling t;
    if (opts_.tiling_prevents_reduction_fusion && !p.is_template && group_tiling(pid, t) &&
        !(t == Tiling{{p.numel, 1, 0}, 2} || t == Tiling{{r.numel, r.rnumel, 1}, 3}))
      return {Why::InvalidReductionTiling};
    return {};
  }
  if (!same_size(numel_of(p), numel_of(r))) return {Why::NumelIncompatible};
  return {};
}

// CppScheduling (codegen/cpp.py, 2.11): groups are the loop sizes and the
// reduction sizes themselves (`group_dims`), and
// - _why_fuse_nodes: equal loops and reductions; or node1 pointwise with
//   node1's loops == node2's loops + reductions; or compatible ranges (both
//   pointwise, equal products, one side a single loop that is not already
//   fused, so it can be re-split);
// - can_fuse_vertical: node2 not a template; after a template only a
//   pointwise node2; else _why_fuse_nodes and node1 not a reduction, or
//   outer-loop fusion (can_fuse_vertical_outer_loop: the two loop nests share
//   their outer loops; the result is an OuterLoopFusedSchedulerNode that only
//   fuses further at the same depth);
// - can_fuse_horizontal: no template, at most config.cpp.max_horizontal_fusion_size
//   (16) nodes together, and _why_fuse_nodes.
bool FusionEngine::cpp_why_fuse_nodes(GroupId n1, GroupId n2) const {
  const Node& l1 = g_.nodes[groups_[n1].lead];
  const Node& l2 = g_.nodes[groups_[n2].lead];
  const auto &vars1 = l1.loop_sizes, &reduce1 = l1.reduction_sizes;
  const auto &vars2 = l2.loop_sizes, &reduce2 = l2.reduction_sizes;
  if (vars1 == vars2 && reduce1 == reduce2) return true;  // SAME_VARS_REDUCE
  if (reduce1.empty()) {  // COMPATIBLE_REDUCTION
    std::vector<std::int64_t> joined = vars2;
    joined.insert(joined.end(), reduce2.begin(), reduce2.end());
    if (vars1 == joined) return true;
  }
  // COMPATIBLE_RANGES_NO_REDUCTION
  if (!reduce1.empty() || !reduce2.empty() || !(vars1.size() == 1 || vars2.size() == 1)) return false;
  std::int64_t p1 = 1, p2 = 1;
  for (auto v : vars1) p1 = saturating_mul(p1, v);
  for (auto v : vars2) p2 = saturating_mul(p2, v);
  if (p1 != p2) return false;
  const GroupId to_recompute = vars1.size() < vars2.size() ? n1 : n2;
  return groups_[to_recompute].members.size() == 1;
}

bool FusionEngine::cpp_can_fuse_horizontal_impl(GroupId n1, GroupId n2) const {
  if (groups_[n1].outer_depth || groups_[n2].outer_depth) return false;
  return cpp_why_fuse_nodes(n1, n2);
}

// _get_outer_loop_fusion_depth: the outer loops node1's last and node2's
// first loop nest share (0: none; both reduction-only: none); an outer-loop
// node only takes more at its own depth.
std::int32_t FusionEngine::cpp_outer_loop_fusion_depth(GroupId n1, GroupId n2) const {
  const Group& a = groups_[n1];
  const Group& b = groups_[n2];
  const Node& last1 = g_.nodes[a.outer_depth ? a.outer_last : a.lead];
  const Node& first2 = g_.nodes[b.outer_depth ? b.outer_first : b.lead];
  const auto &vars1 = last1.loop_sizes, &vars2 = first2.loop_sizes;
  if (vars1.empty() && vars2.empty() && !last1.reduction_sizes.empty() && !first2.reduction_sizes.empty()) return 0;
  if (a.outer_depth && b.outer_depth) return a.outer_depth == b.outer_depth ? a.outer_depth : 0;
  const auto depth = static_cast<std::int32_t>(std::min(vars1.size(), vars2.size()));
  if (depth < 1 || !std::equal(vars1.begin(), vars1.begin() + depth, vars2.begin())) return 0;
  if (a.outer_depth || b.outer_depth) return (a.outer_depth ? a.outer_depth : b.outer_depth) == depth ? depth : 0;
  return depth;
}

Verdict FusionEngine::cpp_can_fuse(GroupId n1, GroupId n2, bool vertical) const {
  const Group& a = groups_[n1];
  const Group& b = groups_[n2];
  if (vertical) {
    if (b.is_template) return {Why::TemplateEpiloguesOnly};
    if (a.is_template) return b.reduction ? Verdict{Why::CppLoopsMismatch} : Verdict{};
    if (cpp_can_fuse_horizontal_impl(n1, n2) && !a.reduction) return {};
    if (cpp_outer_loop_fusion_depth(n1, n2) >= 1) return {};  // can_fuse_vertical_outer_loop
    return {Why::CppLoopsMismatch};
  }
  if (a.is_template || b.is_template) return {Why::TemplateEpiloguesOnly};
  if (a.members.size() + b.members.size() > 16) return {Why::CppHorizontalSize};
  if (!cpp_can_fuse_horizontal_impl(n1, n2)) return {Why::CppLoopsMismatch};
  return {};
}

// CppScheduling.get_fusion_pair_priority: can_fuse_vertical_outer_loop pairs
// (node2 depends on node1, no template, not a plain loop match unless node1
// is a reduction, a shared outer loop) come after every other pair.
void FusionEngine::keep_highest_priority_pairs(std::vector<std::pair<GroupId, GroupId>>& pairs) const {
  if (g_.device != "cpu") return;
  auto outer_loop_pair = [&](std::pair<GroupId, GroupId> p) {
    const Group& a = groups_[p.first];
    const Group& b = groups_[p.second];
    return !a.is_template && !b.is_template && any_op_ancestor(p.first, p.second) &&
           !(cpp_can_fuse_horizontal_impl(p.first, p.second) && !a.reduction) && cpp_outer_loop_fusion_depth(p.first, p.second) >= 1;
  };
  if (std::all_of(pairs.begin(), pairs.end(), outer_loop_pair)) return;  // one priority only: all stay
  pairs.erase(std::remove_if(pairs.begin(), pairs.end(), outer_loop_pair), pairs.end());
}

// The buffers can_fusion_increase_peak_memory counts (not inputs, a fixed
// or multi-output layout, one user) and their buffer reuse keys, numbered
// once: the check runs for most candidate pairs, and building two sets of
// (dtype string, elements) per pair cost more than the rest of can_fuse.
void FusionEngine::number_reuse_keys() {
  std::map<std::pair<std::string_view, std::int64_t>, std::int32_t> numbers;
  reuse_key_of_buf_.assign(g_.buffers.size(), kNone);
  for (BufId b = 0; b < g_.num_buffers(); ++b) {
    const Buffer& buf = g_.buffers[b];
    if (buf.is_input || (buf.layout != Layout::Fixed && buf.layout != Layout::MultiOutputItem) || deps_.users[b].size() != 1) continue;
    const std::int64_t elements = buf.bytes / dtype_itemsize(buf.dtype);
    auto [it, added] = numbers.emplace(std::pair{std::string_view(buf.dtype), elements}, static_cast<std::int32_t>(reuse_key_elements_.size()));
    if (added) reuse_key_elements_.push_back(elements);
    reuse_key_of_buf_[b] = it->second;
  }
  reuse_key_mark_.assign(reuse_key_elements_.size(), 0);
}

std::uint32_t FusionEngine::next_reuse_key_epoch() { return next_epoch(reuse_key_mark_, reuse_key_epoch_); }

// Inductor's lower bound on the memory a fusion costs: buffers that each
// node reads as their only user could be reused if the nodes stay apart.
// The overhead sums the elements of the reuse keys both nodes' sets hold.
bool FusionEngine::can_fusion_increase_peak_memory(GroupId n1, GroupId n2, std::int64_t shared_bytes) {
  const std::uint32_t in_lhs = next_reuse_key_epoch();
  for (DepId r : groups_[n1].reads)
    if (std::int32_t key = dep_table_[r].reuse_key; key != kNone) reuse_key_mark_[key] = in_lhs;
  const std::uint32_t counted = next_reuse_key_epoch();
  const std::int64_t limit = saturating_mul(32, shared_bytes);
  std::int64_t overhead = 0;
  for (DepId r : groups_[n2].reads)
    if (std::int32_t key = dep_table_[r].reuse_key; key != kNone && reuse_key_mark_[key] == in_lhs) {
      reuse_key_mark_[key] = counted;  // a key counts once
      overhead = saturating_add(overhead, reuse_key_elements_[key]);
    }
  return overhead > limit;
}

// Would fusing n1 and n2 close a cycle through another node? In the graph of
// current nodes: a path from one of them through some other node to the
// other. topo_ is a topological order of the current nodes, so such a path
// only visits nodes ranked between the two.
//
// A cycle found stays found: the fixed point retries such pairs every round
// (they still share data), and so do the nodes they fuse into (see
// cyclic_by_witness).
bool FusionEngine::will_fusion_create_cycle(GroupId n1, GroupId n2) {
  GroupId lower = topo_.label(n1) < topo_.label(n2) ? n1 : n2, higher = lower == n1 ? n2 : n1;
  if (cyclic_by_witness(n1, n2)) {
    searched_ = {};
    return true;
  }
  searched_ = {lower, higher, search_between(lower, higher)};
  if (searched_.between.cycle) remember_cycle(lower, higher, searched_.between.witness);
  return searched_.between.cycle;
}

// A path L -> W -> H through a third node W survives every fusion that
// leaves the nodes holding L's, W's and H's operations three different
// nodes: fusions only merge nodes, so each step of the path still joins the
// nodes that now hold its ends, and none of those can be the node holding
// H's operations again before the end, nor the one holding L's after the
// start (the current nodes form a DAG). So a cycle found once answers for
// every later pair of nodes holding an operation of each end, while a third
// node holds the witness: on irregular_dag(300000) that answers 13,500 of
// the 33,400 questions that took a search before (the searches that find a
// cycle are most of the searching).
bool FusionEngine::cyclic_by_witness(GroupId n1, GroupId n2) const {
  if (cyclic_with_.size() <= static_cast<std::size_t>(std::max(n1, n2))) return false;
  const auto& a = cyclic_with_[static_cast<std::size_t>(n1)];
  const auto& b = cyclic_with_[static_cast<std::size_t>(n2)];
  const GroupId from = a.size() <= b.size() ? n1 : n2, to = from == n1 ? n2 : n1;
  for (const CyclicWith& c : a.size() <= b.size() ? a : b) {
    if (owner_[c.partner] != to) continue;
    const GroupId w = owner_[c.witness];
    if (w != from && w != to) return true;
  }
  return false;
}

void FusionEngine::remember_cycle(GroupId lower, GroupId higher, GroupId witness) {
  if (cyclic_with_.size() < groups_.size()) cyclic_with_.resize(groups_.size() * 2);
  const NodeId w = groups_[witness].members[0];
  cyclic_with_[static_cast<std::size_t>(lower)].push_back({groups_[higher].members[0], w});
  cyclic_with_[static_cast<std::size_t>(higher)].push_back({groups_[lower].members[0], w});
}

void FusionEngine::hand_on_cycles(GroupId n1, GroupId n2, GroupId fused) {
  if (cyclic_with_.size() < groups_.size()) cyclic_with_.resize(groups_.size() * 2);
  std::vector<CyclicWith> kept;
  const std::uint32_t listed = next_group_epoch();
  for (GroupId from : {n1, n2}) {
    for (const CyclicWith& c : cyclic_with_[static_cast<std::size_t>(from)]) {
      const GroupId p = owner_[c.partner], w = owner_[c.witness];
      if (p == fused || w == fused || w == p || group_mark_[p] == listed) continue;
      group_mark_[p] = listed;
      kept.push_back(c);
    }
    std::vector<CyclicWith>().swap(cyclic_with_[static_cast<std::size_t>(from)]);
  }
  cyclic_with_[static_cast<std::size_t>(fused)] = std::move(kept);
}

// One operation of each other current node that gid's members have an edge
// to (forward) or from (backward), listed the first time a search expands
// gid: a node is expanded by many searches, and most of its members' edges
// lead inside it or to the same neighbours. The list stays right while gid
// lives, as nodes only merge: operations that shared a node still do, and
// the owner of a listed operation is the neighbour now. Duplicates are
// dropped through marks, not a sort: on dense graphs (a thousand edges per
// operation) most nodes are expanded once, and a sort there cost more than
// the searches.
std::span<const NodeId> FusionEngine::neighbor_ops(GroupId gid, bool forward) {
  NeighborSpans& spans = topo_.extra(gid);  // gid is in the order: a current node
  NeighborSpan& span = forward ? spans.succ : spans.pred;
  if (span.count == kUnlisted) {
    // The lists are a cache: when the arena's 32-bit offsets could run out
    // (a list holds at most one operation per node), every list is dropped
    // and made again as nodes are expanded.
    if (neighbor_arena_.size() + groups_.size() >= kUnlisted) {
      neighbor_arena_.clear();
      topo_.for_each_extra([](NeighborSpans& all) { all = {}; });
    }
    if (neighbor_mark_.size() < groups_.size()) neighbor_mark_.resize(groups_.size() * 2, 0);
    next_epoch(neighbor_mark_, neighbor_epoch_);
    span.begin = static_cast<std::uint32_t>(neighbor_arena_.size());
    for (NodeId m : groups_[gid].members)
      for (NodeId n : forward ? reach_.succs(m) : reach_.preds(m)) {
        const GroupId t = owner_[n];
        if (t == kNone || t == gid || neighbor_mark_[static_cast<std::size_t>(t)] == neighbor_epoch_) continue;
        neighbor_mark_[static_cast<std::size_t>(t)] = neighbor_epoch_;
        neighbor_arena_.push_back(n);
      }
    span.count = static_cast<std::uint32_t>(neighbor_arena_.size() - span.begin);
  }
  return {neighbor_arena_.data() + span.begin, span.count};
}

// Two searches inside the window between `lower` and `higher`, one node at a
// time: forward from lower, backward from higher. A path through another
// node shows as a search reaching the far end, or the two meeting. Otherwise
// the first search to finish has enumerated its whole side, so the cost is at
// most twice the smaller side (a descendant set can be most of a random DAG
// while the ancestor set at the other end is tiny, and vice versa).
FusionEngine::Between FusionEngine::search_between(GroupId lower, GroupId higher) {
  const std::uint32_t fwd = topo_.next_epoch(), bwd = topo_.next_epoch();
  topo_.set_mark(lower, fwd);
  topo_.set_mark(higher, bwd);
  const std::int64_t lo = topo_.label(lower), hi = topo_.label(higher);
  Between out;
  std::vector<GroupId> down_seen, up_seen;  // the nodes each side reached, in the order reached
  // Each side sweeps its window in topo_ order (forward: lowest label
  // first; backward: highest first), the side with the smaller frontier
  // next. On the random DAGs of the adversarial corpus this finds the paths
  // of "yes" answers in half the expansions breadth-first order takes.
  std::vector<std::pair<std::int64_t, GroupId>> down_heap, up_heap;
  auto pop = [](std::vector<std::pair<std::int64_t, GroupId>>& heap) {
    std::pop_heap(heap.begin(), heap.end());
    GroupId top = heap.back().second;
    heap.pop_back();
    return top;
  };
  // A step reads the owners of the listed operations first, then their
  // labels and marks: the owner loads of the first pass do not wait on the
  // second pass's branches, and the prefetches bring in the slots it reads
  // (the searches are bound by cache misses, not by work).
  std::vector<GroupId>& owners = search_owners_;
  auto neighbours = [&](GroupId from, bool forward) -> const std::vector<GroupId>& {
    owners.clear();
    for (NodeId op : neighbor_ops(from, forward)) {
      const GroupId t = owner_[op];
      topo_.prefetch(t);
      owners.push_back(t);
    }
    return owners;
  };
  auto expand_down = [&](GroupId from) {
    for (GroupId t : neighbours(from, true)) {
      if (t == higher) {
        if (from != lower) out.cycle = true, out.witness = from;
        continue;
      }
      const std::uint32_t mark = topo_.mark(t);
      if (mark == fwd || topo_.label(t) > hi) continue;
      if (mark == bwd) out.cycle = true, out.witness = t;  // met the other search
      topo_.set_mark(t, fwd);
      down_seen.push_back(t);
      down_heap.push_back({-topo_.label(t), t});
      std::push_heap(down_heap.begin(), down_heap.end());
    }
  };
  auto expand_up = [&](GroupId from) {
    for (GroupId t : neighbours(from, false)) {
      if (t == lower) {
        if (from != higher) out.cycle = true, out.witness = from;
        continue;
      }
      const std::uint32_t mark = topo_.mark(t);
      if (mark == bwd || topo_.label(t) < lo) continue;
      if (mark == fwd) out.cycle = true, out.witness = t;
      topo_.set_mark(t, bwd);
      up_seen.push_back(t);
      up_heap.push_back({topo_.label(t), t});
      std::push_heap(up_heap.begin(), up_heap.end());
    }
  };
  expand_down(lower);
  expand_up(higher);
  while (!out.cycle) {
    if (down_heap.empty()) {
      out.nodes = std::move(down_seen);
      return out;
    }
    if (up_heap.empty()) {
      out.ancestors = true;
      out.nodes = std::move(up_seen);
      return out;
    }
    // The side with the smaller frontier goes next, so neither side fans
    // out far past the other before they meet.
    if (down_heap.size() <= up_heap.size()) expand_down(pop(down_heap));
    else expand_up(pop(up_heap));
  }
  return out;
}

}  // namespace schedlab::fusion_detail
