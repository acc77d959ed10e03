// core/io — reading schedgraph/1 into a validated Graph (docs/schedgraph-1.md).
//
// Contract: either a fully validated Graph comes back, or schedlab::Error is
// thrown with a one-line message that names the place of the first problem.
// Nothing is half-loaded. Unknown fields are ignored (the format grows
// additively). Nesting deeper than kMaxJsonDepth is refused before it can
// exhaust the stack.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/graph/graph.h"
#include "core/io/json_doc.h"
#include "core/io/json_input.h"

namespace schedlab {

Graph load_graph(std::string_view json_text);
// The same from a document in hand (a JsonDocBuilder's: the Python bindings
// read a dict this way, without JSON text).
Graph read_graph(const JsonValue& root);
// PATH or "-" for stdin, under the reader policy of core/io/json_input.h.
Graph load_graph_file(const std::string& path, std::uint64_t max_bytes = std::uint64_t{4} << 30);

// Reads a whole JSON input under the reader policy (core/io/json_input.h)
// with the graphs' default limit; throws Error naming the path when it
// cannot.
std::string read_text_file(const std::string& path);

}  // namespace schedlab
