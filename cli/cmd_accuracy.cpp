// schedlab accuracy: estimated against measured per graph and per kernel
// class, with a scatter plot (core/measure/accuracy.h).
#include <cstdio>

#include "cli/commands.h"
#include "core/measure/accuracy.h"
#include "core/util/error.h"

namespace schedlab::cli {

int cmd_accuracy(const Args& args) {
  ArgReader r(args);
  std::vector<std::string> dirs, graph_dirs, excludes;
  std::string hardware, svg_path, html_path;
  bool collectives_measured = true;
  while (!r.done()) {
    std::string a = r.next();
    if (is_flag(a, "--hardware")) hardware = r.value(a);
    else if (is_flag(a, "--svg")) svg_path = r.value(a);
    else if (is_flag(a, "--html")) html_path = r.value(a);
    else if (is_flag(a, "--graphs")) graph_dirs.push_back(r.value(a));
    else if (a == "--fake-collectives") collectives_measured = false;
    else if (is_flag(a, "--exclude")) excludes.push_back(r.value(a));
    else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option \"" + a + "\"");
    else dirs.push_back(a);
  }
  if (dirs.empty()) throw UsageError("missing DIR (a folder of *.measured.json beside their *.post.json)");
  if (hardware.empty()) throw UsageError("missing --hardware NAME|FILE");
  const HardwareProfile hw = load_hardware_profile(hardware);
  std::vector<MeasuredCase> cases;
  for (const std::string& path : find_measured_files(dirs, excludes)) cases.push_back(load_measured_case(path, graph_dirs));
  if (cases.empty()) throw UsageError("no *.measured.json under the folders given");
  AccuracyReport report = measure_accuracy(cases, hw, collectives_measured);
  const std::string svg = accuracy_svg(report);
  if (!svg_path.empty()) write_output(svg_path, svg);
  if (!html_path.empty())
    write_output(html_path, "<!doctype html><html><head><meta charset=\"utf-8\"><title>schedlab accuracy</title></head><body>\n" + svg +
                                "<pre>" + accuracy_to_text(report) + "</pre></body></html>\n");
  std::fputs(accuracy_to_text(report).c_str(), stdout);
  return 0;
}

}  // namespace schedlab::cli
