// Measured Chrome traces: torch.profiler's and python/dist's.
#include "core/io/trace_reader.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "core/io/json_input.h"
#include "core/io/measured_reader.h"
#include "core/util/error.h"

namespace schedlab {
namespace {

using nlohmann::json;

constexpr double kStepGapUs = 1000;  // trace_analysis.py split_steps's gap_us, measured.js STEP_GAP_US

struct Reader {
  std::string where;
  [[noreturn]] void fail(const std::string& place, const std::string& what) const { throw Error(where + ": " + place + ": " + what); }

  std::string name(const json& e, const std::string& place) const {
    auto it = e.find("name");
    if (it == e.end() || !it->is_string()) fail(place + ".name", "expected a string");
    return it->get<std::string>();
  }
  double time(const json& e, const char* key, const std::string& place, bool optional = false) const {
    auto it = e.find(key);
    if (it == e.end()) {
      if (optional) return 0;
      fail(place + "." + key, "missing (expected µs)");
    }
    if (!it->is_number() || !std::isfinite(it->get<double>()) || std::fabs(it->get<double>()) > 1e18 ||
        (std::string_view(key) == "dur" && (it->get<double>() < 0 || it->get<double>() > kMaxMeasuredUs)))
      fail(place + "." + key, std::string_view(key) == "dur" ? "expected a finite number of µs in 0..1e12" : "expected a finite number of µs");
    return it->get<double>();
  }
};

bool is_gpu_category(const std::string& cat) { return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset"; }
bool is_nccl(const std::string& name) {
  return name.size() >= 4 && std::tolower(static_cast<unsigned char>(name[0])) == 'n' && std::tolower(static_cast<unsigned char>(name[1])) == 'c' &&
         std::tolower(static_cast<unsigned char>(name[2])) == 'c' && std::tolower(static_cast<unsigned char>(name[3])) == 'l';
}

struct RawKernel {
  TraceKernel kernel;
  std::optional<std::int64_t> correlation;
};

std::optional<std::int64_t> correlation_of(const json& e) {
  auto args = e.find("args");
  if (args == e.end() || !args->is_object()) return std::nullopt;
  auto c = args->find("correlation");
  if (c == args->end() || !c->is_number_integer()) return std::nullopt;
  return c->get<std::int64_t>();
}

}  // namespace

MeasuredTrace load_measured_trace(std::string_view text, const std::string& where) {
  Reader r{where};
  const json doc = parse_json_text(text, where);
  const json* events = nullptr;
  if (doc.is_array()) {
    events = &doc;
  } else if (doc.is_object()) {
    auto it = doc.find("traceEvents");
    if (it == doc.end()) r.fail("traceEvents", "missing (expected a Chrome trace: torch.profiler's export_chrome_trace or python/dist's measured trace)");
    if (!it->is_array()) r.fail("traceEvents", "expected an array of trace events");
    events = &*it;
  } else {
    throw Error(where + ": expected a Chrome trace (an object with \"traceEvents\", or an array of events)");
  }
  MeasuredTrace t;
  t.path = where;
  std::vector<RawKernel> kernels;
  std::vector<TraceKernel> lanes;
  std::vector<std::pair<double, double>> schedlab_marks, profiler_marks;
  std::map<std::int64_t, double> launched_at;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    const std::string place = "traceEvents[" + std::to_string(i) + "]";
    if (!e.is_object()) r.fail(place, "expected an object");
    auto ph = e.find("ph");
    if (ph == e.end() || !ph->is_string() || ph->get<std::string>() != "X") continue;
    auto cat_it = e.find("cat");
    const std::string cat = cat_it != e.end() && cat_it->is_string() ? cat_it->get<std::string>() : std::string();
    if (is_gpu_category(cat)) {
      std::string name = r.name(e, place);
      const double ts = r.time(e, "ts", place), dur = r.time(e, "dur", place);
      const bool comm = is_nccl(name);
      kernels.push_back({{std::move(name), ts, dur, comm}, correlation_of(e)});
    } else if (cat == "compute" || cat == "comm") {
      std::string name = r.name(e, place);
      auto args = e.find("args");
      if (args != e.end() && args->is_object()) {
        auto k = args->find("kernel");
        if (k != args->end() && k->is_string() && !k->get<std::string>().empty()) name = k->get<std::string>();
      }
      lanes.push_back({std::move(name), r.time(e, "ts", place), r.time(e, "dur", place), cat == "comm"});
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      if (const auto c = correlation_of(e)) launched_at.emplace(*c, r.time(e, "ts", place));
    } else if (cat == "user_annotation" || cat == "cpu_op") {
      auto n = e.find("name");
      if (n == e.end() || !n->is_string()) continue;
      const std::string& name = n->get_ref<const std::string&>();
      const bool ours = cat == "user_annotation" && name.rfind("schedlab_step", 0) == 0;
      const bool profiler = name.rfind("ProfilerStep#", 0) == 0;
      if (!ours && !profiler) continue;
      const double ts = r.time(e, "ts", place), dur = r.time(e, "dur", place);
      (ours ? schedlab_marks : profiler_marks).push_back({ts, ts + dur});
    }
  }
  const auto by_start = [](const TraceKernel& a, const TraceKernel& b) {
    return a.start_us != b.start_us ? a.start_us < b.start_us : a.start_us + a.duration_us < b.start_us + b.duration_us;
  };
  if (!lanes.empty()) {
    t.format = "lanes";
    std::stable_sort(lanes.begin(), lanes.end(), by_start);
    t.steps.push_back(std::move(lanes));
    return t;
  }
  if (kernels.empty())
    throw Error(where + ": traceEvents: no GPU kernels (no \"kernel\" events and no compute/comm lanes: profile with "
                        "ProfilerActivity.CUDA)");
  t.format = "torch.profiler";
  std::stable_sort(kernels.begin(), kernels.end(), [&](const RawKernel& a, const RawKernel& b) { return by_start(a.kernel, b.kernel); });
  std::vector<std::pair<double, double>>& marks = !schedlab_marks.empty() ? schedlab_marks : profiler_marks;
  std::sort(marks.begin(), marks.end());
  const auto launch = [&](const RawKernel& k) -> std::optional<double> {
    if (!k.correlation) return std::nullopt;
    auto it = launched_at.find(*k.correlation);
    return it == launched_at.end() ? std::nullopt : std::optional<double>(it->second);
  };
  const bool by_marks = !marks.empty() && std::any_of(kernels.begin(), kernels.end(), [&](const RawKernel& k) { return launch(k).has_value(); });
  if (by_marks) {
    for (const auto& [a, b] : marks) {
      std::vector<TraceKernel> step;
      for (const RawKernel& k : kernels)
        if (const auto at = launch(k); at && a <= *at && *at <= b) step.push_back(k.kernel);
      if (!step.empty()) t.steps.push_back(std::move(step));
    }
  } else {
    double last_end = 0;
    for (const RawKernel& k : kernels) {
      if (t.steps.empty() || k.kernel.start_us - last_end > kStepGapUs) t.steps.emplace_back(), last_end = k.kernel.start_us;
      t.steps.back().push_back(k.kernel);
      last_end = std::max(last_end, k.kernel.start_us + k.kernel.duration_us);
    }
  }
  if (t.steps.empty()) throw Error(where + ": traceEvents: no GPU kernel was launched inside a step annotation (schedlab_step*, ProfilerStep#N)");
  return t;
}

MeasuredTrace load_measured_trace_file(const std::string& path) {
  return load_measured_trace(read_json_input(path, kMaxMeasuredBytes, "a measured file's limit"), path);
}

}  // namespace schedlab
