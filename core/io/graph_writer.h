// core/io — writing a Graph back as schedgraph/1 (the inverse of the
// loader: load(write(g)) gives back g, field for field). Used by `fuse`
// (post-fusion graphs) and `gen` (generated graphs). It streams into one
// string, so a million-node graph costs its text and no DOM.
#pragma once

#include <cstdio>
#include <string>

#include "core/graph/graph.h"

namespace schedlab {

// Compact JSON (one line), newline-terminated.
std::string write_graph_json(const Graph& g);
// The same, streamed into `out` as it is made (an Error naming `name` when a
// write fails): a post-fusion graph of 300k nodes is 100 MB of text.
void write_graph_json(const Graph& g, std::FILE* out, const std::string& name);

}  // namespace schedlab
