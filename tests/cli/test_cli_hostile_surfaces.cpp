// Issue 30: the readers, writers and generators added after the first
// hardening, through the real CLI, one TEST_CASE per class of the issue.
// Each runs the command under `timeout` (a hang is exit 124 or 137, never a
// stalled suite) and checks the exit code, the one-line message naming the
// file and the field, and the files left behind.
#ifndef __EMSCRIPTEN__
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/measured_fixture.h"
#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using schedlab::test::CliRun;
using schedlab::test::synthetic_measured_dir;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCHEDLAB_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SCHEDLAB_TEST_ASAN 1
#endif

// `schedlab ARGS` killed after `seconds` (exit 124 or 137: it hung), with
// `prefix` shell words before it (`ulimit -v N;`).
CliRun run_bounded(const std::string& args, int seconds = 60, const std::string& prefix = "") {
  const std::string cmd = prefix + " timeout -s KILL " + std::to_string(seconds) + " " + SCHEDLAB_CLI + " " + args + " 2>&1";
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

fs::path hostile_scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("schedlab_hostile_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

json read_json(const fs::path& p) { return json::parse(slurp(p)); }
void write_json(const fs::path& p, const json& j) { std::ofstream(p, std::ios::binary) << j.dump(); }

// The one error line: exactly one '\n', at the end, and no control byte.
bool one_clean_line(const std::string& out) {
  if (out.empty() || out.back() != '\n') return false;
  for (std::size_t i = 0; i + 1 < out.size(); ++i)
    if (static_cast<unsigned char>(out[i]) < 0x20 || out[i] == 0x7f) return false;
  return true;
}

std::string hostile_graph() { return schedlab::test::data_path("inductor/mlp_2.post.json"); }

const std::string kMeasured = "case_0_fwd.measured.json";

}  // namespace

TEST_CASE("issue 30, class 1: a measured file whose durations sum past the finite range is refused, not looped on", "[cli][hostile]") {
  const fs::path dir = synthetic_measured_dir("hang_sum");
  json m = read_json(dir / kMeasured);
  for (auto& k : m["kernels"]) k["duration_us"] = 1e308;  // each finite, their sum infinite
  write_json(dir / kMeasured, m);
  const CliRun r = run_bounded("accuracy " + dir.string() + " --hardware h100-sxm", 60);
  CHECK(r.code == 1);
  CHECK(r.out == "schedlab accuracy: " + (dir / kMeasured).string() + ": kernels[0].duration_us: expected a finite number of µs in 0..1e12\n");
  fs::remove_all(dir);
}

TEST_CASE("issue 30, classes 1 and 2: folder walks follow no link to a folder and count each file once", "[cli][hostile]") {
  const fs::path dir = synthetic_measured_dir("walk_links");
  fs::create_directory_symlink(".", dir / "self");          // a loop: 40 levels deep before ELOOP stopped it
  fs::create_directory_symlink("/proc/self", dir / "proc");  // the whole file system through /proc/self/root
  fs::create_directories(dir / "sub");
  fs::create_symlink(dir / kMeasured, dir / "sub" / kMeasured);  // the same file again, by another path
  const fs::path out = dir / "fitted.json";
  const CliRun fit = run_bounded("fit-profile " + dir.string() + " " + dir.string() + " -o " + out.string(), 120);
  CHECK(fit.code == 0);
  CHECK_THAT(fit.out, Catch::Contains(" from 1 graphs "));
  const CliRun acc = run_bounded("accuracy " + dir.string() + " --hardware h100-sxm", 120);
  CHECK(acc.code == 0);
  CHECK_THAT(acc.out, Catch::Contains("accuracy on h100-sxm: 1 graphs"));
  CHECK_THAT(acc.out, !Catch::Contains("self/"));
  fs::remove_all(dir);
}

TEST_CASE("issue 30, class 3: no output replaces an input, compared by file identity", "[cli][hostile]") {
  const fs::path d = hostile_scratch("inputs");
  fs::copy_file(hostile_graph(), d / "g.json");
  fs::copy_file(schedlab::test::data_path("inductor/mlp_2.pre.json"), d / "pre.json");
  const std::string before = slurp(d / "g.json");
  const std::string g = (d / "g.json").string();
  fs::create_hard_link(d / "g.json", d / "hard.json");
  for (const std::string& args : std::vector<std::string>{"plan " + g + " -o " + g, "plan " + g + " -o " + d.string() + "/./g.json",
                                  "plan " + g + " -o " + (d / "hard.json").string(), "simulate " + g + " --trace " + g,
                                  "plan " + g + " -o " + (d / "p.json").string() + " --trace " + g, "plan - -o " + g + " < " + g,
                                  "fuse " + (d / "pre.json").string() + " -o " + (d / "pre.json").string()}) {
    INFO(args);
    const CliRun r = run_bounded(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("is an input of this command"));
    CHECK(one_clean_line(r.out));
    CHECK(slurp(d / "g.json") == before);
  }
  CHECK_FALSE(fs::exists(d / "p.json"));  // both or neither

  const fs::path dir = synthetic_measured_dir("fit_over_input");
  const std::string measured = slurp(dir / kMeasured);
  const CliRun fit = run_bounded("fit-profile " + dir.string() + " -o " + (dir / kMeasured).string());
  CHECK(fit.code == 2);
  CHECK(fit.out == "schedlab fit-profile: " + (dir / kMeasured).string() + ": is an input of this command; refusing to replace it\n");
  CHECK(slurp(dir / kMeasured) == measured);
  const fs::path post = dir / "case_0_fwd.post.json";
  CHECK(run_bounded("accuracy " + dir.string() + " --hardware h100-sxm --nodes " + post.string()).code == 2);
  fs::remove_all(dir);
  fs::remove_all(d);
}

TEST_CASE("issue 30, class 4: generators compute their sizes exactly and refuse what cannot be built, before allocating", "[cli][hostile]") {
  const fs::path d = hostile_scratch("gen");
  // 2 t h 4h: 2^65 at --hidden 2^19 --tokens 2^24 (it was written as 0), 2^67 at the documented maxima (written negative).
  for (const std::string& sizes : std::vector<std::string>{std::string("--hidden 524288 --tokens 16777216"), "--hidden 1048576 --tokens 16777216", "--hidden 1000000 --tokens 16000000"}) {
    INFO(sizes);
    const CliRun r = run_bounded("gen-dist fsdp --layers 1 " + sizes + " -o " + (d / "f.json").string());
    CHECK(r.code == 2);
    CHECK(r.out == "schedlab gen-dist: gen-dist: a matmul's flops (" + sizes + ") overflows 63 bits\n");
    CHECK_FALSE(fs::exists(d / "f.json"));
  }
  // The largest sizes whose products fit are written, and validate takes them.
  REQUIRE(run_bounded("gen-dist fsdp --layers 1 --hidden 131072 --tokens 16777216 -o " + (d / "ok.json").string()).code == 0);
  CHECK(run_bounded("validate " + (d / "ok.json").string()).code == 0);
  REQUIRE(run_bounded("gen-dist tp --layers 1 --hidden 1048576 --tokens 16777216 --world-size 65536 -o " + (d / "tp.json").string()).code == 0);
  CHECK(run_bounded("validate " + (d / "tp.json").string()).code == 0);
#ifndef SCHEDLAB_TEST_ASAN  // ASan reserves terabytes of address space: no `ulimit -v` under it
  // The documented maxima, in 4 GiB of address space: refused up front, not out of memory after minutes.
  for (const std::string& args : std::vector<std::string>{std::string("gen layered --nodes 50000000 --fan-in 64"), "gen-dist tp --layers 100000 --microbatches 64",
                                  "gen-dist fsdp --layers 100000 --hidden 8 --tokens 8"}) {
    INFO(args);
    const auto t0 = std::chrono::steady_clock::now();
    const CliRun r = run_bounded(args + " -o " + (d / "big.json").string(), 60, "ulimit -v 4194304;");
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("more than this machine's") && Catch::Contains("bytes of memory"));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    CHECK_FALSE(fs::exists(d / "big.json"));
  }
#endif
  fs::remove_all(d);
}

TEST_CASE("issue 30, class 6: stdin and files are bounded by the reader policy as they are read", "[cli][hostile]") {
  const fs::path d = hostile_scratch("memory");
  CliRun r;
#ifndef SCHEDLAB_TEST_ASAN
  // /dev/zero on stdin: refused in its first chunk, within 200 MB of address space (it buffered 4 GB).
  r = run_bounded("validate - < /dev/zero", 60, "ulimit -v 2000000;");
  CHECK(r.code == 1);
  CHECK(r.out == "schedlab validate: -: not valid JSON: line 1, column 1: a control character (byte 0)\n");
#endif
  // 8 MB of '[' as a profile (within its 16 MiB) and 20 MB as a measured file: refused at the 65th byte.
  const std::string brackets(20 << 20, '[');
  std::ofstream(d / "deep.json", std::ios::binary) << brackets.substr(0, 8 << 20);
  r = run_bounded("plan " + hostile_graph() + " --hardware " + (d / "deep.json").string());
  CHECK(r.code == 1);
  CHECK(r.out == "schedlab plan: " + (d / "deep.json").string() + ": not valid JSON: line 1, column 65: nested deeper than 64 levels\n");
  const fs::path dir = synthetic_measured_dir("deep_measured");
  std::ofstream(dir / kMeasured, std::ios::binary) << brackets;
  r = run_bounded("accuracy " + dir.string() + " --hardware h200");
  CHECK(r.code == 1);
  CHECK(r.out == "schedlab accuracy: " + (dir / kMeasured).string() + ": not valid JSON: line 1, column 65: nested deeper than 64 levels\n");
  // 2 GB sparse files: refused by their size before a byte is read.
  fs::resize_file(dir / kMeasured, std::uintmax_t{2} << 30);
  r = run_bounded("fit-profile " + dir.string() + " -o " + (d / "x.json").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::EndsWith(kMeasured + ": input too large: larger than the limit of 268435456 bytes (a measured file's limit)\n"));
  std::ofstream(d / "sparse.json").close();
  fs::resize_file(d / "sparse.json", std::uintmax_t{2} << 30);
  r = run_bounded("plan " + hostile_graph() + " --hardware " + (d / "sparse.json").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::EndsWith("sparse.json: input too large: larger than the limit of 16777216 bytes (a hardware profile's limit)\n"));
  fs::remove_all(dir);
  fs::remove_all(d);
}

TEST_CASE("issue 30, class 7: a measured file's device kind never names a file", "[cli][hostile]") {
  const fs::path dir = synthetic_measured_dir("device_kind");
  // A datasheet planted where `<device_kind>-datasheet` would point.
  std::ofstream(dir / "evil-datasheet") << R"({"base": "h100-sxm-datasheet", "name": "planted"})";
  json m = read_json(dir / kMeasured);
  m["env"]["device_kind"] = (dir / "evil").string();
  write_json(dir / kMeasured, m);
  const fs::path out = dir / "fitted.json";
  CliRun r = run_bounded("fit-profile " + dir.string() + " -o " + out.string());
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::StartsWith("schedlab fit-profile: " + (dir / kMeasured).string() + ": env.device_kind: expected a device kind of"));
  CHECK(one_clean_line(r.out));
  CHECK_FALSE(fs::exists(out));
  m["env"]["device_kind"] = "tpu-v5";
  write_json(dir / kMeasured, m);
  r = run_bounded("fit-profile " + dir.string() + " -o " + out.string());
  CHECK(r.code == 1);
  CHECK(r.out == "schedlab fit-profile: " + (dir / kMeasured).string() +
                     ": env.device_kind: \"tpu-v5\" has no built-in datasheet profile (kinds: h100-sxm, h200); give --base NAME|FILE\n");
  CHECK(run_bounded("fit-profile " + dir.string() + " -o " + out.string() + " --base h100-sxm-datasheet").code == 0);
  fs::remove_all(dir);
}

TEST_CASE("issue 30, class 8: messages are one line and name the file and the field", "[cli][hostile]") {
  const fs::path d = hostile_scratch("messages");
  std::ofstream(d / "key.json", std::ios::binary) << "{\"base\": \"h200\", \"a\\nb\\u001b[31mred\": 1}";
  CliRun r = run_bounded("plan " + hostile_graph() + " --hardware " + (d / "key.json").string());
  CHECK(r.code == 1);
  CHECK(r.out == "schedlab plan: " + (d / "key.json").string() + ": hardware profile: unknown field \"a?b?[31mred\"\n");
  std::ofstream(d / "dtype.json", std::ios::binary) << "{\"base\": \"h200\", \"flops_per_s\": {\"f32\": 1e14, \"x\\ny\": -1}}";
  r = run_bounded("plan " + hostile_graph() + " --hardware " + (d / "dtype.json").string());
  CHECK(r.code == 1);
  CHECK(r.out == "schedlab plan: " + (d / "dtype.json").string() + ": hardware profile: flops_per_s.\"x?y\": expected a finite number in 1..1e30\n");
  // Host costs whose sum is past the finite range: refused by the profile reader, naming the field.
  json hw = read_json(schedlab::test::data_path("../../profiles/h200.json"));
  hw["time_model"]["host_us_per_kernel"] = 1e308;
  write_json(d / "host.json", hw);
  r = run_bounded("simulate " + hostile_graph() + " --hardware " + (d / "host.json").string());
  CHECK(r.code == 1);
  CHECK(r.out == "schedlab simulate: " + (d / "host.json").string() +
                     ": hardware profile: time_model.host_us_per_kernel: expected a finite number in 0..1e30\n");
  // A measured node name holding a newline and an escape code.
  const fs::path dir = synthetic_measured_dir("node_name");
  json m = read_json(dir / kMeasured);
  m["kernels"][0]["node"] = "op\n\x1b[2Jx";
  write_json(dir / kMeasured, m);
  r = run_bounded("accuracy " + dir.string() + " --hardware h200");
  CHECK(r.code == 1);
  CHECK(r.out == "schedlab accuracy: " + (dir / kMeasured).string() + ": kernels[0].node: no node \"op??[2Jx\" in graph \"transformer_s_0_fwd.post\"\n");
  fs::remove_all(dir);
  fs::remove_all(d);
}

TEST_CASE("issue 30, class 9: one output policy for every writer", "[cli][hostile]") {
  const fs::path d = hostile_scratch("outputs");
  CliRun r = run_bounded("plan " + hostile_graph() + " -o - --trace -");
  CHECK(r.code == 2);
  CHECK(r.out == "schedlab plan: -: stdout is given for 2 outputs (at most one may go there)\n");
  for (const std::string& args : std::vector<std::string>{"plan " + hostile_graph() + " -o ''", "plan " + hostile_graph() + " --trace ''", "simulate " + hostile_graph() + " --trace ''",
                                  "fuse " + hostile_graph() + " -o ''", std::string("gen layered --nodes 10 -o ''")}) {
    INFO(args);
    r = run_bounded(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains(": expected a file name (or - for stdout), got an empty one\n"));
  }
  const fs::path dir = synthetic_measured_dir("accuracy_outputs");
  r = run_bounded("accuracy " + dir.string() + " --hardware h200 --svg " + (d / "x").string() + " --nodes " + (d / "x").string());
  CHECK(r.code == 2);
  CHECK(r.out == "schedlab accuracy: " + (d / "x").string() + ": the same path is given for two outputs\n");
  CHECK_FALSE(fs::exists(d / "x"));
  r = run_bounded("accuracy " + dir.string() + " --hardware h200 --svg " + (d / "ok.svg").string() + " --nodes " + (d / "no/such/x.tsv").string());
  CHECK(r.code == 1);
  CHECK_FALSE(fs::exists(d / "ok.svg"));  // both or neither
  fs::remove_all(dir);
  fs::remove_all(d);
}

TEST_CASE("issue 30, class 9: SIGHUP mid-write leaves no temporary, as SIGINT and SIGTERM do not", "[cli][hostile]") {
  const fs::path d = hostile_scratch("sighup");
  REQUIRE(run_bounded("gen layered --nodes 40000 -o " + (d / "big.json").string()).code == 0);
  for (int sig : {SIGHUP, SIGINT, SIGTERM, SIGPIPE}) {
    INFO("signal " << sig);
    // Signal it the moment its temporary exists: mid-write. The write takes
    // a few milliseconds, which a busy machine's poller may sleep through
    // (the plan is then written whole): run it again, up to five times.
    bool signalled = false;
    int status = 0;
    for (int attempt = 0; attempt < 5 && !signalled; ++attempt) {
      fs::remove(d / "big.plan.json");
      const pid_t pid = fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        for (int s : {SIGHUP, SIGINT, SIGTERM, SIGPIPE}) ::signal(s, SIG_DFL);
        ::execl(SCHEDLAB_CLI, SCHEDLAB_CLI, "plan", (d / "big.json").c_str(), "-o", (d / "big.plan.json").c_str(), "--memory-methods",
                "baseline", static_cast<char*>(nullptr));
        ::_exit(127);
      }
      bool exited = false;
      for (int i = 0; i < 600000 && !signalled && !exited; ++i) {
        for (const auto& e : fs::directory_iterator(d))
          if (e.path().filename().string().rfind(".big.plan.json.tmp", 0) == 0) {
            ::kill(pid, sig);
            signalled = true;
            break;
          }
        if (!signalled && ::waitpid(pid, &status, WNOHANG) == pid) exited = true;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      if (signalled || !exited) ::waitpid(pid, &status, 0);
    }
    CHECK(signalled);
    CHECK(WIFSIGNALED(status));
    for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
    fs::remove(d / "big.plan.json");
  }
  fs::remove_all(d);
}
#endif
