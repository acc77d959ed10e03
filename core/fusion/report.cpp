// Whether a graph still needs the front end (its report is written by
// core/io/plan_writer.cpp).
#include "core/fusion/fusion.h"

namespace schedlab {

bool needs_fusion(const Graph& g) { return g.is_pre_fusion() && g.operations.empty(); }

}  // namespace schedlab
