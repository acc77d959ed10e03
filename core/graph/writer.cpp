#include "core/graph/writer.h"

namespace schedlab {
namespace {

using nlohmann::json;

json dep_to_json(const Graph& g, const Dep& d) {
  json j = {{"name", g.buffers[d.buf].name}, {"dep", to_string(d.kind)}};
  if (!d.index.empty()) j["index"] = d.index;
  if (!d.size.empty()) j["size"] = d.size;
  j["bytes"] = d.bytes;
  return j;
}

json buffer_to_json(const Graph& g, const Buffer& b) {
  json j = {{"name", b.name}, {"bytes", b.bytes}};
  if (b.layout != Layout::Fixed) j["layout"] = to_string(b.layout);
  if (!b.dtype.empty()) j["dtype"] = b.dtype;
  if (!b.shape.empty()) j["shape"] = b.shape;
  if (b.mutation_of != kNone) j["mutation_of"] = g.buffers[b.mutation_of].name;
  if (!b.aliases.empty()) j["aliases"] = b.aliases;
  return j;
}

json node_to_json(const Graph& g, const Node& n) {
  json j = {{"name", n.name}, {"kind", to_string(n.kind)}};
  if (!n.members.empty()) j["members"] = n.members;
  if (!n.kernel.empty()) j["kernel"] = n.kernel;
  if (n.has_group) j["group"] = {n.numel, n.rnumel};
  if (n.flops) j["flops"] = *n.flops;
  if (n.runtime_us) j["runtime_us"] = *n.runtime_us;
  json outs = json::array(), reads = json::array(), writes = json::array();
  for (BufId b : n.outputs) outs.push_back(buffer_to_json(g, g.buffers[b]));
  for (const Dep& d : n.reads) reads.push_back(dep_to_json(g, d));
  for (const Dep& d : n.writes) writes.push_back(dep_to_json(g, d));
  j["outputs"] = std::move(outs);
  j["reads"] = std::move(reads);
  j["writes"] = std::move(writes);
  if (n.collective)
    j["collective"] = {{"op", n.collective->op}, {"group_size", n.collective->group_size}, {"bytes", n.collective->bytes}};
  return j;
}

}  // namespace

json graph_to_json(const Graph& g) {
  json j = {{"format", "schedgraph/1"}};
  if (!g.name.empty()) j["name"] = g.name;
  if (!g.source.empty()) j["source"] = g.source;
  j["world_size"] = g.world_size;
  json inputs = json::array();
  for (BufId b = 0; b < g.num_inputs; ++b)
    inputs.push_back({{"name", g.buffers[b].name}, {"bytes", g.buffers[b].bytes}, {"freeable", g.buffers[b].freeable}});
  j["inputs"] = std::move(inputs);
  json outputs = json::array();
  for (BufId b : g.outputs) outputs.push_back(g.buffers[b].name);
  j["outputs"] = std::move(outputs);
  json nodes = json::array();
  for (const Node& n : g.nodes) nodes.push_back(node_to_json(g, n));
  j["nodes"] = std::move(nodes);
  if (!g.operations.empty()) {
    json ops = json::array();
    for (const Operation& op : g.operations) {
      json o = {{"name", op.name}, {"outputs", json::array()}, {"reads", json::array()}};
      for (BufId b : op.outputs) o["outputs"].push_back(g.buffers[b].name);
      for (BufId b : op.reads) o["reads"].push_back(g.buffers[b].name);
      ops.push_back(std::move(o));
    }
    j["operations"] = std::move(ops);
  }
  return j;
}

std::string write_graph_json(const Graph& g) { return graph_to_json(g).dump(1) + "\n"; }

}  // namespace schedlab
