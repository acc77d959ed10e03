// core/io's tape parser: the fast paths (eight-byte string scan, keys kept
// off the tape, numbers without a heap copy) give the same values and the
// same errors as the plain rules of JSON.
#include <catch2/catch.hpp>

#include <string>

#include "core/io/json_doc.h"
#include "core/util/error.h"

using namespace schedlab;

namespace {

std::string parse_error(const std::string& text) {
  try {
    (void)JsonDoc::parse(text, 16);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("strings end at their quote at every offset of the eight-byte scan", "[io][json]") {
  for (std::size_t len = 0; len < 24; ++len) {
    const std::string body(len, 'a');
    const std::string text = "[\"" + body + "\",\"" + body + "\\\"x\"]";
    JsonDoc doc = JsonDoc::parse(text, 16);
    REQUIRE(doc.root().size() == 2);
    CHECK(doc.root()[0].as_string() == body);
    CHECK(doc.root()[1].as_string() == body + "\"x");
  }
}

TEST_CASE("a control character inside a string is refused wherever it sits", "[io][json]") {
  for (std::size_t at = 0; at < 20; ++at) {
    std::string body(20, 'b');
    body[at] = '\x01';
    CHECK_THAT(parse_error("{\"k\":\"" + body + "\"}"), Catch::Contains("control character in a string"));
    CHECK_THAT(parse_error("{\"" + body + "\":1}"), Catch::Contains("control character in a string"));
  }
}

TEST_CASE("UTF-8 bytes above 0x7f are string content, not stops", "[io][json]") {
  const std::string name = "\xC3\xA9t\xC3\xA9_\xE2\x82\xAC_long_enough_name";
  const std::string text = "{\"" + name + "\":\"" + name + "\"}";  // outlives the document
  JsonDoc doc = JsonDoc::parse(text, 16);
  CHECK(doc.root().key_at(0) == name);
  CHECK(doc.root()[0].as_string() == name);
}

TEST_CASE("keys with escapes are decoded; a repeated key gives its last value", "[io][json]") {
  JsonDoc doc = JsonDoc::parse(R"({"a\"b":1,"plain":2,"\u00e9":3,"plain":4,"nested":{"x\\y":[5]}})", 16);
  const JsonValue root = doc.root();
  REQUIRE(root.size() == 5);
  CHECK(root.key_at(0) == "a\"b");
  CHECK(root.find("a\"b").as_int() == 1);
  CHECK(root.find("\xC3\xA9").as_int() == 3);
  CHECK(root.find("plain").as_int() == 4);
  CHECK(root.find("nested").key_at(0) == "x\\y");
  CHECK(root.find("nested").find("x\\y")[0].as_int() == 5);
  CHECK_FALSE(root.find("missing").valid());
  CHECK_FALSE(root.find("nested").find("x\\y")[0].find("x").valid());  // not an object
}

TEST_CASE("numbers: integers exact, doubles correctly rounded, big integers as doubles", "[io][json]") {
  JsonDoc doc = JsonDoc::parse("[0,-0,9223372036854775807,-9223372036854775808,9223372036854775808,0.1,1e-7,2.5E+3,"
                               "1.00000000000000000000000000000000000000000000000000000000000000000000000001]",
                               16);
  const JsonValue a = doc.root();
  CHECK(a[0].as_int() == 0);
  CHECK(a[2].as_int() == 9223372036854775807LL);
  CHECK(a[3].as_int() == (-9223372036854775807LL - 1));
  CHECK(a[4].type() == JsonValue::Type::BigInt);
  CHECK(a[4].as_double() == 9223372036854775808.0);
  CHECK(a[5].as_double() == 0.1);
  CHECK(a[6].as_double() == 1e-7);
  CHECK(a[7].as_double() == 2500.0);
  CHECK(a[8].as_double() == 1.0);  // longer than the stack copy: the heap path
}

TEST_CASE("errors name line and column", "[io][json]") {
  CHECK_THAT(parse_error("{\n  \"a\": [1,\n   2,]\n}"), Catch::Contains("line 3, column 6"));
  CHECK_THAT(parse_error("{\"a\" 1}"), Catch::Contains("expected ':' after a key"));
  CHECK_THAT(parse_error("{\"a\":\"unterminated"), Catch::Contains("unexpected end of input inside a string"));
  CHECK_THAT(parse_error("{\"unterminated key"), Catch::Contains("unexpected end of input inside a string"));
  CHECK_THAT(parse_error("[1] x"), Catch::Contains("unexpected text after the JSON value"));
}

TEST_CASE("the 8-byte tape: integers at the 32-bit edges, scalars as roots, nested and empty containers", "[io][json]") {
  JsonDoc doc = JsonDoc::parse("[2147483647,2147483648,-2147483648,-2147483649,-1,true,false,null,"
                               "{},[],{\"a\":{\"b\":[{},{\"c\":[1,[2,{\"d\":\"e\"}]]}]},\"f\":\"g\\n\"}]",
                               16);
  const JsonValue a = doc.root();
  REQUIRE(a.size() == 11);
  CHECK(a[0].as_int() == 2147483647LL);
  CHECK(a[1].as_int() == 2147483648LL);
  CHECK(a[2].as_int() == -2147483648LL);
  CHECK(a[3].as_int() == -2147483649LL);
  CHECK(a[4].as_int() == -1);
  CHECK(a[4].as_double() == -1.0);
  CHECK(a[5].as_bool());
  CHECK_FALSE(a[6].as_bool());
  CHECK(a[7].type() == JsonValue::Type::Null);
  CHECK((a[8].is_object() && a[8].size() == 0 && !a[8].find("x")));
  CHECK((a[9].is_array() && a[9].size() == 0));
  const JsonValue o = a[10];
  REQUIRE(o.size() == 2);
  CHECK(o.key_at(0) == "a");
  CHECK(o.key_at(1) == "f");
  CHECK(o[1].as_string() == "g\n");
  const JsonValue c = o.find("a").find("b")[1].find("c");
  CHECK(c[0].as_int() == 1);
  CHECK(c[1][0].as_int() == 2);
  CHECK(c[1][1].key_at(0) == "d");
  CHECK(c[1][1].find("d").as_string() == "e");
  for (const char* scalar : {"7", "\"s\"", "-3000000000", "0.5", "null"}) {
    JsonDoc d = JsonDoc::parse(scalar, 16);
    CHECK(d.root().size() == 0);
    CHECK_FALSE(d.root().is_object());
  }
  CHECK(JsonDoc::parse("-3000000000", 16).root().as_int() == -3000000000LL);
}
