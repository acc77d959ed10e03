// Inductor's fusion rounds: Scheduler.fuse_nodes, fuse_nodes_once,
// get_possible_fusions, prune_redundant_deps, score_fusion (InductorChoices,
// FusionScore), FusedSchedulerNode construction, topological_sort_schedule.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/fusion/fusion_engine.h"
#include "core/fusion/python_sort.h"
#include "core/util/postorder.h"
#include "core/util/short_stable_sort.h"
#include "core/util/error.h"
#include "core/util/key_table.h"

namespace schedlab::fusion_detail {
namespace {


// InductorChoices.score_fusion's FusionScore and its (non-transitive) order.
struct FusionScore {
  int template_score = 0;
  bool type_score = false;
  std::int64_t memory_score = 0;
  std::int64_t proximity_score = 0;
};

bool score_less(const FusionScore& a, const FusionScore& b) {
  if (a.template_score != b.template_score) return a.template_score < b.template_score;
  // Memory dominates when the two differ more than 16x.
  if (std::max(a.memory_score, b.memory_score) > std::min(a.memory_score, b.memory_score) * 16)
    return a.memory_score < b.memory_score;
  return std::tie(a.type_score, a.memory_score, a.proximity_score) < std::tie(b.type_score, b.memory_score, b.proximity_score);
}

}  // namespace

FusionEngine::FusionEngine(const Graph& g, const DependencyInfo& deps, const Order& schedule, const FusionOptions& opts)
    : g_(g), deps_(deps), opts_(opts), reach_(g, deps, schedule), owner_(g.nodes.size(), kNone) {
  number_reuse_keys();
  intern_deps(schedule);
  subnode_of_.assign(g.nodes.size(), kNone);
  group_mark_.assign(groups_.size() * 2 + 1, 0);
  buf_mark_.assign(g.buffers.size(), 0);  // before create_foreach_nodes, whose merges use it
  buf_slot_.assign(g.buffers.size(), 0);
  create_foreach_nodes();
  topo_.reset(order_);
}

// Creates one scheduler node per scheduled node, with its deps interned.
std::size_t DepValueHash::operator()(const Dep* d) const noexcept {
  std::size_t h = std::hash<std::int64_t>{}((static_cast<std::int64_t>(d->buf) << 3) | static_cast<int>(d->kind));
  if (d->kind != DepKind::Memory) return h;
  h ^= std::hash<std::string>{}(d->index) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  for (auto s : d->size) h ^= std::hash<std::int64_t>{}(s) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

bool DepValueEq::operator()(const Dep* a, const Dep* b) const noexcept {
  return same_dep_value(*a, *b);
}

DepId FusionEngine::intern(const Dep& d) {
  // try_emplace: no map node is made for a dep already interned (most reads).
  auto [it, inserted] = dep_ids_.try_emplace(&d, static_cast<DepId>(dep_table_.size()));
  if (inserted) {
    DepEntry e;
    e.buf = d.buf;
    e.kind = d.kind;
    e.size_hint = d.is_weak() ? 1 : d.bytes;
    e.index = &d.index;
    e.size = &d.size;
    e.indirect = d.index.find("tmp") != std::string::npos;
    e.producer = g_.buffers[d.buf].producer;
    e.buf_name = g_.buffers[d.buf].name;
    e.latest_buf = deps_.latest_version[d.buf];
    e.reuse_key = reuse_key_of_buf_[d.buf];
    dep_table_.push_back(e);
    dep_mark_.push_back(0);
  }
  return it->second;
}

void FusionEngine::intern_deps(const Order& schedule) {
  dep_ids_.reserve(schedule.size() * 4);
  dep_table_.reserve(schedule.size() * 2);
  dep_mark_.reserve(schedule.size() * 2);
  std::vector<std::int32_t> pos(g_.nodes.size(), -1);
  for (std::size_t i = 0; i < schedule.size(); ++i) pos[schedule[i]] = static_cast<std::int32_t>(i);

  groups_.reserve(schedule.size() * 2);
  std::vector<bool> is_unmet;  // one node's at a time, reused
  std::vector<DepId> read_ids, unmet_ids, write_ids;
  for (NodeId v : schedule) {
    const Node& n = g_.nodes[v];
    Group grp;
    grp.members = {v};
    const auto& reads = deps_.reads[v];
    is_unmet.assign(reads.size(), false);
    for (std::int32_t i : deps_.unmet[v]) is_unmet[i] = true;
    // Insertion-ordered sets: a dep joins a set the first time the set's
    // mark is not on it, so a node with R reads costs O(R).
    read_ids.clear();
    unmet_ids.clear();
    write_ids.clear();
    for (std::size_t i = 0; i < reads.size(); ++i) {
      NodeId p = g_.buffers[reads[i].buf].producer;
      if (p != kNone && pos[p] < 0) continue;  // a weak dep on a removed node is pruned
      read_ids.push_back(intern(reads[i]));
      if (is_unmet[i]) unmet_ids.push_back(read_ids.back());
    }
    for (const Dep& w : n.writes) write_ids.push_back(intern(w));
    for (auto [from, into] : {std::pair{&read_ids, &grp.reads}, std::pair{&unmet_ids, &grp.unmet}, std::pair{&write_ids, &grp.writes}}) {
      const std::uint32_t in_set = next_dep_epoch();
      for (DepId d : *from)
        if (dep_mark_[d] != in_set) {
          dep_mark_[d] = in_set;
          into->push_back(d);
        }
    }
    list_touched(grp);
    grp.buffers = n.outputs;
    grp.reduction = n.kind == NodeKind::Reduction;
    grp.is_template = n.kind == NodeKind::Template;
    grp.unfusable = n.kind == NodeKind::Extern || n.kind == NodeKind::Nop || n.kind == NodeKind::Collective || n.kind == NodeKind::Wait;
    for (BufId b : n.outputs)
      if (g_.buffers[b].mutation_of != kNone || !g_.buffers[b].aliases.empty()) grp.aliasing_or_mutation = true;
    grp.numel = n.numel;
    grp.rnumel = n.rnumel;
    grp.numel_expr = n.numel_expr;
    grp.rnumel_expr = n.rnumel_expr;
    grp.lead = v;
    grp.min_order = grp.max_order = pos[v];
    owner_[v] = static_cast<GroupId>(groups_.size());
    order_.push_back(owner_[v]);
    groups_.push_back(std::move(grp));
    note_node_traits(owner_[v]);
  }
}

std::string FusionEngine::group_name(GroupId gid) const { return fused_node_name(g_, groups_[gid].members); }

// FusedSchedulerNode(node1.get_nodes() + node2.get_nodes()).
Group FusionEngine::merged(const Group& a, const Group& b) {
  Group fused;
  fused.members = a.members;
  fused.members.insert(fused.members.end(), b.members.begin(), b.members.end());
  // Insertion-ordered set operations through marks on dep ids (three epochs:
  // written, read, unmet), so big read sets merge in linear time.
  const std::uint32_t written = next_dep_epoch();
  for (const auto* src : {&a.writes, &b.writes})
    for (DepId d : *src)
      if (dep_mark_[d] != written) {
        dep_mark_[d] = written;
        fused.writes.push_back(d);
      }
  const std::uint32_t read = next_dep_epoch();
  for (const auto* src : {&a.reads, &b.reads})
    for (DepId d : *src)
      if (dep_mark_[d] != written && dep_mark_[d] != read) {
        dep_mark_[d] = read;
        fused.reads.push_back(d);
      }
  // The reads and writes of the two, as one set, are the union of theirs.
  std::set_union(a.touched.begin(), a.touched.end(), b.touched.begin(), b.touched.end(), std::back_inserter(fused.touched));
  fused.buffers = a.buffers;
  fused.buffers.insert(fused.buffers.end(), b.buffers.begin(), b.buffers.end());
  const std::uint32_t own = next_buf_epoch();
  for (BufId buf : fused.buffers) buf_mark_[buf] = own;
  const std::uint32_t unmet = next_dep_epoch();
  for (const auto* src : {&a.unmet, &b.unmet})
    for (DepId d : *src) {
      if (buf_mark_[dep_table_[d].buf] == own) continue;
      if (dep_mark_[d] != written && dep_mark_[d] != unmet) {
        dep_mark_[d] = unmet;
        fused.unmet.push_back(d);
      }
    }
  fused.reduction = a.reduction || b.reduction;
  fused.is_template = a.is_template || b.is_template;
  fused.aliasing_or_mutation = a.aliasing_or_mutation || b.aliasing_or_mutation;
  take_lead(fused);
  fused.min_order = std::min(a.min_order, b.min_order);
  fused.max_order = std::max(a.max_order, b.max_order);

  return fused;
}

// The Triton group is the first reduction member's, else the first member's.
void FusionEngine::take_lead(Group& grp) const {
  grp.lead = grp.members[0];
  for (NodeId m : grp.members)
    if (g_.nodes[m].kind == NodeKind::Reduction) {
      grp.lead = m;
      break;
    }
  const Node& lead = g_.nodes[grp.lead];
  grp.numel = lead.numel;
  grp.rnumel = lead.rnumel;
  grp.numel_expr = lead.numel_expr;
  grp.rnumel_expr = lead.rnumel_expr;
}

GroupId FusionEngine::add_group(Group grp) {
  groups_.push_back(std::move(grp));
  note_node_traits(static_cast<GroupId>(groups_.size() - 1));
  if (group_mark_.size() < groups_.size()) group_mark_.resize(groups_.size() * 2, 0);
  return static_cast<GroupId>(groups_.size() - 1);
}

FusionEngine::Between FusionEngine::between_for_fusion(GroupId lower, GroupId higher) {
  Searched last = std::exchange(searched_, {});
  if (last.lower == lower && last.higher == higher) return std::move(last.between);
  return search_between(lower, higher);
}

GroupId FusionEngine::fuse_two(GroupId n1, GroupId n2) {
  // Keep topo_ topological. Between the two, every node is an ancestor of
  // the later one, a descendant of the earlier one, or neither (never both:
  // no cycle). The fused node takes the earlier one's place with the
  // ancestors moved just before it, or the later one's place with the
  // descendants moved just after it, whichever set the search finished
  // first. (Searched before the fused node takes over the members.)
  GroupId lower = topo_.label(n1) < topo_.label(n2) ? n1 : n2, higher = lower == n1 ? n2 : n1;
  Between between = between_for_fusion(lower, higher);
  std::sort(between.nodes.begin(), between.nodes.end(), [&](GroupId x, GroupId y) { return topo_.label(x) < topo_.label(y); });
  GroupId id;
  if (groups_[n1].is_foreach() || groups_[n2].is_foreach()) {
    id = fuse_foreach(n1, n2);
  } else {
    Group fused = merged(groups_[n1], groups_[n2]);
    const Group& a = groups_[n1];
    const Group& b = groups_[n2];
    // CppScheduling.fuse: a vertical pair the plain rules refuse becomes an
    // OuterLoopFusedSchedulerNode (its outer nodes: n1's, then n2's).
    if (g_.device == "cpu" && !a.is_template && !b.is_template && any_op_ancestor(n1, n2) &&
        (a.outer_depth || b.outer_depth || !(cpp_can_fuse_horizontal_impl(n1, n2) && !a.reduction))) {
      if (std::int32_t depth = cpp_outer_loop_fusion_depth(n1, n2); depth >= 1) {
        fused.outer_depth = depth;
        fused.outer_first = a.outer_depth ? a.outer_first : a.lead;
        fused.outer_last = b.outer_depth ? b.outer_last : b.lead;
      }
    }
    id = add_group(std::move(fused));
  }
  if (between.ancestors) {
    topo_.move_before(lower, between.nodes);
    topo_.replace(lower, higher, id);
  } else {
    topo_.move_after(higher, between.nodes);
    topo_.replace(higher, lower, id);
  }
  groups_[n1].alive = groups_[n2].alive = false;
  for (NodeId m : groups_[id].members) owner_[m] = id;
  hand_on_cycles(n1, n2, id);
  return id;
}

// Scheduler.create_foreach_nodes: each list (node field `foreach`, ids in
// Inductor's list order) of kept, non-nop nodes becomes one foreach node,
// appended after the other nodes; then the nodes are sorted topologically again.
void FusionEngine::create_foreach_nodes() {
  std::map<std::int64_t, std::vector<GroupId>> lists;
  for (GroupId gid : order_) {
    const Node& n = g_.nodes[groups_[gid].lead];
    if (n.foreach >= 0 && n.kind != NodeKind::Nop) lists[n.foreach].push_back(gid);
  }
  if (lists.empty()) return;
  std::vector<GroupId> foreach_nodes;
  for (const auto& [list, subnodes] : lists) foreach_nodes.push_back(add_foreach(subnodes, kNone, kNone));
  std::vector<GroupId> order;
  for (GroupId gid : order_)
    if (groups_[gid].container == kNone) order.push_back(gid);
  order.insert(order.end(), foreach_nodes.begin(), foreach_nodes.end());
  order_ = std::move(order);
  topological_sort_groups();
}

// A foreach node over `subnodes`. Built from whole lists (from_foreach
// kNone) it merges them all and indexes their reads (read_to_node); built
// from a foreach node whose subnode `changed_subnode` took in another node,
// it merges the two (Inductor's prev_node_1/prev_node_2) and indexes nothing.
GroupId FusionEngine::add_foreach(const std::vector<GroupId>& subnodes, GroupId from_foreach, GroupId changed_subnode) {
  Group fe;
  if (from_foreach == kNone) {
    fe = groups_[subnodes[0]];
    for (std::size_t i = 1; i < subnodes.size(); ++i) fe = merged(fe, groups_[subnodes[i]]);
    for (GroupId sub : subnodes)
      for (DepId d : groups_[sub].reads) fe.read_to_node[dep_table_[d].buf] = sub;
  } else {
    fe = merged(groups_[from_foreach], groups_[changed_subnode]);
    fe.read_to_node.clear();
  }
  fe.members.clear();
  for (GroupId sub : subnodes) fe.members.insert(fe.members.end(), groups_[sub].members.begin(), groups_[sub].members.end());
  take_lead(fe);
  fe.subnodes = subnodes;
  fe.container = kNone;
  fe.alive = true;
  const GroupId id = add_group(std::move(fe));
  has_subnodes_ = true;
  for (GroupId sub : subnodes) {
    groups_[sub].container = id;
    note_node_traits(sub);
    groups_[sub].alive = false;
    for (NodeId m : groups_[sub].members) {
      subnode_of_[m] = sub;
      owner_[m] = id;
    }
  }
  return id;
}

// ForeachKernelSchedulerNode.fuse: two foreach nodes fuse subnode by
// subnode; a foreach node and a plain node fuse through the one subnode
// that produces what the plain node reads (or reads what it produces).
GroupId FusionEngine::fuse_foreach(GroupId n1, GroupId n2) {
  if (groups_[n1].is_foreach() && groups_[n2].is_foreach()) {
    std::vector<GroupId> subnodes;
    for (std::size_t i = 0; i < groups_[n1].subnodes.size(); ++i)
      subnodes.push_back(add_group(merged(groups_[groups_[n1].subnodes[i]], groups_[groups_[n2].subnodes[i]])));
    return add_foreach(subnodes, kNone, kNone);
  }
  const bool producer_is_foreach = groups_[n1].is_foreach();
  const GroupId fe = producer_is_foreach ? n1 : n2;
  const GroupId target = producer_is_foreach ? producer_subnode_for(n1, n2) : consumer_subnode_for(n2, n1);
  const GroupId fused_sub = add_group(producer_is_foreach ? merged(groups_[target], groups_[n2]) : merged(groups_[n1], groups_[target]));
  std::vector<GroupId> subnodes = groups_[fe].subnodes;
  std::replace(subnodes.begin(), subnodes.end(), target, fused_sub);
  return add_foreach(subnodes, fe, fused_sub);
}

// Weak deps on a node the group already depends on strongly (and could fuse
// over), or on itself, are dropped: Inductor's _prune_redundant_deps.
void FusionEngine::prune_redundant_deps(GroupId gid) {
  Group& grp = groups_[gid];
  if (std::none_of(grp.unmet.begin(), grp.unmet.end(), [&](DepId d) { return is_weak_dep(d); })) return;
  std::unordered_map<GroupId, int> strong_count;
  for (DepId d : grp.unmet)
    if (!is_weak_dep(d)) ++strong_count[owner_[dep_table_[d].producer]];
  std::vector<DepId> prune;
  for (DepId d : grp.unmet) {
    if (!is_weak_dep(d)) continue;
    GroupId producer = owner_[dep_table_[d].producer];
    bool redundant = strong_count.count(producer) && fusable_weak_dep(d, producer, gid);
    if (redundant || producer == gid) prune.push_back(d);
  }
  if (prune.empty()) return;
  grp.deps_changed = true;
  grp.producers_listed = grp.used_buffers_listed = false;
  const std::uint32_t pruned = next_dep_epoch();
  for (DepId d : prune) dep_mark_[d] = pruned;
  auto drop = [&](std::vector<DepId>& v) {
    v.erase(std::remove_if(v.begin(), v.end(), [&](DepId d) { return dep_mark_[d] == pruned; }), v.end());
  };
  drop(grp.unmet);
  drop(grp.reads);
  list_touched(grp);
  note_node_traits(gid);
}

void FusionEngine::refuse(GroupId n1, GroupId n2, const Verdict& why) {
  ++refusals_by_why_[static_cast<int>(why.why)];
  bool record = opts_.record_refusals;
  if (opts_.explain) {
    GroupId ga = owner_[opts_.explain->first], gb = owner_[opts_.explain->second];
    record = ga != gb && ((ga == n1 && gb == n2) || (ga == n2 && gb == n1));
  }
  if (record) result_.refusals.push_back({round_, group_name(n1), group_name(n2), why.text()});
}

// Candidate pairs: nodes sharing a buffer, each within the next
// max_pairwise_attempts nodes of its buffer's list, tried once each; then
// the pairs that may fuse, sorted by score.
std::vector<std::pair<GroupId, GroupId>> FusionEngine::possible_fusions() {
  list_candidate_pairs();
  std::vector<std::pair<GroupId, GroupId>> out;
  const std::uint64_t this_round = static_cast<std::uint64_t>(round_) << 8;
  // The pairs land all over a table far larger than the caches, and on
  // nodes anywhere in the graph: the slots and node records of pairs a few
  // ahead are fetched while this one is checked.
  // (Their dep sets, which score_fusion_memory reads, come once the
  // records are in.)
  constexpr std::size_t kSlotsAhead = 12, kNodesAhead = 8, kDepsAhead = 3;
  const std::size_t count = candidates_.size();
  for (std::size_t k = 0; k < count; ++k) {
    if (k + kSlotsAhead < count) tried_pairs_.prefetch(candidates_[k + kSlotsAhead]);
    if (k + kNodesAhead < count) {
      const std::uint64_t ahead = candidates_[k + kNodesAhead];
      __builtin_prefetch(&groups_[static_cast<std::size_t>(ahead >> 32)]);
      __builtin_prefetch(&groups_[static_cast<std::size_t>(ahead & 0xffffffffu)]);
    }
    if (k + kDepsAhead < count) {
      const std::uint64_t ahead = candidates_[k + kDepsAhead];
      __builtin_prefetch(groups_[static_cast<std::size_t>(ahead >> 32)].touched.data());
      __builtin_prefetch(groups_[static_cast<std::size_t>(ahead & 0xffffffffu)].touched.data());
    }
    const std::uint64_t key = candidates_[k];
    const auto n1 = static_cast<GroupId>(key >> 32), n2 = static_cast<GroupId>(key & 0xffffffffu);
    bool added = false;
    std::uint64_t& tried = tried_pairs_.find_or_add(key, added);
    if ((tried & ~kVerdictBits) == this_round) continue;  // tried this round, through another buffer
    tried = this_round | (tried & kVerdictBits);
    ++result_.pairs_considered;
    Verdict why = can_fuse_remembered(n1, n2, tried);  // adds no pair: `tried` stays valid
    if (why.ok()) {
      out.emplace_back(n1, n2);
      continue;
    }
    refuse(n1, n2, why);
    // Epilogue and foreach fusions are order dependent: try the other way round.
    if (node_traits_[static_cast<std::size_t>(n2)] & kTriedBothWays) {
      Verdict why_rev = can_fuse(n2, n1);
      if (why_rev.ok()) out.emplace_back(n2, n1);
      else refuse(n2, n1, why_rev);
    }
  }
  keep_highest_priority_pairs(out);
  sort_by_score(out);
  return out;
}

// candidates_: the pairs in the order Inductor's loop meets them, buffer by
// buffer (in order of first use), each node with the next
// max_pairwise_attempts nodes of the buffer's list; repeats included,
// except whole windows met before (below).
void FusionEngine::list_candidate_pairs() {
  // Nodes per buffer (Inductor's buffer_names_grouping), buffers in order of
  // first use, as a CSR built from (buffer, node) entries.
  std::vector<std::pair<BufId, GroupId>> uses;
  // Node records (and then their lists) are anywhere: fetched a few ahead.
  constexpr std::size_t kNodesAhead = 4, kListsAhead = 2;
  for (std::size_t k = 0; k < order_.size(); ++k) {
    if (k + kNodesAhead < order_.size()) __builtin_prefetch(&groups_[static_cast<std::size_t>(order_[k + kNodesAhead])]);
    if (k + kListsAhead < order_.size()) __builtin_prefetch(groups_[static_cast<std::size_t>(order_[k + kListsAhead])].used_buffers.data());
    const GroupId gid = order_[k];
    if (groups_[gid].unfusable) continue;
    for (BufId b : used_buffers(gid)) uses.emplace_back(b, gid);
  }
  std::vector<std::int32_t> slot(g_.buffers.size(), -1);
  std::vector<std::int32_t> start{0};
  for (auto [b, gid] : uses)
    if (slot[b] < 0) {
      slot[b] = static_cast<std::int32_t>(start.size()) - 1;
      start.push_back(0);
    }
  for (auto [b, gid] : uses) ++start[slot[b] + 1];
  for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  std::vector<GroupId> members(uses.size());
  std::vector<std::int32_t> fill(start.begin(), start.end() - 1);
  for (auto [b, gid] : uses) members[fill[slot[b]]++] = gid;

  // Per node, the last partner window it was listed with (its start in
  // `members` and its width). Under a later buffer, a window with the same
  // partners in the same order holds only pairs met already: on dense
  // graphs (every node of a layer reading every buffer of the one before)
  // nearly all repeats go without a probe into the pair table. Narrow
  // windows are not compared; there a repeat is rare and the compare a cache miss.
  struct Window {
    std::int32_t start = -1, width = 0;
  };
  std::vector<Window> last_window(groups_.size());
  constexpr std::size_t kComparedWidth = 8;
  candidates_.clear();
  for (std::size_t s = 0; s + 1 < start.size(); ++s) {
    const GroupId* nodes = members.data() + start[s];
    const std::size_t count = static_cast<std::size_t>(start[s + 1] - start[s]);
    for (std::size_t i = 0; i < count; ++i) {
      std::size_t end = std::min(count, i + 1 + static_cast<std::size_t>(opts_.max_pairwise_attempts));
      if (const std::size_t width = end - i - 1; width >= kComparedWidth) {
        Window& last = last_window[static_cast<std::size_t>(nodes[i])];
        const GroupId* partners = nodes + i + 1;
        if (last.start >= 0 && static_cast<std::size_t>(last.width) >= width &&
            std::equal(partners, partners + width, members.data() + last.start))
          continue;
        last = {static_cast<std::int32_t>(partners - members.data()), static_cast<std::int32_t>(width)};
      }
      for (std::size_t j = i + 1; j < end; ++j) candidates_.push_back(pair_key(nodes[i], nodes[j]));
    }
  }
}

// list.sort(key=score_fusion, reverse=True): best first.
void FusionEngine::sort_by_score(std::vector<std::pair<GroupId, GroupId>>& pairs) {
  struct Scored {
    std::pair<GroupId, GroupId> pair;
    FusionScore score;
  };
  std::vector<Scored> scored;
  scored.reserve(pairs.size());
  for (auto [n1, n2] : pairs) {
    const Group& a = groups_[n1];
    const Group& b = groups_[n2];
    FusionScore s;
    s.memory_score = score_fusion_memory(n1, n2);
    s.proximity_score = -std::max(std::abs(a.min_order - b.max_order), std::abs(b.min_order - a.max_order));
    s.template_score = b.is_template ? 0 : 1 + ((a.is_template == opts_.epilogue_fusion_first) && s.memory_score > 0);
    s.type_score = a.reduction == b.reduction && s.memory_score > 0;
    scored.push_back({{n1, n2}, s});
  }
  python_sort_descending(scored, [](const Scored& x, const Scored& y) { return score_less(x.score, y.score); });
  for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = scored[i].pair;
}

void FusionEngine::fuse_once() {
  ++round_;
  // Only nodes with an unmet weak dep have anything to prune; the traits
  // say which without reading every node's record each round.
  for (GroupId gid : order_) {
    const std::uint8_t traits = node_traits_[static_cast<std::size_t>(gid)];
    if (traits & kWeakUnmet) prune_redundant_deps(gid);
    if (traits & kForeach)
      for (GroupId sub : groups_[gid].subnodes)
        if (node_traits_[static_cast<std::size_t>(sub)] & kWeakUnmet) prune_redundant_deps(sub);
  }
  std::vector<GroupId> nodes = order_;  // the round's OrderedSet: fused nodes join at the end
  for (auto [p1, p2] : possible_fusions()) {
    // Either side may have been fused earlier in this round.
    GroupId n1 = owner_[groups_[p1].members[0]], n2 = owner_[groups_[p2].members[0]];
    if (n1 == n2) continue;
    Verdict why = can_fuse(n1, n2);
    if (why.ok() && will_fusion_create_cycle(n1, n2)) why = {Why::Cycle};
    if (!why.ok()) {
      refuse(n1, n2, why);
      continue;
    }
    nodes.push_back(fuse_two(n1, n2));
  }
  // The live nodes by min_order, a bucket per schedule position: live
  // nodes hold disjoint members, so no two share one.
  std::vector<GroupId> by_position(g_.nodes.size(), kNone);
  for (GroupId gid : nodes)
    if (groups_[gid].alive) by_position[static_cast<std::size_t>(groups_[gid].min_order)] = gid;
  order_.clear();
  for (GroupId gid : by_position)
    if (gid != kNone) order_.push_back(gid);
  topological_sort_groups();
  topo_.reset(order_);
}

// Scheduler.topological_sort_schedule over the current nodes: DFS in list
// order, visiting the producers of a node's unmet deps sorted by buffer name.
void FusionEngine::topological_sort_groups() {
  const std::uint32_t seen = next_group_epoch();
  std::vector<GroupId> result;
  result.reserve(order_.size());
  auto producers = [&](GroupId gid, std::vector<GroupId>& out) {
    for (NodeId p : producers_by_name(gid))
      if (owner_[p] != kNone) out.push_back(owner_[p]);
  };
  depth_first_postorder(
      order_, [&](GroupId v) { return group_mark_[v] == seen ? false : (group_mark_[v] = seen, true); }, producers,
      [&](GroupId v) { result.push_back(v); });
  order_ = std::move(result);
}

// used_buffer_names of one node (reads then writes, as a set; a buffer is
// taken the first time this listing's mark is not on it). Listed once per node:
// its reads and writes stay as they are unless pruned or reordered.
const std::vector<BufId>& FusionEngine::used_buffers(GroupId gid) {
  Group& grp = groups_[gid];
  if (grp.used_buffers_listed) return grp.used_buffers;
  const std::uint32_t listed = next_buf_epoch();
  grp.used_buffers.clear();
  for (const auto* set : {&grp.reads, &grp.writes})
    for (DepId d : *set) {
      const BufId b = dep_table_[d].buf;
      if (buf_mark_[b] == listed) continue;
      buf_mark_[b] = listed;
      grp.used_buffers.push_back(b);
    }
  grp.used_buffers_listed = true;
  return grp.used_buffers;
}

// The operations producing gid's unmet deps, sorted by buffer name (stable),
// as the topological sort visits them. Sorted once per node, not once per
// round: the unmet deps stay as they are unless pruned or reordered, and the
// owners are looked up at each sort.
const std::vector<NodeId>& FusionEngine::producers_by_name(GroupId gid) {
  Group& grp = groups_[gid];
  if (grp.producers_listed) return grp.producers_by_name;
  std::vector<DepId>& unmet = producer_scratch_;
  unmet = grp.unmet;
  short_stable_sort(unmet.begin(), unmet.end(), [&](DepId x, DepId y) { return dep_table_[x].buf_name < dep_table_[y].buf_name; });
  grp.producers_by_name.clear();
  for (DepId d : unmet)
    if (NodeId p = dep_table_[d].producer; p != kNone) grp.producers_by_name.push_back(p);
  grp.producers_listed = true;
  return grp.producers_by_name;
}

void FusionEngine::run() {
  for (int i = 0; i < opts_.max_rounds; ++i) {
    std::size_t before = order_.size();
    fuse_once();
    if (order_.size() == before || order_.size() == 1) break;
  }
  // Inductor's extra round in which pairs sharing too little data may
  // reorder a node's loops to match (loop_ordering_after_fusion).
  reorder_round_ = true;
  if (order_.size() > 1) fuse_once();
  reorder_round_ = false;
  result_.rounds = round_;
  for (int w = 1; w < static_cast<int>(Why::Count); ++w)
    if (refusals_by_why_[w]) result_.refusal_counts[std::string(why_name(static_cast<Why>(w)))] = refusals_by_why_[w];
}

FusionResult FusionEngine::take_result() {
  result_.groups.clear();
  for (GroupId gid : order_) result_.groups.push_back(groups_[gid].members);
  return std::move(result_);
}

}  // namespace schedlab::fusion_detail

namespace schedlab {

FusionResult fuse_nodes(const Graph& g, const DependencyInfo& deps, const Order& schedule, const FusionOptions& opts) {
  fusion_detail::FusionEngine engine(g, deps, schedule, opts);
  engine.run();
  return engine.take_result();
}

FrontEndResult run_front_end(const Graph& g, bool fuse, const FusionOptions& opts) {
  FrontEndResult r;
  r.deps = analyze_dependencies(g);
  // Inductor sorts, eliminates dead nodes, then fuses over the survivors.
  Order sorted = topological_sort_schedule(g, r.deps, g.baseline_order());
  DeadCodeResult dce = eliminate_dead_nodes(g, r.deps, sorted);
  r.eliminated = dce.removed;
  r.schedule = topological_sort_schedule(g, r.deps, dce.kept);
  if (fuse) {
    r.fusion = fuse_nodes(g, r.deps, r.schedule, opts);
  } else {
    for (NodeId v : r.schedule) r.fusion.groups.push_back({v});
  }
  return r;
}

FusionExplanation explain_fusion(const Graph& g, NodeId a, NodeId b, FusionOptions opts) {
  FusionExplanation ex;
  DependencyInfo deps = analyze_dependencies(g);
  Order sorted = topological_sort_schedule(g, deps, g.baseline_order());
  DeadCodeResult dce = eliminate_dead_nodes(g, deps, sorted);
  for (NodeId v : dce.removed) {
    if (v == a) ex.eliminated_a = true;
    if (v == b) ex.eliminated_b = true;
  }
  if (ex.eliminated_a || ex.eliminated_b) return ex;
  Order schedule = topological_sort_schedule(g, deps, dce.kept);
  opts.explain = std::make_pair(a, b);
  fusion_detail::FusionEngine engine(g, deps, schedule, opts);
  engine.run();
  auto ga = engine.group_of(a), gb = engine.group_of(b);
  ex.fused = ga == gb;
  ex.group_a = engine.group_name(ga);
  ex.group_b = engine.group_name(gb);
  if (!ex.fused) {
    // Ask in the order the two now run, as the fuser would.
    bool a_first = engine.group(ga).min_order < engine.group(gb).min_order;
    auto n1 = a_first ? ga : gb, n2 = a_first ? gb : ga;
    fusion_detail::Verdict why = engine.can_fuse(n1, n2);
    if (why.ok() && engine.will_fusion_create_cycle(n1, n2)) why = {fusion_detail::Why::Cycle};
    ex.final_reason = why.text();
  }
  FusionResult res = engine.take_result();
  ex.refusals = std::move(res.refusals);
  return ex;
}

}  // namespace schedlab
