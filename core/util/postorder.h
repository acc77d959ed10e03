// core/util — depth-first post-order over "must come first" edges, without
// recursion (million-node chains must not overflow the stack).
//
// From each root in `roots` order, `first_of(v, out)` appends to `out` the
// ids that must be emitted before v, in the order to visit them; `emit(v)` is
// called once per reached id, after everything it lists. `try_mark(v)` marks
// v as reached and returns false when it already was, so callers keep their
// own mark storage (a bool vector, an epoch stamp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace schedlab {

template <typename Roots, typename TryMark, typename FirstOf, typename Emit>
void depth_first_postorder(const Roots& roots, TryMark&& try_mark, FirstOf&& first_of, Emit&& emit) {
  // Frames are pushed and popped last in, first out, so each frame's list
  // sits on top of its parent's in one shared array: no list of its own to
  // allocate per visited id (the fusion rounds sort 60k nodes each round).
  struct Frame {
    std::int32_t id;
    std::size_t begin, next, end;  // its list: pending[begin, end), visited up to next
  };
  std::vector<Frame> stack;
  std::vector<std::int32_t> pending;
  auto push = [&](std::int32_t id) {
    const std::size_t begin = pending.size();
    first_of(id, pending);
    stack.push_back({id, begin, begin, pending.size()});
  };
  for (std::int32_t root : roots) {
    if (!try_mark(root)) continue;
    push(root);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next == f.end) {
        emit(f.id);
        pending.resize(f.begin);  // the top frame's list is the last one in `pending`
        stack.pop_back();
        continue;
      }
      const std::int32_t p = pending[f.next++];
      if (try_mark(p)) push(p);  // may reallocate: `f` is not used after this
    }
  }
}

}  // namespace schedlab
