// Reading and writing the calibrated time model of a hardware profile.
#include "core/cost/time_model.h"

#include <cmath>
#include <string>

#include "core/util/error.h"

namespace schedlab {
namespace {

using nlohmann::json;

const json& field(const json& obj, std::string_view key, const std::string& where) {
  auto it = obj.find(std::string(key));
  if (it == obj.end()) throw Error("hardware profile: " + where + ": missing field \"" + std::string(key) + "\"");
  return *it;
}

double non_negative(const json& obj, std::string_view key, const std::string& where) {
  const json& v = field(obj, key, where);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    throw Error("hardware profile: " + where + "." + std::string(key) + ": expected a finite number >= 0");
  return v.get<double>();
}

void refuse_unknown(const json& obj, std::initializer_list<std::string_view> known, const std::string& where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (std::string_view k : known) ok = ok || it.key() == k;
    if (!ok) throw Error("hardware profile: " + where + ": unknown field \"" + it.key() + "\"");
  }
}

ClassLaw law_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error("hardware profile: " + where + ": expected an object");
  refuse_unknown(j, {"fixed_us", "compute_factor", "memory_factor", "kernels_per_node", "wave_factor", "narrow_factor", "fp32_fixed_us", "spill_factor"}, where);
  ClassLaw law;
  law.fixed_us = non_negative(j, "fixed_us", where);
  law.compute_factor = non_negative(j, "compute_factor", where);
  law.memory_factor = non_negative(j, "memory_factor", where);
  law.kernels_per_node = non_negative(j, "kernels_per_node", where);
  // The tile terms came later: a profile without them has none.
  if (j.contains("wave_factor")) law.wave_factor = non_negative(j, "wave_factor", where);
  if (j.contains("narrow_factor")) law.narrow_factor = non_negative(j, "narrow_factor", where);
  if (j.contains("fp32_fixed_us")) law.fp32_fixed_us = non_negative(j, "fp32_fixed_us", where);
  if (j.contains("spill_factor")) law.spill_factor = non_negative(j, "spill_factor", where);
  return law;
}

}  // namespace

bool class_needs_law(KernelClass c) { return c != KernelClass::Collective && c != KernelClass::None; }

TimeModel time_model_from_json(const json& j, std::string_view where_view) {
  const std::string where(where_view);
  if (!j.is_object()) throw Error("hardware profile: " + where + ": expected an object");
  refuse_unknown(j, {"laws", "launch_gap_us", "cudagraph_gap_us", "host_us_per_kernel", "host_us_per_extern", "host_call_us", "samples", "sm_count", "l2_bytes"}, where);
  TimeModel m;
  const json& laws = field(j, "laws", where);
  if (!laws.is_object()) throw Error("hardware profile: " + where + ".laws: expected an object {class: law}");
  for (auto it = laws.begin(); it != laws.end(); ++it) {
    auto c = parse_kernel_class(it.key());
    if (!c || !class_needs_law(*c)) throw Error("hardware profile: " + where + ".laws: unknown kernel class \"" + it.key() + "\"");
    m.laws[*c] = law_from_json(it.value(), where + ".laws." + it.key());
  }
  for (KernelClass c : kKernelClassesWithLaws)
    if (class_needs_law(c) && !m.laws.count(c))
      throw Error("hardware profile: " + where + ".laws: missing field \"" + std::string(to_string(c)) + "\"");
  m.launch_gap_us = non_negative(j, "launch_gap_us", where);
  m.cudagraph_gap_us = non_negative(j, "cudagraph_gap_us", where);
  m.host_us_per_kernel = non_negative(j, "host_us_per_kernel", where);
  m.host_us_per_extern = non_negative(j, "host_us_per_extern", where);
  m.host_call_us = non_negative(j, "host_call_us", where);
  if (auto it = j.find("samples"); it != j.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0) throw Error("hardware profile: " + where + ".samples: expected an integer >= 0");
    m.samples = static_cast<int>(it->get<std::int64_t>());
  }
  if (auto it = j.find("sm_count"); it != j.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > 1'000'000)
      throw Error("hardware profile: " + where + ".sm_count: expected an integer between 0 and 1000000");
    m.sm_count = static_cast<int>(it->get<std::int64_t>());
  }
  if (auto it = j.find("l2_bytes"); it != j.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0) throw Error("hardware profile: " + where + ".l2_bytes: expected an integer >= 0");
    m.l2_bytes = it->get<std::int64_t>();
  }
  return m;
}

json time_model_to_json(const TimeModel& m) {
  json laws = json::object();
  for (const auto& [c, law] : m.laws)
    laws[std::string(to_string(c))] = {{"fixed_us", law.fixed_us},
                                       {"compute_factor", law.compute_factor},
                                       {"memory_factor", law.memory_factor},
                                       {"kernels_per_node", law.kernels_per_node},
                                       {"wave_factor", law.wave_factor},
                                       {"narrow_factor", law.narrow_factor},
                                       {"fp32_fixed_us", law.fp32_fixed_us},
                                       {"spill_factor", law.spill_factor}};
  return {{"laws", std::move(laws)},          {"launch_gap_us", m.launch_gap_us}, {"cudagraph_gap_us", m.cudagraph_gap_us},
          {"host_us_per_kernel", m.host_us_per_kernel}, {"host_us_per_extern", m.host_us_per_extern}, {"host_call_us", m.host_call_us}, {"samples", m.samples},
          {"sm_count", m.sm_count}, {"l2_bytes", m.l2_bytes}};
}

}  // namespace schedlab
