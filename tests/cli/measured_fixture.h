// A folder holding a real exported graph and a SYNTHETIC measurement of it
// (made up for the command line's sake, not a GPU measurement), for the
// command-line tests of fit-profile and accuracy.
#pragma once

#ifndef __EMSCRIPTEN__
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace schedlab::test {

// A folder holding one exported graph and a synthetic measurement of it:
// one kernel per launching node, 10 us each, back to back.
inline std::filesystem::path synthetic_measured_dir(const std::string& tag, const std::string& graph_name_override = "") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("schedlab_cli_measure_" + tag);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string src = schedlab::test::data_path("exported/transformer_s_0_fwd.post.json");
  std::filesystem::copy_file(src, dir / "case_0_fwd.post.json");
  std::ifstream in(src);
  auto g = nlohmann::json::parse(in);
  nlohmann::json kernels = nlohmann::json::array();
  double t = 0;
  for (const auto& n : g["nodes"]) {
    if (n["kind"] == "wait" || (n["kind"] == "extern" && !n.contains("kernel"))) continue;
    const char* cls = n["kind"] == "pointwise" ? "triton_pointwise" : n["kind"] == "reduction" ? "triton_reduction" : "gemm";
    kernels.push_back({{"name", "k"}, {"node", n["name"]}, {"class", cls}, {"start_us", t}, {"duration_us", 10.0}, {"stream", 7}});
    t += 12;
  }
  nlohmann::json m = {{"format", "schedmeasured/1"},
                      {"graph", graph_name_override.empty() ? g["name"] : nlohmann::json(graph_name_override)},
                      {"env", {{"device", "synthetic"}, {"device_kind", "h100-sxm"}}},
                      {"memory", {{"allocated_before_bytes", 0}, {"freeable_inputs_bytes", 0}, {"peak_allocated_bytes", 1 << 20},
                                  {"reserved_before_bytes", 0}, {"peak_reserved_bytes", 20 << 20}}},
                      {"kernels", kernels},
                      {"kernel_time_us", 10.0 * kernels.size()},
                      {"wall_time_us", t + 40},
                      {"wall_time_us_cudagraphs", t},
                      {"unbacked", nlohmann::json::object()}};
  std::ofstream(dir / "case_0_fwd.measured.json") << m.dump();
  return dir;
}


}  // namespace schedlab::test
#endif
