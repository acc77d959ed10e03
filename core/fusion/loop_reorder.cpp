// Loop reordering during fusion (Inductor's loop_ordering_after_fusion):
// Scheduler.shared_data_after_reordering_loop and
// SchedulerNode/FusedSchedulerNode.reorder_loops_by_dep_pair. Two nodes that
// touch a buffer in the same elements but with permuted loops share no dep;
// permuting the pointwise node's loops makes their deps equal.
#include <algorithm>
#include <map>

#include "core/fusion/affine_index.h"
#include "core/fusion/fusion_engine.h"
#include "core/util/saturating.h"

namespace schedlab::fusion_detail {
namespace {

// The text with every loop variable dK renamed to d{rename[K]}.
std::string rename_vars(const std::string& text, const std::vector<int>& rename) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    bool var_start = text[i] == 'd' && (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))) && i + 1 < text.size() &&
                     std::isdigit(static_cast<unsigned char>(text[i + 1]));
    if (!var_start) {
      out += text[i++];
      continue;
    }
    std::size_t j = i + 1;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    // A variable numbered past the loops (any number of digits, even beyond
    // 64 bits) is not renamed: its text is kept as it is.
    const std::string digits = text.substr(i + 1, j - i - 1);
    std::size_t k = rename.size();
    if (digits.size() <= 9) k = static_cast<std::size_t>(std::stol(digits));
    out += k < rename.size() ? "d" + std::to_string(rename[k]) : "d" + digits;
    i = j;
  }
  return out;
}

// An index that is a constant (Inductor leaves such deps, e.g. load_seed's,
// out of buffer_names()).
bool is_constant_index(const std::string& text) {
  std::size_t i = !text.empty() && text[0] == '-' ? 1 : 0;
  return i < text.size() && std::all_of(text.begin() + static_cast<std::ptrdiff_t>(i), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

// Elements of a buffer (V.graph.get_numel): its shape's product, else its
// bytes over the dtype's size.
std::int64_t FusionEngine::buffer_elements(BufId b) const {
  const Buffer& buf = g_.buffers[b];
  if (!buf.shape.empty()) {
    std::int64_t n = 1;
    for (auto s : buf.shape) n = saturating_mul(n, s);
    return n;
  }
  return buf.bytes / dtype_itemsize(buf.dtype);
}

std::int64_t FusionEngine::shared_data_after_reordering_loop(GroupId n1, GroupId n2) {
  const Group& a = groups_[n1];
  const Group& b = groups_[n2];
  // Inductor does not reorder loops for the C++ backend (is_cpu), nor for templates.
  if (g_.device == "cpu" || a.is_template || b.is_template) return -1;
  // Per buffer name, the last dep in reads-then-writes order (Inductor's
  // name2dep dicts), through the per-buffer slots: node1's as
  // insertion-ordered entries, then node2's, looked up by buffer. A node
  // with R reads costs O(R), and nothing is hashed or allocated (the
  // reordering round asks this of every pair sharing too little).
  // `named` lists, in order, the slots of the buffers Inductor's
  // buffer_names() has: those with a memory dep whose index is not a
  // constant, by their first such dep.
  auto name_to_dep = [&](const Group& grp, std::vector<std::pair<BufId, DepId>>& entries, std::vector<std::int32_t>& named,
                         std::vector<std::uint8_t>& is_named) {
    const std::uint32_t listed = next_buf_epoch();
    entries.clear();
    named.clear();
    is_named.clear();
    for (const auto* set : {&grp.reads, &grp.writes})
      for (DepId d : *set) {
        const BufId buf = dep_table_[d].buf;
        if (buf_mark_[buf] != listed) {
          buf_mark_[buf] = listed;
          buf_slot_[buf] = static_cast<std::int32_t>(entries.size());
          entries.emplace_back(buf, d);
          is_named.push_back(0);
        }
        const auto slot = static_cast<std::size_t>(buf_slot_[buf]);
        entries[slot].second = d;
        if (!is_named[slot] && dep_table_[d].kind == DepKind::Memory && !is_constant_index(*dep_table_[d].index)) {
          is_named[slot] = 1;
          named.push_back(static_cast<std::int32_t>(slot));
        }
      }
    return listed;
  };
  name_to_dep(a, lhs_name_to_dep_, lhs_named_, lhs_is_named_);
  const std::uint32_t in_rhs = name_to_dep(b, rhs_name_to_dep_, rhs_named_, rhs_is_named_);
  // MemoryDep.get_numel: the sizes of the loops the index uses; an indirect
  // access counts the whole buffer.
  auto numel = [&](DepId d) {
    const DepEntry& e = dep_table_[d];
    if (e.kind != DepKind::Memory) return std::int64_t{-1};  // never a candidate (see below)
    if (e.indirect) return buffer_elements(e.buf);
    std::int64_t n = 1;
    const std::vector<bool> used = vars_used(*e.index, e.size->size());
    for (std::size_t i = 0; i < e.size->size(); ++i)
      if (used[i]) n = saturating_mul(n, (*e.size)[i]);
    return n;
  };
  // The largest common buffer whose two accesses differ at most in loop
  // order; the first of equal sizes in node1's buffer order (max()).
  // Only buffers both nodes touch through a memory dep are candidates
  // (common_buffer_names), and their last deps must be memory deps to
  // compare.
  DepId lhs = -1, rhs = -1;
  std::int64_t best = -1;
  for (std::int32_t slot : lhs_named_) {
    const auto& [buf, ld] = lhs_name_to_dep_[static_cast<std::size_t>(slot)];
    if (buf_mark_[buf] != in_rhs || !rhs_is_named_[static_cast<std::size_t>(buf_slot_[buf])]) continue;
    const DepId rd = rhs_name_to_dep_[static_cast<std::size_t>(buf_slot_[buf])].second;
    if (dep_table_[ld].kind != DepKind::Memory || dep_table_[rd].kind != DepKind::Memory) continue;
    const std::int32_t lf = stride_form(ld), rf = stride_form(rd);
    const bool same = (lf >= 0 && rf >= 0) ? lf == rf : ld == rd;
    if (!same) continue;
    std::int64_t n = numel(ld);
    if (n > best) {
      best = n;
      lhs = ld;
      rhs = rd;
    }
  }
  if (lhs < 0 || dep_table_[lhs].kind != DepKind::Memory || dep_table_[rhs].kind != DepKind::Memory) return -1;
  const DepEntry& l = dep_table_[lhs];
  const DepEntry& r = dep_table_[rhs];
  if (l.size->size() != r.size->size()) {
    auto la = parse_affine_index(*l.index, l.size->size());
    auto ra = parse_affine_index(*r.index, r.size->size());
    if (la && ra) {
      NormalForm ln = normalize_loops(*la, *l.size), rn = normalize_loops(*ra, *r.size);
      if (ln.index == rn.index && ln.sizes == rn.sizes) return l.size_hint;
    }
    return -1;
  }
  bool reordered = false;
  if (!a.reduction) reordered = reorder_loops_by_dep_pair(n1, lhs, rhs);
  else if (!b.reduction) reordered = reorder_loops_by_dep_pair(n2, rhs, lhs);
  return reordered ? score_fusion_memory(n1, n2) : -1;
}

// Deps with equal numbers have equal normal forms; computed once per dep
// and form (the rounds ask about the same few index expressions millions of times).
std::int32_t FusionEngine::stride_form(DepId d) {
  if (stride_form_of_.size() < dep_table_.size()) stride_form_of_.resize(dep_table_.size(), kFormUnknown);
  std::int32_t& form = stride_form_of_[static_cast<std::size_t>(d)];
  if (form != kFormUnknown) return form;
  form = kNone;
  const DepEntry& e = dep_table_[d];
  if (e.kind != DepKind::Memory) return form;
  auto affine = parse_affine_index(*e.index, e.size->size());
  if (!affine) return form;
  StrideOrderForm normal = normalize_with_stride_order(*affine, *e.size);
  auto [it, added] = stride_form_numbers_.emplace(std::pair{std::move(normal.loops), normal.offset},
                                                  static_cast<std::int32_t>(stride_form_numbers_.size()));
  form = it->second;
  return form;
}

// Where a node's reordered loops and tiling data are kept, made when first needed.
FusionEngine::MemberExtra& FusionEngine::member_extra(MemberLoops& ml) {
  if (ml.extra < 0) {
    ml.extra = static_cast<std::int32_t>(member_extra_.size());
    member_extra_.emplace_back();
  }
  return member_extra_[static_cast<std::size_t>(ml.extra)];
}

// SchedulerNode._sizes[0] of an original node: its first memory write's
// iteration sizes as exported, permuted by every reordering of its loops
// since (perm: current loop i is exported loop perm[i]).
FusionEngine::MemberLoops& FusionEngine::member_loops(NodeId m) {
  if (member_loops_.empty()) member_loops_.resize(g_.nodes.size());
  MemberLoops& ml = member_loops_[static_cast<std::size_t>(m)];
  if (ml.ready) return ml;
  ml.ready = true;
  for (const Dep& w : g_.nodes[m].writes)
    if (w.kind == DepKind::Memory) {
      ml.known = true;
      ml.sizes = &w.size;
      break;
    }
  return ml;
}

bool FusionEngine::reorder_loops_by_dep_pair(GroupId gid, DepId self_dep, DepId other_dep) {
  Group& grp = groups_[gid];
  if (grp.is_template) return false;
  // The loop sizes of every member must agree (FusedSchedulerNode's check),
  // as they are now: an earlier reordering may have permuted them.
  const std::vector<std::int64_t>* sizes = nullptr;
  for (NodeId m : grp.members) {
    const MemberLoops& ml = member_loops(m);
    if (!ml.known || (sizes && *sizes != *ml.sizes)) return false;
    sizes = ml.sizes;
  }
  const DepEntry& s = dep_table_[self_dep];
  const DepEntry& o = dep_table_[other_dep];
  if (!(sizes->size() == s.size->size() && s.size->size() == o.size->size())) return false;
  auto sa = parse_affine_index(*s.index, s.size->size());
  auto oa = parse_affine_index(*o.index, o.size->size());
  if (!sa || !oa) return false;
  auto order = decide_loop_order_to_match(*sa, *s.size, *oa, *o.size);
  if (!order) return false;

  // New loop i is old loop order[i]: old variable order[i] becomes d_i.
  std::vector<int> rename(order->size());
  for (std::size_t i = 0; i < order->size(); ++i) rename[(*order)[i]] = static_cast<int>(i);
  std::vector<std::int64_t> new_sizes;
  for (int old : *order) new_sizes.push_back((*sizes)[old]);
  std::vector<std::pair<DepId, DepId>> remap;
  // A dep's sizes are the loop sizes up to the last loop its index uses, so
  // after the permutation they are cut after the last variable still used.
  auto reordered = [&](DepId d) {
    for (const auto& [from, to] : remap)
      if (from == d) return to;
    const DepEntry& e = dep_table_[d];
    if (e.kind != DepKind::Memory || e.size->size() > sizes->size() || !std::equal(e.size->begin(), e.size->end(), sizes->begin()))
      return d;
    Dep nd;
    nd.buf = e.buf;
    nd.kind = e.kind;
    nd.bytes = e.size_hint;
    std::size_t used = 0;
    if (auto affine = parse_affine_index(*e.index, e.size->size())) {
      affine->strides.resize(sizes->size(), 0);
      AffineIndex permuted;
      permuted.offset = affine->offset;
      for (std::size_t i = 0; i < order->size(); ++i) {
        permuted.strides.push_back(affine->strides[(*order)[i]]);
        if (permuted.strides.back() != 0) used = i + 1;
      }
      permuted.strides.resize(used);
      nd.index = format_affine_index(permuted);
    } else {
      nd.index = rename_vars(*e.index, rename);
      for (std::size_t i = 0; i < e.size->size(); ++i) used = std::max(used, static_cast<std::size_t>(rename[i]) + 1);
    }
    nd.size.assign(new_sizes.begin(), new_sizes.begin() + static_cast<std::ptrdiff_t>(used));
    reordered_deps_.push_back(std::move(nd));
    DepId id = intern(reordered_deps_.back());
    remap.emplace_back(d, id);
    return id;
  };
  for (auto* set : {&grp.reads, &grp.writes, &grp.unmet})
    for (DepId& d : *set) d = reordered(d);
  for (NodeId m : grp.members) {  // SchedulerNode.apply_new_loop_order on each member
    MemberLoops& ml = member_loops(m);
    std::vector<int> perm(order->size());
    for (std::size_t i = 0; i < order->size(); ++i) perm[i] = static_cast<int>(exported_loop(ml, static_cast<std::size_t>((*order)[i])));
    MemberExtra& extra = member_extra(ml);
    extra.perm = std::move(perm);
    extra.own_sizes = new_sizes;
    ml.sizes = &extra.own_sizes;
    ++ml.version;
  }
  list_touched(grp);
  grp.deps_changed = true;
  group_tilings_.erase(gid);
  grp.producers_listed = grp.used_buffers_listed = false;
  note_node_traits(gid);
  return true;
}

}  // namespace schedlab::fusion_detail
