#include "cli/commands.h"
#include "core/util/error.h"
namespace schedlab::cli {
int cmd_gen(const Args&) { throw UsageError("gen: not built yet"); }
int cmd_bench(const Args&) { throw UsageError("bench: not built yet"); }
}
