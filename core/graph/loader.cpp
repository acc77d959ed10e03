// Loader for schedgraph/1: JSON DOM -> validated, indexed Graph.
//
// Each check reports its place as a path (`nodes[3] "op7": reads[0].dep`), so
// the helpers below thread a `Where` string through the walk.
#include "core/graph/loader.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/util/error.h"

namespace schedlab {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw Error(where.empty() ? what : where + ": " + what);
}

std::string name_q(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, 120)) {
    if (c == '"' || c == '\\') out += '\\';
    out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  }
  if (s.size() > 120) out += "...";
  return out + "\"";
}

std::string_view type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_float: return "number";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    default: return "value";
  }
}

const json* member(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json& require(const json& obj, std::string_view key, const std::string& where) {
  const json* v = member(obj, key);
  if (!v) fail(where, "missing required field \"" + std::string(key) + "\"");
  return *v;
}

const json& expect_object(const json& v, const std::string& where) {
  if (!v.is_object()) fail(where, "expected an object, got " + std::string(type_name(v)));
  return v;
}

const json& expect_array(const json& v, const std::string& where) {
  if (!v.is_array()) fail(where, "expected an array, got " + std::string(type_name(v)));
  return v;
}

std::string get_string(const json& v, const std::string& where) {
  if (!v.is_string()) fail(where, "expected a string, got " + std::string(type_name(v)));
  return v.get<std::string>();
}

std::int64_t get_int(const json& v, const std::string& where, std::int64_t min_value) {
  std::int64_t out = 0;
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(where, "value " + std::to_string(u) + " does not fit in 63 bits");
    out = static_cast<std::int64_t>(u);
  } else if (v.is_number_integer()) {
    out = v.get<std::int64_t>();
  } else {
    fail(where, "expected an integer, got " + std::string(type_name(v)));
  }
  if (out < min_value)
    fail(where, "value " + std::to_string(out) + " is below the minimum " + std::to_string(min_value));
  return out;
}

double get_number(const json& v, const std::string& where) {
  if (!v.is_number()) fail(where, "expected a number, got " + std::string(type_name(v)));
  double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) fail(where, "expected a finite number >= 0");
  return d;
}

std::vector<std::int64_t> get_int_array(const json& v, const std::string& where) {
  expect_array(v, where);
  std::vector<std::int64_t> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(get_int(v[i], where + "[" + std::to_string(i) + "]", 0));
  return out;
}

std::vector<std::string> get_string_array(const json& v, const std::string& where) {
  expect_array(v, where);
  std::vector<std::string> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(get_string(v[i], where + "[" + std::to_string(i) + "]"));
  return out;
}

std::string node_place(std::size_t i, const std::string& name) {
  return "nodes[" + std::to_string(i) + "] " + name_q(name);
}

// A running total of every byte count in the file: if it fits in 63 bits,
// no sum a pass takes over a subset can overflow.
struct ByteTotal {
  std::int64_t total = 0;
  void add(std::int64_t b, const std::string& where) {
    if (total > std::numeric_limits<std::int64_t>::max() - b)
      fail(where, "byte sizes of the graph sum past 63 bits");
    total += b;
  }
};

// Pending name references, resolved once every name is known.
struct PendingDeps {
  const json* deps;
  std::string where;
};

class Loader {
 public:
  Graph run(const json& root) {
    expect_object(root, "");
    const json& fmt = require(root, "format", "");
    if (get_string(fmt, "format") != "schedgraph/1")
      fail("format", "expected \"schedgraph/1\", got " + name_q(fmt.get<std::string>()));
    if (const json* v = member(root, "name")) g_.name = get_string(*v, "name");
    if (const json* v = member(root, "source")) g_.source = get_string(*v, "source");
    if (const json* v = member(root, "world_size")) g_.world_size = get_int(*v, "world_size", 1);

    load_inputs(expect_array(require(root, "inputs", ""), "inputs"));
    const json& nodes = expect_array(require(root, "nodes", ""), "nodes");
    declare_nodes(nodes);
    for (std::size_t i = 0; i < nodes.size(); ++i) load_node_body(nodes[i], i);
    load_outputs(expect_array(require(root, "outputs", ""), "outputs"));
    if (const json* ops = member(root, "operations")) load_operations(expect_array(*ops, "operations"));
    check_topological();
    return std::move(g_);
  }

 private:
  Graph g_;
  ByteTotal bytes_;

  BufId add_buffer(Buffer b, const std::string& where) {
    auto [it, inserted] = g_.buffer_by_name.emplace(b.name, static_cast<BufId>(g_.buffers.size()));
    if (!inserted) fail(where + ".name", "duplicate buffer or input name " + name_q(b.name));
    g_.buffers.push_back(std::move(b));
    return it->second;
  }

  BufId resolve(const std::string& name, const std::string& where) const {
    auto it = g_.buffer_by_name.find(name);
    if (it == g_.buffer_by_name.end()) fail(where, "unknown buffer " + name_q(name));
    return it->second;
  }

  static bool default_freeable(std::string_view name) {
    for (std::string_view p : {"primals_", "arg", "fwd_rng_state", "bwd_rng_state", "tangents"})
      if (name.substr(0, p.size()) == p) return false;
    return true;
  }

  void load_inputs(const json& inputs) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      std::string where = "inputs[" + std::to_string(i) + "]";
      const json& in = expect_object(inputs[i], where);
      Buffer b;
      b.name = get_string(require(in, "name", where), where + ".name");
      where += " " + name_q(b.name);
      b.bytes = get_int(require(in, "bytes", where), where + ".bytes", 0);
      bytes_.add(b.bytes, where + ".bytes");
      b.is_input = true;
      const json* fr = member(in, "freeable");
      if (fr && !fr->is_boolean()) fail(where + ".freeable", "expected a boolean, got " + std::string(type_name(*fr)));
      b.freeable = fr ? fr->get<bool>() : default_freeable(b.name);
      add_buffer(std::move(b), where);
    }
    g_.num_inputs = static_cast<std::int32_t>(g_.buffers.size());
  }

  // First pass over nodes: names, kinds and output buffers, so that deps can
  // refer to any buffer (the topological check then reports forward reads).
  void declare_nodes(const json& nodes) {
    g_.nodes.resize(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      std::string where = "nodes[" + std::to_string(i) + "]";
      const json& jn = expect_object(nodes[i], where);
      Node& n = g_.nodes[i];
      n.name = get_string(require(jn, "name", where), where + ".name");
      where = node_place(i, n.name);
      if (!g_.node_by_name.emplace(n.name, static_cast<NodeId>(i)).second)
        fail(where, "duplicate node name " + name_q(n.name));
      std::string kind = get_string(require(jn, "kind", where), where + ".kind");
      auto k = parse_node_kind(kind);
      if (!k) fail(where + ": kind", "unknown value " + name_q(kind));
      n.kind = *k;
      if (const json* outs = member(jn, "outputs")) {
        expect_array(*outs, where + ": outputs");
        for (std::size_t j = 0; j < outs->size(); ++j) {
          std::string bw = where + ": outputs[" + std::to_string(j) + "]";
          n.outputs.push_back(add_buffer(parse_buffer((*outs)[j], bw, static_cast<NodeId>(i)), bw));
        }
      }
    }
  }

  Buffer parse_buffer(const json& jb, std::string& where, NodeId producer) {
    expect_object(jb, where);
    Buffer b;
    b.name = get_string(require(jb, "name", where), where + ".name");
    b.producer = producer;
    b.bytes = get_int(require(jb, "bytes", where), where + ".bytes", 0);
    bytes_.add(b.bytes, where + ".bytes");
    if (const json* v = member(jb, "layout")) {
      std::string s = get_string(*v, where + ".layout");
      auto l = parse_layout(s);
      if (!l) fail(where + ".layout", "unknown value " + name_q(s));
      b.layout = *l;
    }
    if (const json* v = member(jb, "dtype")) b.dtype = get_string(*v, where + ".dtype");
    if (const json* v = member(jb, "shape")) b.shape = get_int_array(*v, where + ".shape");
    if (const json* v = member(jb, "aliases")) b.aliases = get_string_array(*v, where + ".aliases");
    return b;
  }

  void load_node_body(const json& jn, std::size_t i) {
    Node& n = g_.nodes[i];
    const std::string where = node_place(i, n.name);
    if (const json* v = member(jn, "members")) n.members = get_string_array(*v, where + ": members");
    if (const json* v = member(jn, "kernel")) n.kernel = get_string(*v, where + ": kernel");
    if (const json* v = member(jn, "group")) {
      auto grp = get_int_array(*v, where + ": group");
      if (grp.size() != 2) fail(where + ": group", "expected [numel, rnumel]");
      n.has_group = true;
      n.numel = grp[0];
      n.rnumel = grp[1];
    }
    if (const json* v = member(jn, "flops")) n.flops = get_int(*v, where + ": flops", 0);
    if (const json* v = member(jn, "runtime_us")) n.runtime_us = get_number(*v, where + ": runtime_us");
    n.reads = parse_deps(member(jn, "reads"), where + ": reads");
    n.writes = parse_deps(member(jn, "writes"), where + ": writes");

    // mutation_of: an input, an earlier node's buffer, or an earlier output of this node.
    if (const json* outs = member(jn, "outputs")) {
      for (std::size_t j = 0; j < outs->size(); ++j) {
        const json* m = member((*outs)[j], "mutation_of");
        if (!m) continue;
        std::string mw = where + ": outputs[" + std::to_string(j) + "].mutation_of";
        std::string target = get_string(*m, mw);
        BufId t = resolve(target, mw);
        BufId self = n.outputs[j];
        const Buffer& tb = g_.buffers[t];
        bool earlier = tb.is_input || tb.producer < static_cast<NodeId>(i) || (tb.producer == static_cast<NodeId>(i) && t < self);
        if (!earlier) fail(mw, name_q(target) + " is not an input or a buffer produced earlier");
        g_.buffers[self].mutation_of = t;
      }
    }

    const json* coll = member(jn, "collective");
    if (n.kind == NodeKind::Collective && !coll) fail(where, "a collective node needs a \"collective\" object");
    if (coll) {
      std::string cw = where + ": collective";
      expect_object(*coll, cw);
      Collective c;
      c.op = get_string(require(*coll, "op", cw), cw + ".op");
      auto op = parse_collective_op(c.op);
      if (!op) fail(cw + ".op", "unknown collective " + name_q(c.op) + " (expected all_reduce, all_gather, reduce_scatter, all_to_all or broadcast)");
      c.kind = *op;
      c.group_size = g_.world_size;
      if (const json* v = member(*coll, "group_size")) c.group_size = get_int(*v, cw + ".group_size", 1);
      if (const json* v = member(*coll, "bytes")) c.bytes = get_int(*v, cw + ".bytes", 0);
      bytes_.add(c.bytes, cw + ".bytes");
      n.collective = std::move(c);
    }
  }

  std::vector<Dep> parse_deps(const json* arr, const std::string& where) {
    std::vector<Dep> out;
    if (!arr) return out;
    expect_array(*arr, where);
    out.reserve(arr->size());
    for (std::size_t j = 0; j < arr->size(); ++j) {
      std::string dw = where + "[" + std::to_string(j) + "]";
      const json& jd = expect_object((*arr)[j], dw);
      Dep d;
      std::string name = get_string(require(jd, "name", dw), dw + ".name");
      d.buf = resolve(name, dw);
      if (const json* v = member(jd, "dep")) {
        std::string s = get_string(*v, dw + ".dep");
        auto k = parse_dep_kind(s);
        if (!k) fail(dw + ".dep", "unknown value " + name_q(s));
        d.kind = *k;
      }
      if (const json* v = member(jd, "index")) d.index = get_string(*v, dw + ".index");
      if (const json* v = member(jd, "size")) d.size = get_int_array(*v, dw + ".size");
      if (const json* v = member(jd, "bytes")) d.bytes = get_int(*v, dw + ".bytes", 0);
      bytes_.add(d.bytes, dw + ".bytes");
      out.push_back(std::move(d));
    }
    return out;
  }

  void load_outputs(const json& outs) {
    for (std::size_t i = 0; i < outs.size(); ++i) {
      std::string where = "outputs[" + std::to_string(i) + "]";
      g_.outputs.push_back(resolve(get_string(outs[i], where), where));
    }
  }

  void load_operations(const json& ops) {
    std::unordered_map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      std::string where = "operations[" + std::to_string(i) + "]";
      const json& jo = expect_object(ops[i], where);
      Operation op;
      op.name = get_string(require(jo, "name", where), where + ".name");
      where += " " + name_q(op.name);
      if (!seen.emplace(op.name, i).second) fail(where, "duplicate operation name " + name_q(op.name));
      if (const json* v = member(jo, "outputs"))
        for (auto& s : get_string_array(*v, where + ".outputs")) op.outputs.push_back(resolve(s, where + ".outputs"));
      if (const json* v = member(jo, "reads"))
        for (auto& s : get_string_array(*v, where + ".reads")) op.reads.push_back(resolve(s, where + ".reads"));
      g_.operations.push_back(std::move(op));
    }
  }

  // The baseline order must be topological. A forward read is either part
  // of a cycle (reported as the cycle) or simply out of order.
  void check_topological() {
    const auto n = g_.nodes.size();
    for (std::size_t i = 0; i < n; ++i) {
      const Node& node = g_.nodes[i];
      for (std::size_t j = 0; j < node.reads.size(); ++j) {
        NodeId p = g_.buffers[node.reads[j].buf].producer;
        if (p != kNone && p > static_cast<NodeId>(i)) {
          std::string cycle = find_cycle();
          if (!cycle.empty()) fail("nodes", "dependency cycle: " + cycle);
          fail(node_place(i, node.name) + ": reads[" + std::to_string(j) + "]",
               "reads " + name_q(g_.buffers[node.reads[j].buf].name) + ", produced by the later node " +
                   name_q(g_.nodes[p].name) + " (nodes must be in topological order)");
        }
      }
    }
  }

  // Iterative DFS over producer edges; returns "a -> b -> a" or "".
  std::string find_cycle() const {
    const auto n = g_.nodes.size();
    std::vector<std::uint8_t> state(n, 0);  // 0 new, 1 on stack, 2 done
    std::vector<NodeId> parent(n, kNone);
    for (std::size_t s = 0; s < n; ++s) {
      if (state[s]) continue;
      std::vector<std::pair<NodeId, std::size_t>> stack{{static_cast<NodeId>(s), 0}};
      state[s] = 1;
      while (!stack.empty()) {
        auto& [v, k] = stack.back();
        const auto& reads = g_.nodes[v].reads;
        if (k == reads.size()) {
          state[v] = 2;
          stack.pop_back();
          continue;
        }
        NodeId u = g_.buffers[reads[k++].buf].producer;
        if (u == kNone || u == v) continue;
        if (state[u] == 1) {
          std::vector<std::string> names{g_.nodes[u].name};
          for (NodeId w = v; w != u; w = parent[w]) names.push_back(g_.nodes[w].name);
          names.push_back(g_.nodes[u].name);
          std::string out;
          for (auto& nm : names) out += (out.empty() ? "" : " -> ") + name_q(nm);
          return out + " (each reads the next)";
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
};

std::string line_col(std::string_view text, std::size_t byte) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') { ++line; col = 1; } else { ++col; }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

}  // namespace

Graph load_graph(std::string_view text) {
  json root;
  try {
    // The callback bounds nesting depth before the DOM grows deeper.
    root = json::parse(text.begin(), text.end(), [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxJsonDepth) throw Error("not valid schedgraph/1: JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      return true;
    });
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    auto pos = msg.find("parse error");
    throw Error("not valid JSON: at " + line_col(text, e.byte > 0 ? e.byte - 1 : 0) + ": " +
                (pos == std::string::npos ? msg : msg.substr(pos)));
  }
  return Loader().run(root);
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(path + ": read error");
  return std::move(ss).str();
}

Graph load_graph_file(const std::string& path) {
  std::string text = read_text_file(path);
  try {
    return load_graph(text);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace schedlab
