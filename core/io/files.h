// core/io — reading input files and writing output files, with the rules
// every command keeps (docs/architecture.md):
//
// Inputs: a regular file (a symlink to one is fine) or "-" for stdin;
// directories, devices, FIFOs and sockets are refused by name, and so is
// anything larger than the limit (`--max-input-bytes`, 4 GiB by default).
//
// Outputs: each is written to a temporary in the target's folder and renamed
// over the target only when complete; a target that exists and is not a
// regular file (device, FIFO, symlink, directory) is refused; the
// temporaries are removed on SIGINT/SIGTERM; outputs written together
// (a plan and its trace) appear both or neither; two outputs on one path
// are refused. "-" writes to stdout.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace schedlab {

inline constexpr std::uint64_t kDefaultMaxInputBytes = std::uint64_t{4} << 30;

// Throws Error naming the path.
std::string read_input(const std::string& path, std::uint64_t max_bytes = kDefaultMaxInputBytes);

struct OutputText {
  std::string path;
  std::string text;
};

// An output written as it is produced, so that a large plan never exists
// whole in memory: `write` streams the content into `out` (the temporary, or
// stdout for "-"), naming `name` in the Error it throws when a write fails.
struct OutputStream {
  std::string path;
  std::function<void(std::FILE* out, const std::string& name)> write;
};

// Writes every output, or none (see above). Two outputs on one path are a
// OptionError; anything else that fails is an Error naming the path.
// Text already made, as an OutputStream.
OutputStream text_output(std::string path, std::string text);
void write_outputs(const std::vector<OutputStream>& outputs);
void write_outputs(const std::vector<OutputText>& outputs);
void write_output(const std::string& path, const std::string& text);

}  // namespace schedlab
