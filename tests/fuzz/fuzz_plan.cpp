// libFuzzer target: the whole pipeline on text, as the WASM module and the
// CLI run it (load, front end, memory methods, comm passes, simulation,
// serialization). The input is split at its first NUL byte into the graph
// and the options JSON, so options are fuzzed too; without a NUL a fixed set
// of options turns every comm pass on.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/io/plan_writer.h"
#include "core/util/error.h"

namespace {
constexpr std::string_view kAllPasses =
    R"({"comm_passes": "sink_waits,raise_comms,reorder_compute_for_overlap,decide_global_ordering_of_comms,)"
    R"(reorder_communication_preserving_peak_memory,sink_waits_iterative,overlap_schedule"})";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view graph = input, options = kAllPasses;
  if (auto nul = input.find('\0'); nul != std::string_view::npos) {
    graph = input.substr(0, nul);
    options = input.substr(nul + 1);
  }
  try {
    (void)schedlab::plan_json(graph, options);
  } catch (const schedlab::Error&) {
    // refused cleanly (OptionError derives from Error)
  }
  return 0;
}
