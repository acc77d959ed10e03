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

namespace schedlab {

inline constexpr int kMaxJsonDepth = 64;

Graph load_graph(std::string_view json_text);
// The same from a document in hand (a JsonDocBuilder's: the Python bindings
// read a dict this way, without JSON text).
Graph read_graph(const JsonValue& root);
// PATH or "-" for stdin, under the input rules of core/io/files.h.
Graph load_graph_file(const std::string& path, std::uint64_t max_bytes = std::uint64_t{4} << 30);

// Reads a whole input (files.h's read_input with the default limit); throws
// Error naming the path when it cannot.
std::string read_text_file(const std::string& path);

}  // namespace schedlab
