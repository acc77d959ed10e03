// Shared helpers for the suite: fixture paths and small graph builders.
// The suite is a unity build (CMakeLists.txt): a helper that two test files
// need lives here once, and a file's own helpers get names no other test
// file uses.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#ifndef __EMSCRIPTEN__
#include <sys/wait.h>
#endif

#include "core/graph/graph.h"
#include "core/cost/cost_model.h"
#include "core/io/graph_reader.h"
#include "core/plan/plan.h"
#include "core/util/error.h"

namespace schedlab::test {

inline std::string data_path(const std::string& rel) { return std::string(SCHEDLAB_TEST_DATA) + "/" + rel; }

inline constexpr std::int64_t MiB = 1 << 20;

// The message of the schedlab::Error that `f` throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A small seeded generator (SplitMix64) for random graphs: the same graphs on
// every platform, unlike std's distributions.
struct SplitMix {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  bool chance(int percent) { return below(100) < percent; }
};

// Names of the nodes of `order`, for readable assertions.
inline std::vector<std::string> names(const Graph& g, const Order& order) {
  std::vector<std::string> out;
  for (NodeId v : order) out.push_back(g.nodes[v].name);
  return out;
}

// The ids of the nodes named `names`, in that order (kNone for an unknown name).
inline Order order_of(const Graph& g, const std::vector<std::string>& names) {
  Order out;
  for (const auto& n : names) out.push_back(g.find_node(n));
  return out;
}

// Every case with Inductor's decisions: "inductor/<case>" and
// "exported/<case>" for each <case>.expected.json under tests/data.
inline std::vector<std::string> fixture_cases() {
  std::vector<std::string> out;
  const std::string suffix = ".expected.json";
  for (const char* dir : {"inductor", "exported"}) {
    std::filesystem::path root = data_path(dir);
    if (!std::filesystem::exists(root)) continue;
    for (const auto& e : std::filesystem::directory_iterator(root)) {
      std::string f = e.path().filename().string();
      if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0)
        out.push_back(std::string(dir) + "/" + f.substr(0, f.size() - suffix.size()));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every .post.json under the folders of tests/data (recursively) whose
// graph has a collective, sorted; schedlab's own emitted graphs (a
// `schedlab` folder) left out: they are plans' outputs, not Inductor's.
inline std::vector<std::string> real_graphs_with_collectives(const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  const std::string suffix = ".post.json";
  for (const std::string& dir : dirs) {
    const std::filesystem::path root = data_path(dir);
    if (!std::filesystem::exists(root)) continue;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      const std::string f = e.path().string();
      if (f.size() <= suffix.size() || f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      if (f.find("/schedlab/") != std::string::npos) continue;
      const Graph g = load_graph_file(f);
      if (std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.kind == NodeKind::Collective; })) out.push_back(f);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The plan of a graph file with these comm passes on a built-in profile
// (every other option the default).
inline PlanResult plan_file(const std::string& path, const std::vector<std::string>& passes, const char* hardware) {
  PlanOptions opts;
  opts.hardware = builtin_profile(hardware);
  opts.comm_passes = passes;
  return run_plan(load_graph_file(path), opts);
}

#ifndef __EMSCRIPTEN__
// Runs the real `schedlab` binary with `args` (shell words); its exit code
// and stdout+stderr together.
struct CliRun {
  int code = -1;
  std::string out;
};

inline CliRun run_cli(const std::string& args) {
  std::string cmd = std::string(SCHEDLAB_CLI) + " " + args + " 2>&1";
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}
#endif

}  // namespace schedlab::test
