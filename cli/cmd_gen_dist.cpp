// schedlab gen-dist: generated FSDP-style and tensor-parallel graphs
// (core/gen/distributed.h) for the overlap benchmarks.
#include <cstdio>
#include <string>

#include <limits>

#include "cli/commands.h"
#include "core/io/options.h"
#include "core/gen/distributed.h"
#include "core/io/graph_writer.h"
#include "core/util/error.h"

namespace schedlab::cli {


int cmd_gen_dist(const Args& args) {
  ArgReader r(args);
  DistributedGraphSpec spec;
  std::string pattern, out_path;
  while (!r.done()) {
    std::string a = r.next();
    if (a == "-o" || is_flag(a, "--output")) out_path = r.value(a);
    else if (is_flag(a, "--layers")) spec.layers = static_cast<std::int32_t>(int_arg(a, r.value(a), 1, std::numeric_limits<std::int32_t>::max()));
    else if (is_flag(a, "--hidden")) spec.hidden = int_arg(a, r.value(a), 1, std::numeric_limits<std::int64_t>::max());
    else if (is_flag(a, "--tokens")) spec.tokens = int_arg(a, r.value(a), 1, std::numeric_limits<std::int64_t>::max());
    else if (is_flag(a, "--world-size")) spec.world_size = static_cast<std::int32_t>(int_arg(a, r.value(a), 1, std::numeric_limits<std::int32_t>::max()));
    else if (is_flag(a, "--microbatches")) spec.microbatches = static_cast<std::int32_t>(int_arg(a, r.value(a), 1, std::numeric_limits<std::int32_t>::max()));
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
