#include "core/io/json_writer.h"

#include <charconv>
#include <cmath>

// Only for its double formatting (Grisu2, the form plans have always had).
#include <nlohmann/json.hpp>

#include "core/util/utf8.h"
#include "core/util/error.h"

namespace schedlab {
void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) text_ += ',';
  first_.back() = false;
}

JsonWriter& JsonWriter::open(char c) {
  if (events_) {
    c == '{' ? events_->begin_object() : events_->begin_array();
    return *this;
  }
  separate();
  text_ += c;
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::close(char c) {
  if (events_) {
    c == '}' ? events_->end_object() : events_->end_array();
    return *this;
  }
  text_ += c;
  first_.pop_back();
  maybe_flush();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  if (events_) {
    events_->key(k);
    return *this;
  }
  value(k);
  text_ += ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  if (events_) {
    events_->string(s);
    return *this;
  }
  separate();
  text_ += '"';
  std::size_t run = 0;  // start of the bytes not yet copied
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (std::size_t n = utf8_sequence_length(s, i)) {
        i += n;
        continue;
      }
    }
    text_.append(s.data() + run, i - run);
    switch (c) {
      case '"': text_ += "\\\""; break;
      case '\\': text_ += "\\\\"; break;
      case '\b': text_ += "\\b"; break;
      case '\f': text_ += "\\f"; break;
      case '\n': text_ += "\\n"; break;
      case '\r': text_ += "\\r"; break;
      case '\t': text_ += "\\t"; break;
      default:
        if (c >= 0x80) {
          text_ += "\\ufffd";
        } else {
          static constexpr char kHex[] = "0123456789abcdef";
          text_ += "\\u00";
          text_ += kHex[c >> 4];
          text_ += kHex[c & 0xF];
        }
    }
    run = ++i;
  }
  text_.append(s.data() + run, s.size() - run);
  text_ += '"';
  maybe_flush();
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  if (events_) {
    events_->boolean(b);
    return *this;
  }
  separate();
  text_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  if (events_) {
    events_->null();
    return *this;
  }
  separate();
  text_ += "null";
  return *this;
}

JsonWriter& JsonWriter::value(double d) {
  if (!std::isfinite(d)) return null();
  if (events_) {
    events_->number(d);
    return *this;
  }
  separate();
  char buf[64];
  char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, d);
  text_.append(buf, end);
  return *this;
}

JsonWriter& JsonWriter::integer(std::int64_t v) {
  if (events_) {
    events_->integer(v);
    return *this;
  }
  separate();
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  text_.append(buf, r.ptr);
  return *this;
}

JsonWriter& JsonWriter::unsigned_integer(std::uint64_t v) {
  if (events_) {
    events_->unsigned_integer(v);
    return *this;
  }
  separate();
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  text_.append(buf, r.ptr);
  return *this;
}

void JsonWriter::flush() {
  if (!sink_ || text_.empty()) return;
  if (std::fwrite(text_.data(), 1, text_.size(), sink_) != text_.size()) throw Error(sink_name_ + ": write failed");
  text_.clear();
}

}  // namespace schedlab
