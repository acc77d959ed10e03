// core/util — depth-first post-order over "must come first" edges, without
// recursion (million-node chains must not overflow the stack).
//
// From each root in `roots` order, `first_of(v)` lists the ids that must be
// emitted before v, in the order to visit them; `emit(v)` is called once per
// reached id, after everything it lists. `try_mark(v)` marks v as reached and
// returns false when it already was, so callers keep their own mark storage
// (a bool vector, an epoch stamp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace schedlab {

template <typename Roots, typename TryMark, typename FirstOf, typename Emit>
void depth_first_postorder(const Roots& roots, TryMark&& try_mark, FirstOf&& first_of, Emit&& emit) {
  struct Frame {
    std::int32_t id;
    std::vector<std::int32_t> first;
    std::size_t next = 0;
  };
  std::vector<Frame> stack;
  for (std::int32_t root : roots) {
    if (!try_mark(root)) continue;
    stack.push_back({root, first_of(root)});
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next == f.first.size()) {
        emit(f.id);
        stack.pop_back();
        continue;
      }
      const std::int32_t p = f.first[f.next++];
      if (try_mark(p)) stack.push_back({p, first_of(p)});  // may reallocate: `f` is not used after this
    }
  }
}

}  // namespace schedlab
