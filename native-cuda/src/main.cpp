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
#include <iostream>

#include "cli/commands.h"
#include "core/util/error.h"
#include "core/io/files.h"
#include "core/io/graph_reader.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/memory/estimate.h"
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

constexpr const char* kUsage =
    "usage:\n"
    "  schedlab-gpu run GRAPH.json [--plan PLAN.json | --order baseline|lpmf|bfs|dfs] [--profile NAME|FILE]\n"
    "                  [--ranks N | --nccl-id-file FILE] [--serial] [--warmup N] [--repeat N] -o REPORT.json\n"
    "      one process per GPU under torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT;\n"
    "      the rendezvous listens on MASTER_PORT+1 or SCHEDLAB_BOOTSTRAP_PORT), or with --nccl-id-file\n"
    "      and RANK/WORLD_SIZE set by hand; rank 0 merges REPORT.rank<r>.json into REPORT.json\n"
    "  schedlab-gpu calibrate [--ranks N] [--base NAME] [--quick] -o PROFILE.json [--details FILE]\n";

bool is_flag(const std::string& a, const char* name) {
  const std::string n = name;
  return a == n || a.rfind(n + "=", 0) == 0;
}

int positive_int(const std::string& v, const std::string& flag) {
  try {
    std::size_t used = 0;
    const int x = std::stoi(v, &used);
    if (used == v.size() && x >= 1) return x;
  } catch (const std::exception&) {
  }
  throw UsageError(flag + ": expected an integer >= 1, got \"" + v + "\"");
}

int default_ranks() { return std::min(visible_gpus(), nccl_available() ? 8 : 1); }

struct RunRequest {
  std::string graph_path, plan_path, order_method, out_path, id_file;
  HardwareProfile hw = builtin_profile(kDefaultHardwareProfile);
  int ranks = 0;
  ExecuteOptions opts;
};

RunRequest parse_run(const cli::Args& args) {
  cli::ArgReader r(args);
  RunRequest q;
  while (!r.done()) {
    const std::string a = r.next();
    if (is_flag(a, "-o") || is_flag(a, "--output")) q.out_path = r.value(a);
    else if (is_flag(a, "--plan")) q.plan_path = r.value(a);
    else if (is_flag(a, "--order")) q.order_method = r.value(a);
    else if (is_flag(a, "--profile")) q.hw = hardware_profile_arg(r.value(a), "--profile");
    else if (is_flag(a, "--ranks")) q.ranks = positive_int(r.value(a), "--ranks");
    else if (is_flag(a, "--nccl-id-file")) q.id_file = r.value(a);
    else if (is_flag(a, "--warmup")) q.opts.warmup = positive_int(r.value(a), "--warmup");
    else if (is_flag(a, "--repeat")) q.opts.repetitions = positive_int(r.value(a), "--repeat");
    else if (a == "--serial") q.opts.overlap = false;
    else if (!a.empty() && a[0] == '-') throw UsageError("run: unknown option " + a);
    else if (q.graph_path.empty()) q.graph_path = a;
    else throw UsageError("run: one graph only (got \"" + a + "\" too)");
  }
  if (q.graph_path.empty()) throw UsageError("run: missing GRAPH.json");
  if (q.out_path.empty()) throw UsageError("run: missing -o REPORT.json");
  if (!q.plan_path.empty() && !q.order_method.empty()) throw UsageError("run: --plan and --order exclude each other");
  return q;
}

// Plans the order, executes it on `rt` and returns the report (this rank's).
nlohmann::json execute_and_report(const RunRequest& q, GpuRuntime& rt) {
  const Graph g = load_graph_file(q.graph_path);
  const auto info = compute_planning_info(g, g.baseline_order());
  const Order order = !q.plan_path.empty() ? order_from_plan_json(g, read_text_file(q.plan_path))
                                           : order_by_method(g, info, q.order_method.empty() ? "baseline" : q.order_method);
  const ExecutionSchedule schedule = build_execution_schedule(g, info, order);
  std::vector<StandIn> stand_ins;
  for (NodeId v = 0; v < g.num_nodes(); ++v) stand_ins.push_back(plan_stand_in(g, info, v));
  const std::int64_t estimated_peak = estimate_peak_memory(g, info, order).peak;
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
  if (q.ranks) throw UsageError("--ranks: a multi-process run takes its ranks from WORLD_SIZE");
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

int cmd_run(const cli::Args& args) {
  const RunRequest q = parse_run(args);
  const auto env = launch_env_from([](const char* name) -> const char* { return std::getenv(name); }, q.id_file.empty());
  if (env && (env->world_size > 1 || !q.id_file.empty())) return run_as_rank(q, *env);
  GpuRuntime rt(q.ranks ? q.ranks : default_ranks());
  const nlohmann::json report = execute_and_report(q, rt);
  write_output(q.out_path, report.dump(1) + "\n");
  print_summary(report, "");
  return report["memory"]["peaks_agree"].get<bool>() ? 0 : 1;
}

int cmd_calibrate(const cli::Args& args) {
  cli::ArgReader r(args);
  std::string out_path, details_path, base_name;
  int ranks = 0;
  CalibrateOptions opts;
  while (!r.done()) {
    const std::string a = r.next();
    if (is_flag(a, "-o") || is_flag(a, "--output")) out_path = r.value(a);
    else if (is_flag(a, "--details")) details_path = r.value(a);
    else if (is_flag(a, "--base")) base_name = r.value(a);
    else if (is_flag(a, "--ranks")) ranks = positive_int(r.value(a), "--ranks");
    else if (a == "--quick") opts.quick = true;
    else throw UsageError("calibrate: unknown argument " + a);
  }
  if (out_path.empty()) throw UsageError("calibrate: missing -o PROFILE.json");
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

}  // namespace
}  // namespace schedlab::gpu

int main(int argc, char** argv) {
  using namespace schedlab;
  const cli::Args args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(gpu::kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const cli::Args rest(args.begin() + 1, args.end());
  try {
    if (args[0] == "run") return gpu::cmd_run(rest);
    if (args[0] == "calibrate") return gpu::cmd_calibrate(rest);
    throw UsageError("unknown command \"" + args[0] + "\"");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "schedlab-gpu: %s\n%s", e.what(), gpu::kUsage);
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "schedlab-gpu: %s\n", e.what());
    return 1;
  }
}
