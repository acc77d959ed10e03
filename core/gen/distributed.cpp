#include "core/gen/distributed.h"

#include <vector>

#include "core/gen/budget.h"
#include "core/graph/builder.h"
#include "core/util/error.h"

namespace schedlab {

namespace {

constexpr std::int64_t kBf16 = 2;

// Adds the pattern's nodes to a GraphBuilder by buffer name. Every read is a
// star dep of the buffer's full size; a wait's view reads as the collective's
// output size although its own buffer counts 0 bytes (it aliases).
class DistGraphWriter {
 public:
  DistGraphWriter(std::string name, std::int32_t world_size) {
    Graph& g = b_.graph();
    g.name = std::move(name);
    g.source = "schedlab gen-dist";
    g.world_size = world_size;
  }
  void input(const std::string& name, std::int64_t bytes) { note_bytes(b_.add_input(name, bytes), bytes); }
  void output(const std::string& name) { b_.add_graph_output(b_.require_buffer(name)); }
  // A matmul: reads a and b, writes out.
  void matmul(const std::string& name, const std::string& a, const std::string& b, const std::string& out, std::int64_t out_bytes,
              std::int64_t flops) {
    Node n = node(name, NodeKind::Extern, {a, b});
    n.kernel = "extern_kernels.mm";
    n.flops = flops;
    add(std::move(n), out, out_bytes);
  }
  void pointwise(const std::string& name, const std::vector<std::string>& reads, const std::string& out, std::int64_t out_bytes) {
    Node n = node(name, NodeKind::Pointwise, reads);
    n.has_group = true;
    n.numel = out_bytes / kBf16;
    n.rnumel = 1;
    add(std::move(n), out, out_bytes);
  }
  // A collective and its wait; returns the name readers use (the wait's
  // in-place view of the collective's output, as Inductor writes it).
  std::string collective(const std::string& name, const std::string& op, const std::string& in, std::int64_t out_bytes,
                         std::int32_t group_size) {
    const std::string out = name + "_out";
    Node c = node(name, NodeKind::Collective, {in});
    c.kernel = "torch.ops._c10d_functional." + op + ".default";
    Collective coll;
    coll.op = "_c10d_functional." + op + ".default";
    coll.kind = *parse_collective_op(coll.op);
    coll.group_size = group_size;
    coll.bytes = out_bytes;
    c.collective = std::move(coll);
    if (last_collective_out_ != kNone) c.reads.push_back(star(last_collective_out_, 1, DepKind::FakeWeak));
    last_collective_out_ = add(std::move(c), out, out_bytes);

    const std::string view = name + "_waited";
    Node w;
    w.name = "wait_" + name;
    w.kind = NodeKind::Wait;
    w.kernel = "torch.ops._c10d_functional.wait_tensor.default";
    w.reads.push_back(star(last_collective_out_, out_bytes));
    const NodeId wid = b_.add_node(std::move(w));
    Buffer vb;
    vb.name = view;
    vb.layout = Layout::None;
    vb.mutation_of = last_collective_out_;
    const BufId vid = b_.add_node_output(wid, std::move(vb));
    b_.node(wid).writes.push_back(star(vid, 0));
    note_bytes(vid, out_bytes);
    return view;
  }
  Graph finish() { return b_.finish(); }

 private:
  static Dep star(BufId b, std::int64_t bytes, DepKind kind = DepKind::Star) {
    Dep d;
    d.buf = b;
    d.kind = kind;
    d.bytes = bytes;
    return d;
  }
  void note_bytes(BufId b, std::int64_t bytes) {
    if (read_bytes_.size() <= static_cast<std::size_t>(b)) read_bytes_.resize(b + 1, 0);
    read_bytes_[b] = bytes;
  }
  Node node(const std::string& name, NodeKind kind, const std::vector<std::string>& reads) {
    Node n;
    n.name = name;
    n.kind = kind;
    for (const auto& r : reads) {
      const BufId b = b_.require_buffer(r);
      n.reads.push_back(star(b, read_bytes_[b]));
    }
    return n;
  }
  // Adds the node with its one bf16 output, which it writes whole.
  BufId add(Node n, const std::string& out, std::int64_t out_bytes) {
    const NodeId v = b_.add_node(std::move(n));
    Buffer ob;
    ob.name = out;
    ob.bytes = out_bytes;
    ob.dtype = "bf16";
    const BufId b = b_.add_node_output(v, std::move(ob));
    b_.node(v).writes.push_back(star(b, out_bytes));
    note_bytes(b, out_bytes);
    return b;
  }

  GraphBuilder b_;
  std::vector<std::int64_t> read_bytes_;  // by buffer: the bytes a read of it counts
  BufId last_collective_out_ = kNone;
};

void check_spec(const DistributedGraphSpec& s) {
  if (s.layers < 1 || s.layers > 100000) throw OptionError("gen-dist: --layers must be in 1..100000");
  if (s.hidden < 1 || s.tokens < 1 || s.hidden > (1 << 20) || s.tokens > (1 << 24))
    throw OptionError("gen-dist: --hidden must be in 1..1048576 and --tokens in 1..16777216");
  if (s.world_size < 1 || s.world_size > 65536) throw OptionError("gen-dist: --world-size must be in 1..65536");
  if (s.microbatches < 1 || s.microbatches > 64) throw OptionError("gen-dist: --microbatches must be in 1..64");
}

// Every size and flop count the patterns write, computed once and exactly
// before anything is built: a product past 63 bits is refused naming the
// options, never written wrapped (2·t·h·4h is 2^67 at the largest --hidden
// and --tokens).
struct Sizes {
  std::int64_t h, f, t;
  std::int64_t act_bytes;     // t·h activations
  std::int64_t wide_bytes;    // t·f activations
  std::int64_t weight_bytes;  // one h·f matrix
  std::int64_t param_bytes;   // FSDP: both matrices, gathered
  std::int64_t matmul_flops;  // 2·t·h·f
};

Sizes sizes_of(const DistributedGraphSpec& s) {
  const std::string opts = "--hidden " + std::to_string(s.hidden) + " --tokens " + std::to_string(s.tokens) +
                           (s.pattern == DistributedPattern::TensorParallel ? " --world-size " + std::to_string(s.world_size) : "");
  Sizes z;
  z.h = s.hidden;
  z.t = s.tokens;
  z.f = s.pattern == DistributedPattern::Fsdp ? 4 * s.hidden : 4 * s.hidden / s.world_size;
  z.act_bytes = generated_product({z.t, z.h, kBf16}, "gen-dist", "an activation's bytes", opts);
  z.wide_bytes = generated_product({z.t, z.f, kBf16}, "gen-dist", "an MLP activation's bytes", opts);
  z.weight_bytes = generated_product({z.h, z.f, kBf16}, "gen-dist", "a weight's bytes", opts);
  z.param_bytes = generated_product({z.weight_bytes, 2}, "gen-dist", "a layer's parameter bytes", opts);
  z.matmul_flops = generated_product({2, z.t, z.h, z.f}, "gen-dist", "a matmul's flops", opts);
  // Nodes and reads and writes: FSDP 16 nodes and 38 deps a layer (forward
  // and backward), tensor parallel 6 nodes and 15 deps per layer and
  // micro-batch.
  const std::uint64_t layers = static_cast<std::uint64_t>(s.layers), mb = static_cast<std::uint64_t>(s.microbatches);
  const std::string shape = "--layers " + std::to_string(s.layers) +
                            (s.pattern == DistributedPattern::TensorParallel ? " --microbatches " + std::to_string(s.microbatches) : "");
  if (s.pattern == DistributedPattern::Fsdp) check_generated_size("gen-dist fsdp", shape, 16 * layers, 38 * layers);
  else check_generated_size("gen-dist tp", shape, 6 * layers * mb, 15 * layers * mb);
  return z;
}

Graph fsdp(const DistributedGraphSpec& s) {
  const Sizes z = sizes_of(s);
  const std::int64_t h = z.h, ws = s.world_size;
  const std::int64_t param = z.param_bytes;  // both MLP matrices, gathered
  const std::int64_t shard = param / ws;
  DistGraphWriter b("fsdp_l" + std::to_string(s.layers) + "_h" + std::to_string(h), s.world_size);
  b.input("primals_x", z.act_bytes);
  for (int i = 1; i <= s.layers; ++i) b.input("primals_w" + std::to_string(i), shard);
  if (s.backward) b.input("tangents_1", z.act_bytes);  // inputs come first; the backward reads it
  std::string x = "primals_x";
  for (int i = 1; i <= s.layers; ++i) {
    const std::string l = std::to_string(i);
    std::string w = b.collective("ag" + l, "all_gather_into_tensor", "primals_w" + l, param, s.world_size);
    b.matmul("fc1_" + l, x, w, "h" + l, z.wide_bytes, z.matmul_flops);
    b.pointwise("gelu_" + l, {"h" + l}, "g" + l, z.wide_bytes);
    b.matmul("fc2_" + l, "g" + l, w, "x" + l, z.act_bytes, z.matmul_flops);
    x = "x" + l;
  }
  if (!s.backward) {
    b.output(x);
    return b.finish();
  }
  std::string dx = "tangents_1";
  for (int i = s.layers; i >= 1; --i) {
    const std::string l = std::to_string(i);
    const std::string x_in = i == 1 ? "primals_x" : "x" + std::to_string(i - 1);
    std::string w = b.collective("bw_ag" + l, "all_gather_into_tensor", "primals_w" + l, param, s.world_size);
    b.matmul("dfc2_in_" + l, dx, w, "dg" + l, z.wide_bytes, z.matmul_flops);
    b.matmul("dfc2_w_" + l, "g" + l, dx, "dw2_" + l, z.weight_bytes, z.matmul_flops);
    b.pointwise("dgelu_" + l, {"dg" + l, "h" + l}, "dh" + l, z.wide_bytes);
    b.matmul("dfc1_in_" + l, "dh" + l, w, "dx" + l, z.act_bytes, z.matmul_flops);
    b.matmul("dfc1_w_" + l, x_in, "dh" + l, "dw1_" + l, z.weight_bytes, z.matmul_flops);
    b.pointwise("gradcat_" + l, {"dw1_" + l, "dw2_" + l}, "grad" + l, param);
    std::string g = b.collective("rs" + l, "reduce_scatter_tensor", "grad" + l, shard, s.world_size);
    b.pointwise("grad_out_" + l, {g}, "sharded_grad" + l, shard);
    b.output("sharded_grad" + l);
    dx = "dx" + l;
  }
  b.output(dx);
  return b.finish();
}

Graph tensor_parallel(const DistributedGraphSpec& s) {
  const Sizes z = sizes_of(s);
  const std::int64_t h = z.h;
  DistGraphWriter b("tp_l" + std::to_string(s.layers) + "_h" + std::to_string(h) + "_mb" + std::to_string(s.microbatches), s.world_size);
  std::vector<std::string> x(s.microbatches);
  for (int m = 0; m < s.microbatches; ++m) {
    x[m] = "primals_x_mb" + std::to_string(m);
    b.input(x[m], z.act_bytes);
  }
  for (int i = 1; i <= s.layers; ++i) {
    b.input("primals_wa" + std::to_string(i), z.weight_bytes);
    b.input("primals_wb" + std::to_string(i), z.weight_bytes);
  }
  for (int i = 1; i <= s.layers; ++i) {
    for (int m = 0; m < s.microbatches; ++m) {
      const std::string l = std::to_string(i) + "_mb" + std::to_string(m);
      b.matmul("colmm_" + l, x[m], "primals_wa" + std::to_string(i), "a" + l, z.wide_bytes, z.matmul_flops);
      b.pointwise("gelu_" + l, {"a" + l}, "g" + l, z.wide_bytes);
      b.matmul("rowmm_" + l, "g" + l, "primals_wb" + std::to_string(i), "p" + l, z.act_bytes, z.matmul_flops);
      std::string reduced = b.collective("ar" + l, "all_reduce", "p" + l, z.act_bytes, s.world_size);
      b.pointwise("residual_" + l, {reduced, x[m]}, "x" + l, z.act_bytes);
      x[m] = "x" + l;
    }
  }
  for (const auto& out : x) b.output(out);
  return b.finish();
}

}  // namespace

DistributedPattern parse_distributed_pattern(const std::string& s) {
  if (s == "fsdp") return DistributedPattern::Fsdp;
  if (s == "tp") return DistributedPattern::TensorParallel;
  throw OptionError("gen-dist: unknown pattern \"" + s + "\" (known: fsdp, tp)");
}

Graph generate_distributed_graph(const DistributedGraphSpec& spec) {
  check_spec(spec);
  return spec.pattern == DistributedPattern::Fsdp ? fsdp(spec) : tensor_parallel(spec);
}

}  // namespace schedlab
