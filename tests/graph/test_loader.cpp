// The loader accepts every documented field and refuses every malformed
// input with one line that names the place.
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "core/io/graph_reader.h"
#include "core/io/graph_writer.h"
#include "core/util/error.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

// A small valid graph; `patch` edits its text to make it malformed.
const std::string kValid = R"({
  "format": "schedgraph/1", "name": "tiny", "world_size": 2,
  "inputs": [{"name": "primals_1", "bytes": 64}, {"name": "x", "bytes": 32}],
  "outputs": ["buf1"],
  "nodes": [
    {"name": "op0", "kind": "pointwise", "group": [8, 1],
     "outputs": [{"name": "buf0", "bytes": 32, "dtype": "f32", "shape": [8]}],
     "reads": [{"name": "x", "dep": "memory", "index": "c0", "size": [8], "bytes": 32}],
     "writes": [{"name": "buf0", "bytes": 32}]},
    {"name": "op1", "kind": "collective",
     "collective": {"op": "_c10d_functional.all_reduce_.default", "bytes": 32},
     "outputs": [{"name": "buf1", "bytes": 32}],
     "reads": [{"name": "buf0", "dep": "star", "bytes": 32}, {"name": "primals_1", "dep": "weak"}]}
  ]
})";

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  s.replace(pos, from.size(), to);
  return s;
}

std::string patched(const std::string& from, const std::string& to) { return replaced(kValid, from, to); }

// A valid convolution (2-d, stride 2, 2 groups), edited by `from` -> `to`
// and set on op0 (the loader and validate() check the geometry whatever the kind).
const std::string kConvolution =
    R"({"input": [2, 8, 10, 10], "weight": [16, 4, 3, 3], "output": [2, 16, 5, 5], "stride": [2, 2], "padding": [1, 1], )"
    R"("dilation": [1, 1], "groups": 2, "transposed": false})";

std::string on_op0(const std::string& convolution) {
  return patched("\"group\": [8, 1]", "\"group\": [8, 1], \"convolution\": " + convolution);
}

std::string with_convolution(const std::string& from = "", const std::string& to = "") {
  return on_op0(from.empty() ? kConvolution : replaced(kConvolution, from, to));
}

// The transposed convolution back from kConvolution's output: [2, 16, 5, 5]
// -> [2, 8, 10, 10] with output padding 1; `output` replaces its output and
// output padding.
const std::string kTransposedOutput = "\"output\": [2, 8, 10, 10], \"output_padding\": [1, 1]";

std::string transposed(const std::string& output = kTransposedOutput) {
  std::string conv = replaced(kConvolution, "\"input\": [2, 8, 10, 10]", "\"input\": [2, 16, 5, 5]");
  conv = replaced(conv, "\"output\": [2, 16, 5, 5]", output);
  return on_op0(replaced(conv, "\"transposed\": false", "\"transposed\": true"));
}

// A valid attention record (GPT-2's causal self-attention with dropout),
// edited by `from` -> `to` and set on op0 (validate() checks it whatever the kind).
const std::string kAttention =
    R"({"query": [8, 12, 512, 64], "key": [8, 12, 512, 64], "value": [8, 12, 512, 64], "causal": true, "bias": false, "dropout_p": 0.1})";

std::string with_attention(const std::string& from = "", const std::string& to = "") {
  return patched("\"group\": [8, 1]", "\"group\": [8, 1], \"attention\": " + (from.empty() ? kAttention : replaced(kAttention, from, to)));
}

std::string with_reduction_types(const std::string& types) {
  return patched("\"group\": [8, 1]", "\"group\": [8, 1], \"reduction_types\": " + types);
}

std::string load_error(const std::string& text) {
  try {
    load_graph(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

TEST_CASE("a valid graph loads into dense ids with defaults applied", "[graph][loader]") {
  Graph g = load_graph(kValid);
  CHECK(g.name == "tiny");
  CHECK(g.world_size == 2);
  REQUIRE(g.num_inputs == 2);
  REQUIRE(g.num_buffers() == 4);
  CHECK_FALSE(g.buffers[0].freeable);  // primals_ prefix
  CHECK(g.buffers[1].freeable);        // any other input
  CHECK(g.buffers[g.find_buffer("buf0")].producer == 0);
  const Node& op1 = g.nodes[1];
  REQUIRE(op1.collective);
  CHECK(op1.collective->kind == CollectiveOp::AllReduce);
  CHECK(op1.collective->group_size == 2);  // defaults to world_size
  CHECK(op1.reads[1].kind == DepKind::Weak);
  CHECK(op1.writes.empty());
  CHECK(g.nodes[0].has_group);
  CHECK(g.nodes[0].numel == 8);
  CHECK(g.is_pre_fusion());
}

TEST_CASE("writing a graph and loading it back is lossless", "[graph][writer]") {
  Graph g = load_graph(kValid);
  Graph back = load_graph(write_graph_json(g));
  CHECK(write_graph_json(back) == write_graph_json(g));
  CHECK(back.nodes[1].reads[1].kind == DepKind::Weak);
  CHECK(back.buffers[1].freeable == g.buffers[1].freeable);
}

TEST_CASE("a convolution's geometry loads: defaults, transposed, 1-d and 3-d, unknown keys ignored", "[graph][loader]") {
  const Graph g = load_graph(with_convolution());
  REQUIRE(g.nodes[0].convolution);
  const ConvolutionGeometry& c = *g.nodes[0].convolution;
  CHECK(c.input == std::vector<std::int64_t>{2, 8, 10, 10});
  CHECK(c.weight == std::vector<std::int64_t>{16, 4, 3, 3});
  CHECK(c.output == std::vector<std::int64_t>{2, 16, 5, 5});
  CHECK(c.stride == std::vector<std::int64_t>{2, 2});
  CHECK(c.output_padding == std::vector<std::int64_t>{0, 0});  // optional, zeros
  CHECK(c.groups == 2);
  CHECK_FALSE(c.transposed);
  CHECK_FALSE(c.memory_format);
  CHECK_FALSE(c.output_mask);
  CHECK_FALSE(g.nodes[1].convolution);

  const Graph t = load_graph(transposed());
  REQUIRE(t.nodes[0].convolution);
  CHECK(t.nodes[0].convolution->transposed);
  CHECK(t.nodes[0].convolution->output_padding == std::vector<std::int64_t>{1, 1});

  const Graph b = load_graph(with_convolution("\"groups\": 2", "\"groups\": 2, \"memory_format\": \"channels_last\", \"output_mask\": [true, false, true]"));
  CHECK(b.nodes[0].convolution->memory_format == MemoryFormat::ChannelsLast);
  CHECK(b.nodes[0].convolution->output_mask == std::array<bool, 3>{true, false, true});

  // 1-d, and 3-d depthwise with dilation 2 (kernel 5 over 8 + 2 padding: 6)
  CHECK_NOTHROW(load_graph(on_op0(R"({"input": [2, 8, 10], "weight": [16, 4, 3], "output": [2, 16, 5], "stride": [2], "padding": [1],
                                     "dilation": [1], "groups": 2, "transposed": false})")));
  CHECK_NOTHROW(load_graph(on_op0(R"({"input": [1, 4, 8, 8, 8], "weight": [4, 1, 3, 3, 3], "output": [1, 4, 6, 6, 6], "stride": [1, 1, 1],
                                     "padding": [1, 1, 1], "dilation": [2, 2, 2], "groups": 4, "transposed": false,
                                     "memory_format": "contiguous"})")));
  // a key this reader does not know is ignored, as everywhere in the format
  const Graph u = load_graph(with_convolution("\"groups\": 2", "\"groups\": 2, \"algorithm\": {\"cudnn\": 3}"));
  CHECK(u.nodes[0].convolution == c);
}

TEST_CASE("an attention record and reduction types load; older graphs lack them", "[graph][loader]") {
  const Graph g = load_graph(with_attention());
  REQUIRE(g.nodes[0].attention);
  const AttentionCall& a = *g.nodes[0].attention;
  CHECK(a.query == std::vector<std::int64_t>{8, 12, 512, 64});
  CHECK(a.key == a.query);
  CHECK(a.value == a.query);
  CHECK(a.causal);
  CHECK_FALSE(a.bias);
  CHECK(a.dropout_p == 0.1);
  CHECK_FALSE(g.nodes[1].attention);
  // 3-d (no batch), an integer probability, a bias, keys longer than queries
  const Graph b = load_graph(with_attention(R"("query": [8, 12, 512, 64], "key": [8, 12, 512, 64], "value": [8, 12, 512, 64], "causal": true, "bias": false, "dropout_p": 0.1)",
                                            R"("query": [12, 1, 64], "key": [12, 300, 64], "value": [12, 300, 32], "causal": false, "bias": true, "dropout_p": 1)"));
  CHECK(b.nodes[0].attention->key == std::vector<std::int64_t>{12, 300, 64});
  CHECK(b.nodes[0].attention->bias);
  CHECK(b.nodes[0].attention->dropout_p == 1.0);
  // a key this reader does not know is ignored, as everywhere in the format
  CHECK(load_graph(with_attention("\"bias\": false", "\"bias\": false, \"scale\": 0.125")).nodes[0].attention == a);

  const Graph r = load_graph(with_reduction_types(R"(["max", "online_softmax_reduce", "sum", "welford_reduce"])"));
  CHECK(r.nodes[0].reduction_types == std::vector<std::string>{"max", "online_softmax_reduce", "sum", "welford_reduce"});
  CHECK(r.nodes[1].reduction_types.empty());
  CHECK(load_graph(kValid).nodes[0].reduction_types.empty());
}

TEST_CASE("attention_scores: batch x heads x the unmasked scores, top-left causal", "[graph]") {
  auto call = [](std::int64_t q, std::int64_t kv, bool causal) {
    return AttentionCall{{8, 12, q, 64}, {8, 12, kv, 64}, {8, 12, kv, 64}, causal, false, 0.1};
  };
  CHECK(attention_scores(call(512, 512, false)) == 96 * 512 * 512);
  CHECK(attention_scores(call(512, 512, true)) == 96 * 512 * 513 / 2);
  // more queries than keys: the first 512 rows the triangle, the other 512 see every key
  CHECK(attention_scores(call(1024, 512, true)) == 96 * (512 * 513 / 2 + 512 * 512));
  // more keys than queries (top-left aligned): row i sees i + 1 keys
  CHECK(attention_scores(call(512, 1024, true)) == 96 * 512 * 513 / 2);
  CHECK(attention_scores(call(1024, 512, false)) == 96 * 1024 * 512);
  // 3-d: no batch dims, the heads alone
  CHECK(attention_scores(AttentionCall{{12, 7, 64}, {12, 5, 64}, {12, 5, 64}, true, false, 0}) == 12 * (15 + 2 * 5));
  // past 63 bits: saturates rather than wraps
  const std::int64_t big = std::int64_t{1} << 40;
  CHECK(attention_scores(call(big, big, true)) == std::numeric_limits<std::int64_t>::max());
  CHECK(attention_scores(call(big, big, false)) == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("every fixture loads", "[graph][loader][fixtures]") {
  for (const char* name : {"mlp_2", "gpt2_2", "convnet_2", "ckpt_1", "fsdp_1", "ddp_1"})
    for (const char* stage : {".pre.json", ".post.json"}) {
      INFO(name << stage);
      Graph g = load_graph_file(test::data_path(std::string("inductor/") + name + stage));
      CHECK(g.num_nodes() > 0);
    }
}

TEST_CASE("malformed inputs are refused with the place named", "[graph][loader][errors]") {
  struct Case {
    std::string text;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"", "empty input"},
      {"not json", "not valid JSON: line 1, column 1"},
      {kValid.substr(0, kValid.size() / 2), "unexpected end of input"},
      {"[1, 2]", "expected an object, got array"},
      {kValid + " x", "unexpected text after the JSON value"},
      {std::string(100, '[') + std::string(100, ']'), "nested deeper than 64 levels"},
      {patched("\"format\": \"schedgraph/1\"", "\"format\": \"schedgraph/2\""), "format: expected \"schedgraph/1\", got \"schedgraph/2\""},
      {patched("\"format\": \"schedgraph/1\",", ""), "missing required field \"format\""},
      {patched("\"inputs\": [", "\"inputz\": ["), "missing required field \"inputs\""},
      {patched("\"world_size\": 2", "\"world_size\": 0"), "world_size: value 0 is below the minimum 1"},
      {patched("\"world_size\": 2", "\"world_size\": \"2\""), "world_size: expected an integer, got string"},
      {patched("{\"name\": \"x\", \"bytes\": 32}", "{\"name\": \"x\", \"bytes\": -1}"), "inputs[1] \"x\": bytes: value -1 is below the minimum 0"},
      {patched("{\"name\": \"x\", \"bytes\": 32}", "{\"name\": \"x\", \"bytes\": 1.5}"), "inputs[1] \"x\": bytes: expected an integer, got number"},
      {patched("{\"name\": \"x\", \"bytes\": 32}", "{\"name\": \"x\", \"bytes\": 9223372036854775808}"), "inputs[1] \"x\": bytes: value does not fit in 63 bits"},
      {patched("{\"name\": \"x\", \"bytes\": 32}", "{\"name\": \"x\", \"bytes\": 32, \"freeable\": 1}"), "inputs[1] \"x\": freeable: expected a boolean"},
      {patched("{\"name\": \"x\", \"bytes\": 32}", "{\"name\": \"x\", \"bytes\": 32, \"donated\": \"yes\"}"), "inputs[1] \"x\": donated: expected a boolean"},
      {patched("{\"name\": \"x\", \"bytes\": 32}", "{\"name\": \"primals_1\", \"bytes\": 32}"), "inputs[1] \"primals_1\": name: duplicate buffer or input name"},
      {patched("\"name\": \"op1\"", "\"name\": \"op0\""), "nodes[1] \"op0\": duplicate node name \"op0\""},
      {patched("\"kind\": \"pointwise\"", "\"kind\": \"fancy\""), "nodes[0] \"op0\": kind: unknown value \"fancy\""},
      {patched("\"kind\": \"pointwise\", ", ""), "nodes[0] \"op0\": missing required field \"kind\""},
      {patched("\"dep\": \"star\"", "\"dep\": \"strong\""), "nodes[1] \"op1\": reads[0].dep: unknown value \"strong\""},
      {patched("{\"name\": \"buf0\", \"dep\": \"star\"", "{\"name\": \"bufX\", \"dep\": \"star\""), "nodes[1] \"op1\": reads[0]: unknown buffer \"bufX\""},
      {patched("\"outputs\": [\"buf1\"]", "\"outputs\": [\"nope\"]"), "outputs[0]: unknown buffer \"nope\""},
      {patched("{\"name\": \"buf0\", \"bytes\": 32, \"dtype\"", "{\"name\": \"buf0\", \"bytes\": 32, \"layout\": \"odd\", \"dtype\""), "nodes[0] \"op0\": outputs[0].layout: unknown value \"odd\""},
      {patched("{\"name\": \"buf1\", \"bytes\": 32}", "{\"name\": \"buf0\", \"bytes\": 32}"), "nodes[1] \"op1\": outputs[0].name: duplicate buffer or input name \"buf0\""},
      {patched("\"collective\": {\"op\": \"_c10d_functional.all_reduce_.default\", \"bytes\": 32},", ""), "nodes[1] \"op1\": a collective node needs a \"collective\" object"},
      {patched("_c10d_functional.all_reduce_.default", "send"), "nodes[1] \"op1\": collective.op: unknown collective \"send\""},
      {patched("\"group\": [8, 1]", "\"group\": [8]"), "nodes[0] \"op0\": group: expected [numel, rnumel]"},
      {patched("\"size\": [8]", "\"size\": [8, -2]"), "nodes[0] \"op0\": reads[0].size[1]: value -2 is below the minimum 0"},
      {patched("\"reads\": [{\"name\": \"x\"", "\"reads\": [{\"name\": \"buf1\", \"bytes\": 1}, {\"name\": \"x\""),
       "nodes: dependency cycle: \"op0\" -> \"op1\" -> \"op0\""},
      {patched("{\"name\": \"buf1\", \"bytes\": 32}", "{\"name\": \"buf1\", \"bytes\": 32, \"mutation_of\": \"buf9\"}"),
       "nodes[1] \"op1\": outputs[0].mutation_of: unknown buffer \"buf9\""},
      {patched("{\"name\": \"buf0\", \"bytes\": 32, \"dtype\"", "{\"name\": \"buf0\", \"bytes\": 32, \"mutation_of\": \"buf1\", \"dtype\""),
       "nodes[0] \"op0\": outputs[0].mutation_of: \"buf1\" is not an input or a buffer produced earlier"},
      {patched("{\"name\": \"x\", \"bytes\": 32}", "{\"name\": \"x\", \"bytes\": 9223372036854775807}"), "byte sizes of the graph sum past 63 bits"},
      {patched("\"group\": [8, 1]", "\"group\": [8, 1], \"runtime_us\": -3"), "nodes[0] \"op0\": runtime_us: expected a finite number >= 0"},
      {patched("\"group\": [8, 1]", "\"group\": [8, 1], \"workspace_bytes\": 512"), "nodes[0] \"op0\": workspace_bytes: needs \"workspace_source\": \"observed\""},
      {patched("\"group\": [8, 1]", "\"group\": [8, 1], \"workspace_source\": \"observed\""), "nodes[0] \"op0\": workspace_source: without \"workspace_bytes\""},
      {patched("\"group\": [8, 1]", "\"group\": [8, 1], \"workspace_bytes\": 512, \"workspace_source\": \"guessed\""),
       "nodes[0] \"op0\": workspace_source: unknown value \"guessed\" (expected \"observed\")"},
      {patched("\"group\": [8, 1]", "\"group\": [8, 1], \"workspace_bytes\": -1, \"workspace_source\": \"observed\""),
       "nodes[0] \"op0\": workspace_bytes: value -1 is below the minimum 0"},
      {patched("\"group\": [8, 1]", "\"group\": [8, 1], \"workspace_bytes\": \"1 MiB\", \"workspace_source\": \"observed\""),
       "nodes[0] \"op0\": workspace_bytes: expected an integer, got string"},
      // convolution: JSON types (the loader), then ATen's rules (validate())
      {patched("\"group\": [8, 1]", "\"group\": [8, 1], \"convolution\": [2, 8]"), "nodes[0] \"op0\": convolution: expected an object, got array"},
      {with_convolution("\"input\": [2, 8, 10, 10], ", ""), "nodes[0] \"op0\": convolution: missing required field \"input\""},
      {with_convolution("\"weight\": [16, 4, 3, 3], ", ""), "nodes[0] \"op0\": convolution: missing required field \"weight\""},
      {with_convolution("\"output\": [2, 16, 5, 5], ", ""), "nodes[0] \"op0\": convolution: missing required field \"output\""},
      {with_convolution("\"stride\": [2, 2], ", ""), "nodes[0] \"op0\": convolution: missing required field \"stride\""},
      {with_convolution("\"padding\": [1, 1], ", ""), "nodes[0] \"op0\": convolution: missing required field \"padding\""},
      {with_convolution("\"dilation\": [1, 1], ", ""), "nodes[0] \"op0\": convolution: missing required field \"dilation\""},
      {with_convolution("\"groups\": 2, ", ""), "nodes[0] \"op0\": convolution: missing required field \"groups\""},
      {with_convolution(", \"transposed\": false", ""), "nodes[0] \"op0\": convolution: missing required field \"transposed\""},
      {with_convolution("\"input\": [2, 8, 10, 10]", "\"input\": \"2x8x10x10\""), "nodes[0] \"op0\": convolution.input: expected an array, got string"},
      {with_convolution("\"weight\": [16, 4, 3, 3]", "\"weight\": [16, 4, 3.5, 3]"), "nodes[0] \"op0\": convolution.weight[2]: expected an integer, got number"},
      {with_convolution("\"stride\": [2, 2]", "\"stride\": [2, \"2\"]"), "nodes[0] \"op0\": convolution.stride[1]: expected an integer, got string"},
      {with_convolution("\"padding\": [1, 1]", "\"padding\": [-1, 1]"), "nodes[0] \"op0\": convolution.padding[0]: value -1 is below the minimum 0"},
      {with_convolution("\"output\": [2, 16, 5, 5]", "\"output\": [2, 16, 5, 9223372036854775808]"), "nodes[0] \"op0\": convolution.output[3]: value does not fit in 63 bits"},
      {with_convolution("\"groups\": 2", "\"groups\": 0"), "nodes[0] \"op0\": convolution.groups: value 0 is below the minimum 1"},
      {with_convolution("\"groups\": 2", "\"groups\": \"2\""), "nodes[0] \"op0\": convolution.groups: expected an integer, got string"},
      {with_convolution("\"transposed\": false", "\"transposed\": 0"), "nodes[0] \"op0\": convolution.transposed: expected a boolean, got integer"},
      {with_convolution("\"groups\": 2", "\"groups\": 2, \"output_padding\": [0, -1]"), "nodes[0] \"op0\": convolution.output_padding[1]: value -1 is below the minimum 0"},
      {with_convolution("\"groups\": 2", "\"groups\": 2, \"memory_format\": \"nhwc\""),
       "nodes[0] \"op0\": convolution.memory_format: unknown value \"nhwc\" (expected \"channels_last\" or \"contiguous\")"},
      {with_convolution("\"groups\": 2", "\"groups\": 2, \"memory_format\": 1"), "nodes[0] \"op0\": convolution.memory_format: expected a string, got integer"},
      {with_convolution("\"groups\": 2", "\"groups\": 2, \"output_mask\": true"), "nodes[0] \"op0\": convolution.output_mask: expected an array, got boolean"},
      {with_convolution("\"groups\": 2", "\"groups\": 2, \"output_mask\": [true, false]"),
       "nodes[0] \"op0\": convolution.output_mask: expected 3 entries (grads of input, weight, bias), got 2"},
      {with_convolution("\"groups\": 2", "\"groups\": 2, \"output_mask\": [true, false, 1]"), "nodes[0] \"op0\": convolution.output_mask[2]: expected a boolean, got integer"},
      {with_convolution("\"input\": [2, 8, 10, 10]", "\"input\": [2, 8]"), "nodes[0] \"op0\": convolution.input: rank 2, expected 3 to 5 (N, C and 1 to 3 spatial dims)"},
      {with_convolution("\"input\": [2, 8, 10, 10]", "\"input\": [2, 8, 10, 10, 10, 10]"), "nodes[0] \"op0\": convolution.input: rank 6, expected 3 to 5"},
      {with_convolution("\"weight\": [16, 4, 3, 3]", "\"weight\": [16, 4, 3]"), "nodes[0] \"op0\": convolution.weight: rank 3, expected the input's rank 4"},
      {with_convolution("\"output\": [2, 16, 5, 5]", "\"output\": [2, 16, 5, 5, 1]"), "nodes[0] \"op0\": convolution.output: rank 5, expected the input's rank 4"},
      {with_convolution("\"stride\": [2, 2]", "\"stride\": [2]"), "nodes[0] \"op0\": convolution.stride: expected 2 entries (one per spatial dim), got 1"},
      {with_convolution("\"padding\": [1, 1]", "\"padding\": [1, 1, 1]"), "nodes[0] \"op0\": convolution.padding: expected 2 entries (one per spatial dim), got 3"},
      {with_convolution("\"dilation\": [1, 1]", "\"dilation\": []"), "nodes[0] \"op0\": convolution.dilation: expected 2 entries (one per spatial dim), got 0"},
      {with_convolution("\"groups\": 2", "\"groups\": 2, \"output_padding\": [0]"),
       "nodes[0] \"op0\": convolution.output_padding: expected 2 entries (one per spatial dim), got 1"},
      {with_convolution("\"stride\": [2, 2]", "\"stride\": [0, 2]"), "nodes[0] \"op0\": convolution.stride[0]: value 0 is below the minimum 1"},
      {with_convolution("\"dilation\": [1, 1]", "\"dilation\": [1, 0]"), "nodes[0] \"op0\": convolution.dilation[1]: value 0 is below the minimum 1"},
      {with_convolution("\"weight\": [16, 4, 3, 3]", "\"weight\": [16, 4, 0, 3]"), "nodes[0] \"op0\": convolution.weight[2]: value 0 is below the minimum 1"},
      {with_convolution("\"groups\": 2", "\"groups\": 32"), "nodes[0] \"op0\": convolution.groups: 32 is more than weight[0] = 16"},
      {with_convolution("\"input\": [2, 8, 10, 10], \"weight\": [16, 4, 3, 3]", "\"input\": [2, 9, 10, 10], \"weight\": [15, 3, 3, 3]"),
       "nodes[0] \"op0\": convolution.groups: 2 does not divide weight[0] = 15"},
      {with_convolution("\"input\": [2, 8, 10, 10]", "\"input\": [2, 6, 10, 10]"),
       "nodes[0] \"op0\": convolution.input[1]: 6 channels, expected weight[1] * groups = 4 * 2 = 8"},
      {with_convolution("\"output\": [2, 16, 5, 5]", "\"output\": [2, 12, 5, 5]"), "nodes[0] \"op0\": convolution.output[1]: 12 channels, expected weight[0] = 16"},
      {with_convolution("\"transposed\": false", "\"transposed\": true"),
       "nodes[0] \"op0\": convolution.input[1]: 8 channels, expected weight[0] = 16 (transposed: weight is [Cin, Cout/groups, ...])"},
      {with_convolution("\"output\": [2, 16, 5, 5]", "\"output\": [3, 16, 5, 5]"), "nodes[0] \"op0\": convolution.output[0]: batch 3, expected the input's 2"},
      {with_convolution("\"output\": [2, 16, 5, 5]", "\"output\": [2, 16, 5, 6]"),
       "nodes[0] \"op0\": convolution.output[3]: 6, expected 5 from the input, weight, stride, padding, dilation"},
      {with_convolution("\"weight\": [16, 4, 3, 3]", "\"weight\": [16, 4, 13, 3]"),
       "nodes[0] \"op0\": convolution.weight[2]: the kernel (dilated: 13) is larger than the padded input (12)"},
      {transposed("\"output\": [2, 8, 10, 11], \"output_padding\": [1, 1]"),
       "nodes[0] \"op0\": convolution.output[3]: 11, expected 10 from the input, weight, stride, padding, dilation and output_padding (transposed)"},
      {transposed("\"output\": [2, 16, 10, 10], \"output_padding\": [1, 1]"),
       "nodes[0] \"op0\": convolution.output[1]: 16 channels, expected weight[1] * groups = 4 * 2 = 8 (transposed: weight is [Cin, Cout/groups, ...])"},
      {transposed("\"output\": [2, 8, 11, 11], \"output_padding\": [2, 2]"),
       "nodes[0] \"op0\": convolution.output_padding[0]: 2 is not smaller than the stride 2 or the dilation 1"},
      // attention: JSON types (the loader), then shapes and probability (validate())
      {patched("\"group\": [8, 1]", "\"group\": [8, 1], \"attention\": true"), "nodes[0] \"op0\": attention: expected an object, got boolean"},
      {with_attention("\"query\": [8, 12, 512, 64], ", ""), "nodes[0] \"op0\": attention: missing required field \"query\""},
      {with_attention("\"key\": [8, 12, 512, 64], ", ""), "nodes[0] \"op0\": attention: missing required field \"key\""},
      {with_attention("\"value\": [8, 12, 512, 64], ", ""), "nodes[0] \"op0\": attention: missing required field \"value\""},
      {with_attention("\"causal\": true, ", ""), "nodes[0] \"op0\": attention: missing required field \"causal\""},
      {with_attention("\"bias\": false, ", ""), "nodes[0] \"op0\": attention: missing required field \"bias\""},
      {with_attention(", \"dropout_p\": 0.1", ""), "nodes[0] \"op0\": attention: missing required field \"dropout_p\""},
      {with_attention("\"query\": [8, 12, 512, 64]", "\"query\": \"8x12x512x64\""), "nodes[0] \"op0\": attention.query: expected an array, got string"},
      {with_attention("\"key\": [8, 12, 512, 64]", "\"key\": [8, 12, 512.5, 64]"), "nodes[0] \"op0\": attention.key[2]: expected an integer, got number"},
      {with_attention("\"value\": [8, 12, 512, 64]", "\"value\": [8, -12, 512, 64]"), "nodes[0] \"op0\": attention.value[1]: value -12 is below the minimum 0"},
      {with_attention("\"causal\": true", "\"causal\": 1"), "nodes[0] \"op0\": attention.causal: expected a boolean, got integer"},
      {with_attention("\"bias\": false", "\"bias\": null"), "nodes[0] \"op0\": attention.bias: expected a boolean, got null"},
      {with_attention("\"dropout_p\": 0.1", "\"dropout_p\": \"0.1\""), "nodes[0] \"op0\": attention.dropout_p: expected a number, got string"},
      {with_attention("\"dropout_p\": 0.1", "\"dropout_p\": 1.5"), "nodes[0] \"op0\": attention.dropout_p: expected a probability in [0, 1], got 1.5"},
      {with_attention("\"dropout_p\": 0.1", "\"dropout_p\": -0.25"), "nodes[0] \"op0\": attention.dropout_p: expected a probability in [0, 1], got -0.25"},
      {with_attention("\"query\": [8, 12, 512, 64]", "\"query\": [512, 64]"),
       "nodes[0] \"op0\": attention.query: rank 2, expected 3 or more ([batch..., heads, seq, head_dim])"},
      {with_attention("\"key\": [8, 12, 512, 64]", "\"key\": [96, 512, 64]"), "nodes[0] \"op0\": attention.key: rank 3, expected the query's rank 4"},
      {with_attention("\"value\": [8, 12, 512, 64]", "\"value\": [1, 8, 12, 512, 64]"), "nodes[0] \"op0\": attention.value: rank 5, expected the query's rank 4"},
      {with_attention("\"query\": [8, 12, 512, 64]", "\"query\": [8, 12, 0, 64]"), "nodes[0] \"op0\": attention.query[2]: value 0 is below the minimum 1"},
      {with_attention("\"value\": [8, 12, 512, 64]", "\"value\": [8, 12, 512, 0]"), "nodes[0] \"op0\": attention.value[3]: value 0 is below the minimum 1"},
      // reduction_types: an array of distinct non-empty strings, sorted
      {with_reduction_types("\"sum\""), "nodes[0] \"op0\": reduction_types: expected an array, got string"},
      {with_reduction_types("[\"sum\", 3]"), "nodes[0] \"op0\": reduction_types[1]: expected a string, got integer"},
      {with_reduction_types("[\"\", \"sum\"]"), "nodes[0] \"op0\": reduction_types[0]: expected a non-empty string"},
      {with_reduction_types("[\"max\", \"sum\", \"sum\"]"), "nodes[0] \"op0\": reduction_types[2]: \"sum\" repeats the entry before it (expected distinct names)"},
      {with_reduction_types("[\"sum\", \"max\"]"), "nodes[0] \"op0\": reduction_types[1]: \"max\" sorts before \"sum\" (expected sorted names)"},
      {patched("\"nodes\": [", "\"nodes\": [3, "), "nodes[0]: expected an object, got integer"},
      {patched("\"name\": \"tiny\"", "\"name\": \"t\\u0000\\ud800\""), "unpaired surrogate"},
      {patched("\"name\": \"tiny\"", "\"name\": \"t\ty\""), "control character in a string"},
      {patched("\"bytes\": 64}", "\"bytes\": 064}"), "leading zero"},
  };
  for (const auto& c : cases) {
    INFO("input: " << c.text.substr(0, 200));
    std::string err = load_error(c.text);
    CHECK_THAT(err, Catch::Contains(c.expect));
    CHECK(err.find('\n') == std::string::npos);
  }
}

TEST_CASE("a dependency cycle is reported as the cycle", "[graph][loader][errors]") {
  const std::string text = R"({"format": "schedgraph/1", "inputs": [], "outputs": [], "nodes": [
    {"name": "a", "kind": "pointwise", "outputs": [{"name": "ba", "bytes": 4}], "reads": [{"name": "bc"}]},
    {"name": "b", "kind": "pointwise", "outputs": [{"name": "bb", "bytes": 4}], "reads": [{"name": "ba"}]},
    {"name": "c", "kind": "pointwise", "outputs": [{"name": "bc", "bytes": 4}], "reads": [{"name": "bb"}]}]})";
  std::string err = load_error(text);
  CHECK_THAT(err, Catch::Contains("dependency cycle: \"a\" -> \"c\" -> \"b\" -> \"a\""));
}

TEST_CASE("a read of a later node's buffer without a cycle is named", "[graph][loader][errors]") {
  const std::string text = R"({"format": "schedgraph/1", "inputs": [], "outputs": [], "nodes": [
    {"name": "a", "kind": "pointwise", "outputs": [{"name": "ba", "bytes": 4}], "reads": [{"name": "bb"}]},
    {"name": "b", "kind": "pointwise", "outputs": [{"name": "bb", "bytes": 4}]}]})";
  CHECK_THAT(load_error(text), Catch::Contains("nodes[0] \"a\": reads[0]: reads \"bb\", produced by the later node \"b\""));
}

TEST_CASE("an empty graph and unknown fields are accepted", "[graph][loader]") {
  Graph g = load_graph(R"({"format": "schedgraph/1", "inputs": [], "outputs": [], "nodes": [], "future_field": {"x": [1, 2]}})");
  CHECK(g.num_nodes() == 0);
  CHECK(g.num_buffers() == 0);
}

TEST_CASE("a missing file is an error naming the path", "[graph][loader][errors]") {
  try {
    load_graph_file("/nonexistent/graph.json");
    FAIL("loaded a missing file");
  } catch (const Error& e) {
    CHECK_THAT(std::string(e.what()), Catch::StartsWith("/nonexistent/graph.json: cannot open file"));
  }
}
