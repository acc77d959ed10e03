#include "core/memory/capped.h"

#include <vector>

#include "core/alloc/caching_allocator.h"

namespace schedlab {

CappedRun run_under_cap(const Graph& g, const ExecutedMemory& ex, std::int64_t cap_bytes, const CapReplayOptions& o) {
  using Handle = CachingAllocatorSim::Handle;
  CachingAllocatorSim alloc;
  alloc.set_reserved_cap(cap_bytes);
  CappedRun out;
  const auto refused = [&](Handle h, NodeId at, std::int64_t bytes) {
    if (h != CachingAllocatorSim::kOutOfMemory) return false;
    out.ran = false;
    out.oom_at = at;
    out.oom_request_bytes = bytes;
    out.peak_reserved_bytes = alloc.peak_reserved_bytes();
    return true;
  };
  std::vector<Handle> handle(g.buffers.size(), CachingAllocatorSim::kNoBlock);
  for (BufId b = 0; b < static_cast<BufId>(ex.input_storage_bytes.size()); ++b) {
    handle[b] = alloc.allocate(ex.input_storage_bytes[b]);
    if (refused(handle[b], kNone, ex.input_storage_bytes[b])) return out;
  }
  if (refused(alloc.allocate(o.resident_bytes), kNone, o.resident_bytes)) return out;
  for (std::size_t i = 0; i < ex.events.size(); ++i) {
    const ExecutedEvent& e = ex.events[i];
    if (e.buf == kNone) {  // a workspace: its Allocate, then its Free
      if (o.workspaces) {
        const Handle h = alloc.allocate(e.bytes);
        if (refused(h, e.at, e.bytes)) return out;
        alloc.release(h);
      }
      ++i;
      continue;
    }
    switch (e.kind) {
      case ExecutedEvent::Kind::Allocate:
        handle[e.buf] = alloc.allocate(e.bytes);
        if (refused(handle[e.buf], e.at, e.bytes)) return out;
        break;
      case ExecutedEvent::Kind::Reuse:
        handle[e.buf] = handle[e.donor];
        break;
      case ExecutedEvent::Kind::Free:
        alloc.release(handle[e.buf]);
        handle[e.buf] = CachingAllocatorSim::kNoBlock;
        break;
    }
  }
  out.peak_reserved_bytes = alloc.peak_reserved_bytes();
  return out;
}

std::int64_t smallest_running_cap(const Graph& g, const ExecutedMemory& ex, const CapReplayOptions& o) {
  constexpr std::int64_t kUnit = kAllocSmallSegment;  // every segment is a multiple of 2 MiB
  const CappedRun uncapped = run_under_cap(g, ex, 0, o);
  std::int64_t lo = 0;                                         // in units; refused (or nothing to hold)
  std::int64_t hi = (uncapped.peak_reserved_bytes + kUnit - 1) / kUnit;  // runs: the cap is never reached
  if (hi == 0) return 0;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (run_under_cap(g, ex, mid * kUnit, o).ran ? hi : lo) = mid;
  }
  return hi * kUnit;
}

}  // namespace schedlab
