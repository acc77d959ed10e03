// The calibrated model against the checked-in GPU measurements
// (tests/data/measured/, docs/schedmeasured-1.md): deterministic data
// checks, no timing. The fit sees only the fitting models of
// tests/data/measured/README.md; the held-out models are judged.
//
// Issue 10's targets on held-out graphs, and where the data stands (the
// asserted bounds are today's figures, so a change that makes any worse
// fails; the ones that meet the target assert the target):
//   peak as executed, no data-dependent sizes   2 %       met on 11 of 11 graphs (unet_gn's convolutions
//                                                         priced with the workspaces observed on each GPU;
//                                                         bert and unet_gn replayed from the allocator state
//                                                         recorded at the measured call's start)
//   peak as executed, data-dependent sizes      5 %       met: 0.0 % (moe_dropless)
// (peaks in the order the call ran: Inductor's, after its memory reordering)
//   reserved peak                               5 %       met on 12 of 12 (H200 unet_gn bwd: 1.250 until session 8)
//   kernel time per graph                       10 % / 25 %  met: median 4.7 / 6.4 %, worst 15.6 / 15.9 %
//   each kernel class, summed                   15 %      met on both GPUs (since session 9; the H200's
//                                                         convolution backward read 1.153 before)
//   wall time, default mode                     20 %      median 8.4 % / 7.1 %, worst 20.9 % / 20.2 % (host-bound;
//                                                         measured at full host speed, interleaved rounds;
//                                                         cuDNN calls, collectives and item nodes priced by
//                                                         their own host cost)
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/cost/cost_model.h"
#include "core/io/graph_reader.h"
#include "core/io/measured_reader.h"
#include "core/io/profiles.h"
#include "core/measure/accuracy.h"
#include "core/measure/fit.h"
#include "core/memory/executed.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

const std::vector<std::string> kHeldOutModels = {"llama_block", "vit", "unet_gn", "moe_dropless", "kv_decode", "bert_dynamic", "tp2d"};

bool held_out(const std::string& path) {
  const std::string file = path.substr(path.find_last_of('/') + 1);
  for (const std::string& m : kHeldOutModels)
    if (file.rfind(m + "_", 0) == 0 && file.size() > m.size() + 1 && std::isdigit(static_cast<unsigned char>(file[m.size() + 1]))) return true;
  return false;
}

struct Split {
  std::vector<MeasuredCase> fitting, held;
};

Split load_split(const std::string& gpu) {
  Split s;
  for (const std::string& path : find_measured_files({test::data_path("measured/" + gpu)})) {
    MeasuredCase c = load_measured_case(path, {test::data_path("exported")});
    (held_out(path) ? s.held : s.fitting).push_back(std::move(c));
  }
  return s;
}

// Every measured file under tests/data/`dir`, with its graph beside it or
// under tests/data/`graphs`.
std::vector<MeasuredCase> load_cases(const std::string& dir, const std::string& graphs = "") {
  std::vector<MeasuredCase> cases;
  std::vector<std::string> graph_dirs;
  if (!graphs.empty()) graph_dirs.push_back(test::data_path(graphs));
  for (const std::string& path : find_measured_files({test::data_path(dir)})) cases.push_back(load_measured_case(path, graph_dirs));
  return cases;
}

double ratio(double est, double meas) { return est / meas; }

// A report's kernel classes by name (accuracy's `class` column).
std::map<std::string, ClassAccuracy> classes_by_name(const AccuracyReport& r) {
  std::map<std::string, ClassAccuracy> out;
  for (const ClassAccuracy& c : r.classes) out[std::string(to_string(c.cls))] = c;
  return out;
}

// A folder measured twice on one lease (DIR and DIR-repeat), each under
// the built-in h200: its two reports, in that order.
std::vector<AccuracyReport> measured_twice_on_h200(const std::string& dir, std::size_t cases, bool collectives_measured) {
  std::vector<AccuracyReport> reports;
  for (const std::string& d : {dir, dir + "-repeat"}) {
    const std::vector<MeasuredCase> loaded = load_cases(d);
    REQUIRE(loaded.size() == cases);
    reports.push_back(measure_accuracy(loaded, builtin_profile("h200"), collectives_measured));
  }
  return reports;
}

// Whether `value` is within `tolerance` of the first value seen for `key`
// (true the first time, which records it).
bool repeats(std::map<std::string, double>& first, const std::string& key, double value, double tolerance) {
  const auto [it, inserted] = first.emplace(key, value);
  return inserted || std::abs(value / it->second - 1) <= tolerance;
}

// Equal up to rounding: the fit's arithmetic (pow, sums) may differ in the
// last bits between the native and the WebAssembly C library.
bool nearly_equal(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::abs(x - y) <= 1e-9 * std::max({1.0, std::abs(x), std::abs(y)});
  }
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!b.contains(it.key()) || !nearly_equal(it.value(), b.at(it.key()))) return false;
    return true;
  }
  return a == b;
}

}  // namespace

TEST_CASE("the built-in h100-sxm and h200 are the fit of the checked-in measurements", "[measure][zoo]") {
  for (auto [gpu, name] : {std::pair{"h100", "h100-sxm"}, std::pair{"h200", "h200"}}) {
    Split s = load_split(gpu);
    REQUIRE(s.fitting.size() >= 30);
    REQUIRE(s.held.size() == 12);
    // scripts/fit-profiles.sh: the H200 alone, then the H100 with the H200
    // as its sibling; the finer classes' laws (its class_laws) on each
    // GPU's class sweep where one is checked in, the H200's others carried
    // from the H100.
    const bool h100 = std::string(gpu) == "h100";
    std::vector<KernelClass> own_laws;
    for (const char* c : {"indexing", "scatter", "extern_memory", "depthwise_convolution", "depthwise_convolution_native",
                          "depthwise_convolution_backward_native", "grouped_convolution", "convolution_1d", "convolution_1d_backward",
                          "triton_strided_pointwise", "triton_strided_reduction", "gemm_unaligned", "gemm_f32", "triton_scatter",
                          "triton_scatter_reduction"})
      if (h100 || std::string(c) != "grouped_convolution") own_laws.push_back(*parse_kernel_class(c));
    std::vector<MeasuredCase> sweeps;
    struct stat st {};
    const std::string sweep_dir = test::data_path(std::string("class_sweep/") + gpu);  // the H200's once measured
    if (::stat(sweep_dir.c_str(), &st) == 0)
      for (const std::string& path : find_measured_files({sweep_dir})) sweeps.push_back(load_measured_case(path, {}));
    if (h100) REQUIRE(sweeps.size() == 20);
    const HardwareProfile* sibling = h100 ? &builtin_profile("h200") : nullptr;
    // The attention law's idle-wave and per-score terms (the H200's attention
    // grid sweep) and the strided reductions' transposed-operand terms (its
    // transposed reduction sweep): fit-profile --sibling-terms.
    const std::vector<LawTerm> sibling_terms =
        h100 ? std::vector<LawTerm>{LawTerm::AttentionScore, LawTerm::AttentionWave, LawTerm::AttentionBiasF32, LawTerm::AttentionScoreF32,
                                    LawTerm::TransposedElements, LawTerm::TransposedWalk}
             : std::vector<LawTerm>{};
    // The launch path's sweep where one is checked in (the H200's): its
    // device-bound calls fit the call's epilogue (fit-profile --launch-sweep).
    std::vector<MeasuredCase> launch_sweeps;
    const std::string launch_dir = test::data_path(std::string("launch_sweep/") + gpu);
    if (::stat(launch_dir.c_str(), &st) == 0)
      for (const std::string& path : find_measured_files({launch_dir})) launch_sweeps.push_back(load_measured_case(path, {}));
    CHECK(launch_sweeps.size() == (h100 ? 0u : 18u));
    // The items' host figure from the wrapper timed alone (fit-profile --wrapper-costs).
    const std::string wrapper = std::string("measured/") + gpu + "/wrapper_host_costs.json";
    const WrapperItemCost item = load_wrapper_item_cost_file(test::data_path(wrapper));
    CHECK(item.item_us == Approx(h100 ? 0.387 : 0.409).margin(0.001));  // tuple_item + assert_size_stride
    ProfileFit fit = fit_profile(s.fitting, builtin_profile(std::string(name) + "-datasheet"), name, sibling, own_laws, sweeps, sibling_terms,
                                 launch_sweeps, item);
    if (!h100) carry_class_laws(builtin_profile("h100-sxm"), own_laws, fit.profile);
    // (the H100's unaligned matmuls and 1-D convolutions forward: the H200's laws, fit-profile --carry-classes)
    if (h100)
      carry_class_laws(builtin_profile("h200"), {KernelClass::GemmUnaligned, KernelClass::Convolution1d}, fit.profile);
    // and the measured collectives and contention (fit-profile --comm; scripts/fit-comm.py's fit of tests/data/dist4)
    // (the H200's own curves: comm-fit-h200.json)
    const std::string comm = h100 ? "dist4/comm-fit.json" : "dist4/comm-fit-h200.json";
    apply_comm_sections(read_text_file(test::data_path(comm)), comm, fit.profile);
    // and the sustained tensor-core rate (fit-profile --sustained; scripts/fit-sustained-rate.py's fit of the first lease's steps)
    apply_sustained_rate(read_text_file(test::data_path("dist4/sustained-fit.json")), "sustained-fit.json", fit.profile);
    const auto file = nlohmann::json::parse(read_text_file(test::data_path("../../profiles/" + std::string(name) + ".json")));
    CHECK(nearly_equal(hardware_profile_to_json(fit.profile), hardware_profile_to_json(hardware_profile_from_json(file))));
    CHECK(hardware_profile_to_json(builtin_profile(name)) == hardware_profile_to_json(hardware_profile_from_json(file)));
  }
}

TEST_CASE("held-out accuracy of the calibrated model on H100 and H200", "[measure][zoo]") {
  for (auto [gpu, name] : {std::pair{"h100", "h100-sxm"}, std::pair{"h200", "h200"}}) {
    INFO(gpu);
    Split s = load_split(gpu);
    AccuracyReport r = measure_accuracy(s.held, builtin_profile(name), false);
    REQUIRE(r.graphs.size() == 12);
    // Memory as executed (the allocator's view). bert_dynamic and unet_gn
    // were re-measured with the allocator's state at the call's start
    // (memory.allocator_at_start), which the report replays from; the others
    // replay from a cold cache. Within 2 % where sizes are static, on every
    // graph (bert's forward was 2.9 % from the cold start: a 4 MiB buffer in
    // a recorded 5 MiB hole).
    int peak_within_2 = 0, recorded = 0;
    double worst_peak = 0, worst_dynamic_peak = 0;
    std::vector<double> reserved;
    for (const auto& g : r.graphs) {
      INFO(g.graph);
      const bool remeasured = g.graph.rfind("bert_dynamic", 0) == 0 || g.graph.rfind("unet_gn", 0) == 0;
      CHECK(g.recorded_start == remeasured);
      recorded += g.recorded_start;
      const double e = std::abs(ratio(static_cast<double>(g.peak_est), static_cast<double>(g.peak_meas)) - 1);
      if (g.data_dependent) worst_dynamic_peak = std::max(worst_dynamic_peak, e);
      else {
        worst_peak = std::max(worst_peak, e);
        peak_within_2 += e <= 0.02;
      }
      if (remeasured) CHECK(e <= 0.001);  // from the recorded start: within 2 KiB (bert forward) or exact
      const double reserved_ratio = ratio(static_cast<double>(g.reserved_est), static_cast<double>(g.reserved_meas));
      // The H200's unet_gn backward read 1.250 until session 8 (a 20 MiB
      // segment the call did not need: an 8.04 MiB cuDNN workspace found no
      // hole, because the replay refused a convolution's input gradient, an
      // extern's item, as an in-place donor that the wrapper takes over).
      reserved.push_back(std::abs(reserved_ratio - 1));
      if (remeasured) CHECK(reserved_ratio == 1);
    }
    CHECK(recorded == 4);
    CHECK(peak_within_2 == 11);
    CHECK(worst_peak <= 0.02);  // the target
    CHECK(worst_dynamic_peak <= 0.05);  // the target
    // Reserved: the 5 % target on every graph (worst 3.0 %, llama_block's forward on the H200).
    CHECK(*std::max_element(reserved.begin(), reserved.end()) <= 0.05);
    // Kernel time per graph: the targets.
    const ErrorSummary k = kernel_time_error(r);
    CHECK(k.median <= 0.10);
    CHECK(k.worst <= 0.25);
    // Per class: the 15 % target. The convolution backward class (UNet's
    // f32 NCHW backward) read 1.129 / 1.153 until session 9, 1.163 / 1.195
    // before session 8's patch term: no fitting graph had small-batch f32
    // NCHW convolutions, whose several short cuDNN kernels cost far less
    // than the floor the larger ones gave; with conv_grid_nchw_small in the
    // fit, 0.914 / 0.913. The extern fallbacks (moe_dropless's topk and
    // nonzero: 0.983) are fitted without the random fills, which are
    // elementwise kernels of the copy class.
    // Summed by base class (the report names the finer classes, issue 27;
    // without laws of their own they are priced as their base class was).
    for (const auto& c : base_class_totals(r)) {
      INFO(to_string(c.cls));
      const double e = std::abs(c.est_us / c.meas_us - 1);
      CHECK(e <= 0.15);
    }
    // Wall time in Inductor's default mode: launch-bound on these graphs.
    // Measured in interleaved rounds at the host's full speed (run_zoo.py
    // --wall-rounds, tests/data/measured/README.md), each graph's host
    // priced at the speed its own samples ran at (`host_probe_wall_us`,
    // since session 10) and a host cost per buffer the wrapper allocates
    // afresh (memory as executed: 2.7 / 2.9 µs each): median 7.8 % (H100)
    // / 7.1 % (H200), worst 16.6 % (H100, bert_dynamic's backward, 0.834)
    // / 15.2 % (H200, bert_dynamic's backward, 0.848). Session 9 read ViT's
    // forward on the H100 0.791 and kv_decode on the H200 1.202, past the
    // target; now 0.860 and 1.072.
    const bool h100 = std::string(gpu) == "h100";
    const ErrorSummary w = wall_time_error(r);
    CHECK(w.median <= 0.08);
    CHECK(w.worst <= (h100 ? 0.17 : 0.155));
    for (const auto& g : r.graphs) {
      INFO(g.graph);
      const double e = std::abs(ratio(g.wall_est_us, g.wall_meas_us) - 1);
      CHECK(e <= 0.20);  // the target, on every graph
      if (g.graph.rfind("unet_gn", 0) == 0) CHECK(e <= 0.09);
      if (g.graph.rfind("tp2d", 0) == 0) CHECK(e <= 0.13);
    }
  }
}

// A second H200 measurement of unet_gn and vit (tests/data/repeat/h200), with
// the allocator's history and another start state: memory as executed
// replayed from each call's recorded start gives the measured peak (to one
// 512-byte block) and reserved peak exactly.
TEST_CASE("a repeat H200 measurement: peaks and reserved peaks from the recorded start", "[measure][zoo]") {
  const std::vector<MeasuredCase> cases = load_cases("repeat/h200", "exported");
  REQUIRE(cases.size() == 4);
  const AccuracyReport r = measure_accuracy(cases, builtin_profile("h200"), false);
  for (const auto& g : r.graphs) {
    INFO(g.graph);
    CHECK(g.recorded_start);
    CHECK(std::abs(g.peak_est - g.peak_meas) <= 512);  // exact but vit's backward: one 512-byte block
    CHECK(g.reserved_est == g.reserved_meas);
  }
}

// Session 10: the held-out vit, kv_decode and llama_block (and the fitted
// transformer_m) measured again with today's exporter on a fresh H100 and a
// fresh H200 (tests/data/repeat/README.md), other hosts than the fit's
// runs: every kernel time and every wall within the held-out targets.
// Worst walls 12.5 % (H100, ViT's forward: 0.875, its kernels 0.838) and
// 13.2 % (H200, kv_decode: 1.132); 11.9 % (0.881) and 13.7 % (1.137) before
// session 22's call epilogue shortened the lead before the first kernel;
// with session 9's host model (the run's full-speed probe,
// no allocation cost) 17.6 % and 24.0 % (kv_decode 1.240 on the H200). A
// third run, on an H200 whose host stayed slow for most of it (its
// full-speed probe 99.5 µs; 15 to 39 of 240 samples near it), keeps
// transformer_m's forward at 0.636: samples whose probe read 110-135 µs
// took twice the wall of those at 96 µs, a state of the host the probe does
// not see (the others within 7.5 %: ViT's forward 0.925).
TEST_CASE("held-out graphs measured again on other hosts (session 10)", "[measure][zoo]") {
  for (auto [dir, name, worst] : {std::tuple{"repeat/h100-session10", "h100-sxm", 0.126}, std::tuple{"repeat/h200-session10", "h200", 0.14}}) {
    INFO(dir);
    const std::vector<MeasuredCase> cases = load_cases(dir, "exported");
    REQUIRE(cases.size() == 7);
    const AccuracyReport r = measure_accuracy(cases, builtin_profile(name), false);
    CHECK(kernel_time_error(r).median <= 0.10);
    CHECK(kernel_time_error(r).worst <= 0.25);
    CHECK(wall_time_error(r).worst <= worst);
  }
  const std::vector<MeasuredCase> slow = load_cases("repeat/h200-session10-slow-host", "exported");
  REQUIRE(slow.size() == 7);
  const AccuracyReport r = measure_accuracy(slow, builtin_profile("h200"), false);
  for (const auto& g : r.graphs) {
    INFO(g.graph);
    const double wall = ratio(g.wall_est_us, g.wall_meas_us);
    if (g.graph == "transformer_m_0_fwd.post") CHECK(wall == Approx(0.636).margin(0.01));
    else CHECK(std::abs(wall - 1) <= 0.076);
  }
}

// ResNet-18 and MobileNetV3 (outside the zoo) measured again on the H100
// with the allocator's state at each call's start (tests/data/repeat/
// h100-outside; their first files predate that record and replay from a
// cold cache: MobileNet's forward peak 0.975, its backward reserved 0.898).
// From the recorded start: every peak exact, reserved within 1 %.
TEST_CASE("models outside the zoo from their recorded start: peaks and reserved peaks", "[measure][zoo]") {
  const std::vector<MeasuredCase> cases = load_cases("repeat/h100-outside", "outside_zoo/h100");
  REQUIRE(cases.size() == 4);
  const AccuracyReport r = measure_accuracy(cases, builtin_profile("h100-sxm"), false);
  for (const auto& g : r.graphs) {
    INFO(g.graph);
    CHECK(g.recorded_start);
    CHECK(g.peak_est == g.peak_meas);
    CHECK(std::abs(ratio(static_cast<double>(g.reserved_est), static_cast<double>(g.reserved_meas)) - 1) <= 0.01);
  }
}

// The graphs with convolutions carry the workspace each convolution's cuDNN
// call allocated when it ran alone on that GPU (schedlab_export/
// workspaces.py; the measured file's `workspace_bytes`, the H100's also in
// the graph). With them, the held-out UNet's backward went from 0.953 to
// 1.000 on both GPUs, and of the fitting graphs convnet_bn's backward from
// 0.916, conv_narrow_sweep_1/_3 from 1.146/0.902, conv_sweep_1/_3 from
// 0.973/1.079; ViT's (held out) stay where they were, its patch
// convolution's workspace away from its peaks. Still off:
// conv_narrow_sweep_2's forward (0.960) and, on the
// H200 only, convnet_bn's forward (1.029: the same allocation requests as
// on the H100, where it reads 1.000; the measuring process's cache).
TEST_CASE("graphs with convolutions: memory as executed with the observed workspaces", "[measure][zoo]") {
  for (auto [gpu, name, graphs, within_2] : {std::tuple{"h100", "h100-sxm", 36, 35}, std::tuple{"h200", "h200", 36, 34}}) {
    INFO(gpu);
    Split s = load_split(gpu);
    std::vector<MeasuredCase> conv;
    for (auto* part : {&s.fitting, &s.held})
      for (MeasuredCase& c : *part)
        if (!c.measured.workspace_bytes.empty()) conv.push_back(std::move(c));
    // unet_gn, vit, convnet_bn, conv_sweep, conv_narrow_sweep; since session 7
    // conv_small_sweep, the conv grids, ResNet-50, ConvNeXt-Tiny and
    // EfficientNet-B0 (on the H200 since session 8); conv_grid_nchw_small
    // since session 9.
    REQUIRE(static_cast<int>(conv.size()) == graphs);
    AccuracyReport r = measure_accuracy(conv, builtin_profile(name), false);
    int peaks_within_2 = 0;
    double worst = 0;
    for (const auto& g : r.graphs) {
      INFO(g.graph);
      const double e = std::abs(ratio(static_cast<double>(g.peak_est), static_cast<double>(g.peak_meas)) - 1);
      peaks_within_2 += e <= 0.02;
      worst = std::max(worst, e);
      if (g.graph.rfind("unet_gn", 0) == 0) CHECK(e <= 0.005);
    }
    CHECK(peaks_within_2 >= within_2);
    CHECK(worst <= 0.041);  // conv_narrow_sweep_2's forward, 0.960 on both GPUs
    for (const MeasuredCase& c : conv) {
      INFO(c.path);
      for (const KernelWorkspace& ws : estimate_memory_as_executed(c.graph, order_as_run(c.graph)).workspaces)
        if (c.graph.nodes[ws.node].kernel.find("convolution") != std::string::npos)
          CHECK(ws.source == WorkspaceSource::Observed);  // every convolution was probed
    }
  }
}

// Models outside the zoo, exported the way the README tells a user
// (`python -m schedlab_export --script STEP.py --out DIR --measure`, one
// compiled training step each; tests/data/outside_zoo/README.md) and never
// fitted: torchvision's ResNet-18 (f32) and MobileNetV3-small (bf16,
// channels-last, depthwise), Hugging Face GPT-2 and torchvision's
// RegNetY-800MF (bf16 NCHW, grouped) on both GPUs (GPT-2 and RegNetY on the
// H200 since session 8), and since session 9 a DDPM-style diffusion UNet
// (f32, written in python/zoo/cases.py). ResNet-18's and MobileNet's
// backward peaks with the workspaces the exporter observed: 1.001 and 1.000;
// with the operand-copy rule instead 1.022 and 0.882. The forwards (0.992,
// 0.975) make the same requests as the model; the rest are blocks the
// measuring process's cache left unsplit (docs/memory-as-executed.md).
//
// Times with the shipped profiles (docs/cost-model.md, "Outside the zoo"):
// the kernel time of every graph within the 25 % worst-case target and every
// wall within 20 % (each graph's host priced at its run's speed), but for
// GPT-2's loss backward's kernels on the H200 (0.730) and the diffusion
// UNet's backward wall on the H100 (0.799). GPT-2's loss graphs are one looped
// reduction over 50,257 bf16 logits each, rows of 100,514 bytes. The forward's online log-softmax read
// 0.362 / 0.334 (H100 / H200) before session 8's online-softmax term, 0.714
// / 0.755 with it, and 0.930 / 0.879 since session 9's loss_vocab_sweep and
// unaligned-rows term; the backward 0.557 / 0.431, then 0.910 / 0.730. The
// kernel median 3.6 % (H100) and 6.2 % (H200) over 12 graphs; before session 7's routed convolution laws,
// ResNet-18's and MobileNet's backwards read 1.24 and 2.30.
TEST_CASE("models outside the zoo: kernel and wall times", "[measure][zoo]") {
  for (auto [gpu, name, graphs] : {std::tuple{"h100", "h100-sxm", 18}, std::tuple{"h200", "h200", 18}}) {
    INFO(gpu);
    const std::vector<MeasuredCase> cases = load_cases(std::string("outside_zoo/") + gpu);
    REQUIRE(static_cast<int>(cases.size()) == graphs);
    const AccuracyReport r = measure_accuracy(cases, builtin_profile(name), false);
    for (const auto& g : r.graphs) {
      INFO(g.graph);
      const double kernel = ratio(g.kernel_est_us, g.kernel_meas_us), wall = ratio(g.wall_est_us, g.wall_meas_us);
      const bool h100 = std::string(gpu) == "h100";
      // GPT-2's loss backward on the H200: 0.730 (the H100 reads 0.910);
      // one kernel, device-bound, so its wall reads what its kernel does
      // plus the call's lead: 0.741 (0.801 before session 22's epilogue,
      // when the whole call's host cost came before its first launch).
      if (!h100 && g.graph == "gpt2_step_2_bwd.post") {
        CHECK(kernel == Approx(0.730).margin(0.005));
        CHECK(wall == Approx(0.741).margin(0.01));
      } else if (g.graph.rfind("diffusion_unet_step", 0) == 0) {
        // Kernels within 6 %; walls host-bound and measured on session 9's
        // hosts, which ran the zoo's host probe 7-13 % slower than the runs
        // the host costs were fitted on (95.3-98.4 µs against 90.6 / 85.6):
        // at the measuring hosts' speed 0.869 / 0.799 on the H100 (the
        // backward just past the 20 % target), 0.909 / 0.942 on the H200
        // (before session 9's host-speed and per-input figures, at the
        // profiles' speed: 0.789 / 0.725 and 0.811 / 0.840).
        CHECK(std::abs(kernel - 1) <= 0.06);
        CHECK(std::abs(wall - 1) <= (h100 && g.graph == "diffusion_unet_step_1_bwd.post" ? 0.21 : 0.20));
      } else if (g.graph == "swin_step_1_bwd.post") {
        // Swin-T's backward (session 10): 0.620 / 0.581, 0.631 / 0.657 with
        // the strided classes' laws (issue 27), 0.641 / 0.655 with the
        // scatter traffic law, 0.641 / 0.645 once the H200's gemm_unaligned
        // took gemm's spill factor (session 21), 0.641 / 0.665 once its odd-row
        // matmuls (49-token windows) took the pitch sweep's odd_pitch_factor
        // (session 23), 0.707 / 0.665 once the H100's did too (session 24:
        // the H200's gemm_unaligned law, carried). Its relative position bias gradient is a
        // bf16 scatter-add (index_put with accumulate) of 24 x 2401 scores
        // per window into a 169 x 24 table, fused into the softmax
        // backward: eight such Triton kernels take 98-125 µs each, priced
        // 3-40 µs (28,812 atomic adds onto 4,056 elements: 14 per element
        // at a uniform spread, where the relative positions' index is
        // anything but uniform and a warp's lanes hit the same rows), and
        // the patch-embedding convolution's backward (4x4, stride 4) 132
        // µs, priced 40.
        // Since session 26 its patch stem's backward pays the per-pixel
        // transpose of its [16, 3, 224, 224] input: 0.713 / 0.673.
        CHECK(kernel == Approx(h100 ? 0.713 : 0.673).margin(0.01));
        CHECK(std::abs(wall - 1) <= 0.10);
      } else {
        CHECK(std::abs(kernel - 1) <= 0.25);
        CHECK(std::abs(wall - 1) <= 0.20);
      }
      // Hugging Face's Llama (session 10): attention through cuDNN with the
      // causal mask as an additive bias, priced by the attention_bias term
      // (attention_bias_sweep); before it the forward read 0.867 / 0.897.
      if (g.graph.rfind("hf_llama_step", 0) == 0) CHECK(std::abs(kernel - 1) <= 0.06);
      // Hugging Face's BERT (session 10, measured after the fit): its
      // padding mask reaches cuDNN's attention as a bias; 0.905 / 0.944
      // (H100) and 0.870 / 0.940 (H200), 0.840 / 0.890 and 0.808 / 0.881
      // with session 9's profiles.
      if (g.graph.rfind("hf_bert_step", 0) == 0) CHECK(std::abs(kernel - 1) <= 0.14);
    }
    const bool h100 = std::string(gpu) == "h100";
    CHECK(kernel_time_error(r).median <= 0.06);  // 5.4 % on both GPUs over 18 graphs
    for (const auto& c : base_class_totals(r)) {
      INFO(to_string(c.cls));
      const double e = std::abs(c.est_us / c.meas_us - 1);
      // The convolution classes, which the routed laws are for: within the
      // 15 % target (the H200's forwards read 1.175 until its fit had
      // EfficientNet-B0, session 8: 0.970).
      if (c.cls == KernelClass::Convolution) CHECK(e <= 0.15);
      if (c.cls == KernelClass::ConvolutionBackward) CHECK(e <= 0.15);
      if (c.cls == KernelClass::Gemm) CHECK(e <= 0.15);
      // GPT-2's attention (dropout 0.1 over an additive mask), Llama's (an
      // additive causal mask) and BERT's (a padding mask). GPT-2's alone:
      // priced as a plain attention it read 0.43 / 0.75 (H100); with the
      // dropout term 0.859 / 0.908 (H100) and 0.812 / 0.873 (H200); with
      // the bias term (session 10) 1.057 / 1.069 and 1.004 / 1.064. The
      // three summed: 0.990 / 1.060 (H100), 0.967 / 1.068 (H200); without
      // the bias term Llama's read 0.562 / 0.728, BERT's 0.720 / 0.804.
      // With the idle-wave and per-score terms (session 17) the H200's
      // backwards sum to 1.101.
      if (c.cls == KernelClass::Attention || c.cls == KernelClass::AttentionBackward) CHECK(e <= 0.105);
    }
  }
}

TEST_CASE("models outside the zoo: peaks with the workspaces observed by --measure", "[measure][zoo]") {
  std::vector<MeasuredCase> cases;
  for (const std::string& path : find_measured_files({test::data_path("outside_zoo/h100")}))
    if (path.find("resnet_step") != std::string::npos || path.find("mobilenet_step") != std::string::npos)
      cases.push_back(load_measured_case(path, {}));
  REQUIRE(cases.size() == 4);
  const AccuracyReport observed = measure_accuracy(cases, builtin_profile("h100-sxm"), false);
  for (MeasuredCase& c : cases) {  // the same graphs priced by the rule alone
    c.measured.workspace_bytes.clear();
    for (Node& n : c.graph.nodes) n.workspace_bytes.reset();
  }
  const AccuracyReport rule = measure_accuracy(cases, builtin_profile("h100-sxm"), false);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& g = observed.graphs[i];
    INFO(g.graph);
    const double e = std::abs(ratio(static_cast<double>(g.peak_est), static_cast<double>(g.peak_meas)) - 1);
    const double e_rule = std::abs(ratio(static_cast<double>(rule.graphs[i].peak_est), static_cast<double>(g.peak_meas)) - 1);
    if (g.graph.find("_bwd") != std::string::npos) {
      CHECK(e <= 0.002);
      CHECK(e_rule > 0.02);
    } else {
      CHECK(e <= 0.026);
    }
  }
}

// GPT-2 and RegNetY outside the zoo (tests/data/outside_zoo/h100, measured
// from their recorded start). GPT-2's backward frees six saved queries,
// [8, 12, 512, 64] bf16 views of 18 MiB packed q/k/v storages, and allocates
// its logits gradient with padded rows (stride 50304 for 50264), whose
// 412 MB storage leaves a 1 MiB rest unsplit in its segment; RegNetY's
// backward allocates buffers with padded strides (38464 for 38416) and frees
// a padded saved mask. Both peaks are exact to the byte with storages
// counted (before: 0.938 and 0.99999). RegNetY's reserved peak stays 0.961:
// each convolution backward allocates operand copies and one transient per
// gradient, in order, and the graph keeps only their largest sum
// (`workspace_bytes`; docs/memory-as-executed.md).
TEST_CASE("models outside the zoo: storages of views and of padded layouts", "[measure][zoo]") {
  std::vector<MeasuredCase> cases;
  for (const char* name : {"gpt2_step_3_bwd", "regnet_step_1_bwd"})
    cases.push_back(load_measured_case(test::data_path(std::string("outside_zoo/h100/") + name + ".measured.json"), {}));
  const AccuracyReport r = measure_accuracy(cases, builtin_profile("h100-sxm"), false);
  REQUIRE(r.graphs.size() == 2);
  for (const auto& g : r.graphs) {
    INFO(g.graph);
    CHECK(g.recorded_start);
    CHECK(g.peak_est == g.peak_meas);
  }
  CHECK(std::abs(ratio(static_cast<double>(r.graphs[0].reserved_est), static_cast<double>(r.graphs[0].reserved_meas)) - 1) <= 0.001);
  CHECK(std::abs(ratio(static_cast<double>(r.graphs[1].reserved_est), static_cast<double>(r.graphs[1].reserved_meas)) - 1) <= 0.04);
}

// Accumulating scatters, an experiment kept out of the fit
// (tests/data/experiments/scatter_add/README.md), under the scatter
// traffic law (docs/cost-model.md, "Scatter traffic"), fitted on the class
// sweeps alone. Scatters alone read 0.959 / 0.973 (0.943 / 0.949 before
// session 27's write-back term; 0.812 on the H100 before the law). The kernels that fuse a bf16 scatter-add into a small
// table behind a reduction (Swin-T's relative position bias gradient, a
// warp's lanes on the same rows) stay far below their time: 0.146 / 0.110
// (0.086 before the law): their collisions are not the uniform spread the law's
// chain term assumes.
TEST_CASE("accumulating scatters under the scatter traffic law", "[measure][zoo]") {
  for (auto [gpu, profile] : {std::pair{"h100", "h100-sxm"}, std::pair{"h200", "h200"}}) {
    INFO(gpu);
    const bool h100 = std::string(gpu) == "h100";
    const std::vector<MeasuredCase> cases = load_cases(std::string("experiments/scatter_add/") + gpu);
    REQUIRE(cases.size() == 2);
    const AccuracyReport r = measure_accuracy(cases, builtin_profile(profile), true);
    for (const auto& g : r.graphs) {
      INFO(g.graph);
      const double kernel = ratio(g.kernel_est_us, g.kernel_meas_us);
      if (g.graph == "scatter_add_sweep_1_inf.post") CHECK(kernel == Approx(h100 ? 0.146 : 0.110).margin(0.01));  // fused behind a sum
      else CHECK(kernel == Approx(h100 ? 0.959 : 0.973).margin(0.02));                                                  // alone
      CHECK(g.peak_est == g.peak_meas);  // memory as executed holds
    }
  }
}

// 1-D convolutions as speech models run them, an experiment kept out of
// the fit (tests/data/experiments/conv1d/README.md). The dense ones: under
// the H200's own convolution_1d laws (fitted on the class sweep's dense
// grid, tests/data/class_sweep/h200) 1.081 / 0.909 (forward / backward),
// where its parents' laws read 0.746 / 0.865; on the H100 (no 1-D grid)
// 1.149 forward under the H200's law, carried since session 25 (0.744
// under its parent's), 0.851 backward under its parent's. The grouped ones with long
// kernels (wav2vec 2.0's positional convolution) run as one cuDNN call per
// group, 15 to 800 times their FLOPs' price, with times 10x apart between
// shapes no feature separates. These figures say what a law would face.
TEST_CASE("1-D convolutions: dense within 10 % on the H200's own law, grouped long kernels far off", "[measure][zoo]") {
  struct Expected {
    const char* dir;
    const char* profile;
    double dense, dense_backward;
  };
  // The H100's backward on its parent's law: 0.851 before session 26's
  // refit (layout copies counted per gradient call, ATen's depthwise kernels
  // per element, narrow inputs' transposes per pixel), 0.771 since; the
  // H200's on its own, refitted on the layout sweep: 0.909 -> 0.922.
  for (const Expected& e : {Expected{"h100", "h100-sxm", 1.146, 0.771}, Expected{"h200", "h200", 1.076, 0.922}}) {
    INFO(e.dir);
    const std::vector<MeasuredCase> cases = load_cases(std::string("experiments/conv1d/") + e.dir);
    REQUIRE(cases.size() == 2);
    const AccuracyReport r = measure_accuracy(cases, builtin_profile(e.profile), true);
    const std::map<std::string, ClassAccuracy> by_class = classes_by_name(r);
    auto ratio_of = [&](const char* cls) { return ratio(by_class.at(cls).est_us, by_class.at(cls).meas_us); };
    CHECK(ratio_of("convolution_1d") == Approx(e.dense).margin(0.03));
    CHECK(ratio_of("convolution_1d_backward") == Approx(e.dense_backward).margin(0.03));
    CHECK(ratio_of("grouped_convolution") < 0.02);           // 0.006 on both GPUs
    CHECK(ratio_of("grouped_convolution_backward") < 0.08);  // 0.060 / 0.058
    for (const auto& g : r.graphs) CHECK(g.peak_est == g.peak_meas);
  }
}

// Sums into few outputs without the full-size epilogue the library models'
// missed ones fuse (tests/data/experiments/outer_reduction/README.md): the
// per-channel sums of N x C x S tensors 1.017 summed under the shipped h200,
// the row sums Inductor splits in two 1.117, memory as executed exact.
TEST_CASE("sums into few outputs: priced when alone", "[measure][zoo]") {
  const std::vector<MeasuredCase> cases = load_cases("experiments/outer_reduction/h200");
  REQUIRE(cases.size() == 1);
  const AccuracyReport r = measure_accuracy(cases, builtin_profile("h200"), true);
  const std::map<std::string, ClassAccuracy> by_class = classes_by_name(r);
  const ClassAccuracy& plain = by_class.at("triton_reduction");
  const ClassAccuracy& strided = by_class.at("triton_strided_reduction");
  CHECK(plain.nodes == 14);
  CHECK(strided.nodes == 18);
  CHECK(ratio(plain.est_us, plain.meas_us) == Approx(1.017).margin(0.03));
  CHECK(ratio(strided.est_us, strided.meas_us) == Approx(1.117).margin(0.03));
  for (const auto& g : r.graphs) CHECK(g.peak_est == g.peak_meas);
}

// The exporter's smallest example measured with its own --measure (one block
// of calls, settled at the block's full speed) on three hosts
// (tests/data/experiments/small_graph/README.md): memory as executed
// exact, and the launch-bound walls overshot by a sixth to a half (by a
// third to two thirds before session 22's call epilogue, when the whole
// call's own host cost came before the first kernel), the host figures
// being averages over far larger wrappers (tests/data/launch_sweep's own
// calls read 1.2-1.9 too).
TEST_CASE("a very small graph: where the host model overshoots", "[measure][zoo]") {
  for (auto [dir, name] : {std::pair{"h100", "h100-sxm"}, std::pair{"h200", "h200"}, std::pair{"h200-second", "h200"}}) {
    INFO(dir);
    const std::vector<MeasuredCase> cases = load_cases(std::string("experiments/small_graph/") + dir);
    REQUIRE(cases.size() == 2);
    for (const MeasuredCase& c : cases) REQUIRE(c.measured.host_probe_us);  // host_probe_wall_us, written by the block's settling
    const AccuracyReport r = measure_accuracy(cases, builtin_profile(name), true);
    for (const auto& g : r.graphs) {
      INFO(g.graph);
      const double wall = ratio(g.wall_est_us, g.wall_meas_us);
      if (g.graph == "train_step_example_0_fwd.post") CHECK((wall > 1.35 && wall < 1.55));
      else CHECK((wall > 1.15 && wall < 1.25));
      CHECK(g.peak_est == g.peak_meas);
    }
  }
}

// The launch path's sweep (tests/data/launch_sweep, session 22; one H200,
// measured twice on one lease): its five device-bound calls' leads fit the
// H200's call epilogue (the prologue before the first kernel, 2.3 µs of
// the 27.5 µs per call), and its small launch-bound calls read 1.08-1.95 of
// their walls under the zoo's host figures (docs/cost-model.md, "The call's
// epilogue"): a small isolated call costs the host less per term than the
// zoo's calls do. The repeat reads within 9 % of the first run.
TEST_CASE("the launch path's sweep: device-bound leads and small calls", "[measure][zoo][launch]") {
  const TimeModel& tm = *builtin_profile("h200").time_model;
  CHECK(tm.host_call_us - tm.host_call_epilogue_us == Approx(2.32).margin(0.05));
  CHECK(builtin_profile("h100-sxm").time_model->host_call_epilogue_us == builtin_profile("h100-sxm").time_model->host_call_us);
  std::map<std::string, double> first;
  for (const AccuracyReport& r : measured_twice_on_h200("launch_sweep/h200", 18, false)) {
    for (const auto& g : r.graphs) {
      INFO(g.graph);
      const double wall = ratio(g.wall_est_us, g.wall_meas_us);
      // One long pointwise kernel, one over four operands, an f32 matmul
      // first: the lead is priced, the walls read their kernels (0.87-1.01).
      if (g.graph == "launch_path_sweep_12_inf.post" || g.graph == "launch_path_sweep_14_inf.post" ||
          g.graph == "launch_path_sweep_16_inf.post")
        CHECK(std::abs(wall - 1) <= 0.12);
      // The launch-bound ones but the transformer layers (1.08-1.11) and
      // the sorts (0.75-0.77: Triton's sort kernels priced 0.34); the
      // embedding bags with their 32 items 1.80-1.85 (2.26-2.31 while the
      // items' host figure was fitted, 3.4 µs, not timed, 0.4 µs).
      if (g.graph == "launch_path_sweep_0_inf.post" || g.graph == "launch_path_sweep_1_inf.post" ||
          g.graph == "launch_path_sweep_3_inf.post" || g.graph == "launch_path_sweep_17_fwd.post")
        CHECK((wall > 1.6 && wall < 1.97));
      if (g.graph == "launch_path_sweep_10_inf.post") CHECK((wall > 1.0 && wall < 1.12));
      CHECK(repeats(first, g.graph, g.wall_meas_us, 0.09));
    }
  }
}

// Norms over transposes (tests/data/experiments/norm_backward/README.md,
// session 22, kept out of every fit): the strided reductions of layer norms
// whose output a token-mixing linear reads transposed, and of channels-last
// batch norms. Before the strided law's transposed-operand terms (session
// 24, fitted on the H200's transposed reduction sweep alone) 0.646 summed
// under the shipped h200 (78 nodes), the graphs 0.950 and 0.851; with them
// 1.029, 1.072 and 1.035 (the norms' forwards 0.411 -> 0.878, their
// backwards 0.635 -> 1.201); memory as executed exact.
TEST_CASE("norms over transposes: the strided reductions priced by their transposed operands", "[measure][zoo]") {
  const std::vector<MeasuredCase> cases = load_cases("experiments/norm_backward/h200");
  REQUIRE(cases.size() == 2);
  const AccuracyReport r = measure_accuracy(cases, builtin_profile("h200"), true);
  const ClassAccuracy strided = classes_by_name(r).at("triton_strided_reduction");  // a copy: the map is a temporary
  CHECK(strided.nodes == 78);
  CHECK(ratio(strided.est_us, strided.meas_us) == Approx(1.029).margin(0.03));
  for (const auto& g : r.graphs) {
    INFO(g.graph);
    CHECK(ratio(g.kernel_est_us, g.kernel_meas_us) == Approx(g.graph == "norm_backward_sweep_0_fwd.post" ? 1.072 : 1.035).margin(0.02));
    CHECK(g.peak_est == g.peak_meas);
  }
}

// Gathers beside atomics (tests/data/experiments/gather_scatter/README.md,
// session 23): message-passing kernels that gather rows of 8 to 512 MiB
// tables and add them into a table with atomics, under the shipped h200.
// With the atomic table in the L2 the law adds the gathers' DRAM traffic to
// the L2's atomic work they run beside, and sends the small table's lines
// to DRAM with the rest: 1.5-1.8 x where the gathered table is 256 MiB or
// more; with the atomic table beyond the L2 within 13 % (the messages
// written out, GAT's forward, 0.985 since session 27's write-back term;
// 0.874 before).
TEST_CASE("gathers beside atomics: the scatter traffic law's one miss share", "[measure][zoo]") {
  const std::vector<MeasuredCase> cases = load_cases("experiments/gather_scatter/h200");
  REQUIRE(cases.size() == 1);
  const AccuracyReport r = measure_accuracy(cases, builtin_profile("h200"), true);
  const ClassAccuracy scatters = classes_by_name(r).at("triton_scatter");  // a copy: the map is a temporary
  CHECK(scatters.nodes == 14);
  CHECK(ratio(scatters.est_us, scatters.meas_us) == Approx(1.089).margin(0.02));  // 1.114 before session 27's write-back term
  int hot_table = 0, large_table = 0;
  for (const NodeAccuracy& n : r.nodes) {
    if (n.cls != KernelClass::TritonScatter) continue;
    INFO(n.node << ": " << n.est_us / n.meas_us);
    if (n.node == "op5" || n.node == "op7" || n.node == "op9" || n.node == "op11") {
      CHECK(n.est_us / n.meas_us > 1.45);
      ++hot_table;
    } else if (n.node == "op19" || n.node == "op21" || n.node == "op26" || n.node == "op28") {
      CHECK(std::abs(n.est_us / n.meas_us - 1) <= 0.13);
      ++large_table;
    }
  }
  CHECK(hot_table == 4);
  CHECK(large_table == 4);
  CHECK(r.graphs.front().peak_est == r.graphs.front().peak_meas);
}

// Message passing: the gathers alone and the edge sums
// (tests/data/experiments/message_passing/README.md, session 27, one H200,
// measured twice on one lease). Its scatter graphs are fit data
// (class_sweep/h200); the gathers alone and the edge sums stay out of every
// fit. Gathers alone are priced as a stream (0.36-0.86), and edge sums read
// 0.16-0.41 with their tables in the L2 and 1.28-1.50 with rows of 16-64
// floats beyond it.
TEST_CASE("message passing's gathers alone and edge sums, which the fit never saw", "[measure][zoo]") {
  std::map<std::string, double> first;
  for (const AccuracyReport& r : measured_twice_on_h200("experiments/message_passing/h200", 5, true)) {
    const std::map<std::string, ClassAccuracy> classes = classes_by_name(r);
    CHECK(classes.at("triton_scatter").nodes == 28);
    CHECK(classes.at("triton_scatter_reduction").nodes == 8);
    CHECK(ratio(classes.at("triton_scatter").est_us, classes.at("triton_scatter").meas_us) == Approx(0.96).margin(0.02));  // in sample
    CHECK(ratio(classes.at("triton_scatter_reduction").est_us, classes.at("triton_scatter_reduction").meas_us) == Approx(0.955).margin(0.03));
    int gathers = 0, edge_sums_in_l2 = 0, edge_sums_beyond = 0;
    for (const NodeAccuracy& n : r.nodes) {
      INFO(n.graph << " " << n.node << ": " << n.est_us / n.meas_us);
      if (n.meas_us < 20) continue;  // the tables' zero fills
      const double read = n.est_us / n.meas_us;
      if (n.graph == "message_passing_sweep_0_inf.post") {
        CHECK(read < 0.9);  // a gather alone: its touched elements priced as a stream
        CHECK(read > 0.3);
        ++gathers;
      } else if (n.graph == "message_passing_sweep_4_inf.post" && (n.node == "op0_op2" || n.node == "op3_op5")) {
        CHECK(read < 0.45);  // shape 1 reads 0.294, and 0.406 in the repeat
        ++edge_sums_in_l2;
      } else if (n.graph == "message_passing_sweep_4_inf.post" && (n.node == "op12_op14" || n.node == "op15_op17" || n.node == "op18_op20")) {
        CHECK(read > 1.25);
        ++edge_sums_beyond;
      }
      // The two edge sums between those (tables of 32 and 64 MiB) do not repeat.
      if (!(n.graph == "message_passing_sweep_4_inf.post" && (n.node == "op3_op5" || n.node == "op6_op8")))
        CHECK(repeats(first, n.graph + n.node, n.meas_us, 0.05));
    }
    CHECK(gathers == 9);
    CHECK(edge_sums_in_l2 == 2);
    CHECK(edge_sums_beyond == 3);
    for (const GraphAccuracy& g : r.graphs) CHECK(g.peak_est == g.peak_meas);
  }
}

// tests/data/experiments/gemm_token/README.md: 24 products over a token
// count the fit never saw, summed within 3 %, one by one 0.76-2.36 (the
// unaligned law's floor, fitted on the pitch sweep, is too high for the
// smallest).
TEST_CASE("matmuls over a token count the fit never saw: summed, not one by one", "[measure][zoo]") {
  std::map<std::string, double> first;
  for (const AccuracyReport& r : measured_twice_on_h200("experiments/gemm_token/h200", 1, true)) {
    const ClassAccuracy unaligned = classes_by_name(r).at("gemm_unaligned");
    CHECK(unaligned.nodes == 24);
    CHECK(ratio(unaligned.est_us, unaligned.meas_us) == Approx(1.024).margin(0.02));
    double lowest = 10, highest = 0;
    for (const NodeAccuracy& n : r.nodes) {
      if (n.cls != KernelClass::GemmUnaligned) continue;
      INFO(n.node);
      lowest = std::min(lowest, n.est_us / n.meas_us);
      highest = std::max(highest, n.est_us / n.meas_us);
      CHECK(repeats(first, n.node, n.meas_us, 0.035));
    }
    CHECK(lowest > 0.7);
    CHECK(highest < 2.5);
  }
}

// tests/data/experiments/attention_f32_bias/README.md: at one score count,
// a per-head bias costs the f32 kernels about twice what one broadcast over
// the heads does, which the law's per-score bias term does not tell apart.
TEST_CASE("an f32 attention's bias the fit never saw: per head against broadcast", "[measure][zoo]") {
  std::map<std::string, double> first;
  for (const AccuracyReport& r : measured_twice_on_h200("experiments/attention_f32_bias/h200", 2, true)) {
    const std::map<std::string, ClassAccuracy> classes = classes_by_name(r);
    CHECK(ratio(classes.at("attention").est_us, classes.at("attention").meas_us) == Approx(0.96).margin(0.02));
    CHECK(ratio(classes.at("attention_backward").est_us, classes.at("attention_backward").meas_us) == Approx(0.996).margin(0.02));
    std::map<std::string, const NodeAccuracy*> forward;
    for (const NodeAccuracy& n : r.nodes) {
      if (n.cls != KernelClass::Attention && n.cls != KernelClass::AttentionBackward) continue;
      INFO(n.graph << " " << n.node);
      CHECK(repeats(first, n.graph + n.node, n.meas_us, 0.03));
      if (n.cls == KernelClass::Attention) forward[n.node] = &n;
    }
    // (none, per head, broadcast) at lengths 256, 512, 1,024, 2,048.
    for (const auto& [none, per_head, broadcast] : {std::tuple{"op0", "op7", "op14"}, std::tuple{"op21", "op28", "op35"},
                                                    std::tuple{"op42", "op49", "op56"}, std::tuple{"op63", "op70", "op77"}}) {
      INFO(per_head);
      const double head_extra = forward.at(per_head)->meas_us - forward.at(none)->meas_us;
      const double broadcast_extra = forward.at(broadcast)->meas_us - forward.at(none)->meas_us;
      CHECK(head_extra > 1.4 * broadcast_extra);
      CHECK(forward.at(per_head)->est_us / forward.at(per_head)->meas_us < 0.98);
    }
  }
}

// Embedding bags in shapes the class sweep's six do not have
// (tests/data/experiments/embedding_bag/README.md, session 25, one H200,
// measured twice on one lease; kept out of every fit): under the bag walk
// terms 0.967 summed (0.699 under the bytes alone), each 0.61-1.31
// (0.20-1.67), the repeat within 3 % per call. Memory as executed misses
// the results ATen's forward-only call allocates beside the one item the
// graph takes (offset2bag, 8 bytes an index, and bag_size): 0.814 of the
// measured peak, the 16,384 bags of 40 lookups' 5.4 MB.
TEST_CASE("embedding bags the fit never saw: the bag walk terms", "[measure][zoo]") {
  std::map<std::string, double> first;
  for (const AccuracyReport& r : measured_twice_on_h200("experiments/embedding_bag/h200", 1, true)) {
    const ClassAccuracy bags = classes_by_name(r).at("indexing");  // a copy: the map is a temporary
    CHECK(bags.nodes == 10);
    CHECK(ratio(bags.est_us, bags.meas_us) == Approx(0.967).margin(0.02));
    for (const NodeAccuracy& n : r.nodes) {
      if (n.cls != KernelClass::Indexing) continue;
      INFO(n.node << ": " << n.est_us / n.meas_us);
      CHECK((n.est_us / n.meas_us > 0.6 && n.est_us / n.meas_us < 1.36));
      CHECK(repeats(first, n.node, n.meas_us, 0.03));
    }
    const auto& g = r.graphs.front();
    CHECK(static_cast<double>(g.peak_est) / static_cast<double>(g.peak_meas) == Approx(0.814).margin(0.005));
    CHECK(g.peak_meas - g.peak_est == 655360 * 8 + 16384 * 8);  // offset2bag and bag_size of the largest call
  }
}
