// core/measure — a graph's measurements on a real GPU (schedmeasured/1,
// docs/schedmeasured-1.md) as plain data, and their check against the graph
// they measure. core/io/measured_reader.h reads them.
//
// Contract: check_matches() refuses a file measured on another graph (name,
// or a kernel mapped to a node the graph does not have). The fit
// (core/measure/fit.h) and the accuracy report read only what is here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/alloc/caching_allocator.h"
#include "core/graph/graph.h"

namespace schedlab {

struct MeasuredKernel {
  std::string name;
  std::string node;    // the post graph's node that launched it; empty when unmapped
  std::string kernel_class;
  double start_us = 0, duration_us = 0;
  std::int64_t stream = 0;
};

struct MeasuredGraph {
  std::string graph;        // the post graph's name
  std::string device, device_kind;
  int sm_count = 0;  // env.sm_count; 0 when the file does not say
  std::int64_t l2_cache_bytes = 0;  // env.l2_cache_bytes; 0 when the file does not say
  std::int64_t peak_allocated_bytes = 0, peak_reserved_bytes = 0;
  std::int64_t allocated_before_bytes = 0, reserved_before_bytes = 0, freeable_inputs_bytes = 0;
  std::vector<MeasuredKernel> kernels;  // one call, launch order
  double kernel_time_us = 0;
  double wall_time_us = 0;
  std::optional<double> host_time_us;  // the wrapper's time for the call to return, when measured
  std::optional<double> wall_time_us_cudagraphs;
  // The measuring host's speed behind wall_time_us and host_time_us (the
  // zoo's probe, µs): host_probe_wall_us, else host_probe_full_speed_us,
  // when the file records either.
  std::optional<double> host_probe_us;
  std::map<std::string, std::int64_t> unbacked;  // observed data-dependent symbols
  // Per node: its kernel's workspace observed on this GPU (the exporter
  // also writes it into the post graph; the graph beside a file measured on
  // another GPU may hold that GPU's).
  std::map<std::string, std::int64_t> workspace_bytes;
  // memory.allocator_at_start: the measuring process's cache just before
  // the measured call (after empty_cache), when the file records it; the
  // accuracy report replays memory as executed from it.
  std::optional<AllocatorState> allocator_at_start;
};

// A measured file and the post graph it measured, as the fit and the
// accuracy report take them (core/io/measured_reader.h load_measured_case).
struct MeasuredCase {
  std::string path;  // of the measured file, for errors and reports
  Graph graph;       // the post graph it measured
  MeasuredGraph measured;
};

// What the wrapper pays for an item of a multi-output result (`buf3 =
// buf2[0]` and its size and stride assert), timed alone on a GPU's host,
// and that host's speed while it was timed (its host probes,
// docs/cost-model.md "The host").
struct WrapperItemCost {
  double item_us = 0;
  std::vector<double> host_probe_us;  // not empty
};

// Throws Error "<where>: ..." when `m` was not measured on `g`.
void check_matches(const MeasuredGraph& m, const Graph& g, const std::string& where);

// Sets the graph's nodes' `workspace_bytes` to the ones observed on the GPU
// `m` was measured on, so that memory as executed prices this GPU's
// kernels. `m` must match `g` (check_matches).
void apply_observed_workspaces(const MeasuredGraph& m, Graph& g);

}  // namespace schedlab
