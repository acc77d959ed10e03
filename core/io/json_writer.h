// core/io — a streaming JSON writer: compact output, appended to a string
// that is handed to a sink (a file) whenever it grows past a chunk, so a
// million-node plan never exists as one DOM or one string.
//
// Strings are escaped as JSON requires; a byte sequence that is not UTF-8
// comes out as U+FFFD instead of failing (the loader refuses such names, so
// this only guards against a bug). Doubles are written as the shortest text
// that reads back to the same value (NaN and infinities as null), in the
// same form nlohmann::json uses, so outputs stay byte-identical to before.
// The caller writes object keys in the order it wants them (the writers in
// core/io keep them sorted, as schedplan/1 files always had them).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace schedlab {

// Receives a document's values in writing order instead of its text: a
// front end that wants the document as its own objects (the Python
// bindings build dicts and lists) hands one to a JsonWriter, so the same
// writers (write_plan, ...) produce it. Strings arrive as written (UTF-8);
// doubles as values (non-finite ones arrive as null, as the text has them).
class JsonEvents {
 public:
  virtual ~JsonEvents() = default;
  virtual void begin_object() = 0;
  virtual void end_object() = 0;
  virtual void begin_array() = 0;
  virtual void end_array() = 0;
  virtual void key(std::string_view k) = 0;
  virtual void string(std::string_view s) = 0;
  virtual void boolean(bool b) = 0;
  virtual void number(double d) = 0;
  virtual void integer(std::int64_t v) = 0;
  virtual void unsigned_integer(std::uint64_t v) = 0;
  virtual void null() = 0;
};

class JsonWriter {
 public:
  // Without a sink everything stays in `text()`; with one, `flush()` and
  // every full chunk hand the text over (std::fwrite; a failed write throws
  // Error naming `sink_name`).
  JsonWriter() = default;
  JsonWriter(std::FILE* sink, std::string sink_name) : sink_(sink), sink_name_(std::move(sink_name)) {}
  // Every value goes to `events` instead of the text (which stays empty;
  // raw text, a newline after the document, is dropped).
  explicit JsonWriter(JsonEvents& events) : events_(&events) {}

  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& key(std::string_view k);

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b);
  JsonWriter& value(double d);
  JsonWriter& null();
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  JsonWriter& value(T v) {
    if constexpr (std::is_signed_v<T>) return integer(static_cast<std::int64_t>(v));
    else return unsigned_integer(static_cast<std::uint64_t>(v));
  }
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }
  template <typename T, typename Each>
  JsonWriter& array(const std::vector<T>& items, Each&& each) {
    begin_array();
    for (const T& item : items) each(*this, item);
    return end_array();
  }
  template <typename T>
  JsonWriter& array(const std::vector<T>& items) {
    return array(items, [](JsonWriter& w, const T& v) { w.value(v); });
  }

  // Appends raw text (a newline after the document).
  void raw(std::string_view s) {
    if (!events_) text_ += s;
  }
  void flush();
  const std::string& text() const { return text_; }
  std::string take_text() { return std::move(text_); }

 private:
  static constexpr std::size_t kChunk = 1 << 20;
  std::string text_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
  std::FILE* sink_ = nullptr;
  std::string sink_name_;
  JsonEvents* events_ = nullptr;

  void separate();
  JsonWriter& open(char c);
  JsonWriter& close(char c);
  JsonWriter& integer(std::int64_t v);
  JsonWriter& unsigned_integer(std::uint64_t v);
  void maybe_flush() {
    if (sink_ && text_.size() >= kChunk) flush();
  }
};

}  // namespace schedlab
