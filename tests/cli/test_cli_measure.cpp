// fit-profile, accuracy and --hardware FILE as a user meets them: exit codes,
// one-line errors naming the place, written files. The measured file here is
// SYNTHETIC (made up for the command line's sake, not a GPU measurement).
#ifndef __EMSCRIPTEN__
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/profiles.h"
#include "tests/cli/measured_fixture.h"
#include "tests/test_util.h"

namespace {

using schedlab::test::run_cli;
using schedlab::test::synthetic_measured_dir;
namespace fs = std::filesystem;

}  // namespace

TEST_CASE("fit-profile writes a profile that plan, simulate and accuracy take", "[cli][measure]") {
  fs::path dir = synthetic_measured_dir("fit");
  fs::path profile = dir / "fitted.json";
  auto fit = run_cli("fit-profile " + dir.string() + " -o " + profile.string());
  REQUIRE(fit.code == 0);
  CHECK_THAT(fit.out, Catch::Contains("fitted h100-sxm from 1 graphs"));
  std::ifstream in(profile);
  auto p = nlohmann::json::parse(in);
  CHECK(p["time_model"]["laws"].size() == 9);
  const std::string graph = (dir / "case_0_fwd.post.json").string();
  CHECK(run_cli("plan " + graph + " --hardware " + profile.string()).code == 0);
  auto sim = run_cli("simulate " + graph + " --hardware " + profile.string());
  CHECK(sim.code == 0);
  CHECK_THAT(sim.out, Catch::Contains("the calibrated model (h100-sxm)"));
  fs::path svg = dir / "acc.svg";
  auto acc = run_cli("accuracy " + dir.string() + " --hardware " + profile.string() + " --svg " + svg.string());
  CHECK(acc.code == 0);
  CHECK_THAT(acc.out, Catch::Contains("per kernel class"));
  CHECK(fs::exists(svg));
  // Every measured node, estimated against measured.
  fs::path nodes = dir / "nodes.tsv";
  CHECK(run_cli("accuracy " + dir.string() + " --hardware " + profile.string() + " --nodes " + nodes.string()).code == 0);
  std::ifstream tsv(nodes);
  std::string header, row;
  std::getline(tsv, header);
  CHECK(header == "graph\tnode\tclass\tkernels\tmeasured_us\testimated_us\tratio\tfirst_kernel");
  REQUIRE(std::getline(tsv, row));
  CHECK_THAT(row, Catch::StartsWith("transformer_s_0_fwd.post\t"));
  // A sibling profile lends the terms this data cannot fit.
  fs::path with_sibling = dir / "sibling.json";
  auto fit2 = run_cli("fit-profile " + dir.string() + " -o " + with_sibling.string() + " --sibling h200");
  CHECK(fit2.code == 0);
  // --carry-classes: of the classes this data fits no law for, the named ones
  // take the --class-laws-from profile's law, and no other does.
  fs::path carried = dir / "carried.json";
  auto fit3 = run_cli("fit-profile " + dir.string() + " -o " + carried.string() + " --class-laws all --class-laws-from h200 --carry-classes gemm_unaligned");
  REQUIRE(fit3.code == 0);
  std::ifstream carried_in(carried);
  const auto laws = nlohmann::json::parse(carried_in)["time_model"]["laws"];
  CHECK(laws.size() == 10);
  const auto h200 = schedlab::hardware_profile_to_json(schedlab::builtin_profile("h200"))["time_model"]["laws"];
  CHECK(laws["gemm_unaligned"] == h200["gemm_unaligned"]);
  CHECK_FALSE(laws.contains("convolution_1d"));
  // --wrapper-costs: the items' host figure is the wrapper's item timed
  // alone (a tuple index and an assert).
  fs::path timed = dir / "timed.json", wrapper = dir / "wrapper_host_costs.json";
  {
    std::ofstream w(wrapper);
    w << R"({"us_per_call": {"tuple_item": 0.05, "assert_size_stride": 0.35}, "host_probe_us": [90]})";
  }
  auto fit4 = run_cli("fit-profile " + dir.string() + " -o " + timed.string() + " --wrapper-costs " + wrapper.string());
  REQUIRE(fit4.code == 0);
  std::ifstream timed_in(timed);
  const auto tm = nlohmann::json::parse(timed_in)["time_model"];
  // (The fixture's files record no host probe: the item is taken as timed;
  // restating is tests/measure/test_fit.cpp's.)
  CHECK(tm["host_probe_us"].get<double>() == 0);
  CHECK(tm["host_us_per_item"].get<double>() == Approx(0.4));
  // A file that is not the probe's is named, with its field; no profile is written.
  {
    std::ofstream w(wrapper);
    w << R"({"us_per_call": {"tuple_item": 0.05}, "host_probe_us": [90]})";
  }
  fs::path refused = dir / "refused.json";
  auto bad = run_cli("fit-profile " + dir.string() + " -o " + refused.string() + " --wrapper-costs " + wrapper.string());
  CHECK(bad.code == 1);
  CHECK_THAT(bad.out, Catch::Contains(wrapper.string() + ": us_per_call.assert_size_stride: missing field"));
  CHECK_FALSE(fs::exists(refused));
  fs::remove_all(dir);
}

TEST_CASE("accuracy prices each graph's host at its run's host speed, or with --fixed-host-speed at the profile's", "[cli][measure]") {
  const std::string dir = schedlab::test::data_path("outside_zoo/h200");
  auto own = run_cli("accuracy " + dir + " --hardware h200");
  REQUIRE(own.code == 0);
  // The H200 profile's probe is 85.58 us; these graphs' samples' 87.41 to 97.07.
  CHECK_THAT(own.out, Catch::Contains("walls: host costs at each run's host speed (its host probe over the profile's: 1.021 to 1.134;"));
  auto fixed = run_cli("accuracy " + dir + " --hardware h200 --fixed-host-speed");
  REQUIRE(fixed.code == 0);
  CHECK_THAT(fixed.out, !Catch::Contains("walls: host costs"));
  CHECK(own.out != fixed.out);
}

TEST_CASE("plan and simulate --host-probe-us restate the profile's host costs for another host", "[cli][measure]") {
  const fs::path dir = fs::temp_directory_path() / "schedlab_cli_host_probe";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string graph = schedlab::test::data_path("inductor/mlp_2.post.json");
  auto predicted = [&](const std::string& flags) {
    const fs::path out = dir / "plan.json";
    const auto r = run_cli("plan " + graph + " -o " + out.string() + " " + flags);
    REQUIRE(r.code == 0);
    std::ifstream in(out);
    return nlohmann::json::parse(in)["predicted"];
  };
  // The built-in h200 holds at the probe its runs read (85.58 us), and says so.
  const auto at_profile = predicted("");
  CHECK(at_profile["host_probe_us"] == 85.58);
  // A host twice as slow: the same kernels, a longer launch-bound wall.
  const auto slower = predicted("--host-probe-us 171.16");
  CHECK(slower["host_probe_us"] == 171.16);
  CHECK(slower["kernel_time_us"] == at_profile["kernel_time_us"]);
  CHECK(slower["wall_time_us_cudagraphs"] == at_profile["wall_time_us_cudagraphs"]);  // no host under CUDA graphs
  CHECK(slower["wall_time_us"].get<double>() > 1.5 * at_profile["wall_time_us"].get<double>());
  CHECK_THAT(run_cli("plan " + graph + " --host-probe-us 171.16").out, Catch::Contains("(calibrated model, host probe 171.2 us)"));
  CHECK(run_cli("simulate " + graph + " --host-probe-us 171.16").code == 0);
  // A profile that does not say at which speed its host costs hold, and bad values: usage errors.
  auto datasheet = run_cli("plan " + graph + " --hardware h200-datasheet --host-probe-us 100");
  CHECK(datasheet.code == 2);
  CHECK_THAT(datasheet.out, Catch::Contains("--host-probe-us: hardware profile \"h200-datasheet\" does not say at which host speed"));
  for (const char* bad : {"0", "-5", "fast", "1e9"}) {
    INFO(bad);
    const auto r = run_cli("simulate " + graph + " --host-probe-us " + bad);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("--host-probe-us: expected a number in [0.001, 1e+06]"));
  }
  fs::remove_all(dir);
}

TEST_CASE("accuracy --memory-events writes memory as executed event by event", "[cli][measure]") {
  fs::path dir = synthetic_measured_dir("events");
  fs::path events = dir / "events.json";
  auto acc = run_cli("accuracy " + dir.string() + " --hardware h100-sxm --memory-events " + events.string());
  REQUIRE(acc.code == 0);
  std::ifstream in(events);
  auto doc = nlohmann::json::parse(in);
  REQUIRE(doc["graphs"].size() == 1);
  const auto& g = doc["graphs"][0];
  CHECK(g["graph"] == "transformer_s_0_fwd.post");
  CHECK(g["start"] == "cold");
  REQUIRE(!g["events"].empty());
  std::int64_t peak = 0;
  for (const auto& e : g["events"]) {
    REQUIRE(e.size() == 8);
    CHECK((e[0] == "a" || e[0] == "f" || e[0] == "r"));
    if (e[0] == "a") CHECK(e[5].get<std::int64_t>() >= e[3].get<std::int64_t>());  // the block holds the request
    peak = std::max(peak, e[6].get<std::int64_t>());
  }
  CHECK(peak > 0);
  fs::remove_all(dir);
}

TEST_CASE("bad measured files and profiles: one line naming the place, exit 1", "[cli][measure][errors]") {
  fs::path dir = synthetic_measured_dir("bad", "some_other_graph");
  auto acc = run_cli("accuracy " + dir.string() + " --hardware h100-sxm");
  CHECK(acc.code == 1);
  CHECK(acc.out == "schedlab accuracy: " + (dir / "case_0_fwd.measured.json").string() +
                       ": graph: measured \"some_other_graph\", but the graph beside it is \"transformer_s_0_fwd.post\"\n");
  fs::path out = dir / "never.json";
  CHECK(run_cli("fit-profile " + dir.string() + " -o " + out.string()).code == 1);
  CHECK_FALSE(fs::exists(out));
  // A profile missing a field of its time model.
  fs::path profile = dir / "broken.json";
  std::ofstream(profile) << R"({"base":"h100-sxm-datasheet","name":"x","time_model":{"laws":{},"launch_gap_us":1}})";
  auto plan = run_cli("plan " + schedlab::test::data_path("inductor/mlp_2.post.json") + " --hardware " + profile.string());
  CHECK(plan.code == 1);
  CHECK(plan.out == "schedlab plan: " + profile.string() + ": hardware profile: time_model.laws: missing field \"gemm\"\n");
  CHECK(run_cli("simulate " + schedlab::test::data_path("inductor/mlp_2.post.json") + " --hardware " + profile.string()).code == 1);
  CHECK(run_cli("accuracy " + dir.string()).code == 2);           // no --hardware
  // A sibling that is no profile, or one without a time model.
  fs::path good = synthetic_measured_dir("sibling");
  auto sibling = run_cli("fit-profile " + good.string() + " -o " + out.string() + " --sibling no-such-gpu");
  CHECK(sibling.code == 2);
  CHECK_THAT(sibling.out, Catch::Contains("unknown hardware profile \"no-such-gpu\""));
  auto datasheet = run_cli("fit-profile " + good.string() + " -o " + out.string() + " --sibling h100-sxm-datasheet");
  CHECK(datasheet.code == 2);
  CHECK(datasheet.out == "schedlab fit-profile: --sibling h100-sxm-datasheet: a profile without a fitted time model\n");
  CHECK_FALSE(fs::exists(out));
  // Class laws from a profile without a time model; a class sweep folder with no measured file.
  auto laws_from = run_cli("fit-profile " + good.string() + " -o " + out.string() + " --class-laws-from h200-datasheet");
  CHECK(laws_from.code == 2);
  CHECK(laws_from.out == "schedlab fit-profile: --class-laws-from h200-datasheet: a profile without a fitted time model\n");
  const fs::path empty = good / "no_sweep";
  fs::create_directories(empty);
  auto sweep = run_cli("fit-profile " + good.string() + " -o " + out.string() + " --class-sweep " + empty.string());
  CHECK(sweep.code == 2);
  CHECK(sweep.out == "schedlab fit-profile: --class-sweep: no *.measured.json under " + empty.string() + " (after --exclude)\n");
  CHECK_FALSE(fs::exists(out));
  auto launch = run_cli("fit-profile " + good.string() + " -o " + out.string() + " --launch-sweep " + empty.string());
  CHECK(launch.code == 2);
  CHECK(launch.out == "schedlab fit-profile: --launch-sweep: no *.measured.json under " + empty.string() + " (after --exclude)\n");
  CHECK_FALSE(fs::exists(out));
  fs::remove_all(good);
  CHECK(run_cli("accuracy /nonexistent --hardware h200").code == 2);  // not a folder
  fs::remove_all(dir);
}

TEST_CASE("a collective over more than 2^62 ranks is planned, not hung", "[cli][cost]") {
  fs::path dir = fs::temp_directory_path() / "schedlab_cli_huge_group";
  fs::create_directories(dir);
  fs::path graph = dir / "huge.json";
  std::ofstream(graph) << R"({"format":"schedgraph/1","world_size":4611686018427387905,
    "inputs":[{"name":"x","bytes":1024}],"outputs":["w"],
    "nodes":[{"name":"ar","kind":"collective","collective":{"op":"all_reduce","group_size":4611686018427387905,"bytes":1024},
              "outputs":[{"name":"y","bytes":1024}],"reads":[{"name":"x","dep":"star","bytes":1024}]},
             {"name":"w","kind":"wait","outputs":[{"name":"w","bytes":0,"layout":"none","mutation_of":"y"}],"reads":[{"name":"y","dep":"star"}]}]})";
  auto r = run_cli("plan " + graph.string() + " --no-fuse");
  CHECK(r.code == 0);
  fs::remove_all(dir);
}
#endif
