#include "core/gen/budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <limits>
#include <string>

#include "core/util/error.h"

namespace schedlab {
namespace {

std::uint64_t saturating_mul_u64(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}
std::uint64_t saturating_add_u64(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

}  // namespace

std::int64_t generated_product(std::initializer_list<std::int64_t> factors, std::string_view generator, std::string_view what,
                               std::string_view options) {
  std::int64_t p = 1;
  for (std::int64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p))
      throw OptionError(std::string(generator) + ": " + std::string(what) + " (" + std::string(options) + ") overflows 63 bits");
  return p;
}

std::uint64_t machine_memory_bytes() {
#ifdef __EMSCRIPTEN__
  return std::uint64_t{4} << 30;
#else
  // Physical memory, or less where this process may not use it all
  // (`ulimit -v`, `ulimit -d`).
  std::uint64_t have = std::numeric_limits<std::uint64_t>::max();  // not known: nothing refused
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) have = saturating_mul_u64(static_cast<std::uint64_t>(pages), static_cast<std::uint64_t>(page));
  // An address-space limit counts mappings the resident set does not
  // (malloc's arenas, a string's spare capacity while it doubles): a
  // quarter of it is kept for them.
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit limit {};
    if (::getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur / 4 * 3 < have) have = limit.rlim_cur / 4 * 3;
  }
  return have;
#endif
}

void check_generated_size(std::string_view generator, std::string_view options, std::uint64_t nodes, std::uint64_t deps) {
  const std::uint64_t need =
      saturating_add_u64(saturating_mul_u64(nodes, kGeneratedBytesPerNode), saturating_mul_u64(deps, kGeneratedBytesPerDep));
  const std::uint64_t have = machine_memory_bytes();
  if (need > have)
    throw OptionError(std::string(generator) + ": " + std::string(options) + ": about " + std::to_string(need) + " bytes for " +
                      std::to_string(nodes) + " nodes and " + std::to_string(deps) + " reads and writes, more than this machine's " +
                      std::to_string(have) + " bytes of memory");
}

}  // namespace schedlab
