// The reader policy (core/io/json_input.h) and what issue 30 found beside
// it, in memory: nesting and control bytes refused before a parser sees
// them, names escaped in messages, measured and profile numbers bounded so
// that their sums stay finite, folder walks that end and count each file
// once, the accuracy plot over any point.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/graph/builder.h"
#include "core/io/json_input.h"
#include "core/io/measured_reader.h"
#include "core/io/profiles.h"
#include "core/measure/accuracy.h"
#include "core/util/error.h"
#include "tests/test_util.h"

#ifndef __EMSCRIPTEN__
#include <filesystem>
#include <fstream>

#include "core/io/folder_walk.h"
#endif

using namespace schedlab;
using nlohmann::json;

namespace {

using schedlab::test::error_of;

json small_measured() {
  return {{"format", "schedmeasured/1"},
          {"graph", "g"},
          {"env", {{"device", "d"}, {"device_kind", "h200"}}},
          {"memory",
           {{"allocated_before_bytes", 0}, {"freeable_inputs_bytes", 0}, {"peak_allocated_bytes", 0}, {"reserved_before_bytes", 0},
            {"peak_reserved_bytes", 0}}},
          {"kernels", json::array({{{"name", "k"}, {"node", "op0"}, {"class", "gemm"}, {"start_us", 0.0}, {"duration_us", 1.0}}})},
          {"kernel_time_us", 1.0},
          {"wall_time_us", 2.0}};
}

}  // namespace

TEST_CASE("reader policy: nesting and bytes JSON never holds are refused as the text is scanned", "[io][hostile]") {
  CHECK_NOTHROW(check_json_text(std::string(64, '[') + std::string(64, ']')));
  CHECK(error_of([] { check_json_text(std::string(65, '[')); }) == "not valid JSON: line 1, column 65: nested deeper than 64 levels");
  CHECK(error_of([] { check_json_text("{\n\"a\": [[\n" + std::string(63, '{')); }) ==
        "not valid JSON: line 3, column 62: nested deeper than 64 levels");
  // Brackets inside strings, and escaped quotes, are not nesting.
  CHECK_NOTHROW(check_json_text("[\"" + std::string(100, '[') + "\\\"[[[\"]"));
  CHECK(error_of([] { check_json_text(std::string("{\"a\": \"x\0y\"}", 12)); }) ==
        "not valid JSON: line 1, column 9: a control character (byte 0) inside a string");
  CHECK(error_of([] { check_json_text(std::string(3, '\0')); }) == "not valid JSON: line 1, column 1: a control character (byte 0)");
  CHECK_NOTHROW(check_json_text("\xEF\xBB\xBF{\"caf\xC3\xA9\": \"\xE2\x82\xAC\"}\r\n\t"));
}

TEST_CASE("names from files are escaped in messages: one line, nothing for the terminal", "[io][hostile]") {
  CHECK(quoted_name("op7") == "\"op7\"");
  CHECK(quoted_name("a\nb\x1b[31m\x7f") == "\"a?b?[31m?\"");
  CHECK(quoted_name("x\xC2\x9B" "2J") == "\"x?2J\"");         // U+009B, the 8-bit CSI
  CHECK(quoted_name("caf\xC3\xA9 \xff") == "\"caf\xC3\xA9 ?\"");  // UTF-8 kept, a stray byte not
  CHECK(member_place("unbacked", "u0") == "unbacked.u0");
  CHECK(member_place("unbacked", "a\nb") == "unbacked.\"a?b\"");
  CHECK(member_place("", "") == "\"\"");
}

TEST_CASE("measured files: nesting bounded, times and counts bounded so their sums stay finite, keys escaped", "[io][measure][hostile]") {
  CHECK(error_of([] { load_measured(std::string(100, '['), "m.json"); }) == "m.json: not valid JSON: line 1, column 65: nested deeper than 64 levels");
  json m = small_measured();
  CHECK_NOTHROW(load_measured(m.dump(), "m.json"));
  m["kernels"][0]["duration_us"] = 1e308;  // finite, but 2 of them are not
  CHECK(error_of([&] { load_measured(m.dump(), "m.json"); }) == "m.json: kernels[0].duration_us: expected a finite number of µs in 0..1e12");
  m = small_measured();
  m["memory"]["peak_allocated_bytes"] = std::int64_t{1} << 60;
  CHECK(error_of([&] { load_measured(m.dump(), "m.json"); }) == "m.json: memory.peak_allocated_bytes: expected an integer in 0..2^53");
  m = small_measured();
  m["unbacked"] = {{"u\n\x1b[2J", -1}};
  CHECK(error_of([&] { load_measured(m.dump(), "m.json"); }) == "m.json: unbacked.\"u??[2J\": expected an integer in 0..2^53");
  m = small_measured();
  m["env"]["device_kind"] = "../../etc/passwd";
  CHECK_THAT(error_of([&] { load_measured(m.dump(), "m.json"); }),
             Catch::StartsWith("m.json: env.device_kind: expected a device kind of at most 64 letters, digits"));
}

TEST_CASE("profiles: nesting bounded, every number in a range whose sums stay finite", "[io][cost][hostile]") {
  CHECK(error_of([] { parse_hardware_profile(std::string(100, '[')); }) ==
        "hardware profile: not valid JSON: line 1, column 65: nested deeper than 64 levels");
  CHECK(error_of([] { parse_hardware_profile(R"({"base": "h200", "kernel_launch_us": 1e31})"); }) ==
        "hardware profile: kernel_launch_us: expected a finite number in 0..1e30");
  CHECK(error_of([] { parse_hardware_profile(R"({"base": "h200", "dram_bytes_per_s": 1e-300})"); }) ==
        "hardware profile: dram_bytes_per_s: expected a finite number in 1..1e30");
  CHECK(error_of([] { parse_hardware_profile(R"({"base": "h200", "name": "two\nlines"})"); }) ==
        "hardware profile: name: expected a non-empty string of at most 120 printable characters");
  CHECK_NOTHROW(parse_hardware_profile(R"({"base": "h200", "name": "mine", "kernel_launch_us": 1e30})"));
}

TEST_CASE("the accuracy plot ends whatever its points are", "[measure][hostile]") {
  AccuracyReport r;
  r.hardware = "h200";
  GraphAccuracy a;
  a.graph = "g";
  a.kernel_meas_us = INFINITY;  // a sum of finite durations past the finite range
  a.kernel_est_us = 10;
  a.wall_meas_us = 20, a.wall_est_us = 1e300;
  r.graphs.push_back(a);
  const std::string svg = accuracy_svg(r);
  CHECK_THAT(svg, Catch::Contains("</svg>"));
  CHECK_THAT(svg, !Catch::Contains("inf"));
}

#ifndef __EMSCRIPTEN__
TEST_CASE("folder walks follow no link to a folder, count each real file once and are bounded", "[io][hostile]") {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / "schedlab_walk_policy";
  fs::remove_all(d);
  fs::create_directories(d / "a");
  std::ofstream(d / "a" / "x.measured.json") << "{}";
  fs::create_directory_symlink(".", d / "a" / "loop");
  fs::create_directory_symlink("..", d / "a" / "up");
  fs::create_symlink(d / "a" / "x.measured.json", d / "y.measured.json");  // the same file by a link
  fs::create_symlink(d / "nowhere", d / "dangling.measured.json");
  const std::vector<std::string> found = files_under({d.string(), (d / "a").string(), d.string() + "/"}, ".measured.json");
  CHECK(found == std::vector<std::string>{(d / "a" / "x.measured.json").string()});
  // Folders nested deeper than the walk goes.
  fs::path deep = d / "deep";
  for (int i = 0; i <= kMaxWalkDepth; ++i) deep /= "d";
  fs::create_directories(deep);
  CHECK_THAT(error_of([&] { files_under({(d / "deep").string()}, ".measured.json"); }),
             Catch::Contains(": folders nested deeper than 64 levels"));
  CHECK_THROWS_AS(files_under({(d / "a" / "x.measured.json").string()}, ".measured.json"), OptionError);
  fs::remove_all(d);
}
#endif
