// core/alloc — PyTorch's CUDA caching allocator, simulated on an allocation
// sequence to predict `torch.cuda.memory_allocated()` and
// `memory_reserved()` (docs/memory-as-executed.md).
//
// Contract: the default configuration of c10/cuda/CUDACachingAllocator.cpp
// (PyTorch 2.x; no expandable segments, no max_split_size, no
// roundup_power2_divisions), one stream:
// - a request is rounded up to a multiple of 512 bytes (kMinBlockSize);
//   0 bytes allocates nothing;
// - requests up to 1 MiB (kSmallSize) use the small pool, larger ones the
//   large pool; pools never lend to each other;
// - best fit: the smallest free block of the pool that is large enough (ties:
//   the lowest address);
// - none fits: a new segment (cudaMalloc) of 2 MiB (kSmallBuffer) for small
//   requests, 20 MiB (kLargeBuffer) for requests under 10 MiB
//   (kMinLargeAlloc), else the request rounded up to 2 MiB (kRoundLarge);
// - a block is split when the rest is >= 512 bytes (small pool) or > 1 MiB
//   (large pool); unsplit, the whole block counts as allocated;
// - a freed block merges with free neighbours of its segment; segments are
//   never released (no empty_cache during a call), so reserved only grows;
// - under a cap on reserved bytes (set_reserved_cap: PyTorch's
//   set_per_process_memory_fraction, or a full device), a new segment that
//   would pass it first releases every cached segment that is wholly free
//   (release_cached_blocks; max_split_size unset, so the partial release
//   before it does nothing), then is refused: allocate returns
//   kOutOfMemory and the state is as the refusal left it.
// A simulation starts from an empty cache, or from a recorded one
// (add_segment: a segment with its blocks as they were, e.g. the measuring
// process's at the start of a measured call), whose free blocks the
// requests then find like any other.
#pragma once

#include <cstdint>
#include <string>
#include <set>
#include <tuple>
#include <vector>

namespace schedlab {

inline constexpr std::int64_t kAllocMinBlock = 512;
inline constexpr std::int64_t kAllocSmallSize = 1 << 20;        // largest small request
inline constexpr std::int64_t kAllocSmallSegment = 2 << 20;     // small pool segment
inline constexpr std::int64_t kAllocLargeSegment = 20 << 20;    // large pool segment for requests < 10 MiB
inline constexpr std::int64_t kAllocMinLargeAlloc = 10 << 20;   // requests from here get their own segment
inline constexpr std::int64_t kAllocRoundLarge = 2 << 20;       // ... rounded up to 2 MiB

// One segment of a cache as recorded (schedmeasured/1 memory.allocator_at_start).
struct CachedBlock {
  std::int64_t bytes = 0;
  bool allocated = false;
  // The graph inputs whose storage starts at this block (memory.inputs_at_start),
  // when the recording says; several share one storage.
  std::vector<std::string> inputs;
};
struct CachedSegment {
  bool small = false;  // the small pool's (requests up to 1 MiB)
  std::int64_t bytes = 0;
  std::vector<CachedBlock> blocks;  // address order; their bytes sum to the segment's
};
using AllocatorState = std::vector<CachedSegment>;  // address order

class CachingAllocatorSim {
 public:
  using Handle = std::int32_t;
  static constexpr Handle kNoBlock = -1;      // what a 0-byte request returns
  static constexpr Handle kOutOfMemory = -4;  // a request refused under the cap

  // Throws Error for a negative size or a sum past 63 bits.
  Handle allocate(std::int64_t bytes);
  void release(Handle h);  // kNoBlock is a no-op; a handle twice is an Error
  // The cap on reserved bytes; 0 (the default) is none.
  void set_reserved_cap(std::int64_t bytes) { cap_ = bytes; }
  // Adds a segment as recorded, after every segment so far: its free blocks
  // join their pool, its allocated ones count as allocated until released.
  // Returns one handle per block, in its order. Throws Error when the
  // blocks' bytes do not sum to the segment's or one is not positive.
  std::vector<Handle> add_segment(const CachedSegment& segment);

  // A live block's bytes, simulated address and pool (a handle from allocate or add_segment).
  std::int64_t block_bytes(Handle h) const { return blocks_.at(static_cast<std::size_t>(h)).size; }
  std::int64_t block_address(Handle h) const { return blocks_.at(static_cast<std::size_t>(h)).addr; }
  bool block_small(Handle h) const { return blocks_.at(static_cast<std::size_t>(h)).small; }

  std::int64_t allocated_bytes() const { return allocated_; }
  std::int64_t reserved_bytes() const { return reserved_; }
  std::int64_t peak_allocated_bytes() const { return peak_allocated_; }
  std::int64_t peak_reserved_bytes() const { return peak_reserved_; }
  std::int64_t segments() const { return segments_; }
  void reset_peaks() { peak_allocated_ = allocated_; peak_reserved_ = reserved_; }

  static std::int64_t round_size(std::int64_t bytes);
  static std::int64_t segment_size(std::int64_t rounded);

 private:
  struct Block {
    std::int64_t addr = 0, size = 0;
    Handle prev = kNoBlock, next = kNoBlock;  // neighbours inside the segment
    bool small = false, allocated = false, live = true;  // live: not merged away
  };
  // Free blocks by (size, address): lower_bound is PyTorch's best fit.
  using FreeSet = std::set<std::tuple<std::int64_t, std::int64_t, Handle>>;
  FreeSet& pool(bool small) { return small ? small_free_ : large_free_; }
  void insert_free(Handle h);
  void erase_free(Handle h);
  Handle new_segment(bool small, std::int64_t size);
  void release_cached_segments();
  void split(Handle h, std::int64_t size);
  void absorb(Handle into, Handle neighbour);

  std::vector<Block> blocks_;
  FreeSet small_free_, large_free_;
  std::int64_t next_addr_ = 0;
  std::int64_t allocated_ = 0, reserved_ = 0, peak_allocated_ = 0, peak_reserved_ = 0, segments_ = 0;
  std::int64_t cap_ = 0;
};

}  // namespace schedlab
