// schedlab — command-line front end over core/ (see README.md).
#include <array>
#include <cstdio>
#include <exception>
#include <iostream>

#include "cli/commands.h"
#include "core/comms/passes.h"
#include "core/memory/methods.h"
#include "core/util/error.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace schedlab::cli {
namespace {

constexpr std::array kCommands{
    Command{"plan", "GRAPH.json [-o PLAN.json] [--memory-methods baseline,lpmf,bfs,dfs] [--comm-passes a,b] [--comm-knob NAME=VALUE] [--trace TRACE.json] [--no-fuse] [--skip-invalid-memory-methods] [--hardware NAME|FILE] [--runtime-source calibrated|runtime_us] [--format json|text] [--overlap-view]",
            "order the graph's nodes for lower peak memory (and overlap); write schedplan/1", cmd_plan},
    Command{"validate", "GRAPH.json|- [--max-input-bytes N]", "load and check a schedgraph/1 file; print a one-line summary", cmd_validate},
    Command{"gen", "layered|replicate ... -o OUT.json (see `schedlab gen --help`)", "generate large test graphs", cmd_gen},
    Command{"bench", "GRAPH.json [--repeat N] [--memory-methods ...]", "time loading and each memory method", cmd_bench},
    Command{"simulate", "GRAPH.json [--comm-passes a,b] [--compare] [--budget 0.2] [--trace TRACE.json] [--model-runtimes] [--runtime-source calibrated|runtime_us] [--hardware NAME|FILE] [--overlap-view]",
            "two-stream timing of one rank: step time, exposed communication, compute idle", cmd_simulate},
    Command{"gen-dist", "fsdp|tp -o OUT.json [--layers N] [--hidden H] [--tokens T] [--world-size W] [--microbatches M] [--no-backward]",
            "generate FSDP-style or tensor-parallel graphs for overlap benchmarks", cmd_gen_dist},
    Command{"fuse", "PRE.json [-o POST.json] [--groups] | PRE.json --explain A B",
            "fuse a pre-fusion graph as Inductor does; write the post-fusion schedgraph/1, or say why A and B do not fuse", cmd_fuse},
    Command{"fit-profile", "DIR... -o PROFILE.json [--graphs DIR]... [--base NAME|FILE] [--name NAME] [--exclude SUBSTRING]...",
            "fit a hardware profile's time model to measured exports (*.measured.json beside *.post.json)", cmd_fit_profile},
    Command{"accuracy", "DIR... --hardware NAME|FILE [--graphs DIR]... [--exclude SUBSTRING]... [--fake-collectives] [--svg OUT.svg] [--html OUT.html]",
            "estimated against measured per graph and per kernel class, with a scatter plot", cmd_accuracy},
};

// The names a command's lists take, from the registries' tables.
void print_registries(std::FILE* to) {
  std::string methods, passes;
  for (const auto& m : schedlab::memory_methods()) methods += (methods.empty() ? "" : ", ") + std::string(m.name);
  for (const auto& p : schedlab::comm_passes()) passes += (passes.empty() ? "" : ", ") + std::string(p.name);
  std::fprintf(to, "  memory methods: %s\n  comm passes: %s\n", methods.c_str(), passes.c_str());
}

void print_usage(std::FILE* to) {
  std::fprintf(to, "usage: schedlab COMMAND [ARGS]\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(to, "  %-9s %s\n  %-9s   %.*s\n", std::string(c.name).c_str(), std::string(c.usage).c_str(), "",
                                               static_cast<int>(c.summary.size()), c.summary.data());
}

}  // namespace
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
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string_view name = argv[1];
  Args args(argv + 2, argv + argc);
  for (const auto& c : kCommands) {
    if (c.name != name) continue;
    // `schedlab CMD --help`: the command's line from the table (gen has more to say).
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h") && c.name != "gen") {
      std::printf("usage: schedlab %s %s\n  %s\n", std::string(c.name).c_str(), std::string(c.usage).c_str(), std::string(c.summary).c_str());
      if (c.name == "plan" || c.name == "simulate" || c.name == "bench") print_registries(stdout);
      return 0;
    }
    try {
      return c.run(args);
    } catch (const schedlab::UsageError& e) {
      std::fprintf(stderr, "schedlab %s: %s\n", argv[1], e.what());
      return 2;
    } catch (const schedlab::Error& e) {
      std::fprintf(stderr, "schedlab %s: %s\n", argv[1], e.what());
      return 1;
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "schedlab %s: out of memory\n", argv[1]);
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "schedlab %s: internal error: %s\n", argv[1], e.what());
      return 3;
    }
  }
  std::fprintf(stderr, "schedlab: unknown command \"%s\"\n", argv[1]);
  print_usage(stderr);
  return 2;
}
