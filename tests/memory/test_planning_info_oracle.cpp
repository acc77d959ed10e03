// Planning info against plain transcriptions of PyTorch 2.11's memory.py
// (get_freeable_input_buf, compute_size_for_scheduler_buffer,
// assign_memory_planning_info_for_scheduler_buffers/_nodes), written with
// name-keyed maps as the Python is, on random graphs shaped to hit the rules
// that differ between releases: items reading several multi_output
// containers, fake weak and real deps on one buffer, fake weak reads of
// freeable inputs, and mutation chains.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "core/memory/estimate.h"
#include "core/memory/planning_info.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

using NameSet = std::set<std::string>;

struct OracleInfo {
  std::vector<std::string> freeable;  // dict order
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> size;  // (alloc, free)
  std::map<std::string, NameSet> succ;                                // lifetime successors
  std::map<std::string, NameSet> pred_nodes, pred_buffers;
};

OracleInfo oracle_planning_info(const Graph& g) {
  OracleInfo o;
  auto name = [&](BufId b) { return g.buffers[b].name; };
  // get_freeable_input_buf
  std::map<std::string, NameSet> input_succ, input_order_succ;
  for (const Node& node : g.nodes)
    for (const Dep& d : node.reads) {
      const Buffer& b = g.buffers[d.buf];
      if (!b.is_input || !b.freeable) continue;
      if (!input_order_succ.count(b.name)) o.freeable.push_back(b.name);
      input_order_succ[b.name].insert(node.name);
      o.size[b.name] = {d.bytes, d.bytes};
      if (d.kind != DepKind::FakeWeak) input_succ[b.name].insert(node.name);
    }
  // compute_size_for_scheduler_buffer (users: every node reading the buffer, deduplicated)
  std::map<std::string, std::vector<NodeId>> users;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    for (const Dep& d : g.nodes[v].reads) {
      auto& u = users[name(d.buf)];
      if (g.buffers[d.buf].producer != v && std::find(u.begin(), u.end(), v) == u.end()) u.push_back(v);
    }
  std::function<std::int64_t(BufId, bool)> compute = [&](BufId b, bool user_of_multi_output) -> std::int64_t {
    const Buffer& buf = g.buffers[b];
    if (buf.mutation_of != kNone || buf.layout == Layout::None) {
      o.size[buf.name] = {0, 0};
      return 0;
    }
    if (buf.layout == Layout::MultiOutput) {
      std::int64_t alloc = 0;
      for (NodeId u : users[buf.name])
        for (BufId out : g.nodes[u].outputs)
          if (g.buffers[out].layout == Layout::MultiOutputItem) alloc += compute(out, true);
      o.size[buf.name] = {user_of_multi_output ? 0 : alloc, 0};
      return alloc;
    }
    o.size[buf.name] = {user_of_multi_output ? 0 : buf.bytes, buf.bytes};
    return buf.bytes;
  };
  for (BufId b = g.num_inputs; b < g.num_buffers(); ++b)
    if (!o.size.count(name(b))) compute(b, false);
  // assign_memory_planning_info_for_scheduler_buffers
  std::map<std::string, NameSet> order_succ;
  std::vector<std::pair<std::string, std::string>> mutation_real_name;
  std::map<std::string, std::string> real_of;
  for (BufId b = g.num_inputs; b < g.num_buffers(); ++b)
    if (g.buffers[b].mutation_of != kNone) {
      std::string alt = name(g.buffers[b].mutation_of);
      std::string real = real_of.count(alt) ? real_of[alt] : alt;
      real_of[name(b)] = real;
      mutation_real_name.emplace_back(name(b), real);
    }
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    for (const Dep& d : g.nodes[v].reads) {
      NodeId p = g.buffers[d.buf].producer;
      if (p == kNone || p == v) continue;  // not an unmet dependency
      order_succ[name(d.buf)].insert(g.nodes[v].name);
      if (d.kind != DepKind::FakeWeak) o.succ[name(d.buf)].insert(g.nodes[v].name);
    }
  for (auto it = mutation_real_name.rbegin(); it != mutation_real_name.rend(); ++it) {
    auto s = o.succ[it->first];
    o.succ[it->second].insert(s.begin(), s.end());
    auto os = order_succ[it->first];
    order_succ[it->second].insert(os.begin(), os.end());
  }
  for (const auto& in : o.freeable) o.succ[in] = input_succ[in];
  // assign_memory_planning_info_for_scheduler_nodes
  for (const Node& node : g.nodes)
    for (BufId b : node.outputs) {
      for (const auto& s : order_succ[name(b)])
        if (s != node.name) o.pred_nodes[s].insert(node.name);
      for (const auto& s : o.succ[name(b)]) o.pred_buffers[s].insert(name(b));
    }
  for (const auto& in : o.freeable)
    for (const auto& s : o.succ[in]) o.pred_buffers[s].insert(in);
  return o;
}

// Random graphs: inputs (freeable or not), then nodes whose outputs are
// fixed, none, multi_output containers, items (their node reads one to three
// containers) or mutations (of an earlier buffer, read or not).
std::string random_graph_json(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::vector<std::string> inputs_json, nodes_json, readable, containers, fixed;
  int n_inputs = pick(4);
  for (int i = 0; i < n_inputs; ++i) {
    std::string nm = (pick(3) == 0 ? "primals_" : "x") + std::to_string(i);
    inputs_json.push_back(R"({"name": ")" + nm + R"(", "bytes": )" + std::to_string(1 + pick(64)) + "}");
    readable.push_back(nm);
    fixed.push_back(nm);
  }
  const char* kinds[] = {"memory", "star", "weak", "fake_weak"};
  int n_nodes = 3 + pick(10);
  for (int v = 0; v < n_nodes; ++v) {
    std::vector<std::string> reads, outs;
    std::vector<std::string> new_containers, new_readable, new_fixed;
    auto dep = [&](const std::string& nm, const char* kind) {
      reads.push_back(R"({"name": ")" + nm + R"(", "dep": ")" + kind + R"(", "bytes": )" + std::to_string(pick(80)) + "}");
    };
    for (int r = pick(4); r > 0 && !readable.empty(); --r) dep(readable[pick(static_cast<int>(readable.size()))], kinds[pick(4)]);
    if (!readable.empty() && pick(3) == 0) {  // the same buffer read through a fake weak and a real dep
      const std::string& nm = readable[pick(static_cast<int>(readable.size()))];
      dep(nm, "fake_weak");
      dep(nm, kinds[pick(2)]);
    }
    std::string base = "b" + std::to_string(v);
    int shape = pick(6);
    if (shape == 0 && !containers.empty()) {  // items
      for (int c = 1 + pick(3); c > 0; --c) dep(containers[pick(static_cast<int>(containers.size()))], pick(2) ? "star" : "weak");
      for (int k = 1 + pick(2); k > 0; --k) {
        std::string nm = base + "_" + std::to_string(k);
        outs.push_back(R"({"name": ")" + nm + R"(", "bytes": )" + std::to_string(1 + pick(32)) + R"(, "layout": "multi_output_item"})");
        new_readable.push_back(nm);
      }
    } else if (shape == 1) {
      outs.push_back(R"({"name": ")" + base + R"(", "bytes": 0, "layout": "multi_output"})");
      new_containers.push_back(base);
    } else if (shape == 2 && !fixed.empty()) {  // a mutation, usually of something it reads
      const std::string& of = fixed[pick(static_cast<int>(fixed.size()))];
      if (pick(4)) dep(of, "star");
      outs.push_back(R"({"name": ")" + base + R"(", "bytes": 16, "mutation_of": ")" + of + R"("})");
      new_readable.push_back(base);
      new_fixed.push_back(base);
    } else if (shape == 3) {
      outs.push_back(R"({"name": ")" + base + R"(", "bytes": 0, "layout": "none"})");
      new_readable.push_back(base);
    } else {
      outs.push_back(R"({"name": ")" + base + R"(", "bytes": )" + std::to_string(1 + pick(100)) + "}");
      new_readable.push_back(base);
      new_fixed.push_back(base);
    }
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
      return s;
    };
    nodes_json.push_back(R"({"name": "n)" + std::to_string(v) + R"(", "kind": "extern", "outputs": [)" + join(outs) +
                         R"(], "reads": [)" + join(reads) + "]}");
    for (auto* from : {&new_containers, &new_readable, &new_fixed}) {
      auto* to = from == &new_containers ? &containers : from == &new_readable ? &readable : &fixed;
      to->insert(to->end(), from->begin(), from->end());
    }
    readable.insert(readable.end(), new_containers.begin(), new_containers.end());
  }
  std::string outputs;
  if (!readable.empty() && pick(2)) outputs = "\"" + readable[pick(static_cast<int>(readable.size()))] + "\"";
  std::string s = R"({"format": "schedgraph/1", "inputs": [)";
  for (std::size_t i = 0; i < inputs_json.size(); ++i) s += (i ? ", " : "") + inputs_json[i];
  s += R"(], "outputs": [)" + outputs + R"(], "nodes": [)";
  for (std::size_t i = 0; i < nodes_json.size(); ++i) s += (i ? ", " : "") + nodes_json[i];
  return s + "]}";
}

NameSet node_names(const Graph& g, std::span<const std::int32_t> ids) {
  NameSet s;
  for (auto v : ids) s.insert(g.nodes[v].name);
  return s;
}

NameSet buffer_names(const Graph& g, std::span<const std::int32_t> ids) {
  NameSet s;
  for (auto b : ids) s.insert(g.buffers[b].name);
  return s;
}

bool same_rows(const Adjacency& a, const Adjacency& b) {
  if (a.rows() != b.rows()) return false;
  for (std::int32_t r = 0; r < a.rows(); ++r) {
    const auto ra = a.row(r), rb = b.row(r);  // no std::ranges::equal in emscripten 3.1.6's libc++
    if (!std::equal(ra.begin(), ra.end(), rb.begin(), rb.end())) return false;
  }
  return true;
}

bool same_info(const MemoryPlanningInfo& a, const MemoryPlanningInfo& b) {
  return a.planned == b.planned && a.is_graph_output == b.is_graph_output && a.size_alloc == b.size_alloc && a.size_free == b.size_free &&
         a.container_of == b.container_of && a.freeable_inputs == b.freeable_inputs && a.index == b.index && a.node_size == b.node_size &&
         same_rows(a.buffer_succ_nodes, b.buffer_succ_nodes) && same_rows(a.pred_buffers, b.pred_buffers) &&
         same_rows(a.pred_nodes, b.pred_nodes) && same_rows(a.succ_nodes, b.succ_nodes) && same_rows(a.dep_nodes, b.dep_nodes);
}

}  // namespace

TEST_CASE("planning info equals the 2.11 transcription on 3,000 random graphs", "[memory][oracle]") {
  std::mt19937 rng(20260211);
  int graphs = 0, items_in_two = 0, fake_input_reads = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text = random_graph_json(rng);
    Graph g = load_graph(text);
    MemoryPlanningInfo info = compute_planning_info(g, g.baseline_order());
    OracleInfo o = oracle_planning_info(g);
    INFO(text);
    std::vector<std::string> freeable;
    for (BufId b : info.freeable_inputs) freeable.push_back(g.buffers[b].name);
    REQUIRE(freeable == o.freeable);
    for (BufId b = 0; b < g.num_buffers(); ++b) {
      const std::string& nm = g.buffers[b].name;
      if (!info.planned[b]) {
        REQUIRE(!o.size.count(nm));
        continue;
      }
      INFO("buffer " << nm);
      REQUIRE(std::pair(info.size_alloc[b], info.size_free[b]) == o.size.at(nm));
      REQUIRE(node_names(g, info.buffer_succ_nodes.row(b)) == o.succ[nm]);
    }
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const std::string& nm = g.nodes[v].name;
      INFO("node " << nm);
      REQUIRE(node_names(g, info.pred_nodes.row(v)) == o.pred_nodes[nm]);
      REQUIRE(buffer_names(g, info.pred_buffers.row(v)) == o.pred_buffers[nm]);
      for (const Dep& d : g.nodes[v].reads)
        if (d.kind == DepKind::FakeWeak && g.buffers[d.buf].is_input && g.buffers[d.buf].freeable) ++fake_input_reads;
    }
    for (BufId b = g.num_inputs; b < g.num_buffers(); ++b)
      if (g.buffers[b].layout == Layout::MultiOutputItem && info.container_of[b] != kNone) {
        int containers = 0;
        for (const Dep& d : g.nodes[g.buffers[b].producer].reads) containers += g.buffers[d.buf].layout == Layout::MultiOutput;
        items_in_two += containers > 1;
      }
    // Re-planned for another order, the info equals one computed for it.
    Order reversed = g.baseline_order();
    std::reverse(reversed.begin(), reversed.end());
    REQUIRE(same_info(planning_info_for_order(g, info, reversed), compute_planning_info(g, reversed)));
    ++graphs;
  }
  CHECK(graphs == 3000);
  // The shapes the test is for do occur.
  CHECK(items_in_two > 100);
  CHECK(fake_input_reads > 100);
}

namespace {

// The alloc/free estimate as it was first written: every buffer's lifetime
// from compute_memory_timeline, summed per step.
AllocFreeEstimate allocfree_from_timeline(const Graph& g, const MemoryPlanningInfo& info, const Order& order) {
  const std::size_t n = order.size();
  AllocFreeEstimate est;
  std::vector<std::int64_t> alloc(n, 0), freed(n, 0);
  est.last_use.assign(g.buffers.size(), kNone);
  for (const auto& l : compute_memory_timeline(g, info, order)) {
    alloc[static_cast<std::size_t>(l.start_step)] += l.size_alloc;
    if (!l.live_to_end) {
      freed[static_cast<std::size_t>(l.end_step)] += l.size_free;
      est.last_use[l.buf] = order[static_cast<std::size_t>(l.end_step)];
    }
  }
  est.node_alloc.assign(g.nodes.size(), 0);
  est.node_free.assign(g.nodes.size(), 0);
  std::int64_t cur = 0;
  for (std::size_t t = 0; t < n; ++t) {
    est.node_alloc[order[t]] = alloc[t];
    est.node_free[order[t]] = freed[t];
    cur += alloc[t];
    est.post_alloc.push_back(cur);
    est.peak = std::max(est.peak, cur);
    cur -= freed[t];
    est.post_free.push_back(cur);
  }
  return est;
}

}  // namespace

// Any permutation, not only schedules: the comm passes weigh orders that may
// run a mutation's reader before the mutated buffer's producer.
TEST_CASE("the alloc/free estimate counted node by node equals the timeline's on random graphs and permutations", "[memory][oracle]") {
  std::mt19937 rng(20261123);
  for (int iter = 0; iter < 1500; ++iter) {
    std::string text = random_graph_json(rng);
    Graph g = load_graph(text);
    INFO(text);
    Order order = g.baseline_order();
    const MemoryPlanningInfo info = compute_planning_info(g, order);
    for (int shuffle = 0; shuffle < 3; ++shuffle) {
      if (shuffle > 0) std::shuffle(order.begin(), order.end(), rng);
      const AllocFreeEstimate want = allocfree_from_timeline(g, info, order);
      const AllocFreeEstimate got = estimate_peak_memory_allocfree(g, info, order);
      REQUIRE(got.peak == want.peak);
      REQUIRE(allocfree_peak(g, info, order) == want.peak);
      REQUIRE(got.post_alloc == want.post_alloc);
      REQUIRE(got.post_free == want.post_free);
      REQUIRE(got.node_alloc == want.node_alloc);
      REQUIRE(got.node_free == want.node_free);
      REQUIRE(got.last_use == want.last_use);
    }
  }
}
