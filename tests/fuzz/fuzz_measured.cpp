// libFuzzer target: the measured-file reader (schedmeasured/1, what
// fit-profile and accuracy read). Any byte string either loads or is refused
// with schedlab::Error; anything else is a finding. A file it takes has its
// times summed as the fit and the accuracy report sum them: the sums must
// stay finite (the reader's bounds, core/io/measured_reader.h).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/io/measured_reader.h"
#include "core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const schedlab::MeasuredGraph m = schedlab::load_measured(text, "fuzz.measured.json");
    double sum = m.kernel_time_us + m.wall_time_us;
    for (const schedlab::MeasuredKernel& k : m.kernels) sum += k.start_us + k.duration_us;
    if (!std::isfinite(sum)) std::abort();
  } catch (const schedlab::Error&) {
    // refused cleanly: the contract
  }
  return 0;
}
