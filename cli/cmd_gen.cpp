// schedlab gen: large synthetic graphs (core/gen/generators.h): a layered
// random DAG, or copies of a real graph.
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/gen/generators.h"
#include "core/io/graph_reader.h"
#include "core/io/graph_writer.h"
#include "core/util/error.h"

namespace schedlab::cli {
namespace {

struct GenArgs {
  std::string out_path, input;
  LayeredSpec spec;
  std::int64_t seed = 1;  // LayeredSpec's is unsigned; the command line takes 0..INT64_MAX
  std::int64_t copies = 0;
  bool chained = false;
};

int write(const Graph& g, const std::string& out_path) {
  write_output(out_path, write_graph_json(g));
  std::printf("wrote %s: %d nodes, %d buffers\n", out_path.c_str(), g.num_nodes(), g.num_buffers());
  return 0;
}

int run_layered(const GenArgs& a) {
  LayeredSpec spec = a.spec;
  spec.seed = static_cast<std::uint64_t>(a.seed);
  return write(generate_layered(spec), a.out_path);
}

int run_replicate(const GenArgs& a) {
  Graph base = load_graph_file(a.input);
  if (static_cast<std::int64_t>(base.nodes.size()) * a.copies > 50'000'000) throw UsageError("replicate: more than 50M nodes");
  return write(replicate_graph(base, static_cast<std::int32_t>(a.copies), a.chained), a.out_path);
}

void add_output(CLI::App& app, GenArgs& a) {
  add_output_option(app, "-o,--output", a.out_path, "the graph file to write")->option_text("OUT.json")->required();
}

}  // namespace

std::function<int()> define_gen(CLI::App& app) {
  auto a = std::make_shared<GenArgs>();
  app.require_subcommand(1);
  CLI::App* layered = app.add_subcommand("layered", "random layered DAG of N compute nodes (W per layer, F reads each, up to S layers back)");
  configure_app(*layered);
  add_int_option(*layered, "--nodes", a->spec.nodes, 0, 50'000'000, "compute nodes (default " + std::to_string(a->spec.nodes) + ")");
  add_int_option(*layered, "--width", a->spec.width, 1, 1'000'000, "nodes per layer (default " + std::to_string(a->spec.width) + ")");
  add_int_option(*layered, "--fan-in", a->spec.fan_in, 0, 64, "reads per node (default " + std::to_string(a->spec.fan_in) + ")");
  add_int_option(*layered, "--skip", a->spec.skip, 1, 1000, "how many layers back a read may reach (default " + std::to_string(a->spec.skip) + ")");
  add_int_option(*layered, "--seed", a->seed, 0, std::numeric_limits<std::int64_t>::max(), "random seed (default " + std::to_string(a->seed) + ")");
  add_output(*layered, *a);
  CLI::App* replicate = app.add_subcommand("replicate", "K copies of a graph, independent components or (--chained) one connected graph");
  configure_app(*replicate);
  replicate->add_option("GRAPH.json", a->input, "the graph to copy")->required();
  add_int_option(*replicate, "--copies", a->copies, 1, 1'000'000, "how many copies")->required();
  replicate->add_flag("--chained", a->chained, "connect each copy's outputs to the next copy's inputs");
  add_output(*replicate, *a);
  return [a, layered] {
    if (layered->parsed()) return run_layered(*a);
    return run_replicate(*a);
  };
}

}  // namespace schedlab::cli
