// Memory as executed: the wrapper's allocation lines, then the caching
// allocator. Step names follow scheduler.py / wrapper.py.
#include "core/memory/executed.h"
#include "core/memory/planning_info.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "core/alloc/caching_allocator.h"
#include "core/memory/estimate.h"
#include "core/util/range_add_max_tree.h"
#include "core/cost/kernel_class.h"
#include "core/util/error.h"
#include "core/util/affine_index.h"
#include "core/util/saturating.h"

namespace schedlab {

std::string_view to_string(WorkspaceSource s) {
  switch (s) {
    case WorkspaceSource::Observed: return "observed";
    case WorkspaceSource::OperandCopies: return "operand_copies";
    case WorkspaceSource::AttentionLaw: return "attention_law";
    case WorkspaceSource::InputTransform: return "input_transform";
  }
  return "observed";
}

namespace {


// Extern kernels that write into a buffer the wrapper allocated (ExternKernelOut:
// `extern_kernels.mm(a, b, out=buf)`); every other extern allocates its outputs itself.
bool writes_into_wrapper_buffer(const Node& n) {
  if (n.kind != NodeKind::Extern) return n.kind != NodeKind::Collective;
  constexpr std::string_view kPrefix = "extern_kernels.";
  return n.kernel.rfind(kPrefix, 0) == 0 && n.kernel.find("convolution") == std::string::npos;
}

// The elements an access reaches when its index is affine in the
// dep's loop variables: 1 + offset + sum of coefficient x (loop size - 1),
// from the text as Inductor prints it ("50304*c0 + c1", "49*d0 + 38432*d1 +
// 7*d2 + d3": a variable cK or dK is loop K; core/util/affine_index.h).
// nullopt for anything else (symbolic sizes or strides, indirect tmpN,
// floor division, a negative coefficient or offset), and for a loop of
// size 0. `elements`: the product of the loops the index
// uses, which with the dep's bytes gives the item size (Inductor's
// MemoryDep.get_numel leaves out the loops it broadcasts over).
std::optional<std::int64_t> access_extent(const Dep& d, std::int64_t& elements) {
  if (d.kind != DepKind::Memory || !d.size_expr.empty() || d.index.empty()) return std::nullopt;
  for (std::int64_t s : d.size)
    if (s <= 0) return std::nullopt;
  const std::optional<AffineIndex> index = parse_affine_index(d.index, d.size.size(), "cd");
  if (!index || index->offset < 0) return std::nullopt;
  std::int64_t last = index->offset;  // the largest index reached
  elements = 1;
  for (std::size_t k = 0; k < d.size.size(); ++k) {
    const std::int64_t stride = index->strides[k];
    if (stride == 0) continue;
    std::int64_t reach = 0;
    if (stride < 0 || !exact_mul(stride, d.size[k] - 1, reach) || !exact_add(last, reach, last) || !exact_mul(elements, d.size[k], elements))
      return std::nullopt;
  }
  return last + 1;
}

// The bytes of a buffer's storage, as far as the graph tells. A buffer the
// wrapper allocates requests what `empty_strided_cuda(size, stride)` asks
// for, its layout's storage, 1 + sum of (size - 1) x stride elements, which
// Inductor's padded strides make larger than size x itemsize (comprehensive
// padding, pad_mm: RegNetY's [32, 784, 7, 7] bf16 buffers with stride 38464
// for 38416, 2,461,600 bytes; GPT-2's [4096, 50264] logits gradient with
// stride 50304). The reuse pool's key and the in-place size match are that
// storage too (buffer_reuse_key, can_match_buffer_size:
// get_allocation_storage_size). The strides come from the file
// (schedgraph/1 `stride`), else from the affine index a kernel writes the
// buffer through. The file's `bytes` (numel x itemsize) is what the
// scheduler's estimate counts and stays that there.
//
// A graph input is not allocated by the call, and may be one of several
// views of one storage (q, k and v selected from a packed projection) or
// the view of a larger one: its strides and its kernels' affine reads only
// bound its storage from below (`reach`), so the cold start keeps its
// `bytes`, and the recorded start reads its storage off its block
// (recorded_storage_bytes).
//
// `bytes`: each buffer's size as priced (observed or hinted sizes applied),
// raised in place to its storage but for inputs and observed sizes;
// `reach`: per input, that lower bound (its bytes at least).
void raise_to_storage(const Graph& g, std::vector<std::int64_t>& bytes, const std::vector<std::uint8_t>& observed,
                      std::vector<std::int64_t>& reach) {
  reach.assign(bytes.begin(), bytes.begin() + g.num_inputs);
  auto raise = [&](BufId b, std::int64_t reached) {
    if (g.buffers[b].is_input) reach[b] = std::max(reach[b], reached);
    else bytes[b] = std::max(bytes[b], reached);
  };
  auto priced_by_storage = [&](BufId b) {
    const Buffer& buf = g.buffers[b];
    return !observed[b] && buf.mutation_of == kNone && buf.layout == Layout::Fixed && !buf.hint_bytes && bytes[b] > 0;
  };
  for (BufId b = 0; b < g.num_buffers(); ++b) {
    const Buffer& buf = g.buffers[b];
    if (!priced_by_storage(b) || buf.stride.empty() || buf.stride.size() != buf.shape.size()) continue;
    std::int64_t numel = 1, last = 0, term = 0;
    bool exact = true;
    for (std::size_t k = 0; k < buf.shape.size() && exact; ++k) {
      exact = buf.shape[k] > 0 && buf.stride[k] >= 0 && exact_mul(numel, buf.shape[k], numel) &&
              exact_mul(buf.shape[k] - 1, buf.stride[k], term) && exact_add(last, term, last);
    }
    std::int64_t reached = 0;
    if (exact && bytes[b] % numel == 0 && exact_mul(last + 1, bytes[b] / numel, reached)) raise(b, reached);
  }
  auto access = [&](const Dep& d) {
    if (!priced_by_storage(d.buf)) return;
    std::int64_t elements = 0;
    const std::optional<std::int64_t> extent = access_extent(d, elements);
    if (!extent || elements <= 0 || d.bytes % elements != 0) return;
    std::int64_t reached;
    if (exact_mul(*extent, d.bytes / elements, reached)) raise(d.buf, reached);
  };
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    for (const Dep& w : g.nodes[v].writes)
      if (!g.buffers[w.buf].is_input && g.buffers[w.buf].producer == v) access(w);
    for (const Dep& d : g.nodes[v].reads)
      if (g.buffers[d.buf].is_input) access(d);
  }
}

struct Replay {
  const Graph& g;
  const Order& order;
  std::vector<std::int64_t> bytes;         // per buffer, what its allocation requests: its storage (raise_to_storage), observed sizes applied
  std::vector<std::int64_t> reach;         // per input, what its strides and affine reads reach (raise_to_storage)
  std::vector<std::int32_t> step_of;       // per node
  std::vector<std::int32_t> last_use;      // per real buffer: last step that reads or writes it; -1 none
  std::vector<std::uint8_t> graph_output;  // per buffer
  std::vector<std::vector<BufId>> items;   // per multi_output container: its items
  std::vector<BufId> donated_to;           // per buffer: the output that took it over in place
  // Per buffer: the storage a mutation writes through (storage_roots, O(N)
  // for a whole chain rather than a walk per access).
  std::vector<BufId> real;

  // --- compute_last_usage: every dep, weak ones included, keeps the real buffer alive.
  void compute_last_usage() {
    last_use.assign(g.buffers.size(), -1);
    for (std::int32_t s = 0; s < static_cast<std::int32_t>(order.size()); ++s) {
      const Node& n = g.nodes[order[s]];
      for (const auto* deps : {&n.reads, &n.writes})
        for (const Dep& d : *deps) last_use[real[d.buf]] = s;
      for (BufId b : n.outputs) last_use[real[b]] = std::max(last_use[real[b]], s);
    }
    for (BufId b = 0; b < g.num_buffers(); ++b)
      if (g.buffers[b].layout == Layout::MultiOutputItem) {
        // The fallback's items are views of its result: the container lives while any item does.
        BufId container = kNone;
        for (const Dep& d : g.nodes[g.buffers[b].producer].reads)
          if (g.buffers[d.buf].layout == Layout::MultiOutput) container = d.buf;
        if (container != kNone) items[container].push_back(b);
      }
  }

  bool allocates(BufId b) const {
    const Buffer& buf = g.buffers[b];
    return !buf.is_input && buf.mutation_of == kNone && buf.view_of == kNone && buf.layout != Layout::None &&
           buf.layout != Layout::MultiOutput && bytes[b] > 0;
  }

  // Per buffer: the operation (g.operations) that makes it; -1 when the file
  // has no operations or none makes it.
  std::vector<std::int32_t> made_by_operation;
  std::vector<BufId> took_over;       // per buffer: the buffer whose storage it took over in place
  std::vector<std::uint8_t> removed;  // per buffer: local to its kernel, never allocated
  std::vector<KernelWorkspace> workspaces;  // the nodes priced with one, in order

  // A Triton kernel's output that nothing outside the kernel reads is not
  // stored (remove_kernel_local_buffers: V.graph.removed_buffers); the
  // wrapper neither allocates nor frees it. A buffer taken over in place
  // goes with its group: removed only when every buffer of the in-place
  // chain is local (remove_inplace_buffer), so bert's `buf3 =
  // reinterpret_tensor(buf1, ...); del buf1  # reuse` keeps buf1, whose
  // taker is a graph output. (transformer_l's backward: 21 small f32
  // buffers of fused reductions the model allocated and chained through the
  // pool never appear in the code.)
  bool kernel_local(BufId b, std::int32_t step) const {
    const Buffer& buf = g.buffers[b];
    const NodeKind kind = g.nodes[buf.producer].kind;
    return (kind == NodeKind::Pointwise || kind == NodeKind::Reduction) && !graph_output[real[b]] && buf.layout == Layout::Fixed &&
           buf.aliases.empty() && buf.mutation_of == kNone && last_use[b] == step;
  }
  bool removed_from_kernel(BufId b, std::int32_t step) const {
    if (g.buffers[b].is_input) return false;
    const NodeId node = g.buffers[b].producer;
    BufId root = b;
    for (; took_over[root] != kNone; root = took_over[root])
      if (g.buffers[took_over[root]].is_input || g.buffers[took_over[root]].producer != node) return false;  // an outside donor stays
    for (BufId x = root; x != kNone; x = donated_to[x])
      if (!kernel_local(x, step)) return false;
    return true;
  }

  void index_operations() {
    made_by_operation.assign(g.buffers.size(), -1);
    for (std::size_t i = 0; i < g.operations.size(); ++i)
      for (BufId b : g.operations[i].outputs) made_by_operation[b] = static_cast<std::int32_t>(i);
  }

  // The operations of `out`'s fused node that `out`'s own operation depends
  // on (its ancestors inside the node), by index into g.operations.
  std::vector<std::int32_t> ancestors_in_node(BufId out) const {
    const NodeId node = g.buffers[out].producer;
    std::vector<std::int32_t> ancestors, pending{made_by_operation[out]};
    while (!pending.empty()) {
      const std::int32_t op = pending.back();
      pending.pop_back();
      for (BufId b : g.operations[op].reads) {
        const std::int32_t maker = made_by_operation[b];
        if (maker < 0 || g.buffers[b].producer != node || std::find(ancestors.begin(), ancestors.end(), maker) != ancestors.end()) continue;
        ancestors.push_back(maker);
        pending.push_back(maker);
      }
    }
    return ancestors;
  }

  // The buffers whose storage an output may take over, as Inductor asks
  // (decide_inplace_update runs per SchedulerNode, inside a fused kernel
  // too): the reads of the operation inside a fused node that makes `out`,
  // when the file has its operations, and only those that no other operation
  // of the node reads, but for the operation's own ancestors there
  // (remaining_uses leaves out self.ancestors: the one remaining user must
  // be that operation); else the node's own reads. (bert's forward: a fused
  // layer-norm kernel reads buf31 in one operation and writes buf36 in
  // another; at the node's level buf36 looked like it could take buf31
  // over, but the code allocates buf36 and keeps buf31 for a later matrix
  // product's `# reuse`.)
  std::vector<BufId> inplace_candidates(const Node& n, BufId out) const {
    std::vector<BufId> candidates;
    const std::int32_t op = made_by_operation[out];
    if (n.members.size() < 2 || op < 0) {
      for (const Dep& r : n.reads)
        if (r.kind == DepKind::Memory) candidates.push_back(r.buf);
      return candidates;
    }
    const std::vector<std::int32_t> ancestors = ancestors_in_node(out);
    // The first that qualifies wins, in the order the operation loads them,
    // which the file does not keep (an operation's reads are sorted by name):
    // what the kernel made itself first, then the node's reads in their
    // order. On the 41 graphs whose wrappers are kept
    // (tests/data/measured/h100/wrapper_reuses.json), the two orders give the
    // same peaks on every measured graph but unet_gn's forward, whose
    // layer-norm kernel writes its output over the buffer it made itself
    // (0.998 this way, 0.944 the other); the other order matches 3 more
    // reuse lines of the 389.
    std::vector<BufId> op_reads;
    for (const auto* deps : {&n.writes, &n.reads})
      for (const Dep& e : *deps)
        if (std::find(g.operations[op].reads.begin(), g.operations[op].reads.end(), e.buf) != g.operations[op].reads.end() &&
            std::find(op_reads.begin(), op_reads.end(), e.buf) == op_reads.end())
          op_reads.push_back(e.buf);
    for (BufId d : op_reads) {
      bool remaining_use_elsewhere = false;
      for (const Dep& w : n.writes) {
        const std::int32_t other = made_by_operation[w.buf];
        if (other < 0 || other == op || std::find(ancestors.begin(), ancestors.end(), other) != ancestors.end()) continue;
        for (BufId r : g.operations[other].reads) remaining_use_elsewhere = remaining_use_elsewhere || r == d;
      }
      if (!remaining_use_elsewhere) candidates.push_back(d);
    }
    return candidates;
  }

  // The node's one memory dep on `d`: its read, or for a buffer made and
  // used inside the fused node, its write (null when absent or not one).
  static const Dep* memory_dep_on(const Node& n, BufId d) {
    const Dep* found = nullptr;
    for (const auto* deps : {&n.reads, &n.writes})
      for (const Dep& e : *deps)
        if (e.buf == d && !e.is_weak()) {
          if (found || e.kind != DepKind::Memory) return nullptr;  // single_index_in_fused_node
          found = &e;
        }
    return found;
  }

  // --- can_reuse + can_inplace + can_match_buffer_size + single_index_in_fused_node.
  BufId inplace_donor(const Node& n, BufId out, std::int32_t step) const {
    if (n.kind != NodeKind::Pointwise && n.kind != NodeKind::Reduction) return kNone;
    for (BufId o : n.outputs)
      if (!g.buffers[o].aliases.empty()) return kNone;
    const Dep* write = nullptr;
    for (const Dep& w : n.writes)
      if (w.buf == out && w.kind == DepKind::Memory) write = write ? nullptr : &w;
    if (!write) return kNone;
    for (BufId d : inplace_candidates(n, out)) {
      const Buffer& donor = g.buffers[d];
      // A graph input may be taken over only when AOTAutograd donated it
      // (a saved activation no other output aliases; `donated`, which files
      // without the field read as `freeable`): decide_inplace_update looks
      // inputs up among the donated buffers only. llama_block's backward
      // writes `buf5 = reinterpret_tensor(mm_10, ...); del mm_10  # reuse`;
      // T5's loss backward keeps its freeable but undonated logits view
      // `view_1` and allocates `buf1` beside it.
      // An extern's item (`buf21 = buf20[0]`) is a tensor of its own with a
      // fixed layout: only the container's MultiOutputLayout is refused
      // (unet_gn's backward: `buf28 = reinterpret_tensor(buf21, ...); del
      // buf21  # reuse` takes over a convolution's input gradient).
      const bool donor_layout = donor.layout == Layout::Fixed || donor.layout == Layout::MultiOutputItem;
      if (d == out || (donor.is_input && !donor.donated) || graph_output[d] || donated_to[d] != kNone || !donor_layout) continue;
      if (donor.mutation_of != kNone || !donor.aliases.empty()) continue;
      if (donor.producer != kNone && g.nodes[donor.producer].kind == NodeKind::Nop) continue;
      // Inputs carry no dtype in schedgraph/1: their bytes and the equal index decide.
      if (last_use[d] != step || (donor.dtype != g.buffers[out].dtype && !(donor.is_input && donor.dtype.empty()))) continue;
      if (!(bytes[out] <= bytes[d] && 20 * bytes[out] >= 19 * bytes[d])) continue;
      const Dep* dep = memory_dep_on(n, d);
      if (dep && dep->index == write->index && dep->size == write->size) return d;
    }
    return kNone;
  }
};

}  // namespace

namespace {

// One line of the wrapper's memory code (AllocateLine, ReuseLine, FreeIfNotReusedLine).
struct Line {
  ExecutedEvent::Kind kind;
  BufId buf = kNone, donor = kNone;
  NodeId at = kNone;
  bool pooled = false;  // Allocate: may take from the pool; Free: goes to the pool
  bool reused = false;  // Free: a later allocation took it, so nothing is released here
  std::int64_t workspace = 0;  // Allocate with buf kNone: a kernel's transient workspace, released at once
};

[[noreturn]] void attention_shape_out_of_range(const Node& node) {
  throw Error("node \"" + node.name + "\": attention workspace: shape out of range");
}

// The product of shape terms, an error naming the node past 63 bits.
std::int64_t checked_product(std::initializer_list<std::int64_t> terms, const Node& node) {
  std::int64_t p = 1;
  for (std::int64_t t : terms)
    if (t < 0 || !exact_mul(p, t, p)) attention_shape_out_of_range(node);
  return p;
}

// A shape term padded to a kernel's tile, an error naming the node past 63 bits.
std::int64_t padded(std::int64_t term, std::int64_t tile, const Node& node) {
  std::int64_t out;
  if (!exact_round_up(term, tile, out)) attention_shape_out_of_range(node);
  return out;
}

// An SDPA backward's transient buffers, per backend, from the shape of the
// gradient of the query ([B, H, Sq, D]: the multi-output item as large as
// the query the node reads second, grad_out being first). Read off the
// allocator's history of 300 backward calls on an H100 (python/zoo/
// sdpa_memory_probe.py, tests/data/measured/h100/sdpa_memory.json), exact
// to 1.5 % of the transient in every case:
// - cuDNN: an f32 dQ accumulator and an f32 row statistic,
//   4·B·H·Sq·D + 4·B·H·Sq;
// - memory-efficient: the f32 dQ accumulator in 64-row, 64-column tiles and
//   the f32 row statistic, 4·B·H·⌈Sq⌉64·⌈D⌉64 + 4·B·H·Sq;
// - flash: the f32 row statistic and the f32 dQ accumulator, both padded to
//   128 rows (head dim to 32), 4·B·H·⌈Sq⌉128·(1 + ⌈D⌉32). (Eager calls also
//   copy the output and its gradient into the kernel's layout, two blocks of
//   the query's size; Inductor's compiled graphs hand them over in that
//   layout: sdpa_flash_1_bwd measured 0.84 of its peak without the
//   accumulators, 1.20 with the copies.)
std::int64_t attention_backward_workspace(const Replay& r, const Node& node) {
  if (node.outputs.size() != 1 || r.g.buffers[node.outputs[0]].layout != Layout::MultiOutput) return 0;
  const std::int64_t q_bytes = node.reads.size() > 1 ? r.bytes[node.reads[1].buf] : 0;
  const Buffer* grad_q = nullptr;
  for (BufId item : r.items[node.outputs[0]]) {
    const Buffer& b = r.g.buffers[item];
    if (b.shape.size() != 4) continue;
    if (!grad_q || r.bytes[item] == q_bytes) grad_q = &b;
    if (r.bytes[item] == q_bytes) break;
  }
  if (!grad_q) return 0;
  const std::int64_t batch = grad_q->shape[0], h = grad_q->shape[1], sq = grad_q->shape[2], d = grad_q->shape[3];
  const std::int64_t row_stat = checked_product({4, batch, h, sq}, node);
  const std::string_view kernel = node.kernel;
  if (kernel.find("cudnn") != std::string_view::npos)
    return checked_add(checked_product({4, batch, h, sq, d}, node), row_stat, "attention workspace");
  if (kernel.find("efficient") != std::string_view::npos)
    return checked_add(checked_product({4, batch, h, padded(sq, 64, node), padded(d, 64, node)}, node), row_stat, "attention workspace");
  if (kernel.find("flash") != std::string_view::npos) return checked_product({4, batch, h, padded(sq, 128, node), padded(d, 32, node) + 1}, node);
  return 0;
}

// What a kernel allocates for itself while it runs and releases before it
// returns: what the graph says was observed on the GPU (`workspace_bytes`:
// the exporter ran the node's call alone there), else by rule. cuDNN's
// convolution backward copies its operands (the gradient of the output, the
// input, the weight) into the layouts its kernels take, an approximation:
// which engine the heuristics pick, and so whether it copies operands, keeps
// split-K partial sums or needs nothing, no law of the shape predicts
// (docs/memory-as-executed.md). An attention backward allocates its
// accumulators (above). A forward convolution (ungrouped, not transposed)
// whose input channels are not a multiple of 8, as a network's first layer
// on RGB images, copies its input into a layout cuDNN's kernels take: in
// the fit validation's allocator histories on the H100 (tests/data/fit),
// 13 of 17 such stems allocated their input's bytes beside the output
// (NCHW and channels-last, f32); ViT's patch convolution allocated
// nothing, and Swin's, DeiT's and a bf16 channels-last ResNet's 1.9-3.1x
// the input. nullopt: no workspace.
std::optional<KernelWorkspace> workspace_of(const Replay& r, NodeId v) {
  const Node& node = r.g.nodes[v];
  if (node.workspace_bytes) return KernelWorkspace{v, node.name, *node.workspace_bytes, WorkspaceSource::Observed};
  const KernelClass cls = classify_node(r.g, node);
  std::int64_t bytes = 0;
  WorkspaceSource source = WorkspaceSource::OperandCopies;
  if (cls == KernelClass::AttentionBackward) {
    bytes = attention_backward_workspace(r, node);
    source = WorkspaceSource::AttentionLaw;
  } else if (cls == KernelClass::ConvolutionBackward) {
    for (const Dep& d : node.reads)
      if (!d.is_weak()) bytes = checked_add(bytes, r.bytes[d.buf], "workspace bytes");
  } else if (cls == KernelClass::Convolution && node.convolution && !node.convolution->transposed && node.convolution->groups == 1 &&
             node.convolution->input.size() >= 2 && node.convolution->input[1] % 8 != 0 && !node.reads.empty() &&
             !node.reads[0].is_weak()) {
    bytes = r.bytes[node.reads[0].buf];
    source = WorkspaceSource::InputTransform;
  }
  if (bytes <= 0) return std::nullopt;
  return KernelWorkspace{v, node.name, bytes, source};
}

// The wrapper's lines for `order`, before memory planning.
std::vector<Line> emit_lines(Replay& r) {
  const Graph& g = r.g;
  std::vector<std::vector<BufId>> dying_at(r.order.size());
  for (BufId b = 0; b < g.num_buffers(); ++b) {
    const Buffer& buf = g.buffers[b];
    if (r.last_use[b] < 0 || r.graph_output[b] || (buf.is_input && !buf.freeable)) continue;
    if (buf.is_input ? r.bytes[b] > 0 : r.allocates(b)) dying_at[r.last_use[b]].push_back(b);
  }
  std::vector<Line> lines;
  std::vector<std::uint8_t> allocated_early(g.buffers.size(), 0);  // per buffer: allocated at a view's step, before its own node
  for (std::int32_t s = 0; s < static_cast<std::int32_t>(r.order.size()); ++s) {
    const NodeId v = r.order[s];
    const Node& node = g.nodes[v];
    const bool pooled = writes_into_wrapper_buffer(node);
    // decide_inplace_update for every output first: whether a buffer local
    // to the kernel is removed depends on the outputs that take it over.
    std::vector<BufId> own_lines;
    for (BufId b : node.outputs) {
      // A view allocates nothing; the wrapper allocates the storage it views
      // at the first of them (codegen_allocation of a NonOwningLayout:
      // `buf0 = empty_strided(...)`, then `buf1 = reinterpret_tensor(buf0, ...)`),
      // and not again at the viewed buffer's own node (a concatenation's nop).
      if (const BufId base = g.buffers[b].view_of; base != kNone) {
        if (r.allocates(base) && !allocated_early[base]) {
          allocated_early[base] = 1;
          own_lines.push_back(base);
        }
        continue;
      }
      if (allocated_early[b]) continue;
      if (g.buffers[b].layout == Layout::MultiOutput) {
        for (BufId item : r.items[b])  // the fallback allocates its results itself
          if (r.allocates(item)) own_lines.push_back(item);
        continue;
      }
      if (!r.allocates(b) || g.buffers[b].layout == Layout::MultiOutputItem) continue;
      if (BufId donor = r.inplace_donor(node, b, s); donor != kNone) {
        r.donated_to[donor] = b;
        r.took_over[b] = donor;
      }
      own_lines.push_back(b);
    }
    for (BufId b : own_lines) {
      if (r.removed_from_kernel(b, s)) {
        r.removed[b] = 1;
      } else if (r.took_over[b] != kNone) {
        lines.push_back({ExecutedEvent::Kind::Reuse, b, r.took_over[b], v});
      } else {
        const bool item = g.buffers[b].layout == Layout::MultiOutputItem;
        lines.push_back({ExecutedEvent::Kind::Allocate, b, kNone, v, pooled && !item});
      }
    }
    if (const auto ws = workspace_of(r, v)) {
      r.workspaces.push_back(*ws);
      if (ws->bytes > 0) lines.push_back({ExecutedEvent::Kind::Allocate, kNone, kNone, v, false, false, ws->bytes});
    }
    // free_buffers(): after the kernel, sorted by name; inputs are deleted, not pooled.
    auto& dying = dying_at[s];
    std::sort(dying.begin(), dying.end(), [&](BufId a, BufId b) { return g.buffers[a].name < g.buffers[b].name; });
    for (BufId b : dying)
      if (r.donated_to[b] == kNone && !r.removed[b]) lines.push_back({ExecutedEvent::Kind::Free, b, kNone, v, !g.buffers[b].is_input});
  }
  return lines;
}

// MemoryPlanningState: a pooled free line waits under (dtype, bytes); the
// next allocation of that key considers the most recent one
// (AllocateLine.plan). It takes it over, and the free line then releases
// nothing, when the free was at the step just before, or when holding the
// storage from the free to here does not lift the scheduler's own memory
// curve above its peak (should_reuse_buffer: Inductor's estimate_peak_memory
// over the order, EfficientPeakEstimate; a reuse adds its bytes to the curve
// between the two steps). Otherwise the free line goes back to the pool and
// the allocation is fresh. (transformer_l's backward: a 32 KB f32 buffer
// freed early was not taken by a later one of the same key, which the
// pool without this check did.)
void plan_pool_reuse(Replay& r, std::vector<Line>& lines, const PeakMemoryEstimate& scheduler_estimate) {
  RangeAddMaxTree curve(scheduler_estimate.curve);
  std::map<std::pair<std::string_view, std::int64_t>, std::vector<std::size_t>> pool;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    Line& l = lines[i];
    if (l.buf == kNone) continue;  // a workspace
    auto key = std::make_pair(std::string_view(r.g.buffers[l.buf].dtype), r.bytes[l.buf]);
    if (l.kind == ExecutedEvent::Kind::Free && l.pooled) {
      pool[key].push_back(i);
    } else if (l.kind == ExecutedEvent::Kind::Allocate && l.pooled) {
      auto it = pool.find(key);
      if (it == pool.end() || it->second.empty()) continue;
      Line& freed = lines[it->second.back()];
      const std::int32_t freed_at = r.step_of[freed.at], allocated_at = r.step_of[l.at];
      const std::int64_t planned_bytes = r.g.buffers[l.buf].bytes;  // what the scheduler's curve counts
      if (freed_at + 1 != allocated_at) {
        if (curve.max(freed_at + 1, allocated_at - 1) + planned_bytes > scheduler_estimate.peak) continue;
        curve.add(freed_at + 1, allocated_at - 1, planned_bytes);
      }
      it->second.pop_back();
      freed.reused = true;
      l.kind = ExecutedEvent::Kind::Reuse;
      l.donor = freed.buf;
    }
  }
}

// Where the graph's inputs sit in the simulated cache when the call starts.
// Inputs the graph does not own (parameters, buffers) were allocated long
// before the call, among the process's other long-lived tensors; freeable
// inputs (saved activations, the batch) were made just before it by the
// cache the call allocates from.
// - HeldApart: held inputs in segments of their own, freeable ones (file
//   order) starting the call's cache. Which block each allocation gets, and so
//   the allocated peak (an unsplit block counts whole), depends on the free
//   holes beside the call's buffers; packing parameters in among them made
//   holes the real cache does not have (llama_block backward: a 1.4 MB
//   buffer in a 2.1 MB hole beside a parameter, 1.037 of the measured peak;
//   1.000 apart).
// - Together: every input in one cache, file order. The reserved total
//   depends on how much free room the call finds before it needs a new
//   segment, and the tails of the parameters' segments are such room
//   (unet_gn forward's reserved peak: 0.923 / 1.039 together on H100 / H200,
//   0.938 / 1.055 apart; docs/memory-as-executed.md).
// - Recorded: the measuring process's own cache at the call's start
//   (schedmeasured/1 memory.allocator_at_start), segments with their free
//   holes. Every input is already among its allocated blocks, beside the
//   process's other tensors, so none is allocated again; a freeable input,
//   which the call releases, takes an allocated block: the one the file
//   says holds it (memory.inputs_at_start), else a guess
//   (recorded_input_blocks). One replay gives both peaks. (bert_dynamic
//   forward: a 4 MiB buffer lands whole in a recorded 5 MiB hole, which no
//   empty cache has.)
enum class InputPlacement : std::uint8_t { HeldApart, Together, Recorded };

// The recorded allocated block each freeable input stands for, which the
// call releases when it frees the input. kNoBlock: the input is allocated at
// the start instead. kNotInCache: nothing to release, the input is not in
// the device's cache. kSharedStorage: nothing to release, its storage is
// another input's, released (and counted) with that one.
inline constexpr CachingAllocatorSim::Handle kNotInCache = -2;
inline constexpr CachingAllocatorSim::Handle kSharedStorage = -3;

// A freeable input as the graph tells of its storage: its bytes, and what its
// strides and affine reads reach (raise_to_storage).
struct InputView {
  std::int64_t bytes = 0, reach = 0;
};

// Where the file says (memory.inputs_at_start: the block at which the
// input's storage starts). Inputs sharing a storage: the one used last
// holds the block, since the storage lives until its last view is freed.
// A freeable input the file does not place is not on the device (bert's
// backward: the dropout's philox seed and offset, CPU scalars).
std::vector<CachingAllocatorSim::Handle> recorded_input_blocks_by_address(const Replay& r, const AllocatorState& recorded,
                                                                          const std::vector<std::vector<CachingAllocatorSim::Handle>>& handles,
                                                                          std::map<CachingAllocatorSim::Handle, std::vector<InputView>>* views) {
  std::vector<CachingAllocatorSim::Handle> handle(r.g.num_inputs, kNotInCache);
  for (std::size_t s = 0; s < recorded.size(); ++s)
    for (std::size_t k = 0; k < recorded[s].blocks.size(); ++k) {
      BufId holder = kNone;
      for (const std::string& name : recorded[s].blocks[k].inputs) {
        const BufId b = r.g.find_buffer(name);
        if (b == kNone || b >= r.g.num_inputs || !r.g.buffers[b].freeable || r.bytes[b] == 0) continue;
        handle[b] = kSharedStorage;
        if (holder == kNone || r.last_use[b] >= r.last_use[holder]) holder = b;
        if (views) (*views)[handles[s][k]].push_back({r.bytes[b], r.reach[b]});
      }
      if (holder != kNone) handle[holder] = handles[s][k];
    }
  return handle;
}

// A guess, for files that do not say which tensor a block holds. Freeable
// inputs are fresh copies made just before the call, in file order, the
// latest allocations of the process, so from the last input back, each
// takes the highest-addressed unclaimed block of its pool that a request of
// its size would have been given whole: its rounded size, else the
// smallest larger block the pool leaves unsplit. (Taking them from the
// lowest address up gives the same figures on every checked-in file.)
std::vector<CachingAllocatorSim::Handle> guessed_input_blocks(const Replay& r, const AllocatorState& recorded,
                                                              const std::vector<std::vector<CachingAllocatorSim::Handle>>& handles) {
  struct Candidate {
    CachingAllocatorSim::Handle handle;
    std::int64_t bytes;
    bool small, claimed;
  };
  std::vector<Candidate> allocated;
  for (std::size_t s = 0; s < recorded.size(); ++s)
    for (std::size_t i = 0; i < handles[s].size(); ++i)
      if (recorded[s].blocks[i].allocated) allocated.push_back({handles[s][i], recorded[s].blocks[i].bytes, recorded[s].small, false});
  std::vector<CachingAllocatorSim::Handle> handle(r.g.num_inputs, CachingAllocatorSim::kNoBlock);
  for (BufId b = r.g.num_inputs - 1; b >= 0; --b) {
    if (!r.g.buffers[b].freeable || r.bytes[b] == 0) continue;
    const std::int64_t size = CachingAllocatorSim::round_size(r.bytes[b]);
    const bool small = size <= kAllocSmallSize;
    Candidate* best = nullptr;
    for (auto it = allocated.rbegin(); it != allocated.rend(); ++it) {
      Candidate& c = *it;
      if (c.claimed || c.small != small || c.bytes < size || (c.bytes > size && (small || c.bytes - size > kAllocSmallSize))) continue;
      if (!best || c.bytes < best->bytes) best = &c;
      if (c.bytes == size) break;
    }
    if (!best) continue;
    best->claimed = true;
    handle[b] = best->handle;
  }
  return handle;
}

// Starts `alloc` from the recorded cache; returns each freeable input's
// block, and in `views` the bytes of the freeable inputs whose storage starts
// at each block the file places (none for a guess).
std::vector<CachingAllocatorSim::Handle> recorded_input_blocks(const Replay& r, const AllocatorState& recorded, CachingAllocatorSim& alloc,
                                                               std::map<CachingAllocatorSim::Handle, std::vector<InputView>>* views) {
  std::vector<std::vector<CachingAllocatorSim::Handle>> handles;
  bool addressed = false;
  for (const CachedSegment& seg : recorded) {
    handles.push_back(alloc.add_segment(seg));
    for (const CachedBlock& b : seg.blocks) addressed = addressed || !b.inputs.empty();
  }
  return addressed ? recorded_input_blocks_by_address(r, recorded, handles, views) : guessed_input_blocks(r, recorded, handles);
}

// The storage behind a freeable input's recorded block (the file places
// it), which the measured peak counts (schedmeasured/1
// freeable_inputs_bytes: the freeable inputs' distinct storages). The block
// is what the allocator gave that storage's request, rounded, with a rest it
// did not split off (should_split: under 512 bytes in the small pool, up to
// 1 MiB in the large one). `views`: the freeable inputs whose storage starts
// there, in any order. Taken as the storage, the first of these that the
// block can hold, raised to what the views reach (their strides, their
// kernels' affine reads: RegNetY's saved mask `le`, stride 38528, 1,232,784
// bytes for 1,229,312):
// - their bytes' sum, the views tiling it (bert_dynamic's backward: three
//   1 MiB selects of one 3 MiB storage, in a 4 MiB block whose 1 MiB rest
//   stayed unsplit);
// - the largest, views that overlap;
// - else the block itself, a larger storage the input is a view of, which the
//   call frees whole when it deletes the view (GPT-2's saved queries,
//   [8, 12, 512, 64] bf16 with strides (1179648, 64, 2304, 1), 6,291,456
//   bytes each, reaching 18,871,296: views of the attention's packed q/k/v
//   projection, whose 18,874,368-byte blocks the call releases), exact up
//   to the rest; what a view reaches only bounds its base from below.
std::int64_t recorded_storage_bytes(const std::vector<InputView>& views, std::int64_t block, bool small_block) {
  const std::int64_t unsplit_rest = small_block ? kAllocMinBlock - 1 : kAllocSmallSize;
  auto fits = [&](std::int64_t storage) {
    const std::int64_t rounded = CachingAllocatorSim::round_size(storage);
    return (rounded <= kAllocSmallSize) == small_block && rounded <= block && block - rounded <= unsplit_rest;
  };
  std::int64_t sum = 0, largest = 0, reach = 0;
  for (const InputView& v : views) {
    sum = saturating_add(sum, v.bytes);
    largest = std::max(largest, v.bytes);
    reach = std::max(reach, v.reach);
  }
  for (std::int64_t storage : {sum, largest})
    if (fits(storage)) return std::min(block, std::max(storage, reach));
  return block;
}

struct AllocatorReplay {
  std::int64_t peak_over_start = 0;      // allocated peak less what the call's cache held before it
  std::int64_t freeable_input_bytes = 0;  // freeable inputs the graph reads (they count in the peak)
  std::int64_t peak_reserved = 0;        // every segment, the held inputs' included
  std::int64_t allocated_before = 0, reserved_before = 0;
  NodeId peak_node = kNone;
};

// `recorded`: the start state, for InputPlacement::Recorded. `trace`, when
// given, gets one EventBlock per event of ExecutedMemory::events.
AllocatorReplay replay_allocator(const Replay& r, const std::vector<Line>& lines, InputPlacement placement,
                                 const AllocatorState* recorded = nullptr, std::vector<EventBlock>* trace = nullptr) {
  const Graph& g = r.g;
  CachingAllocatorSim alloc, held_inputs;
  std::vector<CachingAllocatorSim::Handle> handle(g.buffers.size(), CachingAllocatorSim::kNoBlock);
  std::vector<CachingAllocatorSim::Handle> recorded_blocks;
  // Per recorded block a freeable input holds: the bytes of every freeable
  // input whose storage starts there (the file places them).
  std::map<CachingAllocatorSim::Handle, std::vector<InputView>> recorded_views;
  if (placement == InputPlacement::Recorded) {
    recorded_blocks = recorded_input_blocks(r, *recorded, alloc, &recorded_views);
  }
  AllocatorReplay out;
  for (BufId b = 0; b < g.num_inputs; ++b) {
    const bool freeable = g.buffers[b].freeable;
    std::int64_t storage = r.bytes[b];
    if (placement == InputPlacement::Recorded && freeable) {
      if (recorded_blocks[b] == kSharedStorage) storage = 0;  // counted with the input that holds it
      if (auto it = recorded_views.find(recorded_blocks[b]); it != recorded_views.end())
        storage = recorded_storage_bytes(it->second, alloc.block_bytes(it->first), alloc.block_small(it->first));
    }
    if (freeable && r.last_use[b] >= 0) out.freeable_input_bytes = checked_add(out.freeable_input_bytes, storage, "freeable input bytes");
    if (placement == InputPlacement::Recorded) {
      if (!freeable) continue;  // among the recorded blocks, which stay
      if (recorded_blocks[b] == kNotInCache || recorded_blocks[b] == kSharedStorage) continue;
      handle[b] = recorded_blocks[b] != CachingAllocatorSim::kNoBlock ? recorded_blocks[b] : alloc.allocate(r.bytes[b]);
    } else if (!freeable && placement == InputPlacement::HeldApart) {
      held_inputs.allocate(r.bytes[b]);
    } else {
      handle[b] = alloc.allocate(r.bytes[b]);
    }
  }
  const std::int64_t call_cache_before = alloc.allocated_bytes();
  out.allocated_before = checked_add(call_cache_before, held_inputs.allocated_bytes(), "input bytes");
  out.reserved_before = checked_add(alloc.reserved_bytes(), held_inputs.reserved_bytes(), "input segments");
  alloc.reset_peaks();
  auto record = [&](CachingAllocatorSim::Handle h) {
    if (!trace) return;
    EventBlock e;
    if (h >= 0) {
      e.address = alloc.block_address(h);
      e.block_bytes = alloc.block_bytes(h);
    }
    e.allocated_after = alloc.allocated_bytes();
    e.reserved_after = alloc.reserved_bytes();
    trace->push_back(e);
  };
  for (const Line& l : lines) {
    const std::int64_t peak_before = alloc.peak_allocated_bytes();
    switch (l.kind) {
      case ExecutedEvent::Kind::Allocate:
        if (l.buf == kNone) {
          const CachingAllocatorSim::Handle h = alloc.allocate(l.workspace);
          record(h);
          if (trace) trace->push_back(trace->back());
          alloc.release(h);
          if (trace) trace->back().allocated_after = alloc.allocated_bytes();
        } else {
          handle[l.buf] = alloc.allocate(r.bytes[l.buf]);
          record(handle[l.buf]);
        }
        break;
      case ExecutedEvent::Kind::Reuse:
        handle[l.buf] = handle[l.donor];
        record(handle[l.buf]);
        break;
      case ExecutedEvent::Kind::Free: {
        if (l.reused) break;  // a later allocation takes the storage over
        const CachingAllocatorSim::Handle h = handle[l.buf];
        EventBlock released;
        if (trace && h >= 0) released = {alloc.block_address(h), alloc.block_bytes(h), 0, 0};
        alloc.release(h);
        handle[l.buf] = CachingAllocatorSim::kNoBlock;
        if (trace) {
          released.allocated_after = alloc.allocated_bytes();
          released.reserved_after = alloc.reserved_bytes();
          trace->push_back(released);
        }
        break;
      }
    }
    if (alloc.peak_allocated_bytes() > peak_before) out.peak_node = l.at;
  }
  out.peak_over_start = alloc.peak_allocated_bytes() - call_cache_before;
  out.peak_reserved = checked_add(alloc.peak_reserved_bytes(), held_inputs.reserved_bytes(), "reserved bytes");
  return out;
}

}  // namespace

ExecutedMemory estimate_memory_as_executed(const Graph& g, const Order& order, const std::map<std::string, std::int64_t>& observed_bytes,
                                           const PeakMemoryEstimate* scheduler_estimate, const AllocatorState* start_state) {
  const std::int32_t n = g.num_nodes();
  if (static_cast<std::int32_t>(order.size()) != n) throw Error("memory as executed: the order does not hold every node once");
  Replay r{g, order, {}, {}, std::vector<std::int32_t>(n, -1), {}, std::vector<std::uint8_t>(g.buffers.size(), 0),
           std::vector<std::vector<BufId>>(g.buffers.size()), std::vector<BufId>(g.buffers.size(), kNone), storage_roots(g), {}, std::vector<BufId>(g.buffers.size(), kNone), std::vector<std::uint8_t>(g.buffers.size(), 0), {}};
  for (std::int32_t s = 0; s < n; ++s) {
    if (order[s] < 0 || order[s] >= n || r.step_of[order[s]] != -1) throw Error("memory as executed: the order does not hold every node once");
    r.step_of[order[s]] = s;
  }
  r.bytes.reserve(g.buffers.size());
  std::vector<std::uint8_t> observed(g.buffers.size(), 0);
  for (BufId b = 0; b < g.num_buffers(); ++b) {
    auto it = observed_bytes.find(g.buffers[b].name);
    observed[b] = it != observed_bytes.end();
    r.bytes.push_back(observed[b] ? it->second : g.buffers[b].hint_bytes.value_or(g.buffers[b].bytes));
  }
  raise_to_storage(g, r.bytes, observed, r.reach);
  // A view (`view_of`) and what mutates it write through the viewed buffer's storage.
  for (BufId b = 0; b < g.num_buffers(); ++b)
    if (const BufId base = g.buffers[r.real[b]].view_of; base != kNone) r.real[b] = r.real[base];
  for (BufId b : g.outputs) r.graph_output[r.real[b]] = 1;
  r.compute_last_usage();
  r.index_operations();

  std::vector<Line> lines = emit_lines(r);
  if (scheduler_estimate) {
    plan_pool_reuse(r, lines, *scheduler_estimate);
  } else {
    plan_pool_reuse(r, lines, estimate_peak_memory(g, compute_planning_info(g, order), order));
  }

  ExecutedMemory out;
  out.workspaces = std::move(r.workspaces);
  out.input_storage_bytes.assign(r.bytes.begin(), r.bytes.begin() + g.num_inputs);
  for (const Line& l : lines) {
    if (l.kind == ExecutedEvent::Kind::Free && l.reused) continue;  // a later allocation takes the storage over
    if (l.kind == ExecutedEvent::Kind::Reuse)
      ++(r.donated_to[l.donor] == l.buf ? out.inplace_reuses : out.pool_reuses);
    if (l.buf == kNone) {  // a kernel's workspace: allocated and released at its step
      out.events.push_back({ExecutedEvent::Kind::Allocate, kNone, kNone, l.at, l.workspace});
      out.events.push_back({ExecutedEvent::Kind::Free, kNone, kNone, l.at, l.workspace});
      continue;
    }
    out.events.push_back({l.kind, l.buf, l.donor, l.at, r.bytes[l.buf]});
  }
  // The allocated peak from a cache whose held inputs stand apart, the
  // reserved peak from one that holds every input (replay_allocator says why).
  // From a recorded start, one replay from that cache gives both.
  const AllocatorReplay blocks = replay_allocator(r, lines, start_state ? InputPlacement::Recorded : InputPlacement::HeldApart, start_state,
                                                  &out.blocks);
  const AllocatorReplay segments = start_state ? blocks : replay_allocator(r, lines, InputPlacement::Together);
  out.peak_bytes = checked_add(blocks.peak_over_start, blocks.freeable_input_bytes, "peak bytes");
  out.peak_node = blocks.peak_node;
  out.reserved_bytes = segments.peak_reserved;
  out.allocated_before_bytes = segments.allocated_before;
  out.reserved_before_bytes = segments.reserved_before;
  return out;
}

}  // namespace schedlab
