// cli/common — what the two command-line front ends (`schedlab`, cli/, and
// `schedlab-gpu`, native-cuda/) share: CLI11 options whose values go through
// core/io's readers, one parse that turns every CLI11 complaint into one line
// naming the option, and one mapping from exceptions to exit codes.
//
// Exit codes: 0 ok, 1 bad input (a graph, profile or measured file refused;
// an Error), 2 bad usage (an OptionError: an unknown or malformed option, a
// name no registry holds, a number out of range), 3 a bug.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/util/error.h"

namespace schedlab {
struct PlanOptions;
}  // namespace schedlab

namespace schedlab::cli {

// A command line the front end refuses (an unknown option, a missing value,
// a flag that contradicts another). It is an OptionError, so it shares core's
// exit code 2.
struct UsageError : OptionError {
  using OptionError::OptionError;
};

using Args = std::vector<std::string>;

// A CLI11 app whose option names match exactly (CLI11 never matches by
// prefix), whose single-valued options keep the last value given (as the
// hand-written parsers did), and whose switches refuse `--switch=VALUE`.
void configure_app(CLI::App& app);

// Options whose value is read by core/io/options.h's number readers: the whole
// text must be the number ("5abc", "inf", "nan", 1e400 and overflow refused),
// in [lo, hi]; the error names the option. `into` is set when parsing ends.
CLI::Option* add_int_option(CLI::App& app, const std::string& name, std::int64_t& into, std::int64_t lo, std::int64_t hi,
                            const std::string& help);
CLI::Option* add_int_option(CLI::App& app, const std::string& name, std::int32_t& into, std::int64_t lo, std::int64_t hi,
                            const std::string& help);
CLI::Option* add_number_option(CLI::App& app, const std::string& name, double& into, double lo, double hi, const std::string& help);
// One of `choices`, else a UsageError listing them.
CLI::Option* add_choice_option(CLI::App& app, const std::string& name, std::string& into, std::vector<std::string> choices,
                               const std::string& help);
// An output file (`-o`, `--trace`, `--svg`, ...): an empty name is a
// UsageError, never "no output"; the other output rules (core/io/files.h)
// apply when the command writes.
CLI::Option* add_output_option(CLI::App& app, const std::string& name, std::string& into, const std::string& help);
// An option given once per value (`--graphs A --graphs B`): each occurrence
// takes exactly one word, so a positional after it stays positional.
CLI::Option* add_repeatable_option(CLI::App& app, const std::string& name, std::vector<std::string>& into, const std::string& help);
// `--hardware NAME|FILE` (or another name): a built-in profile, listed in the
// help from cost's table, or a profile JSON file.
CLI::Option* add_hardware_option(CLI::App& app, HardwareProfile& into, const std::string& name = "--hardware");
// `--host-probe-us US` (plan, simulate): the host's full-speed probe, as
// `python -m schedlab_export --host-probe` reads it. The returned function,
// called once every option is read, restates `hw`'s host costs at that speed
// (core/cost/time_model.h at_host_speed); it throws UsageError naming the
// option when the profile does not say at which speed its host costs hold.
std::function<void()> add_host_probe_option(CLI::App& app, HardwareProfile& hw);
// `--measured-trace TRACE.json [TRACE.json ...]` (plan, simulate; repeatable):
// torch.profiler traces of real runs of the graph, fed back into the
// pricing (core/measure/measured_costs.h). The returned function, called
// when the command runs, reads them into `opts.measured_traces` (Error
// naming the file and the field for a bad one).
std::function<void()> add_measured_trace_option(CLI::App& app, PlanOptions& opts);
// `--max-input-bytes N` (every command that reads a graph).
CLI::Option* add_max_input_bytes_option(CLI::App& app, std::uint64_t& into);
// `--device-memory 80GiB`: "will it fit?" (core/predict/device_fit.h).
CLI::Option* add_device_memory_option(CLI::App& app, std::int64_t& into);
// --memory-budget SIZE: the overlap passes' peak at most SIZE, in whole MiB
// (the knob overlap_schedule_memory_budget_mib).
CLI::Option* add_memory_budget_option(CLI::App& app, CommKnobs& into);

// The options several commands take, their help listing the names from the
// registries' tables (core/memory/methods.def, core/comms/passes.def,
// core/comms/knobs.def), their values read by core/io/options.h.
CLI::Option* add_memory_methods_option(CLI::App& app, std::vector<std::string>& into);
// `--comm-passes a,b` ("" for none).
CLI::Option* add_comm_passes_option(CLI::App& app, std::vector<std::string>& into);
// `--comm-knob NAME=VALUE`, repeatable.
CLI::Option* add_comm_knob_option(CLI::App& app, CommKnobs& into);
CLI::Option* add_runtime_source_option(CLI::App& app, std::string& into);

// The names of a registry's rows, joined with ", " (help texts).
std::string joined(const std::vector<std::string>& names);

// Parses `args` (the words after the program's name) into `app`. Returns
// false when `--help` was asked for: the help of the innermost command named
// is then printed to stdout. Throws
// UsageError with one line naming the option otherwise: an unknown option,
// a missing value, a value a reader refused, or an extra argument.
bool parse_command_line(CLI::App& app, const Args& args);

// Runs `command` and maps what it throws to an exit code, printing one line
// `prefix: message` to stderr (OptionError, UsageError included: 2; Error
// and out of memory: 1; anything else: 3, "internal error").
int run_with_exit_codes(const std::string& prefix, const std::function<int()>& command);

}  // namespace schedlab::cli
