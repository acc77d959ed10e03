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

// An option handed to the core is invalid: an unknown method, pass, knob or
// hardware name, a value out of range, a malformed options document. The core
// does not know how it was given (a flag, a WASM argument, a URL parameter);
// each front end says how to report it (the CLI exits 2 instead of 1).
struct OptionError : Error {
  using Error::Error;
};

}  // namespace schedlab
