#include "core/gen/generators.h"

#include <algorithm>
#include <random>
#include <string>

#include "core/gen/budget.h"
#include "core/graph/builder.h"
#include "core/util/error.h"

namespace schedlab {

Graph generate_layered(const LayeredSpec& spec) {
  if (spec.nodes < 0 || spec.width < 1 || spec.fan_in < 0 || spec.skip < 1)
    throw OptionError("gen layered: nodes >= 0, width >= 1, fan-in >= 0 and skip >= 1 are required");
  check_generated_size("gen layered", "--nodes " + std::to_string(spec.nodes) + " --fan-in " + std::to_string(spec.fan_in),
                       static_cast<std::uint64_t>(spec.nodes),
                       static_cast<std::uint64_t>(spec.nodes) * (static_cast<std::uint64_t>(spec.fan_in) + 1));
  std::mt19937_64 rng(spec.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Graph g;
  g.name = "layered_" + std::to_string(spec.nodes);
  g.source = "schedlab gen layered";
  // Inputs: one activation per first-layer slot (freeable), plus weights.
  const std::int32_t n_inputs = std::min<std::int32_t>(spec.width, std::max<std::int32_t>(spec.nodes, 1));
  for (std::int32_t i = 0; i < n_inputs; ++i) {
    Buffer in;
    in.name = (i % 4 == 0 ? "primals_" : "input_") + std::to_string(i);
    in.bytes = std::int64_t{4096} << (rng() % 10);
    in.is_input = true;
    in.freeable = i % 4 != 0;
    in.donated = in.freeable;
    g.buffers.push_back(std::move(in));
  }
  g.num_inputs = n_inputs;
  std::vector<BufId> prev_layers;  // buffers of the last `skip` layers
  std::vector<std::size_t> layer_start{0};
  std::vector<BufId> all_outputs;
  for (BufId b = 0; b < n_inputs; ++b) prev_layers.push_back(b);
  std::size_t last_layer_begin = 0;

  for (std::int32_t v = 0; v < spec.nodes; ++v) {
    if (v > 0 && v % spec.width == 0) {
      layer_start.push_back(prev_layers.size());
      if (static_cast<std::int32_t>(layer_start.size()) > spec.skip) {
        std::size_t drop = layer_start[1];
        prev_layers.erase(prev_layers.begin(), prev_layers.begin() + static_cast<std::ptrdiff_t>(drop));
        layer_start.erase(layer_start.begin());
        for (auto& s : layer_start) s -= drop;
      }
      last_layer_begin = layer_start.size() >= 2 ? layer_start[layer_start.size() - 2] : 0;
    }
    Node n;
    n.name = "op" + std::to_string(v);
    double r = unit(rng);
    n.kind = r < spec.extern_share ? NodeKind::Extern : (r < spec.extern_share + spec.reduction_share ? NodeKind::Reduction : NodeKind::Pointwise);
    Buffer out;
    out.name = "buf" + std::to_string(v);
    out.bytes = std::int64_t{4096} << (rng() % 11);
    out.dtype = "f32";
    out.producer = v;
    const std::int64_t numel = out.bytes / 4;
    if (n.kind == NodeKind::Extern) {
      n.kernel = "extern_kernels.mm";
      n.flops = 2 * numel * 256;
    } else {
      n.has_group = true;
      n.numel = n.kind == NodeKind::Reduction ? std::max<std::int64_t>(1, numel / 64) : numel;
      n.rnumel = n.kind == NodeKind::Reduction ? 64 : 1;
    }
    // Reads: one from the previous layer, the rest from the window.
    const std::size_t window = std::max<std::size_t>(prev_layers.size(), 1);
    const std::size_t prev_count = window - std::min(window, last_layer_begin);
    std::vector<BufId> picks;
    for (std::int32_t k = 0; k < spec.fan_in && !prev_layers.empty(); ++k) {
      std::size_t idx = k == 0 && prev_count > 0 ? last_layer_begin + rng() % prev_count : rng() % prev_layers.size();
      BufId b = prev_layers[idx];
      if (std::find(picks.begin(), picks.end(), b) == picks.end()) picks.push_back(b);
    }
    // Externs read and write whole buffers; kernels access them elementwise.
    auto whole_access = [&](BufId b) {
      Dep d;
      d.buf = b;
      d.kind = n.kind == NodeKind::Extern ? DepKind::Star : DepKind::Memory;
      d.bytes = g.buffers[b].bytes;
      if (d.kind == DepKind::Memory) {
        d.index = "c0";
        d.size = {g.buffers[b].bytes / 4};
      }
      return d;
    };
    for (BufId b : picks) n.reads.push_back(whole_access(b));
    BufId ob = static_cast<BufId>(g.buffers.size());
    g.buffers.push_back(std::move(out));
    n.outputs.push_back(ob);
    n.writes.push_back(whole_access(ob));
    g.nodes.push_back(std::move(n));
    prev_layers.push_back(ob);
    all_outputs.push_back(ob);
  }
  // Graph outputs: the last layer.
  std::size_t tail = std::min<std::size_t>(all_outputs.size(), static_cast<std::size_t>(spec.width));
  g.outputs.assign(all_outputs.end() - static_cast<std::ptrdiff_t>(tail), all_outputs.end());
  validate(g);
  return g;
}

Graph replicate_graph(const Graph& base, std::int32_t copies, bool chained) {
  if (copies < 1) throw OptionError("gen replicate: --copies must be >= 1");
  std::uint64_t deps = 0;
  for (const Node& n : base.nodes) deps += n.reads.size() + n.writes.size();
  check_generated_size("gen replicate", "--copies " + std::to_string(copies), base.nodes.size() * static_cast<std::uint64_t>(copies),
                       deps * static_cast<std::uint64_t>(copies));
  Graph g;
  g.name = base.name + "_x" + std::to_string(copies) + (chained ? "_chained" : "");
  g.source = "schedlab gen replicate of " + (base.name.empty() ? std::string("a graph") : base.name);
  g.world_size = base.world_size;
  const auto nb = static_cast<BufId>(base.buffers.size());
  const auto nn = static_cast<NodeId>(base.nodes.size());
  auto suffix = [](std::int32_t k) { return "__r" + std::to_string(k); };
  // Inputs of every copy first, then every copy's node buffers.
  for (std::int32_t k = 0; k < copies; ++k)
    for (BufId b = 0; b < base.num_inputs; ++b) {
      Buffer in = base.buffers[b];
      in.name += suffix(k);
      g.buffers.push_back(std::move(in));
    }
  g.num_inputs = base.num_inputs * copies;
  const BufId inputs_total = g.num_inputs;
  const BufId produced = nb - base.num_inputs;
  auto map_buf = [&](BufId b, std::int32_t k) -> BufId {
    if (b < base.num_inputs) return k * base.num_inputs + b;
    return inputs_total + k * produced + (b - base.num_inputs);
  };
  for (std::int32_t k = 0; k < copies; ++k)
    for (BufId b = base.num_inputs; b < nb; ++b) {
      Buffer buf = base.buffers[b];
      buf.name += suffix(k);
      buf.producer = buf.producer + k * nn;
      if (buf.mutation_of != kNone) buf.mutation_of = map_buf(buf.mutation_of, k);
      if (buf.view_of != kNone) buf.view_of = map_buf(buf.view_of, k);
      for (auto& a : buf.aliases) a += suffix(k);
      g.buffers.push_back(std::move(buf));
    }
  for (std::int32_t k = 0; k < copies; ++k) {
    for (NodeId v = 0; v < nn; ++v) {
      Node n = base.nodes[v];
      n.name += suffix(k);
      for (auto& m : n.members) m += suffix(k);
      for (auto& b : n.outputs) b = map_buf(b, k);
      for (auto& d : n.reads) d.buf = map_buf(d.buf, k);
      for (auto& d : n.writes) d.buf = map_buf(d.buf, k);
      if (chained && k > 0 && v == 0 && !base.outputs.empty()) {
        Dep link;
        link.buf = map_buf(base.outputs.front(), k - 1);
        link.kind = DepKind::Star;
        link.bytes = base.buffers[base.outputs.front()].bytes;
        n.reads.push_back(link);
      }
      g.nodes.push_back(std::move(n));
    }
    for (BufId b : base.outputs) g.outputs.push_back(map_buf(b, k));
    for (const Operation& op : base.operations) {
      Operation o = op;
      o.name += suffix(k);
      for (auto& b : o.outputs) b = map_buf(b, k);
      for (auto& b : o.reads) b = map_buf(b, k);
      g.operations.push_back(std::move(o));
    }
  }
  // A chain link reads a buffer of copy k-1, all of whose nodes come first:
  // the baseline stays topological.
  validate(g);
  return g;
}

}  // namespace schedlab
