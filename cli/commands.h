// cli — thin adapters from command lines to core/. Each command is one file
// defining its options on a CLI11 subcommand (cli/common/command_line.h) and
// one row in the table in main.cpp. A command returns its exit code: 0 ok,
// 1 bad input (graph refused), 2 bad usage.
#pragma once

#include <functional>
#include <string_view>

#include "cli/common/command_line.h"
#include "core/io/files.h"

namespace schedlab::cli {

// Declares a command's options on its subcommand `app`; the function it
// returns runs the command once they are parsed.
using DefineCommand = std::function<int()> (*)(CLI::App& app);

struct Command {
  std::string_view name;
  std::string_view summary;  // one line: what it does
  DefineCommand define;
};

std::function<int()> define_plan(CLI::App& app);
std::function<int()> define_validate(CLI::App& app);
std::function<int()> define_gen(CLI::App& app);
std::function<int()> define_bench(CLI::App& app);
std::function<int()> define_simulate(CLI::App& app);
std::function<int()> define_gen_dist(CLI::App& app);
std::function<int()> define_fuse(CLI::App& app);
std::function<int()> define_fit_profile(CLI::App& app);
std::function<int()> define_accuracy(CLI::App& app);
std::function<int()> define_bucket_caps(CLI::App& app);

// Outputs go through core/io's write_output / write_outputs (files.h):
// temporaries, both-or-neither, non-regular targets refused.

// Ends the process successfully without running destructors: freeing a
// 100k-node graph and its plan node by node costs a tenth of a whole `plan`
// run, and the operating system reclaims it all at once. Call only once every
// output is written.
void exit_without_freeing();

}  // namespace schedlab::cli
