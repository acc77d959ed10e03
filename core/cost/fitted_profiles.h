// core/cost — the fitted built-in profiles as JSON text (generated from
// profiles/*.json by scripts/embed-profiles.py; tests check they agree).
#pragma once

namespace schedlab {

extern const char* const kFittedH100Sxm;  // profiles/h100-sxm.json
extern const char* const kFittedH200;     // profiles/h200.json

}  // namespace schedlab
