// Memory as executed: in-place reuse, the wrapper's reuse pool and the
// caching allocator on hand-made graphs whose allocations can be listed by hand.
#include <catch2/catch.hpp>

#include "core/io/graph_reader.h"
#include "core/memory/estimate.h"
#include "core/memory/executed.h"
#include "core/memory/planning_info.h"

using namespace schedlab;

namespace {
constexpr std::int64_t MiB = 1 << 20;

// x -> mm (extern, 4 MiB) -> relu (pointwise, same index, 4 MiB) -> out.
// The relu's read of the mm result is its last use: the generated code
// writes the relu in place (`buf1 = buf0; del buf0  # reuse`).
const char* kInplace = R"({"format":"schedgraph/1","name":"inplace",
  "inputs":[{"name":"primals_1","bytes":4194304}],"outputs":["buf1"],
  "nodes":[
    {"name":"op0","kind":"extern","kernel":"extern_kernels.mm",
     "outputs":[{"name":"buf0","bytes":4194304,"dtype":"f32"}],
     "reads":[{"name":"primals_1","dep":"star","bytes":4194304}],"writes":[{"name":"buf0","dep":"star","bytes":4194304}]},
    {"name":"op1","kind":"pointwise","group":[1048576,1],
     "outputs":[{"name":"buf1","bytes":4194304,"dtype":"f32"}],
     "reads":[{"name":"buf0","index":"d0","size":[1048576],"bytes":4194304}],
     "writes":[{"name":"buf1","index":"d0","size":[1048576],"bytes":4194304}]}
  ]})";

}  // namespace

TEST_CASE("memory as executed: an output written in place over a dying input", "[memory][executed]") {
  Graph g = load_graph(kInplace);
  ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
  CHECK(m.inplace_reuses == 1);
  // The scheduler counts buf0 and buf1 together at op1 (8 MiB); the code holds one.
  MemoryPlanningInfo info = compute_planning_info(g, g.baseline_order());
  CHECK(estimate_peak_memory(g, info, g.baseline_order()).peak == 8 * MiB);
  CHECK(m.peak_bytes == 4 * MiB);
  // Input: one 20 MiB large segment (4 MiB split off); buf0 fits in its rest.
  CHECK(m.allocated_before_bytes == 4 * MiB);
  CHECK(m.reserved_bytes == 20 * MiB);
  REQUIRE(m.events.size() == 2);
  CHECK(m.events[1].kind == ExecutedEvent::Kind::Reuse);
  CHECK(g.buffers[m.events[1].donor].name == "buf0");
}

TEST_CASE("memory as executed: no in-place reuse when the index differs or the input lives on", "[memory][executed]") {
  // The relu reads buf0 through another index (the first "index" is op1's read).
  std::string transposed = kInplace;
  transposed.replace(transposed.find(R"("index":"d0")"), 12, R"("index":"d1")");
  // A second reader after op1 keeps buf0 alive: no reuse either.
  std::string read_later = kInplace;
  read_later.replace(read_later.rfind("]}"), 2, R"(,
    {"name":"op2","kind":"pointwise","group":[1048576,1],"outputs":[{"name":"buf2","bytes":4194304,"dtype":"f32"}],
     "reads":[{"name":"buf0","index":"d0","size":[1048576],"bytes":4194304}],
     "writes":[{"name":"buf2","index":"d0","size":[1048576],"bytes":4194304}]}]})");
  read_later.replace(read_later.find(R"("outputs":["buf1"])"), 18, R"("outputs":["buf1","buf2"])");
  for (int later : {0, 1}) {
    Graph g = load_graph(later ? read_later : transposed);
    ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
    CHECK(m.inplace_reuses == later);  // op2 may still take buf0 over at its own last use
    CHECK(m.peak_bytes >= 8 * MiB);
  }
}

TEST_CASE("memory as executed: the reuse pool keeps a freed buffer until its taker", "[memory][executed]") {
  // op0 -> a (2 MiB, extern); op1 reads a -> b (1 MiB); a dies at op1 and goes
  // to the pool; op2 makes c (1 MiB, other dtype); op3 (extern, 2 MiB f32)
  // takes a's storage: a stays allocated from op1 to op3.
  Graph g = load_graph(R"({"format":"schedgraph/1","name":"pool",
    "inputs":[{"name":"primals_1","bytes":512}],"outputs":["b","c","d"],
    "nodes":[
      {"name":"op0","kind":"extern","kernel":"extern_kernels.mm","outputs":[{"name":"a","bytes":2097152,"dtype":"f32"}],
       "reads":[{"name":"primals_1","dep":"star","bytes":512}]},
      {"name":"op1","kind":"reduction","group":[1,1],"outputs":[{"name":"b","bytes":1048576,"dtype":"f32"}],
       "reads":[{"name":"a","dep":"star","bytes":2097152}]},
      {"name":"op2","kind":"pointwise","group":[1,1],"outputs":[{"name":"c","bytes":1048576,"dtype":"bf16"}],
       "reads":[{"name":"b","dep":"star","bytes":1048576}]},
      {"name":"op3","kind":"extern","kernel":"extern_kernels.mm","outputs":[{"name":"d","bytes":2097152,"dtype":"f32"}],
       "reads":[{"name":"c","dep":"star","bytes":1048576}]}
    ]})");
  ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
  CHECK(m.pool_reuses == 1);
  CHECK(m.inplace_reuses == 0);
  // Live at op2: a (pooled, 2 MiB) + b + c = 4 MiB; the scheduler frees a after op1 (3 MiB at op2, 4 MiB at op3).
  CHECK(m.peak_bytes == 4 * MiB);
  MemoryPlanningInfo info = compute_planning_info(g, g.baseline_order());
  CHECK(estimate_peak_memory(g, info, g.baseline_order()).peak == 4 * MiB);
  bool reused_a = false;
  for (const auto& e : m.events) reused_a = reused_a || (e.kind == ExecutedEvent::Kind::Reuse && g.buffers[e.donor].name == "a");
  CHECK(reused_a);
}

TEST_CASE("memory as executed: observed sizes replace data-dependent ones", "[memory][executed]") {
  Graph g = load_graph(kInplace);
  ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order(), {{"buf0", 6 * MiB}});
  // buf0 is now larger than buf1's 4 MiB by more than 5 %: no in-place reuse, both live at op1.
  CHECK(m.inplace_reuses == 0);
  CHECK(m.peak_bytes == 10 * MiB);
  CHECK_THROWS(estimate_memory_as_executed(g, Order{0}));
}
