// schedlab bucket-caps: per collective kind, the largest bucket the model
// still gains from on a profile at a group size (core/comms/bucketing.h
// bucket_caps). schedlab_export.apply reads the JSON form to size
// Inductor's FX bucketing passes.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/comms/bucketing.h"
#include "core/io/json_writer.h"

namespace schedlab::cli {
namespace {

struct BucketCapsArgs {
  HardwareProfile hw = builtin_profile(kDefaultHardwareProfile);
  std::int64_t group_size = 0;
  std::string format = "text";
};

constexpr double kMiB = 1024.0 * 1024.0;

std::string caps_json(const HardwareProfile& hw, std::int64_t group_size, const std::vector<BucketCap>& caps) {
  JsonWriter w;
  w.begin_object().field("format", "schedlab-bucket-caps/1").field("hardware", hw.name).field("group_size", group_size);
  w.key("caps").begin_object();
  for (const BucketCap& c : caps) {
    w.key(to_string(c.kind)).begin_object();
    w.field("payload_bytes", c.payload_bytes).field("inductor_bytes", c.inductor_bytes).field("inductor_mib", c.inductor_bytes / kMiB);
    w.field("separate_us", c.separate_us).field("merged_us", c.merged_us);
    w.end_object();
  }
  w.end_object().end_object();
  return w.text() + "\n";
}

std::string caps_text(const HardwareProfile& hw, std::int64_t group_size, const std::vector<BucketCap>& caps) {
  std::string out = "bucket caps on " + hw.name + ", group of " + std::to_string(group_size) + " (the largest bucket that two equal members still gain from):\n";
  char line[256];
  for (const BucketCap& c : caps) {
    if (c.payload_bytes == 0) {
      std::snprintf(line, sizeof line, "  %-15s none: merging two members never pays\n", std::string(to_string(c.kind)).c_str());
    } else {
      std::snprintf(line, sizeof line, "  %-15s %9.2f MiB payload, %9.2f MiB as Inductor sizes it; two halves apart %.1f us, bucket %.1f us\n",
                    std::string(to_string(c.kind)).c_str(), c.payload_bytes / kMiB, c.inductor_bytes / kMiB, c.separate_us, c.merged_us);
    }
    out += line;
  }
  return out;
}

int run(const BucketCapsArgs& a) {
  const std::vector<BucketCap> caps = bucket_caps(a.hw, a.group_size);
  const std::string out = a.format == "json" ? caps_json(a.hw, a.group_size, caps) : caps_text(a.hw, a.group_size, caps);
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

std::function<int()> define_bucket_caps(CLI::App& app) {
  auto a = std::make_shared<BucketCapsArgs>();
  add_hardware_option(app, a->hw);
  add_int_option(app, "--group-size", a->group_size, 2, 1 << 20, "ranks in the collectives' group")->required();
  add_choice_option(app, "--format", a->format, {"text", "json"}, "text (default) or json (schedlab-bucket-caps/1)");
  return [a] { return run(*a); };
}

}  // namespace schedlab::cli
