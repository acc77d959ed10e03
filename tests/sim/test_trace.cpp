// The plan's Chrome trace: the simulation's slices unchanged, plus a memory
// counter track that follows the final order's curve and one flow from each
// waited-on collective to its waiter.
#include <catch2/catch.hpp>

#include <map>

#include <nlohmann/json.hpp>

#include "core/io/graph_reader.h"
#include "core/io/plan_writer.h"
#include "core/plan/plan.h"
#include "core/sim/simulate.h"
#include "tests/test_util.h"

namespace {

using nlohmann::json;

}  // namespace

TEST_CASE("the plan trace adds a memory counter track and collective-to-wait flows", "[sim][trace]") {
  schedlab::Graph g = schedlab::load_graph_file(schedlab::test::data_path("exported/fsdp_step_0_inf.post.json"));
  schedlab::PlanOptions opts;
  opts.comm_passes = {"reorder_communication_preserving_peak_memory", "sink_waits_iterative", "overlap_schedule"};
  schedlab::PlanResult r = schedlab::run_plan(g, opts);
  const json slices = json::parse(schedlab::chrome_trace_json(r.planned(), r.simulation));
  const json trace = json::parse(schedlab::plan_trace_json(r));
  const json& events = trace["traceEvents"];

  // The existing events come first, unchanged.
  REQUIRE(events.size() > slices["traceEvents"].size());
  for (std::size_t i = 0; i < slices["traceEvents"].size(); ++i) REQUIRE(events[i] == slices["traceEvents"][i]);

  std::vector<std::int64_t> counter;
  double last_ts = -1;
  std::map<std::int64_t, json> starts, finishes;
  for (const auto& e : events) {
    if (e["ph"] == "C") {
      CHECK(e["name"] == "memory");
      CHECK(e["ts"].get<double>() >= last_ts);  // samples in time order
      last_ts = e["ts"].get<double>();
      counter.push_back(e["args"]["bytes"].get<std::int64_t>());
    } else if (e["ph"] == "s") {
      starts[e["id"].get<std::int64_t>()] = e;
    } else if (e["ph"] == "f") {
      finishes[e["id"].get<std::int64_t>()] = e;
    }
  }
  // One sample per step and one after the last, equal to the final order's curve.
  CHECK(counter == r.final_memory.curve);
  CHECK(*std::max_element(counter.begin(), counter.end()) == r.final_memory.peak);

  // One flow per waited-on collective, from its slice to its waiter's start.
  std::size_t waited = 0;
  std::map<std::string, double> start_of;
  for (const auto& s : r.simulation.spans) start_of[r.planned().nodes[s.node].name] = s.start_us;
  for (std::size_t c = 0; c < r.simulation.collectives.size(); ++c) {
    const auto& ct = r.simulation.collectives[c];
    if (ct.blocked == schedlab::kNone) continue;
    ++waited;
    REQUIRE(starts.count(static_cast<std::int64_t>(c)));
    REQUIRE(finishes.count(static_cast<std::int64_t>(c)));
    CHECK(starts[c]["ts"].get<double>() == ct.start_us);
    CHECK(finishes[c]["ts"].get<double>() == start_of[r.planned().nodes[ct.blocked].name]);
    CHECK(finishes[c]["bp"] == "e");
  }
  CHECK(waited > 0);
  CHECK(starts.size() == waited);
  CHECK(finishes.size() == waited);
}
