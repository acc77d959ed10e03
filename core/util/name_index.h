// core/util — an open-addressing index from names to dense ids.
//
// It stores only 32-bit hashes and ids; the names live in the owner's table
// and are read back through `name_of(id)` to confirm a match. So a copied
// Graph never points into the original's strings, and loading 200k buffer
// names costs no allocation per name (std::unordered_map made one each, and
// its lookups were a tenth of the load time).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace schedlab {

class NameIndex {
 public:
  static constexpr std::int32_t kAbsent = -1;

  void clear() {
    slots_.clear();
    size_ = 0;
  }
  void reserve(std::size_t names) {
    if (names * 2 > slots_.size()) rehash(names * 2);
  }
  std::size_t size() const { return size_; }

  template <typename NameOf>
  std::int32_t find(std::string_view name, const NameOf& name_of) const {
    if (slots_.empty()) return kAbsent;
    const std::uint32_t h = hash(name);
    for (std::size_t i = h & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.id == kAbsent) return kAbsent;
      if (s.hash == h && name_of(s.id) == name) return s.id;
    }
  }

  // Adds name -> id unless the name is there; returns the id already there,
  // or kAbsent when it was added.
  template <typename NameOf>
  std::int32_t insert(std::string_view name, std::int32_t id, const NameOf& name_of) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(std::max<std::size_t>(16, slots_.size() * 2));
    const std::uint32_t h = hash(name);
    for (std::size_t i = h & mask();; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.id == kAbsent) {
        s = {h, id};
        ++size_;
        return kAbsent;
      }
      if (s.hash == h && name_of(s.id) == name) return s.id;
    }
  }

 private:
  struct Slot {
    std::uint32_t hash = 0;
    std::int32_t id = kAbsent;
  };
  std::vector<Slot> slots_;  // power-of-two size, at most half full
  std::size_t size_ = 0;

  static std::uint32_t hash(std::string_view s) {
    // size_t is 32 bits under WASM, 64 natively: fold through 64 bits.
    const std::uint64_t h = std::hash<std::string_view>{}(s);
    return static_cast<std::uint32_t>(h ^ (h >> 32));
  }
  std::size_t mask() const { return slots_.size() - 1; }

  void rehash(std::size_t want) {
    std::size_t n = 16;
    while (n < want) n <<= 1;
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(n, Slot{});
    for (const Slot& s : old) {
      if (s.id == kAbsent) continue;
      std::size_t i = s.hash & mask();
      while (slots_[i].id != kAbsent) i = (i + 1) & mask();
      slots_[i] = s;
    }
  }
};

}  // namespace schedlab
