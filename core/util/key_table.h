// core/util — a hash table of 64-bit keys, each with a small value, by open
// addressing over a power-of-two flat array of (key, value) slots. The
// fusion rounds keep millions of node-pair keys (pairs tried, answers
// remembered); a node-based std::unordered_set allocates and frees one node
// per key, which costs more than the checks the keys stand for. A key and
// its value share a slot, so a probe that finds its key reads one cache line.
#pragma once

#include <cstdint>
#include <vector>

namespace schedlab {

template <typename Value>
class BasicKeyTable {
 public:
  static constexpr std::uint64_t kNoKey = ~std::uint64_t{0};  // the one key that cannot be stored

  explicit BasicKeyTable(std::size_t expected = 0) {
    std::size_t capacity = 16;
    while (capacity < expected * 2) capacity <<= 1;
    slots_.assign(capacity, Slot{});
  }

  // Adds `key` with `value`; false (and the old value kept) when it was there.
  bool insert(std::uint64_t key, Value value = Value{}) {
    bool added = false;
    Value& stored = find_or_add(key, added);
    if (added) stored = value;
    return added;
  }

  // The value stored with `key`, or nullptr.
  const Value* find(std::uint64_t key) const {
    const Slot& s = slots_[slot(slots_, key)];
    return s.key == key ? &s.value : nullptr;
  }

  // Starts loading the cache line where `key` is or would go (a hint; the
  // table is not changed): callers that know their next keys hide the miss.
  void prefetch(std::uint64_t key) const {
    __builtin_prefetch(&slots_[static_cast<std::size_t>(mix(key)) & (slots_.size() - 1)]);
  }

  // The value stored with `key`, added as Value{} (`added` true) when absent.
  // The reference holds until the next key is added.
  Value& find_or_add(std::uint64_t key, bool& added) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    Slot& s = slots_[slot(slots_, key)];
    added = s.key != key;
    if (added) {
      s.key = key;
      s.value = Value{};
      ++size_;
    }
    return s.value;
  }

 private:
  struct Slot {
    std::uint64_t key = kNoKey;
    Value value{};
  };

  static std::uint64_t mix(std::uint64_t k) {  // MurmurHash3's finalizer
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
  }

  // Where `key` is, or the empty slot where it would go.
  static std::size_t slot(const std::vector<Slot>& slots, std::uint64_t key) {
    const std::size_t mask = slots.size() - 1;
    std::size_t i = static_cast<std::size_t>(mix(key)) & mask;
    while (slots[i].key != key && slots[i].key != kNoKey) i = (i + 1) & mask;
    return i;
  }

  void grow() {
    std::vector<Slot> slots(slots_.size() * 2);
    for (const Slot& s : slots_)
      if (s.key != kNoKey) slots[slot(slots, s.key)] = s;
    slots_.swap(slots);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

// One byte per key: a flag or a small code.
using KeyTable = BasicKeyTable<std::uint8_t>;

}  // namespace schedlab
