// core/io — reading options: a plan's options object (the WASM API's and
// the fuzzers' input), comm knobs, and command-line numbers. (`--hardware
// NAME|FILE` is core/io/profiles.h's load_hardware_profile.)
//
// Contract: bad input throws OptionError (options, knobs, names) or Error (a
// profile file's content) with one line that names the place
// (`options.comm.sink_iterative_peak_memory_budget: ...`); numbers out of
// range, non-finite or too large for their field are refused, never wrapped.
#pragma once

#include <string>
#include <string_view>

#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/io/json_doc.h"
#include "core/plan/plan.h"

namespace schedlab {

// Reads {"memory_methods": [...] or "a,b", "comm_passes": ..., "comm": {...},
// "fuse": bool, "hardware": name or profile, "device_memory": bytes or "80GiB"}; unknown keys are refused so
// typos do not pass silently. Blank text gives the defaults.
PlanOptions parse_plan_options(std::string_view options_json);
// The same from a document in hand (the Python bindings build one from a
// dict, JsonDocBuilder), with the same messages.
PlanOptions parse_plan_options(const JsonValue& options);

// An object of knob names -> values (null for "no limit").
CommKnobs parse_comm_knobs(const JsonValue& j, std::string_view where);
CommKnobs parse_comm_knobs_json(std::string_view text, std::string_view where = "options.comm");
// `--comm-knob NAME=VALUE`: VALUE is JSON (0.1, true, null).
void set_comm_knob(CommKnobs& knobs, std::string_view name, std::string_view value_json, std::string_view where);

// Command-line numbers: the whole text must be the number ("5abc", "inf",
// "nan" and overflow are refused) and it must lie in [lo, hi]. Throw
// OptionError naming the flag.
std::int64_t int_arg(std::string_view flag, std::string_view v, std::int64_t lo, std::int64_t hi);
double number_arg(std::string_view flag, std::string_view v, double lo, double hi);
// A size in bytes: "80GiB", "80 GiB", "85899345920", "80GB" (KiB MiB GiB
// TiB binary, KB MB GB TB decimal, B); positive, below 2^62. Throws
// OptionError naming `where`.
std::int64_t byte_size_arg(std::string_view where, std::string_view v);

}  // namespace schedlab
