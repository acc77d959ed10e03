// schedlab fit-profile: measured exports -> a hardware profile with a fitted
// time model (core/measure/fit.h; docs/cost-model.md, "Fitting").
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include <algorithm>

#include "cli/commands.h"
#include "core/graph/builder.h"
#include "core/io/files.h"
#include "core/io/json_input.h"
#include "core/io/measured_reader.h"
#include "core/io/profiles.h"
#include "core/measure/fit.h"
#include "core/plan/plan.h"
#include "core/util/error.h"

namespace schedlab::cli {

namespace {

// The built-in `<kind>-datasheet` profile; an Error naming the measured file
// and its field when there is none.
HardwareProfile datasheet_of(const std::string& kind, const std::string& measured_path) {
  const std::string suffix = "-datasheet";
  std::vector<std::string> kinds;
  for (const std::string& name : builtin_profile_names())
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      kinds.push_back(name.substr(0, name.size() - suffix.size()));
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
    throw Error(measured_path + ": env.device_kind: " + quoted_name(kind) + " has no built-in datasheet profile (kinds: " + joined(kinds) +
                "); give --base NAME|FILE");
  return builtin_profile(kind + suffix);
}

struct FitProfileArgs {
  std::vector<std::string> dirs, excludes, graph_dirs, sweep_dirs, launch_sweep_dirs;
  std::string out_path, base_name, name, sibling_name, comm_path, class_laws, sustained_path, class_laws_from, sibling_terms, carry_classes,
      wrapper_costs;
};

// --sibling-terms: a comma-separated list of law terms by their profile
// field names (docs/cost-model.md, "Law terms").
std::vector<LawTerm> parse_sibling_terms(const std::string& text) {
  std::vector<LawTerm> out;
  if (text.empty()) return out;
  for (const std::string& field : split_list(text, "--sibling-terms")) {
    const std::optional<LawTerm> t = law_term_of_field(field);
    if (!t || law_term_info(*t).base) {
      std::string names;
      for (const LawTermInfo& info : kLawTermInfo)
        if (!info.base) names += (names.empty() ? "" : ", ") + std::string(info.field);
      throw OptionError("--sibling-terms: " + quoted_name(field) + " is not a law term the fit may carry (" + names + ")");
    }
    out.push_back(*t);
  }
  return out;
}

// A comma-separated list of finer classes (`option` names the flag in
// errors, which list the classes and then `also`, the flag's other words).
std::vector<KernelClass> parse_class_list(const std::string& text, const std::string& option, const std::string& also = "") {
  std::vector<KernelClass> out;
  for (const std::string& name : split_list(text, option)) {
    const std::optional<KernelClass> c = parse_kernel_class(name);
    if (!c || !is_fine_class(*c)) {
      std::string names;
      for (KernelClass f : all_fine_classes()) names += (names.empty() ? "" : ", ") + std::string(to_string(f));
      throw OptionError(option + ": " + quoted_name(name) + " is not one of the finer kernel classes (" + names + ")" + also);
    }
    out.push_back(*c);
  }
  return out;
}

// --class-laws: "all", "default" or a comma-separated list of finer classes.
std::vector<KernelClass> parse_class_laws(const std::string& text) {
  if (text.empty() || text == "default") return default_own_law_classes();
  if (text == "all") return all_fine_classes();
  return parse_class_list(text, "--class-laws", ", all or default");
}

// The measured files of one sweep option's folders; none is a usage error
// naming the option.
std::vector<MeasuredCase> load_sweeps(const std::string& option, const std::vector<std::string>& dirs,
                                      const std::vector<std::string>& excludes, const std::vector<std::string>& graph_dirs) {
  std::vector<MeasuredCase> out;
  if (dirs.empty()) return out;
  for (const std::string& path : find_measured_files(dirs, excludes)) out.push_back(load_measured_case(path, graph_dirs));
  if (out.empty()) throw UsageError(option + ": no *.measured.json under " + joined(dirs) + " (after --exclude)");
  return out;
}

int run(const FitProfileArgs& a) {
  const auto& [dirs, excludes, graph_dirs, sweep_dirs, launch_sweep_dirs, out_path, given_base, name, sibling_name, comm_path, class_laws, sustained_path, class_laws_from,
               sibling_term_names, carry_class_names, wrapper_costs_path] = a;
  const std::vector<KernelClass> own_laws = parse_class_laws(class_laws);
  if (!carry_class_names.empty() && class_laws_from.empty()) throw OptionError("--carry-classes: needs --class-laws-from (the profile the laws come from)");
  // The classes --class-laws-from carries: the --class-laws ones, or these.
  const std::vector<KernelClass> carried = carry_class_names.empty() ? own_laws : parse_class_list(carry_class_names, "--carry-classes");
  const std::vector<LawTerm> sibling_terms = parse_sibling_terms(sibling_term_names);
  if (!sibling_terms.empty() && sibling_name.empty()) throw OptionError("--sibling-terms: needs --sibling (the profile the terms come from)");
  std::string base_name = given_base;
  std::vector<MeasuredCase> cases;
  for (const std::string& path : find_measured_files(dirs, excludes)) cases.push_back(load_measured_case(path, graph_dirs));
  if (cases.empty()) throw UsageError("no *.measured.json under the folders given (after --exclude)");
  const std::vector<MeasuredCase> sweeps = load_sweeps("--class-sweep", sweep_dirs, excludes, graph_dirs);
  const std::vector<MeasuredCase> launch_sweeps = load_sweeps("--launch-sweep", launch_sweep_dirs, excludes, graph_dirs);
  const std::optional<WrapperItemCost> item =
      wrapper_costs_path.empty() ? std::nullopt : std::optional<WrapperItemCost>(load_wrapper_item_cost_file(wrapper_costs_path));
  check_outputs({out_path});  // before the fit, which takes a while
  // One GPU per profile: refuse a mix of devices.
  const std::string kind = cases.front().measured.device_kind;
  for (const std::vector<MeasuredCase>* set : {&std::as_const(cases), &sweeps, &launch_sweeps})
    for (const MeasuredCase& c : *set)
      if (c.measured.device_kind != kind)
        throw Error(c.path + ": env.device_kind: " + quoted_name(c.measured.device_kind) + ", but " + cases.front().path + " has " +
                    quoted_name(kind) + " (fit one GPU at a time)");
  // The default base is the kind's built-in datasheet, looked up among the
  // built-in names only: the file's text never names a file to read.
  const HardwareProfile base = !base_name.empty() ? load_hardware_profile(base_name) : datasheet_of(kind, cases.front().path);
  std::optional<HardwareProfile> sibling;
  if (!sibling_name.empty()) {
    sibling = load_hardware_profile(sibling_name);
    if (!sibling->time_model) throw OptionError("--sibling " + sibling_name + ": a profile without a fitted time model");
  }
  std::optional<HardwareProfile> laws_from;
  if (!class_laws_from.empty()) {
    laws_from = load_hardware_profile(class_laws_from);
    if (!laws_from->time_model) throw OptionError("--class-laws-from " + class_laws_from + ": a profile without a fitted time model");
  }
  ProfileFit fit = fit_profile(cases, base, name.empty() ? kind : name, sibling ? &*sibling : nullptr, own_laws, sweeps, sibling_terms,
                               launch_sweeps, item);
  if (laws_from) carry_class_laws(*laws_from, carried, fit.profile);
  if (!comm_path.empty())
    apply_comm_sections(read_json_input(comm_path, kMaxProfileBytes, "a hardware profile's limit"), comm_path, fit.profile);
  if (!sustained_path.empty())
    apply_sustained_rate(read_json_input(sustained_path, kMaxProfileBytes, "a hardware profile's limit"), sustained_path, fit.profile);
  write_output(out_path, hardware_profile_to_json(fit.profile).dump(1) + "\n");
  const std::string launch_calls = launch_sweeps.empty() ? "" : " and " + std::to_string(launch_sweeps.size()) + " launch-sweep calls";
  std::printf("fitted %s from %zu graphs (%zu kernels timed per node)%s on %s, base %s%s%s; written to %s\n", fit.profile.name.c_str(),
              fit.cases, fit.samples, launch_calls.c_str(), quoted_name(cases.front().measured.device).c_str(), base.name.c_str(), fit.borrowed.empty() ? "" : "; borrowed laws: ",
              [&] {
                std::string s;
                for (const auto& b : fit.borrowed) s += (s.empty() ? "" : ", ") + b;
                return s;
              }()
                  .c_str(),
              out_path.c_str());
  return 0;
}

}  // namespace

std::function<int()> define_fit_profile(CLI::App& app) {
  auto a = std::make_shared<FitProfileArgs>();
  app.add_option("DIR", a->dirs, "folders of *.measured.json beside their *.post.json")->required();
  add_output_option(app, "-o,--output", a->out_path, "the fitted profile to write")->option_text("PROFILE.json")->required();
  add_repeatable_option(app, "--graphs", a->graph_dirs, "where else to look for the *.post.json files; repeatable")->option_text("DIR");
  app.add_option("--base", a->base_name, "the profile whose laws a class without measurements borrows (default DEVICE-datasheet): " +
                                              joined(builtin_profile_names()) + ", or a profile JSON file")
      ->option_text("NAME|FILE");
  app.add_option("--name", a->name, "the fitted profile's name (default the device kind)");
  app.add_option("--sibling", a->sibling_name,
                 "a fitted profile of a GPU of the same chip (the H200 for the H100): a law term too few of these measurements "
                 "exercise takes its factor (default: such terms are 0)")
      ->option_text("NAME|FILE");
  app.add_option("--sibling-terms", a->sibling_terms,
                 "law terms (profile field names, comma-separated) that take the --sibling's factors whatever these measurements "
                 "exercise: terms whose sweep ran on the sibling's GPU alone")
      ->option_text("FIELD,...");
  app.add_option("--comm", a->comm_path,
                 "measured collective curves and contention law to carry into the profile (scripts/fit-comm.py -o, "
                 "from python/dist/comm_sweep.py's sweeps on this machine)")
      ->option_text("FILE");
  app.add_option("--sustained", a->sustained_path,
                 "the sustained tensor-core rate of long 16-bit matmuls to carry into the time model "
                 "(scripts/fit-sustained-rate.py -o, from measured steps on this machine)")
      ->option_text("FILE");
  app.add_option("--class-laws", a->class_laws,
                 "finer kernel classes fitted with a law of their own when measured on 5 nodes or more (the others fit their "
                 "parent's law): all, default (indexing, scatter, extern_memory) or a comma-separated list")
      ->option_text("all|default|CLASS,...");
  add_repeatable_option(app, "--class-sweep", a->sweep_dirs,
                        "folders of measured sweeps (python/zoo/class_sweep.py) whose nodes fit only the finer classes' own laws "
                        "(--class-laws): the other laws and the launch path are fitted on the DIR folders alone; repeatable")
      ->option_text("DIR");
  add_repeatable_option(app, "--launch-sweep", a->launch_sweep_dirs,
                        "folders of measured calls (python/zoo/class_sweep.py's launch_path_sweep) whose device-bound leads "
                        "fit the call's host epilogue instead of the DIR folders' calls; they fit no other figure; repeatable")
      ->option_text("DIR");
  app.add_option("--class-laws-from", a->class_laws_from,
                 "a fitted profile of a GPU of the same chip: the --class-laws classes these measurements fit no law for "
                 "(no class sweep of this GPU) take its laws")
      ->option_text("NAME|FILE");
  app.add_option("--carry-classes", a->carry_classes,
                 "the finer classes (comma-separated) --class-laws-from carries, where these measurements fit no law of their own "
                 "(default: the --class-laws ones)")
      ->option_text("CLASS,...");
  app.add_option("--wrapper-costs", a->wrapper_costs,
                 "the wrapper's operations timed one by one on this GPU's host (python/zoo/wrapper_host_probe.py): an item of "
                 "a multi-output result costs its tuple index and size assert there, restated at the fit's host speed, "
                 "instead of a fitted figure")
      ->option_text("FILE");
  add_repeatable_option(app, "--exclude", a->excludes, "leave out measured files whose path contains this; repeatable")->option_text("SUBSTRING");
  return [a] { return run(*a); };
}

}  // namespace schedlab::cli
