#include "native-cuda/host/launch.h"

#include <algorithm>
#include <limits>

#include "core/util/error.h"

namespace schedlab::gpu {
namespace {

int int_var(const std::function<const char*(const char*)>& get, const char* name, int min, int max) {
  const char* v = get(name);
  if (v == nullptr || *v == '\0') throw OptionError(std::string(name) + " is not set (a multi-process run needs it)");
  const std::string s = v;
  try {
    std::size_t used = 0;
    const long x = std::stol(s, &used);
    if (used == s.size() && x >= min && x <= max) return static_cast<int>(x);
  } catch (const std::exception&) {
  }
  throw OptionError(std::string(name) + "=\"" + s + "\": expected an integer in [" + std::to_string(min) + ", " +
                   std::to_string(max) + "]");
}

}  // namespace

std::optional<LaunchEnv> launch_env_from(const std::function<const char*(const char*)>& get, bool need_master) {
  const char* world = get("WORLD_SIZE");
  if (world == nullptr || *world == '\0') {
    if (need_master) return std::nullopt;
    throw OptionError("--nccl-id-file: WORLD_SIZE and RANK must be set");
  }
  LaunchEnv env;
  env.world_size = int_var(get, "WORLD_SIZE", 1, 1 << 20);
  env.rank = int_var(get, "RANK", 0, env.world_size - 1);
  const char* local = get("LOCAL_RANK");
  env.local_rank = (local && *local) ? int_var(get, "LOCAL_RANK", 0, 1 << 16) : env.rank;
  if (need_master && env.world_size > 1) {
    const char* addr = get("MASTER_ADDR");
    if (addr == nullptr || *addr == '\0') throw OptionError("MASTER_ADDR is not set (a multi-process run needs it)");
    env.master_addr = addr;
    env.master_port = int_var(get, "MASTER_PORT", 1, 65534);
    const char* boot = get("SCHEDLAB_BOOTSTRAP_PORT");
    env.bootstrap_port = (boot && *boot) ? int_var(get, "SCHEDLAB_BOOTSTRAP_PORT", 1, 65535) : env.master_port + 1;
  }
  return env;
}

std::string encode_unique_id(const std::vector<std::uint8_t>& id) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(id.size() * 2);
  for (std::uint8_t b : id) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::vector<std::uint8_t> decode_unique_id(const std::string& text, std::size_t bytes) {
  std::string hex = text;
  while (!hex.empty() && (hex.back() == '\n' || hex.back() == '\r' || hex.back() == ' ')) hex.pop_back();
  if (hex.size() != bytes * 2)
    throw Error("NCCL id file: expected " + std::to_string(bytes * 2) + " hex digits, got " + std::to_string(hex.size()));
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::vector<std::uint8_t> out(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throw Error("NCCL id file: not hex at character " + std::to_string(2 * i + (hi < 0 ? 0 : 1)));
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return out;
}

std::string rank_report_path(const std::string& merged_path, int rank) {
  const std::string suffix = ".json";
  const bool has_suffix = merged_path.size() > suffix.size() &&
                          merged_path.compare(merged_path.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string stem = has_suffix ? merged_path.substr(0, merged_path.size() - suffix.size()) : merged_path;
  return stem + ".rank" + std::to_string(rank) + ".json";
}

nlohmann::json merge_rank_reports(const std::vector<nlohmann::json>& reports) {
  using nlohmann::json;
  if (reports.empty()) throw Error("merge: no rank reports");
  json merged = reports[0];
  const auto& nodes0 = reports[0].at("nodes");
  json ranks = json::array();
  double wall_max = 0;
  bool peaks_agree = true;
  for (std::size_t r = 0; r < reports.size(); ++r) {
    const json& rep = reports[r];
    if (rep.at("graph") != reports[0].at("graph") || rep.at("nodes").size() != nodes0.size())
      throw Error("merge: rank " + std::to_string(r) + " ran another graph (" + rep.at("graph").get<std::string>() + ")");
    const double wall = rep.at("totals").at("measured_wall_us").get<double>();
    wall_max = std::max(wall_max, wall);
    peaks_agree = peaks_agree && rep.at("memory").at("peaks_agree").get<bool>();
    ranks.push_back({{"rank", r},
                     {"device", rep.value("device", "")},
                     {"measured_wall_us", wall},
                     {"measured_us", rep.at("totals").at("measured_us")},
                     {"measured_live_peak_bytes", rep.at("memory").at("measured_live_peak_bytes")},
                     {"pool_used_high_bytes", rep.at("memory").at("pool_used_high_bytes")},
                     {"peaks_agree", rep.at("memory").at("peaks_agree")}});
  }
  for (std::size_t i = 0; i < nodes0.size(); ++i) {
    json by_rank = json::array();
    double max_us = -1;
    for (std::size_t r = 0; r < reports.size(); ++r) {
      const json& row = reports[r].at("nodes")[i];
      if (row.at("name") != nodes0[i].at("name"))
        throw Error("merge: rank " + std::to_string(r) + " step " + std::to_string(i) + " is " +
                    row.at("name").get<std::string>() + ", rank 0 has " + nodes0[i].at("name").get<std::string>());
      by_rank.push_back(row.at("measured_us"));
      if (row.at("measured_us").is_number()) max_us = std::max(max_us, row.at("measured_us").get<double>());
    }
    merged["nodes"][i]["measured_us_by_rank"] = by_rank;
    merged["nodes"][i]["measured_us_max"] = max_us < 0 ? json(nullptr) : json(max_us);
  }
  merged["process_per_gpu"] = true;
  merged["world_size"] = reports.size();
  merged["ranks"] = ranks;
  merged["totals"]["measured_wall_us_max"] = wall_max;
  merged["memory"]["peaks_agree_on_every_rank"] = peaks_agree;
  return merged;
}

}  // namespace schedlab::gpu
