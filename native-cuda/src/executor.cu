#include "native-cuda/src/executor.h"

#include <algorithm>
#include <limits>

#include "native-cuda/src/cuda_check.h"

namespace schedlab::gpu {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The collectives a wait node waits for: producers of what it reads, down
// each buffer's mutation chain (an in-place all_reduce_ writes a mutation).
std::vector<NodeId> collectives_waited(const Graph& g, NodeId wait) {
  std::vector<NodeId> out;
  for (const Dep& d : g.nodes[wait].reads)
    for (BufId b = d.buf; b != kNone; b = g.buffers[b].mutation_of) {
      const NodeId p = g.buffers[b].producer;
      if (p != kNone && g.nodes[p].kind == NodeKind::Collective && std::find(out.begin(), out.end(), p) == out.end())
        out.push_back(p);
    }
  return out;
}

std::int64_t device_used_bytes() {
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return static_cast<std::int64_t>(total_b - free_b);
}

// A CUDA memory pool on the timed GPU whose allocations are the schedule's blocks.
class BlockPool {
 public:
  explicit BlockPool(int device) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
  }
  ~BlockPool() { cudaMemPoolDestroy(pool_); }
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  cudaMemPool_t get() const { return pool_; }
  // 0: give memory back at every synchronization (the memory pass);
  // max: keep it (the timed runs, so they make no driver calls).
  void set_release_threshold(std::uint64_t bytes) {
    CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &bytes));
  }
  void reset_high_marks() {
    std::uint64_t zero = 0;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &zero));
    CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &zero));
  }
  std::int64_t attribute(cudaMemPoolAttr a) const {
    std::uint64_t v = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool_, a, &v));
    return static_cast<std::int64_t>(v);
  }

 private:
  cudaMemPool_t pool_ = nullptr;
};

class Events {
 public:
  explicit Events(std::size_t n) : events_(n) {
    for (auto& e : events_) CUDA_CHECK(cudaEventCreate(&e));
  }
  ~Events() {
    for (auto e : events_) cudaEventDestroy(e);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t operator[](std::size_t i) const { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms * 1000.0f;
}

}  // namespace

RunMeasurements execute_schedule(GpuRuntime& rt, const Graph& g, const ExecutionSchedule& schedule,
                                 const std::vector<StandIn>& stand_ins, const ExecuteOptions& opts) {
  const std::size_t n = schedule.steps.size();
  const bool collectives_run = rt.ranks() >= 2;
  RunMeasurements m;
  m.device_name = rt.device_name();
  m.device_count = visible_gpus();
  m.collective_ranks = collectives_run ? rt.ranks() : 1;
  m.repetitions = opts.repetitions;
  m.steps.resize(n);

  // Scratch for the largest stand-in; which steps run; what each wait waits for.
  OperandBytes scratch;
  std::vector<std::uint8_t> runs(n, 0);
  std::vector<std::vector<std::size_t>> waits_for(n);
  std::vector<std::size_t> step_of(g.nodes.size());
  for (std::size_t t = 0; t < n; ++t) step_of[schedule.steps[t].node] = t;
  for (std::size_t t = 0; t < n; ++t) {
    const NodeId v = schedule.steps[t].node;
    const StandIn& s = stand_ins[v];
    if (s.kind == StandInKind::Collective && !collectives_run) {
      m.steps[t].not_executed = rt.ranks() == 1 && visible_gpus() < 2 ? "one GPU: a collective needs two or more"
                                                                        : "run with --ranks 2 or more to execute collectives";
      continue;
    }
    if (g.nodes[v].kind == NodeKind::Wait)
      for (NodeId c : collectives_waited(g, v))
        if (runs[step_of[c]]) waits_for[t].push_back(step_of[c]);
    if (s.kind == StandInKind::None) continue;
    runs[t] = 1;
    const OperandBytes need = operand_bytes(s, rt.ranks());
    scratch.src = std::max(scratch.src, need.src);
    scratch.dst = std::max(scratch.dst, need.dst);
  }
  rt.reserve_scratch(scratch.src, scratch.dst);

  BlockPool pool(rt.device());
  Events start(n), end(n);
  Events marks(4);  // 0, 1: whole-run span; 2: compute ready for a collective; 3: communication done
  cudaStream_t compute = rt.compute_stream();
  cudaStream_t comm = opts.overlap ? rt.comm_stream() : compute;
  std::vector<void*> ptr(schedule.blocks.size(), nullptr);

  // One whole run of the schedule. `memory_pass`: synchronize after each
  // step's work to read the device's used memory before the step's frees.
  auto run_once = [&](bool memory_pass) {
    std::int64_t live = 0, base_used = memory_pass ? device_used_bytes() : 0;
    CUDA_CHECK(cudaEventRecord(marks[0], compute));
    for (std::size_t t = 0; t < n; ++t) {
      const ExecutionStep& step = schedule.steps[t];
      for (auto b : step.allocate) {
        const std::int64_t bytes = schedule.blocks[b].bytes;
        if (bytes > 0) CUDA_CHECK(cudaMallocFromPoolAsync(&ptr[b], static_cast<std::size_t>(bytes), pool.get(), compute));
        live += bytes;
      }
      if (live > m.memory.live_peak_bytes) {
        m.memory.live_peak_bytes = live;
        m.memory.live_peak_step = static_cast<std::int32_t>(t);
      }
      const StandIn& s = stand_ins[step.node];
      for (std::size_t c : waits_for[t]) CUDA_CHECK(cudaStreamWaitEvent(compute, end[c], 0));
      if (runs[t]) {
        cudaStream_t st = compute;
        if (s.kind == StandInKind::Collective && comm != compute) {
          CUDA_CHECK(cudaEventRecord(marks[2], compute));
          CUDA_CHECK(cudaStreamWaitEvent(comm, marks[2], 0));
          st = comm;
        }
        CUDA_CHECK(cudaEventRecord(start[t], st));
        switch (s.kind) {
          case StandInKind::Gemm: rt.gemm(st, gemm_compute_dtype(s.dtype), s.gemm); break;
          case StandInKind::Memory: rt.touch(st, s.read_bytes, s.write_bytes); break;
          case StandInKind::Collective: rt.collective(s.op, s.dtype, s.collective_bytes, st); break;
          case StandInKind::None: break;
        }
        CUDA_CHECK(cudaEventRecord(end[t], st));
      }
      if (memory_pass) {
        rt.synchronize_all();
        m.memory.device_used_delta_bytes = std::max(m.memory.device_used_delta_bytes, device_used_bytes() - base_used);
      }
      for (auto b : step.release) {
        if (ptr[b]) CUDA_CHECK(cudaFreeAsync(ptr[b], compute));
        ptr[b] = nullptr;
        live -= schedule.blocks[b].bytes;
      }
    }
    if (comm != compute) {  // collectives no wait joined
      CUDA_CHECK(cudaEventRecord(marks[3], comm));
      CUDA_CHECK(cudaStreamWaitEvent(compute, marks[3], 0));
    }
    CUDA_CHECK(cudaEventRecord(marks[1], compute));
    for (auto b : schedule.release_at_end) {
      if (ptr[b]) CUDA_CHECK(cudaFreeAsync(ptr[b], compute));
      ptr[b] = nullptr;
    }
    rt.synchronize_all();
  };

  pool.reset_high_marks();
  pool.set_release_threshold(0);
  run_once(/*memory_pass=*/true);
  pool.set_release_threshold(std::numeric_limits<std::uint64_t>::max());
  for (int i = 0; i < opts.warmup; ++i) run_once(false);
  std::vector<std::vector<double>> samples(n);
  std::vector<double> walls;
  for (int i = 0; i < opts.repetitions; ++i) {
    run_once(false);
    for (std::size_t t = 0; t < n; ++t)
      if (runs[t]) samples[t].push_back(elapsed_us(start[t], end[t]));
    walls.push_back(elapsed_us(marks[0], marks[1]));
  }
  for (std::size_t t = 0; t < n; ++t)
    if (runs[t]) {
      m.steps[t].executed = true;
      m.steps[t].us = median(samples[t]);
    }
  m.wall_us = median(walls);
  m.memory.pool_used_high_bytes = pool.attribute(cudaMemPoolAttrUsedMemHigh);
  m.memory.pool_reserved_high_bytes = pool.attribute(cudaMemPoolAttrReservedMemHigh);
  return m;
}

}  // namespace schedlab::gpu
