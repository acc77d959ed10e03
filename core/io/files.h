// core/io — reading input files and writing output files, with the rules
// every command keeps (docs/architecture.md):
//
// Inputs: a regular file (a symlink to one is fine) or "-" for stdin;
// directories, devices, FIFOs and sockets are refused by name, and so is
// anything larger than the limit (stdin included, checked as it is read).
// JSON inputs go through core/io/json_input.h, which sets the limit per
// kind of file and refuses what cannot be JSON as it reads. Every input
// read is remembered by identity (device and inode).
//
// Outputs: each is written to a temporary in the target's folder and renamed
// over the target only when complete; a target that exists and is not a
// regular file (device, FIFO, symlink, directory) is refused; the
// temporaries are removed on every terminating signal (SIGHUP, SIGINT,
// SIGTERM, SIGPIPE, ...); outputs written together (a plan and its trace)
// appear both or neither. Refused before anything is written (OptionError):
// an empty path, "-" (stdout) for more than one output, two outputs on one
// file, and an output that is a file this process read (compared by
// identity, not by name: `plan X -o ./X`, a hard link, `plan - -o X < X`).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab {

inline constexpr std::uint64_t kDefaultMaxInputBytes = std::uint64_t{4} << 30;

// Called with each chunk as it is read (before it is kept), so that an
// input can be refused before it is whole; throws Error to stop.
using ChunkCheck = std::function<void(std::string_view chunk)>;

// Throws Error naming the path (and `limit_name`, what sets the limit, when
// the input is larger).
std::string read_input(const std::string& path, std::uint64_t max_bytes = kDefaultMaxInputBytes, const ChunkCheck& check = {},
                       std::string_view limit_name = "--max-input-bytes");

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

// The output rules above that need no writing, for a command to check its
// outputs before its work: throws OptionError.
void check_outputs(const std::vector<std::string>& paths);

// Writes every output, or none (see above). Two outputs on one path are a
// OptionError; anything else that fails is an Error naming the path.
// Text already made, as an OutputStream.
OutputStream text_output(std::string path, std::string text);
void write_outputs(const std::vector<OutputStream>& outputs);
void write_outputs(const std::vector<OutputText>& outputs);
void write_output(const std::string& path, const std::string& text);

}  // namespace schedlab
