// schedmeasured/1 reader.
#include "core/io/measured_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/cost/time_model.h"
#include "core/graph/builder.h"
#include "core/io/folder_walk.h"
#include "core/io/graph_reader.h"
#include "core/io/json_input.h"
#include "core/util/error.h"

namespace schedlab {
namespace {

using nlohmann::json;

struct Reader {
  std::string where;

  [[noreturn]] void fail(const std::string& place, const std::string& what) const { throw Error(where + ": " + place + ": " + what); }

  const json& need(const json& obj, const char* key, const std::string& place) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(place.empty() ? key : place + "." + key, "missing field");
    return *it;
  }
  std::string text(const json& obj, const char* key, const std::string& place, bool nullable = false) const {
    const json& v = need(obj, key, place);
    if (nullable && v.is_null()) return {};
    if (!v.is_string()) fail(place.empty() ? key : place + "." + key, "expected a string");
    return v.get<std::string>();
  }
  // A time in µs; a sum of up to 2^28 of them stays below 1e21, finite.
  double number(const json& v, const std::string& place) const {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() > kMaxMeasuredUs)
      fail(place, "expected a finite number of µs in 0..1e12");
    return v.get<double>();
  }
  // Bytes or a count; a sum of up to 2^9 of them fits 63 bits.
  std::int64_t bytes(const json& v, const std::string& place) const {
    bool ok = false;
    if (v.is_number_unsigned()) ok = v.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMaxMeasuredCount);
    else if (v.is_number_integer()) ok = v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= kMaxMeasuredCount;
    if (!ok) fail(place, "expected an integer in 0..2^53");
    return v.get<std::int64_t>();
  }
};

// memory.allocator_at_start: [{"pool": "small"|"large", "size": bytes,
// "blocks": [[bytes, 1 allocated | 0 free], ...]}, ...]. The segments must
// add up to reserved_before_bytes and their allocated blocks to
// allocated_before_bytes: both were read from the same cache at the same
// moment.
AllocatorState read_allocator_state(const Reader& r, const json& v, const MeasuredGraph& m) {
  const std::string where = "memory.allocator_at_start";
  if (!v.is_array()) r.fail(where, "expected an array of segments");
  AllocatorState state;
  std::int64_t reserved = 0, allocated = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string place = where + "[" + std::to_string(i) + "]";
    const json& s = v[i];
    if (!s.is_object()) r.fail(place, "expected an object");
    CachedSegment seg;
    const std::string pool = r.text(s, "pool", place);
    if (pool != "small" && pool != "large") r.fail(place + ".pool", "expected \"small\" or \"large\"");
    seg.small = pool == "small";
    seg.bytes = r.bytes(r.need(s, "size", place), place + ".size");
    if (seg.bytes > std::numeric_limits<std::int64_t>::max() - reserved) r.fail(place + ".size", "the segments' total overflows 63 bits");
    const json& blocks = r.need(s, "blocks", place);
    if (!blocks.is_array() || blocks.empty()) r.fail(place + ".blocks", "expected a non-empty array");
    std::int64_t sum = 0;
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      const std::string bplace = place + ".blocks[" + std::to_string(k) + "]";
      const json& b = blocks[k];
      if (!b.is_array() || b.size() != 2) r.fail(bplace, "expected [bytes, 1 allocated | 0 free]");
      const std::int64_t bytes = r.bytes(b[0], bplace + "[0]");
      if (bytes == 0 || bytes > seg.bytes - sum) r.fail(bplace + "[0]", "expected bytes > 0 within the segment's size");
      if (!b[1].is_number_integer() || (b[1].get<std::int64_t>() != 0 && b[1].get<std::int64_t>() != 1))
        r.fail(bplace + "[1]", "expected 1 (allocated) or 0 (free)");
      sum += bytes;
      seg.blocks.push_back({bytes, b[1].get<std::int64_t>() == 1, {}});
      if (seg.blocks.back().allocated) allocated += bytes;
    }
    if (sum != seg.bytes) r.fail(place + ".blocks", "their bytes sum to " + std::to_string(sum) + ", not the segment's " + std::to_string(seg.bytes));
    reserved += seg.bytes;
    state.push_back(std::move(seg));
  }
  if (reserved != m.reserved_before_bytes)
    r.fail(where, "its segments hold " + std::to_string(reserved) + " bytes, not memory.reserved_before_bytes " + std::to_string(m.reserved_before_bytes));
  if (allocated != m.allocated_before_bytes)
    r.fail(where, "its allocated blocks hold " + std::to_string(allocated) + " bytes, not memory.allocated_before_bytes " +
                      std::to_string(m.allocated_before_bytes));
  return state;
}

// memory.inputs_at_start: {input name: [segment index, block index]}, the
// allocated block of allocator_at_start at which the input's storage
// starts. Written into that block's `inputs`.
void read_input_blocks(const Reader& r, const json& v, AllocatorState& state) {
  const std::string where = "memory.inputs_at_start";
  if (!v.is_object()) r.fail(where, "expected an object {input name: [segment, block]}");
  for (const auto& [name, at] : v.items()) {
    const std::string place = member_place(where, name);
    if (!at.is_array() || at.size() != 2 || !at[0].is_number_unsigned() || !at[1].is_number_unsigned())
      r.fail(place, "expected [segment index, block index]");
    const std::uint64_t seg = at[0].get<std::uint64_t>(), block = at[1].get<std::uint64_t>();
    if (seg >= state.size()) r.fail(place, "segment " + std::to_string(seg) + " is not in memory.allocator_at_start");
    if (block >= state[seg].blocks.size()) r.fail(place, "block " + std::to_string(block) + " is not in its segment");
    if (!state[seg].blocks[block].allocated) r.fail(place, "its block is free");
    state[seg].blocks[block].inputs.push_back(name);
  }
}

}  // namespace

MeasuredGraph load_measured(std::string_view text, const std::string& where) {
  Reader r{where};
  const json j = parse_json_text(text, where);
  if (!j.is_object()) throw Error(where + ": expected a JSON object");
  if (r.text(j, "format", "") != "schedmeasured/1") r.fail("format", "expected \"schedmeasured/1\"");
  MeasuredGraph m;
  m.graph = r.text(j, "graph", "");
  const json& env = r.need(j, "env", "");
  if (!env.is_object()) r.fail("env", "expected an object");
  m.device = r.text(env, "device", "env");
  m.device_kind = r.text(env, "device_kind", "env");
  // A token the exporter takes from its table ("h100-sxm"); it names the
  // fitted profile, so it holds nothing a message or a file name must escape.
  const bool token = !m.device_kind.empty() && m.device_kind.size() <= 64 &&
                     std::all_of(m.device_kind.begin(), m.device_kind.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
                     });
  if (!token) r.fail("env.device_kind", "expected a device kind of at most 64 letters, digits, '-', '_' or '.', got " + quoted_name(m.device_kind));
  if (auto sm = env.find("sm_count"); sm != env.end()) {
    const std::int64_t count = r.bytes(*sm, "env.sm_count");
    if (count > 1'000'000) r.fail("env.sm_count", "expected an integer between 0 and 1000000");
    m.sm_count = static_cast<int>(count);
  }
  if (auto l2 = env.find("l2_cache_bytes"); l2 != env.end()) m.l2_cache_bytes = r.bytes(*l2, "env.l2_cache_bytes");
  const json& mem = r.need(j, "memory", "");
  if (!mem.is_object()) r.fail("memory", "expected an object");
  m.allocated_before_bytes = r.bytes(r.need(mem, "allocated_before_bytes", "memory"), "memory.allocated_before_bytes");
  m.freeable_inputs_bytes = r.bytes(r.need(mem, "freeable_inputs_bytes", "memory"), "memory.freeable_inputs_bytes");
  m.peak_allocated_bytes = r.bytes(r.need(mem, "peak_allocated_bytes", "memory"), "memory.peak_allocated_bytes");
  m.reserved_before_bytes = r.bytes(r.need(mem, "reserved_before_bytes", "memory"), "memory.reserved_before_bytes");
  m.peak_reserved_bytes = r.bytes(r.need(mem, "peak_reserved_bytes", "memory"), "memory.peak_reserved_bytes");
  if (auto it = mem.find("allocator_at_start"); it != mem.end()) m.allocator_at_start = read_allocator_state(r, *it, m);
  if (auto it = mem.find("inputs_at_start"); it != mem.end()) {
    if (!m.allocator_at_start) r.fail("memory.inputs_at_start", "needs memory.allocator_at_start");
    read_input_blocks(r, *it, *m.allocator_at_start);
  }
  const json& kernels = r.need(j, "kernels", "");
  if (!kernels.is_array()) r.fail("kernels", "expected an array");
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::string place = "kernels[" + std::to_string(i) + "]";
    const json& k = kernels[i];
    if (!k.is_object()) r.fail(place, "expected an object");
    MeasuredKernel mk;
    mk.name = r.text(k, "name", place);
    mk.node = r.text(k, "node", place, true);
    mk.kernel_class = r.text(k, "class", place);
    mk.start_us = r.number(r.need(k, "start_us", place), place + ".start_us");
    mk.duration_us = r.number(r.need(k, "duration_us", place), place + ".duration_us");
    if (auto s = k.find("stream"); s != k.end() && s->is_number_integer()) mk.stream = s->get<std::int64_t>();
    m.kernels.push_back(std::move(mk));
  }
  m.kernel_time_us = r.number(r.need(j, "kernel_time_us", ""), "kernel_time_us");
  m.wall_time_us = r.number(r.need(j, "wall_time_us", ""), "wall_time_us");
  if (auto it = j.find("host_time_us"); it != j.end() && !it->is_null()) m.host_time_us = r.number(*it, "host_time_us");
  if (auto it = j.find("wall_time_us_cudagraphs"); it != j.end() && !it->is_null())
    m.wall_time_us_cudagraphs = r.number(*it, "wall_time_us_cudagraphs");
  // The host's speed behind wall_time_us: the probe of the very samples it
  // is the median of, else (files from before it was recorded) the run's.
  for (const char* key : {"host_probe_wall_us", "host_probe_full_speed_us"}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0) r.fail(key, "expected a finite number of µs in 0..1e12");
    const double probe = it->get<double>();  // within 0..1e12 when valid
    if (!valid_host_probe_us(probe)) r.fail(key, "expected a number of µs between 0.001 and 1000000");
    if (!m.host_probe_us) m.host_probe_us = probe;
  }
  if (auto it = j.find("unbacked"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) r.fail("unbacked", "expected an object {symbol: value}");
    for (auto u = it->begin(); u != it->end(); ++u) m.unbacked[u.key()] = r.bytes(u.value(), member_place("unbacked", u.key()));
  }
  if (auto it = j.find("workspace_bytes"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) r.fail("workspace_bytes", "expected an object {node: bytes}");
    for (auto u = it->begin(); u != it->end(); ++u)
      m.workspace_bytes[u.key()] = r.bytes(u.value(), member_place("workspace_bytes", u.key()));
  }
  return m;
}

MeasuredGraph load_measured_file(const std::string& path) { return load_measured(read_json_input(path, kMaxMeasuredBytes, "a measured file's limit"), path); }

WrapperItemCost load_wrapper_item_cost(std::string_view text, const std::string& where) {
  Reader r{where};
  const json j = parse_json_text(text, where);
  if (!j.is_object()) throw Error(where + ": expected a JSON object");
  const json& per_call = r.need(j, "us_per_call", "");
  if (!per_call.is_object()) r.fail("us_per_call", "expected an object {operation: µs}");
  WrapperItemCost cost;
  for (const char* op : {"tuple_item", "assert_size_stride"})
    cost.item_us += r.number(r.need(per_call, op, "us_per_call"), std::string("us_per_call.") + op);
  const json& probes = r.need(j, "host_probe_us", "");
  if (!probes.is_array() || probes.empty()) r.fail("host_probe_us", "expected a non-empty array of µs");
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const std::string place = "host_probe_us[" + std::to_string(i) + "]";
    const double probe = r.number(probes[i], place);
    if (!valid_host_probe_us(probe)) r.fail(place, "expected a number of µs between 0.001 and 1000000");
    cost.host_probe_us.push_back(probe);
  }
  return cost;
}

WrapperItemCost load_wrapper_item_cost_file(const std::string& path) {
  return load_wrapper_item_cost(read_json_input(path, kMaxMeasuredBytes, "a measured file's limit"), path);
}

MeasuredCase load_measured_case(const std::string& path, const std::vector<std::string>& graph_dirs) {
  MeasuredCase c;
  c.path = path;
  c.measured = load_measured_file(path);
  // The graph's name comes from the measured file's, which the tool
  // defines: `<case>.measured.json` beside `<case>.post.json`.
  std::string post = path.substr(0, path.size() - std::string(".measured.json").size()) + ".post.json";
  const std::string file = post.substr(post.find_last_of('/') + 1);
  struct stat st {};
  for (const std::string& dir : graph_dirs)
    if (stat(post.c_str(), &st) != 0 && stat((dir + "/" + file).c_str(), &st) == 0) post = dir + "/" + file;
  try {
    c.graph = load_graph_file(post);
  } catch (const Error& e) {
    throw Error(path + ": its graph " + post + ": " + e.what());
  }
  check_matches(c.measured, c.graph, path);
  apply_observed_workspaces(c.measured, c.graph);
  return c;
}

std::vector<std::string> find_measured_files(const std::vector<std::string>& dirs, const std::vector<std::string>& excludes) {
  std::vector<std::string> out = files_under(dirs, ".measured.json");
  std::erase_if(out, [&](const std::string& path) {
    for (const std::string& e : excludes)
      if (path.find(e) != std::string::npos) return true;
    return false;
  });
  return out;
}

}  // namespace schedlab
