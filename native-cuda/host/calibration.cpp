#include "native-cuda/host/calibration.h"

#include <algorithm>
#include <cctype>

#include "core/io/plan_writer.h"
#include "core/util/error.h"

namespace schedlab::gpu {
namespace {

// core/cost's ring model at a probe bandwidth and latency; the ring time is
// affine in both: t = steps·lat + (S·factor)/bw.
constexpr double kProbeBw = 1e9;

double ring_us(const CollectiveSample& s, double latency_us) {
  HardwareProfile probe = builtin_profile(kDefaultHardwareProfile);
  probe.nvlink_bytes_per_s = kProbeBw;
  probe.nvlink_latency_us = latency_us;
  return estimate_collective_algorithms(s.op, s.bytes, s.ranks, s.ranks, probe).ring_us;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "gpu" : out;
}

}  // namespace

double copy_bytes_per_s(const CopySample& s) { return 2.0 * static_cast<double>(s.bytes) / (s.us * 1e-6); }

double gemm_flops_per_s(const GemmSample& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / (s.us * 1e-6);
}

double collective_bus_bytes_per_s(const CollectiveSample& s) {
  const double bus_bytes = ring_us(s, 0) * 1e-6 * kProbeBw;  // S·factor
  return bus_bytes / (s.us * 1e-6);
}

CollectiveFit fit_collective(const std::vector<CollectiveSample>& samples) {
  if (samples.empty()) throw Error("calibration: no collective samples to fit");
  // The ring model is the line t_us = steps·latency + x / bandwidth with
  // x = S·factor·1e6 (bus bytes, scaled to give microseconds); steps are the
  // same for every size of one op at one rank count.
  const double steps = ring_us(samples[0], 1) - ring_us(samples[0], 0);
  // Least squares in two passes (means first): the one-pass sums cancel
  // catastrophically when x spans 64 KiB to 256 MiB.
  std::vector<double> xs;
  for (const auto& c : samples) xs.push_back(ring_us(c, 0) * kProbeBw);
  const double n = static_cast<double>(samples.size());
  double mean_x = 0, mean_y = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    mean_x += xs[i] / n;
    mean_y += samples[i].us / n;
  }
  double var = 0, cov = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    var += (xs[i] - mean_x) * (xs[i] - mean_x);
    cov += (xs[i] - mean_x) * (samples[i].us - mean_y);
  }
  if (samples.size() < 2 || var <= 0) return {collective_bus_bytes_per_s(samples[0]), 0};
  const double slope = cov / var;  // 1 / bandwidth
  const double intercept = mean_y - slope * mean_x;
  if (slope <= 0) return {collective_bus_bytes_per_s(samples.back()), 0};
  return {1.0 / slope, steps > 0 ? std::max(0.0, intercept / steps) : 0};
}

const HardwareProfile& base_profile_for_device(const std::string& device_name) {
  auto has = [&](const char* what) { return device_name.find(what) != std::string::npos; };
  if (has("H200")) return builtin_profile("h200");
  if (has("H100")) return builtin_profile("h100-sxm");
  if (has("A100")) return builtin_profile("a100-80gb");
  if (has("B200")) return builtin_profile("b200");
  return builtin_profile(kDefaultHardwareProfile);
}

HardwareProfile calibrated_profile(const CalibrationMeasurements& m, const HardwareProfile& base) {
  if (m.copies.empty()) throw Error("calibration: no DRAM copy measured");
  HardwareProfile p = base;
  p.name = "measured-" + slug(m.device_name);
  p.dram_bytes_per_s = 0;
  for (const auto& c : m.copies) p.dram_bytes_per_s = std::max(p.dram_bytes_per_s, copy_bytes_per_s(c));
  std::map<std::string, double> best;
  for (const auto& g : m.gemms) best[g.dtype] = std::max(best[g.dtype], gemm_flops_per_s(g));
  if (!best.count("f32")) throw Error("calibration: no f32 GEMM measured (the cost model's fallback peak)");
  for (const auto& [dtype, flops] : best) p.flops_per_s[dtype] = flops;
  if (m.launch_us > 0) p.kernel_launch_us = m.launch_us;
  if (!m.collectives.empty()) {
    std::map<CollectiveOp, std::vector<CollectiveSample>> by_op;
    for (const auto& c : m.collectives) by_op[c.op].push_back(c);
    std::vector<double> bus, lat;
    for (const auto& [op, samples] : by_op) {
      const CollectiveFit f = fit_collective(samples);
      bus.push_back(f.bus_bytes_per_s);
      lat.push_back(f.step_latency_us);
    }
    p.nvlink_bytes_per_s = median(bus);
    p.nvlink_latency_us = median(lat);
  }
  return p;
}

nlohmann::json calibration_details_json(const CalibrationMeasurements& m, const HardwareProfile& base,
                                        const HardwareProfile& calibrated) {
  using nlohmann::json;
  json copies = json::array(), gemms = json::array(), colls = json::array();
  for (const auto& c : m.copies) copies.push_back({{"bytes", c.bytes}, {"us", c.us}, {"bytes_per_s", copy_bytes_per_s(c)}});
  for (const auto& g : m.gemms)
    gemms.push_back({{"dtype", g.dtype}, {"m", g.m}, {"n", g.n}, {"k", g.k}, {"us", g.us}, {"flops_per_s", gemm_flops_per_s(g)}});
  for (const auto& c : m.collectives)
    colls.push_back({{"op", std::string(to_string(c.op))}, {"bytes", c.bytes}, {"ranks", c.ranks}, {"us", c.us},
                     {"bus_bytes_per_s", collective_bus_bytes_per_s(c)},
                     {"model_us", estimate_collective_algorithms(c.op, c.bytes, c.ranks, c.ranks, calibrated).ring_us}});
  json measured = json::array({"dram_bytes_per_s"});
  for (const auto& g : m.gemms)
    if (std::find(measured.begin(), measured.end(), "flops_per_s." + g.dtype) == measured.end()) measured.push_back("flops_per_s." + g.dtype);
  if (m.launch_us > 0) measured.push_back("kernel_launch_us");
  if (!m.collectives.empty()) {
    measured.push_back("nvlink_bytes_per_s");
    measured.push_back("nvlink_latency_us");
  }
  return {{"format", "schedlab-calibration/1"},
          {"device", m.device_name},
          {"device_count", m.device_count},
          {"base_profile", base.name},
          {"measured_fields", measured},
          {"copies", copies},
          {"gemms", gemms},
          {"launch_us", m.launch_us},
          {"collectives", colls},
          {"datasheet", nlohmann::json::parse(hardware_profile_json(base))},
          {"profile", nlohmann::json::parse(hardware_profile_json(calibrated))}};
}

}  // namespace schedlab::gpu
