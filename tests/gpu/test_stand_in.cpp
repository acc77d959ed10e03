// Which stand-in kernel the CUDA executor runs for a node, and its size
// (native-cuda/host/stand_in.h): GEMM shapes from flops or operand reads.
#include <catch2/catch.hpp>

#include "core/memory/planning_info.h"
#include "native-cuda/host/stand_in.h"
#include "tests/test_util.h"

using namespace schedlab;
using namespace schedlab::gpu;

TEST_CASE("matmul kernels are recognised by their op name", "[gpu][stand_in]") {
  CHECK(is_matmul_kernel("extern_kernels.mm"));
  CHECK(is_matmul_kernel("extern_kernels.addmm"));
  CHECK(is_matmul_kernel("torch.ops.aten.bmm.default"));
  CHECK(is_matmul_kernel("extern_kernels.baddbmm"));
  CHECK_FALSE(is_matmul_kernel("torch.ops._c10d_functional.all_reduce_.default"));
  CHECK_FALSE(is_matmul_kernel("torch.ops.aten.convolution_backward.default"));
  CHECK_FALSE(is_matmul_kernel("triton_red_fused_sum_0"));  // "mm" must be the op, not a substring
  CHECK_FALSE(is_matmul_kernel(""));
}

TEST_CASE("GEMM shapes from the output shape and flops or operand reads", "[gpu][stand_in]") {
  // mm: [256, 1024] output, 5242880 flops -> K = 10.
  auto s = derive_gemm_shape({256, 1024}, 5242880, {10240, 40960}, 4);
  REQUIRE(s);
  CHECK((s->batch == 1 && s->m == 256 && s->n == 1024 && s->k == 10));
  CHECK(s->derivation == "flops+shape");
  CHECK(s->flops() == 5242880);

  // bmm: the leading dims are the batch.
  s = derive_gemm_shape({12, 64, 128}, 2LL * 12 * 64 * 128 * 32, {}, 2);
  REQUIRE(s);
  CHECK((s->batch == 12 && s->m == 64 && s->n == 128 && s->k == 32));

  // No flops: K from an M×K read and a K×N read (f32 2048×2048 output, two 4 MiB reads).
  s = derive_gemm_shape({2048, 2048}, std::nullopt, {4194304, 4194304}, 4);
  REQUIRE(s);
  CHECK(s->k == 512);
  CHECK(s->derivation == "reads+shape");
  // Non-square: A = 8×3, B = 3×5 (f32), in either read order; a bias read is ignored.
  s = derive_gemm_shape({8, 5}, std::nullopt, {20, 3 * 5 * 4, 8 * 3 * 4}, 4);
  REQUIRE(s);
  CHECK(s->k == 3);

  CHECK_FALSE(derive_gemm_shape({1024}, 2048, {}, 4));            // rank 1: no M×N
  CHECK_FALSE(derive_gemm_shape({8, 5}, std::nullopt, {7, 9}, 4));  // reads fit no M×K, K×N pair
  CHECK_FALSE(derive_gemm_shape({8, 5}, std::nullopt, {160, 160}, 0));  // unknown element size

  const GemmShape sq = square_gemm_for_flops(2LL * 512 * 512 * 512);
  CHECK((sq.m == 512 && sq.n == 512 && sq.k == 512));
  CHECK(sq.derivation == "square");
}

TEST_CASE("every fixture node gets the stand-in its kind asks for", "[gpu][stand_in][fixtures]") {
  for (const char* f : {"inductor/mlp_2.post.json", "inductor/gpt2_2.post.json", "inductor/convnet_2.post.json",
                        "inductor/ddp_1.post.json", "inductor/fsdp_1.post.json"}) {
    SECTION(f) {
      const Graph g = load_graph_file(test::data_path(f));
      const auto info = compute_planning_info(g, g.baseline_order());
      for (NodeId v = 0; v < g.num_nodes(); ++v) {
        const Node& n = g.nodes[v];
        const StandIn s = plan_stand_in(g, info, v);
        INFO(n.name << " " << s.why);
        switch (n.kind) {
          case NodeKind::Collective:
            CHECK(s.kind == StandInKind::Collective);
            if (n.collective->bytes > 0) CHECK(s.collective_bytes == n.collective->bytes);  // in place: below
            CHECK(s.collective_bytes > 0);
            break;
          case NodeKind::Wait:
            CHECK(s.kind == StandInKind::None);
            break;
          case NodeKind::Pointwise:
          case NodeKind::Reduction:
            CHECK(s.kind == StandInKind::Memory);
            CHECK(s.read_bytes + s.write_bytes > 0);
            break;
          default:
            if (is_matmul_kernel(n.kernel)) {
              REQUIRE(s.kind == StandInKind::Gemm);
              // Every fixture matmul has a rank-2 output, so the shape is exact.
              CHECK(s.gemm.derivation != "square");
              if (n.flops) CHECK(s.gemm.flops() == *n.flops);
            } else if (n.kernel.empty()) {
              CHECK(s.kind == StandInKind::None);  // multi_output items
            } else {
              CHECK(s.kind == StandInKind::Memory);
            }
        }
      }
    }
  }
}

TEST_CASE("a multi_output node writes its items' bytes", "[gpu][stand_in]") {
  const Graph g = load_graph_file(test::data_path("inductor/convnet_2.post.json"));
  const auto info = compute_planning_info(g, g.baseline_order());
  int seen = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.nodes[v];
    if (n.outputs.size() != 1 || g.buffers[n.outputs[0]].layout != Layout::MultiOutput) continue;
    ++seen;
    const StandIn s = plan_stand_in(g, info, v);
    CHECK(s.kind == StandInKind::Memory);
    CHECK(s.write_bytes == info.size_alloc[n.outputs[0]]);
    CHECK(s.write_bytes > 0);
  }
  CHECK(seen == 5);
}

TEST_CASE("scratch operand bytes per stand-in", "[gpu][stand_in]") {
  StandIn gemm;
  gemm.kind = StandInKind::Gemm;
  gemm.dtype = "bf16";
  gemm.gemm = {2, 8, 4, 16, "flops+shape"};
  auto b = operand_bytes(gemm, 1);
  CHECK(b.src == 2 * 2 * (8 * 16 + 16 * 4));
  CHECK(b.dst == 2 * 2 * 8 * 4);
  gemm.dtype = "i64";  // runs as an f32 GEMM
  CHECK(operand_bytes(gemm, 1).dst == 4 * 2 * 8 * 4);

  StandIn c;
  c.kind = StandInKind::Collective;
  c.dtype = "bf16";
  c.collective_bytes = 2097152;
  c.op = CollectiveOp::AllGather;
  CHECK(operand_bytes(c, 2).src == 1048576);
  CHECK(operand_bytes(c, 8).src == 262144);
  c.op = CollectiveOp::ReduceScatter;
  CHECK(operand_bytes(c, 2).src == 4194304);
  c.op = CollectiveOp::AllReduce;
  CHECK((operand_bytes(c, 2).src == 2097152 && operand_bytes(c, 2).dst == 2097152));
  StandIn none;
  CHECK((operand_bytes(none, 2).src == 0 && operand_bytes(none, 2).dst == 0));
}

TEST_CASE("an in-place all_reduce_ moves the buffer it mutates", "[gpu][stand_in]") {
  const Graph g = load_graph_file(test::data_path("inductor/ddp_1.post.json"));
  const auto info = compute_planning_info(g, g.baseline_order());
  int seen = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.nodes[v];
    if (n.kind != NodeKind::Collective) continue;
    ++seen;
    REQUIRE(n.collective->bytes == 0);  // the file's payload for an in-place op
    const StandIn s = plan_stand_in(g, info, v);
    CHECK(s.collective_bytes == 16777216);  // the f32 2048×2048 gradient it reduces
    CHECK(s.dtype == "f32");
    CHECK_THAT(s.why, Catch::Contains("in place on buf"));
  }
  CHECK(seen == 6);
}
