// schedlab validate: load and check a schedgraph/1 file (core/io's reader,
// core/graph's validate) and print its counts.
#include <cstdio>

#include "cli/commands.h"
#include "core/io/graph_reader.h"
#include "core/util/error.h"

namespace schedlab::cli {

int cmd_validate(const Args& args) {
  ArgReader r(args);
  std::uint64_t max_input = kDefaultMaxInputBytes;
  std::string path;
  while (!r.done()) {
    std::string a = r.next();
    if (is_flag(a, "--max-input-bytes")) max_input = max_input_bytes_arg(r.value(a));
    else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option \"" + a + "\"");
    else if (path.empty()) path = a;
    else throw UsageError("expected exactly one GRAPH.json");
  }
  if (path.empty()) throw UsageError("expected exactly one GRAPH.json");
  Graph g = load_graph_file(path, max_input);
  std::size_t deps = 0;
  for (const auto& n : g.nodes) deps += n.reads.size();
  std::printf("%s: ok: schedgraph/1 \"%s\", %d nodes, %d buffers, %d inputs, %zu reads, %zu outputs%s\n", path.c_str(), g.name.c_str(),
              g.num_nodes(), g.num_buffers() - g.num_inputs, g.num_inputs, deps, g.outputs.size(), g.is_pre_fusion() ? "" : ", fused");
  exit_without_freeing();
  return 0;
}

}  // namespace schedlab::cli
