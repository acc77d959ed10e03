// core/cost — the fitted built-in profiles (generated from profiles/*.json
// by scripts/embed-profiles.py; tests check they agree).
#pragma once

#include "core/cost/cost_model.h"

namespace schedlab {

HardwareProfile fitted_h100_sxm();  // profiles/h100-sxm.json
HardwareProfile fitted_h200();      // profiles/h200.json

}  // namespace schedlab
