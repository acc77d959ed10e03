// `--measured-trace` through the real CLI: the measured costs go through the
// plan's one pricing stage, so simulate --compare's rows read what plan and
// simulate --comm-passes report with the same traces; a bad trace is one
// line naming the file and the field, with no plan left behind.
#include <catch2/catch.hpp>

#ifndef __EMSCRIPTEN__
#include <filesystem>
#include <sstream>
#include <string>

#include "tests/test_util.h"

using schedlab::test::data_path;
using schedlab::test::run_cli;

namespace {

const std::string kGraph = data_path("dist4/steps/run1/fsdp/default/fsdp_0_fwd.post.json");
const std::string kTrace = data_path("dist4/steps/run1/fsdp/default/measured.rank0.trace.json");

// The line of simulate's table that starts with `label`.
std::string row(const std::string& out, const std::string& label) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(label, 0) == 0) return line.substr(line.find_first_not_of(' ', label.size()));
  return "(no row " + label + ")";
}

}  // namespace

TEST_CASE("cli --measured-trace: simulate --compare rows equal simulate --comm-passes with the same traces", "[cli][measured_costs]") {
  const auto compared = run_cli("simulate " + kGraph + " --no-fuse --compare --measured-trace " + kTrace);
  const auto passes = run_cli("simulate " + kGraph + " --no-fuse --comm-passes overlap_schedule --measured-trace " + kTrace);
  const auto model = run_cli("simulate " + kGraph + " --no-fuse --comm-passes overlap_schedule");
  REQUIRE(compared.code == 0);
  REQUIRE(passes.code == 0);
  CHECK(row(compared.out, "overlap_schedule") == row(passes.out, "after 1 comm passes"));
  CHECK(row(passes.out, "after 1 comm passes") != row(model.out, "after 1 comm passes"));
}

TEST_CASE("cli --measured-trace: a bad trace is refused in one line, no plan written", "[cli][measured_costs]") {
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / "schedlab_measured_trace_plan.json";
  fs::remove(out);
  const auto r = run_cli("plan " + kGraph + " -o " + out.string() + " --measured-trace " + kGraph);
  CHECK(r.code == 1);
  CHECK(r.out == "schedlab plan: " + kGraph + ": traceEvents: missing (expected a Chrome trace: torch.profiler's export_chrome_trace or "
                                              "python/dist's measured trace)\n");
  CHECK_FALSE(fs::exists(out));
  const auto usage = run_cli("plan " + kGraph + " --measured-trace-graph " + kGraph);
  CHECK(usage.code == 2);
  CHECK(usage.out.find("--measured-trace-graph: needs --measured-trace") != std::string::npos);
}
#endif
