// native-cuda/src — the calibration microbenchmarks (their arithmetic and
// the profile they make are in native-cuda/host/calibration.h):
//   DRAM      cudaMemcpyAsync device-to-device, 256 MiB to 2 GiB
//   GEMM      cuBLAS f32 (no tensor cores), tf32, bf16, f16 at 2048³-8192³
//   launch    back-to-back empty kernels on one stream, per kernel
//   NCCL      all-reduce, all-gather, reduce-scatter, 64 KiB to 256 MiB
//             payload, over every rank (two or more GPUs)
// Each figure is the median of timed repetitions after warm-up runs.
#pragma once

#include "native-cuda/host/calibration.h"
#include "native-cuda/src/gpu_runtime.h"

namespace schedlab::gpu {

struct CalibrateOptions {
  bool quick = false;  // the smallest size of each benchmark only (a smoke test)
};

CalibrationMeasurements run_calibration(GpuRuntime& rt, const CalibrateOptions& opts);

}  // namespace schedlab::gpu
