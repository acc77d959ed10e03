// core/util — the one error type every layer throws on bad input.
//
// The message is complete and user-facing: it names the place
// (`nodes[3] "op7": reads[0]: unknown buffer "bufX"`). The CLI prints it and
// exits 1; the WASM bindings rethrow it as a JS Error with the same text.
#pragma once

#include <stdexcept>
#include <string>

namespace schedlab {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Input that is well-formed JSON but breaks a rule (exit code 2 in the CLI
// distinguishes usage errors; both are "refused cleanly").
struct UsageError : Error {
  using Error::Error;
};

}  // namespace schedlab
