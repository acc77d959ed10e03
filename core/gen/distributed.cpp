#include "core/gen/distributed.h"

#include <map>

#include <nlohmann/json.hpp>

#include "core/graph/loader.h"
#include "core/util/error.h"

namespace schedlab {

using nlohmann::json;

namespace {

constexpr std::int64_t kBf16 = 2;

// Builds the schedgraph/1 document node by node; the loader validates it.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name, std::int32_t world_size) {
    doc_ = {{"format", "schedgraph/1"}, {"name", std::move(name)}, {"source", "schedlab gen-dist"}, {"world_size", world_size},
            {"inputs", json::array()}, {"outputs", json::array()}, {"nodes", json::array()}};
  }
  void input(const std::string& name, std::int64_t bytes) {
    doc_["inputs"].push_back({{"name", name}, {"bytes", bytes}});
    bytes_[name] = bytes;
  }
  void output(const std::string& name) { doc_["outputs"].push_back(name); }
  // A matmul: reads a and b, writes out.
  void matmul(const std::string& name, const std::string& a, const std::string& b, const std::string& out, std::int64_t out_bytes,
              std::int64_t flops) {
    json n = node(name, "extern", {a, b}, out, out_bytes);
    n["kernel"] = "extern_kernels.mm";
    n["flops"] = flops;
    push(std::move(n));
  }
  void pointwise(const std::string& name, const std::vector<std::string>& reads, const std::string& out, std::int64_t out_bytes) {
    json n = node(name, "pointwise", reads, out, out_bytes);
    n["group"] = {out_bytes / kBf16, 1};
    push(std::move(n));
  }
  // A collective and its wait; returns the name readers use (the wait's
  // in-place view of the collective's output, as Inductor writes it).
  std::string collective(const std::string& name, const std::string& op, const std::string& in, std::int64_t out_bytes,
                         std::int32_t group_size) {
    const std::string out = name + "_out";
    json c = node(name, "collective", {in}, out, out_bytes);
    c["kernel"] = "torch.ops._c10d_functional." + op + ".default";
    c["collective"] = {{"op", "_c10d_functional." + op + ".default"}, {"group_size", group_size}, {"bytes", out_bytes}};
    if (!last_collective_out_.empty()) c["reads"].push_back({{"name", last_collective_out_}, {"dep", "fake_weak"}, {"bytes", 1}});
    last_collective_out_ = out;
    push(std::move(c));
    const std::string view = name + "_waited";
    json w = {{"name", "wait_" + name},
              {"kind", "wait"},
              {"kernel", "torch.ops._c10d_functional.wait_tensor.default"},
              {"outputs", json::array({{{"name", view}, {"layout", "none"}, {"bytes", 0}, {"mutation_of", out}}})},
              {"reads", json::array({{{"name", out}, {"dep", "star"}, {"bytes", out_bytes}}})}};
    w["writes"] = json::array({{{"name", view}, {"dep", "star"}, {"bytes", 0}}});
    bytes_[view] = out_bytes;
    push(std::move(w));
    return view;
  }
  Graph finish() { return load_graph(doc_.dump()); }

 private:
  json node(const std::string& name, const char* kind, const std::vector<std::string>& reads, const std::string& out, std::int64_t out_bytes) {
    json r = json::array();
    for (const auto& b : reads) r.push_back({{"name", b}, {"dep", "star"}, {"bytes", bytes_.at(b)}});
    bytes_[out] = out_bytes;
    return {{"name", name},
            {"kind", kind},
            {"outputs", json::array({{{"name", out}, {"bytes", out_bytes}, {"dtype", "bf16"}}})},
            {"reads", r},
            {"writes", json::array({{{"name", out}, {"dep", "star"}, {"bytes", out_bytes}}})}};
  }
  void push(json n) { doc_["nodes"].push_back(std::move(n)); }

  json doc_;
  std::map<std::string, std::int64_t> bytes_;
  std::string last_collective_out_;
};

void check_spec(const DistributedGraphSpec& s) {
  if (s.layers < 1 || s.layers > 100000) throw UsageError("gen-dist: --layers must be in 1..100000");
  if (s.hidden < 1 || s.tokens < 1 || s.hidden > (1 << 20) || s.tokens > (1 << 24))
    throw UsageError("gen-dist: --hidden must be in 1..1048576 and --tokens in 1..16777216");
  if (s.world_size < 1 || s.world_size > 65536) throw UsageError("gen-dist: --world-size must be in 1..65536");
  if (s.microbatches < 1 || s.microbatches > 64) throw UsageError("gen-dist: --microbatches must be in 1..64");
}

Graph fsdp(const DistributedGraphSpec& s) {
  const std::int64_t h = s.hidden, f = 4 * s.hidden, t = s.tokens, ws = s.world_size;
  const std::int64_t param = (h * f * 2) * kBf16;  // both MLP matrices, gathered
  const std::int64_t shard = param / ws;
  GraphBuilder b("fsdp_l" + std::to_string(s.layers) + "_h" + std::to_string(h), s.world_size);
  b.input("primals_x", t * h * kBf16);
  for (int i = 1; i <= s.layers; ++i) b.input("primals_w" + std::to_string(i), shard);
  std::string x = "primals_x";
  for (int i = 1; i <= s.layers; ++i) {
    const std::string l = std::to_string(i);
    std::string w = b.collective("ag" + l, "all_gather_into_tensor", "primals_w" + l, param, s.world_size);
    b.matmul("fc1_" + l, x, w, "h" + l, t * f * kBf16, 2 * t * h * f);
    b.pointwise("gelu_" + l, {"h" + l}, "g" + l, t * f * kBf16);
    b.matmul("fc2_" + l, "g" + l, w, "x" + l, t * h * kBf16, 2 * t * f * h);
    x = "x" + l;
  }
  if (!s.backward) {
    b.output(x);
    return b.finish();
  }
  b.input("tangents_1", t * h * kBf16);
  std::string dx = "tangents_1";
  for (int i = s.layers; i >= 1; --i) {
    const std::string l = std::to_string(i);
    const std::string x_in = i == 1 ? "primals_x" : "x" + std::to_string(i - 1);
    std::string w = b.collective("bw_ag" + l, "all_gather_into_tensor", "primals_w" + l, param, s.world_size);
    b.matmul("dfc2_in_" + l, dx, w, "dg" + l, t * f * kBf16, 2 * t * h * f);
    b.matmul("dfc2_w_" + l, "g" + l, dx, "dw2_" + l, h * f * kBf16, 2 * t * h * f);
    b.pointwise("dgelu_" + l, {"dg" + l, "h" + l}, "dh" + l, t * f * kBf16);
    b.matmul("dfc1_in_" + l, "dh" + l, w, "dx" + l, t * h * kBf16, 2 * t * h * f);
    b.matmul("dfc1_w_" + l, x_in, "dh" + l, "dw1_" + l, h * f * kBf16, 2 * t * h * f);
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
  const std::int64_t h = s.hidden, f = 4 * s.hidden / s.world_size, t = s.tokens;
  GraphBuilder b("tp_l" + std::to_string(s.layers) + "_h" + std::to_string(h) + "_mb" + std::to_string(s.microbatches), s.world_size);
  std::vector<std::string> x(s.microbatches);
  for (int m = 0; m < s.microbatches; ++m) {
    x[m] = "primals_x_mb" + std::to_string(m);
    b.input(x[m], t * h * kBf16);
  }
  for (int i = 1; i <= s.layers; ++i) {
    b.input("primals_wa" + std::to_string(i), h * f * kBf16);
    b.input("primals_wb" + std::to_string(i), f * h * kBf16);
  }
  for (int i = 1; i <= s.layers; ++i) {
    for (int m = 0; m < s.microbatches; ++m) {
      const std::string l = std::to_string(i) + "_mb" + std::to_string(m);
      b.matmul("colmm_" + l, x[m], "primals_wa" + std::to_string(i), "a" + l, t * f * kBf16, 2 * t * h * f);
      b.pointwise("gelu_" + l, {"a" + l}, "g" + l, t * f * kBf16);
      b.matmul("rowmm_" + l, "g" + l, "primals_wb" + std::to_string(i), "p" + l, t * h * kBf16, 2 * t * f * h);
      std::string reduced = b.collective("ar" + l, "all_reduce", "p" + l, t * h * kBf16, s.world_size);
      b.pointwise("residual_" + l, {reduced, x[m]}, "x" + l, t * h * kBf16);
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
  throw UsageError("gen-dist: unknown pattern \"" + s + "\" (known: fsdp, tp)");
}

Graph generate_distributed_graph(const DistributedGraphSpec& spec) {
  check_spec(spec);
  return spec.pattern == DistributedPattern::Fsdp ? fsdp(spec) : tensor_parallel(spec);
}

}  // namespace schedlab
