// The caching allocator's block bookkeeping, step by step as
// c10/cuda/CUDACachingAllocator.cpp does it (malloc: round_size, get_pool,
// get_free_block, alloc_block, should_split; free: free_block,
// try_merge_blocks).
#include "core/alloc/caching_allocator.h"

#include <algorithm>
#include <limits>
#include <string>

#include "core/util/error.h"
#include "core/util/saturating.h"

namespace schedlab {
namespace {

std::int64_t round_up(std::int64_t v, std::int64_t unit) {
  std::int64_t out;
  if (!exact_round_up(v, unit, out)) throw Error("allocator: request of " + std::to_string(v) + " bytes overflows 63 bits");
  return out;
}

std::int64_t add_checked(std::int64_t a, std::int64_t b) {
  if (a > std::numeric_limits<std::int64_t>::max() - b) throw Error("allocator: byte total overflows 63 bits");
  return a + b;
}

}  // namespace

std::int64_t CachingAllocatorSim::round_size(std::int64_t bytes) {
  return bytes < kAllocMinBlock ? kAllocMinBlock : round_up(bytes, kAllocMinBlock);
}

std::int64_t CachingAllocatorSim::segment_size(std::int64_t rounded) {
  if (rounded <= kAllocSmallSize) return kAllocSmallSegment;
  if (rounded < kAllocMinLargeAlloc) return kAllocLargeSegment;
  return round_up(rounded, kAllocRoundLarge);
}

void CachingAllocatorSim::insert_free(Handle h) {
  const Block& b = blocks_[h];
  pool(b.small).insert({b.size, b.addr, h});
}

void CachingAllocatorSim::erase_free(Handle h) {
  const Block& b = blocks_[h];
  pool(b.small).erase({b.size, b.addr, h});
}

CachingAllocatorSim::Handle CachingAllocatorSim::new_segment(bool small, std::int64_t size) {
  Block seg;
  seg.addr = next_addr_;
  seg.size = size;
  seg.small = small;
  next_addr_ = add_checked(next_addr_, size);
  reserved_ = add_checked(reserved_, size);
  ++segments_;
  blocks_.push_back(seg);
  return static_cast<Handle>(blocks_.size() - 1);
}

void CachingAllocatorSim::release_cached_segments() {
  for (bool small : {false, true}) {
    FreeSet& free_blocks = pool(small);
    for (auto it = free_blocks.begin(); it != free_blocks.end();) {
      Block& b = blocks_[std::get<2>(*it)];
      if (b.prev != kNoBlock || b.next != kNoBlock) {
        ++it;
        continue;
      }
      reserved_ -= b.size;
      --segments_;
      b.live = false;
      it = free_blocks.erase(it);
    }
  }
}

void CachingAllocatorSim::split(Handle h, std::int64_t size) {
  Block rest;
  rest.addr = blocks_[h].addr + size;
  rest.size = blocks_[h].size - size;
  rest.small = blocks_[h].small;
  rest.prev = h;
  rest.next = blocks_[h].next;
  blocks_.push_back(rest);
  const Handle r = static_cast<Handle>(blocks_.size() - 1);
  if (blocks_[r].next != kNoBlock) blocks_[blocks_[r].next].prev = r;
  blocks_[h].next = r;
  blocks_[h].size = size;
  insert_free(r);
}

CachingAllocatorSim::Handle CachingAllocatorSim::allocate(std::int64_t bytes) {
  if (bytes < 0) throw Error("allocator: negative request of " + std::to_string(bytes) + " bytes");
  if (bytes == 0) return kNoBlock;
  const std::int64_t size = round_size(bytes);
  const bool small = size <= kAllocSmallSize;
  FreeSet& free_blocks = pool(small);
  Handle h;
  if (auto it = free_blocks.lower_bound({size, std::numeric_limits<std::int64_t>::min(), 0}); it != free_blocks.end()) {
    h = std::get<2>(*it);
    free_blocks.erase(it);
  } else {
    const std::int64_t segment = segment_size(size);
    if (cap_ > 0 && add_checked(reserved_, segment) > cap_) {
      release_cached_segments();
      if (reserved_ + segment > cap_) return kOutOfMemory;
    }
    h = new_segment(small, segment);
  }
  const std::int64_t remaining = blocks_[h].size - size;
  if (small ? remaining >= kAllocMinBlock : remaining > kAllocSmallSize) split(h, size);
  blocks_[h].allocated = true;
  allocated_ = add_checked(allocated_, blocks_[h].size);
  peak_allocated_ = std::max(peak_allocated_, allocated_);
  peak_reserved_ = std::max(peak_reserved_, reserved_);
  return h;
}

std::vector<CachingAllocatorSim::Handle> CachingAllocatorSim::add_segment(const CachedSegment& segment) {
  if (segment.blocks.empty()) throw Error("allocator: a recorded segment without blocks");
  std::int64_t sum = 0;
  for (const CachedBlock& b : segment.blocks) {
    if (b.bytes <= 0) throw Error("allocator: a recorded block of " + std::to_string(b.bytes) + " bytes");
    sum = add_checked(sum, b.bytes);
  }
  if (sum != segment.bytes)
    throw Error("allocator: a recorded segment of " + std::to_string(segment.bytes) + " bytes whose blocks sum to " + std::to_string(sum));
  std::vector<Handle> handles;
  const Handle first = new_segment(segment.small, segment.bytes);
  handles.push_back(first);
  std::int64_t addr = blocks_[first].addr;
  for (std::size_t i = 0; i < segment.blocks.size(); ++i) {
    Handle h = first;
    if (i > 0) {
      Block b;
      b.addr = addr;
      b.small = segment.small;
      b.prev = handles.back();
      blocks_.push_back(b);
      h = static_cast<Handle>(blocks_.size() - 1);
      blocks_[handles.back()].next = h;
      handles.push_back(h);
    }
    blocks_[h].size = segment.blocks[i].bytes;
    blocks_[h].allocated = segment.blocks[i].allocated;
    addr += segment.blocks[i].bytes;
    if (blocks_[h].allocated) allocated_ = add_checked(allocated_, blocks_[h].size);
  }
  for (std::size_t i = 0; i < handles.size(); ++i)
    if (!segment.blocks[i].allocated) insert_free(handles[i]);
  peak_allocated_ = std::max(peak_allocated_, allocated_);
  peak_reserved_ = std::max(peak_reserved_, reserved_);
  return handles;
}

void CachingAllocatorSim::absorb(Handle into, Handle neighbour) {
  // `neighbour` is free and adjacent to `into`: one block spans both.
  Block& a = blocks_[into];
  Block& n = blocks_[neighbour];
  erase_free(neighbour);
  if (n.addr < a.addr) {
    a.addr = n.addr;
    a.prev = n.prev;
    if (a.prev != kNoBlock) blocks_[a.prev].next = into;
  } else {
    a.next = n.next;
    if (a.next != kNoBlock) blocks_[a.next].prev = into;
  }
  a.size += n.size;
  n.live = false;
}

void CachingAllocatorSim::release(Handle h) {
  if (h == kNoBlock) return;
  if (h < 0 || h >= static_cast<Handle>(blocks_.size()) || !blocks_[h].live || !blocks_[h].allocated)
    throw Error("allocator: block " + std::to_string(h) + " released twice or never allocated");
  blocks_[h].allocated = false;
  allocated_ -= blocks_[h].size;
  if (Handle p = blocks_[h].prev; p != kNoBlock && !blocks_[p].allocated) absorb(h, p);
  if (Handle n = blocks_[h].next; n != kNoBlock && !blocks_[n].allocated) absorb(h, n);
  insert_free(h);
}

}  // namespace schedlab
