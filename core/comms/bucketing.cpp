#include "core/comms/bucketing.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string_view>

#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/memory/estimate.h"
#include "core/memory/planning_info.h"
#include "core/sim/simulate.h"
#include "core/util/error.h"
#include "core/util/range_max.h"
#include "core/util/saturating.h"

namespace schedlab {

bool bucketable(const Graph& g, NodeId v, BucketMode mode) {
  const Node& n = g.nodes[v];
  if (n.kind != NodeKind::Collective || !n.collective) return false;
  const std::string_view op = n.collective->op;
  switch (mode) {
    case BucketMode::Inductor:  // is_all_gather_into_tensor, is_reduce_scatter_tensor, is_all_reduce_tensor
      return op.find("all_gather_into_tensor.") != std::string_view::npos ||
             op.find("reduce_scatter_tensor.") != std::string_view::npos || op.find("all_reduce.") != std::string_view::npos;
    case BucketMode::Model:
      return std::find(kBucketKinds.begin(), kBucketKinds.end(), n.collective->kind) != kBucketKinds.end();
  }
  return false;
}

BucketKey bucket_key(const Graph& g, NodeId v) {
  const Node& n = g.nodes[v];
  return {n.collective->kind, n.collective->group_size, std::string(node_dtype(g, n))};
}

std::shared_ptr<CollectivePrices> collective_prices(const Graph& g, const HardwareProfile& hw) {
  return collective_prices(g.world_size, hw);
}

std::shared_ptr<CollectivePrices> collective_prices(std::int64_t world_size, const HardwareProfile& hw) {
  // The prices outlive the options (a plan keeps its comm graph): they hold their own profile.
  auto profile = std::make_shared<const HardwareProfile>(hw);
  auto prices = std::make_shared<CollectivePrices>();
  prices->collective_us = [profile, world = world_size](CollectiveOp op, std::int64_t bytes, std::int64_t group) {
    return estimate_collective_us(op, bytes, group, world, *profile);
  };
  prices->copy_us = [profile](std::int64_t bytes, std::string_view dtype) {
    return roofline_us(0, bytes > std::numeric_limits<std::int64_t>::max() / 2 ? bytes : 2 * bytes, dtype, *profile);
  };
  return prices;
}

StagingBytes staging_bytes(CollectiveOp kind, std::int64_t payload, std::int64_t group_size) {
  const std::int64_t group = std::max<std::int64_t>(1, group_size);
  switch (kind) {
    case CollectiveOp::AllGather: return {payload / group, payload};
    case CollectiveOp::ReduceScatter: return {saturating_mul(payload, group), payload};
    default: return {payload, payload};
  }
}

std::vector<BucketCap> bucket_caps(const HardwareProfile& hw, std::int64_t group_size) {
  if (group_size < 2) throw OptionError("bucket caps: the group size must be 2 or more (got " + std::to_string(group_size) + ")");
  const std::shared_ptr<CollectivePrices> prices = collective_prices(group_size, hw);
  // The host's share, as the launch path prices it (core/cost/pricing.cpp):
  // a real group's issue as the profile's sweep measured it, else the
  // fitted collective call; a copy is a Triton kernel launch.
  double host_issue_us = 0, host_kernel_us = 0;
  if (hw.time_model) {
    host_issue_us = hw.time_model->host_us_per_collective;
    host_kernel_us = hw.time_model->host_us_per_kernel;
  }
  if (hw.collective_times && hw.collective_times->host_us_per_issue > 0) host_issue_us = hw.collective_times->host_us_per_issue;
  auto collective_us = [&](CollectiveOp kind, std::int64_t payload) {
    return finite_us(prices->collective_us(kind, payload, group_size), "bucket caps: collective");
  };
  auto copy_us = [&](std::int64_t bytes) { return finite_us(prices->copy_us(bytes, "bf16"), "bucket caps: copy"); };
  std::vector<BucketCap> caps;
  for (CollectiveOp kind : kBucketKinds) {
    BucketCap cap;
    cap.kind = kind;
    cap.group_size = group_size;
    for (double size = 128.0 * 1024; size <= 16.0 * 1024 * 1024 * 1024; size *= std::sqrt(2.0)) {
      // Both halves whole elements of every rank's shard (16-byte multiples of the group).
      const std::int64_t unit = 16 * group_size;
      const std::int64_t half = std::max<std::int64_t>(unit, static_cast<std::int64_t>(size / 2) / unit * unit);
      const std::int64_t whole = 2 * half;
      const StagingBytes staging = staging_bytes(kind, whole, group_size);
      const double separate = 2 * (collective_us(kind, half) + host_issue_us);
      const double merged = collective_us(kind, whole) + host_issue_us + copy_us(staging.in) + copy_us(staging.out) + 2 * host_kernel_us;
      if (!(merged < separate)) break;
      cap.payload_bytes = whole;
      cap.inductor_bytes = std::max(staging.in, staging.out);
      cap.separate_us = separate;
      cap.merged_us = merged;
    }
    caps.push_back(cap);
  }
  return caps;
}

namespace {

// What one member adds to a bucket: its payload and the flat buffers' bytes.
struct MemberBytes {
  std::int64_t payload = 0, in = 0, out = 0;
};

MemberBytes member_bytes(const Graph& g, NodeId v) {
  const Node& n = g.nodes[v];
  const std::int64_t payload = collective_payload(g, n).bytes;
  const StagingBytes s = staging_bytes(n.collective->kind, payload, n.collective->group_size);
  return {payload, s.in, s.out};
}

// A bucket while it grows, with its prices.
struct OpenBucket {
  std::int32_t id = -1;  // -1: none open
  CollectiveBucket b;
  std::int32_t first_pos = 0, last_reader_pos = 0;  // the window its staging bytes live over
};

class BucketPricer {
 public:
  explicit BucketPricer(const CommGraph& cg)
      : prices_(cg.prices ? cg.prices : collective_prices(*cg.graph, builtin_profile(kDefaultHardwareProfile))) {}
  double collective_us(const BucketKey& k, std::int64_t payload) const {
    return finite_us(prices_->collective_us(k.kind, payload, k.group_size), "bucketing: collective");
  }
  double copy_us(const BucketKey& k, std::int64_t bytes) const {
    return finite_us(prices_->copy_us(bytes, k.dtype), "bucketing: copy");
  }
  // Fills the merged prices of `b` from its bytes.
  void price(CollectiveBucket& b) const {
    b.collective_us = collective_us(b.key, b.bytes);
    b.copy_in_us = copy_us(b.key, b.copy_in_bytes);
    b.copy_out_us = copy_us(b.key, b.copy_out_bytes);
  }

 private:
  std::shared_ptr<const CollectivePrices> prices_;
};

void add_member(const Graph& g, CollectiveBucket& b, NodeId v, double separate_us) {
  const MemberBytes m = member_bytes(g, v);
  b.members.push_back(v);
  // Sizes saturate (a bucket of huge members is refused by the budget, never wraps).
  b.bytes = saturating_add(b.bytes, m.payload);
  b.copy_in_bytes = saturating_add(b.copy_in_bytes, m.in);
  b.copy_out_bytes = saturating_add(b.copy_out_bytes, m.out);
  b.extra_live_bytes = saturating_add(b.copy_in_bytes, b.copy_out_bytes);
  b.separate_us = add_us(b.separate_us, separate_us, "bucketing: separate collectives");
}

// Per node, the nodes that read its outputs through data dependencies.
std::vector<std::vector<NodeId>> data_readers(const CommGraph& cg) {
  std::vector<std::vector<NodeId>> readers(cg.num_nodes());
  for (NodeId v = 0; v < cg.num_nodes(); ++v)
    for (BufId b : cg.data_bufs.row(v))
      if (const NodeId p = cg.producer(b); p != kNone && (readers[p].empty() || readers[p].back() != v)) readers[p].push_back(v);
  return readers;
}

// Per node, its position in `order`, and per collective the position of the
// first node that reads its result (its wait); n when nothing does.
struct OrderFacts {
  std::vector<std::int32_t> pos, first_reader_pos;
};

OrderFacts order_facts(const CommGraph& cg, const Order& order) {
  const std::int32_t n = cg.num_nodes();
  OrderFacts f{std::vector<std::int32_t>(n), std::vector<std::int32_t>(n, n)};
  for (std::int32_t i = 0; i < n; ++i) f.pos[order[i]] = i;
  for (std::int32_t i = n - 1; i >= 0; --i)
    for (BufId b : cg.data_bufs.row(order[i])) {
      const NodeId p = cg.producer(b);
      if (p != kNone && cg.is_collective(p)) f.first_reader_pos[p] = i;
    }
  return f;
}

// The model's buckets (see the header): one walk along the order, one open
// bucket per key. reach[k][v] is the highest id of a bucket of key k that v
// depends on through any chain; v depends on the open bucket of key k when it
// equals that bucket's id. Ids only grow, so the maximum suffices.
std::vector<CollectiveBucket> model_buckets(const CommGraph& cg, const Order& order, const BucketOptions& opts) {
  const Graph& g = *cg.graph;
  const std::int32_t n = cg.num_nodes();
  const BucketPricer pricer(cg);
  const OrderFacts facts = order_facts(cg, order);
  const MemoryPlanningInfo info = planning_info_of(cg, order);
  const AllocFreeEstimate memory = estimate_peak_memory_allocfree(g, info, order);
  const std::int64_t budget = opts.memory_budget >= 0 ? opts.memory_budget : memory.peak;
  const RangeMax live(memory.post_alloc.empty() ? std::vector<std::int64_t>{0} : memory.post_alloc);
  auto live_over = [&](std::int32_t lo, std::int32_t hi) {
    return memory.post_alloc.empty() ? std::int64_t{0} : live.query(lo, std::min(hi, n - 1));
  };

  std::vector<BucketKey> keys;
  std::vector<std::int32_t> key_of(n, -1);
  for (NodeId v = 0; v < n; ++v) {
    if (!bucketable(g, v, BucketMode::Model)) continue;
    const BucketKey k = bucket_key(g, v);
    auto it = std::find(keys.begin(), keys.end(), k);
    key_of[v] = static_cast<std::int32_t>(it - keys.begin());
    if (it == keys.end()) keys.push_back(k);
  }
  const std::size_t nk = keys.size();
  std::vector<std::vector<std::int32_t>> reach(nk, std::vector<std::int32_t>(n, -1));
  std::vector<OpenBucket> open(nk);
  std::vector<CollectiveBucket> closed;
  std::int32_t next_id = 0;

  auto close = [&](std::size_t k) {
    if (open[k].id >= 0 && open[k].b.members.size() >= 2) closed.push_back(std::move(open[k].b));
    open[k] = {};
  };
  // Whether `v` (of size and time `alone_us`) makes bucket `ob` better: the
  // merged bucket costs less than the bucket and v apart, its time per byte
  // still falls, and its staging bytes fit the budget over its window.
  auto improves = [&](const OpenBucket& ob, NodeId v, double alone_us) {
    CollectiveBucket grown = ob.b;
    add_member(g, grown, v, alone_us);
    pricer.price(grown);
    const double now_us = ob.b.members.size() == 1 ? ob.b.separate_us : ob.b.bucketed_us();
    if (!(grown.bucketed_us() < now_us + alone_us)) return false;
    const double now_per_byte = pricer.collective_us(ob.b.key, ob.b.bytes) / std::max<double>(1.0, static_cast<double>(ob.b.bytes));
    const double grown_per_byte = grown.collective_us / std::max<double>(1.0, static_cast<double>(grown.bytes));
    if (!(grown_per_byte < now_per_byte)) return false;
    const std::int32_t hi = std::max(ob.last_reader_pos, facts.first_reader_pos[v]);
    return saturating_add(live_over(ob.first_pos, hi), grown.extra_live_bytes) <= budget;
  };

  for (std::int32_t i = 0; i < n; ++i) {
    const NodeId v = order[i];
    for (std::size_t k = 0; k < nk; ++k) {
      std::int32_t r = -1;
      for (BufId b : cg.data_bufs.row(v))
        if (const NodeId p = cg.producer(b); p != kNone) r = std::max(r, reach[k][p]);
      reach[k][v] = r;
    }
    if (key_of[v] < 0) continue;
    const std::size_t kv = static_cast<std::size_t>(key_of[v]);
    // A bucket v depends on issues before v: it is closed, whatever its key.
    for (std::size_t k = 0; k < nk; ++k)
      if (open[k].id >= 0 && reach[k][v] == open[k].id) close(k);
    const double alone_us = pricer.collective_us(keys[kv], member_bytes(g, v).payload);
    if (open[kv].id >= 0 && !improves(open[kv], v, alone_us)) close(kv);
    if (open[kv].id < 0) {
      open[kv].id = next_id++;
      open[kv].b.key = keys[kv];
      open[kv].first_pos = i;
      open[kv].last_reader_pos = i;
    }
    add_member(g, open[kv].b, v, alone_us);
    pricer.price(open[kv].b);
    open[kv].last_reader_pos = std::max(open[kv].last_reader_pos, facts.first_reader_pos[v]);
    reach[kv][v] = open[kv].id;
  }
  for (std::size_t k = 0; k < nk; ++k) close(k);
  return closed;
}

// Inductor 2.11's decisions (fx_passes/bucketing.py,
// greedy_bucket_collective_by_mb), per kind as its three passes run: the
// collectives in the order of their waits, cut into runs of one key; each
// run filled greedily up to the cap, by max(input, output bytes); a
// collective that descends from the current bucket's members is left out.
std::vector<CollectiveBucket> inductor_buckets(const CommGraph& cg, const Order& order, const BucketOptions& opts) {
  const Graph& g = *cg.graph;
  const std::int32_t n = cg.num_nodes();
  const BucketPricer pricer(cg);
  auto cap_of = [&](std::size_t k) -> std::int64_t {  // kBucketKinds[k]'s
    const double cap_bytes = opts.inductor_cap_mb[k] * 1024 * 1024;
    return !(cap_bytes > 0) ? 0 : cap_bytes >= 9.2e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(cap_bytes);
  };
  const std::vector<std::vector<NodeId>> readers = data_readers(cg);  // descendants are walked forward
  std::vector<std::int32_t> pos(n);
  for (std::int32_t i = 0; i < n; ++i) pos[order[i]] = i;
  std::vector<std::int32_t> mark(n, -1);  // bucket serial whose descendants include the node
  std::int32_t serial = 0;
  std::vector<NodeId> stack;
  // Marks the descendants of `from` up to position `last`: a descendant
  // placed later than every collective of the run can be none of them.
  auto mark_descendants = [&](NodeId from, std::int32_t last) {
    stack.assign(1, from);
    while (!stack.empty()) {
      const NodeId u = stack.back();
      stack.pop_back();
      for (NodeId w : readers[u])
        if (mark[w] != serial && pos[w] <= last) {
          mark[w] = serial;
          stack.push_back(w);
        }
    }
  };

  std::vector<CollectiveBucket> out;
  for (std::size_t k = 0; k < kBucketKinds.size(); ++k) {
    const CollectiveOp kind = kBucketKinds[k];
    const std::int64_t cap = cap_of(k);
    // The collectives of this kind in the order of their waits.
    std::vector<NodeId> by_wait;
    std::vector<std::uint8_t> seen(n, 0);
    for (NodeId v : order) {
      if (g.nodes[v].kind != NodeKind::Wait) continue;
      for (BufId b : cg.data_bufs.row(v)) {
        const NodeId p = cg.producer(b);
        if (p == kNone || seen[p] || !bucketable(g, p, BucketMode::Inductor) || g.nodes[p].collective->kind != kind) continue;
        seen[p] = 1;
        by_wait.push_back(p);
      }
    }
    for (std::size_t start = 0; start < by_wait.size();) {
      std::size_t end = start + 1;
      const BucketKey key = bucket_key(g, by_wait[start]);
      while (end < by_wait.size() && bucket_key(g, by_wait[end]) == key) ++end;
      std::int32_t last = 0;
      for (std::size_t i = start; i < end; ++i) last = std::max(last, pos[by_wait[i]]);
      CollectiveBucket cur;
      cur.key = key;
      std::int64_t cur_size = 0;
      ++serial;
      auto flush = [&] {
        if (cur.members.size() >= 2) {
          pricer.price(cur);
          out.push_back(std::move(cur));
        }
        cur = {};
        cur.key = key;
        cur_size = 0;
        ++serial;
      };
      for (std::size_t i = start; i < end; ++i) {
        const NodeId v = by_wait[i];
        if (mark[v] == serial) continue;  // a path from the bucket to v
        const MemberBytes m = member_bytes(g, v);
        const std::int64_t size = std::max(m.in, m.out);
        if (saturating_add(cur_size, size) > cap && !cur.members.empty()) flush();
        cur_size = saturating_add(cur_size, size);
        add_member(g, cur, v, pricer.collective_us(key, m.payload));
        mark_descendants(v, last);
      }
      flush();
      start = end;
    }
  }
  return out;
}

}  // namespace

std::vector<CollectiveBucket> plan_buckets(const CommGraph& cg, const Order& order, const BucketOptions& opts) {
  return opts.mode == BucketMode::Model ? model_buckets(cg, order, opts) : inductor_buckets(cg, order, opts);
}

Order order_with_buckets(const CommGraph& cg, const Order& order, std::vector<CollectiveBucket>& buckets) {
  const std::int32_t n = cg.num_nodes();
  const std::vector<std::vector<NodeId>> readers = data_readers(cg);
  Order out = order;
  std::vector<std::int32_t> pos(n);
  for (std::int32_t i = 0; i < n; ++i) pos[out[i]] = i;
  // Per node, for the bucket at hand (stamp_of == stamp): 1 a member, 2 depends on a member.
  std::vector<std::int32_t> stamp_of(n, -1);
  std::vector<std::uint8_t> state(n, 0);
  std::int32_t stamp = 0;
  std::vector<NodeId> stack, members, after;
  for (CollectiveBucket& b : buckets) {
    ++stamp;
    std::int32_t lo = n, hi = -1;
    for (NodeId m : b.members) {
      lo = std::min(lo, pos[m]);
      hi = std::max(hi, pos[m]);
      stamp_of[m] = stamp;
      state[m] = 1;
    }
    // What depends on a member and stands before the last one moves after the bucket.
    stack.assign(b.members.begin(), b.members.end());
    while (!stack.empty()) {
      const NodeId u = stack.back();
      stack.pop_back();
      for (NodeId w : readers[u])
        if (pos[w] < hi && stamp_of[w] != stamp) {
          stamp_of[w] = stamp;
          state[w] = 2;
          stack.push_back(w);
        }
    }
    members.clear();
    after.clear();
    std::int32_t at = lo;
    for (std::int32_t i = lo; i <= hi; ++i) {
      const NodeId v = out[i];
      if (stamp_of[v] != stamp) {
        out[at] = v;
        pos[v] = at++;
      } else {
        (state[v] == 1 ? members : after).push_back(v);
      }
    }
    for (const auto* part : {&members, &after})
      for (NodeId v : *part) {
        out[at] = v;
        pos[v] = at++;
      }
    b.members = members;
  }
  // Each bucket's first reader (not a collective), in the final order.
  for (CollectiveBucket& b : buckets) {
    std::int32_t first = n;
    for (NodeId m : b.members)
      for (NodeId w : readers[m])
        if (!cg.is_collective(w)) first = std::min(first, pos[w]);
    b.first_reader = first < n ? out[first] : kNone;
  }
  return out;
}

std::vector<double> bucketed_runtimes(std::vector<double> runtime_us, const std::vector<CollectiveBucket>& buckets) {
  for (const CollectiveBucket& b : buckets) {
    for (NodeId m : b.members) runtime_us[m] = 0;
    runtime_us[b.members.front()] = add_us(b.collective_us, b.copy_in_us, "bucketing: bucket");
    if (b.first_reader != kNone) runtime_us[b.first_reader] = add_us(runtime_us[b.first_reader], b.copy_out_us, "bucketing: copy-out");
  }
  return runtime_us;
}

namespace {

// The pass: buckets and the bucketed order. In model mode the buckets are
// weighed by the simulated step, in the order they closed, in at most
// simulation_budget - 1 consecutive groups (one bucket each where the budget
// allows): a group is kept when the step with it and the groups kept before
// is no slower than the best so far.
// Keeps each bucket one unit for the passes after bucketing (which move
// collectives one by one): its first member, which carries the merged
// collective, waits for every member's inputs, as the merged collective
// reads them all; the other members (no time of their own) follow it, so
// on the one communication stream their results are not there before the
// bucket's. Without them a later pass could issue the first member, and so
// the whole bucket, before the other members' inputs exist: the simulation
// then favoured large reduce-scatter buckets that ran 1-4 % slower on
// 4 x H200 (docs/gpu-validation.md, "Larger caps").
std::vector<FakeDep> bucket_unit_deps(const CommGraph& cg, const std::vector<CollectiveBucket>& buckets) {
  const Graph& g = *cg.graph;
  std::vector<FakeDep> deps;
  for (const CollectiveBucket& b : buckets) {
    const NodeId carrier = b.members.front();
    const BufId carrier_out = g.nodes[carrier].outputs.empty() ? kNone : g.nodes[carrier].outputs.front();
    for (NodeId m : b.members) {
      if (m == carrier) continue;
      for (BufId buf : cg.data_bufs.row(m))
        if (cg.producer(buf) != carrier) deps.push_back({carrier, buf, true});
      if (carrier_out != kNone) deps.push_back({m, carrier_out, true});
    }
  }
  return deps;
}

CommPassResult bucket_pass(const CommGraph& cg, const Order& order, BucketMode mode, const CommKnobs& knobs) {
  const Graph& g = *cg.graph;
  BucketOptions opts;
  opts.mode = mode;
  opts.inductor_cap_mb = {knobs.bucket_all_gathers_fx_bucket_cap_mib, knobs.bucket_reduce_scatters_fx_bucket_cap_mib,
                          knobs.bucket_all_reduces_fx_bucket_cap_mib};
  CommPassResult r;
  r.buckets = plan_buckets(cg, order, opts);
  if (r.buckets.empty() || mode != BucketMode::Model || !opts.keep_only_if_faster) {
    r.order = order_with_buckets(cg, order, r.buckets);
    r.added_fake_deps = bucket_unit_deps(cg, r.buckets);
    return r;
  }
  std::function<double(const Order&, const std::vector<CollectiveBucket>&)> step_us;
  std::vector<double> alone;
  if (cg.prices && cg.prices->step_us) {  // as the plan simulates
    step_us = cg.prices->step_us;
  } else {  // the comm graph's runtimes, the members priced alone by the buckets' law
    alone = cg.runtime_us;
    const BucketPricer pricer(cg);
    for (const CollectiveBucket& b : r.buckets)
      for (NodeId m : b.members) alone[m] = pricer.collective_us(b.key, member_bytes(g, m).payload);
    step_us = [&](const Order& o, const std::vector<CollectiveBucket>& buckets) {
      return simulate_two_streams(g, o, buckets.empty() ? alone : bucketed_runtimes(alone, buckets)).step_time_us;
    };
  }
  const std::size_t count = r.buckets.size();
  const std::size_t groups = std::min<std::size_t>(count, static_cast<std::size_t>(simulation_budget(cg.num_nodes()) - 1));
  double best = step_us(order, {});
  std::vector<CollectiveBucket> kept;
  Order kept_order = order;
  for (std::size_t k = 0; k < groups; ++k) {
    std::vector<CollectiveBucket> trial = kept;
    trial.insert(trial.end(), r.buckets.begin() + static_cast<std::ptrdiff_t>(k * count / groups),
                 r.buckets.begin() + static_cast<std::ptrdiff_t>((k + 1) * count / groups));
    Order trial_order = order_with_buckets(cg, order, trial);
    const double t = step_us(trial_order, trial);
    if (t <= best) {
      best = t;
      kept = std::move(trial);
      kept_order = std::move(trial_order);
    }
  }
  r.buckets = std::move(kept);
  r.order = std::move(kept_order);
  r.added_fake_deps = bucket_unit_deps(cg, r.buckets);
  return r;
}

}  // namespace

CommPassResult bucket_collectives(const CommGraph& cg, const Order& order, const CommKnobs& knobs) {
  return bucket_pass(cg, order, BucketMode::Model, knobs);
}

CommPassResult bucket_collectives_inductor(const CommGraph& cg, const Order& order, const CommKnobs& knobs) {
  return bucket_pass(cg, order, BucketMode::Inductor, knobs);
}

}  // namespace schedlab
