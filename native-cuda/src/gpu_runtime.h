// native-cuda/src — the GPUs one process drives: per local rank a device, a
// compute and a communication stream, scratch operands, and an NCCL
// communicator. Two modes:
//   single process  every GPU of the machine, ncclCommInitAll; stand-in
//                   kernels run on rank 0, the other ranks only take part in
//                   collectives
//   one process per GPU  this process's GPU (LOCAL_RANK), ncclCommInitRank
//                   with the id from the rendezvous (bootstrap.h); every
//                   rank runs the whole graph
// Either way "local rank 0" is the GPU this process times.
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
std::vector<std::uint8_t> make_nccl_unique_id();  // ncclGetUniqueId (rank 0 of a multi-process run)
int visible_gpus();

class GpuRuntime {
 public:
  // Opens GPUs 0..ranks-1; `ranks` >= 2 needs NCCL. Throws Error.
  explicit GpuRuntime(int ranks);
  // One rank of a multi-process run: GPU `local_rank`, `world_size` ranks.
  GpuRuntime(int local_rank, int world_size, int rank, const std::vector<std::uint8_t>& nccl_id);
  ~GpuRuntime();
  GpuRuntime(const GpuRuntime&) = delete;
  GpuRuntime& operator=(const GpuRuntime&) = delete;

  int ranks() const { return world_size_; }  // ranks of the collectives
  int device() const { return ranks_[0].device; }
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
  void open_devices(const std::vector<int>& devices);
  void init_cublas();

  std::vector<Rank> ranks_;  // the ranks this process drives
  int world_size_ = 1;
  std::string device_name_;
  int sm_count_ = 0;
  cublasHandle_t cublas_ = nullptr;
  void* cublas_workspace_ = nullptr;
};

}  // namespace schedlab::gpu
