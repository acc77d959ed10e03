// The caching allocator simulation against hand-worked block bookkeeping
// (constants and rules as in c10/cuda/CUDACachingAllocator.cpp).
#include <catch2/catch.hpp>

#include "core/alloc/caching_allocator.h"
#include "core/util/error.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {
using schedlab::test::MiB;
}

TEST_CASE("allocator: rounding, pools and segment sizes", "[alloc]") {
  CHECK(CachingAllocatorSim::round_size(1) == 512);
  CHECK(CachingAllocatorSim::round_size(512) == 512);
  CHECK(CachingAllocatorSim::round_size(513) == 1024);
  CHECK(CachingAllocatorSim::segment_size(MiB) == 2 * MiB);            // small pool
  CHECK(CachingAllocatorSim::segment_size(MiB + 512) == 20 * MiB);     // large, under 10 MiB
  CHECK(CachingAllocatorSim::segment_size(10 * MiB - 512) == 20 * MiB);
  CHECK(CachingAllocatorSim::segment_size(10 * MiB) == 10 * MiB);      // own segment, 2 MiB rounded
  CHECK(CachingAllocatorSim::segment_size(11 * MiB) == 12 * MiB);

  CachingAllocatorSim a;
  CHECK(a.allocate(0) == CachingAllocatorSim::kNoBlock);
  auto s1 = a.allocate(100);  // 512 B from a new 2 MiB small segment
  CHECK(a.allocated_bytes() == 512);
  CHECK(a.reserved_bytes() == 2 * MiB);
  auto s2 = a.allocate(MiB);  // fits the small segment's rest (split: rest >= 512)
  CHECK(a.reserved_bytes() == 2 * MiB);
  CHECK(a.allocated_bytes() == 512 + MiB);
  auto big = a.allocate(11 * MiB);  // own 12 MiB segment; the 1 MiB rest is not split off
  CHECK(a.reserved_bytes() == 14 * MiB);
  CHECK(a.allocated_bytes() == 512 + MiB + 12 * MiB);
  auto l1 = a.allocate(MiB + 1);  // large pool, nothing free: a new 20 MiB segment, split (rest > 1 MiB)
  CHECK(a.reserved_bytes() == 34 * MiB);
  CHECK(a.allocated_bytes() == 512 + MiB + 12 * MiB + MiB + 512);
  CHECK(a.segments() == 3);
  auto again = a.allocate(11 * MiB);  // best fit: the rest of l1's segment (19 MiB - 512), split
  CHECK(a.reserved_bytes() == 34 * MiB);
  a.release(again);
  a.release(big);
  a.release(l1);
  a.release(s2);
  a.release(s1);
  CHECK(a.allocated_bytes() == 0);
  CHECK(a.reserved_bytes() == 34 * MiB);  // nothing goes back
  CHECK(a.peak_allocated_bytes() == 512 + MiB + 12 * MiB + MiB + 512 + 11 * MiB);
  CHECK_THROWS_AS(a.release(s1), Error);
}

TEST_CASE("allocator: best fit, merging and unsplit blocks", "[alloc]") {
  CachingAllocatorSim a;
  // Two large segments: 12 MiB and 20 MiB.
  auto x = a.allocate(12 * MiB);  // own 12 MiB segment, exact
  auto y = a.allocate(2 * MiB);   // 20 MiB segment: 2 MiB + 18 MiB free rest
  auto z = a.allocate(3 * MiB);   // from the 18 MiB rest: 3 MiB + 15 MiB free rest
  CHECK(a.reserved_bytes() == 32 * MiB);
  a.release(x);  // free: 12 MiB (segment 1), 15 MiB (segment 2)
  auto w = a.allocate(11 * MiB);  // best fit is the 12 MiB block; its 1 MiB rest is not split off
  CHECK(a.reserved_bytes() == 32 * MiB);
  CHECK(a.allocated_bytes() == 2 * MiB + 3 * MiB + 12 * MiB);
  a.release(y);
  a.release(z);  // merges with y's block and the 15 MiB rest: one 20 MiB free block
  auto v = a.allocate(19 * MiB);  // fits only because the blocks merged
  CHECK(a.reserved_bytes() == 32 * MiB);
  CHECK(a.allocated_bytes() == 12 * MiB + 20 * MiB);  // 1 MiB rest: not split
  auto u = a.allocate(4 * MiB);  // nothing free in the large pool: a new 20 MiB segment
  CHECK(a.reserved_bytes() == 52 * MiB);
  a.release(v);
  a.release(w);
  a.release(u);
  CHECK(a.allocated_bytes() == 0);
  CHECK_THROWS_WITH(a.allocate(-1), Catch::Contains("negative"));
  CHECK_THROWS_WITH(a.allocate(INT64_MAX), Catch::Contains("overflows"));
}

TEST_CASE("allocator: blocks of one segment serve several requests", "[alloc]") {
  // Two 10 MiB - 512 requests share one 20 MiB segment: the first splits
  // (rest 10 MiB + 512 > 1 MiB), the second takes that rest whole (1024 B left).
  CachingAllocatorSim a;
  a.allocate(10 * MiB - 512);
  a.allocate(10 * MiB - 512);
  CHECK(a.reserved_bytes() == 20 * MiB);
  CHECK(a.allocated_bytes() == 20 * MiB);
  // Two 1 MiB small requests share one 2 MiB segment.
  CachingAllocatorSim b;
  b.allocate(MiB);
  b.allocate(MiB);
  CHECK(b.reserved_bytes() == 2 * MiB);
}

TEST_CASE("allocator: a recorded start state's free holes take the first requests", "[alloc]") {
  // A 20 MiB large segment as a process left it: 10 MiB allocated, a 5 MiB
  // hole, 5 MiB allocated.
  const CachedSegment large{false, 20 * MiB, {{10 * MiB, true}, {5 * MiB, false}, {5 * MiB, true}}};
  CachingAllocatorSim a;
  const auto handles = a.add_segment(large);
  REQUIRE(handles.size() == 3);
  CHECK(a.allocated_bytes() == 15 * MiB);
  CHECK(a.reserved_bytes() == 20 * MiB);
  a.reset_peaks();
  // 4 MiB lands in the 5 MiB hole; the 1 MiB rest is not split off, so the
  // whole block counts (bert_dynamic's forward, docs/memory-as-executed.md).
  const auto four = a.allocate(4 * MiB);
  CHECK(a.allocated_bytes() == 20 * MiB);
  CHECK(a.reserved_bytes() == 20 * MiB);
  // From an empty cache the same request is split off a new segment: 4 MiB.
  CachingAllocatorSim cold;
  cold.allocate(4 * MiB);
  CHECK(cold.allocated_bytes() == 4 * MiB);
  // A recorded allocated block is released like any other and merges with
  // the free neighbours: 5 + 5 MiB, then a 9 MiB request fits without a new segment.
  a.release(four);
  a.release(handles[2]);
  a.allocate(9 * MiB);
  CHECK(a.reserved_bytes() == 20 * MiB);
  CHECK(a.peak_reserved_bytes() == 20 * MiB);
  CHECK(a.segments() == 1);
  // New segments go after the recorded ones.
  a.allocate(8 * MiB);
  CHECK(a.reserved_bytes() == 40 * MiB);
}

TEST_CASE("allocator: a malformed recorded segment is refused", "[alloc]") {
  CachingAllocatorSim a;
  CHECK_THROWS_AS(a.add_segment({false, 20 * MiB, {{10 * MiB, true}}}), Error);  // blocks short of the segment
  CHECK_THROWS_AS(a.add_segment({true, 0, {}}), Error);
  CHECK_THROWS_AS(a.add_segment({true, 2 * MiB, {{2 * MiB, false}, {0, false}}}), Error);
  CHECK(a.reserved_bytes() == 0);
}

TEST_CASE("allocator: under a cap, wholly free segments are released before a request is refused", "[alloc][cap]") {
  CachingAllocatorSim a;
  a.set_reserved_cap(120 * MiB);
  const auto x = a.allocate(40 * MiB);  // a 40 MiB segment of its own
  const auto y = a.allocate(30 * MiB);  // 30 MiB
  const auto s = a.allocate(4 * MiB);   // a 20 MiB segment, split: 16 MiB free beside it
  REQUIRE(a.reserved_bytes() == 90 * MiB);
  a.release(x);
  // No free block holds 60 MiB and a new segment would pass the cap
  // (90 + 60): the wholly free 40 MiB segment is released, then it fits.
  const auto z = a.allocate(60 * MiB);
  CHECK(z >= 0);
  CHECK(a.reserved_bytes() == 110 * MiB);
  CHECK(a.segments() == 3);
  // The free 16 MiB tail's segment still holds a live block: nothing to
  // release, so 20 MiB more (110 + 20) is refused, and nothing changes.
  CHECK(a.allocate(20 * MiB) == CachingAllocatorSim::kOutOfMemory);
  CHECK(a.reserved_bytes() == 110 * MiB);
  CHECK(a.allocated_bytes() == 94 * MiB);
  a.release(s);
  // Now that segment is wholly free: released for a 24 MiB one (90 + 24).
  CHECK(a.allocate(24 * MiB) >= 0);
  CHECK(a.reserved_bytes() == 114 * MiB);
  a.release(y);
  a.release(z);
  // Without a cap nothing is ever released.
  CachingAllocatorSim b;
  const auto w = b.allocate(40 * MiB);
  b.release(w);
  CHECK(b.allocate(60 * MiB) >= 0);
  CHECK(b.reserved_bytes() == 100 * MiB);
}
