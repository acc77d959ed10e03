// schedlab validate: load and check a schedgraph/1 file (core/io's reader,
// core/graph's validate) and print its counts.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "core/io/graph_reader.h"

namespace schedlab::cli {
namespace {

struct ValidateArgs {
  std::string path;
  std::uint64_t max_input = kDefaultMaxInputBytes;
};

int run(const ValidateArgs& a) {
  Graph g = load_graph_file(a.path, a.max_input);
  std::size_t deps = 0;
  for (const auto& n : g.nodes) deps += n.reads.size();
  std::printf("%s: ok: schedgraph/1 \"%s\", %d nodes, %d buffers, %d inputs, %zu reads, %zu outputs%s\n", a.path.c_str(), g.name.c_str(),
              g.num_nodes(), g.num_buffers() - g.num_inputs, g.num_inputs, deps, g.outputs.size(), g.is_pre_fusion() ? "" : ", fused");
  exit_without_freeing();
  return 0;
}

}  // namespace

std::function<int()> define_validate(CLI::App& app) {
  auto a = std::make_shared<ValidateArgs>();
  app.add_option("GRAPH.json", a->path, "schedgraph/1 file (- for stdin)")->required();
  add_max_input_bytes_option(app, a->max_input);
  return [a] { return run(*a); };
}

}  // namespace schedlab::cli
