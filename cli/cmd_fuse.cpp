// `schedlab fuse`: Inductor's fusion on a pre-fusion graph (docs/fusion.md).
#include <cstdio>

#include "cli/commands.h"
#include "core/fusion/fusion.h"
#include "core/io/graph_reader.h"
#include "core/io/graph_writer.h"
#include "core/util/error.h"

namespace schedlab::cli {
namespace {

NodeId node_arg(const Graph& g, const std::string& name) {
  NodeId v = g.find_node(name);
  if (v == kNone) throw UsageError("--explain: no node named \"" + name + "\"");
  return v;
}

int explain(const Graph& g, const std::string& a, const std::string& b) {
  FusionExplanation ex = explain_fusion(g, node_arg(g, a), node_arg(g, b), FusionOptions{});
  if (ex.eliminated_a || ex.eliminated_b) {
    std::printf("%s and %s do not fuse: %s removed as dead code\n", a.c_str(), b.c_str(),
                ex.eliminated_a && ex.eliminated_b ? "both are" : ex.eliminated_a ? (a + " is").c_str() : (b + " is").c_str());
    return 0;
  }
  if (ex.fused) {
    std::printf("%s and %s fuse: both in %s\n", a.c_str(), b.c_str(), ex.group_a.c_str());
    return 0;
  }
  std::printf("%s and %s do not fuse: they end in %s and %s\n", a.c_str(), b.c_str(), ex.group_a.c_str(), ex.group_b.c_str());
  if (ex.refusals.empty()) std::printf("  never a candidate pair (no shared buffer within %d nodes of each other's list)\n", FusionOptions{}.max_pairwise_attempts);
  for (const auto& r : ex.refusals)
    std::printf("  round %d: %s + %s refused: %s\n", r.round, r.node1.c_str(), r.node2.c_str(), r.reason.c_str());
  std::printf("  now: %s\n", ex.final_reason.empty() ? "legal, but never chosen" : ex.final_reason.c_str());
  return 0;
}

}  // namespace

int cmd_fuse(const Args& args) {
  ArgReader r(args);
  std::uint64_t max_input = kDefaultMaxInputBytes;
  std::string graph_path, out_path, explain_a, explain_b;
  bool list_groups = false;
  while (!r.done()) {
    std::string a = r.next();
    if (is_flag(a, "--max-input-bytes")) max_input = max_input_bytes_arg(r.value(a));
    else if (a == "-o" || is_flag(a, "--output")) out_path = r.value(a);
    else if (a == "--explain") {
      if (r.done()) throw UsageError("--explain: expected two node names");
      explain_a = r.next();
      if (r.done()) throw UsageError("--explain: expected two node names");
      explain_b = r.next();
    } else if (a == "--groups") list_groups = true;
    else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option \"" + a + "\"");
    else if (graph_path.empty()) graph_path = a;
    else throw UsageError("unexpected argument \"" + a + "\"");
  }
  if (graph_path.empty()) throw UsageError("missing PRE.json");
  Graph g = load_graph_file(graph_path, max_input);
  if (!g.is_pre_fusion() || !g.operations.empty())
    throw UsageError(graph_path + ": already fused (it has `members` or `operations`); fuse takes a pre-fusion graph");
  if (!explain_a.empty()) return explain(g, explain_a, explain_b);

  FrontEndResult fe = run_front_end(g, true, FusionOptions{});
  if (!out_path.empty()) write_output(out_path, write_graph_json(build_fused_graph(g, fe.deps, fe.fusion.groups)));

  std::size_t fused = 0;
  for (const auto& grp : fe.fusion.groups) fused += grp.size() > 1;
  std::printf("%s: %d nodes -> %zu (%zu fused groups) in %d rounds; %zu dead nodes removed; %lld pairs considered\n", graph_path.c_str(),
              g.num_nodes(), fe.fusion.groups.size(), fused, fe.fusion.rounds, fe.eliminated.size(),
              static_cast<long long>(fe.fusion.pairs_considered));
  for (const auto& [reason, count] : fe.fusion.refusal_counts) std::printf("  refused %8lld  %s\n", static_cast<long long>(count), reason.c_str());
  if (list_groups)
    for (const auto& grp : fe.fusion.groups) {
      std::string line;
      for (NodeId v : grp) line += (line.empty() ? "" : " ") + g.nodes[v].name;
      std::printf("%s\n", line.c_str());
    }
  return 0;
}

}  // namespace schedlab::cli
