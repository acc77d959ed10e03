#include "core/graph/graph.h"

#include <algorithm>
#include <array>
#include <limits>

#include "core/util/error.h"
#include "core/util/saturating.h"

namespace schedlab {
namespace {

template <typename E, std::size_t N>
std::optional<E> lookup(const std::array<std::string_view, N>& names, std::string_view s) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

constexpr std::array<std::string_view, 7> kNodeKinds{"pointwise", "reduction", "template", "extern",
                                                     "collective", "wait", "nop"};
constexpr std::array<std::string_view, 4> kDepKinds{"memory", "star", "weak", "fake_weak"};
constexpr std::array<std::string_view, 4> kLayouts{"fixed", "none", "multi_output", "multi_output_item"};
constexpr std::array<std::string_view, 2> kMemoryFormats{"channels_last", "contiguous"};
constexpr std::array<std::string_view, 5> kCollectives{"all_reduce", "all_gather", "reduce_scatter",
                                                       "all_to_all", "broadcast"};

}  // namespace

std::string_view to_string(NodeKind k) { return kNodeKinds[static_cast<std::size_t>(k)]; }
std::string_view to_string(DepKind k) { return kDepKinds[static_cast<std::size_t>(k)]; }
std::string_view to_string(Layout k) { return kLayouts[static_cast<std::size_t>(k)]; }
std::string_view to_string(CollectiveOp k) { return kCollectives[static_cast<std::size_t>(k)]; }
std::string_view to_string(MemoryFormat f) { return kMemoryFormats[static_cast<std::size_t>(f)]; }

std::optional<NodeKind> parse_node_kind(std::string_view s) { return lookup<NodeKind>(kNodeKinds, s); }
std::optional<DepKind> parse_dep_kind(std::string_view s) { return lookup<DepKind>(kDepKinds, s); }
std::optional<Layout> parse_layout(std::string_view s) { return lookup<Layout>(kLayouts, s); }
std::optional<MemoryFormat> parse_memory_format(std::string_view s) { return lookup<MemoryFormat>(kMemoryFormats, s); }

std::int64_t dtype_size(std::string_view dtype) {
  for (std::string_view d : {"f64", "i64", "u64", "c64"})
    if (dtype == d) return 8;
  for (std::string_view d : {"f32", "tf32", "i32", "u32"})
    if (dtype == d) return 4;
  for (std::string_view d : {"bf16", "f16", "i16", "u16"})
    if (dtype == d) return 2;
  for (std::string_view d : {"i8", "u8", "b8", "bool"})
    if (dtype == d) return 1;
  return dtype.substr(0, 2) == "f8" ? 1 : 0;
}

std::int64_t attention_scores(const AttentionCall& a) {
  const std::size_t rank = a.query.size();
  if (rank < 3 || a.key.size() != rank) return 0;  // validate() refuses these
  std::int64_t batch_heads = 1;
  for (std::size_t i = 0; i + 2 < rank; ++i) batch_heads = saturating_mul(batch_heads, a.query[i]);
  const std::int64_t q = a.query[rank - 2], kv = a.key[rank - 2];
  std::int64_t per_head = saturating_mul(q, kv);
  if (a.causal) {
    // Rows below kv_len see 1, 2, ..., full keys; the rows past it see all kv_len.
    const std::int64_t full = std::min(q, kv);
    const std::int64_t triangle = full % 2 == 0 ? saturating_mul(full / 2, saturating_add(full, 1)) : saturating_mul(full, (full + 1) / 2);
    per_head = saturating_add(triangle, saturating_mul(std::max<std::int64_t>(0, q - kv), kv));
  }
  return saturating_mul(batch_heads, per_head);
}

std::optional<CollectiveOp> parse_collective_op(std::string_view s) {
  for (std::size_t i = 0; i < kCollectives.size(); ++i)
    if (s.find(kCollectives[i]) != std::string_view::npos) return static_cast<CollectiveOp>(i);
  return std::nullopt;
}

BufId Graph::find_buffer(std::string_view n) const {
  return buffer_index.find(n, [this](BufId b) -> std::string_view { return buffers[b].name; });
}

NodeId Graph::find_node(std::string_view n) const {
  return node_index.find(n, [this](NodeId v) -> std::string_view { return nodes[v].name; });
}

Order Graph::baseline_order() const {
  Order o(nodes.size());
  for (std::size_t i = 0; i < o.size(); ++i) o[i] = static_cast<NodeId>(i);
  return o;
}

bool Graph::is_pre_fusion() const {
  for (const auto& n : nodes)
    if (!n.members.empty()) return false;
  return true;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what) {
  if ((b > 0 && a > std::numeric_limits<std::int64_t>::max() - b) ||
      (b < 0 && a < std::numeric_limits<std::int64_t>::min() - b))
    throw Error(std::string(what) + ": byte sum overflows 63 bits");
  return a + b;
}

}  // namespace schedlab
