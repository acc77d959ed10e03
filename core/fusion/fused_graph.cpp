// The post-fusion schedgraph/1 graph: one node per fused group (Inductor's
// FusedSchedulerNode: ReadWrites.merge_list of its members).
#include <algorithm>
#include <set>

#include "core/fusion/fusion.h"
#include "core/graph/loader.h"
#include "core/graph/writer.h"

namespace schedlab {
namespace {

bool same_dep(const Dep& a, const Dep& b) {
  return a.buf == b.buf && a.kind == b.kind && (a.kind != DepKind::Memory || (a.index == b.index && a.size == b.size));
}

void add_unique(std::vector<Dep>& into, const Dep& d) {
  for (const Dep& e : into)
    if (same_dep(e, d)) return;
  into.push_back(d);
}

}  // namespace

std::string fused_graph_text(const Graph& pre, const DependencyInfo& deps, const std::vector<std::vector<NodeId>>& groups) {
  std::vector<bool> kept(pre.nodes.size(), false);
  for (const auto& grp : groups)
    for (NodeId v : grp) kept[v] = true;
  // Reads of a node as scheduled: weak deps on removed nodes are pruned.
  auto live_reads = [&](NodeId v) {
    std::vector<Dep> out;
    for (const Dep& d : deps.reads[v]) {
      NodeId p = pre.buffers[d.buf].producer;
      if (p == kNone || kept[p]) out.push_back(d);
    }
    return out;
  };

  Graph post;
  post.name = pre.name;
  post.source = pre.source.empty() ? "fused by schedlab" : pre.source + "; fused by schedlab";
  post.world_size = pre.world_size;
  post.buffers.assign(pre.buffers.begin(), pre.buffers.begin() + pre.num_inputs);
  post.num_inputs = pre.num_inputs;
  post.outputs = pre.outputs;

  // Nodes are assembled with the pre graph's buffer ids: only names reach the JSON.
  for (const auto& grp : groups) {
    Node n;
    if (grp.size() == 1) {
      n = pre.nodes[grp[0]];
      n.reads = live_reads(grp[0]);
    } else {
      bool any_template = false, any_reduction = false, all_runtimes = true;
      std::optional<std::int64_t> flops;
      const Node* lead = &pre.nodes[grp[0]];
      for (NodeId m : grp) {
        const Node& mn = pre.nodes[m];
        n.name += (n.name.empty() ? "" : "_") + mn.name;
        n.members.push_back(mn.name);
        any_template |= mn.kind == NodeKind::Template;
        if (mn.kind == NodeKind::Reduction && !any_reduction) {
          any_reduction = true;
          lead = &mn;
        }
        if (mn.flops) flops = checked_add(flops.value_or(0), *mn.flops, "fused node \"" + n.name + "\" flops");
        if (mn.runtime_us) n.runtime_us = n.runtime_us.value_or(0) + *mn.runtime_us;
        else all_runtimes = false;
        n.outputs.insert(n.outputs.end(), mn.outputs.begin(), mn.outputs.end());
        for (const Dep& w : mn.writes) add_unique(n.writes, w);
      }
      n.kind = any_template ? NodeKind::Template : any_reduction ? NodeKind::Reduction : NodeKind::Pointwise;
      n.has_group = lead->has_group;
      n.numel = lead->numel;
      n.rnumel = lead->rnumel;
      n.flops = flops;
      // A sum of member estimates is kept only when every member has one.
      if (!all_runtimes) n.runtime_us.reset();
      for (NodeId m : grp)
        for (const Dep& d : live_reads(m)) {
          bool internal = std::any_of(n.writes.begin(), n.writes.end(), [&](const Dep& w) { return same_dep(w, d); });
          if (!internal) add_unique(n.reads, d);
        }
    }
    post.nodes.push_back(std::move(n));
  }
  // Buffers keep the pre graph's ids here; graph_to_json only needs names.
  post.buffers = pre.buffers;

  // The operation skeleton, in the pre-fusion schedule order.
  std::vector<NodeId> ops;
  for (NodeId v = 0; v < pre.num_nodes(); ++v)
    if (kept[v]) ops.push_back(v);
  for (NodeId v : ops) {
    Operation op;
    op.name = pre.nodes[v].name;
    op.outputs = pre.nodes[v].outputs;
    std::set<std::string> names;
    for (const Dep& d : live_reads(v)) names.insert(pre.buffers[d.buf].name);
    for (const auto& nm : names) op.reads.push_back(pre.find_buffer(nm));
    post.operations.push_back(std::move(op));
  }
  return write_graph_json(post);
}

Graph build_fused_graph(const Graph& pre, const DependencyInfo& deps, const std::vector<std::vector<NodeId>>& groups) {
  // Reloading re-indexes buffers in the new node order and validates the result.
  return load_graph(fused_graph_text(pre, deps, groups));
}

}  // namespace schedlab
