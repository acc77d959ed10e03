// schedlab — command-line front end over core/ (see README.md). Each command
// is a CLI11 subcommand defined in its own file (cli/cmd_*.cpp); `schedlab
// --help` and `schedlab CMD --help` are generated from those definitions.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/commands.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace schedlab::cli {
namespace {

constexpr std::array kCommands{
    Command{"plan", "order the graph's nodes for lower peak memory (and overlap); write schedplan/1", define_plan},
    Command{"validate", "load and check a schedgraph/1 file; print a one-line summary", define_validate},
    Command{"gen", "generate large test graphs: layered DAGs, replicas of a graph", define_gen},
    Command{"bench", "time loading and each memory method", define_bench},
    Command{"simulate", "two-stream timing of one rank, or of several side by side: step time, exposed communication, compute idle, the slowest rank", define_simulate},
    Command{"gen-dist", "generate FSDP-style or tensor-parallel graphs for overlap benchmarks", define_gen_dist},
    Command{"fuse", "fuse a pre-fusion graph as Inductor does; write the post-fusion schedgraph/1, or say why A and B do not fuse", define_fuse},
    Command{"fit-profile", "fit a hardware profile's time model to measured exports (*.measured.json beside *.post.json)", define_fit_profile},
    Command{"accuracy", "estimated against measured per graph and per kernel class, with a scatter plot", define_accuracy},
    Command{"bucket-caps", "per collective kind, the largest bucket the model still gains from on a profile (apply sizes Inductor's FX bucketing by it)", define_bucket_caps},
};

}  // namespace

void exit_without_freeing() {
#ifndef __EMSCRIPTEN__  // under WASM it returns normally
  std::fflush(nullptr);
  std::_Exit(0);
#endif
}

}  // namespace schedlab::cli

int main(int argc, char** argv) {
  using namespace schedlab::cli;
#if defined(__GLIBC__)
  // A run allocates a few large arrays and many small strings, then exits:
  // keep freed memory in the process instead of handing it back to the
  // kernel and faulting it in again (a fifth of the load time otherwise).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
  CLI::App app{"schedlab: Inductor's scheduling decisions (fusion, memory ordering, comm reordering) on schedgraph/1 files", "schedlab"};
  configure_app(app);
  app.require_subcommand(1);
  app.footer("`schedlab COMMAND --help` lists a command's options. Exit codes: 0 ok, 1 bad input, 2 bad usage.");
  std::vector<std::function<int()>> runs;
  for (const Command& c : kCommands) {
    CLI::App* sub = app.add_subcommand(std::string(c.name), std::string(c.summary));
    configure_app(*sub);
    runs.push_back(c.define(*sub));
  }
  const Args args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  const std::string command = args.front();
  bool known = command.rfind("-", 0) == 0;
  for (const Command& c : kCommands) known |= c.name == command;
  if (!known) {
    std::fprintf(stderr, "schedlab: unknown command \"%s\" (commands: %s; see schedlab --help)\n", command.c_str(), [&] {
      std::string names;
      for (const Command& c : kCommands) names += (names.empty() ? "" : ", ") + std::string(c.name);
      return names;
    }().c_str());
    return 2;
  }
  const std::string prefix = command.rfind("-", 0) == 0 ? "schedlab" : "schedlab " + command;
  return run_with_exit_codes(prefix, [&] {
    if (!parse_command_line(app, args)) return 0;  // --help
    for (std::size_t i = 0; i < kCommands.size(); ++i)
      if (app.got_subcommand(std::string(kCommands[i].name))) return runs[i]();
    return 0;
  });
}
