// core/io — transparent huge pages for the large buffers a load fills at
// once (a graph's text, the JSON tape, the graph's node and buffer tables).
//
// Why: every fresh 4 KiB page costs a fault and a clear; on a 100k-node
// graph those faults were a third of the load's CPU time. With 2 MiB pages
// there are 512 times fewer. The kernel's default here is "madvise" (huge
// pages only where asked), so we ask, for buffers of 4 MiB and more, before
// they are written. Native Linux only; elsewhere (WASM) it does nothing.
#pragma once

#include <cstddef>

namespace schedlab {

void prefer_huge_pages(const void* data, std::size_t bytes);

template <typename Vector>
void prefer_huge_pages_for_capacity(const Vector& v) {
  prefer_huge_pages(v.data(), v.capacity() * sizeof(typename Vector::value_type));
}

}  // namespace schedlab
