// core/io's two faces for front ends that hold documents as their own
// objects (the Python bindings): JsonDocBuilder makes the tape the readers
// read, without text, and JsonEvents receives what the writers write. A
// document handed over value by value must read exactly as its text does,
// and a plan received as events must be its text, value for value.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/io/graph_reader.h"
#include "core/io/graph_writer.h"
#include "core/io/json_doc.h"
#include "core/io/json_writer.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/io/profiles.h"
#include "core/plan/plan.h"
#include "core/util/error.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

// Hands every value of `v` to `b`, as a front end walking its own objects does.
void rebuild(const JsonValue& v, JsonDocBuilder& b) {
  switch (v.type()) {
    case JsonValue::Type::Null: b.null(); break;
    case JsonValue::Type::Bool: b.boolean(v.as_bool()); break;
    case JsonValue::Type::Int: b.integer(v.as_int()); break;
    case JsonValue::Type::BigInt: b.number(v.as_double(), true); break;
    case JsonValue::Type::Double: b.number(v.as_double()); break;
    case JsonValue::Type::String: b.string(v.as_string()); break;
    case JsonValue::Type::Array:
      b.begin_array();
      for (std::size_t i = 0; i < v.size(); ++i) rebuild(v[i], b);
      b.end();
      break;
    case JsonValue::Type::Object:
      b.begin_object();
      for (std::size_t i = 0; i < v.size(); ++i) {
        b.key(v.key_at(i));
        rebuild(v[i], b);
      }
      b.end();
      break;
  }
}

JsonDoc rebuilt(const std::string& text) {
  JsonDoc parsed = JsonDoc::parse(text, kMaxJsonDepth);
  JsonDocBuilder b(kMaxJsonDepth);
  rebuild(parsed.root(), b);
  return b.finish();
}

// Events straight back into a text writer: what the events carry, as text.
class TextAgain : public JsonEvents {
 public:
  JsonWriter w;
  void begin_object() override { w.begin_object(); }
  void end_object() override { w.end_object(); }
  void begin_array() override { w.begin_array(); }
  void end_array() override { w.end_array(); }
  void key(std::string_view k) override { w.key(k); }
  void string(std::string_view s) override { w.value(s); }
  void boolean(bool b) override { w.value(b); }
  void number(double d) override { w.value(d); }
  void integer(std::int64_t v) override { w.value(v); }
  void unsigned_integer(std::uint64_t v) override { w.value(v); }
  void null() override { w.null(); }
};

std::string builder_error(void (*misuse)(JsonDocBuilder&)) {
  JsonDocBuilder b(4);
  try {
    misuse(b);
    (void)b.finish();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a graph handed over value by value loads as its text does", "[io][json][builder]") {
  for (const std::string& c : test::fixture_cases()) {
    for (const char* stage : {".pre.json", ".post.json"}) {
      const std::string text = read_text_file(test::data_path(c + stage));
      JsonDoc doc = rebuilt(text);
      INFO(c << stage);
      CHECK(write_graph_json(read_graph(doc.root())) == write_graph_json(load_graph(text)));
    }
  }
}

TEST_CASE("a built document has the parsed one's values: big numbers, escapes, repeated keys, empty containers", "[io][json][builder]") {
  const std::string text = R"({"a":[1,-2147483649,9223372036854775808,0.5,"q\"\n",true,null,{},[]],"a":{"x":1},"b":"é"})";
  JsonDoc doc = rebuilt(text);
  const JsonValue root = doc.root();
  REQUIRE(root.size() == 3);
  CHECK(root.find("a").is_object());  // the last of a repeated key, as find() on a parsed one
  const JsonValue a = root[0];
  REQUIRE(a.size() == 9);
  CHECK(a[0].as_int() == 1);
  CHECK(a[1].as_int() == -2147483649LL);
  CHECK(a[2].type() == JsonValue::Type::BigInt);
  CHECK(a[2].as_double() == 9223372036854775808.0);
  CHECK(a[3].as_double() == 0.5);
  CHECK(a[4].as_string() == "q\"\n");
  CHECK(a[5].as_bool());
  CHECK(a[6].type() == JsonValue::Type::Null);
  CHECK((a[7].is_object() && a[7].size() == 0));
  CHECK((a[8].is_array() && a[8].size() == 0));
  CHECK(root.key_at(2) == "b");
  CHECK(root.find("b").as_string() == "é");
}

TEST_CASE("a builder used out of order is refused with a message, never a half document", "[io][json][builder]") {
  CHECK(builder_error([](JsonDocBuilder& b) { b.begin_object(); b.integer(1); }) == "JsonDocBuilder: an object member without a key");
  CHECK(builder_error([](JsonDocBuilder& b) { b.begin_array(); b.key("k"); }) == "JsonDocBuilder: a key outside an object");
  CHECK(builder_error([](JsonDocBuilder& b) { b.begin_object(); b.key("k"); b.end(); }) == "JsonDocBuilder: a key without a value");
  CHECK(builder_error([](JsonDocBuilder& b) { b.end(); }) == "JsonDocBuilder: end() without an open container");
  CHECK(builder_error([](JsonDocBuilder& b) { b.begin_array(); }) == "JsonDocBuilder: 1 container(s) left open");
  CHECK(builder_error([](JsonDocBuilder& b) { b.null(); b.null(); }) == "JsonDocBuilder: a second value after the document");
  CHECK(builder_error([](JsonDocBuilder&) {}) == "JsonDocBuilder: no value");
  CHECK(builder_error([](JsonDocBuilder& b) { for (int i = 0; i < 5; ++i) b.begin_array(); }) == "nested deeper than 4 levels");
  CHECK(builder_error([](JsonDocBuilder& b) { for (int i = 0; i < 4; ++i) b.begin_array(); for (int i = 0; i < 4; ++i) b.end(); }) == "(no error)");
}

TEST_CASE("options handed over as a document read as their text, an inline profile included", "[io][json][builder]") {
  for (const char* file : {"example-h100-pcie.json", "h200.json", "measured-h200.json"}) {
    const std::string text = read_text_file(test::data_path(std::string("../../profiles/") + file));
    const std::string options = R"({"memory_methods":["lpmf","bfs"],"comm_passes":"sink_waits,raise_comms","fuse":false,)"
                                R"("comm":{"reorder_iterative_peak_memory_budget":0.1},"hardware":)" + text + "}";
    JsonDoc doc = rebuilt(options);
    const PlanOptions a = parse_plan_options(options), b = parse_plan_options(doc.root());
    INFO(file);
    CHECK(a.memory_methods == b.memory_methods);
    CHECK(a.comm_passes == b.comm_passes);
    CHECK(a.fuse == b.fuse);
    CHECK(comm_knobs_json(a.comm) == comm_knobs_json(b.comm));
    // The inline profile reads as the profile file does (nlohmann's parse of its text).
    const std::string from_file = hardware_profile_to_json(parse_hardware_profile(text)).dump();
    CHECK(hardware_profile_to_json(a.hardware).dump() == from_file);
    CHECK(hardware_profile_to_json(b.hardware).dump() == from_file);
  }
  JsonDoc bad = rebuilt(R"({"fuse":1})");
  CHECK_THROWS_WITH(parse_plan_options(bad.root()), "options.fuse: expected true or false");
}

TEST_CASE("a plan received as events is its text, value for value", "[io][json][events]") {
  for (const char* file : {"inductor/mlp_2.pre.json", "inductor/fsdp_1.post.json"}) {
    PlanOptions opts;
    opts.comm_passes = {"sink_waits", "overlap_schedule"};
    const PlanResult r = run_plan(load_graph_file(test::data_path(file)), opts);
    TextAgain again;
    JsonWriter w(again);
    write_plan(w, opts, r);
    INFO(file);
    CHECK(w.text().empty());
    CHECK(again.w.text() + "\n" == plan_text_json(opts, r));
  }
}
