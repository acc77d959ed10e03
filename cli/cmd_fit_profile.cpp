// schedlab fit-profile: measured exports -> a hardware profile with a fitted
// time model (core/measure/fit.h; docs/cost-model.md, "Fitting").
#include <cstdio>

#include "cli/commands.h"
#include "core/measure/fit.h"
#include "core/util/error.h"

namespace schedlab::cli {

int cmd_fit_profile(const Args& args) {
  ArgReader r(args);
  std::vector<std::string> dirs, excludes, graph_dirs;
  std::string out_path, base_name, name;
  while (!r.done()) {
    std::string a = r.next();
    if (a == "-o" || is_flag(a, "--output")) out_path = r.value(a);
    else if (is_flag(a, "--base")) base_name = r.value(a);
    else if (is_flag(a, "--name")) name = r.value(a);
    else if (is_flag(a, "--exclude")) excludes.push_back(r.value(a));
    else if (is_flag(a, "--graphs")) graph_dirs.push_back(r.value(a));
    else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option \"" + a + "\"");
    else dirs.push_back(a);
  }
  if (dirs.empty()) throw UsageError("missing DIR (a folder of *.measured.json beside their *.post.json)");
  if (out_path.empty()) throw UsageError("missing -o PROFILE.json");
  std::vector<MeasuredCase> cases;
  for (const std::string& path : find_measured_files(dirs, excludes)) cases.push_back(load_measured_case(path, graph_dirs));
  if (cases.empty()) throw UsageError("no *.measured.json under the folders given (after --exclude)");
  // One GPU per profile: refuse a mix of devices.
  const std::string kind = cases.front().measured.device_kind;
  for (const MeasuredCase& c : cases)
    if (c.measured.device_kind != kind)
      throw Error(c.path + ": env.device_kind: \"" + c.measured.device_kind + "\", but " + cases.front().path + " has \"" + kind +
                  "\" (fit one GPU at a time)");
  if (base_name.empty()) base_name = kind + "-datasheet";
  const HardwareProfile base = load_hardware_profile(base_name);
  ProfileFit fit = fit_profile(cases, base, name.empty() ? kind : name);
  write_output(out_path, hardware_profile_to_json(fit.profile).dump(1) + "\n");
  std::printf("fitted %s from %zu graphs (%zu kernels timed per node) on %s, base %s%s%s; written to %s\n", fit.profile.name.c_str(),
              fit.cases, fit.samples, cases.front().measured.device.c_str(), base.name.c_str(), fit.borrowed.empty() ? "" : "; borrowed laws: ",
              [&] {
                std::string s;
                for (const auto& b : fit.borrowed) s += (s.empty() ? "" : ", ") + b;
                return s;
              }()
                  .c_str(),
              out_path.c_str());
  return 0;
}

}  // namespace schedlab::cli
