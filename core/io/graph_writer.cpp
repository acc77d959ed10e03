#include "core/io/graph_writer.h"

#include <charconv>

#include <nlohmann/json.hpp>

namespace schedlab {
namespace {

class JsonOut {
 public:
  std::string text;

  void raw(std::string_view s) { text += s; }
  void str(std::string_view s) {
    text += '"';
    for (char c : s) {
      switch (c) {
        case '"': text += "\\\""; break;
        case '\\': text += "\\\\"; break;
        case '\n': text += "\\n"; break;
        case '\t': text += "\\t"; break;
        case '\r': text += "\\r"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            static constexpr char kHex[] = "0123456789abcdef";
            text += "\\u00";
            text += kHex[(c >> 4) & 0xF];
            text += kHex[c & 0xF];
          } else {
            text += c;
          }
      }
    }
    text += '"';
  }
  void num(std::int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    text.append(buf, r.ptr);
  }
  // Shortest text that reads back as the same double (nlohmann's Grisu2).
  void num(double v) { text += nlohmann::json(v).dump(); }
  void key(std::string_view k) {
    str(k);
    text += ':';
  }
  template <typename T, typename F>
  void list(const std::vector<T>& items, F&& each) {
    text += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) text += ',';
      each(items[i]);
    }
    text += ']';
  }
};

void write_dep(JsonOut& o, const Graph& g, const Dep& d) {
  o.raw("{\"name\":");
  o.str(g.buffers[d.buf].name);
  o.raw(",\"dep\":");
  o.str(to_string(d.kind));
  if (!d.index.empty()) {
    o.raw(",\"index\":");
    o.str(d.index);
  }
  if (!d.size.empty()) {
    o.raw(",\"size\":");
    o.list(d.size, [&](std::int64_t v) { o.num(v); });
  }
  o.raw(",\"bytes\":");
  o.num(d.bytes);
  o.raw("}");
}

void write_buffer(JsonOut& o, const Graph& g, const Buffer& b) {
  o.raw("{\"name\":");
  o.str(b.name);
  o.raw(",\"layout\":");
  o.str(to_string(b.layout));
  if (!b.dtype.empty()) {
    o.raw(",\"dtype\":");
    o.str(b.dtype);
  }
  if (!b.shape.empty()) {
    o.raw(",\"shape\":");
    o.list(b.shape, [&](std::int64_t v) { o.num(v); });
  }
  o.raw(",\"bytes\":");
  o.num(b.bytes);
  if (b.mutation_of != kNone) {
    o.raw(",\"mutation_of\":");
    o.str(g.buffers[b.mutation_of].name);
  }
  if (!b.aliases.empty()) {
    o.raw(",\"aliases\":");
    o.list(b.aliases, [&](const std::string& a) { o.str(a); });
  }
  o.raw("}");
}

void write_node(JsonOut& o, const Graph& g, const Node& n) {
  o.raw("{\"name\":");
  o.str(n.name);
  o.raw(",\"kind\":");
  o.str(to_string(n.kind));
  if (!n.members.empty()) {
    o.raw(",\"members\":");
    o.list(n.members, [&](const std::string& m) { o.str(m); });
  }
  if (!n.kernel.empty()) {
    o.raw(",\"kernel\":");
    o.str(n.kernel);
  }
  if (n.has_group) {
    o.raw(",\"group\":[");
    o.num(n.numel);
    o.raw(",");
    o.num(n.rnumel);
    o.raw("]");
  }
  if (n.flops) {
    o.raw(",\"flops\":");
    o.num(*n.flops);
  }
  if (n.runtime_us) {
    o.raw(",\"runtime_us\":");
    o.num(*n.runtime_us);
  }
  o.raw(",\"outputs\":");
  o.list(n.outputs, [&](BufId b) { write_buffer(o, g, g.buffers[b]); });
  o.raw(",\"reads\":");
  o.list(n.reads, [&](const Dep& d) { write_dep(o, g, d); });
  o.raw(",\"writes\":");
  o.list(n.writes, [&](const Dep& d) { write_dep(o, g, d); });
  if (n.collective) {
    o.raw(",\"collective\":{\"op\":");
    o.str(n.collective->op);
    o.raw(",\"group_size\":");
    o.num(n.collective->group_size);
    o.raw(",\"bytes\":");
    o.num(n.collective->bytes);
    o.raw("}");
  }
  o.raw("}");
}

}  // namespace

std::string write_graph_json(const Graph& g) {
  JsonOut o;
  o.text.reserve(256 + g.nodes.size() * 400);
  o.raw("{\"format\":\"schedgraph/1\"");
  if (!g.name.empty()) {
    o.raw(",\"name\":");
    o.str(g.name);
  }
  if (!g.source.empty()) {
    o.raw(",\"source\":");
    o.str(g.source);
  }
  o.raw(",\"world_size\":");
  o.num(g.world_size);
  o.raw(",\"inputs\":[");
  for (BufId b = 0; b < g.num_inputs; ++b) {
    if (b) o.raw(",");
    o.raw("{\"name\":");
    o.str(g.buffers[b].name);
    o.raw(",\"bytes\":");
    o.num(g.buffers[b].bytes);
    o.raw(g.buffers[b].freeable ? ",\"freeable\":true}" : ",\"freeable\":false}");
  }
  o.raw("],\"outputs\":");
  o.list(g.outputs, [&](BufId b) { o.str(g.buffers[b].name); });
  o.raw(",\"nodes\":");
  o.list(g.nodes, [&](const Node& n) { write_node(o, g, n); });
  if (!g.operations.empty()) {
    o.raw(",\"operations\":");
    o.list(g.operations, [&](const Operation& op) {
      o.raw("{\"name\":");
      o.str(op.name);
      o.raw(",\"outputs\":");
      o.list(op.outputs, [&](BufId b) { o.str(g.buffers[b].name); });
      o.raw(",\"reads\":");
      o.list(op.reads, [&](BufId b) { o.str(g.buffers[b].name); });
      o.raw("}");
    });
  }
  o.raw("}\n");
  return std::move(o.text);
}

}  // namespace schedlab
