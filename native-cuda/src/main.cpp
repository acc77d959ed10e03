// schedlab-gpu: executes a schedlab order on real GPUs and calibrates a
// hardware profile (docs/gpu-validation.md).
//
//   schedlab-gpu run GRAPH.json [--plan PLAN.json | --order METHOD] [--profile NAME|FILE]
//                [--ranks N | --nccl-id-file FILE] [--serial] [--warmup N] [--repeat N] -o REPORT.json
//
// One process per GPU when the launcher's environment names several ranks
// (torchrun: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or with
// --nccl-id-file (RANK and WORLD_SIZE set by hand): every rank runs the graph
// and writes REPORT.rank<r>.json; rank 0 merges them into REPORT.json.
//   schedlab-gpu calibrate [--ranks N] [--base NAME] [--quick] -o PROFILE.json [--details FILE]
//
// Exit codes as the schedlab CLI: 0 ok, 1 bad input or a CUDA failure, 2 bad usage.
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>

#include "cli/common/command_line.h"
#include "core/util/error.h"
#include "core/io/files.h"
#include "core/io/graph_reader.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/memory/methods.h"
#include "native-cuda/host/calibration.h"
#include "native-cuda/host/execution_schedule.h"
#include "native-cuda/host/launch.h"
#include "native-cuda/host/run_report.h"
#include "native-cuda/host/stand_in.h"
#include "native-cuda/src/bootstrap.h"
#include "native-cuda/src/calibrate.h"
#include "native-cuda/src/executor.h"

namespace schedlab::gpu {
namespace {

int default_ranks() { return std::min(visible_gpus(), nccl_available() ? 8 : 1); }

struct RunRequest {
  std::string graph_path, plan_path, order_method, out_path, id_file;
  HardwareProfile hw = builtin_profile(kDefaultHardwareProfile);
  int ranks = 0;
  ExecuteOptions opts;
};

// Plans the order, executes it on `rt` and returns the report (this rank's).
nlohmann::json execute_and_report(const RunRequest& q, GpuRuntime& rt) {
  const ExecutionPlan planned = plan_execution(std::make_shared<const Graph>(load_graph_file(q.graph_path)), q.hw,
                                               q.order_method.empty() ? "baseline" : q.order_method,
                                               q.plan_path.empty() ? std::string() : read_text_file(q.plan_path));
  const Graph& g = planned.plan.planned();
  const MemoryPlanningInfo& info = *planned.plan.memory.info;
  const Order& order = planned.order;
  const ExecutionSchedule schedule = build_execution_schedule(g, info, order);
  std::vector<StandIn> stand_ins;
  for (NodeId v = 0; v < g.num_nodes(); ++v) stand_ins.push_back(plan_stand_in(g, info, v));
  const std::int64_t estimated_peak = planned.estimated_peak;
  const RunMeasurements m = execute_schedule(rt, g, schedule, stand_ins, q.opts);
  nlohmann::json report = run_report_json(g, schedule, stand_ins, q.hw, estimated_peak, m);
  report["order_source"] = !q.plan_path.empty() ? "plan " + q.plan_path : "method " + (q.order_method.empty() ? "baseline" : q.order_method);
  report["streams"] = q.opts.overlap ? "overlap" : "serial";
  return report;
}

void print_summary(const nlohmann::json& report, const char* who) {
  const auto& tot = report["totals"];
  const auto& mem = report["memory"];
  std::fprintf(stderr, "%s%s on %s: estimated %.1f us, measured %.1f us (wall %.1f us); peak estimated %lld B, measured %lld B (%s)\n",
               who, report["graph"].get<std::string>().c_str(), report["device"].get<std::string>().c_str(),
               tot["estimated_us"].get<double>(), tot["measured_us"].get<double>(), tot["measured_wall_us"].get<double>(),
               static_cast<long long>(mem["estimated_peak_bytes"].get<std::int64_t>()),
               static_cast<long long>(mem["measured_live_peak_bytes"].get<std::int64_t>()),
               mem["peaks_agree"].get<bool>() ? "agree" : "DIFFER");
}

// One rank of a multi-process run: rendezvous, run, report; rank 0 merges.
int run_as_rank(const RunRequest& q, const LaunchEnv& env) {
  if (q.ranks) throw OptionError("--ranks: a multi-process run takes its ranks from WORLD_SIZE");
  Rendezvous rendezvous(env, q.id_file, env.rank == 0 ? make_nccl_unique_id() : std::vector<std::uint8_t>{});
  GpuRuntime rt(env.local_rank, env.world_size, env.rank, rendezvous.nccl_id());
  nlohmann::json report = execute_and_report(q, rt);
  report["rank"] = env.rank;
  report["run_id"] = rendezvous.run_id();
  const std::string mine = report.dump(1) + "\n";
  std::vector<std::string> files;
  for (int r = 0; r < env.world_size; ++r) files.push_back(rank_report_path(q.out_path, r));
  write_output(files[env.rank], mine);
  const std::string who = "rank " + std::to_string(env.rank) + ": ";
  print_summary(report, who.c_str());
  const std::vector<std::string> all = rendezvous.gather(mine, files);
  if (env.rank != 0) return report["memory"]["peaks_agree"].get<bool>() ? 0 : 1;
  std::vector<nlohmann::json> reports;
  for (const std::string& text : all) reports.push_back(nlohmann::json::parse(text));
  const nlohmann::json merged = merge_rank_reports(reports);
  write_output(q.out_path, merged.dump(1) + "\n");
  std::fprintf(stderr, "merged %d ranks: wall %.1f us (slowest rank), peaks agree on every rank: %s\n", env.world_size,
               merged["totals"]["measured_wall_us_max"].get<double>(),
               merged["memory"]["peaks_agree_on_every_rank"].get<bool>() ? "yes" : "NO");
  return merged["memory"]["peaks_agree_on_every_rank"].get<bool>() ? 0 : 1;
}

int run(const RunRequest& q) {
  const auto env = launch_env_from([](const char* name) -> const char* { return std::getenv(name); }, q.id_file.empty());
  if (env && (env->world_size > 1 || !q.id_file.empty())) return run_as_rank(q, *env);
  GpuRuntime rt(q.ranks ? q.ranks : default_ranks());
  const nlohmann::json report = execute_and_report(q, rt);
  write_output(q.out_path, report.dump(1) + "\n");
  print_summary(report, "");
  return report["memory"]["peaks_agree"].get<bool>() ? 0 : 1;
}

struct CalibrateRequest {
  std::string out_path, details_path, base_name;
  int ranks = 0;
  CalibrateOptions opts;
};

int calibrate(const CalibrateRequest& q) {
  const auto& [out_path, details_path, base_name, ranks, opts] = q;
  GpuRuntime rt(ranks ? ranks : default_ranks());
  const CalibrationMeasurements m = run_calibration(rt, opts);
  const HardwareProfile& base = base_name.empty() ? base_profile_for_device(m.device_name) : builtin_profile(base_name);
  const HardwareProfile p = calibrated_profile(m, base);
  // The profile alone: parse_hardware_profile refuses unknown fields.
  write_output(out_path, nlohmann::json::parse(hardware_profile_json(p)).dump(1) + "\n");
  if (!details_path.empty()) write_output(details_path, calibration_details_json(m, base, p).dump(1) + "\n");
  std::fprintf(stderr, "%s: DRAM %.0f GB/s, bf16 %.0f TFLOP/s, f32 %.1f TFLOP/s, launch %.2f us, NVLink bus %.0f GB/s\n",
               m.device_name.c_str(), p.dram_bytes_per_s / 1e9, p.flops_per_s.count("bf16") ? p.flops_per_s.at("bf16") / 1e12 : 0.0,
               p.flops_per_s.at("f32") / 1e12, p.kernel_launch_us, m.collectives.empty() ? 0.0 : p.nvlink_bytes_per_s / 1e9);
  return 0;
}

std::function<int()> define_run(CLI::App& app) {
  auto q = std::make_shared<RunRequest>();
  std::vector<std::string> methods;
  for (const MemoryMethod& m : memory_methods()) methods.emplace_back(m.name);
  app.add_option("GRAPH.json", q->graph_path, "the schedgraph/1 graph to execute")->required();
  cli::add_output_option(app, "-o,--output", q->out_path, "the run report (rank r of a multi-process run: REPORT.rank<r>.json, merged by rank 0)")
      ->option_text("REPORT.json")
      ->required();
  CLI::Option* plan = app.add_option("--plan", q->plan_path, "execute the order of this schedplan/1 file")->option_text("PLAN.json");
  cli::add_choice_option(app, "--order", q->order_method, methods, "execute the order of this memory method (default baseline)")->excludes(plan);
  cli::add_hardware_option(app, q->hw, "--profile");
  cli::add_int_option(app, "--ranks", q->ranks, 1, std::numeric_limits<int>::max(), "GPUs of a single-process run (default: all visible, at most 8)");
  app.add_option("--nccl-id-file", q->id_file, "rendezvous through this file (RANK and WORLD_SIZE set by hand)")->option_text("FILE");
  cli::add_int_option(app, "--warmup", q->opts.warmup, 1, std::numeric_limits<int>::max(), "untimed runs first (default " + std::to_string(q->opts.warmup) + ")");
  cli::add_int_option(app, "--repeat", q->opts.repetitions, 1, std::numeric_limits<int>::max(), "timed runs (default " + std::to_string(q->opts.repetitions) + ")");
  app.add_flag_callback("--serial", [q] { q->opts.overlap = false; }, "one stream: no compute-communication overlap");
  app.footer("One process per GPU under torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; the rendezvous listens on\n"
             "MASTER_PORT+1 or SCHEDLAB_BOOTSTRAP_PORT), or with --nccl-id-file and RANK/WORLD_SIZE set by hand.");
  return [q] { return run(*q); };
}

std::function<int()> define_calibrate(CLI::App& app) {
  auto q = std::make_shared<CalibrateRequest>();
  cli::add_output_option(app, "-o,--output", q->out_path, "the calibrated hardware profile")->option_text("PROFILE.json")->required();
  app.add_option("--details", q->details_path, "also write every measurement and fit")->option_text("FILE");
  cli::add_choice_option(app, "--base", q->base_name, builtin_profile_names(), "the profile to start from (default: the one for this device)");
  cli::add_int_option(app, "--ranks", q->ranks, 1, std::numeric_limits<int>::max(), "GPUs for the collective benchmarks (default: all visible, at most 8)");
  app.add_flag_callback("--quick", [q] { q->opts.quick = true; }, "the smallest size of each benchmark only (a smoke test)");
  return [q] { return calibrate(*q); };
}

}  // namespace
}  // namespace schedlab::gpu

int main(int argc, char** argv) {
  using namespace schedlab;
  CLI::App app{"schedlab-gpu: executes a schedlab order on real GPUs and calibrates a hardware profile (docs/gpu-validation.md)",
               "schedlab-gpu"};
  cli::configure_app(app);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 ok, 1 bad input or a CUDA failure, 2 bad usage.");
  CLI::App* run = app.add_subcommand("run", "execute a graph's order and report measured against estimated times and peaks");
  CLI::App* calibrate = app.add_subcommand("calibrate", "measure this GPU and write a calibrated hardware profile");
  cli::configure_app(*run);
  cli::configure_app(*calibrate);
  const std::function<int()> run_command = gpu::define_run(*run), calibrate_command = gpu::define_calibrate(*calibrate);
  const cli::Args args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  return cli::run_with_exit_codes("schedlab-gpu", [&] {
    if (!cli::parse_command_line(app, args)) return 0;  // --help
    return run->parsed() ? run_command() : calibrate_command();
  });
}
