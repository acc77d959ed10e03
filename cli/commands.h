// cli — thin adapters from command lines to core/. Each command is one file
// and one entry in the table in main.cpp. A command returns its exit code:
// 0 ok, 1 bad input (graph refused), 2 bad usage.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/files.h"

namespace schedlab::cli {

using Args = std::vector<std::string>;

struct Command {
  std::string_view name;
  std::string_view usage;    // one line: arguments
  std::string_view summary;  // one line: what it does
  int (*run)(const Args& args);
};

int cmd_plan(const Args& args);
int cmd_validate(const Args& args);
int cmd_gen(const Args& args);
int cmd_bench(const Args& args);
int cmd_simulate(const Args& args);
int cmd_gen_dist(const Args& args);
int cmd_fuse(const Args& args);
int cmd_fit_profile(const Args& args);
int cmd_accuracy(const Args& args);

// Outputs go through core/io's write_output / write_outputs (files.h):
// temporaries, both-or-neither, non-regular targets refused.

// Ends the process successfully without running destructors: freeing a
// 100k-node graph and its plan node by node costs a tenth of a whole `plan`
// run, and the operating system reclaims it all at once. Call only once every
// output is written. (Under WASM it returns normally.)
void exit_without_freeing();

// `a` is `flag` or `flag=VALUE`: option names match exactly, never by prefix.
inline bool is_flag(std::string_view a, std::string_view flag) {
  return a == flag || (a.size() > flag.size() && a.substr(0, flag.size()) == flag && a[flag.size()] == '=');
}

// `--max-input-bytes N` (every command that reads a graph).
std::uint64_t max_input_bytes_arg(const std::string& v);

// Small argument reader: flags with values, switches, positionals.
class ArgReader {
 public:
  explicit ArgReader(const Args& args) : args_(args) {}
  bool done() const { return i_ >= args_.size(); }
  const std::string& peek() const { return args_[i_]; }
  std::string next() { return args_[i_++]; }
  // Value of the flag just read (`--x v` or `--x=v`).
  std::string value(const std::string& flag);
  bool is_flag() const { return !done() && args_[i_].size() > 1 && args_[i_][0] == '-'; }

 private:
  const Args& args_;
  std::size_t i_ = 0;
};

}  // namespace schedlab::cli
