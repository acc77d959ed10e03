// core/graph — assembling a Graph in code, and the one validation every
// Graph passes (loaded, fused or generated).
//
// Contract: GraphBuilder hands out dense ids as things are added (inputs
// first, then each node with its output buffers, in order), keeps the name
// indexes current so later items can refer to earlier ones by name, and
// `finish()` runs validate(). A duplicate name is refused when it is added,
// with the place the loader would name (`nodes[3] "op7": outputs[0].name`).
// validate() checks every rule of schedgraph/1 that is not about JSON syntax
// (byte sums, mutation targets, collectives, topological order, ...) and
// throws Error naming the place of the first violation.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/graph/graph.h"

namespace schedlab {

// The format's default for an input without `freeable`: parameters, RNG
// states and tangents are not freeable, everything else is.
bool default_freeable(std::string_view input_name);

// `"name"`, escaped and cut at 120 characters: how every error quotes a name
// taken from a file (graphs, profiles, measured files). Control characters
// and bytes that are not UTF-8 become `?`: a message is one line and passes
// nothing to the terminal.
std::string quoted_name(std::string_view s);
// The place of an object's member in messages: `where.key` for a plain key
// (letters, digits, `_`, `-`, `.`), else `where."key"` through quoted_name,
// so that a key holding a newline or an escape code stays one line.
std::string member_place(std::string_view where, std::string_view key);

class GraphBuilder {
 public:
  GraphBuilder();
  // Header fields (name, source, world_size) are set directly.
  Graph& graph() { return g_; }
  void reserve(std::size_t buffers, std::size_t nodes);

  // Inputs come before every node output. `freeable` defaults by name.
  BufId add_input(std::string name, std::int64_t bytes, std::optional<bool> freeable = std::nullopt);
  // A node without outputs yet; the body (reads, writes, ...) may be filled
  // later through node(). `n.outputs` must be empty.
  NodeId add_node(Node n);
  // An output buffer of `producer`, the most recently added node.
  BufId add_node_output(NodeId producer, Buffer b);
  void add_graph_output(BufId b) { g_.outputs.push_back(b); }
  void add_operation(Operation op) { g_.operations.push_back(std::move(op)); }

  Node& node(NodeId v) { return g_.nodes[v]; }
  Buffer& buffer(BufId b) { return g_.buffers[b]; }
  BufId find_buffer(std::string_view name) const { return g_.find_buffer(name); }
  // Throws Error("unknown buffer \"x\"").
  BufId require_buffer(std::string_view name) const;

  // Validates and hands the graph over (the builder is empty afterwards).
  Graph finish();

 private:
  Graph g_;
};

// Indexes the names when the indexes are not current (graphs filled field by
// field) and checks the graph; throws Error naming the place.
void validate(Graph& g);

}  // namespace schedlab
