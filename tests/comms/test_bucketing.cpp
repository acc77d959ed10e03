// Bucketing (core/comms/bucketing.h): buckets keep to one kind, group and
// dtype; no bucket closes a cycle (random graphs, against a plain
// contraction of the buckets and Kahn's algorithm); the staging bytes keep
// to the memory budget (against a plain walk of the memory curve); the
// plan's simulated step with buckets is no slower than without on a
// generated FSDP step; Inductor 2.11's greedy rules on a hand-made case; the
// plan's `buckets` and plans without the pass unchanged.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/comms/bucketing.h"
#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/gen/distributed.h"
#include "core/io/graph_reader.h"
#include "core/io/plan_writer.h"
#include "core/io/profiles.h"
#include "core/memory/estimate.h"
#include "core/memory/planning_info.h"
#include "core/plan/plan.h"
#include "tests/test_util.h"

using namespace schedlab;
using nlohmann::json;

namespace {

using test::SplitMix;

// Latency-bound prices: 20 us per collective plus 1 us per MiB, copies
// 0.1 us per MiB; merging small collectives always pays.
std::shared_ptr<const CollectivePrices> latency_prices() {
  auto p = std::make_shared<CollectivePrices>();
  p->collective_us = [](CollectiveOp, std::int64_t bytes, std::int64_t) { return 20.0 + static_cast<double>(bytes) / (1 << 20); };
  p->copy_us = [](std::int64_t bytes, std::string_view) { return 0.1 * static_cast<double>(bytes) / (1 << 20); };
  return p;
}

CommGraph priced(const Graph& g, std::shared_ptr<const CollectivePrices> prices = latency_prices()) {
  CommGraph cg = build_comm_graph(g, estimate_runtimes_us(g, builtin_profile(kDefaultHardwareProfile)));
  cg.prices = std::move(prices);
  return cg;
}

// A random graph in topological order: compute nodes reading earlier
// buffers, collectives of three kinds, two group sizes and two dtypes, each
// read by a wait a few nodes later; compute may read the waits' results,
// so later collectives depend on earlier ones.
Graph random_bucket_graph(std::uint64_t seed, int nodes) {
  SplitMix rng{seed};
  json g = {{"format", "schedgraph/1"}, {"name", "random"}, {"world_size", 8},
            {"inputs", json::array({{{"name", "x"}, {"bytes", 4096}, {"dtype", "bf16"}}})}, {"outputs", json::array()}};
  json list = json::array();
  std::vector<std::string> bufs = {"x"};
  std::vector<std::pair<int, std::string>> pending_waits;  // (at node index, collective output)
  const char* ops[] = {"_c10d_functional.all_gather_into_tensor.default", "_c10d_functional.reduce_scatter_tensor.default",
                       "_c10d_functional.all_reduce.default"};
  for (int i = 0; i < nodes; ++i) {
    const std::string name = "n" + std::to_string(i);
    const std::string out = "b" + std::to_string(i);
    auto due = std::find_if(pending_waits.begin(), pending_waits.end(), [i](const auto& w) { return w.first <= i; });
    json node;
    if (due != pending_waits.end()) {
      node = {{"name", name}, {"kind", "wait"}, {"reads", json::array({{{"name", due->second}, {"dep", "star"}}})},
              {"outputs", json::array({{{"name", out}, {"bytes", 0}, {"layout", "none"}}})}};
      pending_waits.erase(due);
      // the wait's result is the collective's buffer: later compute reads that one
      bufs.push_back(node["reads"][0]["name"]);
    } else if (rng.chance(35)) {
      const std::string& read = bufs[rng.below(static_cast<int>(bufs.size()))];
      const std::int64_t bytes = 4096LL << rng.below(8);
      node = {{"name", name}, {"kind", "collective"}, {"reads", json::array({{{"name", read}, {"dep", "star"}, {"bytes", bytes}}})},
              {"outputs", json::array({{{"name", out}, {"bytes", bytes}, {"dtype", rng.chance(50) ? "bf16" : "f32"}}})},
              {"collective", {{"op", ops[rng.below(3)]}, {"group_size", rng.chance(70) ? 8 : 4}, {"bytes", bytes}}}};
      pending_waits.emplace_back(i + 1 + rng.below(6), out);
    } else {
      json reads = json::array();
      const int k = 1 + rng.below(2);
      for (int r = 0; r < k; ++r) reads.push_back({{"name", bufs[rng.below(static_cast<int>(bufs.size()))]}, {"dep", "star"}, {"bytes", 4096}});
      node = {{"name", name}, {"kind", "pointwise"}, {"reads", reads},
              {"outputs", json::array({{{"name", out}, {"bytes", 4096LL << rng.below(6)}, {"dtype", "bf16"}}})}};
      bufs.push_back(out);
    }
    list.push_back(node);
  }
  for (std::size_t w = 0; w < pending_waits.size(); ++w)
    list.push_back({{"name", "tail" + std::to_string(w)}, {"kind", "wait"},
                    {"reads", json::array({{{"name", pending_waits[w].second}, {"dep", "star"}}})},
                    {"outputs", json::array({{{"name", "tb" + std::to_string(w)}, {"bytes", 0}, {"layout", "none"}}})}});
  g["nodes"] = list;
  return load_graph(g.dump());
}

// The plain reference: contract every bucket into one vertex and run Kahn's
// algorithm over the data dependencies; a dependency between two members of
// one bucket is a self-loop, a cycle too.
bool contracted_graph_is_acyclic(const CommGraph& cg, const std::vector<CollectiveBucket>& buckets) {
  const Graph& g = *cg.graph;
  const int n = g.num_nodes();
  std::vector<int> vertex(n);
  for (int v = 0; v < n; ++v) vertex[v] = v;
  for (const auto& b : buckets)
    for (NodeId m : b.members) vertex[m] = n + static_cast<int>(&b - buckets.data());
  const int nv = n + static_cast<int>(buckets.size());
  std::vector<std::set<int>> succ(nv);
  for (int v = 0; v < n; ++v)
    for (BufId buf : cg.data_bufs.row(v)) {
      const NodeId p = g.buffers[buf].producer;
      if (p == kNone) continue;
      if (vertex[p] == vertex[v]) return false;
      succ[vertex[p]].insert(vertex[v]);
    }
  std::vector<int> indeg(nv, 0), used(nv, 0);
  for (int v = 0; v < n; ++v) used[vertex[v]] = 1;
  for (int u = 0; u < nv; ++u)
    for (int w : succ[u]) ++indeg[w];
  std::vector<int> ready;
  int vertices = 0, done = 0;
  for (int u = 0; u < nv; ++u)
    if (used[u]) {
      ++vertices;
      if (indeg[u] == 0) ready.push_back(u);
    }
  while (!ready.empty()) {
    const int u = ready.back();
    ready.pop_back();
    ++done;
    for (int w : succ[u])
      if (--indeg[w] == 0) ready.push_back(w);
  }
  return done == vertices;
}

bool contiguous(const Order& order, const CollectiveBucket& b) {
  std::vector<std::int32_t> pos;
  for (NodeId m : b.members) pos.push_back(static_cast<std::int32_t>(std::find(order.begin(), order.end(), m) - order.begin()));
  std::sort(pos.begin(), pos.end());
  return pos.back() - pos.front() + 1 == static_cast<std::int32_t>(pos.size());
}

Graph small_fsdp() {
  DistributedGraphSpec spec;
  spec.layers = 6;
  spec.hidden = 512;  // 2 MiB of parameters per layer: latency-bound collectives
  spec.tokens = 4096;
  return generate_distributed_graph(spec);
}

}  // namespace

TEST_CASE("buckets keep to one kind, group size and dtype", "[comms][bucketing]") {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const Graph g = random_bucket_graph(seed, 80);
    const CommGraph cg = priced(g);
    for (BucketMode mode : {BucketMode::Model, BucketMode::Inductor}) {
      BucketOptions opts;
      opts.mode = mode;
      opts.memory_budget = std::int64_t{1} << 50;
      for (const CollectiveBucket& b : plan_buckets(cg, g.baseline_order(), opts)) {
        REQUIRE(b.members.size() >= 2);
        for (NodeId m : b.members) {
          CHECK(bucketable(g, m, mode));
          CHECK(bucket_key(g, m) == b.key);
        }
      }
    }
  }
  // Three independent all-gathers of one key and one of each other key:
  // the model merges the three, and only them.
  std::string nodes;
  const std::pair<const char*, int> kinds[] = {{"bf16", 8}, {"bf16", 8}, {"f32", 8}, {"bf16", 4}, {"bf16", 8}};
  json list = json::array();
  for (int i = 0; i < 5; ++i) {
    const std::string c = "ag" + std::to_string(i), out = c + "_out";
    list.push_back({{"name", c}, {"kind", "collective"}, {"reads", json::array({{{"name", "p" + std::to_string(i)}, {"dep", "star"}, {"bytes", 8192}}})},
                    {"outputs", json::array({{{"name", out}, {"bytes", 65536}, {"dtype", kinds[i].first}}})},
                    {"collective", {{"op", "_c10d_functional.all_gather_into_tensor.default"}, {"group_size", kinds[i].second}, {"bytes", 65536}}}});
  }
  for (int i = 0; i < 5; ++i)
    list.push_back({{"name", "wait" + std::to_string(i)}, {"kind", "wait"}, {"reads", json::array({{{"name", "ag" + std::to_string(i) + "_out"}, {"dep", "star"}}})},
                    {"outputs", json::array({{{"name", "w" + std::to_string(i)}, {"bytes", 0}, {"layout", "none"}}})}});
  json inputs = json::array();
  for (int i = 0; i < 5; ++i) inputs.push_back({{"name", "p" + std::to_string(i)}, {"bytes", 8192}});
  const Graph g = load_graph(json{{"format", "schedgraph/1"}, {"name", "keys"}, {"world_size", 8}, {"inputs", inputs},
                                  {"outputs", json::array()}, {"nodes", list}}.dump());
  const CommGraph cg = priced(g);
  BucketOptions opts;
  opts.memory_budget = std::int64_t{1} << 40;
  const auto buckets = plan_buckets(cg, g.baseline_order(), opts);
  REQUIRE(buckets.size() == 1);
  CHECK(test::names(g, buckets[0].members) == std::vector<std::string>{"ag0", "ag1", "ag4"});
  CHECK(buckets[0].bytes == 3 * 65536);
  CHECK(buckets[0].copy_in_bytes == 3 * 8192);
  CHECK(buckets[0].copy_out_bytes == 3 * 65536);
  CHECK(buckets[0].separate_us == Approx(3 * (20.0 + 65536.0 / (1 << 20))));
  CHECK(buckets[0].bucketed_us() < buckets[0].separate_us);
  // Inductor's runs stop at another key: ag0, ag1 | ag2 | ag3 | ag4.
  opts.mode = BucketMode::Inductor;
  const auto inductor = plan_buckets(cg, g.baseline_order(), opts);
  REQUIRE(inductor.size() == 1);
  CHECK(test::names(g, inductor[0].members) == std::vector<std::string>{"ag0", "ag1"});
}

TEST_CASE("no bucket closes a cycle, and the bucketed order is topological", "[comms][bucketing]") {
  int bucketed = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const Graph g = random_bucket_graph(seed * 7919, 30 + static_cast<int>(seed % 60));
    const CommGraph cg = priced(g);
    for (BucketMode mode : {BucketMode::Model, BucketMode::Inductor}) {
      BucketOptions opts;
      opts.mode = mode;
      opts.memory_budget = std::int64_t{1} << 50;
      auto buckets = plan_buckets(cg, g.baseline_order(), opts);
      INFO("seed " << seed << (mode == BucketMode::Model ? " model" : " inductor"));
      if (mode == BucketMode::Model) CHECK(contracted_graph_is_acyclic(cg, buckets));
      // Inductor's greedy is per kind: within a bucket no member descends from another.
      for (std::size_t i = 0; i < buckets.size(); ++i) CHECK(contracted_graph_is_acyclic(cg, {buckets[i]}));
      const Order order = order_with_buckets(cg, g.baseline_order(), buckets);
      CHECK(respects_comm_deps(cg, order));
      if (mode == BucketMode::Model)
        for (const auto& b : buckets) CHECK(contiguous(order, b));
      bucketed += static_cast<int>(buckets.size());
    }
  }
  CHECK(bucketed > 100);  // the random graphs do give buckets to check
}

TEST_CASE("a bucket's staging bytes keep to the memory budget", "[comms][bucketing]") {
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const Graph g = random_bucket_graph(seed * 104729, 80);
    const CommGraph cg = priced(g);
    const Order order = g.baseline_order();
    const MemoryPlanningInfo info = compute_planning_info(g, order);
    const AllocFreeEstimate memory = estimate_peak_memory_allocfree(g, info, order);
    std::vector<std::int32_t> pos(g.num_nodes());
    for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = static_cast<std::int32_t>(i);
    for (double share : {0.0, 0.5, 1.5}) {
      BucketOptions opts;
      opts.memory_budget = static_cast<std::int64_t>(static_cast<double>(memory.peak) * (1 + share));
      for (const CollectiveBucket& b : plan_buckets(cg, order, opts)) {
        // The window: from the first member to the last first reader of a member.
        std::int32_t lo = static_cast<std::int32_t>(order.size()), hi = 0;
        for (NodeId m : b.members) {
          lo = std::min(lo, pos[m]);
          std::int32_t reader = static_cast<std::int32_t>(order.size()) - 1;
          for (std::size_t i = pos[m] + 1; i < order.size(); ++i) {
            bool reads = false;
            for (BufId buf : cg.data_bufs.row(order[i])) reads |= g.buffers[buf].producer == m;
            if (reads) {
              reader = static_cast<std::int32_t>(i);
              break;
            }
          }
          hi = std::max(hi, reader);
        }
        std::int64_t live = 0;
        for (std::int32_t i = lo; i <= hi; ++i) live = std::max(live, memory.post_alloc[i]);
        CHECK(live + b.extra_live_bytes <= opts.memory_budget);
        ++checked;
      }
    }
    // No room at all: no bucket.
    BucketOptions none;
    none.memory_budget = 0;
    CHECK(plan_buckets(cg, order, none).empty());
  }
  CHECK(checked > 20);
}

TEST_CASE("buckets never slow the simulated FSDP step, and plans without them stay as they were", "[comms][bucketing]") {
  auto graph = std::make_shared<const Graph>(small_fsdp());
  PlanOptions opts;
  opts.fuse = false;
  const PlanResult without = run_plan(graph, opts);
  for (const std::vector<std::string>& passes : {std::vector<std::string>{"bucket_collectives"},
                                                 std::vector<std::string>{"overlap_schedule", "bucket_collectives"}}) {
    PlanOptions with_opts = opts;
    with_opts.comm_passes = passes;
    const PlanResult with = run_plan(graph, with_opts);
    const auto buckets = pipeline_buckets(*with.comm);
    INFO(passes.size() << " passes");
    CHECK(!buckets.empty());
    CHECK(with.simulation.step_time_us <= without.simulation.step_time_us);
    CHECK(with.bucketed_pricing != nullptr);
    CHECK(respects_comm_deps(with.comm->final_graph, with.order));
    for (const auto& b : buckets) CHECK(contiguous(with.order, b));
    // The plan describes each bucket.
    const json plan = json::parse(plan_text_json(with_opts, with));
    const json& written = plan["comm"]["passes"].back()["buckets"];
    REQUIRE(written.size() == buckets.size());
    CHECK(written[0]["members"].size() == buckets[0].members.size());
    CHECK(written[0]["kind"] == std::string(to_string(buckets[0].key.kind)));
    CHECK(written[0]["separate_us"].get<double>() == Approx(buckets[0].separate_us));
  }
  // Without the pass: no buckets anywhere, no bucketed pricing, no `buckets` key.
  PlanOptions overlap = opts;
  overlap.comm_passes = {"overlap_schedule"};
  const PlanResult plain = run_plan(graph, overlap);
  CHECK(plain.bucketed_pricing == nullptr);
  CHECK(plan_text_json(overlap, plain).find("\"buckets\"") == std::string::npos);
}

TEST_CASE("Inductor's bucketing: the cap and descendants", "[comms][bucketing]") {
  // Four all-gathers of one key, waits in order; ag2 reads ag1's result
  // (a descendant of the bucket: skipped, left alone), and the cap holds two
  // of the others.
  json list = json::array();
  auto ag = [&](int i, const std::string& read) {
    list.push_back({{"name", "ag" + std::to_string(i)}, {"kind", "collective"}, {"reads", json::array({{{"name", read}, {"dep", "star"}, {"bytes", 1 << 20}}})},
                    {"outputs", json::array({{{"name", "ag" + std::to_string(i) + "_out"}, {"bytes", 8 << 20}, {"dtype", "bf16"}}})},
                    {"collective", {{"op", "_c10d_functional.all_gather_into_tensor.default"}, {"group_size", 8}, {"bytes", 8 << 20}}}});
    list.push_back({{"name", "wait" + std::to_string(i)}, {"kind", "wait"}, {"reads", json::array({{{"name", "ag" + std::to_string(i) + "_out"}, {"dep", "star"}}})},
                    {"outputs", json::array({{{"name", "w" + std::to_string(i)}, {"bytes", 0}, {"layout", "none"}}})}});
  };
  ag(0, "p0");
  ag(1, "p1");
  ag(2, "ag1_out");
  ag(3, "p3");
  ag(4, "p4");
  json inputs = json::array();
  for (int i : {0, 1, 3, 4}) inputs.push_back({{"name", "p" + std::to_string(i)}, {"bytes", 1 << 20}});
  const Graph g = load_graph(json{{"format", "schedgraph/1"}, {"name", "cap"}, {"world_size", 8}, {"inputs", inputs},
                                  {"outputs", json::array()}, {"nodes", list}}.dump());
  const CommGraph cg = priced(g);
  BucketOptions opts;
  opts.mode = BucketMode::Inductor;
  opts.inductor_cap_mb.fill(16);  // two 8 MiB all-gathers per bucket
  auto buckets = plan_buckets(cg, g.baseline_order(), opts);
  REQUIRE(buckets.size() == 2);
  CHECK(test::names(g, buckets[0].members) == std::vector<std::string>{"ag0", "ag1"});
  CHECK(test::names(g, buckets[1].members) == std::vector<std::string>{"ag3", "ag4"});
  // Inductor's default cap (2000 MB) takes every collective that does not descend from the bucket.
  opts.inductor_cap_mb.fill(2000);
  buckets = plan_buckets(cg, g.baseline_order(), opts);
  REQUIRE(buckets.size() == 1);
  CHECK(test::names(g, buckets[0].members) == std::vector<std::string>{"ag0", "ag1", "ag3", "ag4"});
  // The pass registry has both passes, and the plan takes them by name.
  CHECK(find_comm_pass("bucket_collectives") != nullptr);
  CHECK(find_comm_pass("bucket_collectives_inductor") != nullptr);
}

TEST_CASE("huge collectives saturate the bucket's sizes instead of wrapping", "[comms][bucketing]") {
  const std::int64_t huge = std::int64_t{1} << 58;  // the graph's sizes (inputs, reads, outputs, payloads) sum to 2^62
  json list = json::array(), inputs = json::array();
  for (int i = 0; i < 4; ++i) {
    const std::string c = "rs" + std::to_string(i);
    inputs.push_back({{"name", "p" + std::to_string(i)}, {"bytes", huge}});
    list.push_back({{"name", c}, {"kind", "collective"}, {"reads", json::array({{{"name", "p" + std::to_string(i)}, {"dep", "star"}, {"bytes", huge}}})},
                    {"outputs", json::array({{{"name", c + "_out"}, {"bytes", huge}, {"dtype", "bf16"}}})},
                    {"collective", {{"op", "_c10d_functional.reduce_scatter_tensor.default"}, {"group_size", 8}, {"bytes", huge}}}});
  }
  for (int i = 0; i < 4; ++i)
    list.push_back({{"name", "wait" + std::to_string(i)}, {"kind", "wait"}, {"reads", json::array({{{"name", "rs" + std::to_string(i) + "_out"}, {"dep", "star"}}})},
                    {"outputs", json::array({{{"name", "w" + std::to_string(i)}, {"bytes", 0}, {"layout", "none"}}})}});
  const Graph g = load_graph(json{{"format", "schedgraph/1"}, {"name", "huge"}, {"world_size", 8}, {"inputs", inputs},
                                  {"outputs", json::array()}, {"nodes", list}}.dump());
  const CommGraph cg = priced(g);
  BucketOptions opts;
  opts.memory_budget = std::numeric_limits<std::int64_t>::max();
  opts.mode = BucketMode::Inductor;
  opts.inductor_cap_mb.fill(1e300);  // no cap: all four in one bucket
  const auto buckets = plan_buckets(cg, g.baseline_order(), opts);
  REQUIRE(buckets.size() == 1);
  CHECK(buckets[0].members.size() == 4);
  CHECK(buckets[0].bytes == 4 * huge);
  CHECK(buckets[0].copy_in_bytes == std::numeric_limits<std::int64_t>::max());  // 8 x 2^58 = 2^61 each, 2^63 in all: saturates
  CHECK(buckets[0].extra_live_bytes == std::numeric_limits<std::int64_t>::max());
  // The model finds no bucket that pays for copies of that size, and the budget refuses none wrongly.
  opts.mode = BucketMode::Model;
  CHECK(plan_buckets(cg, g.baseline_order(), opts).empty());
}

TEST_CASE("bucket caps: a peer wait per collective makes merging pay up to larger buckets", "[comms][bucketing]") {
  // The trial profile (the built-in h200 with the fitted peer wait at 4 ranks,
  // docs/cost-model.md "Peer wait"): each collective saved saves its wait too.
  // The caps price a collective alone, so they see the wait of one on an idle
  // compute stream (all_gather 84.0 us, reduce_scatter 73.4, all_reduce 28.4),
  // not the longer one beside compute.
  const HardwareProfile trial = load_hardware_profile(test::data_path("../../profiles/h200-peer-wait.json"));
  const auto with_wait = bucket_caps(trial, 4), without = bucket_caps(builtin_profile("h200"), 4);
  REQUIRE(with_wait.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    INFO(to_string(with_wait[k].kind));
    CHECK(with_wait[k].inductor_bytes >= without[k].inductor_bytes);
  }
  // all_gather and reduce_scatter 181 -> 362 MiB as Inductor sizes them (the reduce-scatter's
  // halves and bucket within 0.1 us of each other there: 256 MiB while the items' host figure was
  // fitted, session 25); all_reduce's 28 us do not move its 128 MiB.
  CHECK(with_wait[0].inductor_bytes / double(1 << 20) == Approx(362.04).epsilon(1e-4));
  CHECK(with_wait[1].inductor_bytes / double(1 << 20) == Approx(362.04).epsilon(1e-4));
  CHECK(with_wait[2].inductor_bytes == without[2].inductor_bytes);
  // At 2 ranks no wait was measured: the caps are the built-in's.
  const auto two = bucket_caps(trial, 2), two_built_in = bucket_caps(builtin_profile("h200"), 2);
  for (std::size_t k = 0; k < 3; ++k) CHECK(two[k].inductor_bytes == two_built_in[k].inductor_bytes);
}

TEST_CASE("bucket caps: every size up to the cap gains, the next size does not, on the built-in profiles", "[comms][bucketing]") {
  for (const std::string name : {"h200", "h100-sxm", "h200-datasheet"}) {
    const HardwareProfile& hw = builtin_profile(name);
    for (std::int64_t group : {2, 4, 8}) {
      const auto caps = bucket_caps(hw, group);
      REQUIRE(caps.size() == 3);
      CHECK(caps[0].kind == CollectiveOp::AllGather);
      CHECK(caps[1].kind == CollectiveOp::ReduceScatter);
      CHECK(caps[2].kind == CollectiveOp::AllReduce);
      for (const BucketCap& c : caps) {
        INFO(name << " group " << group << " " << to_string(c.kind));
        CHECK(c.group_size == group);
        if (c.payload_bytes == 0) continue;
        CHECK(c.merged_us < c.separate_us);
        CHECK(c.payload_bytes % (2 * 16 * group) == 0);  // two halves of whole 16-byte shard units
        const StagingBytes s = staging_bytes(c.kind, c.payload_bytes, group);
        CHECK(c.inductor_bytes == std::max(s.in, s.out));
        // The bucket at the cap, priced again from its parts: the rule as documented.
        const auto prices = collective_prices(group, hw);
        const double host_issue = hw.collective_times && hw.collective_times->host_us_per_issue > 0 ? hw.collective_times->host_us_per_issue
                                  : hw.time_model                                                ? hw.time_model->host_us_per_collective
                                                                                                 : 0.0;
        const double host_kernel = hw.time_model ? hw.time_model->host_us_per_kernel : 0.0;
        const double separate = 2 * (prices->collective_us(c.kind, c.payload_bytes / 2, group) + host_issue);
        const double merged = prices->collective_us(c.kind, c.payload_bytes, group) + host_issue + prices->copy_us(s.in, "bf16") +
                              prices->copy_us(s.out, "bf16") + 2 * host_kernel;
        CHECK(separate == Approx(c.separate_us));
        CHECK(merged == Approx(c.merged_us));
      }
    }
  }
  // Staging bytes per kind (the flat buffers Inductor's merge functions allocate).
  CHECK(staging_bytes(CollectiveOp::AllGather, 4096, 4).in == 1024);
  CHECK(staging_bytes(CollectiveOp::AllGather, 4096, 4).out == 4096);
  CHECK(staging_bytes(CollectiveOp::ReduceScatter, 4096, 4).in == 16384);
  CHECK(staging_bytes(CollectiveOp::AllReduce, 4096, 4).in == 4096);
  CHECK_THROWS_WITH(bucket_caps(builtin_profile("h200"), 1), Catch::Contains("group size must be 2 or more"));
}

TEST_CASE("bucket_collectives_inductor takes its caps per kind from the knobs", "[comms][bucketing]") {
  // Two 8 MiB all-gathers then two 8 MiB all-reduces, each pair independent.
  json list = json::array(), inputs = json::array();
  auto add = [&](const std::string& c, const std::string& op, const std::string& in) {
    inputs.push_back({{"name", in}, {"bytes", 8 << 20}});
    list.push_back({{"name", c}, {"kind", "collective"}, {"reads", json::array({{{"name", in}, {"dep", "star"}, {"bytes", 8 << 20}}})},
                    {"outputs", json::array({{{"name", c + "_out"}, {"bytes", 8 << 20}, {"dtype", "bf16"}}})},
                    {"collective", {{"op", op}, {"group_size", 4}, {"bytes", 8 << 20}}}});
  };
  add("ag0", "_c10d_functional.all_gather_into_tensor.default", "p0");
  add("ag1", "_c10d_functional.all_gather_into_tensor.default", "p1");
  add("ar0", "_c10d_functional.all_reduce.default", "p2");
  add("ar1", "_c10d_functional.all_reduce.default", "p3");
  for (const std::string c : {"ag0", "ag1", "ar0", "ar1"})
    list.push_back({{"name", "wait_" + c}, {"kind", "wait"}, {"reads", json::array({{{"name", c + "_out"}, {"dep", "star"}}})},
                    {"outputs", json::array({{{"name", "w_" + c}, {"bytes", 0}, {"layout", "none"}}})}});
  const Graph g = load_graph(json{{"format", "schedgraph/1"}, {"name", "caps"}, {"world_size", 4}, {"inputs", inputs},
                                  {"outputs", json::array()}, {"nodes", list}}.dump());
  const CommGraph cg = priced(g);
  CommKnobs knobs;
  auto members = [&](const CommKnobs& k) {
    std::vector<std::vector<std::string>> out;
    for (const CollectiveBucket& b : find_comm_pass("bucket_collectives_inductor")->run(cg, g.baseline_order(), k).buckets)
      out.push_back(test::names(g, b.members));
    return out;
  };
  CHECK(members(knobs).size() == 2);  // Inductor's 2000 MB: both pairs
  knobs.bucket_all_reduces_fx_bucket_cap_mib = 8;  // one 8 MiB all-reduce fills a bucket
  CHECK(members(knobs) == std::vector<std::vector<std::string>>{{"ag0", "ag1"}});
  knobs.bucket_all_gathers_fx_bucket_cap_mib = 0;
  CHECK(members(knobs).empty());
  knobs.bucket_reduce_scatters_fx_bucket_cap_mib = 1;  // no reduce-scatter here: nothing changes
  knobs.bucket_all_reduces_fx_bucket_cap_mib = 16;
  CHECK(members(knobs) == std::vector<std::vector<std::string>>{{"ar0", "ar1"}});
  // A plan names the knobs only when set.
  CHECK(comm_knobs_json(CommKnobs{}).find("bucket_all_gathers_fx_bucket_cap_mib") == std::string::npos);
  CHECK(comm_knobs_json(knobs).find("\"bucket_all_reduces_fx_bucket_cap_mib\":16") != std::string::npos);
}

TEST_CASE("a bucket stays one unit through the passes after it: its first member waits for every member's input", "[comms][bucketing]") {
  // A backward's shape: reduce-scatter rs0 of g0, then a long stretch of compute, then g1 and its reduce-scatter rs1.
  // overlap_schedule_step would issue rs0 early; bucketed with rs1, the merged collective needs g1 too.
  json list = json::array(), inputs = json::array({{{"name", "x"}, {"bytes", 64 << 20}}});
  auto compute = [&](const std::string& name, const std::string& in) {
    list.push_back({{"name", name}, {"kind", "extern"}, {"kernel", "extern_kernels.mm"}, {"flops", std::int64_t{1} << 40},
                    {"reads", json::array({{{"name", in}, {"dep", "star"}, {"bytes", 64 << 20}}})},
                    {"outputs", json::array({{{"name", name + "_out"}, {"bytes", 64 << 20}, {"dtype", "bf16"}}})}});
  };
  auto rs = [&](const std::string& name, const std::string& in) {
    list.push_back({{"name", name}, {"kind", "collective"}, {"reads", json::array({{{"name", in}, {"dep", "star"}, {"bytes", 64 << 20}}})},
                    {"outputs", json::array({{{"name", name + "_out"}, {"bytes", 16 << 20}, {"dtype", "bf16"}}})},
                    {"collective", {{"op", "_c10d_functional.reduce_scatter_tensor.default"}, {"group_size", 4}, {"bytes", 16 << 20}}}});
    list.push_back({{"name", "wait_" + name}, {"kind", "wait"}, {"reads", json::array({{{"name", name + "_out"}, {"dep", "star"}}})},
                    {"outputs", json::array({{{"name", "w_" + name}, {"bytes", 0}, {"layout", "none"}, {"mutation_of", name + "_out"}}})}});
  };
  compute("g0", "x");
  std::string last = "g0_out";
  for (int i = 0; i < 6; ++i) {
    compute("c" + std::to_string(i), last);
    last = "c" + std::to_string(i) + "_out";
  }
  compute("g1", last);
  rs("rs0", "g0_out");
  rs("rs1", "g1_out");
  auto graph = std::make_shared<const Graph>(load_graph(json{{"format", "schedgraph/1"}, {"name", "units"}, {"world_size", 4}, {"inputs", inputs},
                                                             {"outputs", json::array({"w_rs0", "w_rs1", last})}, {"nodes", list}}.dump()));
  PlanOptions opts;
  opts.fuse = false;
  opts.comm_passes = {"bucket_collectives_inductor", "overlap_schedule_step"};
  const PlanResult r = run_plan(graph, opts);
  const auto buckets = pipeline_buckets(*r.comm);
  REQUIRE(buckets.size() == 1);
  const Graph& g = *graph;
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < r.order.size(); ++i) at[g.nodes[r.order[i]].name] = i;
  const std::string carrier = g.nodes[buckets[0].members.front()].name;
  for (NodeId m : buckets[0].members) {
    CHECK(at[carrier] <= at[g.nodes[m].name]);  // the other members follow the one that carries the bucket
  }
  CHECK(at[carrier] > at["g1"]);  // which waits for every member's input
  CHECK(at[carrier] > at["g0"]);
  // The pass records the units as data dependencies the later pass kept.
  CHECK(r.comm->steps.front().result.added_fake_deps.size() == 2);
  CHECK(std::all_of(r.comm->steps.front().result.added_fake_deps.begin(), r.comm->steps.front().result.added_fake_deps.end(),
                    [](const FakeDep& d) { return d.data; }));
  CHECK(respects_comm_deps(r.comm->final_graph, r.order));
}
