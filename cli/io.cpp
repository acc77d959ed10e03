#include <cstdio>
#include <cstdlib>
#include <limits>

#include "cli/commands.h"
#include "core/io/options.h"
#include "core/util/error.h"

namespace schedlab::cli {

void exit_without_freeing() {
#ifndef __EMSCRIPTEN__
  std::fflush(nullptr);
  std::_Exit(0);
#endif
}

std::uint64_t max_input_bytes_arg(const std::string& v) {
  return static_cast<std::uint64_t>(int_arg("--max-input-bytes", v, 1, std::numeric_limits<std::int64_t>::max()));
}

std::string ArgReader::value(const std::string& flag) {
  auto eq = flag.find('=');
  if (eq != std::string::npos) return flag.substr(eq + 1);
  if (done()) throw UsageError(flag + ": missing value");
  return next();
}

}  // namespace schedlab::cli
