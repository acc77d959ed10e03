// Calibration measurements -> a hardware profile core/cost accepts
// (native-cuda/host/calibration.h), and the run report's comparisons
// (native-cuda/host/run_report.h). No GPU: the samples are synthetic.
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/io/profiles.h"
#include "core/memory/estimate.h"
#include "native-cuda/host/calibration.h"
#include "native-cuda/host/run_report.h"
#include "tests/test_util.h"

using namespace schedlab;
using namespace schedlab::gpu;

namespace {

CalibrationMeasurements h200_like() {
  CalibrationMeasurements m;
  m.device_name = "NVIDIA H200";
  m.device_count = 2;
  m.copies = {{1LL << 30, 500.0}, {1LL << 31, 1000.0}};  // 2 GiB read+written in 1 ms and 500 us
  m.gemms = {{"f32", 8192, 8192, 8192, 20000.0}, {"bf16", 8192, 8192, 8192, 1400.0}, {"bf16", 4096, 4096, 4096, 200.0}};
  m.launch_us = 2.5;
  return m;
}

}  // namespace

TEST_CASE("rates from samples", "[gpu][calibration]") {
  CHECK(copy_bytes_per_s({1000000, 1.0}) == Approx(2e12));
  CHECK(gemm_flops_per_s({"bf16", 1000, 1000, 1000, 1.0}) == Approx(2e15));
  // All-reduce over 2 ranks: the ring moves 2(n-1)/n = 1 × the payload per link.
  CHECK(collective_bus_bytes_per_s({CollectiveOp::AllReduce, 1000000000, 2, 10000.0}) == Approx(1e11));
  // All-gather over 4 ranks: (n-1)/n of the output.
  CHECK(collective_bus_bytes_per_s({CollectiveOp::AllGather, 4000000000LL, 4, 10000.0}) == Approx(3e11));
  // Reduce-scatter: (n-1)/n of the full input, n × the output payload.
  CHECK(collective_bus_bytes_per_s({CollectiveOp::ReduceScatter, 1000000000, 4, 10000.0}) == Approx(3e11));
}

TEST_CASE("the ring model's bandwidth and latency are fitted back", "[gpu][calibration]") {
  HardwareProfile hw = builtin_profile("h200");
  hw.nvlink_bytes_per_s = 300e9;
  hw.nvlink_latency_us = 7.5;
  for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    std::vector<CollectiveSample> samples;
    for (std::int64_t bytes : {65536LL, 1LL << 20, 1LL << 28})
      samples.push_back({op, bytes, 2, estimate_collective_algorithms(op, bytes, 2, 2, hw).ring_us});
    const CollectiveFit f = fit_collective(samples);
    CHECK(f.bus_bytes_per_s == Approx(300e9));
    CHECK(f.step_latency_us == Approx(7.5));
  }
  // Times under the bandwidth line give latency 0, never a negative one.
  const CollectiveFit f = fit_collective({{CollectiveOp::AllReduce, 1000000, 2, 5.0}, {CollectiveOp::AllReduce, 1000000000, 2, 10000.0}});
  CHECK(f.step_latency_us == 0);
  // One size: its bus bandwidth, no latency.
  CHECK(fit_collective({{CollectiveOp::AllReduce, 1000000000, 2, 10000.0}}).bus_bytes_per_s == Approx(1e11));
  CHECK_THROWS(fit_collective({}));
}

TEST_CASE("a calibrated profile round-trips through parse_hardware_profile", "[gpu][calibration]") {
  CalibrationMeasurements m = h200_like();
  HardwareProfile hw = builtin_profile("h200");
  hw.nvlink_bytes_per_s = 350e9;
  hw.nvlink_latency_us = 4;
  for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter})
    for (std::int64_t bytes : {1LL << 16, 1LL << 30})
      m.collectives.push_back({op, bytes, 2, estimate_collective_algorithms(op, bytes, 2, 2, hw).ring_us});

  const HardwareProfile& base = base_profile_for_device(m.device_name);
  CHECK(base.name == "h200");
  const HardwareProfile p = calibrated_profile(m, base);
  CHECK(p.name == "measured-nvidia-h200");
  CHECK(p.dram_bytes_per_s == Approx(4.294967296e12));
  CHECK(p.flops_per_s.at("bf16") == Approx(2.0 * 8192 * 8192 * 8192 / 1.4e-3));  // the best size wins
  CHECK(p.flops_per_s.at("f8") == base.flops_per_s.at("f8"));                     // not measured: datasheet
  CHECK(p.kernel_launch_us == 2.5);
  CHECK(p.nvlink_bytes_per_s == Approx(350e9));
  CHECK(p.nvlink_latency_us == Approx(4));
  CHECK(p.network_bytes_per_s == base.network_bytes_per_s);

  const HardwareProfile back = parse_hardware_profile(hardware_profile_json(p));
  CHECK(back.name == p.name);
  CHECK(back.dram_bytes_per_s == p.dram_bytes_per_s);
  CHECK(back.flops_per_s == p.flops_per_s);
  CHECK(back.nvlink_latency_us == p.nvlink_latency_us);

  const auto details = calibration_details_json(m, base, p);
  CHECK(details["collectives"].size() == 6);
  CHECK(details["collectives"][0]["model_us"].get<double>() == Approx(m.collectives[0].us));
  CHECK(details["measured_fields"].size() == 6);  // dram, f32, bf16, launch, nvlink bw, nvlink latency
}

TEST_CASE("calibration without the figures the profile needs is refused", "[gpu][calibration]") {
  CalibrationMeasurements m = h200_like();
  m.copies.clear();
  CHECK_THROWS_WITH(calibrated_profile(m, builtin_profile("h200")), Catch::Contains("no DRAM copy"));
  m = h200_like();
  m.gemms.erase(m.gemms.begin());
  CHECK_THROWS_WITH(calibrated_profile(m, builtin_profile("h200")), Catch::Contains("no f32 GEMM"));
  CHECK(base_profile_for_device("NVIDIA H100 80GB HBM3").name == "h100-sxm");
  CHECK(base_profile_for_device("Some GPU").name == std::string(kDefaultHardwareProfile));
}

TEST_CASE("run report compares estimates with measurements", "[gpu][report]") {
  const Graph g = load_graph_file(test::data_path("inductor/fsdp_1.post.json"));
  const auto info = compute_planning_info(g, g.baseline_order());
  const auto schedule = build_execution_schedule(g, info, g.baseline_order());
  std::vector<StandIn> stand_ins;
  for (NodeId v = 0; v < g.num_nodes(); ++v) stand_ins.push_back(plan_stand_in(g, info, v));
  const HardwareProfile& hw = builtin_profile("h200");

  RunMeasurements m;
  m.device_name = "test";
  m.collective_ranks = 2;
  m.repetitions = 1;
  for (const auto& step : schedule.steps) {
    const bool work = stand_ins[step.node].kind != StandInKind::None;
    m.steps.push_back({work, work ? 10.0 : 0.0, ""});
  }
  m.memory.live_peak_bytes = schedule.peak_bytes;
  const std::int64_t estimated = estimate_peak_memory(g, info, g.baseline_order()).peak;
  auto r = run_report_json(g, schedule, stand_ins, hw, estimated, m);
  CHECK(r["memory"]["peaks_agree"] == true);
  CHECK(r["nodes"].size() == g.nodes.size());
  // A collective is compared with the model at the group it ran over (2),
  // and the graph's own group (8) is reported beside it.
  bool checked = false;
  for (const auto& row : r["nodes"]) {
    if (row["kind"] != "collective") continue;
    const NodeId v = g.find_node(row["name"].get<std::string>());
    const auto& c = *g.nodes[v].collective;
    CHECK(row["estimated_us"].get<double>() == Approx(estimate_collective_us(c.kind, c.bytes, 2, 2, hw)));
    CHECK(row["estimated_us_at_graph_group"].get<double>() == Approx(estimate_collective_us(c.kind, c.bytes, 8, 8, hw)));
    checked = true;
  }
  CHECK(checked);
  CHECK(r["totals"]["by_stand_in"]["collective"]["nodes"] == 12);

  m.memory.live_peak_bytes -= 1;
  CHECK(run_report_json(g, schedule, stand_ins, hw, estimated, m)["memory"]["peaks_agree"] == false);
  m.steps.pop_back();
  CHECK_THROWS_WITH(run_report_json(g, schedule, stand_ins, hw, estimated, m), Catch::Contains("do not match"));
}

TEST_CASE("the checked-in measured profiles load as hardware profiles", "[gpu][calibration]") {
  const std::filesystem::path dir = std::filesystem::path(test::data_path("")) / ".." / ".." / "profiles";
  int seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (!f.starts_with("measured-") || !f.ends_with(".json")) continue;
    ++seen;
    INFO(f);
    const HardwareProfile p = parse_hardware_profile(read_text_file(e.path().string()));
    CHECK(p.name.starts_with("measured-"));
    CHECK(p.dram_bytes_per_s > 1e12);
    CHECK(p.kernel_launch_us > 0);
  }
  CHECK(seen >= 1);
}
