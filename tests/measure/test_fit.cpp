// The measured-file reader, the fit and the accuracy report on SYNTHETIC
// measurements: timelines generated here from a known time model on the
// exported graphs (no real GPU data). The fit must recover the model that
// made them; the reader must name the place of every defect.
#include <catch2/catch.hpp>

#include <cmath>
#include <initializer_list>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/cost/cost_model.h"
#include "core/io/graph_reader.h"
#include "core/io/measured_reader.h"
#include "core/io/profiles.h"
#include "core/measure/accuracy.h"
#include "core/measure/fit.h"
#include "core/predict/predicted.h"
#include "core/util/error.h"
#include "tests/test_util.h"

using namespace schedlab;
using Catch::Detail::Approx;

namespace {

// A law of the first three terms (f32 compute at the same factor).
ClassLaw law3(double fixed, double compute, double memory, double kernels_per_node) {
  return law_from_factors(kernels_per_node, {{LawTerm::Fixed, fixed}, {LawTerm::Compute, compute}, {LawTerm::Memory, memory}});
}

// The model the synthetic GPU runs.
HardwareProfile synthetic_truth() {
  HardwareProfile hw = builtin_profile("h100-sxm-datasheet");
  hw.name = "synthetic";
  TimeModel tm;
  tm.laws[KernelClass::Gemm] = law3(4.0, 1.3, 0.2, 1);
  tm.laws[KernelClass::Attention] = law3(9.0, 1.6, 2.5, 2);
  tm.laws[KernelClass::Convolution] = law3(7.0, 1.5, 3.0, 2);
  tm.laws[KernelClass::AttentionBackward] = law3(12.0, 2.1, 3.5, 3);
  tm.laws[KernelClass::ConvolutionBackward] = law3(11.0, 1.8, 4.0, 4);
  tm.laws[KernelClass::TritonPointwise] = law3(2.5, 0.0, 1.25, 1);
  tm.laws[KernelClass::TritonReduction] = law3(3.5, 0.0, 1.6, 1);
  tm.laws[KernelClass::Extern] = law3(5.0, 0.0, 2.0, 1);
  tm.laws[KernelClass::Copy] = law3(3.0, 0.0, 1.1, 1);
  tm.launch_gap_us = 1.5;
  tm.cudagraph_gap_us = 0.75;
  tm.host_us_per_kernel = 5.0;
  tm.host_us_per_extern = 9.0;
  tm.host_us_per_convolution = 9.0;
  tm.host_us_per_convolution_backward = 9.0;
  tm.host_us_per_attention = 14.0;
  tm.host_us_per_item = 2.0;
  tm.host_us_per_input = 0.5;
  tm.host_us_per_allocation = 1.5;
  tm.host_call_us = 30.0;
  tm.host_call_epilogue_us = 20.0;  // the call's first 10 us come before its first launch
  hw.time_model = tm;
  return hw;
}

// A schedmeasured/1 document for `g` as the synthetic GPU would time it:
// every node's kernels back to back on one stream, launched by the host.
nlohmann::json synthetic_measurement(const Graph& g, const HardwareProfile& truth) {
  const TimeModel& tm = *truth.time_model;
  const std::vector<double> truth_us = calibrated_runtimes_us(g, truth);
  // The buffers the wrapper allocates afresh, as the call runs (Inductor's order after memory reordering).
  const std::vector<int> fresh = fresh_allocations_per_node(g, estimate_memory_as_executed(g, order_as_run(g)));
  nlohmann::json kernels = nlohmann::json::array();
  double host = tm.host_call_us - tm.host_call_epilogue_us + tm.host_us_per_input * g.num_inputs, device = 0, total = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const KernelClass c = classify_node(g, g.nodes[v]);
    host += tm.host_us_per_allocation * fresh[v];
    if (is_item_node(g, g.nodes[v])) host += tm.host_us_per_item;
    if (!class_needs_law(c)) continue;
    const ClassLaw& law = tm.laws.at(c);
    const int count = static_cast<int>(law.kernels_per_node);
    const double us = truth_us[v];
    host += host_us_per_node(tm, c);
    for (int k = 0; k < count; ++k) {
      const double start = std::max(device, host) + tm.launch_gap_us;
      device = start + us / count;
      total += us / count;
      kernels.push_back({{"name", "k" + std::to_string(v) + "_" + std::to_string(k)}, {"node", g.nodes[v].name}, {"class", std::string(to_string(c))},
                         {"start_us", start}, {"duration_us", us / count}, {"stream", 7}});
    }
  }
  return {{"format", "schedmeasured/1"},
          {"graph", g.name},
          {"env", {{"device", "synthetic GPU"}, {"device_kind", "synthetic"}}},
          {"memory", {{"allocated_before_bytes", 0}, {"freeable_inputs_bytes", 0}, {"peak_allocated_bytes", 1 << 20}, {"reserved_before_bytes", 0},
                      {"peak_reserved_bytes", 2 << 20}}},
          {"kernels", kernels},
          {"kernel_time_us", total},
          {"wall_time_us", std::max(device, host + tm.host_call_epilogue_us)},
          {"host_time_us", host + tm.host_call_epilogue_us},
          {"wall_time_us_cudagraphs", nullptr},
          {"unbacked", nlohmann::json::object()}};
}

std::vector<MeasuredCase> synthetic_cases(const HardwareProfile& truth, const std::vector<std::string>& names) {
  std::vector<MeasuredCase> out;
  for (const std::string& name : names) {
    MeasuredCase c;
    c.path = name + ".measured.json (synthetic)";
    c.graph = load_graph_file(test::data_path("exported/" + name + ".post.json"));
    c.measured = load_measured(synthetic_measurement(c.graph, truth).dump(), c.path);
    check_matches(c.measured, c.graph, c.path);
    out.push_back(std::move(c));
  }
  return out;
}

// Sizes vary enough within each class here to pin all three terms of a law
// (a class seen at one size only is fitted by its fixed term alone).
// Every class has 5 nodes or more (fewer borrow a related class's law).
const std::vector<std::string> kFitSet = {"transformer_l_0_fwd", "transformer_l_1_bwd", "convnet_bn_0_fwd", "convnet_bn_1_bwd",
                                          "mlp_checkpoint_1_bwd", "adamw_step_0_inf", "gemm_sweep_0_inf", "pointwise_sweep_0_inf",
                                          "attention_sweep_0_fwd", "attention_sweep_1_bwd", "conv_sweep_0_fwd", "conv_sweep_1_bwd"};
// Held out: GEMMs and Triton kernels at sizes the fit did not see.
const std::vector<std::string> kHeldOut = {"mlp_checkpoint_0_fwd", "lm_head_ce_0_fwd", "lm_head_ce_1_bwd"};

// A measured node of one kernel with the given law features.
NodeSample one_kernel_sample(KernelClass cls, std::initializer_list<std::pair<LawTerm, double>> features, double measured_us) {
  NodeSample s;
  s.cls = cls;
  s.kernels = 1;
  for (const auto& [term, value] : features) s.features[static_cast<std::size_t>(term)] = value;
  s.measured_us = measured_us;
  return s;
}

}  // namespace

TEST_CASE("fit: synthetic measurements give back the model that made them", "[measure][fit]") {
  const HardwareProfile truth = synthetic_truth();
  auto cases = synthetic_cases(truth, kFitSet);
  ProfileFit fit = fit_profile(cases, builtin_profile("h100-sxm-datasheet"), "refit");
  REQUIRE(fit.profile.time_model);
  const TimeModel& tm = *fit.profile.time_model;
  CHECK(tm.launch_gap_us == Approx(1.5));
  CHECK(tm.host_us_per_kernel == Approx(5.0));
  CHECK(tm.host_us_per_extern == Approx(9.0));
  CHECK(tm.host_us_per_attention == Approx(14.0));
  CHECK(tm.host_us_per_item == Approx(2.0));  // the attention calls' multi-output items
  CHECK(tm.host_us_per_input == Approx(0.5));
  CHECK(tm.host_us_per_allocation == Approx(1.5));
  CHECK(tm.host_call_us == Approx(30.0));
  // The device-bound calls' leads (gemm_sweep's, conv_sweep's) give the epilogue back.
  CHECK(tm.host_call_epilogue_us == Approx(20.0));
  for (const MeasuredCase& c : cases)
    CHECK(predict(c.graph, c.graph.baseline_order(), fit.profile).wall_time_us == Approx(c.measured.wall_time_us).epsilon(0.05));
  CHECK(tm.laws.at(KernelClass::Attention).kernels_per_node == Approx(2));
  // Every measured node is priced as the truth prices it.
  for (const MeasuredCase& c : cases) {
    const std::vector<double> fitted = calibrated_runtimes_us(c.graph, fit.profile), made = calibrated_runtimes_us(c.graph, truth);
    for (NodeId v = 0; v < c.graph.num_nodes(); ++v) {
      INFO(c.graph.nodes[v].name << " " << to_string(classify_node(c.graph, c.graph.nodes[v])));
      CHECK(fitted[v] == Approx(made[v]).epsilon(1e-6));
    }
  }
  for (KernelClass k : {KernelClass::Gemm, KernelClass::TritonPointwise, KernelClass::TritonReduction}) {
    CHECK(tm.laws.at(k)[LawTerm::Fixed] == Approx(truth.time_model->laws.at(k)[LawTerm::Fixed]).epsilon(1e-6));
    CHECK(tm.laws.at(k)[LawTerm::Memory] == Approx(truth.time_model->laws.at(k)[LawTerm::Memory]).epsilon(1e-6));
  }
  // Deterministic: the same files give the same profile.
  CHECK(hardware_profile_to_json(fit_profile(cases, builtin_profile("h100-sxm-datasheet"), "refit").profile) ==
        hardware_profile_to_json(fit.profile));
  // Held-out graphs: kernel time exact, wall within the grid's resolution.
  AccuracyReport acc = measure_accuracy(synthetic_cases(truth, kHeldOut), fit.profile);
  REQUIRE(acc.graphs.size() == kHeldOut.size());
  for (const auto& g : acc.graphs) {
    CHECK(g.kernel_est_us == Approx(g.kernel_meas_us).epsilon(1e-6));
    CHECK(g.wall_est_us == Approx(g.wall_meas_us).epsilon(0.05));
  }
  CHECK(kernel_time_error(acc).worst < 1e-6);
  for (const auto& c : acc.classes) CHECK(c.est_us == Approx(c.meas_us).epsilon(1e-6));
  const std::string svg = accuracy_svg(acc);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("<circle") != std::string::npos);
  CHECK(accuracy_to_text(acc).find("per kernel class") != std::string::npos);
}

TEST_CASE("fit: the items' host figure from the wrapper timed alone, restated at the fit's host speed", "[measure][fit]") {
  // The synthetic host at probe 100 µs; the wrapper's item timed at 1 µs
  // on a host twice as fast (its probes' median 50 µs): 2 µs at the fit's
  // speed, the truth. The other figures come back from what the items leave.
  const HardwareProfile truth = synthetic_truth();
  std::vector<MeasuredCase> cases;
  for (const std::string& name : kFitSet) {
    MeasuredCase c;
    c.path = name;
    c.graph = load_graph_file(test::data_path("exported/" + name + ".post.json"));
    nlohmann::json doc = synthetic_measurement(c.graph, truth);
    doc["host_probe_wall_us"] = 100.0;
    c.measured = load_measured(doc.dump(), c.path);
    cases.push_back(std::move(c));
  }
  const WrapperItemCost timed = load_wrapper_item_cost(
      R"({"us_per_call": {"tuple_item": 0.25, "assert_size_stride": 0.75, "mm_out_plain": 11.5}, "host_probe_us": [60, 40, 50, 45, 90]})",
      "w.json");
  CHECK(timed.item_us == 1.0);
  const TimeModel tm = *fit_profile(cases, builtin_profile("h100-sxm-datasheet"), "timed items", nullptr, default_own_law_classes(), {}, {}, {},
                                    timed)
                            .profile.time_model;
  CHECK(tm.host_us_per_item == Approx(2.0));
  CHECK(tm.host_us_per_attention == Approx(14.0));
  CHECK(tm.host_us_per_extern == Approx(9.0));
  CHECK(tm.host_call_us == Approx(30.0));
  // Timed at a cost other than the truth's, the item keeps it and the
  // other columns take up the difference.
  const TimeModel off = *fit_profile(cases, builtin_profile("h100-sxm-datasheet"), "timed items", nullptr, default_own_law_classes(), {}, {},
                                     {}, WrapperItemCost{0.2, {50}})
                             .profile.time_model;
  CHECK(off.host_us_per_item == Approx(0.4));
  CHECK(off.host_us_per_attention > 14.0);
}

TEST_CASE("wrapper costs: every defect is named by its place", "[measure]") {
  auto error_of = [](const std::string& text) {
    try {
      load_wrapper_item_cost(text, "w.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of(R"({"us_per_call": {"tuple_item": 0.04, "assert_size_stride": 0.35}, "host_probe_us": [90]})") == "no error");
  CHECK(error_of("[1]") == "w.json: expected a JSON object");
  CHECK(error_of(R"({"host_probe_us": [90]})") == "w.json: us_per_call: missing field");
  CHECK(error_of(R"({"us_per_call": [], "host_probe_us": [90]})") == "w.json: us_per_call: expected an object {operation: µs}");
  CHECK(error_of(R"({"us_per_call": {"tuple_item": 0.04}, "host_probe_us": [90]})") == "w.json: us_per_call.assert_size_stride: missing field");
  CHECK(error_of(R"({"us_per_call": {"tuple_item": -1, "assert_size_stride": 0.35}, "host_probe_us": [90]})") ==
        "w.json: us_per_call.tuple_item: expected a finite number of µs in 0..1e12");
  CHECK(error_of(R"({"us_per_call": {"tuple_item": 0.04, "assert_size_stride": 0.35}, "host_probe_us": []})") ==
        "w.json: host_probe_us: expected a non-empty array of µs");
  CHECK(error_of(R"({"us_per_call": {"tuple_item": 0.04, "assert_size_stride": 0.35}, "host_probe_us": [90, 0]})") ==
        "w.json: host_probe_us[1]: expected a number of µs between 0.001 and 1000000");
  CHECK(error_of(R"({"us_per_call": {"tuple_item": 0.04, "assert_size_stride": 0.35}, "host_probe_us": [90, "x"]})") ==
        "w.json: host_probe_us[1]: expected a finite number of µs in 0..1e12");
  CHECK(error_of("{") != "no error");
}

TEST_CASE("fit: host times from hosts of different speeds are restated at one speed", "[measure][fit]") {
  // The same synthetic GPU measured from three hosts: one at the truth's
  // speed (probe 80 µs), two 25 % slower (probe 100 µs: every host cost
  // 1.25x). The fit states the host costs at the median probe (100) and the
  // accuracy report prices each file's host at its own probe's speed.
  const HardwareProfile truth = synthetic_truth();
  HardwareProfile slow = truth;
  slow.time_model = at_host_speed([&] {
    TimeModel tm = *truth.time_model;
    tm.host_probe_us = 80;
    return tm;
  }(), 100);
  CHECK(slow.time_model->host_us_per_kernel == Approx(5.0 * 1.25));
  CHECK(slow.time_model->host_call_us == Approx(30.0 * 1.25));
  CHECK(slow.time_model->launch_gap_us == truth.time_model->launch_gap_us);  // the GPU's figures stay
  std::vector<MeasuredCase> cases;
  for (std::size_t i = 0; i < kFitSet.size(); ++i) {
    const bool fast = i % 3 == 0;
    MeasuredCase c;
    c.path = kFitSet[i];
    c.graph = load_graph_file(test::data_path("exported/" + kFitSet[i] + ".post.json"));
    nlohmann::json doc = synthetic_measurement(c.graph, fast ? truth : slow);
    doc["host_probe_full_speed_us"] = fast ? 80.0 : 100.0;
    c.measured = load_measured(doc.dump(), c.path);
    cases.push_back(std::move(c));
  }
  const ProfileFit fit = fit_profile(cases, builtin_profile("h100-sxm-datasheet"), "two hosts");
  const TimeModel& tm = *fit.profile.time_model;
  CHECK(tm.host_probe_us == 100);
  CHECK(tm.host_us_per_kernel == Approx(5.0 * 1.25));
  CHECK(tm.host_us_per_extern == Approx(9.0 * 1.25));
  CHECK(tm.host_call_us == Approx(30.0 * 1.25));
  CHECK(tm.host_us_per_input == Approx(0.5 * 1.25));
  CHECK(tm.host_us_per_allocation == Approx(1.5 * 1.25));
  const AccuracyReport at_own = measure_accuracy(cases, fit.profile, true, true);
  const AccuracyReport at_profile = measure_accuracy(cases, fit.profile, true, false);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO(cases[i].path);
    const bool fast = i % 3 == 0;
    CHECK(at_own.graphs[i].host_speed_factor == Approx(fast ? 0.8 : 1.0));
    CHECK(at_own.graphs[i].wall_est_us == Approx(at_own.graphs[i].wall_meas_us).epsilon(0.05));
    CHECK(at_profile.graphs[i].host_speed_factor == 1);
  }
  CHECK(accuracy_to_text(at_own).find("walls: host costs at each run's host speed (its host probe over the profile's: 0.800 to 0.800") !=
        std::string::npos);
  // A host of unknown speed, or a profile without one, prices as the profile says.
  TimeModel unknown = tm;
  unknown.host_probe_us = 0;
  CHECK(at_host_speed(unknown, 50).host_call_us == tm.host_call_us);
  CHECK(at_host_speed(tm, 0).host_call_us == tm.host_call_us);
}

TEST_CASE("fit: a class nobody measured borrows a related law, and says so", "[measure][fit]") {
  auto cases = synthetic_cases(synthetic_truth(), {"transformer_s_0_fwd"});  // no convolution, no copy
  ProfileFit fit = fit_profile(cases, builtin_profile("h100-sxm-datasheet"), "partial");
  CHECK(std::find(fit.borrowed.begin(), fit.borrowed.end(), "convolution<-gemm") != fit.borrowed.end());
  CHECK(std::find(fit.borrowed.begin(), fit.borrowed.end(), "convolution_backward<-convolution") != fit.borrowed.end());
  // The written profile loads back with every field.
  HardwareProfile back = parse_hardware_profile(hardware_profile_to_json(fit.profile).dump());
  CHECK(back.time_model->laws.size() == 9);
}

TEST_CASE("a measured file's observed workspaces price its graph's nodes on that GPU", "[measure]") {
  Graph g = load_graph_file(test::data_path("exported/transformer_s_0_fwd.post.json"));
  nlohmann::json doc = synthetic_measurement(g, synthetic_truth());
  doc["workspace_bytes"] = {{g.nodes[1].name, 4096}};
  const MeasuredGraph m = load_measured(doc.dump(), "x.measured.json");
  check_matches(m, g, "x.measured.json");
  REQUIRE_FALSE(g.nodes[1].workspace_bytes.has_value());
  apply_observed_workspaces(m, g);
  CHECK(g.nodes[1].workspace_bytes == 4096);
  CHECK_FALSE(g.nodes[0].workspace_bytes.has_value());
}

TEST_CASE("measured files: every defect is named by its place", "[measure]") {
  Graph g = load_graph_file(test::data_path("exported/transformer_s_0_fwd.post.json"));
  nlohmann::json good = synthetic_measurement(g, synthetic_truth());
  auto error_of = [&](nlohmann::json doc) {
    try {
      MeasuredGraph m = load_measured(doc.dump(), "x.measured.json");
      check_matches(m, g, "x.measured.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of(good) == "no error");
  auto doc = good;
  doc.erase("wall_time_us");
  CHECK(error_of(doc) == "x.measured.json: wall_time_us: missing field");
  doc = good;
  doc["memory"].erase("peak_reserved_bytes");
  CHECK(error_of(doc) == "x.measured.json: memory.peak_reserved_bytes: missing field");
  doc = good;
  doc["kernels"][3]["duration_us"] = -1;
  CHECK(error_of(doc) == "x.measured.json: kernels[3].duration_us: expected a finite number of µs in 0..1e12");
  doc = good;
  doc["graph"] = "another_graph";
  CHECK(error_of(doc).find("x.measured.json: graph: measured \"another_graph\"") == 0);
  doc = good;
  doc["kernels"][0]["node"] = "op999";
  CHECK(error_of(doc) == "x.measured.json: kernels[0].node: no node \"op999\" in graph \"" + g.name + "\"");
  doc = good;
  doc["workspace_bytes"] = {{"op999", 512}};
  CHECK(error_of(doc) == "x.measured.json: workspace_bytes.op999: no node \"op999\" in graph \"" + g.name + "\"");
  doc = good;
  doc["workspace_bytes"] = {{g.nodes[0].name, -5}};
  CHECK(error_of(doc).find("x.measured.json: workspace_bytes." + g.nodes[0].name + ": ") == 0);
  doc = good;
  doc["host_probe_full_speed_us"] = 0;
  CHECK(error_of(doc) == "x.measured.json: host_probe_full_speed_us: expected a number of µs between 0.001 and 1000000");
  doc["host_probe_full_speed_us"] = 1e300;
  CHECK(error_of(doc) == "x.measured.json: host_probe_full_speed_us: expected a number of µs between 0.001 and 1000000");
  doc["host_probe_full_speed_us"] = "fast";
  CHECK(error_of(doc) == "x.measured.json: host_probe_full_speed_us: expected a finite number of µs in 0..1e12");
  // The probe of the wall's own samples, read before the run's: each checked alike.
  doc = good;
  doc["host_probe_full_speed_us"] = 80.0;
  doc["host_probe_wall_us"] = 86.5;
  CHECK(load_measured(doc.dump(), "x.measured.json").host_probe_us == 86.5);
  doc.erase("host_probe_wall_us");
  CHECK(load_measured(doc.dump(), "x.measured.json").host_probe_us == 80.0);
  doc["host_probe_wall_us"] = -1;
  CHECK(error_of(doc) == "x.measured.json: host_probe_wall_us: expected a finite number of µs in 0..1e12");
  doc["host_probe_wall_us"] = 0;
  CHECK(error_of(doc) == "x.measured.json: host_probe_wall_us: expected a number of µs between 0.001 and 1000000");
  doc["host_probe_wall_us"] = 86.5;
  doc["host_probe_full_speed_us"] = 0;
  CHECK(error_of(doc) == "x.measured.json: host_probe_full_speed_us: expected a number of µs between 0.001 and 1000000");
  doc = good;
  doc["workspace_bytes"] = nlohmann::json::array({512});
  CHECK(error_of(doc) == "x.measured.json: workspace_bytes: expected an object {node: bytes}");
  // memory.allocator_at_start: segments adding up to the memory figures read with them.
  const std::int64_t before = 4 << 20, reserved = 20 << 20;
  auto started = good;
  started["memory"]["allocated_before_bytes"] = before;
  started["memory"]["reserved_before_bytes"] = reserved;
  doc = started;
  doc["memory"]["allocator_at_start"] = {{{"pool", "large"}, {"size", reserved}, {"blocks", {{before, 1}, {reserved - before, 0}}}}};
  CHECK(error_of(doc) == "no error");
  CHECK(load_measured(doc.dump(), "x").allocator_at_start->at(0).blocks.at(1).bytes == reserved - before);
  CHECK_FALSE(load_measured(good.dump(), "x").allocator_at_start.has_value());
  auto with_state = [&](nlohmann::json state) {
    auto d = started;
    d["memory"]["allocator_at_start"] = std::move(state);
    return error_of(d);
  };
  const std::string place = "x.measured.json: memory.allocator_at_start";
  CHECK(with_state(nlohmann::json::object()) == place + ": expected an array of segments");
  CHECK(with_state({42}) == place + "[0]: expected an object");
  CHECK(with_state({{{"pool", "huge"}, {"size", reserved}, {"blocks", {{reserved, 0}}}}}) == place + "[0].pool: expected \"small\" or \"large\"");
  CHECK(with_state({{{"pool", "large"}, {"blocks", {{reserved, 0}}}}}) == place + "[0].size: missing field");
  CHECK(with_state({{{"pool", "large"}, {"size", -1}, {"blocks", {{reserved, 0}}}}}) == place + "[0].size: expected an integer in 0..2^53");
  CHECK(with_state({{{"pool", "large"}, {"size", reserved}, {"blocks", nlohmann::json::array()}}}) == place + "[0].blocks: expected a non-empty array");
  CHECK(with_state({{{"pool", "large"}, {"size", reserved}, {"blocks", {{reserved}}}}}) == place + "[0].blocks[0]: expected [bytes, 1 allocated | 0 free]");
  CHECK(with_state({{{"pool", "large"}, {"size", reserved}, {"blocks", {{0, 1}, {reserved, 0}}}}}) ==
        place + "[0].blocks[0][0]: expected bytes > 0 within the segment's size");
  CHECK(with_state({{{"pool", "large"}, {"size", reserved}, {"blocks", {{reserved + 512, 0}}}}}) ==
        place + "[0].blocks[0][0]: expected bytes > 0 within the segment's size");
  CHECK(with_state({{{"pool", "large"}, {"size", reserved}, {"blocks", {{reserved, 2}}}}}) == place + "[0].blocks[0][1]: expected 1 (allocated) or 0 (free)");
  CHECK(with_state({{{"pool", "large"}, {"size", reserved}, {"blocks", {{before, 1}}}}}) ==
        place + "[0].blocks: their bytes sum to " + std::to_string(before) + ", not the segment's " + std::to_string(reserved));
  CHECK(with_state({{{"pool", "large"}, {"size", reserved + 512}, {"blocks", {{before, 1}, {reserved + 512 - before, 0}}}}}) ==
        place + ": its segments hold " + std::to_string(reserved + 512) + " bytes, not memory.reserved_before_bytes " + std::to_string(reserved));
  CHECK(with_state({{{"pool", "large"}, {"size", reserved}, {"blocks", {{reserved, 1}}}}}) ==
        place + ": its allocated blocks hold " + std::to_string(reserved) + " bytes, not memory.allocated_before_bytes " + std::to_string(before));
  // memory.inputs_at_start: each input's [segment, block], an allocated block of the recorded state.
  doc["memory"]["inputs_at_start"] = {{"a", {0, 0}}, {"b", {0, 0}}};
  CHECK(error_of(doc) == "no error");
  CHECK(load_measured(doc.dump(), "x").allocator_at_start->at(0).blocks.at(0).inputs == std::vector<std::string>{"a", "b"});
  auto with_inputs = [&](nlohmann::json inputs) {
    auto d = doc;
    d["memory"]["inputs_at_start"] = std::move(inputs);
    return error_of(d);
  };
  const std::string inputs_place = "x.measured.json: memory.inputs_at_start";
  CHECK(with_inputs(nlohmann::json::array()) == inputs_place + ": expected an object {input name: [segment, block]}");
  CHECK(with_inputs({{"a", {0}}}) == inputs_place + ".a: expected [segment index, block index]");
  CHECK(with_inputs({{"a", {0, -1}}}) == inputs_place + ".a: expected [segment index, block index]");
  CHECK(with_inputs({{"a", {1, 0}}}) == inputs_place + ".a: segment 1 is not in memory.allocator_at_start");
  CHECK(with_inputs({{"a", {0, 2}}}) == inputs_place + ".a: block 2 is not in its segment");
  CHECK(with_inputs({{"a", {0, 1}}}) == inputs_place + ".a: its block is free");
  auto without_state = started;
  without_state["memory"]["inputs_at_start"] = {{"a", {0, 0}}};
  CHECK(error_of(without_state) == inputs_place + ": needs memory.allocator_at_start");
  doc = good;
  doc["format"] = "schedmeasured/2";
  CHECK(error_of(doc) == "x.measured.json: format: expected \"schedmeasured/1\"");
  CHECK_THROWS_WITH(load_measured("{", "y.json"), Catch::StartsWith("y.json: not valid JSON"));
}

TEST_CASE("fit: non-negative least squares by active sets", "[measure][fit]") {
  // Exact data: the solution itself.
  std::vector<std::vector<double>> rows = {{1, 0, 1}, {0, 1, 1}, {1, 1, 2}, {2, 1, 0}, {1, 3, 1}};
  std::vector<double> y, w(rows.size(), 1.0);
  for (const auto& r : rows) y.push_back(2 * r[0] + 3 * r[1] + 0.5 * r[2]);
  std::vector<double> x = nonnegative_least_squares(rows, y, w);
  CHECK(x[0] == Approx(2));
  CHECK(x[1] == Approx(3));
  CHECK(x[2] == Approx(0.5));
  // A column that would take a negative factor stays at 0; the rest is the
  // least-squares fit without it.
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = 2 * rows[i][0] + 3 * rows[i][1] - 1.0 * rows[i][2];
  x = nonnegative_least_squares(rows, y, w);
  CHECK(x[2] == 0);
  CHECK(x[0] >= 0);
  CHECK(x[1] >= 0);
  // A column of zeros, and one equal to another, add nothing and keep it finite.
  rows = {{1, 0, 1}, {2, 0, 2}, {3, 0, 3}};
  y = {1, 2, 3};
  w = {1, 1, 1};
  x = nonnegative_least_squares(rows, y, w);
  CHECK(x[1] == 0);
  CHECK(x[0] + x[2] == Approx(1));
}

TEST_CASE("fit: a specific term too few nodes exercise takes the sibling's factor", "[measure][fit]") {
  // Gemm samples: the base terms, and an unaligned term on 2 nodes only.
  std::vector<NodeSample> samples;
  for (int i = 0; i < 12; ++i)
    samples.push_back(one_kernel_sample(KernelClass::Gemm,
                                        {{LawTerm::Fixed, 1}, {LawTerm::Compute, 5.0 * (i + 1)}, {LawTerm::Unaligned, i < 2 ? 5.0 * (i + 1) : 0.0}},
                                        3 + 1.2 * 5.0 * (i + 1) + (i < 2 ? 6.0 * 5.0 * (i + 1) : 0.0)));
  ClassLaw sibling = law_from_factors(1, {{LawTerm::Unaligned, 6.0}});
  const ClassLaw with = fit_class_law(samples, &sibling);
  CHECK(with[LawTerm::Unaligned] == 6.0);
  CHECK(with[LawTerm::Fixed] == Approx(3));
  CHECK(with[LawTerm::Compute] == Approx(1.2));
  // Without a sibling the term is 0: two nodes do not make a law.
  const ClassLaw without = fit_class_law(samples);
  CHECK(without[LawTerm::Unaligned] == 0);
  // Base terms are fitted from however few nodes exercise them.
  samples.resize(3);
  for (NodeSample& s : samples) {
    s.features[static_cast<std::size_t>(LawTerm::Unaligned)] = 0;
    s.measured_us = 3 + 1.2 * s.features[static_cast<std::size_t>(LawTerm::Compute)];
  }
  const ClassLaw few = fit_class_law(samples, &sibling);
  CHECK(few[LawTerm::Compute] == Approx(1.2));
  CHECK(few[LawTerm::Unaligned] == 6.0);  // exercised by none: the sibling's too
}

// cuDNN's transpose of a narrow NCHW input is one kernel at one rate: the
// convolution backward's nodes fit it, and the other convolution classes,
// whose one or two such nodes would fit it to whatever else they cost (or
// to 0, too few to fit), take that rate.
TEST_CASE("fit: a narrow input's transpose rate is fitted on convolution_backward and pinned in the other convolution classes", "[measure][fit]") {
  std::map<KernelClass, std::vector<NodeSample>> by_class;
  for (int i = 0; i < 8; ++i) {
    const double compute = 4.0 * (i + 1), pixels = i % 4 ? 0.1 * (i + 1) : 0.0, forward_pixels = i == 0 ? 0.5 : 0.0;
    by_class[KernelClass::ConvolutionBackward].push_back(one_kernel_sample(
        KernelClass::ConvolutionBackward, {{LawTerm::Fixed, 1}, {LawTerm::Compute, compute}, {LawTerm::NarrowInputPixels, pixels}},
        10 + 1.1 * compute + 40 * pixels));
    by_class[KernelClass::Convolution].push_back(one_kernel_sample(
        KernelClass::Convolution, {{LawTerm::Fixed, 1}, {LawTerm::Compute, compute}, {LawTerm::NarrowInputPixels, forward_pixels}},
        5 + 0.9 * compute + 40 * forward_pixels));
    // The laws every fit must give (the others borrow from these).
    for (KernelClass c : {KernelClass::Gemm, KernelClass::TritonPointwise})
      by_class[c].push_back(one_kernel_sample(c, {{LawTerm::Fixed, 1}, {LawTerm::Compute, compute}}, 2 + compute));
  }
  const LawFit fit = fit_laws(by_class, nullptr, {});
  CHECK(fit.laws.at(KernelClass::ConvolutionBackward)[LawTerm::NarrowInputPixels] == Approx(40));
  CHECK(fit.laws.at(KernelClass::ConvolutionBackward)[LawTerm::Compute] == Approx(1.1));
  CHECK(fit.laws.at(KernelClass::Convolution)[LawTerm::NarrowInputPixels] == Approx(40));  // pinned: one node would give 0
  CHECK(fit.laws.at(KernelClass::Convolution)[LawTerm::Fixed] == Approx(5));
  CHECK(fit.laws.at(KernelClass::Gemm)[LawTerm::NarrowInputPixels] == 0);  // not a convolution
}

// A finer class's few nodes beyond the L2 cannot tell its spill factor:
// fitted freely on two 1-D convolutions it took 39 x the DRAM time and
// priced a held-out one with large operands at 2 x. Such a base term (not
// one of the required fixed, compute and memory) takes the law parent's
// factor; exercised by five nodes or more it is fitted.
TEST_CASE("fit: a finer class's base term that few nodes exercise takes its law parent's factor", "[measure][fit]") {
  auto spilled_samples = [](int spilled) {
    std::vector<NodeSample> samples;
    for (int i = 0; i < 12; ++i) {
      const double compute = 5.0 * (i + 1), spill = i < spilled ? 2.0 * (i + 1) : 0.0;
      samples.push_back(one_kernel_sample(KernelClass::Convolution1d, {{LawTerm::Fixed, 1}, {LawTerm::Compute, compute}, {LawTerm::Spill, spill}},
                                          3 + 1.5 * compute + 40.0 * spill));
    }
    return samples;
  };
  const ClassLaw parent = law_from_factors(1, {{LawTerm::Spill, 1.2}, {LawTerm::Fp32Compute, 0.8}});
  const ClassLaw two = fit_class_law(spilled_samples(2), nullptr, {}, &parent);
  CHECK(two[LawTerm::Spill] == 1.2);
  CHECK(two[LawTerm::Fp32Compute] == 0.8);  // exercised by none
  CHECK(two[LawTerm::Compute] > 0);
  CHECK(fit_class_law(spilled_samples(2))[LawTerm::Spill] == Approx(40.0));  // no parent: fitted on the two, as before
  const ClassLaw six = fit_class_law(spilled_samples(6), nullptr, {}, &parent);
  CHECK(six[LawTerm::Spill] == Approx(40.0));
  CHECK(six[LawTerm::Compute] == Approx(1.5));
  CHECK(six[LawTerm::Fixed] == Approx(3));
}

TEST_CASE("fit: --sibling-terms take the sibling's factors however many nodes exercise them", "[measure][fit]") {
  // Twelve nodes all exercising a score term at 3.0 per unit; the sibling says 5.0.
  std::vector<NodeSample> samples;
  for (int i = 0; i < 12; ++i)
    samples.push_back(one_kernel_sample(KernelClass::Attention,
                                        {{LawTerm::Fixed, 1}, {LawTerm::Compute, 4.0 * (i + 1)}, {LawTerm::AttentionScore, 0.5 * (i % 3 + 1)}},
                                        2 + 1.5 * 4.0 * (i + 1) + 3.0 * 0.5 * (i % 3 + 1)));
  const ClassLaw sibling = law_from_factors(1, {{LawTerm::AttentionScore, 5.0}, {LawTerm::AttentionWave, 0.7}});
  const ClassLaw own = fit_class_law(samples, &sibling);
  CHECK(own[LawTerm::AttentionScore] == Approx(3.0));  // twelve nodes: fitted
  const ClassLaw carried = fit_class_law(samples, &sibling, {LawTerm::AttentionScore, LawTerm::AttentionWave});
  CHECK(carried[LawTerm::AttentionScore] == 5.0);
  CHECK(carried[LawTerm::AttentionWave] == 0.7);
  // The rest is fitted on what the carried terms leave.
  CHECK(carried[LawTerm::Fixed] + carried[LawTerm::Compute] > 0);
  // Without a sibling there is nothing to carry: the terms are fitted.
  CHECK(fit_class_law(samples, nullptr, {LawTerm::AttentionScore})[LawTerm::AttentionScore] == Approx(3.0));
}
