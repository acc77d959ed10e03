// The post-fusion schedgraph/1 graph: one node per fused group (Inductor's
// FusedSchedulerNode: ReadWrites.merge_list of its members), assembled
// directly in its own id space: inputs, then each group's outputs in order.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <string_view>
#include <unordered_set>

#include "core/fusion/fusion.h"
#include "core/graph/builder.h"
#include "core/util/error.h"

namespace schedlab {
namespace {

void add_unique(std::vector<Dep>& into, const Dep& d) {
  for (const Dep& e : into)
    if (same_dep_value(e, d)) return;
  into.push_back(d);
}

class FusedGraphAssembler {
 public:
  FusedGraphAssembler(const Graph& pre, const DependencyInfo& deps, const std::vector<std::vector<NodeId>>& groups)
      : pre_(pre), deps_(deps), groups_(groups), kept_(pre.nodes.size(), false), to_post_(pre.buffers.size(), kNone) {
    for (const auto& grp : groups)
      for (NodeId v : grp) kept_[v] = true;
    names_taken_.reserve(pre.nodes.size() + groups.size());
    for (const Node& n : pre.nodes) names_taken_.insert(n.name);
  }

  Graph run() {
    Graph& post = b_.graph();
    post.name = pre_.name;
    post.source = pre_.source.empty() ? "fused by schedlab" : pre_.source + "; fused by schedlab";
    post.world_size = pre_.world_size;
    post.device = pre_.device;
    b_.reserve(pre_.buffers.size(), groups_.size());
    for (BufId i = 0; i < pre_.num_inputs; ++i) {
      const Buffer& in = pre_.buffers[i];
      to_post_[i] = b_.add_input(in.name, in.bytes, in.freeable);
      // The informative layout goes along: the time model reads it.
      Buffer& out = b_.buffer(to_post_[i]);
      out.donated = in.donated;
      out.dtype = in.dtype;
      out.shape = in.shape;
      out.stride = in.stride;
    }
    for (const auto& grp : groups_) add_group(grp);
    for (BufId b = 0; b < pre_.num_buffers(); ++b)
      if (pre_.buffers[b].view_of != kNone && to_post_[b] != kNone) b_.buffer(to_post_[b]).view_of = mapped(pre_.buffers[b].view_of, "viewed buffer");
    for (BufId o : pre_.outputs) b_.add_graph_output(mapped(o, "graph output"));
    add_operations();
    return b_.finish();
  }

 private:
  const Graph& pre_;
  const DependencyInfo& deps_;
  const std::vector<std::vector<NodeId>>& groups_;
  std::vector<bool> kept_;
  std::vector<BufId> to_post_;  // pre buffer id -> post buffer id (kNone: removed with its node)
  GraphBuilder b_;
  // Every pre-fusion node name (views of pre_'s), then each generated one
  // (views of generated_names_, whose elements never move).
  std::unordered_set<std::string_view> names_taken_;
  std::deque<std::string> generated_names_;

  // Inductor names a fused node by joining its members' names with "_" and
  // keys everything else by operation names, so it never meets two nodes of
  // one name. A file can hold a node already called like that join (e.g.
  // "op0_op1" beside the group op0+op1): the group then takes the first free
  // "NAME#2", "NAME#3", ... ('#' is never in an Inductor name); its members
  // keep saying what it is.
  std::string unique_fused_name(std::string joined) {
    std::string name = joined;
    for (int k = 2; names_taken_.count(name); ++k) name = joined + "#" + std::to_string(k);
    names_taken_.insert(generated_names_.emplace_back(name));
    return name;
  }

  // A sum of member runtimes past the largest double sticks there instead of
  // becoming infinity, which the format cannot hold.
  static double saturating_runtime_sum(double a, double b) {
    const double sum = a + b;
    return std::isfinite(sum) ? sum : std::numeric_limits<double>::max();
  }

  BufId mapped(BufId pre_buf, std::string_view role) const {
    const BufId b = to_post_[pre_buf];
    if (b == kNone) throw Error("fused graph: " + std::string(role) + " " + quoted_name(pre_.buffers[pre_buf].name) + " belongs to an eliminated node");
    return b;
  }

  // Calls visit(dep) for each read of a node as scheduled: weak deps on
  // removed nodes are pruned.
  template <typename Visit>
  void for_each_live_read(NodeId v, Visit&& visit) const {
    for (const Dep& d : deps_.reads[v]) {
      NodeId p = pre_.buffers[d.buf].producer;
      if (p == kNone || kept_[p]) visit(d);
    }
  }

  // The fused node's fields, with deps still in the pre graph's ids.
  Node merged_node(const std::vector<NodeId>& grp) {
    Node n;
    if (grp.size() == 1) {
      n = pre_.nodes[grp[0]];
      n.reads.clear();
      for_each_live_read(grp[0], [&](const Dep& d) { n.reads.push_back(d); });
      return n;
    }
    bool any_template = false, any_reduction = false, all_runtimes = true;
    std::optional<std::int64_t> flops;
    const Node* lead = &pre_.nodes[grp[0]];
    const Node* convolution = nullptr;
    int convolutions = 0;
    n.name = fused_node_name(pre_, grp);
    for (NodeId m : grp) {
      const Node& mn = pre_.nodes[m];
      n.members.push_back(mn.name);
      any_template |= mn.kind == NodeKind::Template;
      if (mn.kind == NodeKind::Reduction && !any_reduction) {
        any_reduction = true;
        lead = &mn;
      }
      if (mn.convolution) {
        convolution = &mn;
        ++convolutions;
      }
      n.reduction_types.insert(n.reduction_types.end(), mn.reduction_types.begin(), mn.reduction_types.end());
      if (mn.flops) flops = checked_add(flops.value_or(0), *mn.flops, "fused node \"" + n.name + "\" flops");
      if (mn.runtime_us) n.runtime_us = saturating_runtime_sum(n.runtime_us.value_or(0), *mn.runtime_us);
      else all_runtimes = false;
      n.outputs.insert(n.outputs.end(), mn.outputs.begin(), mn.outputs.end());
      for (const Dep& w : mn.writes) add_unique(n.writes, w);
    }
    n.name = unique_fused_name(std::move(n.name));
    n.kind = any_template ? NodeKind::Template : any_reduction ? NodeKind::Reduction : NodeKind::Pointwise;
    n.has_group = lead->has_group;
    n.numel = lead->numel;
    n.rnumel = lead->rnumel;
    // The lead member's additive group fields go with its group, as in
    // Inductor's exported post-fusion graphs.
    n.numel_expr = lead->numel_expr;
    n.rnumel_expr = lead->rnumel_expr;
    n.loop_sizes = lead->loop_sizes;
    n.reduction_sizes = lead->reduction_sizes;
    n.foreach = lead->foreach;
    n.flops = flops;
    // A convolution template's geometry stays with it when it takes an
    // epilogue, as in Inductor's exported post-fusion graphs: one call per
    // node, none where the members hold several.
    if (convolutions == 1) n.convolution = convolution->convolution;
    // Attention calls are externs and never fuse: a single-node group (the
    // copy above) carries `attention`. The reduction types are the members'
    // union, sorted and distinct as the format wants them.
    std::sort(n.reduction_types.begin(), n.reduction_types.end());
    n.reduction_types.erase(std::unique(n.reduction_types.begin(), n.reduction_types.end()), n.reduction_types.end());
    // A sum of member estimates is kept only when every member has one.
    if (!all_runtimes) n.runtime_us.reset();
    for (NodeId m : grp)
      for_each_live_read(m, [&](const Dep& d) {
        bool internal = std::any_of(n.writes.begin(), n.writes.end(), [&](const Dep& w) { return same_dep_value(w, d); });
        if (!internal) add_unique(n.reads, d);
      });
    return n;
  }

  void add_group(const std::vector<NodeId>& grp) {
    Node n = merged_node(grp);
    const std::vector<BufId> pre_outputs = std::move(n.outputs);
    n.outputs.clear();
    const NodeId v = b_.add_node(std::move(n));
    for (BufId o : pre_outputs) {
      Buffer buf = pre_.buffers[o];
      buf.mutation_of = kNone;
      buf.view_of = kNone;  // may name a later group's buffer: set once every group is added
      to_post_[o] = b_.add_node_output(v, std::move(buf));
    }
    for (BufId o : pre_outputs)
      if (pre_.buffers[o].mutation_of != kNone) b_.buffer(to_post_[o]).mutation_of = mapped(pre_.buffers[o].mutation_of, "mutated buffer");
    Node& post = b_.node(v);
    for (Dep& d : post.reads) d.buf = mapped(d.buf, "read");
    for (Dep& d : post.writes) d.buf = mapped(d.buf, "written buffer");
  }

  // The operation skeleton, in the pre-fusion schedule order; each
  // operation's reads once each, in order of their names. (Buffer names
  // are unique, and a post buffer is the pre buffer of its name, so the
  // reads map through to_post_ instead of a lookup by name.)
  void add_operations() {
    std::vector<BufId> reads;
    for (NodeId v = 0; v < pre_.num_nodes(); ++v) {
      if (!kept_[v]) continue;
      Operation op;
      op.name = pre_.nodes[v].name;
      for (BufId o : pre_.nodes[v].outputs) op.outputs.push_back(mapped(o, "operation output"));
      reads.clear();
      for_each_live_read(v, [&](const Dep& d) { reads.push_back(d.buf); });
      std::sort(reads.begin(), reads.end(), [&](BufId x, BufId y) { return pre_.buffers[x].name < pre_.buffers[y].name; });
      reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
      for (BufId b : reads) op.reads.push_back(to_post_[b]);
      b_.add_operation(std::move(op));
    }
  }
};

}  // namespace

Graph build_fused_graph(const Graph& pre, const DependencyInfo& deps, const std::vector<std::vector<NodeId>>& groups) {
  return FusedGraphAssembler(pre, deps, groups).run();
}

}  // namespace schedlab
