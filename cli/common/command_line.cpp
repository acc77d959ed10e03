#include "cli/common/command_line.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>

#include "core/io/files.h"
#include "core/io/options.h"
#include "core/io/profiles.h"
#include "core/io/trace_reader.h"
#include "core/io/graph_reader.h"
#include "core/memory/methods.h"
#include "core/plan/plan.h"
#include "core/util/error.h"

namespace schedlab::cli {
namespace {

// The option's long name as a user types it ("--nodes"), for messages.
std::string option_name(const std::string& names) {
  const auto comma = names.rfind(',');
  return comma == std::string::npos ? names : names.substr(comma + 1);
}

// A string-valued option whose `read` runs on the value when parsing ends.
CLI::Option* add_read_option(CLI::App& app, const std::string& names, std::function<void(const std::string&)> read, const std::string& help) {
  return app.add_option_function<std::string>(names, std::move(read), help);
}

// "schedlab gen layered": the command's words, for its help's usage line.
std::string help_prefix(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* a = app->get_parent(); a != nullptr; a = a->get_parent()) names.push_back(a->get_name());
  std::string prefix;
  for (auto it = names.rbegin(); it != names.rend(); ++it) prefix += (prefix.empty() ? "" : " ") + *it;
  return prefix;
}

// The innermost (sub)command the words named.
CLI::App* innermost(CLI::App* app) {
  while (!app->get_subcommands().empty()) app = app->get_subcommands().front();
  return app;
}

// CLI11's own wording, made into one line that names the option.
std::string usage_message(const CLI::ParseError& e, CLI::App* app) {
  std::string what = e.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && what.find("required") != std::string::npos &&
      what.find("missing") != std::string::npos)
    return what.substr(0, what.find(':')) + ": missing value";
  if (dynamic_cast<const CLI::RequiredError*>(&e) && what.find("subcommand") != std::string::npos) {
    const CLI::App* at = innermost(app);
    std::vector<std::string> names;
    for (const CLI::App* sub : at->get_subcommands({})) names.push_back(sub->get_name());
    return "expected one of: " + joined(names) + " (see --help)";
  }
  const std::string flag_override = " was given a disallowed flag override";
  if (what.size() > flag_override.size() && what.compare(what.size() - flag_override.size(), flag_override.size(), flag_override) == 0)
    return "--" + what.substr(0, what.size() - flag_override.size()) + ": takes no value";
  const std::string required = " is required";
  if (dynamic_cast<const CLI::RequiredError*>(&e) && what.size() > required.size() &&
      what.compare(what.size() - required.size(), required.size(), required) == 0)
    return "missing " + what.substr(0, what.size() - required.size());
  return what;
}

}  // namespace

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void configure_app(CLI::App& app) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)->disable_flag_override();
  app.allow_extras();  // reported by parse_command_line, one line naming the word
}

CLI::Option* add_int_option(CLI::App& app, const std::string& names, std::int64_t& into, std::int64_t lo, std::int64_t hi,
                            const std::string& help) {
  const std::string flag = option_name(names);
  return add_read_option(app, names, [&into, flag, lo, hi](const std::string& v) { into = int_arg(flag, v, lo, hi); }, help)
      ->option_text("INT");
}

CLI::Option* add_int_option(CLI::App& app, const std::string& names, std::int32_t& into, std::int64_t lo, std::int64_t hi,
                            const std::string& help) {
  const std::string flag = option_name(names);
  lo = std::max<std::int64_t>(lo, std::numeric_limits<std::int32_t>::min());
  hi = std::min<std::int64_t>(hi, std::numeric_limits<std::int32_t>::max());
  return add_read_option(app, names, [&into, flag, lo, hi](const std::string& v) { into = static_cast<std::int32_t>(int_arg(flag, v, lo, hi)); },
                         help)
      ->option_text("INT");
}

CLI::Option* add_number_option(CLI::App& app, const std::string& names, double& into, double lo, double hi, const std::string& help) {
  const std::string flag = option_name(names);
  return add_read_option(app, names, [&into, flag, lo, hi](const std::string& v) { into = number_arg(flag, v, lo, hi); }, help)
      ->option_text("NUMBER");
}

CLI::Option* add_choice_option(CLI::App& app, const std::string& names, std::string& into, std::vector<std::string> choices,
                               const std::string& help) {
  const std::string flag = option_name(names);
  std::string text;
  for (const auto& c : choices) text += (text.empty() ? "" : "|") + c;
  return add_read_option(app, names,
                         [&into, flag, choices](const std::string& v) {
                           if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
                             std::string expected;
                             for (std::size_t i = 0; i < choices.size(); ++i)
                               expected += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
                             throw UsageError(flag + ": expected " + expected + ", got \"" + v + "\"");
                           }
                           into = v;
                         },
                         help)
      ->option_text(text);
}

CLI::Option* add_output_option(CLI::App& app, const std::string& names, std::string& into, const std::string& help) {
  const std::string flag = option_name(names);
  return add_read_option(app, names,
                         [&into, flag](const std::string& v) {
                           if (v.empty()) throw UsageError(flag + ": expected a file name (or - for stdout), got an empty one");
                           into = v;
                         },
                         help);
}

CLI::Option* add_repeatable_option(CLI::App& app, const std::string& name, std::vector<std::string>& into, const std::string& help) {
  return app.add_option(name, into, help)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

CLI::Option* add_hardware_option(CLI::App& app, HardwareProfile& into, const std::string& name) {
  return add_read_option(app, name,
                         [&into, name](const std::string& v) {
                           try {
                             into = load_hardware_profile(v);
                           } catch (const OptionError& e) {  // an unknown name: say which option gave it
                             throw UsageError(name + ": " + e.what());
                           }
                         },
                         "a built-in hardware profile (" + joined(builtin_profile_names()) + "; default " +
                             std::string(kDefaultHardwareProfile) + ") or a profile JSON file")
      ->option_text("NAME|FILE");
}

std::function<void()> add_host_probe_option(CLI::App& app, HardwareProfile& hw) {
  auto probe = std::make_shared<double>(0.0);
  CLI::Option* option = add_number_option(app, "--host-probe-us", *probe, kMinHostProbeUs, kMaxHostProbeUs,
                                          "the host's full-speed probe in us (python -m schedlab_export --host-probe): "
                                          "the profile's host costs are restated at that speed");
  return [&hw, probe, option] {
    if (option->count() == 0) return;
    if (!hw.time_model || !(hw.time_model->host_probe_us > 0))
      throw UsageError("--host-probe-us: hardware profile \"" + hw.name +
                       "\" does not say at which host speed its host costs hold (no time_model.host_probe_us)");
    hw.time_model = at_host_speed(*hw.time_model, *probe);
  };
}

std::function<void()> add_measured_trace_option(CLI::App& app, PlanOptions& opts) {
  auto paths = std::make_shared<std::vector<std::string>>();
  app.add_option("--measured-trace", *paths,
                 "torch.profiler Chrome traces of real runs of the graph's order (profile.rankN.json, python/dist's "
                 "measured.rankN.trace.json; one per rank): the cost of every node and collective they map is the measured "
                 "median, the rest of each kernel class scaled by its measured / predicted ratio (put GRAPH first)")
      ->option_text("TRACE.json ...")
      ->expected(1, CLI::detail::expected_max_vector_size)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  auto graph_path = std::make_shared<std::string>();
  CLI::Option* graph_option =
      app.add_option("--measured-trace-graph", *graph_path,
                     "the graph (a post-fusion schedgraph/1 file) in the node order the traces ran, when GRAPH lists another "
                     "order of the same nodes: the measured times go to GRAPH's nodes by name")
          ->option_text("GRAPH.json");
  return [&opts, paths, graph_path, graph_option] {
    if (paths->empty()) {
      if (graph_option->count() > 0) throw UsageError("--measured-trace-graph: needs --measured-trace");
      return;
    }
    auto traces = std::make_shared<std::vector<MeasuredTrace>>();
    for (const std::string& path : *paths) traces->push_back(load_measured_trace_file(path));
    opts.measured_traces = std::move(traces);
    if (graph_option->count() > 0) opts.measured_graph = std::make_shared<const Graph>(load_graph_file(*graph_path));
  };
}

CLI::Option* add_device_memory_option(CLI::App& app, std::int64_t& into) {
  return add_read_option(app, "--device-memory", [&into](const std::string& v) { into = byte_size_arg("--device-memory", v); },
                         "will it fit: the device's memory (80GiB, 141GB, bytes); the plan adds the fixed costs beside the "
                         "predicted reserved peak and answers fits or does not fit, with the margin")
      ->option_text("SIZE");
}

CLI::Option* add_memory_budget_option(CLI::App& app, CommKnobs& into) {
  return add_read_option(app, "--memory-budget",
                         [&into](const std::string& v) {
                           const std::int64_t mib = byte_size_arg("--memory-budget", v) >> 20;
                           if (mib < 1 || mib > std::numeric_limits<std::int32_t>::max())
                             throw UsageError("--memory-budget: expected 1MiB to 2047TiB, got \"" + v + "\"");
                           into.overlap_schedule_memory_budget_mib = static_cast<std::int32_t>(mib);
                         },
                         "overlap_schedule and overlap_schedule_step keep the peak at or under SIZE (12GiB, bytes; whole MiB: the "
                         "knob overlap_schedule_memory_budget_mib), rescheduling with tighter limits, or keep their input and say "
                         "they cannot (budget_met: false)")
      ->option_text("SIZE");
}

CLI::Option* add_max_input_bytes_option(CLI::App& app, std::uint64_t& into) {
  return add_read_option(app, "--max-input-bytes",
                         [&into](const std::string& v) {
                           into = static_cast<std::uint64_t>(int_arg("--max-input-bytes", v, 1, std::numeric_limits<std::int64_t>::max()));
                         },
                         "refuse inputs larger than this (default " + std::to_string(kDefaultMaxInputBytes) + ")")
      ->option_text("BYTES");
}

CLI::Option* add_memory_methods_option(CLI::App& app, std::vector<std::string>& into) {
  std::vector<std::string> names;
  for (const MemoryMethod& m : memory_methods()) names.emplace_back(m.name);
  return add_read_option(app, "--memory-methods", [&into](const std::string& v) { into = split_list(v, "--memory-methods"); },
                         "memory methods to run, the lowest peak wins: " + joined(names) + " (default " +
                             joined(default_memory_methods()) + ")")
      ->option_text("A,B,...");
}

CLI::Option* add_comm_passes_option(CLI::App& app, std::vector<std::string>& into) {
  std::vector<std::string> names;
  for (const CommPass& p : comm_passes()) names.emplace_back(p.name);
  return add_read_option(app, "--comm-passes",
                         [&into](const std::string& v) { into = v.empty() ? std::vector<std::string>{} : split_list(v, "--comm-passes"); },
                         "comm passes to apply in order (\"\" for none): " + joined(names))
      ->option_text("A,B,...");
}

CLI::Option* add_comm_knob_option(CLI::App& app, CommKnobs& into) {
  std::vector<std::string> knobs;
  const CommKnobs defaults;
  for_each_comm_knob(defaults, [&knobs](std::string_view name, const auto& value) {
    std::string shown;
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, bool>) shown = value ? "true" : "false";
    else if constexpr (std::is_integral_v<std::decay_t<decltype(value)>>) shown = value < 0 ? "null" : std::to_string(value);
    else {
      char text[32];
      std::snprintf(text, sizeof text, "%g", value);
      shown = text;
    }
    knobs.push_back(std::string(name) + "=" + shown);
  });
  return app
      .add_option_function<std::vector<std::string>>(
          "--comm-knob",
          [&into](const std::vector<std::string>& settings) {
            for (const std::string& kv : settings) {
              const auto eq = kv.find('=');
              if (eq == std::string::npos || eq == 0) throw UsageError("--comm-knob: expected NAME=VALUE, got \"" + kv + "\"");
              set_comm_knob(into, std::string_view(kv).substr(0, eq), std::string_view(kv).substr(eq + 1), "--comm-knob");
            }
          },
          "set a comm pass knob, VALUE as JSON (0.1, true, null); repeatable. Knobs and defaults: " + joined(knobs))
      ->option_text("NAME=VALUE")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

CLI::Option* add_runtime_source_option(CLI::App& app, std::string& into) {
  return add_choice_option(app, "--runtime-source", into, {"calibrated", "runtime_us"},
                           "runtimes for the reports: the hardware profile's calibrated model, or the graph's runtime_us "
                           "(else the cost model)");
}

bool parse_command_line(CLI::App& app, const Args& args) {
  // CLI11 reads its words last first. `--name=` is an empty value (as
  // `--name ""`), which CLI11 would take for a missing one.
  std::vector<std::string> words;
  for (const std::string& a : args) {
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.back() == '=' && a.find('=') == a.size() - 1) {
      words.push_back(a.substr(0, a.size() - 1));
      words.emplace_back();
    } else {
      words.push_back(a);
    }
  }
  std::reverse(words.begin(), words.end());
  try {
    app.parse(words);
  } catch (const CLI::CallForHelp&) {
    CLI::App* at = innermost(&app);
    std::fputs(at->help(help_prefix(at)).c_str(), stdout);
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(usage_message(e, &app));
  }
  const std::vector<std::string> extra = app.remaining(true);
  for (const std::string& w : extra)
    if (w.size() > 1 && w[0] == '-') throw UsageError("unknown option \"" + w + "\"");
  if (!extra.empty()) throw UsageError("unexpected argument \"" + extra.front() + "\"");
  return true;
}

int run_with_exit_codes(const std::string& prefix, const std::function<int()>& command) {
  try {
    return command();
  } catch (const OptionError& e) {
    std::fprintf(stderr, "%s: %s\n", prefix.c_str(), e.what());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", prefix.c_str(), e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory\n", prefix.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", prefix.c_str(), e.what());
    return 3;
  }
}

}  // namespace schedlab::cli
