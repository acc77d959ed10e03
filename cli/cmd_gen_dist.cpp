// schedlab gen-dist: generated FSDP-style and tensor-parallel graphs
// (core/gen/distributed.h) for the overlap benchmarks.
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/gen/distributed.h"
#include "core/io/graph_writer.h"

namespace schedlab::cli {
namespace {

struct GenDistArgs {
  std::string pattern, out_path;
  DistributedGraphSpec spec;
};

int run(GenDistArgs a) {
  a.spec.pattern = parse_distributed_pattern(a.pattern);
  Graph g = generate_distributed_graph(a.spec);
  write_output(a.out_path, write_graph_json(g));
  std::size_t collectives = 0;
  for (const auto& n : g.nodes) collectives += n.kind == NodeKind::Collective;
  std::printf("%s: %s, %d nodes, %zu collectives\n", a.out_path.c_str(), g.name.c_str(), g.num_nodes(), collectives);
  return 0;
}

}  // namespace

std::function<int()> define_gen_dist(CLI::App& app) {
  auto a = std::make_shared<GenDistArgs>();
  DistributedGraphSpec& s = a->spec;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  app.add_option("PATTERN", a->pattern, "fsdp (FSDP-style all-gathers and reduce-scatters) or tp (tensor-parallel all-reduces)")->required();
  add_output_option(app, "-o,--output", a->out_path, "the graph file to write")->option_text("OUT.json")->required();
  add_int_option(app, "--layers", s.layers, 1, kMax, "transformer layers (default " + std::to_string(s.layers) + ")");
  add_int_option(app, "--hidden", s.hidden, 1, kMax, "model width h, MLP blocks h -> 4h -> h (default " + std::to_string(s.hidden) + ")");
  add_int_option(app, "--tokens", s.tokens, 1, kMax, "tokens per rank, per microbatch for tp (default " + std::to_string(s.tokens) + ")");
  add_int_option(app, "--world-size", s.world_size, 1, kMax, "ranks: fsdp shards over them, tp splits 4h over them (default " + std::to_string(s.world_size) + ")");
  add_int_option(app, "--microbatches", s.microbatches, 1, kMax, "tp only: microbatches (default " + std::to_string(s.microbatches) + ")");
  app.add_flag_callback("--no-backward", [a] { a->spec.backward = false; }, "fsdp only: the forward pass alone");
  return [a] { return run(*a); };
}

}  // namespace schedlab::cli
