// core/io — hardware profiles as JSON (docs/cost-model.md): the files
// `--hardware FILE` names, the options' inline "hardware" object, and what
// `schedlab fit-profile` writes. The profiles themselves are plain structs
// (core/cost/cost_model.h).
//
// Contract: a malformed profile is an Error naming the field
// ("hardware profile: time_model.laws.gemm.fixed_us: ..."); numbers must be
// finite and in range; unknown fields are refused.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/cost/cost_model.h"

namespace schedlab {

// A user profile: either complete, or `"base": "<builtin>"` plus the fields
// that differ.
HardwareProfile parse_hardware_profile(std::string_view json_text);
HardwareProfile hardware_profile_from_json(const nlohmann::json& j);
// What `--hardware` takes everywhere (plan, simulate, accuracy, fit): a
// built-in name, else a profile JSON file. An unknown name is a OptionError
// listing the names; a bad file an Error prefixed with its path.
HardwareProfile load_hardware_profile(const std::string& name_or_file);
// A profile's measured communication sections, as scripts/fit-comm.py writes
// them ({"collectives": ..., "contention": ...}, either may be absent), set
// into `p`; `where` names the file in errors.
void apply_comm_sections(std::string_view json_text, const std::string& where, HardwareProfile& p);
// The sustained tensor-core rate scripts/fit-sustained-rate.py fitted
// ({"sustained_tensor_flops_per_s": F, ...}: its other fields say where F
// comes from) set into `p`'s time model; `where` names the file in errors,
// and a profile without a time model is an Error.
void apply_sustained_rate(std::string_view json_text, const std::string& where, HardwareProfile& p);
nlohmann::json hardware_profile_to_json(const HardwareProfile& hw);

// The time model inside a profile ("time_model"); `where` prefixes errors.
TimeModel time_model_from_json(const nlohmann::json& j, std::string_view where);
nlohmann::json time_model_to_json(const TimeModel& m);

}  // namespace schedlab
