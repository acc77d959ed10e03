#include "native-cuda/host/execution_schedule.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/memory/estimate.h"
#include "core/memory/methods.h"
#include "core/util/error.h"

namespace schedlab::gpu {
namespace {

void check_order(const Graph& g, const MemoryPlanningInfo& info, const Order& order) {
  if (order.size() != g.nodes.size())
    throw Error("execution order: has " + std::to_string(order.size()) + " nodes, the graph " + std::to_string(g.nodes.size()));
  std::vector<std::uint8_t> seen(g.nodes.size(), 0);
  for (NodeId v : order) {
    if (v < 0 || v >= g.num_nodes()) throw Error("execution order: node id " + std::to_string(v) + " out of range");
    if (seen[v]++) throw Error("execution order: node \"" + g.nodes[v].name + "\" appears twice");
  }
  if (!is_valid_order(g, info, order)) throw Error("execution order: runs a node before one it depends on");
}

}  // namespace

ExecutionSchedule build_execution_schedule(const Graph& g, const MemoryPlanningInfo& info, const Order& order) {
  check_order(g, info, order);
  const auto n = static_cast<std::int32_t>(order.size());
  ExecutionSchedule s;
  s.order = order;
  s.steps.resize(order.size());
  for (std::int32_t t = 0; t < n; ++t) s.steps[t].node = order[t];

  const auto lifetimes = compute_memory_timeline(g, info, order);
  std::vector<std::int32_t> lifetime_of(g.buffers.size(), -1);
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(lifetimes.size()); ++i) lifetime_of[lifetimes[i].buf] = i;

  auto add_block = [&](BufId buf, std::int64_t bytes, std::int32_t alloc_step, const BufferLifetime& until) {
    auto id = static_cast<std::int32_t>(s.blocks.size());
    s.blocks.push_back({buf, bytes, alloc_step, until.end_step, until.live_to_end});
    s.steps[alloc_step].allocate.push_back(id);
    if (until.live_to_end) s.release_at_end.push_back(id);
    else s.steps[until.end_step].release.push_back(id);
  };

  for (const BufferLifetime& l : lifetimes) {
    const bool item = info.container_of[l.buf] != kNone;
    if (item) {
      // Its storage is allocated by its container, below; an item whose
      // container allocates nothing frees bytes nothing allocated.
      const BufferLifetime& c = lifetimes[lifetime_of[info.container_of[l.buf]]];
      if (c.size_alloc == 0 && l.size_free != 0) s.unbacked.push_back({l.buf, l.size_alloc, l.size_free});
      continue;
    }
    if (l.size_alloc == 0 && l.size_free == 0) continue;  // a view: mutation or layout "none"
    if (g.buffers[l.buf].layout == Layout::MultiOutput && l.size_free == 0) {
      // A container: one block per item, allocated now, released with the item.
      for (const BufferLifetime& it : lifetimes)
        if (info.container_of[it.buf] == l.buf && it.size_free > 0) add_block(it.buf, it.size_free, l.start_step, it);
      continue;
    }
    if (l.size_alloc != l.size_free) {
      s.unbacked.push_back({l.buf, l.size_alloc, l.size_free});
      continue;
    }
    add_block(l.buf, l.size_alloc, l.start_step, l);
  }

  // Live bytes per step, as the executor's allocator will see them.
  std::vector<std::int64_t> delta(order.size() + 1, 0);
  for (const DeviceBlock& b : s.blocks) {
    delta[b.alloc_step] += b.bytes;
    if (!b.live_to_end) delta[b.last_step + 1] -= b.bytes;
  }
  s.live_bytes.resize(order.size());
  std::int64_t cur = 0;
  for (std::int32_t t = 0; t < n; ++t) {
    cur += delta[t];
    s.live_bytes[t] = cur;
    if (cur > s.peak_bytes) {
      s.peak_bytes = cur;
      s.peak_step = t;
    }
  }
  return s;
}

ExecutionPlan plan_execution(std::shared_ptr<const Graph> g, const HardwareProfile& hw, std::string_view method,
                             std::string_view plan_json_text) {
  if (!find_memory_method(method)) {
    std::string known;
    for (const auto& k : memory_methods()) known += (known.empty() ? "" : ", ") + std::string(k.name);
    throw OptionError("--order: unknown method \"" + std::string(method) + "\" (known: " + known + ")");
  }
  PlanOptions opts;
  opts.memory_methods = {std::string(method)};
  opts.fuse = false;
  opts.hardware = hw;
  ExecutionPlan out{run_plan(std::move(g), opts), {}, 0};
  const PlanResult& r = out.plan;
  if (plan_json_text.empty()) {
    out.order = r.order;
    out.estimated_peak = r.final_memory.peak;
  } else {
    out.order = order_from_plan_json(r.planned(), plan_json_text);
    out.estimated_peak = estimate_peak_memory(r.planned(), *r.memory.info, out.order).peak;
  }
  return out;
}

Order order_from_plan_json(const Graph& g, std::string_view plan_json_text) {
  nlohmann::json plan;
  try {
    plan = nlohmann::json::parse(plan_json_text.begin(), plan_json_text.end());
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("plan: not valid JSON: ") + e.what());
  }
  if (!plan.is_object() || !plan.contains("order") || !plan["order"].is_array())
    throw Error("plan: expected a schedplan/1 object with an \"order\" array");
  Order order;
  const auto& names = plan["order"];
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!names[i].is_string()) throw Error("plan: order[" + std::to_string(i) + "]: expected a node name");
    NodeId v = g.find_node(names[i].get<std::string>());
    if (v == kNone)
      throw Error("plan: order[" + std::to_string(i) + "]: node \"" + names[i].get<std::string>() +
                  "\" is not in the graph (a plan of a pre-fusion graph names the fused graph's nodes: run on `schedlab fuse`'s output)");
    order.push_back(v);
  }
  return order;
}

}  // namespace schedlab::gpu
