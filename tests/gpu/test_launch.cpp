// One process per GPU (native-cuda/host/launch.h): the launcher's
// environment, the NCCL id's text form, and rank 0's merge of the reports.
#include <catch2/catch.hpp>

#include <map>

#include "core/util/error.h"
#include "native-cuda/host/launch.h"

using namespace schedlab;
using namespace schedlab::gpu;

namespace {

std::function<const char*(const char*)> env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

nlohmann::json rank_report(const std::string& graph, double wall, std::vector<nlohmann::json> measured, bool agree = true) {
  nlohmann::json nodes = nlohmann::json::array();
  for (std::size_t i = 0; i < measured.size(); ++i) nodes.push_back({{"name", "op" + std::to_string(i)}, {"measured_us", measured[i]}});
  return {{"graph", graph},
          {"device", "H200"},
          {"nodes", nodes},
          {"totals", {{"measured_us", 1.0}, {"measured_wall_us", wall}}},
          {"memory", {{"measured_live_peak_bytes", 100}, {"pool_used_high_bytes", 128}, {"peaks_agree", agree}}}};
}

}  // namespace

TEST_CASE("torchrun's variables place the process", "[gpu][launch]") {
  const auto env = launch_env_from(
      env_of({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}}), true);
  REQUIRE(env);
  CHECK(env->rank == 3);
  CHECK(env->world_size == 4);
  CHECK(env->local_rank == 1);
  CHECK(env->master_addr == "node0");
  CHECK(env->bootstrap_port == 29501);  // torchrun's store holds MASTER_PORT itself
  const auto own = launch_env_from(env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"},
                                           {"SCHEDLAB_BOOTSTRAP_PORT", "4000"}}),
                                   true);
  CHECK(own->bootstrap_port == 4000);
  CHECK(own->local_rank == 0);  // LOCAL_RANK defaults to RANK
}

TEST_CASE("without WORLD_SIZE the run is single-process", "[gpu][launch]") {
  CHECK_FALSE(launch_env_from(env_of({}), true).has_value());
  CHECK_THROWS_WITH(launch_env_from(env_of({}), false), Catch::Contains("--nccl-id-file: WORLD_SIZE and RANK must be set"));
}

TEST_CASE("bad launcher variables are named", "[gpu][launch]") {
  CHECK_THROWS_AS(launch_env_from(env_of({{"WORLD_SIZE", "2"}, {"RANK", "2"}}), false), OptionError);
  CHECK_THROWS_WITH(launch_env_from(env_of({{"WORLD_SIZE", "2"}, {"RANK", "2"}}), false), Catch::Contains("RANK=\"2\""));
  CHECK_THROWS_WITH(launch_env_from(env_of({{"WORLD_SIZE", "two"}, {"RANK", "0"}}), false), Catch::Contains("WORLD_SIZE=\"two\""));
  CHECK_THROWS_WITH(launch_env_from(env_of({{"WORLD_SIZE", "2"}}), false), Catch::Contains("RANK is not set"));
  CHECK_THROWS_WITH(launch_env_from(env_of({{"WORLD_SIZE", "2"}, {"RANK", "1"}}), true), Catch::Contains("MASTER_ADDR is not set"));
  CHECK_THROWS_WITH(launch_env_from(env_of({{"WORLD_SIZE", "2"}, {"RANK", "1"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "0"}}), true),
                    Catch::Contains("MASTER_PORT=\"0\""));
}

TEST_CASE("the NCCL id survives its text form", "[gpu][launch]") {
  std::vector<std::uint8_t> id(128);
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(i * 37 + 5);
  const std::string text = encode_unique_id(id);
  CHECK(text.size() == 256);
  CHECK(decode_unique_id(text + "\n", 128) == id);
  CHECK_THROWS_WITH(decode_unique_id(text.substr(2), 128), Catch::Contains("expected 256 hex digits, got 254"));
  std::string bad = text;
  bad[10] = 'g';
  CHECK_THROWS_WITH(decode_unique_id(bad, 128), Catch::Contains("not hex at character 10"));
}

TEST_CASE("rank reports sit next to the merged one", "[gpu][launch]") {
  CHECK(rank_report_path("out/run.json", 3) == "out/run.rank3.json");
  CHECK(rank_report_path("report", 0) == "report.rank0.json");
}

TEST_CASE("rank 0 merges every rank's report", "[gpu][launch]") {
  const auto merged = merge_rank_reports({rank_report("g", 100, {1.0, nullptr}), rank_report("g", 140, {3.0, nullptr}, false)});
  CHECK(merged["world_size"] == 2);
  CHECK(merged["process_per_gpu"] == true);
  CHECK(merged["totals"]["measured_wall_us_max"] == 140.0);
  CHECK(merged["totals"]["measured_wall_us"] == 100.0);  // rank 0's own figures stay
  CHECK(merged["nodes"][0]["measured_us_by_rank"] == nlohmann::json::array({1.0, 3.0}));
  CHECK(merged["nodes"][0]["measured_us_max"] == 3.0);
  CHECK(merged["nodes"][1]["measured_us_max"].is_null());
  CHECK(merged["ranks"][1]["measured_wall_us"] == 140.0);
  CHECK(merged["memory"]["peaks_agree_on_every_rank"] == false);
  CHECK_THROWS_WITH(merge_rank_reports({rank_report("g", 1, {1.0}), rank_report("h", 1, {1.0})}), Catch::Contains("rank 1 ran another graph (h)"));
  CHECK_THROWS_AS(merge_rank_reports({}), Error);
}
