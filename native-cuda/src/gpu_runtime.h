// native-cuda/src — the GPUs one process drives: per rank a device, a
// compute and a communication stream, scratch operands, and (with two or
// more ranks) an NCCL communicator from ncclCommInitAll. Stand-in kernels
// run on rank 0; the other ranks only take part in collectives, so a
// collective's time on rank 0 is the collective's own cost.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/graph/graph.h"
#include "native-cuda/host/stand_in.h"

namespace schedlab::gpu {

bool nccl_available();  // built with NCCL
int visible_gpus();

class GpuRuntime {
 public:
  // Opens GPUs 0..ranks-1; `ranks` >= 2 needs NCCL. Throws Error.
  explicit GpuRuntime(int ranks);
  ~GpuRuntime();
  GpuRuntime(const GpuRuntime&) = delete;
  GpuRuntime& operator=(const GpuRuntime&) = delete;

  int ranks() const { return static_cast<int>(ranks_.size()); }
  const std::string& device_name() const { return device_name_; }
  cudaStream_t compute_stream() const { return ranks_[0].compute; }
  cudaStream_t comm_stream() const { return ranks_[0].comm; }

  // Grows every rank's scratch operands to at least these sizes and fills
  // them with finite, non-zero values (zeros run faster than real data).
  void reserve_scratch(std::int64_t src_bytes, std::int64_t dst_bytes);

  // Stand-ins on rank 0, operands in scratch.
  void gemm(cudaStream_t stream, std::string_view dtype, const GemmShape& shape);  // dtype: f32, tf32, bf16, f16
  void touch(cudaStream_t stream, std::int64_t read_bytes, std::int64_t write_bytes);
  void empty_kernel(cudaStream_t stream);
  // One collective on every rank: rank 0 on `rank0_stream`, the others on
  // their communication stream. Sizes as operand_bytes() gives them.
  void collective(CollectiveOp op, std::string_view dtype, std::int64_t payload_bytes, cudaStream_t rank0_stream);
  // Plain device-to-device copy of `bytes` within rank 0's scratch.
  void copy(cudaStream_t stream, std::int64_t bytes);

  void synchronize_all();

 private:
  struct Rank {
    int device = 0;
    cudaStream_t compute = nullptr, comm = nullptr;
    void* src = nullptr;
    void* dst = nullptr;
    std::int64_t src_bytes = 0, dst_bytes = 0;
    void* nccl = nullptr;  // ncclComm_t
  };
  std::vector<Rank> ranks_;
  std::string device_name_;
  int sm_count_ = 0;
  cublasHandle_t cublas_ = nullptr;
  void* cublas_workspace_ = nullptr;
};

}  // namespace schedlab::gpu
