#include "core/io/json_doc.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/util/error.h"

namespace schedlab {

// ---- values -----------------------------------------------------------------

std::string_view JsonValue::type_name() const {
  switch (type()) {
    case Type::Null: return "null";
    case Type::Bool: return "boolean";
    case Type::Int:
    case Type::BigInt: return "integer";
    case Type::Double: return "number";
    case Type::String: return "string";
    case Type::Array: return "array";
    case Type::Object: return "object";
  }
  return "value";
}

JsonValue JsonValue::find(std::string_view key) const {
  const auto& e = doc_->tape_[index_];
  if (JsonDoc::type_of(e) != Type::Object) return {};
  const std::uint32_t first_key = doc_->tape_[e.payload - 1].payload;
  for (std::size_t i = JsonDoc::count_of(e); i-- > 0;)
    if (doc_->key(static_cast<std::uint32_t>(first_key + i)) == key) return JsonValue(doc_, static_cast<std::uint32_t>(e.payload + i));
  return {};
}

// ---- parser -----------------------------------------------------------------

namespace {

// Bytes that end the fast scan of a string: the quote, a backslash, and the
// control characters JSON forbids inside strings.
constexpr auto kStringStop = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = true;
  t['"'] = true;
  t['\\'] = true;
  return t;
}();

// The first byte at or after `p` that ends the fast scan of a string (or
// `n`). Eight bytes at a time (SWAR): graph files are mostly names, and a
// byte loop over them was a fifth of the parse. Each test below flags the
// lowest matching byte exactly (a borrow can only flag bytes above it), so
// the lowest flag of the three is the answer.
std::size_t scan_string(const char* s, std::size_t p, std::size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    while (p + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, s + p, 8);
      const std::uint64_t quote = w ^ (kOnes * '"'), backslash = w ^ (kOnes * '\\');
      const std::uint64_t hit = (((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash) | ((w - kOnes * 0x20) & ~w)) & kHigh;
      if (hit) return p + static_cast<std::size_t>(std::countr_zero(hit) / 8);
      p += 8;
    }
  }
  while (p < n && !kStringStop[static_cast<unsigned char>(s[p])]) ++p;
  return p;
}

// The pages of a fresh tape were half of a parse's CPU time on a loaded
// machine: a trap per 4 KiB page. The pages a parse is about to write are
// asked for a MiB at a time instead (MADV_POPULATE_WRITE, Linux 5.14; where
// the kernel or the platform lacks it, nothing happens and the pages fault
// as before). Only pages about to be written: reserved, unused ones stay
// unbacked and cost nothing.
template <typename T>
class Prefault {
 public:
  void before_growing(const std::vector<T>& v, std::size_t more) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    const auto base = reinterpret_cast<std::uintptr_t>(v.data());
    if (base != base_) {  // the vector moved: start over
      base_ = base;
      ready_ = 0;
    }
    const std::uintptr_t end = base + (v.size() + more) * sizeof(T);
    if (end <= ready_ || base == 0) return;
    constexpr std::uintptr_t kPage = 4096, kAhead = std::uintptr_t{1} << 20;
    const std::uintptr_t lo = (std::max(ready_, base) + kPage - 1) & ~(kPage - 1);
    const std::uintptr_t hi = std::min((base + v.capacity() * sizeof(T)) & ~(kPage - 1), (end + kAhead) & ~(kPage - 1));
    if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
    ready_ = std::max(end, hi);
#else
    (void)v;
    (void)more;
#endif
  }

 private:
  std::uintptr_t base_ = 0, ready_ = 0;
};

}  // namespace

#if defined(__GNUC__)
#define SCHEDLAB_ALWAYS_INLINE [[gnu::always_inline]] inline
#else
#define SCHEDLAB_ALWAYS_INLINE inline
#endif

class JsonParser {
 public:
  JsonParser(std::string_view text, int max_depth, JsonDoc& doc) : s_(text), max_depth_(max_depth), doc_(doc) {}

  void run() {
    // Tape indices and key offsets are 32 bits.
    if (s_.size() > std::numeric_limits<std::uint32_t>::max()) fail("document larger than 4 GiB");
    doc_.text_ = s_.data();
    // About one value per 12 bytes of graph JSON and one member per 20:
    // reserving for one per 8 and one per 16 keeps a graph's tape from being
    // copied as it grows (the copy doubled the peak memory of a load; pages
    // reserved and never written cost nothing). Objects add one entry each
    // (their first key), about one per 90 bytes. Huge pages (madvise) were
    // tried: fewer faults, but the kernel's cache-cold 2 MiB clears cost as
    // much and made timings erratic.
    doc_.tape_.reserve(s_.size() / 8 + 16);
    doc_.keys_.reserve(s_.size() / 16 + 16);
    skip_ws();
    if (p_ == s_.size()) fail("empty input: expected a JSON value");
    const JsonDoc::Entry root = parse_value(0);
    skip_ws();
    if (p_ != s_.size()) fail("unexpected text after the JSON value");
    doc_.root_ = append(root);
  }

 private:
  using Type = JsonValue::Type;
  struct Member {
    JsonDoc::Key key;
    JsonDoc::Entry value;
  };
  std::string_view s_;
  std::size_t p_ = 0;
  int max_depth_;
  JsonDoc& doc_;
  std::vector<Member> scratch_;  // members (elements: no key) of the open containers
  Prefault<JsonDoc::Entry> tape_pages_;
  Prefault<JsonDoc::Key> key_pages_;

  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < p_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw Error("not valid JSON: line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what);
  }

  void skip_ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\n' || s_[p_] == '\r' || s_[p_] == '\t')) ++p_;
  }

  static JsonDoc::Entry entry(Type t, std::uint32_t payload = 0, std::uint32_t count = 0, bool side = false) {
    return JsonDoc::Entry{static_cast<std::uint32_t>(t) | (side ? JsonDoc::kSide : 0u) | (count << JsonDoc::kCountShift), payload};
  }

  std::uint32_t append(JsonDoc::Entry e) {
    if (doc_.tape_.size() >= std::numeric_limits<std::uint32_t>::max()) fail("document too large");
    doc_.tape_.push_back(e);
    return static_cast<std::uint32_t>(doc_.tape_.size() - 1);
  }

  // A value kept beside the tape: its index there, which must fit the payload.
  template <typename T>
  std::uint32_t side_index(std::vector<T>& table, T value) {
    if (table.size() >= std::numeric_limits<std::uint32_t>::max()) fail("document too large");
    table.push_back(value);
    return static_cast<std::uint32_t>(table.size() - 1);
  }

  // Inlined into parse_container, the only recursive call: a call less per
  // value (graphs are millions of short strings and numbers).
  SCHEDLAB_ALWAYS_INLINE JsonDoc::Entry parse_value(int depth) {
    if (p_ >= s_.size()) fail("unexpected end of input: expected a value");
    char c = s_[p_];
    switch (c) {
      case '{': return parse_container(depth + 1, true);
      case '[': return parse_container(depth + 1, false);
      case '"': return parse_string();
      case 't': return literal("true", Type::Bool, true);
      case 'f': return literal("false", Type::Bool, false);
      case 'n': return literal("null", Type::Null, false);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
        fail(std::string("unexpected character '") + (static_cast<unsigned char>(c) < 0x20 ? '?' : c) + "'");
    }
  }

  JsonDoc::Entry literal(std::string_view word, Type t, bool value) {
    if (s_.substr(p_, word.size()) != word) fail("invalid literal");
    p_ += word.size();
    return entry(t, value ? 1u : 0u);
  }

  JsonDoc::Entry parse_container(int depth, bool object) {
    if (depth > max_depth_) fail("nested deeper than " + std::to_string(max_depth_) + " levels");
    const char close = object ? '}' : ']';
    ++p_;
    const std::size_t mark = scratch_.size();
    skip_ws();
    if (p_ < s_.size() && s_[p_] == close) {
      ++p_;
    } else {
      while (true) {
        skip_ws();
        JsonDoc::Key key{0, 0};
        if (object) {
          if (p_ >= s_.size() || s_[p_] != '"') fail(p_ >= s_.size() ? "unexpected end of input: expected a key" : "expected a string key");
          key = parse_key();
          skip_ws();
          if (p_ >= s_.size() || s_[p_] != ':') fail("expected ':' after a key");
          ++p_;
          skip_ws();
        }
        scratch_.push_back(Member{key, parse_value(depth)});
        skip_ws();
        if (p_ >= s_.size()) fail(std::string("unexpected end of input: expected ',' or '") + close + "'");
        if (s_[p_] == ',') {
          ++p_;
          continue;
        }
        if (s_[p_] == close) {
          ++p_;
          break;
        }
        fail(std::string("expected ',' or '") + close + "'");
      }
    }
    const std::size_t count = scratch_.size() - mark;
    if (count > JsonDoc::kMaxCount) fail("more than " + std::to_string(JsonDoc::kMaxCount) + " members in one array or object");
    if (doc_.tape_.size() + count + 1 >= std::numeric_limits<std::uint32_t>::max()) fail("document too large");
    tape_pages_.before_growing(doc_.tape_, count + 1);
    if (object) key_pages_.before_growing(doc_.keys_, count);
    if (object) doc_.tape_.push_back(entry(Type::Null, static_cast<std::uint32_t>(doc_.keys_.size())));
    const auto first = static_cast<std::uint32_t>(doc_.tape_.size());
    for (std::size_t i = mark; i < scratch_.size(); ++i) {
      if (object) doc_.keys_.push_back(scratch_[i].key);
      doc_.tape_.push_back(scratch_[i].value);
    }
    scratch_.resize(mark);
    return entry(object ? Type::Object : Type::Array, first, static_cast<std::uint32_t>(count));
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  unsigned read_hex4() {
    if (p_ + 4 > s_.size()) fail("truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      int h = hex(s_[p_ + k]);
      if (h < 0) fail("invalid \\u escape");
      v = v * 16 + static_cast<unsigned>(h);
    }
    p_ += 4;
    return v;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // Scans a string from after its opening quote to its end: true with p_
  // after the closing quote when it had no escapes (the text is
  // s_[start, p_ - 1)), false with p_ at its first backslash.
  SCHEDLAB_ALWAYS_INLINE bool scan_plain_string(std::size_t start) {
    p_ = scan_string(s_.data(), start, s_.size());
    if (p_ >= s_.size()) fail("unexpected end of input inside a string");
    if (static_cast<unsigned char>(s_[p_]) < 0x20) fail("control character in a string");
    if (p_ - start > std::numeric_limits<std::uint32_t>::max() / 2) fail("string longer than 2 GiB");
    if (s_[p_] != '"') return false;
    ++p_;
    return true;
  }

  // The rest of a string with escapes, from its first backslash (p_) on;
  // `start` is where its text began. Keeps the decoded text in the document.
  const std::string& decode_string(std::size_t start) {
    std::string out(s_.substr(start, p_ - start));
    while (true) {
      if (p_ >= s_.size()) fail("unexpected end of input inside a string");
      char c = s_[p_];
      if (c == '"') {
        ++p_;
        break;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        ++p_;
        continue;
      }
      if (++p_ >= s_.size()) fail("unexpected end of input inside a string");
      char e = s_[p_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = read_hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (p_ + 2 > s_.size() || s_[p_] != '\\' || s_[p_ + 1] != 'u') fail("unpaired surrogate in \\u escape");
            p_ += 2;
            unsigned lo = read_hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("invalid surrogate pair in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("unpaired surrogate in \\u escape");
          }
          append_utf8(out, cp);
          break;
        }
        default: fail("invalid escape in a string");
      }
    }
    if (out.size() > std::numeric_limits<std::uint32_t>::max() / 2) fail("string longer than 2 GiB");
    doc_.decoded_.push_back(std::move(out));
    return doc_.decoded_.back();
  }

  SCHEDLAB_ALWAYS_INLINE JsonDoc::Entry parse_string() {
    const std::size_t start = ++p_;  // after the opening quote
    if (scan_plain_string(start)) {  // no escapes: point into the source
      const std::size_t length = p_ - 1 - start;
      if (length <= JsonDoc::kMaxCount) return entry(Type::String, static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(length));
      doc_.decoded_.emplace_back(s_.substr(start, length));
    } else {
      decode_string(start);
    }
    return entry(Type::String, static_cast<std::uint32_t>(doc_.decoded_.size() - 1), 0, true);
  }

  SCHEDLAB_ALWAYS_INLINE JsonDoc::Key parse_key() {
    const std::size_t start = ++p_;  // after the opening quote
    if (scan_plain_string(start)) return {static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(p_ - 1 - start)};
    decode_string(start);
    return {static_cast<std::uint32_t>(doc_.decoded_.size() - 1), JsonDoc::kDecodedKey};
  }

  JsonDoc::Entry parse_number() {
    const std::size_t start = p_;
    bool negative = false;
    if (s_[p_] == '-') {
      negative = true;
      ++p_;
    }
    if (p_ >= s_.size() || !(s_[p_] >= '0' && s_[p_] <= '9')) fail("invalid number");
    if (s_[p_] == '0' && p_ + 1 < s_.size() && s_[p_ + 1] >= '0' && s_[p_ + 1] <= '9') fail("invalid number: leading zero");
    // Integer part, with overflow detection.
    std::uint64_t mag = 0;
    bool overflow = false;
    while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') {
      unsigned d = static_cast<unsigned>(s_[p_] - '0');
      if (mag > (std::numeric_limits<std::uint64_t>::max() - d) / 10) overflow = true;
      else mag = mag * 10 + d;
      ++p_;
    }
    bool is_float = false;
    if (p_ < s_.size() && s_[p_] == '.') {
      is_float = true;
      ++p_;
      if (p_ >= s_.size() || !(s_[p_] >= '0' && s_[p_] <= '9')) fail("invalid number: digits expected after '.'");
      while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') ++p_;
    }
    if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
      is_float = true;
      ++p_;
      if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
      if (p_ >= s_.size() || !(s_[p_] >= '0' && s_[p_] <= '9')) fail("invalid number: digits expected in exponent");
      while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') ++p_;
    }
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (!is_float && !overflow && mag <= limit) {
      const std::int64_t v = negative ? static_cast<std::int64_t>(0 - mag) : static_cast<std::int64_t>(mag);
      if (v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max())
        return entry(Type::Int, static_cast<std::uint32_t>(static_cast<std::int32_t>(v)));
      return entry(Type::Int, side_index(doc_.wide_ints_, v), 0, true);
    }
    return entry(is_float ? Type::Double : Type::BigInt, side_index(doc_.doubles_, to_double(s_.substr(start, p_ - start))));
  }

  // strtod (correctly rounded) needs a terminated copy: on the stack for the
  // usual short numbers, no heap string per number.
  static double to_double(std::string_view number) {
    char buf[64];
    if (number.size() < sizeof buf) {
      std::memcpy(buf, number.data(), number.size());
      buf[number.size()] = '\0';
      return std::strtod(buf, nullptr);
    }
    return std::strtod(std::string(number).c_str(), nullptr);
  }
};

// ---- builder ------------------------------------------------------------------

JsonDoc::Entry JsonDocBuilder::builder_entry(JsonValue::Type t, std::uint32_t payload, std::uint32_t count, bool side) {
  return JsonDoc::Entry{static_cast<std::uint32_t>(t) | (side ? JsonDoc::kSide : 0u) | (count << JsonDoc::kCountShift), payload};
}

std::uint32_t JsonDocBuilder::side_string(std::string_view s) {
  if (s.size() > std::numeric_limits<std::uint32_t>::max() / 2) throw Error("string longer than 2 GiB");
  if (doc_.decoded_.size() >= std::numeric_limits<std::uint32_t>::max()) throw Error("document too large");
  doc_.decoded_.emplace_back(s);
  return static_cast<std::uint32_t>(doc_.decoded_.size() - 1);
}

void JsonDocBuilder::add(JsonDoc::Entry e) {
  if (open_.empty()) {
    if (has_root_) throw Error("JsonDocBuilder: a second value after the document");
    root_ = e;
    has_root_ = true;
    return;
  }
  if (open_.back().object != has_key_) throw Error(has_key_ ? "JsonDocBuilder: a key inside an array" : "JsonDocBuilder: an object member without a key");
  members_.push_back(Member{pending_key_, e});
  has_key_ = false;
}

void JsonDocBuilder::open(bool object) {
  if (static_cast<int>(open_.size()) >= max_depth_) throw Error("nested deeper than " + std::to_string(max_depth_) + " levels");
  if (!open_.empty() && open_.back().object != has_key_) throw Error(has_key_ ? "JsonDocBuilder: a key inside an array" : "JsonDocBuilder: an object member without a key");
  if (open_.empty() && has_root_) throw Error("JsonDocBuilder: a second value after the document");
  // The key waits with the container's members until the container closes.
  members_.push_back(Member{pending_key_, {}});
  has_key_ = false;
  open_.push_back(Open{object, members_.size()});
}

// As the parser does when a container closes: an object's key entry, then
// its members' entries, contiguous on the tape.
void JsonDocBuilder::end() {
  if (open_.empty()) throw Error("JsonDocBuilder: end() without an open container");
  if (has_key_) throw Error("JsonDocBuilder: a key without a value");
  const Open o = open_.back();
  open_.pop_back();
  const std::size_t count = members_.size() - o.mark;
  if (count > JsonDoc::kMaxCount) throw Error("more than " + std::to_string(JsonDoc::kMaxCount) + " members in one array or object");
  if (doc_.tape_.size() + count + 1 >= std::numeric_limits<std::uint32_t>::max()) throw Error("document too large");
  if (o.object) doc_.tape_.push_back(builder_entry(JsonValue::Type::Null, static_cast<std::uint32_t>(doc_.keys_.size()), 0, false));
  const auto first = static_cast<std::uint32_t>(doc_.tape_.size());
  for (std::size_t i = o.mark; i < members_.size(); ++i) {
    if (o.object) doc_.keys_.push_back(JsonDoc::Key{members_[i].key, JsonDoc::kDecodedKey});
    doc_.tape_.push_back(members_[i].value);
  }
  members_.resize(o.mark);
  const std::uint32_t key = members_.back().key;  // the placeholder open() left
  members_.pop_back();
  pending_key_ = key;
  has_key_ = !open_.empty() && open_.back().object;
  add(builder_entry(o.object ? JsonValue::Type::Object : JsonValue::Type::Array, first, static_cast<std::uint32_t>(count), false));
}

void JsonDocBuilder::key(std::string_view k) {
  if (open_.empty() || !open_.back().object) throw Error("JsonDocBuilder: a key outside an object");
  if (has_key_) throw Error("JsonDocBuilder: two keys in a row");
  pending_key_ = side_string(k);
  has_key_ = true;
}

void JsonDocBuilder::null() { add(builder_entry(JsonValue::Type::Null, 0, 0, false)); }
void JsonDocBuilder::boolean(bool b) { add(builder_entry(JsonValue::Type::Bool, b ? 1u : 0u, 0, false)); }

void JsonDocBuilder::integer(std::int64_t v) {
  if (v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max()) {
    add(builder_entry(JsonValue::Type::Int, static_cast<std::uint32_t>(static_cast<std::int32_t>(v)), 0, false));
    return;
  }
  doc_.wide_ints_.push_back(v);
  add(builder_entry(JsonValue::Type::Int, static_cast<std::uint32_t>(doc_.wide_ints_.size() - 1), 0, true));
}

void JsonDocBuilder::number(double d, bool integral) {
  doc_.doubles_.push_back(d);
  add(builder_entry(integral ? JsonValue::Type::BigInt : JsonValue::Type::Double, static_cast<std::uint32_t>(doc_.doubles_.size() - 1), 0, false));
}

void JsonDocBuilder::string(std::string_view s) { add(builder_entry(JsonValue::Type::String, side_string(s), 0, true)); }

JsonDoc JsonDocBuilder::finish() {
  if (!open_.empty()) throw Error("JsonDocBuilder: " + std::to_string(open_.size()) + " container(s) left open");
  if (!has_root_) throw Error("JsonDocBuilder: no value");
  doc_.tape_.push_back(root_);
  doc_.root_ = static_cast<std::uint32_t>(doc_.tape_.size() - 1);
  has_root_ = false;
  return std::move(doc_);
}

JsonDoc JsonDoc::parse(std::string_view text, int max_depth) {
  // A UTF-8 byte order mark is skipped, for graphs and profiles alike.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  JsonDoc doc;
  JsonParser(text, max_depth, doc).run();
  return doc;
}

}  // namespace schedlab
