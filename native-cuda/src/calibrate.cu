#include "native-cuda/src/calibrate.h"

#include <algorithm>
#include <functional>

#include "native-cuda/src/cuda_check.h"

namespace schedlab::gpu {
namespace {

constexpr std::int64_t kMiB = 1 << 20;

// Median time of `work` on `stream`, in microseconds, over `reps` runs after
// `warmup` untimed ones; `per_run` launches of it between two events.
double time_us(cudaStream_t stream, int warmup, int reps, int per_run, const std::function<void()>& work) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < warmup; ++i) work();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventRecord(a, stream));
    for (int j = 0; j < per_run; ++j) work();
    CUDA_CHECK(cudaEventRecord(b, stream));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.0 / per_run);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

CalibrationMeasurements run_calibration(GpuRuntime& rt, const CalibrateOptions& opts) {
  CalibrationMeasurements m;
  m.device_name = rt.device_name();
  m.device_count = visible_gpus();
  cudaStream_t s = rt.compute_stream();

  const std::vector<std::int64_t> copy_sizes = opts.quick ? std::vector<std::int64_t>{64 * kMiB}
                                                          : std::vector<std::int64_t>{256 * kMiB, 1024 * kMiB, 2048 * kMiB};
  const std::vector<std::int64_t> gemm_sides = opts.quick ? std::vector<std::int64_t>{1024}
                                                          : std::vector<std::int64_t>{2048, 4096, 8192};
  const std::vector<std::int64_t> coll_sizes = opts.quick ? std::vector<std::int64_t>{kMiB}
                                                          : std::vector<std::int64_t>{64 << 10, kMiB, 16 * kMiB, 256 * kMiB};
  const std::int64_t side = gemm_sides.back();
  const std::int64_t ranks = rt.ranks();
  rt.reserve_scratch(std::max({copy_sizes.back(), 2 * side * side * 4, ranks * coll_sizes.back()}),
                     std::max({copy_sizes.back(), side * side * 4, coll_sizes.back()}));

  for (std::int64_t bytes : copy_sizes)
    m.copies.push_back({bytes, time_us(s, 2, 10, 1, [&] { rt.copy(s, bytes); })});

  for (const char* dtype : {"f32", "tf32", "bf16", "f16"})
    for (std::int64_t n : gemm_sides) {
      GemmShape shape;
      shape.m = shape.n = shape.k = n;
      m.gemms.push_back({dtype, n, n, n, time_us(s, 2, 10, 1, [&] { rt.gemm(s, dtype, shape); })});
    }

  m.launch_us = time_us(s, 100, 5, 2000, [&] { rt.empty_kernel(s); });

  if (ranks >= 2)
    for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter})
      for (std::int64_t bytes : coll_sizes)
        m.collectives.push_back({op, bytes, ranks, time_us(s, 5, 20, 1, [&] { rt.collective(op, "bf16", bytes, s); })});
  rt.synchronize_all();
  return m;
}

}  // namespace schedlab::gpu
