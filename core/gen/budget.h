// core/gen — what a generator may build: refused up front, before anything
// is allocated, when the graph it would make (the Graph, and its JSON text
// when written) cannot fit in the machine's memory, and when a size it
// computes overflows 63 bits. Both throw OptionError naming the generator's
// options, so a documented maximum is either built or refused, never run out
// of memory or written with a wrapped number.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace schedlab {

// The product of `factors`, exactly; else OptionError "`generator`: `what`
// (`options`) overflows 63 bits".
std::int64_t generated_product(std::initializer_list<std::int64_t> factors, std::string_view generator, std::string_view what,
                               std::string_view options);

// Bytes a generated graph takes while built and written: per node (its
// record, output buffer, name and JSON text) and per read or write (a Dep
// and its JSON). Peak resident sets measured against them (estimate in
// brackets): gen layered --nodes 400000 --fan-in 1, 767 MB (1024);
// --nodes 50000 --fan-in 64, 865 MB (934); gen-dist tp --layers 5000
// --microbatches 8, 542 MB (645); gen-dist fsdp --layers 20000, 788 MB (850).
inline constexpr std::uint64_t kGeneratedBytesPerNode = 2048, kGeneratedBytesPerDep = 256;

// The machine's physical memory, or three quarters of the process's limit
// (RLIMIT_AS, RLIMIT_DATA) when lower; a wasm32 module: its 4 GiB address
// space.
std::uint64_t machine_memory_bytes();

// OptionError "`generator`: `options`: about B bytes for N nodes and D reads
// and writes, more than this machine's M bytes of memory" when the graph
// would not fit. Counts saturate, so a product too large for 64 bits is
// refused too.
void check_generated_size(std::string_view generator, std::string_view options, std::uint64_t nodes, std::uint64_t deps);

}  // namespace schedlab
