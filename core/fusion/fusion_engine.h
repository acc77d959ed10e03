// core/fusion internals: the state Inductor's Scheduler keeps while fusing
// (scheduler nodes that grow into fused nodes) and the legality rules.
// legality.cpp holds can_fuse and everything it calls; fuse.cpp the rounds.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/deps/dependencies.h"
#include "core/fusion/fusion.h"
#include "core/fusion/group_order.h"
#include "core/fusion/index_eval.h"
#include "core/util/key_table.h"

namespace schedlab::fusion_detail {

using DepId = std::int32_t;
using GroupId = std::int32_t;

// Bytes per element of a dtype as the format writes it ("bf16", "f32", ...).
std::int64_t dtype_itemsize(std::string_view dtype);

// An ordered pair of nodes as one key (ids are never negative).
inline std::uint64_t pair_key(GroupId first, GroupId second) {
  return (static_cast<std::uint64_t>(first) << 32) | static_cast<std::uint32_t>(second);
}

// Deps compare by value: buffer, kind, and for memory deps index and size.
struct DepValueHash {
  std::size_t operator()(const Dep* d) const noexcept;
};
struct DepValueEq {
  bool operator()(const Dep* a, const Dep* b) const noexcept;
};

// One distinct dependency (Inductor's Dep objects compare by value: buffer,
// kind, index, size); fused nodes hold sets of these.
struct DepEntry {
  BufId buf = kNone;
  DepKind kind = DepKind::Memory;
  std::int64_t size_hint = 0;  // bytes; a weak dep counts 1, as numbytes_hint does
  const std::string* index = nullptr;
  const std::vector<std::int64_t>* size = nullptr;
  bool indirect = false;  // index uses a loaded value (tmpN): never matches
  // The buffer's producer and name, copied here so that the rounds' hot
  // loops (sorting unmet deps by name, finding producers) stay in this table.
  NodeId producer = kNone;
  std::string_view buf_name;
  // The buffer's latest version (can_fuse_vertical matches deps by it) and
  // its reuse key (can_fusion_increase_peak_memory; kNone: not counted),
  // also copied: the pair checks read them for every dep they look at.
  BufId latest_buf = kNone;
  std::int32_t reuse_key = kNone;
};

// A Triton kernel tiling (SIMDScheduling.create_tiling): the values of
// {"y", "x", "r0_"} in that order, `len` of them (2: no "y", 3: a 2-D tiling).
struct Tiling {
  std::array<std::int64_t, 3> v{};
  int len = 0;
  bool operator==(const Tiling&) const = default;
};

// Why a pair may not fuse (WhyNoFuse), kept as a code so that the millions
// of refusals on big graphs cost no string work; text() gives the reference's words.
enum class Why : std::uint8_t {
  None, SameNode, Node1Extern, Node2Extern, MustGoBefore, PrologueNotPointwise, TemplateEpiloguesOnly,
  TemplateEpilogue, NoSharedData, ExceedsMaxFusion, IncreasesPeakMemory, MemoryDepsMismatch, IntermediateNodes,
  ScoreThreshold, TooFarApart, ReduceMismatch, NonReduceMismatch, NumelIncompatible, Cycle, CppLoopsMismatch,
  CppHorizontalSize, ForeachLength, ForeachReduction, ForeachNotConsumer, ForeachNoProducer, TilingMismatch,
  NumelRnumelIncompatible, InvalidReductionTiling, Count
};

std::string_view why_name(Why why);  // the reason without its numbers

struct Verdict {
  Why why = Why::None;
  std::int64_t numel1 = 0, numel2 = 0, rnumel1 = 0, rnumel2 = 0;  // for the numel/rnumel mismatches
  bool ok() const { return why == Why::None; }
  std::string text() const;
};

// A scheduler node, fused or not.
struct Group {
  std::vector<NodeId> members;
  std::vector<DepId> reads, writes, unmet;  // insertion-ordered sets
  std::vector<DepId> touched;                // reads and writes as one sorted set (see score_fusion_memory)
  // The producers of its unmet deps in the order the topological sort
  // visits them (by buffer name; see producers_by_name), listed once.
  std::vector<NodeId> producers_by_name;
  bool producers_listed = false;
  // The buffers it reads or writes, reads first, each once (Inductor's
  // used_buffer_names, in insertion order), listed once for the pair loop.
  std::vector<BufId> used_buffers;
  bool used_buffers_listed = false;
  std::vector<BufId> buffers;               // outputs of all members
  bool reduction = false, is_template = false, unfusable = false, aliasing_or_mutation = false;
  std::int64_t numel = 0, rnumel = 1;  // Triton group: of its first reduction member, else its first member
  std::string_view numel_expr, rnumel_expr;  // the same as symbolic expressions ("" when a plain number)
  // A foreach node (ForeachKernelSchedulerNode): its subnodes, each a
  // scheduler node of its own, in list order; `members` is theirs, joined.
  std::vector<GroupId> subnodes;
  // Buffer read -> the (last) subnode reading it: Inductor's read_to_node,
  // filled only when the node is built from whole lists of subnodes.
  std::unordered_map<BufId, GroupId> read_to_node;
  GroupId container = kNone;  // for a subnode: the foreach node holding it
  bool is_foreach() const { return !subnodes.empty(); }
  NodeId lead = kNone;                       // the member whose group the node takes
  // C++ backend: an OuterLoopFusedSchedulerNode sharing `outer_depth` outer
  // loops (0: not one), with the leads of its first and last outer nodes.
  std::int32_t outer_depth = 0;
  NodeId outer_first = kNone, outer_last = kNone;
  std::int32_t min_order = 0, max_order = 0;
  bool alive = true;
  // Reads or unmet deps pruned, or loops reordered, after the node was
  // made: verdicts remembered for its pairs may no longer hold.
  bool deps_changed = false;
};

class FusionEngine {
 public:
  FusionEngine(const Graph& g, const DependencyInfo& deps, const Order& schedule, const FusionOptions& opts);

  // Runs the rounds; fills result_.
  void run();
  FusionResult take_result();

  // Legality with the reference's reason.
  Verdict can_fuse(GroupId n1, GroupId n2);
  bool will_fusion_create_cycle(GroupId n1, GroupId n2);

  GroupId group_of(NodeId v) const { return owner_[v]; }
  std::string group_name(GroupId gid) const;
  const std::vector<GroupId>& order() const { return order_; }
  const Group& group(GroupId gid) const { return groups_[gid]; }

 private:
  const Graph& g_;
  const DependencyInfo& deps_;
  const FusionOptions& opts_;
  Reachability reach_;
  std::vector<DepEntry> dep_table_;
  std::unordered_map<const Dep*, DepId, DepValueHash, DepValueEq> dep_ids_;
  std::deque<Dep> reordered_deps_;  // deps created by loop reordering (stable addresses)
  bool reorder_round_ = false;
  std::vector<Group> groups_;
  std::vector<GroupId> owner_;  // per original node: the group it is in now (kNone: not scheduled)
  std::vector<GroupId> order_;  // the current node list
  std::vector<GroupId> subnode_of_;  // per original node inside a foreach node: its current subnode
  bool has_subnodes_ = false;        // some node is a foreach node's subnode (see rank_of)
  FusionResult result_;
  std::int64_t refusals_by_why_[static_cast<int>(Why::Count)] = {};
  int round_ = 0;
  // Scratch marks over dep ids / groups, reset by bumping the epoch.
  std::vector<std::uint32_t> dep_mark_, group_mark_, buf_mark_;
  std::uint32_t dep_epoch_ = 0, group_epoch_ = 0, buf_epoch_ = 0;
  // can_fusion_increase_peak_memory's buffer reuse keys (dtype, elements),
  // numbered (before the deps are interned, which copy them): per buffer
  // its key, or kNone when no single-user buffer the check counts; per key
  // its elements, and a mark (epoch) for set algebra.
  std::vector<std::int32_t> reuse_key_of_buf_;
  std::vector<std::int64_t> reuse_key_elements_;
  std::vector<std::uint32_t> reuse_key_mark_;
  std::uint32_t reuse_key_epoch_ = 0;
  // can_fuse_vertical's deps by buffer: a slot per buffer, lists reused.
  std::vector<std::int32_t> buf_slot_;
  std::vector<std::vector<DepId>> buckets_;
  std::vector<GroupId> vertical_producers_;  // can_fuse_vertical's producers of unmatched deps, reused
  // A topological order of the current nodes, kept valid across fusions,
  // with each node's neighbour lists (see neighbor_ops).
  static constexpr std::uint32_t kUnlisted = ~std::uint32_t{0};
  struct NeighborSpan {
    std::uint32_t begin = 0, count = kUnlisted;
  };
  struct NeighborSpans {
    NeighborSpan succ, pred;
  };
  GroupOrder<NeighborSpans> topo_;

  void intern_deps(const Order& schedule);
  DepId intern(const Dep& d);  // `d` must outlive the engine

  // Loop reordering (the round after the fixed point, loop_ordering_after_fusion).
  std::int64_t shared_data_after_reordering_loop(GroupId n1, GroupId n2);
  std::vector<std::pair<BufId, DepId>> lhs_name_to_dep_, rhs_name_to_dep_;  // its scratch, reused
  std::vector<std::int32_t> lhs_named_, rhs_named_;        // slots of buffer_names(), in order
  std::vector<std::uint8_t> lhs_is_named_, rhs_is_named_;  // per slot: in buffer_names()
  std::int64_t buffer_elements(BufId b) const;
  // A dep's StrideOrderForm as a number (equal forms, equal numbers; kNone:
  // not an affine memory dep), per dep id, computed when first asked.
  static constexpr std::int32_t kFormUnknown = -2;
  std::vector<std::int32_t> stride_form_of_;
  std::map<std::pair<std::vector<std::pair<std::int64_t, std::int64_t>>, std::int64_t>, std::int32_t> stride_form_numbers_;
  std::int32_t stride_form(DepId d);
  bool reorder_loops_by_dep_pair(GroupId gid, DepId self_dep, DepId other_dep);
  // Per original node of several loops, its candidate tilings at the loops
  // of `candidates_version` and the kernel numel `candidates_numel`
  // (`candidates_known` false when a stride could not be evaluated).
  struct MemberTiling {
    struct Candidate {
      Tiling tiling;
      std::int64_t score = 0;
      BufId name = kNone;  // kNone: the untiled candidate ("none")
    };
    std::uint32_t candidates_version = ~std::uint32_t{0};
    std::int64_t candidates_numel = -1;
    bool candidates_known = false;
    std::vector<Candidate> candidates;
  };
  // Per original node, compact: its loops as they are now
  // (SchedulerNode._sizes[0]: the exported first memory write's sizes until
  // a reordering; `known` when it has such a write), and where its
  // reordered loops and tiling data are kept, when it has any (most nodes
  // never need them).
  struct MemberLoops {
    const std::vector<std::int64_t>* sizes = nullptr;
    std::int32_t extra = -1;    // index into member_extra_, or -1
    std::uint32_t version = 0;  // bumped at each reordering
    bool ready = false, known = false;
  };
  struct MemberExtra {
    std::vector<std::int64_t> own_sizes;
    std::vector<int> perm;  // current loop i is the exported loop perm[i] (empty: not reordered)
    MemberTiling tiling;
  };
  std::vector<MemberLoops> member_loops_;  // by NodeId, filled when first asked
  std::deque<MemberExtra> member_extra_;
  MemberExtra& member_extra(MemberLoops& ml);
  std::size_t exported_loop(const MemberLoops& ml, std::size_t i) const {
    return ml.extra < 0 || member_extra_[static_cast<std::size_t>(ml.extra)].perm.empty()
               ? i
               : static_cast<std::size_t>(member_extra_[static_cast<std::size_t>(ml.extra)].perm[i]);
  }
  MemberLoops& member_loops(NodeId m);
  // The Triton backend's tiling (tiling.cpp): SIMDScheduling.candidate_tilings,
  // select_tiling and SIMDKernel.is_compatible over pointwise members. Each
  // answers false when it cannot tell (a member's loops or strides unknown).
  SymbolHints symbol_hints_;
  bool symbol_hints_ready_ = false;
  // A member's exported memory deps, reads then writes, with their strides
  // per exported loop (stride_hints; a row of its loop count per dep), into
  // the scratch below; false when one cannot be evaluated.
  bool member_strides(NodeId m);
  std::vector<BufId> strides_bufs_, strides_writes_;
  std::vector<std::int64_t> strides_;
  bool strides_unbacked_ = false;
  bool candidate_tilings(NodeId m, std::int64_t numel, const std::vector<MemberTiling::Candidate>*& out);
  bool select_tiling(std::span<const NodeId> first, std::span<const NodeId> second, std::int64_t numel, Tiling& out);
  bool group_tiling(GroupId gid, Tiling& out);
  // A node's own tiling (select_tiling of its members at its numel), by
  // group id, once asked; `known` false when a member's loops or strides
  // are not (then the tiling checks pass it). Reset when its loops change.
  struct GroupTiling {
    bool known = false;
    Tiling tiling;
  };
  std::unordered_map<GroupId, GroupTiling> group_tilings_;  // only nodes with a member of several loops
  bool loops_fit(std::span<const std::int64_t> groups, NodeId m);  // SIMDKernel.is_compatible with a member's loops
  std::vector<MemberTiling::Candidate> ranked_scratch_;
  std::vector<BufId> seen_names_scratch_;
  GroupId fuse_two(GroupId n1, GroupId n2);
  Group merged(const Group& a, const Group& b);  // FusedSchedulerNode of the two (no outer-loop rules)
  void take_lead(Group& grp) const;              // the Triton group from the members
  GroupId add_group(Group grp);
  // Foreach nodes (ForeachKernelSchedulerNode): built from Inductor's lists
  // before fusion, fused with each other subnode by subnode, and with a
  // plain node through the one subnode it feeds or reads.
  void create_foreach_nodes();
  GroupId add_foreach(const std::vector<GroupId>& subnodes, GroupId from_foreach, GroupId changed_subnode);
  GroupId fuse_foreach(GroupId n1, GroupId n2);
  Verdict foreach_can_fuse(GroupId producer, GroupId consumer);
  GroupId consumer_subnode_for(GroupId foreach, GroupId producer) const;
  GroupId producer_subnode_for(GroupId foreach, GroupId consumer) const;
  std::int64_t rank_of(GroupId gid) const;  // topo_ label; a subnode ranks as its foreach node
  void prune_redundant_deps(GroupId gid);
  std::vector<std::pair<GroupId, GroupId>> possible_fusions();
  void list_candidate_pairs();
  const std::vector<BufId>& used_buffers(GroupId gid);
  std::vector<std::uint64_t> candidates_;  // list_candidate_pairs' pairs (pair_key), reused
  void sort_by_score(std::vector<std::pair<GroupId, GroupId>>& pairs);
  void fuse_once();
  void topological_sort_groups();
  const std::vector<NodeId>& producers_by_name(GroupId gid);
  std::vector<DepId> producer_scratch_;  // producers_by_name's sort, reused
  void refuse(GroupId n1, GroupId n2, const Verdict& why);

  // legality.cpp
  // can_fuse's checks; `lasting`: the verdict holds for as long as both
  // nodes live with their deps unchanged (see can_fuse).
  Verdict decide_fusion(GroupId n1, GroupId n2, bool& lasting);
  // can_fuse for the pair loop, with the pair's entry in tried_pairs_: the
  // lasting verdict is taken from it, or put in it.
  Verdict can_fuse_remembered(GroupId n1, GroupId n2, std::uint64_t& tried);
  bool remembers_verdicts(GroupId n1, GroupId n2) const;
  Verdict replayed(GroupId n1, GroupId n2, Why why) const;
  // Every ordered pair (n1, n2) the pair loop tried, over all rounds: the
  // last round it was tried in (bits 8 and up; a pair is tried once a
  // round) and its lasting verdict (the low byte: Why + 1; 0: none). One
  // table, so the loop's "tried this round?" and "known?" are one probe.
  BasicKeyTable<std::uint64_t> tried_pairs_;
  static constexpr std::uint64_t kVerdictBits = 0xff;
  // Per node, what the rounds ask of every node or pair, in one byte kept
  // beside the others (a node's record spans several cache lines):
  // kKeepsVerdicts (not a foreach node or subnode, deps as made),
  // kTriedBothWays (template or foreach: fusing it is order dependent),
  // kForeach, and kWeakUnmet (an unmet weak dep: prune_redundant_deps has
  // work). note_node_traits refreshes it wherever those fields change.
  static constexpr std::uint8_t kKeepsVerdicts = 1, kTriedBothWays = 2, kForeach = 4, kWeakUnmet = 8;
  std::vector<std::uint8_t> node_traits_;
  void note_node_traits(GroupId gid);
  bool is_weak_dep(DepId d) const { return dep_table_[d].kind == DepKind::Weak || dep_table_[d].kind == DepKind::FakeWeak; }
  std::int64_t score_fusion_memory(GroupId n1, GroupId n2);
  static void list_touched(Group& grp);  // fills grp.touched from reads and writes
  bool any_op_ancestor(GroupId of_members, GroupId in_ancestors_of) const;
  Verdict can_fuse_vertical(GroupId n1, GroupId n2);
  Verdict backend_can_fuse(GroupId n1, GroupId n2, bool vertical);
  Verdict cpp_can_fuse(GroupId n1, GroupId n2, bool vertical) const;  // device "cpu"
  bool cpp_why_fuse_nodes(GroupId n1, GroupId n2) const;
  bool cpp_can_fuse_horizontal_impl(GroupId n1, GroupId n2) const;
  std::int32_t cpp_outer_loop_fusion_depth(GroupId n1, GroupId n2) const;
  // get_possible_fusions_with_highest_priority: only the pairs of the
  // backend's best (lowest) priority stay; the C++ backend ranks outer-loop
  // pairs 1, every other pair 0 (Triton: all 0).
  void keep_highest_priority_pairs(std::vector<std::pair<GroupId, GroupId>>& pairs) const;
  bool can_fusion_increase_peak_memory(GroupId n1, GroupId n2, std::int64_t shared_bytes);
  void number_reuse_keys();
  std::uint32_t next_reuse_key_epoch();
  bool fusable_weak_dep(DepId weak, GroupId n1, GroupId n2) const;
  bool fusable_read_and_write(DepId read, DepId write) const;
  std::uint32_t next_dep_epoch();
  std::uint32_t next_group_epoch();
  std::uint32_t next_buf_epoch();
  // Between two current nodes `lower` before `higher` in topo_: the
  // descendants of lower ranked before higher, or the ancestors of higher
  // ranked after lower, whichever is complete first.
  struct Between {
    bool cycle = false;                // a path lower -> another node -> higher
    bool ancestors = false;            // `nodes` are higher's ancestors (else lower's descendants)
    GroupId witness = kNone;           // when cycle: a node on the path, neither end
    std::vector<GroupId> nodes;        // valid when !cycle
  };
  Between search_between(GroupId lower, GroupId higher);
  // neighbor_ops' lists, appended to one arena as nodes are first expanded:
  // per node and direction, where its list starts and how long it is, kept
  // in topo_'s slot beside the label a search step reads anyway (a vector
  // per node was 32 bytes and one allocation, and its "made yet?" flag
  // missed the cache on most expansions).
  std::vector<NodeId> neighbor_arena_;
  std::vector<std::uint32_t> neighbor_mark_;  // by group id: in the list being made
  std::uint32_t neighbor_epoch_ = 0;
  std::span<const NodeId> neighbor_ops(GroupId gid, bool forward);
  std::vector<GroupId> search_owners_;  // search_between's scratch: one step's neighbours
  // The last search will_fusion_create_cycle made, which fuse_two reuses
  // when it fuses that very pair next (no fusion in between).
  struct Searched {
    GroupId lower = kNone, higher = kNone;
    Between between;
  };
  Searched searched_;
  // Cycles found, kept per current node as (an operation of the other end,
  // an operation of a node on the path between) and handed on to the node a
  // fusion makes; see cyclic_by_witness.
  struct CyclicWith {
    NodeId partner, witness;
  };
  std::vector<std::vector<CyclicWith>> cyclic_with_;  // by group id
  bool cyclic_by_witness(GroupId n1, GroupId n2) const;
  void remember_cycle(GroupId lower, GroupId higher, GroupId witness);
  void hand_on_cycles(GroupId n1, GroupId n2, GroupId fused);
  // any_op_ancestor's answers (value 1: ancestor) by (of_members, in_ancestors_of):
  // a node's members never change, and the rounds ask about the same pairs again.
  mutable KeyTable known_ancestry_;
  Between between_for_fusion(GroupId lower, GroupId higher);
};

}  // namespace schedlab::fusion_detail
