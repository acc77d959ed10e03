// Reading and writing hardware profiles (docs/cost-model.md): the profile
// files `--hardware FILE` and the options' "hardware" object take, and what
// `fit-profile` writes.
#include "core/io/profiles.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/graph/builder.h"
#include "core/io/json_input.h"
#include "core/util/error.h"

namespace schedlab {
namespace {

using nlohmann::json;

// Every number of a profile lies in a range whose sums and products stay
// finite: a time or factor at most 1e30 times a graph's counts (flops and
// bytes below 2^63, nodes below 2^31) is below 1e60, and so is any sum of
// them; a rate at least 1 per second keeps a time divided by it finite.
constexpr double kMaxProfileNumber = 1e30;

const json& field(const json& obj, std::string_view key, const std::string& where) {
  auto it = obj.find(std::string(key));
  if (it == obj.end()) throw Error("hardware profile: " + where + ": missing field " + quoted_name(key));
  return *it;
}

double non_negative(const json& obj, std::string_view key, const std::string& where) {
  const json& v = field(obj, key, where);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() > kMaxProfileNumber)
    throw Error("hardware profile: " + member_place(where, key) + ": expected a finite number in 0..1e30");
  return v.get<double>();
}

template <class Known, class Name>
void refuse_unknown(const json& obj, const Known& known, Name name_of, const std::string& where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const auto& k : known) ok = ok || it.key() == name_of(k);
    if (!ok) throw Error("hardware profile: " + where + ": unknown field " + quoted_name(it.key()));
  }
}

void refuse_unknown(const json& obj, std::initializer_list<std::string_view> known, const std::string& where) {
  refuse_unknown(obj, known, [](std::string_view k) { return k; }, where);
}

// A law's fields: one per term (core/cost/time_model.h, kLawTermInfo: its
// name and whether a profile may leave it out; the first laws had only the
// required ones), and kernels_per_node.
constexpr std::string_view kKernelsPerNode = "kernels_per_node";

ClassLaw law_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error("hardware profile: " + where + ": expected an object");
  std::vector<std::pair<LawTerm, double>> given;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == kKernelsPerNode) continue;
    const auto term = law_term_of_field(it.key());
    if (!term) throw Error("hardware profile: " + where + ": unknown field " + quoted_name(it.key()));
    given.emplace_back(*term, non_negative(j, it.key(), where));
  }
  for (const LawTermInfo& t : kLawTermInfo)
    if (t.required) field(j, t.field, where);  // a missing one is named
  return law_from_factors(non_negative(j, kKernelsPerNode, where), given);
}

double positive_number(const json& v, const std::string& where, bool allow_zero) {
  if (!v.is_number()) throw Error("hardware profile: " + where + ": expected a number");
  // A rate (bytes or flops per second) is at least 1; a latency may be 0.
  double d = v.get<double>();
  if (!std::isfinite(d) || d < (allow_zero ? 0.0 : 1.0) || d > kMaxProfileNumber)
    throw Error("hardware profile: " + where + (allow_zero ? ": expected a finite number in 0..1e30" : ": expected a finite number in 1..1e30"));
  return d;
}

void check_complete(const HardwareProfile& p) {
  auto need = [&](double v, const char* field) {
    if (!(v > 0)) throw Error(std::string("hardware profile: missing or zero field \"") + field + "\"");
  };
  need(p.dram_bytes_per_s, "dram_bytes_per_s");
  need(p.nvlink_bytes_per_s, "nvlink_bytes_per_s");
  need(p.network_bytes_per_s, "network_bytes_per_s");
  auto f32 = p.flops_per_s.find("f32");
  if (f32 == p.flops_per_s.end() || !(f32->second > 0))
    throw Error("hardware profile: flops_per_s needs an \"f32\" entry (the fallback for other dtypes)");
  if (p.name.empty()) throw Error("hardware profile: missing field \"name\"");
}

// A group size key of collectives.curves, .peer_wait_us or
// .peer_wait_beside_us (`at` names the object it is in).
std::int64_t group_size_key(const std::string& key, const std::string& at) {
  if (key.empty() || key.size() > 7 || key.find_first_not_of("0123456789") != std::string::npos || std::stoll(key) < 2)
    throw Error("hardware profile: " + at + ": group size " + quoted_name(key) + ": expected an integer from 2 to 9999999");
  return std::stoll(key);
}

// "peer_wait_us" or "peer_wait_beside_us" (`name`): {OP: {GROUP_SIZE: us}}
std::map<CollectiveOp, std::map<std::int64_t, double>> peer_waits_from_json(const json& j, const std::string& name) {
  const std::string where = "collectives." + name;
  if (!j.is_object()) throw Error("hardware profile: " + where + ": expected an object {operation: {group size: us}}");
  std::map<CollectiveOp, std::map<std::int64_t, double>> waits;
  for (auto op = j.begin(); op != j.end(); ++op) {
    const std::string at = where + "." + op.key();
    const auto kind = parse_collective_op(op.key());
    if (!kind) throw Error("hardware profile: " + where + ": unknown operation " + quoted_name(op.key()));
    if (!op->is_object()) throw Error("hardware profile: " + at + ": expected an object {group size: us}");
    for (auto n = op->begin(); n != op->end(); ++n) {
      const std::string here = at + "." + n.key();
      const double us = positive_number(*n, here, true);
      if (us > 1e6) throw Error("hardware profile: " + here + ": expected microseconds from 0 to 1e6");
      waits[*kind][group_size_key(n.key(), at)] = us;
    }
  }
  return waits;
}

// "collectives": {"source": "...", "host_us_per_issue": us, "curves": {OP: {GROUP_SIZE: [[bytes, us], ...]}},
//                 "peer_wait_us": {OP: {GROUP_SIZE: us}} (optional),
//                 "peer_wait_beside_us": {OP: {GROUP_SIZE: us}} (optional)}
CollectiveTimes collective_times_from_json(const json& j) {
  const std::string where = "collectives";
  if (!j.is_object()) throw Error("hardware profile: collectives: expected an object");
  refuse_unknown(j, {"source", "curves", "host_us_per_issue", "peer_wait_us", "peer_wait_beside_us"}, where);
  CollectiveTimes t;
  if (j.contains("host_us_per_issue")) t.host_us_per_issue = non_negative(j, "host_us_per_issue", where);
  if (auto it = j.find("source"); it != j.end()) {
    if (!it->is_string()) throw Error("hardware profile: collectives.source: expected a string");
    t.source = it->get<std::string>();
  }
  const json& curves = field(j, "curves", where);
  if (!curves.is_object()) throw Error("hardware profile: collectives.curves: expected an object {operation: {group size: curve}}");
  for (auto op = curves.begin(); op != curves.end(); ++op) {
    const std::string at = "collectives.curves." + op.key();
    const auto kind = parse_collective_op(op.key());
    if (!kind) throw Error("hardware profile: collectives.curves: unknown operation " + quoted_name(op.key()));
    if (!op->is_object()) throw Error("hardware profile: " + at + ": expected an object {group size: curve}");
    for (auto n = op->begin(); n != op->end(); ++n) {
      const std::string here = at + "." + n.key();
      const std::int64_t group = group_size_key(n.key(), at);
      if (!n->is_array() || n->empty()) throw Error("hardware profile: " + here + ": expected a non-empty array of [bytes, us]");
      auto& curve = t.curves[*kind][group];
      for (std::size_t i = 0; i < n->size(); ++i) {
        const json& pt = (*n)[i];
        const std::string item = here + "[" + std::to_string(i) + "]";
        if (!pt.is_array() || pt.size() != 2) throw Error("hardware profile: " + item + ": expected [bytes, us]");
        const double bytes = positive_number(pt[0], item + "[0]", false);
        const double us = positive_number(pt[1], item + "[1]", false);
        if (!curve.empty() && bytes <= curve.back().first)
          throw Error("hardware profile: " + item + ": sizes must ascend");
        curve.emplace_back(bytes, us);
      }
    }
  }
  if (auto it = j.find("peer_wait_us"); it != j.end()) t.peer_wait_us = peer_waits_from_json(*it, "peer_wait_us");
  if (auto it = j.find("peer_wait_beside_us"); it != j.end())
    t.peer_wait_beside_us = peer_waits_from_json(*it, "peer_wait_beside_us");
  return t;
}

json collective_times_to_json(const CollectiveTimes& t) {
  json curves = json::object();
  for (const auto& [op, by_group] : t.curves)
    for (const auto& [group, curve] : by_group) {
      json& out = curves[std::string(to_string(op))][std::to_string(group)] = json::array();
      for (const auto& [bytes, us] : curve) out.push_back({bytes, us});
    }
  json out = {{"source", t.source}, {"host_us_per_issue", t.host_us_per_issue}, {"curves", std::move(curves)}};
  // A profile without a term is written as before.
  auto write_waits = [&](const std::map<CollectiveOp, std::map<std::int64_t, double>>& by_op, const char* name) {
    if (by_op.empty()) return;
    json& waits = out[name] = json::object();
    for (const auto& [op, by_group] : by_op)
      for (const auto& [group, us] : by_group) waits[std::string(to_string(op))][std::to_string(group)] = us;
  };
  write_waits(t.peer_wait_us, "peer_wait_us");
  write_waits(t.peer_wait_beside_us, "peer_wait_beside_us");
  return out;
}

// "contention": {"classes": {CLASS: {"comm_slowdown": x, "compute_slowdown": y, "start_fraction": f,
//                                     "comm_delay_us": d}}, "start_latency_us": l}
// (comm_delay_us and start_latency_us optional: 0, the law before them)
ContentionLaw contention_from_json(const json& j) {
  if (!j.is_object()) throw Error("hardware profile: contention: expected an object");
  const std::string where = "contention";  // named: a temporary would dangle behind the reference field() returns
  refuse_unknown(j, {"classes", "start_latency_us"}, where);
  const json& classes = field(j, "classes", where);
  if (!classes.is_object()) throw Error("hardware profile: contention.classes: expected an object {kernel class: share}");
  ContentionLaw law;
  for (auto it = classes.begin(); it != classes.end(); ++it) {
    const std::string at = "contention.classes." + it.key();
    const auto c = parse_kernel_class(it.key());
    if (!c || !class_needs_law(*c)) throw Error("hardware profile: contention.classes: unknown kernel class " + quoted_name(it.key()));
    if (!it->is_object()) throw Error("hardware profile: " + at + ": expected an object");
    refuse_unknown(*it, {"comm_slowdown", "compute_slowdown", "start_fraction", "comm_delay_us"}, at);
    ContentionShare share;
    share.comm_slowdown = positive_number(field(*it, "comm_slowdown", at), at + ".comm_slowdown", false);
    share.compute_slowdown = positive_number(field(*it, "compute_slowdown", at), at + ".compute_slowdown", false);
    if (share.comm_slowdown < 1 || share.compute_slowdown < 1 || share.comm_slowdown > 1000 || share.compute_slowdown > 1000)
      throw Error("hardware profile: " + at + ": slowdowns are factors from 1 to 1000");
    if (it->contains("start_fraction")) {
      share.start_fraction = non_negative(*it, "start_fraction", at);
      if (share.start_fraction > 1) throw Error("hardware profile: " + at + ".start_fraction: expected a fraction from 0 to 1");
    }
    if (it->contains("comm_delay_us")) {
      share.comm_delay_us = non_negative(*it, "comm_delay_us", at);
      if (share.comm_delay_us > 1e6) throw Error("hardware profile: " + at + ".comm_delay_us: expected microseconds from 0 to 1e6");
    }
    law.classes[*c] = share;
  }
  if (j.contains("start_latency_us")) {
    law.start_latency_us = non_negative(j, "start_latency_us", where);
    if (law.start_latency_us > 1e6) throw Error("hardware profile: contention.start_latency_us: expected microseconds from 0 to 1e6");
  }
  return law;
}

// The fields a profile written before them lacks are written only when set,
// so that such a profile reads and writes back as it was.
json contention_to_json(const ContentionLaw& law) {
  json classes = json::object();
  for (const auto& [c, share] : law.classes) {
    json& out = classes[std::string(to_string(c))] = {
        {"comm_slowdown", share.comm_slowdown}, {"compute_slowdown", share.compute_slowdown}, {"start_fraction", share.start_fraction}};
    if (share.comm_delay_us != 0) out["comm_delay_us"] = share.comm_delay_us;
  }
  json out = {{"classes", std::move(classes)}};
  if (law.start_latency_us != 0) out["start_latency_us"] = law.start_latency_us;
  return out;
}

}  // namespace

// A sustained tensor-core rate a profile may carry: 1 GFLOP/s to 1 EFLOP/s
// (a matmul's FLOPs over it then stay a finite time), or 0 for none where
// `none_allowed`.
bool valid_sustained_rate(double flops_per_s, bool none_allowed) {
  return std::isfinite(flops_per_s) && ((none_allowed && flops_per_s == 0) || (flops_per_s >= 1e9 && flops_per_s <= 1e18));
}

TimeModel time_model_from_json(const json& j, std::string_view where_view) {
  const std::string where(where_view);
  if (!j.is_object()) throw Error("hardware profile: " + where + ": expected an object");
  std::vector<std::string_view> known = {"laws", "launch_gap_us", "cudagraph_gap_us", "host_probe_us", "host_call_epilogue_us", "samples",
                                         "sm_count", "l2_bytes", "sustained_tensor_flops_per_s"};
  for (const HostTermInfo& t : kHostTermInfo) known.push_back(t.field);
  refuse_unknown(j, known, [](std::string_view k) { return k; }, where);
  TimeModel m;
  const json& laws = field(j, "laws", where);
  if (!laws.is_object()) throw Error("hardware profile: " + where + ".laws: expected an object {class: law}");
  for (auto it = laws.begin(); it != laws.end(); ++it) {
    auto c = parse_kernel_class(it.key());
    if (!c || !class_needs_law(*c)) throw Error("hardware profile: " + where + ".laws: unknown kernel class " + quoted_name(it.key()));
    m.laws[*c] = law_from_json(it.value(), where + ".laws." + it.key());
  }
  for (KernelClass c : kKernelClassesWithLaws)
    if (class_needs_law(c) && !m.laws.count(c))
      throw Error("hardware profile: " + where + ".laws: missing field " + quoted_name(to_string(c)));
  m.launch_gap_us = non_negative(j, "launch_gap_us", where);
  m.cudagraph_gap_us = non_negative(j, "cudagraph_gap_us", where);
  // The host terms (core/cost/host_terms.def); one a profile written before
  // it leaves out reads as 0 or as host_us_per_extern (what any extern call
  // costs), as its row says: those after every other.
  for (const WhenAbsent pass : {WhenAbsent::Required, WhenAbsent::Zero, WhenAbsent::Extern})
    for (const HostTermInfo& t : kHostTermInfo) {
      if (t.when_absent != pass) continue;
      if (t.when_absent == WhenAbsent::Required || j.contains(std::string(t.field))) m.*t.member = non_negative(j, t.field, where);
      else m.*t.member = t.when_absent == WhenAbsent::Extern ? m.host_us_per_extern : 0.0;
    }
  // Profiles written before the call's epilogue was fitted: all of the
  // call's own cost before its first launch.
  if (j.contains("host_call_epilogue_us")) {
    m.host_call_epilogue_us = non_negative(j, "host_call_epilogue_us", where);
    if (m.host_call_epilogue_us > m.host_call_us)
      throw Error("hardware profile: " + where + ".host_call_epilogue_us: " + std::to_string(m.host_call_epilogue_us) +
                  " is more than host_call_us (" + std::to_string(m.host_call_us) + "), the call's cost it is a part of");
  }
  // Profiles written before the host's speed was recorded: not known.
  if (auto it = j.find("host_probe_us"); it != j.end()) {
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
      throw Error("hardware profile: " + where + ".host_probe_us: expected a finite number >= 0");
    m.host_probe_us = it->get<double>();  // within 0..1e30 when valid
  }
  if (m.host_probe_us != 0 && !valid_host_probe_us(m.host_probe_us))
    throw Error("hardware profile: " + where + ".host_probe_us: expected 0 (not known) or µs between 0.001 and 1000000");
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
  // Profiles written before the sustained rate: none (the laws alone).
  if (auto it = j.find("sustained_tensor_flops_per_s"); it != j.end()) {
    if (!it->is_number() || !valid_sustained_rate(it->get<double>(), true))
      throw Error("hardware profile: " + where + ".sustained_tensor_flops_per_s: expected 0 (none) or FLOP/s between 1e9 and 1e18");
    m.sustained_tensor_flops_per_s = it->get<double>();
  }
  return m;
}

json time_model_to_json(const TimeModel& m) {
  json laws = json::object();
  for (const auto& [c, law] : m.laws) {
    json& out = laws[std::string(to_string(c))] = json::object();
    for (const LawTermInfo& t : kLawTermInfo)
      if (law.routes_conv_families || !is_conv_family_term(t.term)) out[std::string(t.field)] = law[t.term];
    out[std::string(kKernelsPerNode)] = law.kernels_per_node;
  }
  json out = {{"laws", std::move(laws)}, {"launch_gap_us", m.launch_gap_us}, {"cudagraph_gap_us", m.cudagraph_gap_us},
              {"host_probe_us", m.host_probe_us}, {"host_call_epilogue_us", m.host_call_epilogue_us}, {"samples", m.samples}, {"sm_count", m.sm_count}, {"l2_bytes", m.l2_bytes}};
  for (const HostTermInfo& t : kHostTermInfo) out[std::string(t.field)] = m.*t.member;
  if (m.sustained_tensor_flops_per_s > 0) out["sustained_tensor_flops_per_s"] = m.sustained_tensor_flops_per_s;
  return out;
}

HardwareProfile hardware_profile_from_json(const json& j) {
  if (!j.is_object()) throw Error("hardware profile: expected a JSON object");
  HardwareProfile p;
  if (auto it = j.find("base"); it != j.end()) {
    if (!it->is_string()) throw Error("hardware profile: base: expected the name of a built-in profile");
    try {
      p = builtin_profile(it->get<std::string>());
    } catch (const OptionError& e) {
      throw Error(std::string("hardware profile: base: ") + e.what());
    }
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (key == "base") continue;
    if (key == "name") {
      if (!v.is_string() || v.get<std::string>().empty() || quoted_name(v.get<std::string>()) != "\"" + v.get<std::string>() + "\"")
        throw Error("hardware profile: name: expected a non-empty string of at most 120 printable characters");  // reports print it
      p.name = v.get<std::string>();
    } else if (key == "dram_bytes_per_s") p.dram_bytes_per_s = positive_number(v, key, false);
    else if (key == "nvlink_bytes_per_s") p.nvlink_bytes_per_s = positive_number(v, key, false);
    else if (key == "network_bytes_per_s") p.network_bytes_per_s = positive_number(v, key, false);
    else if (key == "nvlink_latency_us") p.nvlink_latency_us = positive_number(v, key, true);
    else if (key == "network_latency_us") p.network_latency_us = positive_number(v, key, true);
    else if (key == "kernel_launch_us") p.kernel_launch_us = positive_number(v, key, true);
    else if (key == "ranks_per_node") {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 1'000'000)
        throw Error("hardware profile: ranks_per_node: expected an integer >= 1");
      p.ranks_per_node = static_cast<int>(v.get<std::int64_t>());
    } else if (key == "time_model") {
      p.time_model = time_model_from_json(v, "time_model");
    } else if (key == "collectives") {
      p.collective_times = collective_times_from_json(v);
    } else if (key == "contention") {
      p.contention = contention_from_json(v);
    } else if (key == "flops_per_s") {
      if (!v.is_object()) throw Error("hardware profile: flops_per_s: expected an object {dtype: FLOP/s}");
      for (auto f = v.begin(); f != v.end(); ++f) p.flops_per_s[f.key()] = positive_number(f.value(), member_place("flops_per_s", f.key()), false);
    } else {
      throw Error("hardware profile: unknown field " + quoted_name(key));
    }
  }
  check_complete(p);
  return p;
}

namespace {

// A profile file's text (or its communication sections') under the reader
// policy: nesting bounded before nlohmann's recursive parser sees it.
json parse_profile_text(std::string_view text) { return parse_json_text(text, "hardware profile"); }

}  // namespace

HardwareProfile parse_hardware_profile(std::string_view text) { return hardware_profile_from_json(parse_profile_text(text)); }

HardwareProfile load_hardware_profile(const std::string& v) {
  // A built-in's name (an unknown name without '/' or ".json" lists them).
  const std::vector<std::string> names = builtin_profile_names();
  if (std::find(names.begin(), names.end(), v) != names.end() || (v.find('/') == std::string::npos && v.find(".json") == std::string::npos))
    return builtin_profile(v);
  const std::string text = read_json_input(v, kMaxProfileBytes, "a hardware profile's limit");  // its errors name the file
  try {
    return parse_hardware_profile(text);
  } catch (const OptionError&) {
    throw;
  } catch (const Error& e) {
    throw Error(v + ": " + e.what());
  }
}

void apply_comm_sections(std::string_view text, const std::string& where, HardwareProfile& p) {
  try {
    const json j = parse_profile_text(text);
    if (!j.is_object()) throw Error("hardware profile: expected a JSON object {\"collectives\": ..., \"contention\": ...}");
    refuse_unknown(j, {"collectives", "contention"}, "top level");
    if (auto it = j.find("collectives"); it != j.end()) p.collective_times = collective_times_from_json(*it);
    if (auto it = j.find("contention"); it != j.end()) p.contention = contention_from_json(*it);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
}

void apply_sustained_rate(std::string_view text, const std::string& where, HardwareProfile& p) {
  try {
    const json j = parse_profile_text(text);
    if (!j.is_object()) throw Error("expected a JSON object {\"sustained_tensor_flops_per_s\": ...}");
    const auto it = j.find("sustained_tensor_flops_per_s");
    if (it == j.end()) throw Error("missing field \"sustained_tensor_flops_per_s\"");
    if (!it->is_number() || !valid_sustained_rate(it->get<double>(), false))
      throw Error("sustained_tensor_flops_per_s: expected FLOP/s between 1e9 and 1e18");
    if (!p.time_model) throw Error("the profile has no time model to carry the sustained rate");
    p.time_model->sustained_tensor_flops_per_s = it->get<double>();
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
}

json hardware_profile_to_json(const HardwareProfile& hw) {
  json out = {{"name", hw.name},
          {"dram_bytes_per_s", hw.dram_bytes_per_s},
          {"flops_per_s", hw.flops_per_s},
          {"nvlink_bytes_per_s", hw.nvlink_bytes_per_s},
          {"network_bytes_per_s", hw.network_bytes_per_s},
          {"nvlink_latency_us", hw.nvlink_latency_us},
          {"network_latency_us", hw.network_latency_us},
          {"ranks_per_node", hw.ranks_per_node},
          {"kernel_launch_us", hw.kernel_launch_us}};
  if (hw.time_model) out["time_model"] = time_model_to_json(*hw.time_model);
  if (hw.collective_times) out["collectives"] = collective_times_to_json(*hw.collective_times);
  if (hw.contention) out["contention"] = contention_to_json(*hw.contention);
  return out;
}

}  // namespace schedlab
