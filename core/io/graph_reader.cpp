// Loader for schedgraph/1: JSON tape -> validated, indexed Graph.
//
// Every check reports its place as a path (`nodes[3] "op7": reads[0].dep`).
// Paths are built lazily from a chain of `Place` frames on the stack, only
// when something fails: a 57 MB graph has millions of places and building
// their strings eagerly cost more than the parse itself.
#include "core/io/graph_reader.h"

#include <array>
#include <cmath>
#include <functional>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <limits>
#include <optional>

#include "core/graph/builder.h"
#include "core/util/error.h"
#include "core/io/files.h"
#include "core/io/json_doc.h"
#include "core/util/utf8.h"

namespace schedlab {
namespace {

// One step of a path: a field (`reads`), an index (`[2]`) or both, and for
// named things their name (`nodes[3] "op7"`), after which ": " separates.
struct Place {
  const Place* parent = nullptr;
  std::string_view field;
  std::int64_t index = -1;
  std::string_view name;

  Place at(std::string_view f) const { return Place{this, f, -1, {}}; }
  Place item(std::size_t i) const { return Place{this, {}, static_cast<std::int64_t>(i), {}}; }

  std::string str() const {
    std::string head = parent ? parent->str() : std::string();
    std::string out = head;
    if (!field.empty()) {
      if (!out.empty()) out += (parent && !parent->name.empty()) ? ": " : ".";
      out += field;
    }
    if (index >= 0) out += "[" + std::to_string(index) + "]";
    if (!name.empty()) out += " " + quoted_name(name);
    return out;
  }
};

[[noreturn]] void fail(const Place& where, const std::string& what) {
  std::string w = where.str();
  throw Error(w.empty() ? what : w + ": " + what);
}

JsonValue require(const JsonValue& obj, std::string_view key, const Place& where) {
  JsonValue v = obj.find(key);
  if (!v) fail(where, "missing required field \"" + std::string(key) + "\"");
  return v;
}

// The members a reader knows, found in one pass over an object: for each
// name what find() gives (the last one when a key repeats), with a tenth of
// the key comparisons of one find() per field. `obj` is an object.
template <std::size_t N>
std::array<JsonValue, N> pick(const JsonValue& obj, const std::array<std::string_view, N>& names) {
  std::array<JsonValue, N> out{};
  const std::size_t members = obj.size();
  for (std::size_t i = 0; i < members; ++i) {
    const std::string_view key = obj.key_at(i);
    for (std::size_t f = 0; f < N; ++f) {
      if (key == names[f]) {
        out[f] = obj[i];
        break;
      }
    }
  }
  return out;
}

JsonValue required(const JsonValue& picked, std::string_view key, const Place& where) {
  if (!picked) fail(where, "missing required field \"" + std::string(key) + "\"");
  return picked;
}

// The fields of a node and of a buffer, in the order of the indices below.
constexpr std::array<std::string_view, 20> kNodeFields = {"name",       "kind",      "outputs",          "members", "kernel", "group",
                                                          "group_expr", "group_dims", "foreach",          "flops",   "runtime_us",
                                                          "workspace_bytes", "workspace_source", "reads", "writes", "collective",
                                                          "convolution", "attention", "reduction_types", "scatter_index"};
enum NodeField : std::size_t {
  kNodeName, kKind, kOutputs, kMembers, kKernel, kGroup, kGroupExpr, kGroupDims, kForeach, kFlops, kRuntimeUs,
  kWorkspaceBytes, kWorkspaceSource, kReads, kWrites, kCollective, kConvolution, kAttention, kReductionTypes, kScatterIndex
};
constexpr std::array<std::string_view, 8> kBufferFields = {"name", "bytes", "layout", "dtype", "shape", "aliases", "hint_bytes", "stride"};
enum BufferField : std::size_t { kBufName, kBytes, kLayout, kDtype, kShape, kAliases, kHintBytes, kStride };
constexpr std::array<std::string_view, 11> kConvolutionFields = {"input",   "weight",         "output", "stride",     "padding",      "dilation",
                                                                 "output_padding", "groups", "transposed", "memory_format", "output_mask"};
enum ConvolutionField : std::size_t {
  kConvInput, kConvWeight, kConvOutput, kConvStride, kConvPadding, kConvDilation, kConvOutputPadding, kConvGroups, kConvTransposed,
  kConvMemoryFormat, kConvOutputMask
};
constexpr std::array<std::string_view, 5> kScatterIndexFields = {"updates", "rows", "max_row_updates", "mean_run", "source"};
enum ScatterIndexField : std::size_t { kScatterUpdates, kScatterRows, kScatterMaxRowUpdates, kScatterMeanRun, kScatterSource };
constexpr std::array<std::string_view, 6> kAttentionFields = {"query", "key", "value", "causal", "bias", "dropout_p"};
enum AttentionField : std::size_t { kAttnQuery, kAttnKey, kAttnValue, kAttnCausal, kAttnBias, kAttnDropoutP };

void expect_object(const JsonValue& v, const Place& where) {
  if (!v.is_object()) fail(where, "expected an object, got " + std::string(v.type_name()));
}

void expect_array(const JsonValue& v, const Place& where) {
  if (!v.is_array()) fail(where, "expected an array, got " + std::string(v.type_name()));
}

std::string_view get_string(const JsonValue& v, const Place& where) {
  if (!v.is_string()) fail(where, "expected a string, got " + std::string(v.type_name()));
  const std::string_view s = v.as_string();
  if (const std::size_t bad = first_invalid_utf8(s); bad != std::string_view::npos)
    fail(where, "invalid UTF-8 at byte " + std::to_string(bad) + " of the string");
  return s;
}

std::int64_t get_int(const JsonValue& v, const Place& where, std::int64_t min_value) {
  if (v.type() == JsonValue::Type::BigInt) fail(where, "value does not fit in 63 bits");
  if (!v.is_integer()) fail(where, "expected an integer, got " + std::string(v.type_name()));
  std::int64_t out = v.as_int();
  if (out < min_value) fail(where, "value " + std::to_string(out) + " is below the minimum " + std::to_string(min_value));
  return out;
}

bool get_bool(const JsonValue& v, const Place& where) {
  if (!v.is_bool()) fail(where, "expected a boolean, got " + std::string(v.type_name()));
  return v.as_bool();
}

double get_number(const JsonValue& v, const Place& where) {
  if (!v.is_number()) fail(where, "expected a number, got " + std::string(v.type_name()));
  double d = v.as_double();
  if (!std::isfinite(d) || d < 0) fail(where, "expected a finite number >= 0");
  return d;
}

std::vector<std::int64_t> get_int_array(const JsonValue& v, const Place& where) {
  expect_array(v, where);
  std::vector<std::int64_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = get_int(v[i], where.item(i), 0);
  return out;
}

std::vector<std::string> get_string_array(const JsonValue& v, const Place& where) {
  expect_array(v, where);
  std::vector<std::string> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = std::string(get_string(v[i], where.item(i)));
  return out;
}

class Loader {
 public:
  Graph run(const JsonValue& root) {
    const Place top;
    expect_object(root, top);
    std::string_view fmt = get_string(require(root, "format", top), top.at("format"));
    if (fmt != "schedgraph/1") fail(top.at("format"), "expected \"schedgraph/1\", got " + quoted_name(fmt));
    Graph& g = b_.graph();
    if (auto v = root.find("name")) g.name = get_string(v, top.at("name"));
    if (auto v = root.find("source")) g.source = get_string(v, top.at("source"));
    if (auto v = root.find("world_size")) g.world_size = get_int(v, top.at("world_size"), 1);
    if (auto v = root.find("device")) {
      g.device = get_string(v, top.at("device"));
      if (g.device != "cuda" && g.device != "cpu") fail(top.at("device"), "expected \"cuda\" or \"cpu\", got " + quoted_name(g.device));
    }

    JsonValue inputs = require(root, "inputs", top);
    JsonValue nodes = require(root, "nodes", top);
    JsonValue outputs = require(root, "outputs", top);
    expect_array(inputs, top.at("inputs"));
    expect_array(nodes, top.at("nodes"));
    expect_array(outputs, top.at("outputs"));
    reserve(inputs, nodes);
    load_inputs(inputs, top.at("inputs"));
    declare_nodes(nodes, top.at("nodes"));
    for (std::size_t i = 0; i < nodes.size(); ++i) load_node_body(nodes[i], i, top.at("nodes"));
    load_outputs(outputs, top.at("outputs"));
    if (auto ops = root.find("operations")) load_operations(ops, top.at("operations"));
    return b_.finish();
  }

 private:
  GraphBuilder b_;

  void reserve(const JsonValue& inputs, const JsonValue& nodes) {
    std::size_t buffers = inputs.size();
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].is_object())
        if (auto outs = nodes[i].find("outputs"); outs && outs.is_array()) buffers += outs.size();
    b_.reserve(buffers, nodes.size());
  }

  // Most deps name a buffer written shortly before (the node's own outputs,
  // the previous nodes' ones, a layer's inputs). A small direct-mapped cache
  // of recently named buffers answers those from L1/L2; the graph's index,
  // a random probe into a table of every buffer, missed the CPU cache on
  // almost every dep and was a quarter of the load.
  struct RecentName {
    std::size_t hash = 0;
    BufId id = kNone;
  };
  static constexpr std::size_t kRecentNames = 4096;
  std::vector<RecentName> recent_ = std::vector<RecentName>(kRecentNames);

  void remember(BufId b, std::size_t hash) { recent_[hash & (kRecentNames - 1)] = {hash, b}; }
  void remember_outputs(const Node& n) {
    for (BufId b : n.outputs) remember(b, std::hash<std::string_view>{}(b_.buffer(b).name));
  }

  // Lists that name buffers in the order they were made (`operations`'
  // outputs, written after every node) miss the cache above: the buffer
  // after the last one resolved is tried before the graph's index.
  BufId last_resolved_ = kNone;

  BufId resolve(std::string_view name, const Place& where) {
    const std::size_t hash = std::hash<std::string_view>{}(name);
    const RecentName& r = recent_[hash & (kRecentNames - 1)];
    if (r.id != kNone && r.hash == hash && b_.buffer(r.id).name == name) return last_resolved_ = r.id;
    BufId b = last_resolved_ + 1;
    if (b <= 0 || b >= b_.graph().num_buffers() || b_.buffer(b).name != name) b = b_.find_buffer(name);
    if (b == kNone) fail(where, "unknown buffer " + quoted_name(name));
    remember(b, hash);
    return last_resolved_ = b;
  }

  void load_inputs(const JsonValue& inputs, const Place& list) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      JsonValue in = inputs[i];
      Place where = list.item(i);
      expect_object(in, where);
      const std::string_view name = get_string(require(in, "name", where), where.at("name"));
      where.name = name;  // views the JSON text, which outlives this call
      const std::int64_t bytes = get_int(require(in, "bytes", where), where.at("bytes"), 0);
      std::optional<bool> freeable;
      if (auto fr = in.find("freeable")) freeable = get_bool(fr, where.at("freeable"));
      Buffer& b = b_.buffer(b_.add_input(std::string(name), bytes, freeable));
      if (auto dn = in.find("donated")) b.donated = get_bool(dn, where.at("donated"));
      load_layout(in.find("dtype"), in.find("shape"), in.find("stride"), b, where);
    }
  }

  // First pass over nodes: names, kinds and output buffers, so that deps can
  // name any buffer (validate() then reports forward reads).
  void declare_nodes(const JsonValue& nodes, const Place& list) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      JsonValue jn = nodes[i];
      Place where = list.item(i);
      expect_object(jn, where);
      const auto f = pick(jn, kNodeFields);
      Node n;
      n.name = std::string(get_string(required(f[kNodeName], "name", where), where.at("name")));
      where.name = n.name;
      std::string_view kind = get_string(required(f[kKind], "kind", where), where.at("kind"));
      auto k = parse_node_kind(kind);
      if (!k) fail(where.at("kind"), "unknown value " + quoted_name(kind));
      n.kind = *k;
      const NodeId v = b_.add_node(std::move(n));
      where.name = b_.node(v).name;  // the moved-from string no longer holds it
      if (auto outs = f[kOutputs]) {
        const Place op = where.at("outputs");
        expect_array(outs, op);
        b_.node(v).outputs.reserve(outs.size());
        for (std::size_t j = 0; j < outs.size(); ++j) b_.add_node_output(v, parse_buffer(outs[j], op.item(j)));
      }
    }
  }

  // A buffer's or input's informative dtype, shape and strides (one per
  // shape dim).
  void load_layout(const JsonValue& dtype, const JsonValue& shape, const JsonValue& stride, Buffer& b, const Place& where) {
    if (dtype) b.dtype = std::string(get_string(dtype, where.at("dtype")));
    if (shape) b.shape = get_int_array(shape, where.at("shape"));
    if (!stride) return;
    b.stride = get_int_array(stride, where.at("stride"));
    if (b.stride.size() != b.shape.size())
      fail(where.at("stride"), std::to_string(b.stride.size()) + " strides for a shape of " + std::to_string(b.shape.size()) + " dims");
  }

  Buffer parse_buffer(const JsonValue& jb, const Place& where) {
    expect_object(jb, where);
    const auto f = pick(jb, kBufferFields);
    Buffer b;
    b.name = std::string(get_string(required(f[kBufName], "name", where), where.at("name")));
    b.bytes = get_int(required(f[kBytes], "bytes", where), where.at("bytes"), 0);
    if (auto v = f[kLayout]) {
      std::string_view s = get_string(v, where.at("layout"));
      auto l = parse_layout(s);
      if (!l) fail(where.at("layout"), "unknown value " + quoted_name(s));
      b.layout = *l;
    }
    load_layout(f[kDtype], f[kShape], f[kStride], b, where);
    if (auto v = f[kAliases]) b.aliases = get_string_array(v, where.at("aliases"));
    if (auto v = f[kHintBytes]) b.hint_bytes = get_int(v, where.at("hint_bytes"), 0);
    return b;
  }

  void load_node_body(const JsonValue& jn, std::size_t i, const Place& list) {
    Node& n = b_.node(static_cast<NodeId>(i));
    Place where = list.item(i);
    where.name = n.name;
    remember_outputs(n);
    const auto f = pick(jn, kNodeFields);
    if (auto v = f[kMembers]) n.members = get_string_array(v, where.at("members"));
    if (auto v = f[kKernel]) n.kernel = std::string(get_string(v, where.at("kernel")));
    if (auto v = f[kGroup]) {
      auto grp = get_int_array(v, where.at("group"));
      if (grp.size() != 2) fail(where.at("group"), "expected [numel, rnumel]");
      n.has_group = true;
      n.numel = grp[0];
      n.rnumel = grp[1];
    }
    if (auto v = f[kGroupExpr]) {
      auto exprs = get_string_array(v, where.at("group_expr"));
      if (exprs.size() != 2) fail(where.at("group_expr"), "expected [numel, rnumel] expressions");
      n.numel_expr = std::move(exprs[0]);
      n.rnumel_expr = std::move(exprs[1]);
    }
    if (auto v = f[kGroupDims]) {
      const Place gw = where.at("group_dims");
      if (!v.is_array() || v.size() != 2) fail(gw, "expected [loop sizes, reduction sizes]");
      n.loop_sizes = get_int_array(v[0], gw.item(0));
      n.reduction_sizes = get_int_array(v[1], gw.item(1));
    }
    if (auto v = f[kForeach]) n.foreach = get_int(v, where.at("foreach"), 0);
    if (auto v = f[kFlops]) n.flops = get_int(v, where.at("flops"), 0);
    if (auto v = f[kRuntimeUs]) n.runtime_us = get_number(v, where.at("runtime_us"));
    load_workspace(f[kWorkspaceBytes], f[kWorkspaceSource], n, where);
    n.reads = parse_deps(f[kReads], where.at("reads"));
    n.writes = parse_deps(f[kWrites], where.at("writes"));
    load_mutations(f[kOutputs], n, where);
    load_collective(f[kCollective], n, where);
    load_convolution(f[kConvolution], n, where);
    load_attention(f[kAttention], n, where);
    load_scatter_index(f[kScatterIndex], n, where);
    if (auto v = f[kReductionTypes]) n.reduction_types = get_string_array(v, where.at("reduction_types"));
  }

  // `workspace_bytes` goes with `workspace_source`, whose one value says the
  // bytes were observed on a GPU (the exporter's --measure).
  void load_workspace(const JsonValue& bytes, const JsonValue& source, Node& n, const Place& where) {
    if (!bytes && !source) return;
    if (!source) fail(where.at("workspace_bytes"), "needs \"workspace_source\": \"observed\"");
    if (!bytes) fail(where.at("workspace_source"), "without \"workspace_bytes\"");
    const std::string_view s = get_string(source, where.at("workspace_source"));
    if (s != "observed") fail(where.at("workspace_source"), "unknown value " + quoted_name(s) + " (expected \"observed\")");
    n.workspace_bytes = get_int(bytes, where.at("workspace_bytes"), 0);
  }

  void load_mutations(const JsonValue& outs, const Node& n, const Place& where) {
    if (!outs) return;
    for (std::size_t j = 0; j < outs.size(); ++j) {
      JsonValue m = outs[j].find("mutation_of");
      if (!m) continue;
      const Place outp = where.at("outputs");
      const Place item = outp.item(j);
      const Place mw = item.at("mutation_of");
      b_.buffer(n.outputs[j]).mutation_of = resolve(get_string(m, mw), mw);
    }
    for (std::size_t j = 0; j < outs.size(); ++j)
      if (JsonValue v = outs[j].find("view_of")) {
        // A Place refers to its parent: each one named, as above.
        const Place outp = where.at("outputs");
        const Place item = outp.item(j);
        const Place vw = item.at("view_of");
        b_.buffer(n.outputs[j]).view_of = resolve(get_string(v, vw), vw);
      }
  }

  void load_collective(const JsonValue& coll, Node& n, const Place& where) {
    if (!coll) return;
    const Place cw = where.at("collective");
    expect_object(coll, cw);
    Collective c;
    c.op = std::string(get_string(require(coll, "op", cw), cw.at("op")));
    auto op = parse_collective_op(c.op);
    if (!op)
      fail(cw.at("op"), "unknown collective " + quoted_name(c.op) + " (expected all_reduce, all_gather, reduce_scatter, all_to_all or broadcast)");
    c.kind = *op;
    c.group_size = b_.graph().world_size;
    if (auto v = coll.find("group_size")) c.group_size = get_int(v, cw.at("group_size"), 1);
    if (auto v = coll.find("bytes")) c.bytes = get_int(v, cw.at("bytes"), 0);
    n.collective = std::move(c);
  }

  // The JSON types of `convolution`; validate() checks its geometry by
  // ATen's rules. Unknown keys inside are ignored, as everywhere.
  void load_convolution(const JsonValue& conv, Node& n, const Place& where) {
    if (!conv) return;
    const Place cw = where.at("convolution");
    expect_object(conv, cw);
    const auto f = pick(conv, kConvolutionFields);
    ConvolutionGeometry c;
    auto ints = [&](ConvolutionField k) {
      return get_int_array(required(f[k], kConvolutionFields[k], cw), cw.at(kConvolutionFields[k]));
    };
    c.input = ints(kConvInput);
    c.weight = ints(kConvWeight);
    c.output = ints(kConvOutput);
    c.stride = ints(kConvStride);
    c.padding = ints(kConvPadding);
    c.dilation = ints(kConvDilation);
    if (f[kConvOutputPadding]) c.output_padding = ints(kConvOutputPadding);
    else c.output_padding.assign(c.input.size() >= 2 ? c.input.size() - 2 : 0, 0);
    c.groups = get_int(required(f[kConvGroups], "groups", cw), cw.at("groups"), 1);
    c.transposed = get_bool(required(f[kConvTransposed], "transposed", cw), cw.at("transposed"));
    if (auto v = f[kConvMemoryFormat]) {
      const std::string_view s = get_string(v, cw.at("memory_format"));
      c.memory_format = parse_memory_format(s);
      if (!c.memory_format) fail(cw.at("memory_format"), "unknown value " + quoted_name(s) + " (expected \"channels_last\" or \"contiguous\")");
    }
    if (auto v = f[kConvOutputMask]) {
      const Place mw = cw.at("output_mask");
      expect_array(v, mw);
      if (v.size() != 3) fail(mw, "expected 3 entries (grads of input, weight, bias), got " + std::to_string(v.size()));
      std::array<bool, 3> mask{};
      for (std::size_t i = 0; i < 3; ++i) mask[i] = get_bool(v[i], mw.item(i));
      c.output_mask = mask;
    }
    n.convolution = std::move(c);
  }

  // The JSON types of `attention`; validate() checks its shapes and
  // dropout probability. Unknown keys inside are ignored, as everywhere.
  void load_attention(const JsonValue& attn, Node& n, const Place& where) {
    if (!attn) return;
    const Place aw = where.at("attention");
    expect_object(attn, aw);
    const auto f = pick(attn, kAttentionFields);
    auto field = [&](AttentionField k) { return required(f[k], kAttentionFields[k], aw); };
    auto at = [&](AttentionField k) { return aw.at(kAttentionFields[k]); };
    AttentionCall a;
    a.query = get_int_array(field(kAttnQuery), at(kAttnQuery));
    a.key = get_int_array(field(kAttnKey), at(kAttnKey));
    a.value = get_int_array(field(kAttnValue), at(kAttnValue));
    a.causal = get_bool(field(kAttnCausal), at(kAttnCausal));
    a.bias = get_bool(field(kAttnBias), at(kAttnBias));
    const JsonValue dropout = field(kAttnDropoutP);
    if (!dropout.is_number()) fail(at(kAttnDropoutP), "expected a number, got " + std::string(dropout.type_name()));
    a.dropout_p = dropout.as_double();
    n.attention = std::move(a);
  }

  // `scatter_index`: observed on a GPU ("source": "observed", its one
  // value); validate() checks that its counts agree.
  void load_scatter_index(const JsonValue& spread, Node& n, const Place& where) {
    if (!spread) return;
    const Place sw = where.at("scatter_index");
    expect_object(spread, sw);
    const auto f = pick(spread, kScatterIndexFields);
    auto field = [&](ScatterIndexField k) { return required(f[k], kScatterIndexFields[k], sw); };
    auto at = [&](ScatterIndexField k) { return sw.at(kScatterIndexFields[k]); };
    const std::string_view source = get_string(field(kScatterSource), at(kScatterSource));
    if (source != "observed") fail(at(kScatterSource), "unknown value " + quoted_name(source) + " (expected \"observed\")");
    ScatterIndex s;
    s.updates = get_int(field(kScatterUpdates), at(kScatterUpdates), 0);
    s.rows = get_int(field(kScatterRows), at(kScatterRows), 0);
    s.max_row_updates = get_int(field(kScatterMaxRowUpdates), at(kScatterMaxRowUpdates), 0);
    s.mean_run = get_number(field(kScatterMeanRun), at(kScatterMeanRun));
    n.scatter_index = s;
  }

  std::vector<Dep> parse_deps(const JsonValue& arr, const Place& where) {
    std::vector<Dep> out;
    if (!arr) return out;
    expect_array(arr, where);
    out.resize(arr.size());
    for (std::size_t j = 0; j < arr.size(); ++j) {
      JsonValue jd = arr[j];
      const Place dw = where.item(j);
      expect_object(jd, dw);
      Dep& d = out[j];
      bool named = false;
      // One pass over the members: deps are most of a graph's objects.
      for (std::size_t k = 0; k < jd.size(); ++k) {
        const std::string_view key = jd.key_at(k);
        const JsonValue v = jd[k];
        if (key == "name") {
          d.buf = resolve(get_string(v, dw.at("name")), dw);
          named = true;
        } else if (key == "dep") {
          std::string_view s = get_string(v, dw.at("dep"));
          auto kind = parse_dep_kind(s);
          if (!kind) fail(dw.at("dep"), "unknown value " + quoted_name(s));
          d.kind = *kind;
        } else if (key == "index") {
          d.index = std::string(get_string(v, dw.at("index")));
        } else if (key == "size") {
          d.size = get_int_array(v, dw.at("size"));
        } else if (key == "size_expr") {
          d.size_expr = get_string_array(v, dw.at("size_expr"));
        } else if (key == "bytes") {
          d.bytes = get_int(v, dw.at("bytes"), 0);
        }
      }
      if (!named) fail(dw, "missing required field \"name\"");
    }
    return out;
  }

  void load_outputs(const JsonValue& outs, const Place& list) {
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const Place where = list.item(i);
      b_.add_graph_output(resolve(get_string(outs[i], where), where));
    }
  }

  void load_operations(const JsonValue& ops, const Place& list) {
    expect_array(ops, list);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      JsonValue jo = ops[i];
      Place where = list.item(i);
      expect_object(jo, where);
      Operation op;
      op.name = std::string(get_string(require(jo, "name", where), where.at("name")));
      where.name = op.name;
      for (auto [key, into] : {std::pair{"outputs", &op.outputs}, std::pair{"reads", &op.reads}}) {
        JsonValue v = jo.find(key);
        if (!v) continue;
        const Place fw = where.at(key);
        expect_array(v, fw);
        for (std::size_t j = 0; j < v.size(); ++j) into->push_back(resolve(get_string(v[j], fw.item(j)), fw.item(j)));
      }
      b_.add_operation(std::move(op));
    }
  }
};

}  // namespace

Graph load_graph(std::string_view text) {
  JsonDoc doc = JsonDoc::parse(text, kMaxJsonDepth);
  return read_graph(doc.root());
}

Graph read_graph(const JsonValue& root) { return Loader().run(root); }

std::string read_text_file(const std::string& path) { return read_json_input(path, kDefaultMaxInputBytes); }

Graph load_graph_file(const std::string& path, std::uint64_t max_bytes) {
  std::string text = read_json_input(path, max_bytes);
  try {
    return load_graph(text);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace schedlab
