#include "core/io/json_input.h"

#include "core/io/files.h"
#include "core/util/error.h"

#include <nlohmann/json.hpp>

namespace schedlab {
namespace {

// A scan of JSON text chunk by chunk: it tracks strings (and their escapes)
// to count the nesting of the brackets outside them. It refuses only what
// no JSON text holds, and leaves every other error to the parser.
class JsonScan {
 public:
  explicit JsonScan(int max_depth) : max_depth_(max_depth) {}

  void feed(std::string_view chunk) {
    for (const char ch : chunk) {
      const auto c = static_cast<unsigned char>(ch);
      ++column_;
      if (in_string_) {
        if (escaped_) escaped_ = false;
        else if (c == '\\') escaped_ = true;
        else if (c == '"') in_string_ = false;
        else if (c < 0x20) fail("a control character (byte " + std::to_string(c) + ") inside a string");
        continue;
      }
      switch (c) {
        case '"': in_string_ = true; break;
        case '[':
        case '{':
          if (++depth_ > max_depth_) fail("nested deeper than " + std::to_string(max_depth_) + " levels");
          break;
        case ']':
        case '}':
          if (depth_ > 0) --depth_;
          break;
        case '\n': ++line_, column_ = 0; break;
        case ' ':
        case '\t':
        case '\r': break;
        default:
          if (c < 0x20 || c == 0x7f) fail("a control character (byte " + std::to_string(c) + ")");
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("not valid JSON: line " + std::to_string(line_) + ", column " + std::to_string(column_) + ": " + what);
  }
  int max_depth_;
  int depth_ = 0;
  bool in_string_ = false, escaped_ = false;
  std::uint64_t line_ = 1, column_ = 0;
};

}  // namespace

std::string read_json_input(const std::string& path, std::uint64_t max_bytes, std::string_view limit_name, int max_depth) {
  JsonScan scan(max_depth);
  try {
    return read_input(path, max_bytes, [&scan](std::string_view chunk) { scan.feed(chunk); }, limit_name);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.rfind("not valid JSON: ", 0) == 0) throw Error(path + ": " + what);
    throw;  // read_input's own errors name the path already
  }
}

void check_json_text(std::string_view text, int max_depth) { JsonScan(max_depth).feed(text); }

nlohmann::json parse_json_text(std::string_view text, const std::string& where) {
  try {
    check_json_text(text);  // nesting bounded before nlohmann's recursive parser sees it
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not valid JSON: " + e.what());
  }
}

}  // namespace schedlab
