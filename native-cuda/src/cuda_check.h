// native-cuda/src — the CUDA half of the executor: every CUDA, cuBLAS and
// NCCL call is checked and a failure becomes a schedlab::Error naming the
// call and the place, so the CLI reports it like any other bad input.
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#if SCHEDLAB_HAVE_NCCL
#include <nccl.h>
#endif

#include "core/util/error.h"

namespace schedlab::gpu {

[[noreturn]] inline void fail_call(const char* call, const std::string& why, const char* file, int line) {
  throw Error(std::string("CUDA: ") + call + " failed: " + why + " (" + file + ":" + std::to_string(line) + ")");
}

}  // namespace schedlab::gpu

#define CUDA_CHECK(call)                                                                            \
  do {                                                                                              \
    cudaError_t err_ = (call);                                                                      \
    if (err_ != cudaSuccess) ::schedlab::gpu::fail_call(#call, cudaGetErrorString(err_), __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(call)                                                                                   \
  do {                                                                                                       \
    cublasStatus_t st_ = (call);                                                                             \
    if (st_ != CUBLAS_STATUS_SUCCESS) ::schedlab::gpu::fail_call(#call, cublasGetStatusString(st_), __FILE__, __LINE__); \
  } while (0)

#if SCHEDLAB_HAVE_NCCL
#define NCCL_CHECK(call)                                                                                  \
  do {                                                                                                    \
    ncclResult_t r_ = (call);                                                                             \
    if (r_ != ncclSuccess) ::schedlab::gpu::fail_call(#call, ncclGetErrorString(r_), __FILE__, __LINE__); \
  } while (0)
#endif
