// `schedlab fuse`: Inductor's fusion on a pre-fusion graph (docs/fusion.md).
#include <cstdio>
#include <memory>

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

struct FuseArgs {
  std::string graph_path, out_path;
  std::vector<std::string> explain;  // two node names, or none
  std::uint64_t max_input = kDefaultMaxInputBytes;
  bool list_groups = false;
};

int run(const FuseArgs& a) {
  const std::string& graph_path = a.graph_path;
  if (!a.explain.empty() && a.explain.size() != 2) throw UsageError("--explain: expected two node names");
  Graph g = load_graph_file(graph_path, a.max_input);
  if (!g.is_pre_fusion() || !g.operations.empty())
    throw UsageError(graph_path + ": already fused (it has `members` or `operations`); fuse takes a pre-fusion graph");
  if (!a.explain.empty()) return explain(g, a.explain[0], a.explain[1]);

  FrontEndResult fe = run_front_end(g, true, FusionOptions{});
  if (!a.out_path.empty()) {
    const Graph post = build_fused_graph(g, fe.deps, fe.fusion.groups);
    write_outputs({OutputStream{a.out_path, [&post](std::FILE* out, const std::string& name) { write_graph_json(post, out, name); }}});
  }

  std::size_t fused = 0;
  for (const auto& grp : fe.fusion.groups) fused += grp.size() > 1;
  std::printf("%s: %d nodes -> %zu (%zu fused groups) in %d rounds; %zu dead nodes removed; %lld pairs considered\n", graph_path.c_str(),
              g.num_nodes(), fe.fusion.groups.size(), fused, fe.fusion.rounds, fe.eliminated.size(),
              static_cast<long long>(fe.fusion.pairs_considered));
  for (const auto& [reason, count] : fe.fusion.refusal_counts) std::printf("  refused %8lld  %s\n", static_cast<long long>(count), reason.c_str());
  if (a.list_groups)
    for (const auto& grp : fe.fusion.groups) {
      std::string line;
      for (NodeId v : grp) line += (line.empty() ? "" : " ") + g.nodes[v].name;
      std::printf("%s\n", line.c_str());
    }
  exit_without_freeing();
  return 0;
}

}  // namespace

std::function<int()> define_fuse(CLI::App& app) {
  auto a = std::make_shared<FuseArgs>();
  app.add_option("PRE.json", a->graph_path, "pre-fusion schedgraph/1 file (- for stdin)")->required();
  add_output_option(app, "-o,--output", a->out_path, "write the post-fusion schedgraph/1 file here")->option_text("POST.json");
  app.add_flag("--groups", a->list_groups, "print each fused group's members, one group a line");
  app.add_option("--explain", a->explain, "say whether and why nodes A and B fuse, round by round")->option_text("A B")->expected(2)->allow_extra_args(false);
  add_max_input_bytes_option(app, a->max_input);
  return [a] { return run(*a); };
}

}  // namespace schedlab::cli
