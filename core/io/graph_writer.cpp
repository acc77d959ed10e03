#include "core/io/graph_writer.h"

#include "core/io/json_writer.h"

namespace schedlab {
namespace {

// Keys in the order the format documents them (not sorted): graphs are read
// by people as often as by programs.
void write_dep(JsonWriter& w, const Graph& g, const Dep& d) {
  w.begin_object();
  w.field("name", g.buffers[d.buf].name);
  w.field("dep", to_string(d.kind));
  if (!d.index.empty()) w.field("index", d.index);
  if (!d.size.empty()) w.key("size").array(d.size);
  if (!d.size_expr.empty()) w.key("size_expr").array(d.size_expr);
  w.field("bytes", d.bytes);
  w.end_object();
}

void write_buffer(JsonWriter& w, const Graph& g, const Buffer& b) {
  w.begin_object();
  w.field("name", b.name);
  w.field("layout", to_string(b.layout));
  if (!b.dtype.empty()) w.field("dtype", b.dtype);
  if (!b.shape.empty()) w.key("shape").array(b.shape);
  if (!b.stride.empty()) w.key("stride").array(b.stride);
  w.field("bytes", b.bytes);
  if (b.mutation_of != kNone) w.field("mutation_of", g.buffers[b.mutation_of].name);
  if (b.view_of != kNone) w.field("view_of", g.buffers[b.view_of].name);
  if (!b.aliases.empty()) w.key("aliases").array(b.aliases);
  // `hint_bytes` goes with `size_hint` (format: a data-dependent size).
  if (b.hint_bytes) w.field("size_hint", true).field("hint_bytes", *b.hint_bytes);
  w.end_object();
}

void write_deps(JsonWriter& w, const Graph& g, const std::vector<Dep>& deps) {
  w.array(deps, [&g](JsonWriter& w2, const Dep& d) { write_dep(w2, g, d); });
}

void write_buffer_names(JsonWriter& w, const Graph& g, const std::vector<BufId>& bufs) {
  w.begin_array();
  for (BufId b : bufs) w.value(g.buffers[b].name);
  w.end_array();
}

void write_convolution(JsonWriter& w, const ConvolutionGeometry& c) {
  w.begin_object();
  w.key("input").array(c.input);
  w.key("weight").array(c.weight);
  w.key("output").array(c.output);
  w.key("stride").array(c.stride);
  w.key("padding").array(c.padding);
  w.key("dilation").array(c.dilation);
  w.key("output_padding").array(c.output_padding);
  w.field("groups", c.groups);
  w.field("transposed", c.transposed);
  if (c.memory_format) w.field("memory_format", to_string(*c.memory_format));
  if (c.output_mask) w.key("output_mask").begin_array().value((*c.output_mask)[0]).value((*c.output_mask)[1]).value((*c.output_mask)[2]).end_array();
  w.end_object();
}

void write_attention(JsonWriter& w, const AttentionCall& a) {
  w.begin_object();
  w.key("query").array(a.query);
  w.key("key").array(a.key);
  w.key("value").array(a.value);
  w.field("causal", a.causal);
  w.field("bias", a.bias);
  w.field("dropout_p", a.dropout_p);
  w.end_object();
}

void write_node(JsonWriter& w, const Graph& g, const Node& n) {
  w.begin_object();
  w.field("name", n.name);
  w.field("kind", to_string(n.kind));
  if (!n.members.empty()) w.key("members").array(n.members);
  if (!n.kernel.empty()) w.field("kernel", n.kernel);
  if (n.has_group) w.key("group").begin_array().value(n.numel).value(n.rnumel).end_array();
  if (!n.numel_expr.empty() || !n.rnumel_expr.empty()) w.key("group_expr").begin_array().value(n.numel_expr).value(n.rnumel_expr).end_array();
  if (!n.loop_sizes.empty() || !n.reduction_sizes.empty()) {
    w.key("group_dims").begin_array();
    w.array(n.loop_sizes).array(n.reduction_sizes);
    w.end_array();
  }
  if (n.foreach >= 0) w.field("foreach", n.foreach);
  if (n.flops) w.field("flops", *n.flops);
  if (n.runtime_us) w.field("runtime_us", *n.runtime_us);
  if (n.workspace_bytes) w.field("workspace_bytes", *n.workspace_bytes).field("workspace_source", "observed");
  if (n.convolution) {
    w.key("convolution");
    write_convolution(w, *n.convolution);
  }
  if (n.attention) {
    w.key("attention");
    write_attention(w, *n.attention);
  }
  if (!n.reduction_types.empty()) w.key("reduction_types").array(n.reduction_types);
  if (n.scatter_index) {
    const ScatterIndex& s = *n.scatter_index;
    w.key("scatter_index").begin_object();
    w.field("updates", s.updates).field("rows", s.rows).field("max_row_updates", s.max_row_updates);
    w.field("mean_run", s.mean_run).field("source", "observed");
    w.end_object();
  }
  w.key("outputs").begin_array();
  for (BufId b : n.outputs) write_buffer(w, g, g.buffers[b]);
  w.end_array();
  w.key("reads");
  write_deps(w, g, n.reads);
  w.key("writes");
  write_deps(w, g, n.writes);
  if (n.collective) {
    w.key("collective").begin_object();
    w.field("op", n.collective->op);
    w.field("group_size", n.collective->group_size);
    w.field("bytes", n.collective->bytes);
    w.end_object();
  }
  w.end_object();
}

// The graph into `w`, newline-terminated.
void write_graph(JsonWriter& w, const Graph& g) {
  w.begin_object();
  w.field("format", "schedgraph/1");
  if (!g.name.empty()) w.field("name", g.name);
  if (!g.source.empty()) w.field("source", g.source);
  w.field("world_size", g.world_size);
  if (!g.device.empty()) w.field("device", g.device);
  w.key("inputs").begin_array();
  for (BufId b = 0; b < g.num_inputs; ++b) {
    const Buffer& in = g.buffers[b];
    w.begin_object().field("name", in.name).field("bytes", in.bytes).field("freeable", in.freeable);
    if (in.donated != in.freeable) w.field("donated", in.donated);  // absent reads as `freeable`
    if (!in.dtype.empty()) w.field("dtype", in.dtype);
    if (!in.shape.empty()) w.key("shape").array(in.shape);
    if (!in.stride.empty()) w.key("stride").array(in.stride);
    w.end_object();
  }
  w.end_array();
  w.key("outputs");
  write_buffer_names(w, g, g.outputs);
  w.key("nodes").array(g.nodes, [&g](JsonWriter& w2, const Node& n) { write_node(w2, g, n); });
  if (!g.operations.empty()) {
    w.key("operations").array(g.operations, [&g](JsonWriter& w2, const Operation& op) {
      w2.begin_object().field("name", op.name);
      w2.key("outputs");
      write_buffer_names(w2, g, op.outputs);
      w2.key("reads");
      write_buffer_names(w2, g, op.reads);
      w2.end_object();
    });
  }
  w.end_object();
  w.raw("\n");
}

}  // namespace

std::string write_graph_json(const Graph& g) {
  JsonWriter w;
  write_graph(w, g);
  return w.take_text();
}

void write_graph_json(const Graph& g, std::FILE* out, const std::string& name) {
  JsonWriter w(out, name);
  write_graph(w, g);
  w.flush();
}

}  // namespace schedlab
