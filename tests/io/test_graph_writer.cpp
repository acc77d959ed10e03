// core/io's graph writer keeps every field the reader understands: read ->
// write -> read gives the same Graph, field by field, for a graph that uses
// every field of schedgraph/1 (docs/schedgraph-1.md), additive ones included.
// `schedlab fuse -o` writes its POST file through the same writer.
#include <catch2/catch.hpp>

#include <string>

#include "core/io/graph_reader.h"
#include "core/io/graph_writer.h"

using namespace schedlab;

namespace {

// Every field the reader reads, each with a value other than its default.
const std::string kEveryField = R"({
  "format": "schedgraph/1", "name": "every_field", "source": "tests/io", "world_size": 4, "device": "cpu",
  "inputs": [{"name": "primals_1", "bytes": 64, "freeable": true}, {"name": "x", "bytes": 32, "freeable": false}],
  "outputs": ["buf2", "x"],
  "nodes": [
    {"name": "op0", "kind": "reduction", "members": ["op0a", "op0b"], "kernel": "cpp_fused_sum_0",
     "group": [256, 16], "group_expr": ["16*s0", "s1"], "group_dims": [[4, 64], [16]], "foreach": 3,
     "flops": 4096, "runtime_us": 1.25, "reduction_types": ["sum", "welford_reduce"],
     "scatter_index": {"updates": 256, "rows": 16, "max_row_updates": 40, "mean_run": 2.5, "source": "observed"},
     "outputs": [{"name": "buf0", "bytes": 0, "layout": "fixed", "dtype": "f32", "shape": [4, 64],
                  "aliases": ["buf0_view"], "size_hint": true, "hint_bytes": 1024, "hint_source": "observed"}],
     "reads": [{"name": "x", "dep": "memory", "index": "c0 + 64*c1", "size": [4, 64], "size_expr": ["s0", "64"], "bytes": 32},
               {"name": "primals_1", "dep": "fake_weak"}],
     "writes": [{"name": "buf0", "dep": "memory", "index": "c0", "size": [256], "bytes": 1024}]},
    {"name": "op1", "kind": "extern", "members": ["op1"], "workspace_bytes": 2048, "workspace_source": "observed",
     "convolution": {"input": [2, 16, 5, 5], "weight": [16, 4, 3, 3], "output": [2, 8, 10, 10], "stride": [2, 2], "padding": [1, 1],
                     "dilation": [1, 1], "output_padding": [1, 1], "groups": 2, "transposed": true,
                     "memory_format": "channels_last", "output_mask": [true, true, false]},
     "attention": {"query": [2, 4, 7, 16], "key": [2, 4, 5, 16], "value": [2, 4, 5, 8], "causal": true, "bias": true, "dropout_p": 0.1},
     "outputs": [{"name": "buf1", "bytes": 96, "layout": "multi_output"},
                 {"name": "buf0_upd", "bytes": 1024, "mutation_of": "buf0"}],
     "reads": [{"name": "buf0", "dep": "star", "bytes": 1024}, {"name": "x", "dep": "weak"}]},
    {"name": "op2", "kind": "collective", "members": ["op2"],
     "collective": {"op": "_c10d_functional.all_gather_into_tensor.default", "group_size": 2, "bytes": 192},
     "outputs": [{"name": "buf2", "bytes": 192, "layout": "none"}],
     "reads": [{"name": "buf1", "dep": "star", "bytes": 96}]}
  ],
  "operations": [
    {"name": "op0a", "outputs": ["buf0"], "reads": ["x"]},
    {"name": "op0b", "outputs": [], "reads": ["x", "primals_1"]},
    {"name": "op1", "outputs": ["buf1", "buf0_upd"], "reads": ["buf0"]},
    {"name": "op2", "outputs": ["buf2"], "reads": ["buf1"]}
  ]
})";

void check_same_dep(const Dep& a, const Dep& b) {
  CHECK(a.buf == b.buf);
  CHECK(a.kind == b.kind);
  CHECK(a.bytes == b.bytes);
  CHECK(a.index == b.index);
  CHECK(a.size == b.size);
  CHECK(a.size_expr == b.size_expr);
}

void check_same_deps(const std::vector<Dep>& a, const std::vector<Dep>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) check_same_dep(a[i], b[i]);
}

void check_same_graph(const Graph& a, const Graph& b) {
  CHECK(a.name == b.name);
  CHECK(a.source == b.source);
  CHECK(a.world_size == b.world_size);
  CHECK(a.device == b.device);
  CHECK(a.num_inputs == b.num_inputs);
  CHECK(a.outputs == b.outputs);
  REQUIRE(a.buffers.size() == b.buffers.size());
  for (std::size_t i = 0; i < a.buffers.size(); ++i) {
    const Buffer &x = a.buffers[i], &y = b.buffers[i];
    INFO("buffer " << x.name);
    CHECK(x.name == y.name);
    CHECK(x.bytes == y.bytes);
    CHECK(x.layout == y.layout);
    CHECK(x.is_input == y.is_input);
    CHECK(x.freeable == y.freeable);
    CHECK(x.donated == y.donated);
    CHECK(x.producer == y.producer);
    CHECK(x.mutation_of == y.mutation_of);
    CHECK(x.dtype == y.dtype);
    CHECK(x.shape == y.shape);
    CHECK(x.aliases == y.aliases);
    CHECK(x.hint_bytes == y.hint_bytes);
  }
  REQUIRE(a.nodes.size() == b.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const Node &x = a.nodes[i], &y = b.nodes[i];
    INFO("node " << x.name);
    CHECK(x.name == y.name);
    CHECK(x.kind == y.kind);
    CHECK(x.members == y.members);
    CHECK(x.kernel == y.kernel);
    CHECK(x.has_group == y.has_group);
    CHECK(x.numel == y.numel);
    CHECK(x.rnumel == y.rnumel);
    CHECK(x.numel_expr == y.numel_expr);
    CHECK(x.rnumel_expr == y.rnumel_expr);
    CHECK(x.loop_sizes == y.loop_sizes);
    CHECK(x.reduction_sizes == y.reduction_sizes);
    CHECK(x.foreach == y.foreach);
    CHECK(x.flops == y.flops);
    CHECK(x.runtime_us == y.runtime_us);
    CHECK(x.workspace_bytes == y.workspace_bytes);
    CHECK(x.convolution == y.convolution);
    CHECK(x.attention == y.attention);
    CHECK(x.scatter_index == y.scatter_index);
    CHECK(x.reduction_types == y.reduction_types);
    CHECK(x.outputs == y.outputs);
    check_same_deps(x.reads, y.reads);
    check_same_deps(x.writes, y.writes);
    REQUIRE(x.collective.has_value() == y.collective.has_value());
    if (x.collective) {
      CHECK(x.collective->op == y.collective->op);
      CHECK(x.collective->kind == y.collective->kind);
      CHECK(x.collective->group_size == y.collective->group_size);
      CHECK(x.collective->bytes == y.collective->bytes);
    }
  }
  REQUIRE(a.operations.size() == b.operations.size());
  for (std::size_t i = 0; i < a.operations.size(); ++i) {
    CHECK(a.operations[i].name == b.operations[i].name);
    CHECK(a.operations[i].outputs == b.operations[i].outputs);
    CHECK(a.operations[i].reads == b.operations[i].reads);
  }
}

}  // namespace

TEST_CASE("read -> write -> read keeps every field of a graph that uses them all", "[io][writer]") {
  const Graph g = load_graph(kEveryField);
  // The fixture really sets what the additive fields carry (not their defaults).
  REQUIRE(g.device == "cpu");
  REQUIRE(g.nodes[0].numel_expr == "16*s0");
  REQUIRE(g.nodes[0].reduction_sizes == std::vector<std::int64_t>{16});
  REQUIRE(g.nodes[0].foreach == 3);
  REQUIRE(g.nodes[0].reads[0].size_expr.size() == 2);
  REQUIRE(g.buffers[g.find_buffer("buf0")].hint_bytes == 1024);
  REQUIRE(g.nodes[1].workspace_bytes == 2048);
  REQUIRE(g.nodes[1].convolution);
  REQUIRE(g.nodes[1].convolution->transposed);
  REQUIRE(g.nodes[1].convolution->output_padding == std::vector<std::int64_t>{1, 1});
  REQUIRE(g.nodes[1].convolution->memory_format == MemoryFormat::ChannelsLast);
  REQUIRE(g.nodes[1].convolution->output_mask == std::array<bool, 3>{true, true, false});
  REQUIRE(g.nodes[1].attention);
  REQUIRE(g.nodes[1].attention->causal);
  REQUIRE(g.nodes[1].attention->bias);
  REQUIRE(g.nodes[1].attention->dropout_p == 0.1);
  REQUIRE(g.nodes[1].attention->value == std::vector<std::int64_t>{2, 4, 5, 8});
  REQUIRE(g.nodes[0].reduction_types == std::vector<std::string>{"sum", "welford_reduce"});
  REQUIRE(g.nodes[0].scatter_index == ScatterIndex{256, 16, 40, 2.5});
  REQUIRE(g.buffers[g.find_buffer("buf0_upd")].mutation_of == g.find_buffer("buf0"));
  const std::string text = write_graph_json(g);
  const Graph back = load_graph(text);
  check_same_graph(g, back);
  CHECK(write_graph_json(back) == text);
}

TEST_CASE("a graph without the optional fields writes none of them", "[io][writer]") {
  const Graph g = load_graph(R"({"format": "schedgraph/1", "inputs": [], "outputs": ["b"],
    "nodes": [{"name": "n", "kind": "pointwise", "outputs": [{"name": "b", "bytes": 4}]}]})");
  const std::string text = write_graph_json(g);
  for (const char* key : {"device", "group_expr", "group_dims", "foreach", "size_hint", "hint_bytes", "size_expr", "workspace_bytes", "workspace_source", "convolution",
                          "attention", "reduction_types", "scatter_index"}) {
    INFO(key);
    CHECK(text.find(std::string("\"") + key + "\"") == std::string::npos);
  }
  check_same_graph(g, load_graph(text));
}

TEST_CASE("scatter_index: a bad observation is an error naming its node and field", "[io][errors]") {
  auto load = [](const std::string& spread) {
    return load_graph(R"({"format": "schedgraph/1", "inputs": [], "outputs": ["b"],
      "nodes": [{"name": "n", "kind": "pointwise", "scatter_index": )" + spread + R"(, "outputs": [{"name": "b", "bytes": 4}]}]})");
  };
  const std::string ok = R"({"updates": 10, "rows": 4, "max_row_updates": 5, "mean_run": 1.5, "source": "observed"})";
  CHECK(load(ok).nodes[0].scatter_index == ScatterIndex{10, 4, 5, 1.5});
  // Counts whose product passes 2^63 (rows times the hottest row's) are compared without overflowing.
  const std::int64_t big = std::int64_t{1} << 62;
  const std::string huge = R"({"updates": )" + std::to_string(big) + R"(, "rows": )" + std::to_string(big) +
                           R"(, "max_row_updates": )" + std::to_string(big) + R"(, "mean_run": 1, "source": "observed"})";
  CHECK(load(huge).nodes[0].scatter_index == ScatterIndex{big, big, big, 1});
  CHECK_THROWS_WITH(load("[]"), Catch::Contains("scatter_index") && Catch::Contains("expected an object"));
  CHECK_THROWS_WITH(load(R"({"updates": 10, "rows": 4, "max_row_updates": 5, "mean_run": 1.5})"),
                    Catch::Contains("scatter_index") && Catch::Contains("\"source\""));
  CHECK_THROWS_WITH(load(R"({"updates": 10, "rows": 4, "max_row_updates": 5, "mean_run": 1.5, "source": "guessed"})"),
                    Catch::Contains("scatter_index.source") && Catch::Contains("\"guessed\""));
  CHECK_THROWS_WITH(load(R"({"updates": -1, "rows": 4, "max_row_updates": 5, "mean_run": 1.5, "source": "observed"})"),
                    Catch::Contains("scatter_index.updates") && Catch::Contains("below the minimum 0"));
  CHECK_THROWS_WITH(load(R"({"updates": 10, "rows": 11, "max_row_updates": 5, "mean_run": 1.5, "source": "observed"})"),
                    Catch::Contains("\"n\": scatter_index.rows") && Catch::Contains("more than the updates"));
  CHECK_THROWS_WITH(load(R"({"updates": 10, "rows": 4, "max_row_updates": 11, "mean_run": 1.5, "source": "observed"})"),
                    Catch::Contains("scatter_index.max_row_updates"));
  CHECK_THROWS_WITH(load(R"({"updates": 10, "rows": 4, "max_row_updates": 2, "mean_run": 1.5, "source": "observed"})"),
                    Catch::Contains("scatter_index.max_row_updates") && Catch::Contains("less than the updates"));
  CHECK_THROWS_WITH(load(R"({"updates": 10, "rows": 4, "max_row_updates": 5, "mean_run": 0.5, "source": "observed"})"),
                    Catch::Contains("scatter_index.mean_run"));
  CHECK_THROWS_WITH(load(R"({"updates": 10, "rows": 4, "max_row_updates": 5, "mean_run": "long", "source": "observed"})"),
                    Catch::Contains("scatter_index.mean_run") && Catch::Contains("expected a number"));
}
