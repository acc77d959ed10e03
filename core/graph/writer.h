// core/graph — writing a Graph back as schedgraph/1 (docs/schedgraph-1.md).
//
// Contract: what load_graph reads back is the same Graph (names, sizes, deps,
// members, operations). Fields at their defaults are omitted except the
// required ones, so a written file is as small as the format allows.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/graph/graph.h"

namespace schedlab {

nlohmann::json graph_to_json(const Graph& g);
// Pretty-printed (1-space indent) with a trailing newline.
std::string write_graph_json(const Graph& g);

}  // namespace schedlab
