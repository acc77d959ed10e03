#include "core/graph/builder.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <unordered_set>

#include "core/util/error.h"
#include "core/util/saturating.h"
#include "core/util/utf8.h"

namespace schedlab {

bool default_freeable(std::string_view name) {
  for (std::string_view p : {"primals_", "arg", "fwd_rng_state", "bwd_rng_state", "tangents"})
    if (name.substr(0, p.size()) == p) return false;
  return true;
}

std::string quoted_name(std::string_view s) {
  // Names come from files: a control character (C0, DEL or C1, which a
  // terminal may obey) or a byte that is not UTF-8 becomes '?', so that the
  // message stays one line and passes nothing to the terminal.
  std::string out = "\"";
  const std::string_view cut = s.substr(0, 120);
  for (std::size_t i = 0; i < cut.size();) {
    const auto c = static_cast<unsigned char>(cut[i]);
    if (c < 0x80) {
      if (c == '"' || c == '\\') out += '\\';
      out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(cut, i);
    if (n == 0 || (c == 0xC2 && static_cast<unsigned char>(cut[i + 1]) < 0xA0)) {  // not UTF-8, or U+0080..U+009F
      out += '?';
      i += n == 0 ? 1 : n;
      continue;
    }
    out.append(cut.substr(i, n));
    i += n;
  }
  if (s.size() > 120) out += "...";
  return out + "\"";
}

std::string member_place(std::string_view where, std::string_view key) {
  bool plain = !key.empty() && key.size() <= 120;
  for (const char c : key)
    plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.');
  std::string out(where);
  if (!out.empty()) out += '.';
  return out + (plain ? std::string(key) : quoted_name(key));
}

namespace {

// Places as the loader names them: `inputs[1] "x"`, `nodes[3] "op7"`.
std::string input_place(const Graph& g, BufId b) { return "inputs[" + std::to_string(b) + "] " + quoted_name(g.buffers[b].name); }
std::string node_place(const Graph& g, NodeId v) { return "nodes[" + std::to_string(v) + "] " + quoted_name(g.nodes[v].name); }
std::string item(std::string_view field, std::size_t i) { return std::string(field) + "[" + std::to_string(i) + "]"; }

// `nodes[3] "op7": outputs[0]` for a produced buffer, `inputs[1] "x"` for an input.
std::string buffer_place(const Graph& g, BufId b) {
  const Buffer& buf = g.buffers[b];
  if (buf.is_input || buf.producer == kNone) return input_place(g, b);
  const auto& outs = g.nodes[buf.producer].outputs;
  std::size_t j = 0;
  while (j < outs.size() && outs[j] != b) ++j;
  return node_place(g, buf.producer) + ": " + item("outputs", j);
}

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw Error(where.empty() ? what : where + ": " + what); }

auto buffer_name_of(const Graph& g) {
  return [&g](BufId b) -> std::string_view { return g.buffers[b].name; };
}
auto node_name_of(const Graph& g) {
  return [&g](NodeId v) -> std::string_view { return g.nodes[v].name; };
}

void index_buffer(Graph& g, BufId b) {
  if (g.buffer_index.insert(g.buffers[b].name, b, buffer_name_of(g)) == NameIndex::kAbsent) return;
  const std::string where = g.buffers[b].is_input ? input_place(g, b) + ": name" : buffer_place(g, b) + ".name";
  fail(where, "duplicate buffer or input name " + quoted_name(g.buffers[b].name));
}

void index_node(Graph& g, NodeId v) {
  if (g.node_index.insert(g.nodes[v].name, v, node_name_of(g)) != NameIndex::kAbsent)
    fail(node_place(g, v), "duplicate node name " + quoted_name(g.nodes[v].name));
}

void index_all(Graph& g) {
  g.buffer_index.clear();
  g.node_index.clear();
  g.buffer_index.reserve(g.buffers.size());
  g.node_index.reserve(g.nodes.size());
  for (BufId b = 0; b < g.num_inputs; ++b) index_buffer(g, b);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    index_node(g, v);
    for (BufId b : g.nodes[v].outputs) index_buffer(g, b);
  }
}

// Ids in range, inputs first, node outputs numbered in node order: what the
// builder and the loader produce, and what graphs filled by hand must keep.
void check_tables(const Graph& g) {
  const BufId nb = g.num_buffers();
  if (g.num_inputs < 0 || g.num_inputs > nb) fail("inputs", "num_inputs out of range");
  for (BufId b = 0; b < g.num_inputs; ++b)
    if (!g.buffers[b].is_input || g.buffers[b].producer != kNone) fail(input_place(g, b), "an input must have no producer");
  BufId next = g.num_inputs;
  auto in_range = [nb](BufId b) { return b >= 0 && b < nb; };
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.nodes[v];
    for (std::size_t j = 0; j < n.outputs.size(); ++j) {
      BufId b = n.outputs[j];
      if (b != next++ || !in_range(b) || g.buffers[b].producer != v || g.buffers[b].is_input)
        fail(node_place(g, v) + ": " + item("outputs", j), "buffer ids must number node outputs in node order");
    }
    for (auto [field, deps] : {std::pair{"reads", &n.reads}, std::pair{"writes", &n.writes}})
      for (std::size_t j = 0; j < deps->size(); ++j)
        if (!in_range((*deps)[j].buf)) fail(node_place(g, v) + ": " + item(field, j), "buffer id out of range");
  }
  if (next != nb) fail("nodes", "a buffer is neither an input nor a node output");
  for (std::size_t i = 0; i < g.outputs.size(); ++i)
    if (!in_range(g.outputs[i])) fail(item("outputs", i), "buffer id out of range");
  for (std::size_t i = 0; i < g.operations.size(); ++i)
    for (const auto* list : {&g.operations[i].outputs, &g.operations[i].reads})
      for (BufId b : *list)
        if (!in_range(b)) fail(item("operations", i), "buffer id out of range");
}

// Every byte count is added in file order: when the total fits in 63 bits,
// no sum a pass takes over a subset can overflow.
class ByteTotal {
 public:
  template <typename Where>
  void add(std::int64_t b, const Where& where) {
    if (b < 0) fail(where(), "value " + std::to_string(b) + " is below the minimum 0");
    if (total_ > std::numeric_limits<std::int64_t>::max() - b) fail(where(), "byte sizes of the graph sum past 63 bits");
    total_ += b;
  }

 private:
  std::int64_t total_ = 0;
};

void check_bytes(const Graph& g) {
  ByteTotal total;
  for (BufId b = 0; b < g.num_inputs; ++b) total.add(g.buffers[b].bytes, [&] { return input_place(g, b) + ": bytes"; });
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    for (BufId b : g.nodes[v].outputs) total.add(g.buffers[b].bytes, [&] { return buffer_place(g, b) + ".bytes"; });
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.nodes[v];
    // Plain variables, not a structured binding: clang 14 (Debian's emcc)
    // cannot capture a binding in the lambda.
    for (const auto& field_deps : {std::pair{"reads", &n.reads}, std::pair{"writes", &n.writes}}) {
      const char* field = field_deps.first;
      const std::vector<Dep>& deps = *field_deps.second;
      for (std::size_t j = 0; j < deps.size(); ++j)
        total.add(deps[j].bytes, [&] { return node_place(g, v) + ": " + item(field, j) + ".bytes"; });
    }
    if (n.collective) total.add(n.collective->bytes, [&] { return node_place(g, v) + ": collective.bytes"; });
  }
}

// `convolution` by ATen's rules for a convolution's arguments
// (check_shape_forward, conv_output_size / conv_input_size in
// aten/src/ATen/native/Convolution.cpp and ConvUtils.h): ranks, per-dim
// lists, minimum values, channels and groups, and the output's sizes.
class ConvolutionCheck {
 public:
  ConvolutionCheck(const Graph& g, NodeId v) : c_(*g.nodes[v].convolution), where_(node_place(g, v) + ": convolution") {}

  void run() const {
    const std::size_t rank = c_.input.size();
    if (rank < 3 || rank > 5)
      fail(where_ + ".input", "rank " + std::to_string(rank) + ", expected 3 to 5 (N, C and 1 to 3 spatial dims)");
    for (auto [field, shape] : {std::pair{"weight", &c_.weight}, std::pair{"output", &c_.output}})
      if (shape->size() != rank)
        fail(where_ + "." + field, "rank " + std::to_string(shape->size()) + ", expected the input's rank " + std::to_string(rank));
    for (auto [field, list] : {std::pair{"stride", &c_.stride}, std::pair{"padding", &c_.padding}, std::pair{"dilation", &c_.dilation},
                               std::pair{"output_padding", &c_.output_padding}})
      if (list->size() != rank - 2)
        fail(where_ + "." + field, "expected " + std::to_string(rank - 2) + (rank == 3 ? " entry" : " entries") +
                                      " (one per spatial dim), got " + std::to_string(list->size()));
    at_least("input", c_.input, 0, 0);
    at_least("weight", c_.weight, 2, 1);  // a kernel of size 0 has no geometry
    at_least("weight", c_.weight, 0, 0);
    at_least("output", c_.output, 0, 0);
    at_least("stride", c_.stride, 0, 1);
    at_least("padding", c_.padding, 0, 0);
    at_least("dilation", c_.dilation, 0, 1);
    at_least("output_padding", c_.output_padding, 0, 0);
    if (c_.groups < 1) fail(where_ + ".groups", "value " + std::to_string(c_.groups) + " is below the minimum 1");
    check_channels();
    for (std::size_t i = 2; i < rank; ++i) check_spatial(i);
  }

 private:
  const ConvolutionGeometry& c_;
  std::string where_;

  void at_least(std::string_view field, const std::vector<std::int64_t>& list, std::size_t from, std::int64_t min) const {
    for (std::size_t i = from; i < list.size(); ++i)
      if (list[i] < min)
        fail(where_ + "." + item(field, i), "value " + std::to_string(list[i]) + " is below the minimum " + std::to_string(min));
  }

  // weight[0] is split into groups in both directions: output channels of a
  // convolution, input channels of a transposed one.
  void check_channels() const {
    const std::int64_t g = c_.groups, w0 = c_.weight[0], w1 = c_.weight[1];
    if (w0 < g) fail(where_ + ".groups", std::to_string(g) + " is more than weight[0] = " + std::to_string(w0));
    if (w0 % g != 0) fail(where_ + ".groups", std::to_string(g) + " does not divide weight[0] = " + std::to_string(w0));
    const std::int64_t grouped = saturating_mul(w1, g);
    const std::string by_groups = "weight[1] * groups = " + std::to_string(w1) + " * " + std::to_string(g) + " = " + std::to_string(grouped);
    const std::string by_weight0 = "weight[0] = " + std::to_string(w0);
    const auto [in_channels, in_rule] = c_.transposed ? std::pair{w0, by_weight0} : std::pair{grouped, by_groups};
    const auto [out_channels, out_rule] = c_.transposed ? std::pair{grouped, by_groups} : std::pair{w0, by_weight0};
    const std::string layout = c_.transposed ? " (transposed: weight is [Cin, Cout/groups, ...])" : "";
    if (c_.input[1] != in_channels)
      fail(where_ + ".input[1]", std::to_string(c_.input[1]) + " channels, expected " + in_rule + layout);
    if (c_.output[1] != out_channels)
      fail(where_ + ".output[1]", std::to_string(c_.output[1]) + " channels, expected " + out_rule + layout);
    if (c_.output[0] != c_.input[0])
      fail(where_ + ".output[0]", "batch " + std::to_string(c_.output[0]) + ", expected the input's " + std::to_string(c_.input[0]));
  }

  // Spatial dim i (of the shapes; i - 2 of the lists).
  void check_spatial(std::size_t i) const {
    const std::size_t d = i - 2;
    const std::int64_t in = c_.input[i], s = c_.stride[d], p = c_.padding[d], dil = c_.dilation[d], op = c_.output_padding[d];
    const std::int64_t kernel = saturating_add(saturating_mul(dil, c_.weight[i] - 1), 1);  // dilated
    std::int64_t expected;
    if (c_.transposed) {
      if (op >= s && op >= dil)
        fail(where_ + "." + item("output_padding", d), std::to_string(op) + " is not smaller than the stride " + std::to_string(s) +
                                                            " or the dilation " + std::to_string(dil));
      expected = saturating_add(saturating_add(saturating_mul(in - 1, s), -saturating_mul(2, p)), saturating_add(kernel, op));
    } else {
      const std::int64_t padded = saturating_add(in, saturating_mul(2, p));
      if (padded < kernel)
        fail(where_ + "." + item("weight", i), "the kernel (dilated: " + std::to_string(kernel) + ") is larger than the padded input (" +
                                                   std::to_string(padded) + ")");
      expected = (padded - kernel) / s + 1;
    }
    if (c_.output[i] != expected)
      fail(where_ + "." + item("output", i), std::to_string(c_.output[i]) + ", expected " + std::to_string(expected) +
                                                 " from the input, weight, stride, padding, dilation" +
                                                 (c_.transposed ? " and output_padding (transposed)" : ""));
  }
};

// `attention`: SDPA-layout shapes [batch..., heads, seq, head_dim] of one
// rank (at least 3), every size at least 1, and a dropout probability.
class AttentionCheck {
 public:
  AttentionCheck(const Graph& g, NodeId v) : a_(*g.nodes[v].attention), where_(node_place(g, v) + ": attention") {}

  void run() const {
    const std::size_t rank = a_.query.size();
    if (rank < 3) fail(where_ + ".query", "rank " + std::to_string(rank) + ", expected 3 or more ([batch..., heads, seq, head_dim])");
    for (auto [field, shape] : {std::pair{"key", &a_.key}, std::pair{"value", &a_.value}})
      if (shape->size() != rank)
        fail(where_ + "." + field, "rank " + std::to_string(shape->size()) + ", expected the query's rank " + std::to_string(rank));
    for (auto [field, shape] : {std::pair{"query", &a_.query}, std::pair{"key", &a_.key}, std::pair{"value", &a_.value}})
      for (std::size_t i = 0; i < shape->size(); ++i)
        if ((*shape)[i] < 1)
          fail(where_ + "." + item(field, i), "value " + std::to_string((*shape)[i]) + " is below the minimum 1");
    if (!(a_.dropout_p >= 0 && a_.dropout_p <= 1))  // NaN fails too
      fail(where_ + ".dropout_p", "expected a probability in [0, 1], got " + shortest(a_.dropout_p));
  }

 private:
  const AttentionCall& a_;
  std::string where_;

  static std::string shortest(double d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", d);
    return buf;
  }
};

// `reduction_types`: distinct non-empty names in sorted order, so that two
// nodes with the same reductions carry the same list.
void check_reduction_types(const Graph& g, NodeId v) {
  const std::vector<std::string>& types = g.nodes[v].reduction_types;
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string where = node_place(g, v) + ": " + item("reduction_types", i);
    if (types[i].empty()) fail(where, "expected a non-empty string");
    if (i == 0) continue;
    if (types[i] == types[i - 1]) fail(where, quoted_name(types[i]) + " repeats the entry before it (expected distinct names)");
    if (types[i] < types[i - 1]) fail(where, quoted_name(types[i]) + " sorts before " + quoted_name(types[i - 1]) + " (expected sorted names)");
  }
}

// `scatter_index`: counts that agree with one another (the reader
// checks their JSON types and minimums).
void check_scatter_index(const Graph& g, NodeId v) {
  const ScatterIndex& s = *g.nodes[v].scatter_index;
  const std::string where = node_place(g, v) + ": scatter_index";
  const std::string of = " (the updates, " + std::to_string(s.updates) + ")";
  if (s.updates < 0 || s.rows < 0 || s.max_row_updates < 0) fail(where, "counts below 0");
  if (s.rows > s.updates) fail(where + ".rows", std::to_string(s.rows) + " is more than the updates" + of);
  const std::int64_t least = s.updates > 0 ? 1 : 0;
  if (s.max_row_updates < least || s.max_row_updates > s.updates)
    fail(where + ".max_row_updates", std::to_string(s.max_row_updates) + " is outside [" + std::to_string(least) + ", the updates]" + of);
  // Saturating: both counts come from a file, and their product may pass 2^63.
  if (s.rows > 0 && saturating_mul(s.max_row_updates, s.rows) < s.updates)
    fail(where + ".max_row_updates", std::to_string(s.max_row_updates) + " times " + std::to_string(s.rows) + " rows is less than the updates" + of);
  if (s.updates > 0 && !(s.mean_run >= 1 && s.mean_run <= static_cast<double>(s.updates)))  // NaN fails too
    fail(where + ".mean_run", "expected a mean run in [1, the updates]" + of);
}

void check_node(const Graph& g, NodeId v) {
  const Node& n = g.nodes[v];
  if (n.runtime_us && (!std::isfinite(*n.runtime_us) || *n.runtime_us < 0))
    fail(node_place(g, v) + ": runtime_us", "expected a finite number >= 0");
  if (n.kind == NodeKind::Collective && !n.collective) fail(node_place(g, v), "a collective node needs a \"collective\" object");
  if (n.collective && n.collective->group_size < 1)
    fail(node_place(g, v) + ": collective.group_size", "value " + std::to_string(n.collective->group_size) + " is below the minimum 1");
  // mutation_of names an input, an earlier node's buffer, or an earlier
  // output of this same node.
  for (std::size_t j = 0; j < n.outputs.size(); ++j) {
    const BufId self = n.outputs[j];
    const BufId t = g.buffers[self].mutation_of;
    if (t == kNone) continue;
    const std::string where = node_place(g, v) + ": " + item("outputs", j) + ".mutation_of";
    if (t < 0 || t >= g.num_buffers()) fail(where, "buffer id out of range");
    const Buffer& tb = g.buffers[t];
    const bool earlier = tb.is_input || tb.producer < v || (tb.producer == v && t < self);
    if (!earlier) fail(where, quoted_name(tb.name) + " is not an input or a buffer produced earlier");
  }
  // view_of names a buffer with storage of its own (a fixed layout, no
  // mutation, no view itself), another than the view, which is a fixed
  // buffer no larger than it and no mutation.
  for (std::size_t j = 0; j < n.outputs.size(); ++j) {
    const Buffer& self = g.buffers[n.outputs[j]];
    const BufId t = self.view_of;
    if (t == kNone) continue;
    const std::string where = node_place(g, v) + ": " + item("outputs", j) + ".view_of";
    if (t < 0 || t >= g.num_buffers()) fail(where, "buffer id out of range");
    const Buffer& tb = g.buffers[t];
    if (t == n.outputs[j]) fail(where, "a buffer is no view of itself");
    if (tb.is_input || tb.layout != Layout::Fixed || tb.mutation_of != kNone || tb.view_of != kNone)
      fail(where, quoted_name(tb.name) + " is not a buffer with a storage of its own (a fixed layout, not a mutation, not a view)");
    if (self.layout != Layout::Fixed || self.mutation_of != kNone) fail(where, "only a fixed buffer that mutates nothing can be a view");
    if (self.bytes > tb.bytes) fail(where, "the view (" + std::to_string(self.bytes) + " bytes) is larger than " + quoted_name(tb.name) + " (" + std::to_string(tb.bytes) + ")");
  }
  if (n.convolution) ConvolutionCheck(g, v).run();
  if (n.attention) AttentionCheck(g, v).run();
  if (n.scatter_index) check_scatter_index(g, v);
  check_reduction_types(g, v);
}

// Iterative DFS over producer edges; returns `"a" -> "b" -> "a"` or "".
std::string find_cycle(const Graph& g) {
  const auto n = g.nodes.size();
  std::vector<std::uint8_t> state(n, 0);  // 0 new, 1 on the stack, 2 done
  std::vector<NodeId> parent(n, kNone);
  for (std::size_t s = 0; s < n; ++s) {
    if (state[s]) continue;
    std::vector<std::pair<NodeId, std::size_t>> stack{{static_cast<NodeId>(s), 0}};
    state[s] = 1;
    while (!stack.empty()) {
      auto& [v, k] = stack.back();
      const auto& reads = g.nodes[v].reads;
      if (k == reads.size()) {
        state[v] = 2;
        stack.pop_back();
        continue;
      }
      NodeId u = g.buffers[reads[k++].buf].producer;
      if (u == kNone || u == v) continue;
      if (state[u] == 1) {
        std::string out = quoted_name(g.nodes[u].name);
        std::vector<NodeId> path;
        for (NodeId w = v; w != u; w = parent[w]) path.push_back(w);
        for (auto it = path.rbegin(); it != path.rend(); ++it) out += " -> " + quoted_name(g.nodes[*it].name);
        return out + " -> " + quoted_name(g.nodes[u].name) + " (each reads a buffer of the next)";
      }
      if (state[u] == 0) {
        state[u] = 1;
        parent[u] = v;
        stack.emplace_back(u, 0);
      }
    }
  }
  return {};
}

// The baseline order must be topological. A forward read is either part of
// a cycle (reported as the cycle) or simply out of order.
void check_topological(const Graph& g) {
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& node = g.nodes[v];
    for (std::size_t j = 0; j < node.reads.size(); ++j) {
      NodeId p = g.buffers[node.reads[j].buf].producer;
      if (p == kNone || p <= v) continue;
      std::string cycle = find_cycle(g);
      if (!cycle.empty()) fail("nodes", "dependency cycle: " + cycle);
      fail(node_place(g, v) + ": " + item("reads", j), "reads " + quoted_name(g.buffers[node.reads[j].buf].name) +
                                                           ", produced by the later node " + quoted_name(g.nodes[p].name) +
                                                           " (nodes must be in topological order)");
    }
  }
}

void check_operations(const Graph& g) {
  std::unordered_set<std::string_view> seen;
  for (std::size_t i = 0; i < g.operations.size(); ++i)
    if (!seen.insert(g.operations[i].name).second)
      fail(item("operations", i) + " " + quoted_name(g.operations[i].name), "duplicate operation name " + quoted_name(g.operations[i].name));
}

}  // namespace

void validate(Graph& g) {
  if (g.world_size < 1) fail("world_size", "value " + std::to_string(g.world_size) + " is below the minimum 1");
  check_tables(g);
  if (g.buffer_index.size() != g.buffers.size() || g.node_index.size() != g.nodes.size()) index_all(g);
  check_bytes(g);
  for (NodeId v = 0; v < g.num_nodes(); ++v) check_node(g, v);
  check_topological(g);
  check_operations(g);
}

GraphBuilder::GraphBuilder() = default;

void GraphBuilder::reserve(std::size_t buffers, std::size_t nodes) {
  g_.buffers.reserve(buffers);
  g_.nodes.reserve(nodes);
  g_.buffer_index.reserve(buffers);
  g_.node_index.reserve(nodes);
}

BufId GraphBuilder::add_input(std::string name, std::int64_t bytes, std::optional<bool> freeable) {
  if (g_.num_buffers() != g_.num_inputs) throw std::logic_error("GraphBuilder: inputs must come before node outputs");
  Buffer b;
  b.freeable = freeable.value_or(default_freeable(name));
  b.donated = b.freeable;
  b.name = std::move(name);
  b.bytes = bytes;
  b.is_input = true;
  const auto id = static_cast<BufId>(g_.buffers.size());
  g_.buffers.push_back(std::move(b));
  ++g_.num_inputs;
  index_buffer(g_, id);
  return id;
}

NodeId GraphBuilder::add_node(Node n) {
  if (!n.outputs.empty()) throw std::logic_error("GraphBuilder: add outputs through add_node_output");
  const auto id = static_cast<NodeId>(g_.nodes.size());
  g_.nodes.push_back(std::move(n));
  index_node(g_, id);
  return id;
}

BufId GraphBuilder::add_node_output(NodeId producer, Buffer b) {
  if (producer != g_.num_nodes() - 1) throw std::logic_error("GraphBuilder: outputs belong to the most recent node");
  b.producer = producer;
  b.is_input = false;
  const auto id = static_cast<BufId>(g_.buffers.size());
  g_.buffers.push_back(std::move(b));
  g_.nodes[producer].outputs.push_back(id);
  index_buffer(g_, id);
  return id;
}

BufId GraphBuilder::require_buffer(std::string_view name) const {
  BufId b = g_.find_buffer(name);
  if (b == kNone) throw Error("unknown buffer " + quoted_name(name));
  return b;
}

Graph GraphBuilder::finish() {
  validate(g_);
  Graph out = std::move(g_);
  g_ = Graph{};
  return out;
}

}  // namespace schedlab
