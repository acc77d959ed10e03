// native-cuda/host — calibration measurements -> a hardware profile that
// core/cost's parse_hardware_profile accepts (see execution_schedule.h for
// the folder's contract). The microbenchmarks themselves are in
// native-cuda/src/calibrate.cu; this half only does the arithmetic, so the
// suite checks it without a GPU.
//
// Bus bandwidths and step latencies are fitted through core/cost's own ring
// model (estimate_collective_algorithms), so a calibrated profile predicts
// the measured collectives with the same formulas the planner uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cost/cost_model.h"

namespace schedlab::gpu {

struct CopySample {
  std::int64_t bytes = 0;  // copied: read once and written once
  double us = 0;
};

struct GemmSample {
  std::string dtype;  // "f32" (no tensor cores), "tf32", "bf16", "f16"
  std::int64_t m = 0, n = 0, k = 0;
  double us = 0;
};

struct CollectiveSample {
  CollectiveOp op = CollectiveOp::AllReduce;
  std::int64_t bytes = 0;  // payload as the format defines it (output bytes)
  std::int64_t ranks = 2;
  double us = 0;
};

struct CalibrationMeasurements {
  std::string device_name;  // cudaDeviceProp::name, e.g. "NVIDIA H200"
  int device_count = 1;
  std::vector<CopySample> copies;
  std::vector<GemmSample> gemms;
  double launch_us = 0;  // per kernel, back-to-back empty kernels on one stream; 0 = not measured
  std::vector<CollectiveSample> collectives;  // empty with one GPU
};

double copy_bytes_per_s(const CopySample& s);          // read + write bytes over time
double gemm_flops_per_s(const GemmSample& s);
// NCCL-tests' bus bandwidth: the ring's bytes on the busiest link over time,
// i.e. the `nvlink_bytes_per_s` at which core/cost's ring model (latency 0)
// predicts the measured time.
double collective_bus_bytes_per_s(const CollectiveSample& s);
// The ring model's two parameters for one op, fitted by least squares over
// its samples (t = steps·latency + bus_bytes / bandwidth; steps and bus
// bytes from core/cost): the bus bandwidth and the per-step latency (>= 0).
// Needs two or more sizes; with one, the latency is 0 and the bandwidth that
// sample's bus bandwidth.
struct CollectiveFit {
  double bus_bytes_per_s = 0;
  double step_latency_us = 0;
};
CollectiveFit fit_collective(const std::vector<CollectiveSample>& samples_of_one_op);

// The built-in profile a device's unmeasured figures come from: by name
// ("H200" -> h200, "H100" -> h100-sxm, "A100" -> a100-80gb, "B200" -> b200),
// else the default.
const HardwareProfile& base_profile_for_device(const std::string& device_name);

// The calibrated profile: DRAM bandwidth, per-dtype peaks, launch overhead
// and (with collectives) NVLink bus bandwidth and step latency measured (the
// median over the ops of each op's fit); the
// rest (network, f8/f64 peaks, ranks_per_node) from `base`. Throws Error
// when there is no copy sample or no f32 GEMM sample.
HardwareProfile calibrated_profile(const CalibrationMeasurements& m, const HardwareProfile& base);

// Every sample with its derived rate, and which profile fields were measured.
nlohmann::json calibration_details_json(const CalibrationMeasurements& m, const HardwareProfile& base,
                                        const HardwareProfile& calibrated);

}  // namespace schedlab::gpu
