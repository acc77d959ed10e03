#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "core/io/options.h"
#include "core/gen/generators.h"
#include "core/io/graph_reader.h"
#include "core/io/graph_writer.h"
#include "core/util/error.h"

namespace schedlab::cli {
namespace {

constexpr const char* kGenHelp =
    "usage:\n"
    "  schedlab gen layered --nodes N [--width W] [--fan-in F] [--skip S] [--seed X] -o OUT.json\n"
    "      random layered DAG of N compute nodes (W per layer, F reads each, up to S layers back)\n"
    "  schedlab gen replicate GRAPH.json --copies K [--chained] -o OUT.json\n"
    "      K copies of a graph, independent components or (--chained) one connected graph\n";


}  // namespace

int cmd_gen(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kGenHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  ArgReader r(args);
  std::string mode = r.next(), out_path, input;
  LayeredSpec spec;
  std::int64_t copies = 0;
  bool chained = false;
  while (!r.done()) {
    std::string a = r.next();
    if (a == "-o" || is_flag(a, "--output")) out_path = r.value(a);
    else if (is_flag(a, "--nodes")) spec.nodes = static_cast<std::int32_t>(int_arg("--nodes", r.value(a), 0, 50'000'000));
    else if (is_flag(a, "--width")) spec.width = static_cast<std::int32_t>(int_arg("--width", r.value(a), 1, 1'000'000));
    else if (is_flag(a, "--fan-in")) spec.fan_in = static_cast<std::int32_t>(int_arg("--fan-in", r.value(a), 0, 64));
    else if (is_flag(a, "--skip")) spec.skip = static_cast<std::int32_t>(int_arg("--skip", r.value(a), 1, 1000));
    else if (is_flag(a, "--seed")) spec.seed = static_cast<std::uint64_t>(int_arg("--seed", r.value(a), 0, INT64_MAX));
    else if (is_flag(a, "--copies")) copies = int_arg("--copies", r.value(a), 1, 1'000'000);
    else if (a == "--chained") chained = true;
    else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option \"" + a + "\"");
    else if (input.empty() && mode == "replicate") input = a;
    else throw UsageError("unexpected argument \"" + a + "\"");
  }
  if (out_path.empty()) throw UsageError("missing -o OUT.json");
  Graph g;
  if (mode == "layered") {
    g = generate_layered(spec);
  } else if (mode == "replicate") {
    if (input.empty()) throw UsageError("replicate: missing GRAPH.json");
    if (copies == 0) throw UsageError("replicate: missing --copies K");
    Graph base = load_graph_file(input);
    if (static_cast<std::int64_t>(base.nodes.size()) * copies > 50'000'000) throw UsageError("replicate: more than 50M nodes");
    g = replicate_graph(base, static_cast<std::int32_t>(copies), chained);
  } else {
    throw UsageError("unknown generator \"" + mode + "\" (layered or replicate)");
  }
  write_output(out_path, write_graph_json(g));
  std::printf("wrote %s: %d nodes, %d buffers\n", out_path.c_str(), g.num_nodes(), g.num_buffers());
  return 0;
}

}  // namespace schedlab::cli
