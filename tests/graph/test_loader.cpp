// The loader accepts every documented field and refuses every malformed
// input with one line that names the place.
#include <catch2/catch.hpp>

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

std::string patched(const std::string& from, const std::string& to) {
  std::string s = kValid;
  auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  s.replace(pos, from.size(), to);
  return s;
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
