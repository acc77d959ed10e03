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
class JsonDocBuilder;

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
  JsonValue root() const { return JsonValue(this, root_); }

  JsonDoc(JsonDoc&&) = default;
  JsonDoc& operator=(JsonDoc&&) = default;

 private:
  friend class JsonValue;
  friend class JsonParser;
  friend class JsonDocBuilder;
  JsonDoc() = default;

  // 8 bytes a value (they were 16, plus 4 in a list of children): a tape
  // is written once and read a few times, and on a busy machine the page
  // faults of its first write were as much as the parse. A container's
  // children are contiguous on the tape: written when it closes, after the
  // children's own children, so the root comes last. `tag` holds the type
  // (low 3 bits), kSide (bit 3) and a count above: a container's children
  // or a string's length. `payload` by type:
  //   containers: the tape index of the first child; an object's children
  //               are preceded by an entry whose payload is the index in
  //               keys_ of its first member's key;
  //   strings:    offset in the source text, or with kSide an index into
  //               decoded_ (it had escapes, or is 256 MiB or longer);
  //   Int:        the value when it fits in 32 bits, else with kSide an
  //               index into wide_ints_;
  //   Double, BigInt: an index into doubles_;
  //   Bool:       0 or 1.
  struct Entry {
    std::uint32_t tag;
    std::uint32_t payload;
  };
  static constexpr std::uint32_t kTypeMask = 7u, kSide = 8u, kCountShift = 4;
  static constexpr std::uint32_t kMaxCount = (std::uint32_t{1} << (32 - kCountShift)) - 1;
  static JsonValue::Type type_of(const Entry& e) { return static_cast<JsonValue::Type>(e.tag & kTypeMask); }
  static std::uint32_t count_of(const Entry& e) { return e.tag >> kCountShift; }

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
  std::uint32_t root_ = 0;               // the root's tape index
  std::vector<Key> keys_;                // object members' keys, contiguous per object
  std::deque<std::string> decoded_;      // strings that had escapes (or are very long)
  std::vector<std::int64_t> wide_ints_;  // integers beyond 32 bits
  std::vector<double> doubles_;          // non-integers and integers beyond 64 bits
};

// A JsonDoc made from values handed over one at a time instead of parsed
// from text: a front end that holds a document as its own objects (the
// Python bindings, a dict) builds the same tape, so the same readers
// (graph_reader, options) read it and no JSON text is written in between.
// Values come in document order: key() before each member of an object;
// begin_*/end() bracket containers. Strings are copied into the document.
// Misuse (a value where a key belongs, an unbalanced end(), nesting deeper
// than `max_depth`) throws Error; `finish()` hands the document over.
class JsonDocBuilder {
 public:
  explicit JsonDocBuilder(int max_depth) : max_depth_(max_depth) {}
  void begin_object() { open(true); }
  void begin_array() { open(false); }
  void end();
  void key(std::string_view k);
  void null();
  void boolean(bool b);
  void integer(std::int64_t v);
  // A number that is no int64 (a fraction, or an integer beyond int64, as
  // the parser keeps one): `integral` marks the latter.
  void number(double d, bool integral = false);
  void string(std::string_view s);
  JsonDoc finish();

 private:
  struct Open {
    bool object;
    std::size_t mark;  // where its members start in members_
  };
  struct Member {
    std::uint32_t key;  // index into doc_.decoded_ (objects only)
    JsonDoc::Entry value;
  };
  JsonDoc doc_;
  int max_depth_;
  std::vector<Open> open_;
  std::vector<Member> members_;
  std::uint32_t pending_key_ = 0;
  bool has_key_ = false, has_root_ = false;
  JsonDoc::Entry root_{};

  void open(bool object);
  void add(JsonDoc::Entry e);
  std::uint32_t side_string(std::string_view s);
  static JsonDoc::Entry builder_entry(JsonValue::Type t, std::uint32_t payload, std::uint32_t count, bool side);
};

// The accessors are inline: a graph's load calls them tens of millions of times.
inline JsonValue::Type JsonValue::type() const { return JsonDoc::type_of(doc_->tape_[index_]); }
inline std::size_t JsonValue::size() const {
  const auto& e = doc_->tape_[index_];
  const Type t = JsonDoc::type_of(e);
  return (t == Type::Array || t == Type::Object) ? JsonDoc::count_of(e) : 0;
}
inline JsonValue JsonValue::operator[](std::size_t i) const {
  return JsonValue(doc_, static_cast<std::uint32_t>(doc_->tape_[index_].payload + i));
}
inline std::string_view JsonValue::key_at(std::size_t i) const {
  const std::uint32_t first = doc_->tape_[index_].payload;
  return doc_->key(static_cast<std::uint32_t>(doc_->tape_[first - 1].payload + i));
}
inline std::string_view JsonValue::as_string() const {
  const auto& e = doc_->tape_[index_];
  if (e.tag & JsonDoc::kSide) return doc_->decoded_[e.payload];
  return {doc_->text_ + e.payload, JsonDoc::count_of(e)};
}
inline bool JsonValue::as_bool() const { return doc_->tape_[index_].payload != 0; }
inline std::int64_t JsonValue::as_int() const {
  const auto& e = doc_->tape_[index_];
  if (e.tag & JsonDoc::kSide) return doc_->wide_ints_[e.payload];
  return static_cast<std::int32_t>(e.payload);
}
inline double JsonValue::as_double() const {
  const auto& e = doc_->tape_[index_];
  return JsonDoc::type_of(e) == Type::Int ? static_cast<double>(as_int()) : doc_->doubles_[e.payload];
}

}  // namespace schedlab
