// core/io — reading measured files (schedmeasured/1, docs/schedmeasured-1.md)
// and the folders of them that `fit-profile` and `accuracy` take, under the
// reader policy of core/io/json_input.h (at most kMaxMeasuredBytes, nesting
// bounded, every message naming the file and the field).
//
// Contract: load_measured() refuses anything malformed with an Error naming
// the place (`x.measured.json: kernels[3].duration_us: expected a finite
// number of µs in 0..1e12`). Every time it keeps is at most kMaxMeasuredUs
// and every count at most kMaxMeasuredCount, so that any sum the fit and the
// accuracy report make over a file (at most 2^28 kernels) stays finite and
// exact.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/measure/measured.h"

namespace schedlab {

inline constexpr double kMaxMeasuredUs = 1e12;                             // 11.6 days
inline constexpr std::int64_t kMaxMeasuredCount = std::int64_t{1} << 53;  // bytes, symbol values

// `where` prefixes every error (normally the file's path).
MeasuredGraph load_measured(std::string_view json_text, const std::string& where);
// PATH or "-": read under the policy, then load_measured.
MeasuredGraph load_measured_file(const std::string& path);

// Loads `<case>.measured.json` and its graph: the `<case>.post.json` beside
// it (a GPU whose Inductor compiled the graph differently keeps its own
// there), else the first in `graph_dirs` (tests/data/exported/ for the zoo);
// checks they match. Throws Error naming the file.
MeasuredCase load_measured_case(const std::string& measured_path, const std::vector<std::string>& graph_dirs = {});

// The wrapper's operations timed one by one on one GPU's host
// (python/zoo/wrapper_host_probe.py: {"us_per_call": {"tuple_item": µs,
// "assert_size_stride": µs, ...}, "host_probe_us": [µs, ...]}, under the
// measured files' limit): what an item of a multi-output result costs, its
// tuple index and its size and stride assert, and the host probes read
// while they were timed. Errors name `where` and the field.
WrapperItemCost load_wrapper_item_cost(std::string_view json_text, const std::string& where);
WrapperItemCost load_wrapper_item_cost_file(const std::string& path);

// Every `*.measured.json` under the folders (core/io/folder_walk.h: links
// to folders are not followed, each file counted once), sorted by path, but
// those whose path contains one of `excludes` (a hold-out list).
std::vector<std::string> find_measured_files(const std::vector<std::string>& dirs, const std::vector<std::string>& excludes = {});

}  // namespace schedlab
