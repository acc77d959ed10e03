// libFuzzer target: the measured-trace reader (`plan --measured-trace`,
// core/io/trace_reader.h). Any byte string either loads or is refused with
// schedlab::Error; anything else is a finding. A trace it takes has only
// finite times, and every step at least one kernel.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/io/trace_reader.h"
#include "core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const schedlab::MeasuredTrace t = schedlab::load_measured_trace(text, "fuzz.trace.json");
    for (const auto& step : t.steps) {
      if (step.empty()) std::abort();
      for (const schedlab::TraceKernel& k : step)
        if (!std::isfinite(k.start_us) || !std::isfinite(k.duration_us) || k.duration_us < 0) std::abort();
    }
  } catch (const schedlab::Error&) {
    // refused cleanly: the contract
  }
  return 0;
}
