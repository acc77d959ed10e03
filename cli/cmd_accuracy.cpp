// schedlab accuracy: estimated against measured per graph and per kernel
// class, with a scatter plot (core/measure/accuracy.h).
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "core/io/files.h"
#include "core/io/measured_reader.h"
#include "core/io/profiles.h"
#include "core/measure/accuracy.h"
#include "core/util/error.h"

namespace schedlab::cli {

namespace {

struct AccuracyArgs {
  std::vector<std::string> dirs, graph_dirs, excludes;
  std::string hardware, svg_path, html_path, nodes_path, events_path;
  bool fake_collectives = false, fixed_host_speed = false;
};

int run(const AccuracyArgs& a) {
  const auto& [dirs, graph_dirs, excludes, hardware, svg_path, html_path, nodes_path, events_path, fake_collectives, fixed_host_speed] = a;
  const bool collectives_measured = !fake_collectives;
  const HardwareProfile hw = load_hardware_profile(hardware);
  std::vector<MeasuredCase> cases;
  for (const std::string& path : find_measured_files(dirs, excludes)) cases.push_back(load_measured_case(path, graph_dirs));
  if (cases.empty()) throw UsageError("no *.measured.json under the folders given");
  // Every output the command line names, checked before the work and
  // written together: all of them or none.
  std::vector<std::string> paths;
  for (const std::string* p : {&svg_path, &nodes_path, &events_path, &html_path})
    if (!p->empty()) paths.push_back(*p);
  check_outputs(paths);
  AccuracyReport report = measure_accuracy(cases, hw, collectives_measured, !fixed_host_speed);
  std::vector<OutputText> outputs;
  const std::string svg = svg_path.empty() && html_path.empty() ? std::string() : accuracy_svg(report);  // the plot only when written
  if (!svg_path.empty()) outputs.push_back({svg_path, svg});
  if (!nodes_path.empty()) outputs.push_back({nodes_path, accuracy_nodes_tsv(report)});
  if (!events_path.empty()) outputs.push_back({events_path, memory_events_json(cases)});
  if (!html_path.empty())
    outputs.push_back({html_path, "<!doctype html><html><head><meta charset=\"utf-8\"><title>schedlab accuracy</title></head><body>\n" + svg +
                                      "<pre>" + accuracy_to_text(report) + "</pre></body></html>\n"});
  write_outputs(outputs);
  std::fputs(accuracy_to_text(report).c_str(), stdout);
  return 0;
}

}  // namespace

std::function<int()> define_accuracy(CLI::App& app) {
  auto a = std::make_shared<AccuracyArgs>();
  app.add_option("DIR", a->dirs, "folders of *.measured.json beside their *.post.json")->required();
  app.add_option("--hardware", a->hardware, "the profile to estimate with: " + joined(builtin_profile_names()) + ", or a profile JSON file")
      ->option_text("NAME|FILE")
      ->required();
  add_repeatable_option(app, "--graphs", a->graph_dirs, "where else to look for the *.post.json files; repeatable")->option_text("DIR");
  add_repeatable_option(app, "--exclude", a->excludes, "leave out measured files whose path contains this; repeatable")->option_text("SUBSTRING");
  app.add_flag("--fake-collectives", a->fake_collectives, "the graphs ran on one GPU with the fake process group (its collectives move nothing): leave collectives out of the comparison");
  app.add_flag("--fixed-host-speed", a->fixed_host_speed,
               "price every graph's host at the profile's host speed, not at the speed its file's host probe recorded");
  add_output_option(app, "--svg", a->svg_path, "write the scatter plot here")->option_text("OUT.svg");
  add_output_option(app, "--html", a->html_path, "write the plot and the tables as one page here")->option_text("OUT.html");
  add_output_option(app, "--nodes", a->nodes_path, "write every measured node, estimated against measured, as tab-separated values here")
      ->option_text("OUT.tsv");
  add_output_option(app, "--memory-events", a->events_path, "write memory as executed event by event, per graph, here (scripts/memory_events_diff.py)")
      ->option_text("OUT.json");
  return [a] { return run(*a); };
}

}  // namespace schedlab::cli
