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

// What the runs need to know once, before the first: which steps execute,
// what each wait waits for, and the scratch the largest stand-in needs.
struct RunPlan {
  std::vector<std::uint8_t> runs;                    // step executes its stand-in
  std::vector<std::vector<std::size_t>> waits_for;  // steps whose end a wait joins
  OperandBytes scratch;
};

RunPlan plan_runs(const GpuRuntime& rt, const Graph& g, const ExecutionSchedule& schedule,
                  const std::vector<StandIn>& stand_ins, RunMeasurements& m) {
  const std::size_t n = schedule.steps.size();
  const bool collectives_run = rt.ranks() >= 2;
  RunPlan plan{std::vector<std::uint8_t>(n, 0), std::vector<std::vector<std::size_t>>(n), {}};
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
        if (plan.runs[step_of[c]]) plan.waits_for[t].push_back(step_of[c]);
    if (s.kind == StandInKind::None) continue;
    plan.runs[t] = 1;
    const OperandBytes need = operand_bytes(s, rt.ranks());
    plan.scratch.src = std::max(plan.scratch.src, need.src);
    plan.scratch.dst = std::max(plan.scratch.dst, need.dst);
  }
  return plan;
}

// Runs the schedule's steps in order on the device: each step's allocations
// from the pool, the joins of its waits, its stand-in between two events,
// then its releases. Holds the events, so the timed runs can read them back.
class ScheduleRunner {
 public:
  ScheduleRunner(GpuRuntime& rt, const ExecutionSchedule& schedule, const std::vector<StandIn>& stand_ins,
                 const RunPlan& plan, bool overlap)
      : rt_(rt), schedule_(schedule), stand_ins_(stand_ins), plan_(plan), pool_(rt.device()),
        start_(schedule.steps.size()), end_(schedule.steps.size()), marks_(4),
        compute_(rt.compute_stream()), comm_(overlap ? rt.comm_stream() : rt.compute_stream()),
        ptr_(schedule.blocks.size(), nullptr) {}

  BlockPool& pool() { return pool_; }
  float step_us(std::size_t t) const { return elapsed_us(start_[t], end_[t]); }
  float wall_us() const { return elapsed_us(marks_[0], marks_[1]); }

  // One whole run. `memory`, when given, is the memory pass: synchronize
  // after each step's work to read the device's used memory before the
  // step's frees, and record the live peak.
  void run_once(MemoryMeasurement* memory) {
    std::int64_t live = 0;
    const std::int64_t base_used = memory ? device_used_bytes() : 0;
    CUDA_CHECK(cudaEventRecord(marks_[0], compute_));
    for (std::size_t t = 0; t < schedule_.steps.size(); ++t) {
      const ExecutionStep& step = schedule_.steps[t];
      live += allocate(step);
      if (memory && live > memory->live_peak_bytes) {
        memory->live_peak_bytes = live;
        memory->live_peak_step = static_cast<std::int32_t>(t);
      }
      for (std::size_t c : plan_.waits_for[t]) CUDA_CHECK(cudaStreamWaitEvent(compute_, end_[c], 0));
      if (plan_.runs[t]) launch(t, stand_ins_[step.node]);
      if (memory) {
        rt_.synchronize_all();
        memory->device_used_delta_bytes = std::max(memory->device_used_delta_bytes, device_used_bytes() - base_used);
      }
      live -= release(step.release);
    }
    if (comm_ != compute_) {  // collectives no wait joined
      CUDA_CHECK(cudaEventRecord(marks_[3], comm_));
      CUDA_CHECK(cudaStreamWaitEvent(compute_, marks_[3], 0));
    }
    CUDA_CHECK(cudaEventRecord(marks_[1], compute_));
    release(schedule_.release_at_end);
    rt_.synchronize_all();
  }

 private:
  std::int64_t allocate(const ExecutionStep& step) {
    std::int64_t bytes_allocated = 0;
    for (auto b : step.allocate) {
      const std::int64_t bytes = schedule_.blocks[b].bytes;
      if (bytes > 0)
        CUDA_CHECK(cudaMallocFromPoolAsync(&ptr_[b], static_cast<std::size_t>(bytes), pool_.get(), compute_));
      bytes_allocated += bytes;
    }
    return bytes_allocated;
  }

  template <class Blocks>
  std::int64_t release(const Blocks& blocks) {
    std::int64_t bytes_released = 0;
    for (auto b : blocks) {
      if (ptr_[b]) CUDA_CHECK(cudaFreeAsync(ptr_[b], compute_));
      ptr_[b] = nullptr;
      bytes_released += schedule_.blocks[b].bytes;
    }
    return bytes_released;
  }

  // A collective goes to the communication stream after the compute before
  // it, as Inductor's runtime issues it; everything else to compute.
  void launch(std::size_t t, const StandIn& s) {
    cudaStream_t st = compute_;
    if (s.kind == StandInKind::Collective && comm_ != compute_) {
      CUDA_CHECK(cudaEventRecord(marks_[2], compute_));
      CUDA_CHECK(cudaStreamWaitEvent(comm_, marks_[2], 0));
      st = comm_;
    }
    CUDA_CHECK(cudaEventRecord(start_[t], st));
    switch (s.kind) {
      case StandInKind::Gemm: rt_.gemm(st, gemm_compute_dtype(s.dtype), s.gemm); break;
      case StandInKind::Memory: rt_.touch(st, s.read_bytes, s.write_bytes); break;
      case StandInKind::Collective: rt_.collective(s.op, s.dtype, s.collective_bytes, st); break;
      case StandInKind::None: break;
    }
    CUDA_CHECK(cudaEventRecord(end_[t], st));
  }

  GpuRuntime& rt_;
  const ExecutionSchedule& schedule_;
  const std::vector<StandIn>& stand_ins_;
  const RunPlan& plan_;
  BlockPool pool_;
  Events start_, end_;
  Events marks_;  // 0, 1: whole-run span; 2: compute ready for a collective; 3: communication done
  cudaStream_t compute_, comm_;
  std::vector<void*> ptr_;
};

}  // namespace

RunMeasurements execute_schedule(GpuRuntime& rt, const Graph& g, const ExecutionSchedule& schedule,
                                 const std::vector<StandIn>& stand_ins, const ExecuteOptions& opts) {
  const std::size_t n = schedule.steps.size();
  RunMeasurements m;
  m.device_name = rt.device_name();
  m.device_count = visible_gpus();
  m.collective_ranks = rt.ranks() >= 2 ? rt.ranks() : 1;
  m.repetitions = opts.repetitions;
  m.steps.resize(n);

  const RunPlan plan = plan_runs(rt, g, schedule, stand_ins, m);
  rt.reserve_scratch(plan.scratch.src, plan.scratch.dst);
  ScheduleRunner runner(rt, schedule, stand_ins, plan, opts.overlap);

  // The memory pass gives memory back at every synchronization; the timed
  // runs keep it, so they make no driver calls.
  runner.pool().reset_high_marks();
  runner.pool().set_release_threshold(0);
  runner.run_once(&m.memory);
  runner.pool().set_release_threshold(std::numeric_limits<std::uint64_t>::max());
  for (int i = 0; i < opts.warmup; ++i) runner.run_once(nullptr);

  std::vector<std::vector<double>> samples(n);
  std::vector<double> walls;
  for (int i = 0; i < opts.repetitions; ++i) {
    runner.run_once(nullptr);
    for (std::size_t t = 0; t < n; ++t)
      if (plan.runs[t]) samples[t].push_back(runner.step_us(t));
    walls.push_back(runner.wall_us());
  }
  for (std::size_t t = 0; t < n; ++t)
    if (plan.runs[t]) {
      m.steps[t].executed = true;
      m.steps[t].us = median(samples[t]);
    }
  m.wall_us = median(walls);
  m.memory.pool_used_high_bytes = runner.pool().attribute(cudaMemPoolAttrUsedMemHigh);
  m.memory.pool_reserved_high_bytes = runner.pool().attribute(cudaMemPoolAttrReservedMemHigh);
  return m;
}

}  // namespace schedlab::gpu
