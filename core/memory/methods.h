// core/memory — memory-ordering methods as interchangeable functions of one
// type, registered by name (the CLI, the WASM API and the page list the same
// table), and reorder_for_peak_memory, which runs the chosen ones and keeps
// the lowest peak (ties: the earlier method in the table).
#pragma once

#include <span>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph/graph.h"
#include "core/memory/estimate.h"
#include "core/memory/planning_info.h"

namespace schedlab {

// A method reads the planning info and the order the info was built from and
// returns a new order of all nodes.
using MemoryMethodFn = Order (*)(const Graph&, const MemoryPlanningInfo&, const Order&);

struct MemoryMethod {
  std::string_view name;
  std::string_view summary;
  MemoryMethodFn run;
  bool is_default = false;  // in Inductor's default list
};

// Every method's function, from the one table (methods.def).
#define SCHEDLAB_MEMORY_METHOD(name, function, is_default, summary) \
  Order function(const Graph& g, const MemoryPlanningInfo& info, const Order& input);
#include "core/memory/methods.def"
#undef SCHEDLAB_MEMORY_METHOD

std::span<const MemoryMethod> memory_methods();
const MemoryMethod* find_memory_method(std::string_view name);
std::vector<std::string> default_memory_methods();  // the rows marked default, in table order

struct MemoryMethodResult {
  std::string method;
  Order order;             // empty when the method failed
  std::int64_t peak = 0;
  std::string error;       // why the method produced no valid order (InvalidOrderPolicy::Skip only)
};

// What reorder_for_peak_memory does with a method whose order is not a valid
// schedule (possible only on hand-written graphs, e.g. a node that mutates a
// buffer it does not read). Inductor 2.11's open-source build re-raises from
// its try/except (`if not is_fbcode(): raise`); fbcode builds skip the method.
enum class InvalidOrderPolicy { Raise, Skip };

struct MemoryPlan {
  std::vector<MemoryMethodResult> methods;  // in the order asked
  std::size_t chosen = 0;                   // index into methods
  PeakMemoryEstimate estimate;              // of the chosen order
  std::vector<LiveBuffer> peak_live;        // alive at the chosen order's peak step
  // The planning info of the input order, which every later estimate of an
  // order of this graph reads (computing it again costs as much as a method).
  std::shared_ptr<const MemoryPlanningInfo> info;
  const Order& order() const { return methods[chosen].order; }
};

// Throws OptionError for an unknown method name or an empty list, and Error
// naming the method and the node when a method's order is invalid (Raise).
MemoryPlan reorder_for_peak_memory(const Graph& g, const Order& input, const std::vector<std::string>& methods,
                                   InvalidOrderPolicy on_invalid = InvalidOrderPolicy::Raise);

}  // namespace schedlab
