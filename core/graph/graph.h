// core/graph — the schedgraph/1 model.
//
// Contract: a Graph is read (core/io/graph_reader.h) or assembled
// (builder.h), validated once by validate() (builder.h), and is then
// immutable plain data. Everything inside is indexed by dense integer ids:
// inputs and buffers share one table (`buffers`, inputs first), nodes are in
// the file's baseline order. Names exist only for the edges (reports, I/O).
// Every pass reads a Graph plus an order (a vector of NodeId) and returns a
// new order plus a report; none of them mutate the Graph.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/name_index.h"

namespace schedlab {

using NodeId = std::int32_t;
using BufId = std::int32_t;
inline constexpr std::int32_t kNone = -1;

using Order = std::vector<NodeId>;

enum class NodeKind : std::uint8_t { Pointwise, Reduction, Template, Extern, Collective, Wait, Nop };
enum class DepKind : std::uint8_t { Memory, Star, Weak, FakeWeak };
enum class Layout : std::uint8_t { Fixed, None, MultiOutput, MultiOutputItem };
enum class CollectiveOp : std::uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast };
enum class MemoryFormat : std::uint8_t { ChannelsLast, Contiguous };

std::string_view to_string(NodeKind k);
std::string_view to_string(DepKind k);
std::string_view to_string(Layout k);
std::string_view to_string(CollectiveOp k);
std::string_view to_string(MemoryFormat f);
std::optional<NodeKind> parse_node_kind(std::string_view s);
std::optional<DepKind> parse_dep_kind(std::string_view s);
std::optional<Layout> parse_layout(std::string_view s);
std::optional<MemoryFormat> parse_memory_format(std::string_view s);
// Bytes per element of a dtype as the format names it (`bf16`, `f32`, `i64`,
// `b8`, ...; `f8` and its variants), 0 when the name is unknown.
std::int64_t dtype_size(std::string_view dtype);
// The op string "contains one of" the collective names (format spec).
std::optional<CollectiveOp> parse_collective_op(std::string_view s);

struct Dep {
  BufId buf = kNone;
  DepKind kind = DepKind::Memory;
  std::int64_t bytes = 0;
  std::string index;               // canonical index expression (memory deps)
  std::vector<std::int64_t> size;  // iteration sizes (memory deps)
  // `size_expr`: the sizes as Inductor's symbolic expressions, when any has
  // symbols (empty otherwise); `size` then holds their hints.
  std::vector<std::string> size_expr;
  bool is_weak() const { return kind == DepKind::Weak || kind == DepKind::FakeWeak; }
};

// Deps compare by value as Inductor's Dep objects do: buffer, kind, and for
// memory deps index and size (bytes are not part of the identity). Sizes are
// sympy expressions there: two accesses of sizes u0 and u1 differ even when
// both hints are 0, so symbolic sizes compare as written.
inline bool same_dep_value(const Dep& a, const Dep& b) {
  return a.buf == b.buf && a.kind == b.kind &&
         (a.kind != DepKind::Memory || (a.index == b.index && a.size == b.size && a.size_expr == b.size_expr));
}

struct Buffer {
  std::string name;
  std::int64_t bytes = 0;
  Layout layout = Layout::Fixed;
  bool is_input = false;
  bool freeable = false;         // inputs only
  // Inputs only: AOTAutograd donated the input to the graph (Inductor's
  // DonatedBuffer), so a node's output may be written into it in place
  // (scheduler.py decide_inplace_update looks inputs up among the donated
  // ones only). A file without the field: equal to `freeable`.
  bool donated = false;
  NodeId producer = kNone;       // kNone for inputs
  BufId mutation_of = kNone;     // in-place update of this buffer (same storage)
  // `view_of`: a view into this buffer's storage that allocates nothing of
  // its own (Inductor's NonOwningLayout: a slice of a concatenation whose
  // producer writes it in place). Memory as executed allocates the storage
  // at the first view's step and frees it after the last use of any view.
  BufId view_of = kNone;
  std::string dtype;
  std::vector<std::int64_t> shape;
  // `stride`: the layout's strides in elements, one per shape dim
  // (informative; empty when the file gives none). They tell a matmul
  // operand's row pitch and a convolution operand's memory format.
  std::vector<std::int64_t> stride;
  std::vector<std::string> aliases;  // informative
  // Data-dependent size (`size_hint`): the size to price with, observed when
  // measured, else Inductor's fallback hint; `bytes` is what its planner sees.
  std::optional<std::int64_t> hint_bytes;
};

struct Collective {
  std::string op;  // as written in the file
  CollectiveOp kind = CollectiveOp::AllReduce;
  std::int64_t group_size = 1;
  std::int64_t bytes = 0;
};

// `convolution`: the geometry of one convolution call, forward or backward
// (format: "Convolution"). Shapes have rank r in 3..5 ([N, C, spatial...]);
// the per-dim lists have r - 2 entries. validate() checks ATen's rules.
struct ConvolutionGeometry {
  std::vector<std::int64_t> input;   // [N, Cin, ...]
  std::vector<std::int64_t> weight;  // [Cout, Cin/groups, ...]; transposed: [Cin, Cout/groups, ...]
  std::vector<std::int64_t> output;  // [N, Cout, ...] of the forward (backward: grad_output's shape)
  std::vector<std::int64_t> stride, padding, dilation, output_padding;
  std::int64_t groups = 1;
  bool transposed = false;
  std::optional<MemoryFormat> memory_format;     // the layout cuDNN runs it in, when known
  std::optional<std::array<bool, 3>> output_mask;  // backward only: grads of input, weight, bias
  bool operator==(const ConvolutionGeometry&) const = default;
};

// `attention`: what one attention call computes, forward or backward
// (format: "Attention"). Shapes are in SDPA layout [batch..., heads, seq,
// head_dim] (size hints), rank >= 3, the three of one rank; validate()
// checks them.
struct AttentionCall {
  std::vector<std::int64_t> query, key, value;
  bool causal = false;    // a top-left aligned causal mask
  bool bias = false;      // an additive bias (attn_mask) is read
  double dropout_p = 0;   // in [0, 1]
  bool operator==(const AttentionCall&) const = default;
};

// The scores an attention call computes and does not mask: batch × heads
// (the query's dims but the last two) × q_len × kv_len, or under a causal
// mask the top-left aligned triangle (query row i sees min(i + 1, kv_len)
// keys). Saturating: the shapes come from a file.
std::int64_t attention_scores(const AttentionCall& a);

// `scatter_index` (format: "Scatter index"): the spread of the index an
// accumulating scatter of the node adds through, observed on the GPU the
// graph was measured on (the exporter's --measure): its elements (rows
// added, one each), the distinct rows they add into, the most any one row
// takes, and the elements over the runs of equal consecutive values.
// validate() keeps rows <= updates, max_row_updates in [1, updates] (both
// 0 with updates 0) and at least updates / rows, and mean_run in
// [1, updates].
struct ScatterIndex {
  std::int64_t updates = 0, rows = 0, max_row_updates = 0;
  double mean_run = 1;
  bool operator==(const ScatterIndex&) const = default;
};

struct Node {
  std::string name;
  NodeKind kind = NodeKind::Pointwise;
  std::vector<std::string> members;  // empty for an unfused node
  std::string kernel;
  bool has_group = false;
  std::int64_t numel = 0, rnumel = 1;
  // `group_expr`: numel and rnumel as Inductor's symbolic expressions when
  // either has symbols (both empty otherwise); numel/rnumel hold the hints.
  std::string numel_expr, rnumel_expr;
  // `group_dims` (CPU graphs): the C++ backend's group, loop sizes and reduction sizes.
  std::vector<std::int64_t> loop_sizes, reduction_sizes;
  // `foreach`: the id of the foreach list (Inductor's V.graph.lists) the node
  // belongs to; -1 when none.
  std::int64_t foreach = -1;
  std::optional<std::int64_t> flops;
  std::optional<double> runtime_us;
  // `workspace_bytes` (with `workspace_source: "observed"`): what the node's
  // kernel allocates for itself and releases before it returns, beyond its
  // outputs, as observed on the GPU the graph was measured on (a cuDNN
  // convolution's workspace is its heuristics' choice there). Memory as
  // executed prices the node with it instead of its own rule.
  std::optional<std::int64_t> workspace_bytes;
  std::vector<BufId> outputs;
  std::vector<Dep> reads;
  std::vector<Dep> writes;
  std::optional<Collective> collective;
  std::optional<ConvolutionGeometry> convolution;
  std::optional<AttentionCall> attention;
  std::optional<ScatterIndex> scatter_index;
  // `reduction_types`: Inductor's reduction types of the node's members
  // ("sum", "max", "welford_reduce", ...), distinct and sorted; empty when
  // none or not exported.
  std::vector<std::string> reduction_types;
};

// Operation-level skeleton of a graph fused elsewhere (format: `operations`).
struct Operation {
  std::string name;
  std::vector<BufId> outputs;
  std::vector<BufId> reads;
};

struct Graph {
  std::string name;
  std::string source;
  std::int64_t world_size = 1;
  std::string device;  // "cuda" (also when absent) or "cpu": which backend's fusion rules apply
  std::vector<Buffer> buffers;  // inputs first (num_inputs of them), then node outputs
  std::int32_t num_inputs = 0;
  std::vector<BufId> outputs;   // graph outputs, in file order
  std::vector<Node> nodes;      // baseline order
  std::vector<Operation> operations;

  NameIndex buffer_index;  // names -> BufId (inputs and buffers share one namespace)
  NameIndex node_index;    // names -> NodeId

  std::int32_t num_nodes() const { return static_cast<std::int32_t>(nodes.size()); }
  std::int32_t num_buffers() const { return static_cast<std::int32_t>(buffers.size()); }
  BufId find_buffer(std::string_view n) const;  // kNone when absent
  NodeId find_node(std::string_view n) const;    // kNone when absent
  Order baseline_order() const;
  bool is_pre_fusion() const;  // no node carries `members`
};

// Saturating-checked arithmetic for byte sums: the format forbids silent overflow.
std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what);

}  // namespace schedlab
