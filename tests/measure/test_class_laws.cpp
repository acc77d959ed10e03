// The finer kernel classes' laws (docs/cost-model.md, "Fitting" and
// "Kernel classes"): how the fit takes the class sweeps
// (tests/data/class_sweep/h100) beside the zoo, and the laws as shipped
// (scripts/fit-profiles.sh) with today's figures as a floor, on the sweeps
// and on the models outside the zoo (tests/data/outside_zoo, never fitted).
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>

#include "core/cost/law_features.h"
#include "core/io/measured_reader.h"
#include "core/io/profiles.h"
#include "core/measure/accuracy.h"
#include "core/measure/fit.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

AccuracyReport report_of(const std::string& dir, const std::string& profile) {
  std::vector<MeasuredCase> cases;
  for (const std::string& path : find_measured_files({test::data_path(dir)})) cases.push_back(load_measured_case(path, {}));
  return measure_accuracy(cases, builtin_profile(profile), false);
}

double error_of(const ClassAccuracy& c) { return std::abs(c.est_us / c.meas_us - 1); }

std::vector<MeasuredCase> cases_under(const std::string& dir, const std::string& graphs = "", const std::vector<std::string>& excludes = {}) {
  std::vector<MeasuredCase> cases;
  std::vector<std::string> graph_dirs;
  if (!graphs.empty()) graph_dirs.push_back(test::data_path(graphs));
  for (const std::string& path : find_measured_files({test::data_path(dir)}, excludes)) cases.push_back(load_measured_case(path, graph_dirs));
  return cases;
}

// A profile's JSON without its finer classes' laws and its sample count.
nlohmann::json without_finer_laws(const HardwareProfile& p) {
  nlohmann::json j = hardware_profile_to_json(p);
  for (KernelClass c : all_fine_classes()) j["time_model"]["laws"].erase(std::string(to_string(c)));
  j["time_model"].erase("samples");
  return j;
}

}  // namespace

// Each finer class of the sweeps, summed (estimated / measured) under the
// shipped h100-sxm; before the class laws (every finer class on its
// parent's law) indexing read 0.292, scatter 0.068, depthwise_convolution
// 0.836, depthwise_convolution_native 0.598, _backward_native 0.908,
// triton_strided_pointwise / _reduction 0.764 / 0.777. Within 15 %: the
// classes the laws hold for; the others no worse than today, where the law
// has no feature for what costs (a scatter's colliding atomics) or the
// class keeps its parent's law (the two convolution backward families,
// convolution_1d's three nodes).
TEST_CASE("class sweeps: each finer class under the shipped h100-sxm, today's figures as a floor", "[measure][zoo][class_laws]") {
  const AccuracyReport r = report_of("class_sweep/h100", "h100-sxm");
  REQUIRE(r.graphs.size() == 20);
  const std::map<std::string, double> worst = {
      {"indexing", 0.15},                        // 0.988 (0.916 before the bag walk terms, session 25)
      {"depthwise_convolution", 0.15},           // 0.884
      {"depthwise_convolution_backward_native", 0.15},  // 1.053 (0.947 before session 26's per-element pricing)
      {"grouped_convolution", 0.15},             // 1.027
      {"convolution_1d_backward", 0.19},         // 0.818 (its parent's law; 0.901 before session 26's refit, whose depthwise kernels and layout copies moved it)
      {"triton_strided_reduction", 0.15},        // 1.010 (0.877 before the transposed-operand terms, carried from the H200)
      {"gemm_unaligned", 0.15},                  // 1.072 (gemm's law: two nodes)
      {"gemm_f32", 0.15},                        // 1.003
      {"depthwise_convolution_native", 0.15},    // 0.954 (0.842 before session 26 priced ATen's own kernels per element at the f32 peak)
      {"triton_strided_pointwise", 0.23},        // 0.780
      {"convolution_1d", 0.08},                  // 1.056 (the H200's law, carried; 0.727 under convolution's: three nodes)
      {"scatter", 0.45},                         // 0.557 (atomics where indices collide)
      {"triton_scatter", 0.23},                  // 0.774 (0.396 on triton_pointwise's law; one scatter_add over an expanded index runs 6 x its index_add twin)
      {"depthwise_convolution_backward", 0.66},  // 0.349 (convolution_backward's law; 0.379 before session 26's refit)
      {"grouped_convolution_backward", 1.13},    // 2.126 (convolution_backward's law)
  };
  int seen = 0;
  for (const ClassAccuracy& c : r.classes) {
    const auto it = worst.find(std::string(to_string(c.cls)));
    if (it == worst.end()) continue;
    INFO(it->first << ": " << c.est_us / c.meas_us);
    CHECK(error_of(c) <= it->second);
    ++seen;
  }
  CHECK(seen == static_cast<int>(worst.size()));
}

// The models outside the zoo (18 graphs per GPU) under the shipped
// profiles. Before the class laws: kernel time median / worst 5.4 / 38.0 %
// (H100) and 5.5 / 41.9 % (H200), walls 5.5 / 20.2 % and 5.5 / 19.7 %;
// the finer classes the laws price read (H100) depthwise_convolution
// 1.202, grouped_convolution 1.085, triton_strided_pointwise 0.842,
// triton_strided_reduction 0.887, gemm_f32 1.187.
TEST_CASE("models outside the zoo under the class laws: today's figures as a floor", "[measure][zoo][class_laws]") {
  for (auto [gpu, profile] : {std::pair{"h100", "h100-sxm"}, std::pair{"h200", "h200"}}) {
    INFO(gpu);
    const bool h100 = std::string(gpu) == "h100";
    const AccuracyReport r = report_of(std::string("outside_zoo/") + gpu, profile);
    REQUIRE(r.graphs.size() == 18);
    // 5.4 / 5.4 % since session 26 (5.3 / 5.4 % before; its depthwise and
    // layout changes alone moved the convolution family's law and read 5.6 /
    // 6.2 %, until a narrow input's transpose was priced per pixel); 5.4 /
    // 5.5 % before session 24, 5.1 / 5.5 % before the attention law's wave,
    // score and f32 terms, 5.2 / 5.2 % before the scatter traffic law
    CHECK(kernel_time_error(r).median <= 0.055);
    // Swin-T's backward: 0.713 / 0.673 since session 26's narrow-input transposes, 0.707 / 0.667 before (the H100's 0.640 before session 24
    // carried the H200's gemm_unaligned law, fitted on its pitch sweep, for
    // its 49-token windows' odd-row matmuls; the H200's 0.653 before session
    // 21's fit gave gemm_unaligned gemm's spill factor: too few of its nodes
    // outgrow the L2 to tell it)
    CHECK(kernel_time_error(r).worst <= (h100 ? 0.30 : 0.34));
    // Walls 7.2 / 5.8 %, worst 20.3 % (the diffusion UNet's backward, 0.797)
    // and 25.9 % (GPT-2's loss backward, 0.741: its one kernel reads 0.730);
    // 5.7 / 5.7 % and 20.2 / 19.7 % before session 22's call epilogue, whose
    // shorter lead before the first kernel no longer offsets the kernels
    // priced short on GPT-2's one-kernel graphs.
    // (the H100's 7.21 % after session 24's strided reduction refit, 7.10 %
    // once its unaligned matmuls took the H200's law; 6.65 / 5.45 %, worst
    // 20.1 / 25.8 %, since session 25's items timed, not fitted, beside
    // the attention calls' own host figure)
    // (the H200's 5.53 % since session 27's scatter refit, which moved the
    // Triton scatters of five backward graphs: embedding and bias gradients)
    CHECK(wall_time_error(r).median <= (h100 ? 0.067 : 0.056));
    CHECK(wall_time_error(r).worst <= (h100 ? 0.202 : 0.26));
    const std::map<std::string, double> worst = {
        {"depthwise_convolution", h100 ? 0.075 : 0.105},     // 0.930 / 0.899 (the H200: its own sweep's law)
        {"grouped_convolution", h100 ? 0.06 : 0.035},        // 0.948 / 1.030 (the H200: its parent's law)
        {"triton_strided_pointwise", h100 ? 0.065 : 0.095},  // 0.939 / 0.912
        {"triton_strided_reduction", h100 ? 0.049 : 0.035},  // 0.952 / 0.970 (0.958 / 0.962 before the transposed-operand terms)
        {"gemm_f32", h100 ? 0.17 : 0.235},                   // 1.164 / 1.223 (1.168 / 1.233 before split-K)
    };
    for (const ClassAccuracy& c : r.classes) {
      const auto it = worst.find(std::string(to_string(c.cls)));
      if (it == worst.end()) continue;
      INFO(it->first << ": " << c.est_us / c.meas_us);
      CHECK(error_of(c) <= it->second);
    }
  }
}

// The fit's rules for the finer laws (core/measure/fit.h): the zoo's H100
// fitting files (scripts/fit-profiles.sh's) with every finer class asked
// for and the class sweeps beside them give the parents' laws and the launch path of the zoo's files alone (a
// finer class of a family still fits its family's law; the sweeps' nodes
// fit only the finer laws). The first refit, with the sweeps' nodes in
// every law and the zoo's strided reductions out of triton_reduction's,
// moved triton_reduction's memory factor from 0.95 to 0.74 and gave
// triton_pointwise an f32 compute factor of 1.19.
TEST_CASE("finer laws refine their own nodes: the other laws are the fit without them", "[measure][zoo][class_laws]") {
  std::vector<std::string> held_out;
  for (const char* m : {"llama_block", "vit", "unet_gn", "moe_dropless", "kv_decode", "bert_dynamic", "tp2d"})
    held_out.push_back(std::string("/") + m + "_");
  const std::vector<MeasuredCase> zoo = cases_under("measured/h100", "exported", held_out);
  const std::vector<MeasuredCase> sweeps = cases_under("class_sweep/h100");
  const HardwareProfile& base = builtin_profile("h100-sxm-datasheet");
  const ProfileFit plain = fit_profile(zoo, base, "x", nullptr, {});
  const ProfileFit refined = fit_profile(zoo, base, "x", nullptr, all_fine_classes(), sweeps);
  CHECK(without_finer_laws(refined.profile) == without_finer_laws(plain.profile));
  const auto& laws = refined.profile.time_model->laws;
  for (KernelClass c : {KernelClass::Indexing, KernelClass::Scatter, KernelClass::TritonStridedReduction, KernelClass::GroupedConvolution,
                        KernelClass::DepthwiseConvolutionBackward})
    CHECK(laws.count(c) == 1);
  // triton_scatter: 11 sweep nodes, priced by the scatter traffic terms
  // (before them its fit kept only a fixed 11.7 µs, which priced the
  // held-out kv_decode's and moe_dropless's small scatters 9-10 x). The
  // scatter reductions, too few for a law of their own, share it: one law
  // fitted on both. gemm_unaligned: three nodes. The chain of adds into one
  // element is priced, by the chain term or by the wide-run chain term:
  // every H100 sweep node adds runs of 8 elements or more, where the two
  // features are one.
  REQUIRE(laws.count(KernelClass::TritonScatter) == 1);
  CHECK(laws.at(KernelClass::TritonScatter)[LawTerm::AtomicChain] + laws.at(KernelClass::TritonScatter)[LawTerm::AtomicWideChain] > 0);
  CHECK(laws.at(KernelClass::TritonScatterReduction).factor == laws.at(KernelClass::TritonScatter).factor);
  CHECK(laws.count(KernelClass::GemmUnaligned) == 0);
  CHECK(plain.profile.time_model->laws.count(KernelClass::TritonStridedReduction) == 0);
}

TEST_CASE("carry_class_laws: the finer laws a profile has none of, from a profile of the same chip", "[measure][class_laws]") {
  const HardwareProfile& h100 = builtin_profile("h100-sxm");
  HardwareProfile into = builtin_profile("h200");
  for (KernelClass c : all_fine_classes()) into.time_model->laws.erase(c);
  ClassLaw own;
  own[LawTerm::Fixed] = 1.5;
  own[LawTerm::Memory] = 1.0;
  into.time_model->laws[KernelClass::Scatter] = own;
  const std::vector<KernelClass> carried = carry_class_laws(
      h100, {KernelClass::Indexing, KernelClass::Scatter, KernelClass::GroupedConvolution, KernelClass::TritonScatter, KernelClass::Gemm}, into);
  // Scatter has its own; gemm is no finer class.
  CHECK(carried == std::vector<KernelClass>{KernelClass::Indexing, KernelClass::GroupedConvolution, KernelClass::TritonScatter});
  CHECK(into.time_model->laws.at(KernelClass::Indexing).factor == h100.time_model->laws.at(KernelClass::Indexing).factor);
  CHECK(into.time_model->laws.at(KernelClass::TritonScatter).factor == h100.time_model->laws.at(KernelClass::TritonScatter).factor);
  CHECK(into.time_model->laws.at(KernelClass::Scatter).factor == own.factor);
  CHECK(into.time_model->laws.at(KernelClass::Gemm).factor == builtin_profile("h200").time_model->laws.at(KernelClass::Gemm).factor);
  CHECK(into.time_model->laws.count(KernelClass::TritonScatterReduction) == 0);  // not asked for
}

// The scatter traffic sweep (H200, python/zoo/class_sweep.py's
// scatter_traffic_sweep; docs/cost-model.md "Scatter traffic"): Triton
// atomic adds into tables of 4 to 512 MiB, rows of 1 to 256 values, hot
// rows, behind a sum. Under the shipped h200 (fitted on these beside the
// first scatter sweep, the atomic lane sweep and the message-passing
// sweep) every plain scatter is within 35 % (0.895-1.253; 0.851-1.247
// before session 27), their sum within 10 % (1.059). The one behind a sum
// (21 µs) reads 1.417 since session 27's refit (1.221 before): the
// message-passing sweep's scatters over tables the L2 holds, whose gathers
// no term prices, raised the memory factor it is priced by (1.68 -> 2.09).
// The two whose rows are drawn
// skewed (the cube of a uniform draw, so that row 0 takes 2.5 % of the
// updates) read 0.179 and 0.552 while the chain term saw a uniform spread;
// with the exporter's observed index (`scatter_index`: the hottest row's
// updates) 1.237 and 1.247.
TEST_CASE("the scatter traffic sweep under the shipped h200: every scatter priced, the skewed ones by their observed index", "[measure][zoo][class_laws]") {
  const AccuracyReport r = report_of("class_sweep/h200", "h200");
  double meas = 0, est = 0;
  int scatters = 0, skewed = 0;
  for (const NodeAccuracy& n : r.nodes) {
    if (n.graph.rfind("scatter_traffic_sweep", 0) != 0) continue;
    if (n.cls != KernelClass::TritonScatter && n.cls != KernelClass::TritonScatterReduction) continue;
    INFO(n.graph << " " << n.node << ": " << n.est_us / n.meas_us);
    CHECK(std::abs(n.est_us / n.meas_us - 1) <= (n.cls == KernelClass::TritonScatterReduction ? 0.45 : 0.35));
    if (n.graph == "scatter_traffic_sweep_0_inf.post" && (n.node == "op27" || n.node == "op31")) ++skewed;
    meas += n.meas_us;
    est += n.est_us;
    ++scatters;
  }
  CHECK(skewed == 2);
  CHECK(scatters == 18);
  CHECK(std::abs(est / meas - 1) <= 0.10);
}

// The atomic lane sweep (H200, class_sweep.py's atomic_lane_sweep): the
// same adds into 64-row tables, the index's runs of equal values 1 to 128
// long, rows of 1 and 8 floats. Rows of one float: 313, 348, 416, 847,
// 1,700, 3,348 and 3,297 µs for runs of 1, 2, 4, 8, 16, 32, 128 (from 8 on
// each lane of a warp on one address adds the same time, a warp holding
// 32); rows of 8 floats 162-193 µs, twice the chain time per update of
// single floats. Under the shipped h200 (fitted on it) each within 20 %.
TEST_CASE("the atomic lane sweep under the shipped h200: same-address lanes priced", "[measure][zoo][class_laws]") {
  const AccuracyReport r = report_of("class_sweep/h200", "h200");
  int scatters = 0;
  for (const NodeAccuracy& n : r.nodes) {
    if (n.graph != "atomic_lane_sweep_0_inf.post" || n.cls != KernelClass::TritonScatter) continue;
    INFO(n.node << ": " << n.est_us / n.meas_us);
    CHECK(std::abs(n.est_us / n.meas_us - 1) <= 0.20);
    ++scatters;
  }
  CHECK(scatters == 10);
}

// The pitch sweep (H200, class_sweep.py's gemm_pitch_sweep: five shapes of
// bf16 products, each aligned, with K or N of 8n + 4 and 8n + 2 (rows on 8-
// or 4-byte boundaries), of 8n + 1 (odd rows) and with an odd M), judged on
// its repeat (tests/data/class_sweep/h200-pitch-repeat, the same command
// run again on the same machine) under the shipped h200. One unaligned
// factor priced both misalignments alike (6.37 x compute): the 8- and
// 4-byte rows summed at 1.99 x their time, the odd ones at 1.06; with
// odd_pitch_factor 0.996 and 1.021. The products with an odd M alone run
// the aligned kernels but take the class's floor: summed 0.984, the small
// ones up to 1.74.
TEST_CASE("the pitch sweep's repeat under the shipped h200: each row alignment priced", "[measure][zoo][class_laws]") {
  const AccuracyReport r = report_of("class_sweep/h200-pitch-repeat", "h200");
  REQUIRE(r.graphs.size() == 1);
  std::map<std::string, std::pair<double, double>> sums;  // group -> (estimated, measured)
  std::map<std::string, int> counts;
  for (const NodeAccuracy& n : r.nodes) {
    // The nodes run in the sweep's order: per shape, aligned, K + 4, K + 2, K + 1, N + 4, N + 2, N + 1, M + 1.
    const int i = std::stoi(n.node.substr(2)) % 8;
    const std::string group = i == 0 ? "aligned" : i == 3 || i == 6 ? "odd rows" : i == 7 ? "odd M" : "8- or 4-byte rows";
    INFO(n.node << " (" << group << "): " << n.est_us / n.meas_us);
    CHECK((group == "aligned") == (n.cls == KernelClass::Gemm));
    if (group != "odd M") CHECK(std::abs(n.est_us / n.meas_us - 1) <= 0.30);
    sums[group].first += n.est_us;
    sums[group].second += n.meas_us;
    ++counts[group];
  }
  CHECK(counts["8- or 4-byte rows"] == 20);
  CHECK(counts["odd rows"] == 10);
  CHECK(counts["odd M"] == 5);
  for (const char* group : {"8- or 4-byte rows", "odd rows", "odd M"}) {
    INFO(group << ": " << sums[group].first / sums[group].second);
    CHECK(std::abs(sums[group].first / sums[group].second - 1) <= 0.05);
  }
}

// The transposed reduction sweep (H200, class_sweep.py's
// transposed_reduction_sweep: layer norms over a transposed view, trained,
// 64 to 1,024 tokens over 2,048 to 32,768 rows), judged on its repeat
// (tests/data/class_sweep/h200-transposed-repeat) under the shipped h200.
// The 17 strided reductions the transposed-operand terms price (the norms'
// weight gradients beside the input gradient written transposed: a nest of
// three axes whose full-size deps run along two) read 0.298 summed under
// the bytes alone (0.17-0.75 each) and 0.946 with transposed_element_factor
// and transposed_walk_factor (0.73-1.53). The other strided reductions
// keep 0.661: the norms' forward statistics over the transposed view
// (0.20-0.84, a reduction read strided throughout, which these terms do not
// see) and the split reductions of an [X, R] by an [R, X] product.
TEST_CASE("the transposed reduction sweep's repeat under the shipped h200: transposed operands priced", "[measure][zoo][class_laws]") {
  const std::vector<MeasuredCase> cases = cases_under("class_sweep/h200-transposed-repeat");
  REQUIRE(cases.size() == 3);
  const HardwareProfile& hw = builtin_profile("h200");
  std::map<std::pair<std::string, std::string>, bool> transposed;  // (graph, node) -> the term prices it
  for (const MeasuredCase& c : cases) {
    const CostFacts facts = cost_facts(c.graph);
    for (NodeId v = 0; v < c.graph.num_nodes(); ++v) {
      const LawFeatures f = law_features(c.graph, v, facts, hw, {hw.time_model->sm_count, hw.time_model->l2_bytes, true});
      transposed[{c.measured.graph, c.graph.nodes[v].name}] = f[static_cast<std::size_t>(LawTerm::TransposedElements)] > 0;
    }
  }
  const AccuracyReport r = measure_accuracy(cases, hw, false);
  std::map<bool, std::pair<double, double>> sums;  // transposed? -> (estimated, measured)
  std::map<bool, int> counts;
  for (const NodeAccuracy& n : r.nodes) {
    if (n.cls != KernelClass::TritonStridedReduction) continue;
    const bool t = transposed.at({n.graph, n.node});
    INFO(n.graph << " " << n.node << (t ? " (transposed)" : "") << ": " << n.est_us / n.meas_us);
    if (t && n.meas_us >= 5) CHECK((n.est_us / n.meas_us > 0.65 && n.est_us / n.meas_us < 1.6));
    sums[t].first += n.est_us;
    sums[t].second += n.meas_us;
    ++counts[t];
  }
  INFO("transposed " << sums[true].first / sums[true].second << ", the others " << sums[false].first / sums[false].second);
  CHECK(counts[true] == 17);
  CHECK(std::abs(sums[true].first / sums[true].second - 1) <= 0.07);
  CHECK(sums[false].first / sums[false].second >= 0.64);
}

// The dense 1-D convolution grid (H200, class_sweep.py's conv1d_dense_sweep:
// 31 shapes each way, none a library model's) under the shipped h200, whose
// convolution_1d laws it fits beside the grouped sweep's three 1-D rows:
// 0.956 / 0.869 (forward / backward; 0.659 / 0.756 on their parents' laws).
// Its shapes beyond the L2 are too few (two) for a spill factor of their
// own: the laws take their parents' (core/measure/fit.h, fit_class_law).
TEST_CASE("the dense 1-D convolution grid under the shipped h200: its own laws", "[measure][zoo][class_laws]") {
  const AccuracyReport r = report_of("class_sweep/h200", "h200");
  double meas[2] = {0, 0}, est[2] = {0, 0};
  int nodes[2] = {0, 0};
  for (const NodeAccuracy& n : r.nodes) {
    if (n.graph.rfind("conv1d_dense_sweep", 0) != 0) continue;
    const int backward = n.cls == KernelClass::Convolution1dBackward ? 1 : 0;
    if (!backward && n.cls != KernelClass::Convolution1d) continue;
    meas[backward] += n.meas_us;
    est[backward] += n.est_us;
    ++nodes[backward];
  }
  CHECK(nodes[0] == 31);
  CHECK(nodes[1] == 31);
  CHECK(est[0] / meas[0] == Approx(0.956).margin(0.02));
  CHECK(est[1] / meas[1] == Approx(0.869).margin(0.02));
  const auto& laws = builtin_profile("h200").time_model->laws;
  REQUIRE(laws.count(KernelClass::Convolution1d) == 1);
  CHECK(laws.at(KernelClass::Convolution1d)[LawTerm::Spill] == laws.at(KernelClass::Convolution)[LawTerm::Spill]);
  CHECK(laws.at(KernelClass::Convolution1dBackward)[LawTerm::Spill] == laws.at(KernelClass::ConvolutionBackward)[LawTerm::Spill]);
  // No H100 grid: its 1-D convolutions forward take this law (fit-profile
  // --carry-classes), its backward keeps its parent's.
  const auto& h100 = builtin_profile("h100-sxm").time_model->laws;
  REQUIRE(h100.count(KernelClass::Convolution1d) == 1);
  CHECK(h100.at(KernelClass::Convolution1d).factor == laws.at(KernelClass::Convolution1d).factor);
  CHECK(h100.count(KernelClass::Convolution1dBackward) == 0);
}
