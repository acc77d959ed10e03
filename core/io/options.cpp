#include "core/io/options.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/cost/cost_model.h"
#include "core/io/graph_reader.h"
#include "core/io/profiles.h"
#include "core/util/error.h"

namespace schedlab {
namespace {

template <class E>
JsonDoc parse_or_throw(std::string_view text, const std::string& what) {
  try {
    return JsonDoc::parse(text, kMaxJsonDepth);
  } catch (const Error& e) {
    throw E(what + ": not valid JSON: " + e.what());
  }
}

std::string key_text(std::string_view k) { return std::string(k); }

// The options' "hardware" object as the one profile reader (core/io/profiles)
// takes it, a nlohmann value, typed as nlohmann's parser types numbers
// (non-negative integers unsigned), so that a profile reads the same inline
// as from a file.
nlohmann::json to_nlohmann(const JsonValue& v) {
  switch (v.type()) {
    case JsonValue::Type::Null: return nullptr;
    case JsonValue::Type::Bool: return v.as_bool();
    case JsonValue::Type::Int:
      if (v.as_int() >= 0) return static_cast<std::uint64_t>(v.as_int());
      return v.as_int();
    case JsonValue::Type::BigInt:  // beyond int64: nlohmann keeps what fits uint64 unsigned
      if (v.as_double() > 0 && v.as_double() < 18446744073709551616.0) return static_cast<std::uint64_t>(v.as_double());
      return v.as_double();
    case JsonValue::Type::Double: return v.as_double();
    case JsonValue::Type::String: return std::string(v.as_string());
    case JsonValue::Type::Array: {
      nlohmann::json out = nlohmann::json::array();
      for (std::size_t i = 0; i < v.size(); ++i) out.push_back(to_nlohmann(v[i]));
      return out;
    }
    case JsonValue::Type::Object: {
      nlohmann::json out = nlohmann::json::object();
      for (std::size_t i = 0; i < v.size(); ++i) out[std::string(v.key_at(i))] = to_nlohmann(v[i]);
      return out;
    }
  }
  return nullptr;
}

HardwareProfile inline_hardware_profile(const JsonValue& hardware) {
  try {
    return hardware_profile_from_json(to_nlohmann(hardware));
  } catch (const Error& e) {
    throw OptionError(std::string("options.hardware: ") + e.what());
  }
}

template <class T>
T knob_value(const JsonValue& v, const std::string& where) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_bool()) throw OptionError(where + ": expected true or false");
    return v.as_bool();
  } else if constexpr (std::is_integral_v<T>) {
    if (v.type() == JsonValue::Type::Null) return -1;  // None: no limit
    constexpr auto kMax = std::numeric_limits<T>::max();
    if (v.type() != JsonValue::Type::Int || v.as_int() < 0 || v.as_int() > kMax)
      throw OptionError(where + ": expected an integer in 0.." + std::to_string(kMax) + " or null");
    return static_cast<T>(v.as_int());
  } else {
    if (!v.is_number()) throw OptionError(where + ": expected a number");
    const double d = v.as_double();
    if (!std::isfinite(d) || d < 0 || d > 1e9) throw OptionError(where + ": expected a finite number in 0..1e9");
    return d;
  }
}

void set_knob(CommKnobs& k, std::string_view name, const JsonValue& v, const std::string& where) {
  bool found = false;
  for_each_comm_knob(k, [&](std::string_view knob, auto& member) {
    if (knob != name) return;
    found = true;
    member = knob_value<std::decay_t<decltype(member)>>(v, where);
  });
  if (!found) throw OptionError(where + ": unknown knob \"" + std::string(name) + "\"");
}

std::vector<std::string> list_option(const JsonValue& v, std::string_view key) {
  const std::string where = "options." + key_text(key);
  if (v.is_string()) {
    if (v.as_string().empty()) return {};
    return split_list(v.as_string(), where);
  }
  if (!v.is_array()) throw OptionError(where + ": expected a list of names");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) throw OptionError(where + ": expected a list of names");
    out.emplace_back(v[i].as_string());
  }
  return out;
}

}  // namespace

CommKnobs parse_comm_knobs(const JsonValue& j, std::string_view where) {
  if (!j.is_object()) throw OptionError(std::string(where) + ": expected an object of knob names");
  CommKnobs k;
  for (std::size_t i = 0; i < j.size(); ++i) set_knob(k, j.key_at(i), j[i], std::string(where) + "." + key_text(j.key_at(i)));
  return k;
}

CommKnobs parse_comm_knobs_json(std::string_view text, std::string_view where) {
  JsonDoc doc = parse_or_throw<OptionError>(text, std::string(where));
  return parse_comm_knobs(doc.root(), where);
}

void set_comm_knob(CommKnobs& knobs, std::string_view name, std::string_view value_json, std::string_view where) {
  const std::string place = std::string(where) + " " + std::string(name);
  JsonDoc doc = [&] {
    try {
      return JsonDoc::parse(value_json, 1);
    } catch (const Error&) {
      throw OptionError(place + ": value is not a number, true, false or null");
    }
  }();
  set_knob(knobs, name, doc.root(), place);
}

PlanOptions parse_plan_options(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return PlanOptions{};
  JsonDoc doc = parse_or_throw<OptionError>(text, "options");
  return parse_plan_options(doc.root());
}

PlanOptions parse_plan_options(const JsonValue& j) {
  PlanOptions opts;
  if (!j.is_object()) throw OptionError("options: expected a JSON object");
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string_view key = j.key_at(i);
    const JsonValue v = j[i];
    if (key == "memory_methods") opts.memory_methods = list_option(v, key);
    else if (key == "skip_invalid_memory_methods") {
      if (!v.is_bool()) throw OptionError("options.skip_invalid_memory_methods: expected true or false");
      opts.on_invalid_memory_order = v.as_bool() ? InvalidOrderPolicy::Skip : InvalidOrderPolicy::Raise;
    }
    else if (key == "comm_passes") opts.comm_passes = list_option(v, key);
    else if (key == "runtime_source") {
      if (!v.is_string() || (v.as_string() != "calibrated" && v.as_string() != "runtime_us"))
        throw OptionError("options.runtime_source: expected \"calibrated\" or \"runtime_us\"");
      opts.runtime_source = std::string(v.as_string());
    }
    else if (key == "comm") opts.comm = parse_comm_knobs(v, "options.comm");
    else if (key == "compare") {
      if (!v.is_bool()) throw OptionError("options.compare: expected true or false");
      opts.compare = v.as_bool();
    }
    else if (key == "fuse") {
      if (!v.is_bool()) throw OptionError("options.fuse: expected true or false");
      opts.fuse = v.as_bool();
    } else if (key == "device_memory") {
      if (v.is_string()) opts.device_memory_bytes = byte_size_arg("options.device_memory", v.as_string());
      else if (v.type() == JsonValue::Type::Int && v.as_int() > 0) opts.device_memory_bytes = v.as_int();
      else throw OptionError("options.device_memory: expected a positive integer of bytes or a size such as \"80GiB\"");
    } else if (key == "hardware") {
      if (v.is_string()) opts.hardware = builtin_profile(v.as_string());
      else opts.hardware = inline_hardware_profile(v);
    } else {
      throw OptionError("options: unknown option \"" + key_text(key) + "\"");
    }
  }
  return opts;
}

std::int64_t int_arg(std::string_view flag, std::string_view v, std::int64_t lo, std::int64_t hi) {
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || x < lo || x > hi)
    throw OptionError(std::string(flag) + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got \"" +
                     std::string(v) + "\"");
  return x;
}

double number_arg(std::string_view flag, std::string_view v, double lo, double hi) {
  // strtod, not from_chars: the WASM build's libc++ lacks floating from_chars.
  const std::string text(v);
  char* end = nullptr;
  errno = 0;
  const double x = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  const bool plain = !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos;
  if (!plain || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(x) || x < lo || x > hi) {
    char range[96];
    std::snprintf(range, sizeof range, "a number in [%g, %g]", lo, hi);
    throw OptionError(std::string(flag) + ": expected " + range + ", got \"" + text + "\"");
  }
  return x;
}

}  // namespace schedlab

namespace schedlab {

std::int64_t byte_size_arg(std::string_view where, std::string_view v) {
  const auto refuse = [&] {
    return OptionError(std::string(where) + ": expected a size such as 80GiB, 80GB or 85899345920, got \"" + std::string(v) + "\"");
  };
  std::size_t digits = 0;
  while (digits < v.size() && ((v[digits] >= '0' && v[digits] <= '9') || v[digits] == '.')) ++digits;
  if (digits == 0) throw refuse();
  std::string_view unit = v.substr(digits);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  struct Unit {
    std::string_view name;
    double bytes;
  };
  static constexpr Unit kUnits[] = {{"", 1},         {"B", 1},         {"KiB", 1024.0},  {"MiB", 1048576.0}, {"GiB", 1073741824.0},
                                    {"TiB", 1099511627776.0}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}};
  const Unit* u = nullptr;
  for (const auto& k : kUnits)
    if (unit == k.name) u = &k;
  if (!u) throw refuse();
  const double x = number_arg(where, v.substr(0, digits), 0, 1e18) * u->bytes;
  if (!(x >= 1) || x >= 4.6e18) throw refuse();
  return static_cast<std::int64_t>(x);
}

}  // namespace schedlab
