// schedlab gen-dist: generated FSDP-style and tensor-parallel graphs
// (core/gen/distributed.h) for the overlap benchmarks.
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "core/gen/distributed.h"
#include "core/io/graph_writer.h"
#include "core/util/error.h"

namespace schedlab::cli {

namespace {

std::int64_t int_value(const std::string& flag, const std::string& v) {
  try {
    std::size_t used = 0;
    long long x = std::stoll(v, &used);
    if (used == v.size()) return x;
  } catch (const std::exception&) {
  }
  throw UsageError(flag + ": expected an integer, got \"" + v + "\"");
}

}  // namespace

int cmd_gen_dist(const Args& args) {
  ArgReader r(args);
  DistributedGraphSpec spec;
  std::string pattern, out_path;
  while (!r.done()) {
    std::string a = r.next();
    if (a == "-o" || a.rfind("--output", 0) == 0) out_path = r.value(a);
    else if (a.rfind("--layers", 0) == 0) spec.layers = static_cast<std::int32_t>(int_value(a, r.value(a)));
    else if (a.rfind("--hidden", 0) == 0) spec.hidden = int_value(a, r.value(a));
    else if (a.rfind("--tokens", 0) == 0) spec.tokens = int_value(a, r.value(a));
    else if (a.rfind("--world-size", 0) == 0) spec.world_size = static_cast<std::int32_t>(int_value(a, r.value(a)));
    else if (a.rfind("--microbatches", 0) == 0) spec.microbatches = static_cast<std::int32_t>(int_value(a, r.value(a)));
    else if (a == "--no-backward") spec.backward = false;
    else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option \"" + a + "\"");
    else if (pattern.empty()) pattern = a;
    else throw UsageError("unexpected argument \"" + a + "\"");
  }
  if (pattern.empty()) throw UsageError("missing pattern: fsdp or tp");
  if (out_path.empty()) throw UsageError("missing -o OUT.json");
  spec.pattern = parse_distributed_pattern(pattern);
  Graph g = generate_distributed_graph(spec);
  write_output(out_path, write_graph_json(g));
  std::size_t collectives = 0;
  for (const auto& n : g.nodes) collectives += n.kind == NodeKind::Collective;
  std::printf("%s: %s, %d nodes, %zu collectives\n", out_path.c_str(), g.name.c_str(), g.num_nodes(), collectives);
  return 0;
}

}  // namespace schedlab::cli
