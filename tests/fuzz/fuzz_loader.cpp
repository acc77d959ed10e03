// libFuzzer target: the schedgraph/1 loader. Any byte string either loads as
// a validated Graph or is refused with schedlab::Error; anything else (another
// exception, a crash, a sanitizer report, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/io/graph_reader.h"
#include "core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    schedlab::Graph g = schedlab::load_graph(text);
    (void)g;
  } catch (const schedlab::Error&) {
    // refused cleanly: the contract
  }
  return 0;
}
