// The input and output rules of core/io/files.h and the strict number
// parsing of core/io/options.h, through the real CLI: exit code and message
// for each, and no output left behind when a command fails.
#include <catch2/catch.hpp>

#ifndef __EMSCRIPTEN__
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/test_util.h"

namespace fs = std::filesystem;
using schedlab::test::run_cli;

namespace {

// A fresh folder per test case.
fs::path io_rules_scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("schedlab_io_rules_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string io_rules_graph() { return schedlab::test::data_path("inductor/mlp_2.post.json"); }

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Names of the entries of `d`.
std::size_t entries(const fs::path& d) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++n;
  return n;
}

}  // namespace

TEST_CASE("inputs: regular files or stdin; directories, devices and FIFOs are refused by name", "[cli][io]") {
  const fs::path d = io_rules_scratch("inputs");
  fs::create_directories(d / "adir.json");
  auto r = run_cli("plan " + (d / "adir.json").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("adir.json: a directory, not a regular file"));

  fs::create_symlink("/dev/zero", d / "zero.json");
  r = run_cli("validate " + (d / "zero.json").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("zero.json: a device, not a regular file"));

  REQUIRE(mkfifo((d / "fifo.json").c_str(), 0600) == 0);
  r = run_cli("validate " + (d / "fifo.json").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("fifo.json: a FIFO, not a regular file"));

  r = run_cli("validate - < " + io_rules_graph());
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("-: ok: schedgraph/1"));
}

TEST_CASE("--max-input-bytes refuses larger inputs cleanly", "[cli][io]") {
  auto r = run_cli("plan " + io_rules_graph() + " --max-input-bytes 10");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("input too large: larger than the limit of 10 bytes (--max-input-bytes)"));
  r = run_cli("validate - --max-input-bytes 10 < " + io_rules_graph());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("-: input too large"));
  r = run_cli("validate " + io_rules_graph() + " --max-input-bytes 0");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--max-input-bytes: expected an integer in [1, "));
}

TEST_CASE("outputs: non-regular targets refused, plan and trace both or neither, one path twice refused", "[cli][io]") {
  const fs::path d = io_rules_scratch("outputs");
  REQUIRE(mkfifo((d / "fifo.json").c_str(), 0600) == 0);
  auto r = run_cli("plan " + io_rules_graph() + " -o " + (d / "fifo.json").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("fifo.json: refusing to replace a FIFO"));

  write_file(d / "elsewhere.json", "keep");
  fs::create_symlink(d / "elsewhere.json", d / "link.json");
  r = run_cli("plan " + io_rules_graph() + " -o " + (d / "link.json").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("link.json: refusing to replace a symlink"));
  CHECK(fs::is_symlink(d / "link.json"));

  r = run_cli("plan " + io_rules_graph() + " -o " + (d / "same.json").string() + " --trace " + (d / "same.json").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("same.json: the same path is given for two outputs"));
  CHECK_FALSE(fs::exists(d / "same.json"));

  r = run_cli("plan " + io_rules_graph() + " -o " + (d / "pair.plan.json").string() + " --trace " + (d / "no/such/dir/t.json").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("t.json: cannot write file"));
  CHECK_FALSE(fs::exists(d / "pair.plan.json"));
  CHECK(entries(d) == 3);  // fifo, elsewhere, link: no temporaries left

  r = run_cli("plan " + io_rules_graph() + " -o " + (d / "ok.plan.json").string() + " --trace " + (d / "ok.trace.json").string());
  CHECK(r.code == 0);
  CHECK(fs::is_regular_file(d / "ok.plan.json"));
  CHECK(fs::is_regular_file(d / "ok.trace.json"));
}

TEST_CASE("SIGTERM during a run leaves no temporary behind", "[cli][io]") {
  const fs::path d = io_rules_scratch("signal");
  // A graph large enough that the run is still going when the signal comes.
  auto r = run_cli("gen layered --nodes 200000 -o " + (d / "big.json").string());
  REQUIRE(r.code == 0);
  const std::string cmd = std::string(SCHEDLAB_CLI) + " plan " + (d / "big.json").string() + " -o " + (d / "big.plan.json").string() +
                          " > /dev/null 2>&1 & pid=$!; sleep 1; kill -TERM $pid; wait $pid; echo $?";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[64] = {0};
  std::fgets(buf, sizeof buf, p);
  pclose(p);
  INFO("exit status " << buf);
  for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("option names match exactly", "[cli][io]") {
  const fs::path d = io_rules_scratch("prefix");
  auto r = run_cli("plan " + io_rules_graph() + " --tracefoo " + (d / "x.json").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unknown option \"--tracefoo\""));
  CHECK_FALSE(fs::exists(d / "x.json"));
  r = run_cli("plan " + io_rules_graph() + " --trace=" + (d / "t.json").string());
  CHECK(r.code == 0);
  CHECK(fs::exists(d / "t.json"));
}

TEST_CASE("numbers from the command line and from files are refused out of range, never wrapped", "[cli][io]") {
  const fs::path d = io_rules_scratch("numbers");
  struct Case {
    std::string args;
    int code;
    std::string message;
  };
  write_file(d / "p.json", R"({"base": "h200", "name": "x", "dram_bytes_per_s": 1e400})");
  write_file(d / "bom.json", "\xEF\xBB\xBF" + std::string(R"({"base": "h200", "name": "bom"})"));
  const std::vector<Case> cases = {
      {"plan " + io_rules_graph() + " --comm-knob reorder_iterative_peak_memory_budget=1e400", 2,
       "--comm-knob reorder_iterative_peak_memory_budget: expected a finite number in 0..1e9"},
      {"plan " + io_rules_graph() + " --comm-knob sink_waits_iterative_debug_limit_to_sink=4294967296", 2,
       "--comm-knob sink_waits_iterative_debug_limit_to_sink: expected an integer in 0..2147483647 or null"},
      {"plan " + io_rules_graph() + " --comm-knob reorder_iterative_debug_limit_to_reorder=5abc", 2, "value is not a number, true, false or null"},
      {"gen-dist fsdp --world-size 4294967297 -o " + (d / "ws.json").string(), 2, "--world-size: expected an integer in [1, 2147483647]"},
      {"gen-dist fsdp --world-size 70000 -o " + (d / "ws.json").string(), 2, "--world-size must be in 1..65536"},
      {"simulate " + io_rules_graph() + " --budget inf", 2, "--budget: expected a number in [0, 1e+09], got \"inf\""},
      {"simulate " + io_rules_graph() + " --budget 5abc", 2, "--budget: expected a number in [0, 1e+09], got \"5abc\""},
      {"simulate " + io_rules_graph() + " --budget 1e400", 2, "--budget: expected a number"},
      {"bench " + io_rules_graph() + " --repeat 99999999999999999999", 2, "--repeat: expected an integer in [1, 1000]"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    auto r = run_cli(c.args);
    CHECK(r.code == c.code);
    CHECK_THAT(r.out, Catch::Contains(c.message));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  }
  CHECK_FALSE(fs::exists(d / "ws.json"));
  // A byte order mark is skipped in profiles as in graphs.
  auto r = run_cli("plan " + io_rules_graph() + " --hardware " + (d / "bom.json").string());
  CHECK(r.code == 0);
}

TEST_CASE("graph names must be UTF-8; a BOM is accepted", "[cli][io]") {
  const fs::path d = io_rules_scratch("utf8");
  const std::string g = R"({"format":"schedgraph/1","inputs":[],"outputs":["b"],"nodes":[
    {"name":"opX","kind":"pointwise","outputs":[{"name":"b","bytes":4}]}]})";
  std::string bad = g;
  bad.replace(bad.find("opX"), 3, "op\xff");
  write_file(d / "bad.json", bad);
  write_file(d / "bom.json", "\xEF\xBB\xBF" + g);
  auto r = run_cli("plan " + (d / "bad.json").string() + " -o " + (d / "bad.plan.json").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("bad.json: nodes[0].name: invalid UTF-8 at byte 2 of the string"));
  CHECK_FALSE(fs::exists(d / "bad.plan.json"));
  r = run_cli("plan " + (d / "bom.json").string());
  CHECK(r.code == 0);
}
#endif

#ifndef __EMSCRIPTEN__
TEST_CASE("simulate runs the plan pipeline and takes every --hardware plan takes", "[cli][pipeline]") {
  const fs::path d = io_rules_scratch("simulate_hw");
  write_file(d / "mine.json", R"({"base": "h100-sxm", "name": "my-h100"})");
  const std::string g = schedlab::test::data_path("comms/overlap_small.json");
  auto r = run_cli("simulate " + g + " --model-runtimes --hardware " + (d / "mine.json").string());
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("(my-h100)"));
  r = run_cli("simulate " + g + " --hardware b200 --model-runtimes");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("(b200)"));
  // A pre-fusion graph is fused first, as plan does: the same node count.
  const std::string pre = schedlab::test::data_path("inductor/gpt2_2.pre.json");
  auto planned = run_cli("plan " + pre);
  auto simulated = run_cli("simulate " + pre);
  REQUIRE(planned.code == 0);
  REQUIRE(simulated.code == 0);
  const auto nodes = [](const std::string& out, const std::string& before) {
    const auto at = out.find(before);
    return at == std::string::npos ? std::string() : out.substr(at + before.size(), out.find(' ', at + before.size()) - at - before.size());
  };
  CHECK(nodes(simulated.out, ": ") == "59");
  CHECK(nodes(planned.out, "graph gpt2_2.pre: ") == "59");
}
#endif
