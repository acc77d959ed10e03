// core/io — a read-only JSON document built for loading large graphs fast.
//
// Why not nlohmann's DOM: a 57 MB graph takes ~1.3 s there (maps and a heap
// string per key), and its callback parser (needed to bound nesting) is ten
// times slower still. This parser builds a flat tape: every value is one
// entry, a container's children are contiguous, strings without escapes
// point into the source text. It bounds nesting depth, rejects trailing
// garbage, and reports errors as "line L, column C: what".
//
// The document must outlive its values, and the source text must outlive
// the document (strings may point into it).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab {

class JsonDoc;

class JsonValue {
 public:
  enum class Type : std::uint8_t { Null, Bool, Int, BigInt, Double, String, Array, Object };

  Type type() const;
  std::string_view type_name() const;  // "null", "boolean", "integer", "number", "string", "array", "object"
  bool is_object() const { return type() == Type::Object; }
  bool is_array() const { return type() == Type::Array; }
  bool is_string() const { return type() == Type::String; }
  bool is_bool() const { return type() == Type::Bool; }
  bool is_integer() const { return type() == Type::Int || type() == Type::BigInt; }
  bool is_number() const { return is_integer() || type() == Type::Double; }

  std::size_t size() const;                  // elements or members; 0 for scalars
  JsonValue operator[](std::size_t i) const;  // array element or object member i
  // Object member by key (the last one if a key repeats), or an invalid value.
  JsonValue find(std::string_view key) const;
  std::string_view key_at(std::size_t i) const;  // object member i's key
  bool valid() const { return doc_ != nullptr; }
  explicit operator bool() const { return valid(); }

  std::string_view as_string() const;
  bool as_bool() const;
  std::int64_t as_int() const;  // only for Type::Int
  double as_double() const;     // any number

 private:
  friend class JsonDoc;
  JsonValue(const JsonDoc* doc, std::uint32_t index) : doc_(doc), index_(index) {}
  const JsonDoc* doc_ = nullptr;
  std::uint32_t index_ = 0;

 public:
  JsonValue() = default;
};

class JsonDoc {
 public:
  // Throws schedlab::Error("line L, column C: ...") on malformed text.
  static JsonDoc parse(std::string_view text, int max_depth);
  JsonValue root() const { return JsonValue(this, 0); }

  JsonDoc(JsonDoc&&) = default;
  JsonDoc& operator=(JsonDoc&&) = default;

 private:
  friend class JsonValue;
  friend class JsonParser;
  JsonDoc() = default;

  // 16 bytes a value: the tape of a 57 MB graph stays near 100 MB.
  struct Entry {
    JsonValue::Type type;
    bool boolean;
    std::uint32_t count;  // containers: number of children; strings: length
    union {
      std::int64_t i;
      double d;
      const char* str;
      struct {
        std::uint32_t first;      // index of the first child in children_
        std::uint32_t first_key;  // objects: index of the first member's key in keys_
      } span;                     // containers
    };
  };
  // An object member's key, 8 bytes and not on the tape (keys are a third
  // of a graph's strings): an offset into the source text, or with
  // kDecodedKey set in `length`, an index into decoded_ (the key had escapes).
  struct Key {
    std::uint32_t at;
    std::uint32_t length;
  };
  static constexpr std::uint32_t kDecodedKey = 0x80000000u;
  std::string_view key(std::uint32_t member) const {
    const Key k = keys_[member];
    if (k.length & kDecodedKey) return decoded_[k.at];
    return {text_ + k.at, k.length};
  }

  const char* text_ = nullptr;           // the source text (keys point into it)
  std::vector<Entry> tape_;              // value entries; the root is entry 0
  std::vector<std::uint32_t> children_;  // container children (tape indices), contiguous per container
  std::vector<Key> keys_;                // object members' keys, contiguous per object
  std::deque<std::string> decoded_;      // strings that had escapes
};

// The accessors are inline: a graph's load calls them tens of millions of times.
inline JsonValue::Type JsonValue::type() const { return doc_->tape_[index_].type; }
inline std::size_t JsonValue::size() const {
  const auto& e = doc_->tape_[index_];
  return (e.type == Type::Array || e.type == Type::Object) ? e.count : 0;
}
inline JsonValue JsonValue::operator[](std::size_t i) const {
  return JsonValue(doc_, doc_->children_[doc_->tape_[index_].span.first + i]);
}
inline std::string_view JsonValue::key_at(std::size_t i) const {
  return doc_->key(static_cast<std::uint32_t>(doc_->tape_[index_].span.first_key + i));
}
inline std::string_view JsonValue::as_string() const {
  const auto& e = doc_->tape_[index_];
  return {e.str, e.count};
}
inline bool JsonValue::as_bool() const { return doc_->tape_[index_].boolean; }
inline std::int64_t JsonValue::as_int() const { return doc_->tape_[index_].i; }
inline double JsonValue::as_double() const {
  const auto& e = doc_->tape_[index_];
  return e.type == Type::Int ? static_cast<double>(e.i) : e.d;
}

}  // namespace schedlab
