// core/util — a hash table of 64-bit keys, each with a one-byte value, by
// open addressing over power-of-two flat arrays. The fusion rounds keep
// millions of node-pair keys (pairs tried, answers remembered); a node-based
// std::unordered_set allocates and frees one node per key, which costs more
// than the checks the keys stand for.
#pragma once

#include <cstdint>
#include <vector>

namespace schedlab {

class KeyTable {
 public:
  static constexpr std::uint64_t kNoKey = ~std::uint64_t{0};  // the one key that cannot be stored

  explicit KeyTable(std::size_t expected = 0) {
    std::size_t capacity = 16;
    while (capacity < expected * 2) capacity <<= 1;
    keys_.assign(capacity, kNoKey);
    values_.assign(capacity, 0);
  }

  // Adds `key` with `value`; false (and the old value kept) when it was there.
  bool insert(std::uint64_t key, std::uint8_t value = 0) {
    if ((size_ + 1) * 2 > keys_.size()) grow();
    std::size_t i = slot(keys_, key);
    if (keys_[i] == key) return false;
    keys_[i] = key;
    values_[i] = value;
    ++size_;
    return true;
  }

  // The value stored with `key`, or nullptr.
  const std::uint8_t* find(std::uint64_t key) const {
    std::size_t i = slot(keys_, key);
    return keys_[i] == key ? &values_[i] : nullptr;
  }

 private:
  static std::uint64_t mix(std::uint64_t k) {  // MurmurHash3's finalizer
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
  }

  // Where `key` is, or the empty slot where it would go.
  static std::size_t slot(const std::vector<std::uint64_t>& keys, std::uint64_t key) {
    const std::size_t mask = keys.size() - 1;
    std::size_t i = static_cast<std::size_t>(mix(key)) & mask;
    while (keys[i] != key && keys[i] != kNoKey) i = (i + 1) & mask;
    return i;
  }

  void grow() {
    std::vector<std::uint64_t> keys(keys_.size() * 2, kNoKey);
    std::vector<std::uint8_t> values(keys.size(), 0);
    for (std::size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] != kNoKey) {
        std::size_t j = slot(keys, keys_[i]);
        keys[j] = keys_[i];
        values[j] = values_[i];
      }
    keys_.swap(keys);
    values_.swap(values);
  }

  std::vector<std::uint64_t> keys_;
  std::vector<std::uint8_t> values_;
  std::size_t size_ = 0;
};

}  // namespace schedlab
