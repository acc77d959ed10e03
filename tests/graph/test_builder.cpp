// GraphBuilder and validate(): graphs assembled in code pass the same rules
// as loaded ones, and a fused graph owns its id space.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "core/fusion/fusion.h"
#include "core/gen/distributed.h"
#include "core/graph/builder.h"
#include "core/io/graph_reader.h"
#include "core/io/graph_writer.h"
#include "core/util/error.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

using schedlab::test::error_of;

// Field-by-field identity of the tables that passes read by id.
void check_same_tables(const Graph& a, const Graph& b) {
  REQUIRE(a.num_buffers() == b.num_buffers());
  REQUIRE(a.num_nodes() == b.num_nodes());
  CHECK(a.num_inputs == b.num_inputs);
  CHECK(a.outputs == b.outputs);
  for (BufId i = 0; i < a.num_buffers(); ++i) {
    CHECK(a.buffers[i].name == b.buffers[i].name);
    CHECK(a.buffers[i].producer == b.buffers[i].producer);
    CHECK(a.buffers[i].mutation_of == b.buffers[i].mutation_of);
    CHECK(a.buffers[i].bytes == b.buffers[i].bytes);
    CHECK(a.buffers[i].freeable == b.buffers[i].freeable);
  }
  for (NodeId v = 0; v < a.num_nodes(); ++v) {
    CHECK(a.nodes[v].name == b.nodes[v].name);
    CHECK(a.nodes[v].outputs == b.nodes[v].outputs);
    REQUIRE(a.nodes[v].reads.size() == b.nodes[v].reads.size());
    for (std::size_t j = 0; j < a.nodes[v].reads.size(); ++j) CHECK(same_dep_value(a.nodes[v].reads[j], b.nodes[v].reads[j]));
  }
  REQUIRE(a.operations.size() == b.operations.size());
  for (std::size_t i = 0; i < a.operations.size(); ++i) CHECK(a.operations[i].reads == b.operations[i].reads);
}

}  // namespace

TEST_CASE("the builder numbers inputs first, then node outputs, and finds names", "[graph][builder]") {
  GraphBuilder b;
  BufId x = b.add_input("x", 16);
  BufId w = b.add_input("primals_w", 8);
  Node n;
  n.name = "op0";
  NodeId v = b.add_node(n);
  Buffer out;
  out.name = "y";
  out.bytes = 16;
  BufId y = b.add_node_output(v, out);
  b.node(v).reads.push_back(Dep{x, DepKind::Star, 16, {}, {}, {}});
  b.add_graph_output(y);
  Graph g = b.finish();
  CHECK(x == 0);
  CHECK(w == 1);
  CHECK(y == 2);
  CHECK(g.buffers[x].freeable);
  CHECK_FALSE(g.buffers[w].freeable);  // the format's default for parameters
  CHECK(g.find_buffer("y") == y);
  CHECK(g.find_node("op0") == v);
  CHECK(g.buffers[y].producer == v);
}

TEST_CASE("the builder and validate refuse with the loader's places", "[graph][builder][errors]") {
  CHECK(error_of([] {
          GraphBuilder b;
          b.add_input("x", 1);
          b.add_input("x", 1);
        }) == "inputs[1] \"x\": name: duplicate buffer or input name \"x\"");
  CHECK(error_of([] {
          GraphBuilder b;
          Node n;
          n.name = "a";
          NodeId v = b.add_node(n);
          Buffer o;
          o.name = "a_out";
          b.add_node_output(v, o);
          b.add_node_output(v, o);
        }) == "nodes[0] \"a\": outputs[1].name: duplicate buffer or input name \"a_out\"");
  CHECK(error_of([] {
          GraphBuilder b;
          Node n;
          n.name = "a";
          n.kind = NodeKind::Collective;
          b.add_node(n);
          b.finish();
        }) == "nodes[0] \"a\": a collective node needs a \"collective\" object");
  CHECK(error_of([] {
          GraphBuilder b;
          Node n;
          n.name = "a";
          n.runtime_us = 1.0 / 0.0;
          b.add_node(n);
          b.finish();
        }) == "nodes[0] \"a\": runtime_us: expected a finite number >= 0");
  CHECK(error_of([] {
          GraphBuilder b;
          b.require_buffer("nope");
        }) == "unknown buffer \"nope\"");
}

TEST_CASE("validate indexes a graph filled field by field and checks its tables", "[graph][builder]") {
  Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":4}],"outputs":["b"],"nodes":[
    {"name":"a","kind":"pointwise","outputs":[{"name":"b","bytes":4}],"reads":[{"name":"x"}]}]})");
  Graph copy;
  copy.buffers = g.buffers;
  copy.nodes = g.nodes;
  copy.num_inputs = g.num_inputs;
  copy.outputs = g.outputs;
  validate(copy);
  CHECK(copy.find_buffer("b") == 1);
  CHECK(copy.find_node("a") == 0);
  copy.nodes[0].reads[0].buf = 7;
  copy.buffer_index.clear();
  CHECK_THROWS_WITH(validate(copy), Catch::Contains("nodes[0] \"a\": reads[0]: buffer id out of range"));
}

TEST_CASE("validate checks a convolution set in code by the loader's rules", "[graph][builder][errors]") {
  Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":4}],"outputs":["b"],"nodes":[
    {"name":"a","kind":"extern","outputs":[{"name":"b","bytes":4}],"reads":[{"name":"x"}]}]})");
  ConvolutionGeometry c;
  c.input = {1, 3, 8};
  c.weight = {6, 3, 3};
  c.output = {1, 6, 6};
  c.stride = c.dilation = {1};
  c.padding = c.output_padding = {0};
  g.nodes[0].convolution = c;
  validate(g);
  g.nodes[0].convolution->output_padding.clear();  // the loader fills it; code must too
  CHECK_THROWS_WITH(validate(g), "nodes[0] \"a\": convolution.output_padding: expected 1 entry (one per spatial dim), got 0");
  g.nodes[0].convolution = c;
  g.nodes[0].convolution->groups = 0;
  CHECK_THROWS_WITH(validate(g), "nodes[0] \"a\": convolution.groups: value 0 is below the minimum 1");
  g.nodes[0].convolution->groups = 3;  // 3 input channels need weight[1] = 1
  CHECK_THROWS_WITH(validate(g), "nodes[0] \"a\": convolution.input[1]: 3 channels, expected weight[1] * groups = 3 * 3 = 9");
}

TEST_CASE("validate checks an attention call and reduction types set in code by the loader's rules", "[graph][builder][errors]") {
  Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":4}],"outputs":["b"],"nodes":[
    {"name":"a","kind":"extern","outputs":[{"name":"b","bytes":4}],"reads":[{"name":"x"}]}]})");
  const AttentionCall a{{2, 4, 16, 8}, {2, 4, 32, 8}, {2, 4, 32, 8}, false, true, 0.0};
  g.nodes[0].attention = a;
  g.nodes[0].reduction_types = {"max", "sum"};
  validate(g);
  g.nodes[0].attention->key[2] = -1;  // the loader refuses negatives; code may set them
  CHECK_THROWS_WITH(validate(g), "nodes[0] \"a\": attention.key[2]: value -1 is below the minimum 1");
  g.nodes[0].attention = a;
  g.nodes[0].attention->dropout_p = std::nan("");
  CHECK_THROWS_WITH(validate(g), "nodes[0] \"a\": attention.dropout_p: expected a probability in [0, 1], got nan");
  g.nodes[0].attention = a;
  g.nodes[0].reduction_types = {"sum", "sum"};
  CHECK_THROWS_WITH(validate(g), "nodes[0] \"a\": reduction_types[1]: \"sum\" repeats the entry before it (expected distinct names)");
}

TEST_CASE("a fused graph owns its ids: writing and reloading it gives the same tables", "[graph][builder][fusion]") {
  for (const char* c : {"inductor/gpt2_2.pre.json", "exported/fsdp_train_1_bwd.pre.json"}) {
    INFO(c);
    Graph pre = load_graph_file(test::data_path(c));
    FrontEndResult fe = run_front_end(pre, true, FusionOptions{});
    Graph post = build_fused_graph(pre, fe.deps, fe.fusion.groups);
    check_same_tables(post, load_graph(write_graph_json(post)));
  }
}

TEST_CASE("gen-dist graphs come out of the builder as the loader would read them", "[graph][builder]") {
  for (auto pattern : {DistributedPattern::Fsdp, DistributedPattern::TensorParallel}) {
    DistributedGraphSpec spec;
    spec.pattern = pattern;
    spec.layers = 3;
    Graph g = generate_distributed_graph(spec);
    check_same_tables(g, load_graph(write_graph_json(g)));
    CHECK(g.buffers[g.num_inputs - 1].name == (pattern == DistributedPattern::Fsdp ? "tangents_1" : "primals_wb3"));
  }
}
