#include "native-cuda/src/gpu_runtime.h"

#include <algorithm>
#include <cstring>

#include "native-cuda/src/cuda_check.h"

namespace schedlab::gpu {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kCublasWorkspaceBytes = 32u << 20;

// Finite, non-zero, varied bits for every element type: each 16-bit half is
// 0x38xx-0x3Bxx (f16 in [0.5, 1), bf16 and f32 small positive numbers).
__global__ void fill_kernel(std::uint16_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = static_cast<std::uint16_t>(0x3800u | (h & 0x03FFu));
  }
}

// The memory-bound stand-in: reads n_read and writes n_write 16-byte words.
// A read past n_write still feeds a store that the fill pattern never
// takes, so the compiler keeps every load.
__global__ void touch_kernel(const uint4* __restrict__ src, std::size_t n_read, uint4* __restrict__ dst, std::size_t n_write) {
  const std::size_t n = n_read > n_write ? n_read : n_write;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    uint4 v = i < n_read ? src[i] : make_uint4(static_cast<unsigned>(i), 1u, 2u, 3u);
    if (i < n_write) dst[i] = v;
    else if (v.x == 0xFFFFFFFFu) dst[0] = v;
  }
}

__global__ void empty_kernel_impl() {}

int blocks_for(std::size_t n, int sm_count) {
  const std::size_t want = (n + kThreads - 1) / kThreads;
  return static_cast<int>(std::clamp<std::size_t>(want, 1, static_cast<std::size_t>(sm_count) * 8));
}

cudaDataType_t cuda_type(std::string_view dtype) {
  if (dtype == "bf16") return CUDA_R_16BF;
  if (dtype == "f16") return CUDA_R_16F;
  return CUDA_R_32F;
}

#if SCHEDLAB_HAVE_NCCL
ncclDataType_t nccl_type(std::string_view dtype) {
  if (dtype == "f32") return ncclFloat32;
  if (dtype == "bf16") return ncclBfloat16;
  if (dtype == "f16") return ncclFloat16;
  if (dtype == "f64") return ncclFloat64;
  if (dtype == "i32") return ncclInt32;
  if (dtype == "i64") return ncclInt64;
  if (dtype == "i8") return ncclInt8;
  return ncclUint8;  // collective_elem_bytes() counts unknown types in bytes
}
#endif

}  // namespace

bool nccl_available() { return SCHEDLAB_HAVE_NCCL != 0; }

int visible_gpus() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

std::vector<std::uint8_t> make_nccl_unique_id() {
#if SCHEDLAB_HAVE_NCCL
  ncclUniqueId id;
  NCCL_CHECK(ncclGetUniqueId(&id));
  return std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(id.internal),
                                   reinterpret_cast<const std::uint8_t*>(id.internal) + sizeof id.internal);
#else
  throw Error("built without NCCL: no multi-process runs");
#endif
}

void GpuRuntime::open_devices(const std::vector<int>& devices) {
  ranks_.resize(devices.size());
  for (std::size_t r = 0; r < devices.size(); ++r) {
    Rank& k = ranks_[r];
    k.device = devices[r];
    CUDA_CHECK(cudaSetDevice(k.device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&k.compute, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&k.comm, cudaStreamNonBlocking));
  }
  CUDA_CHECK(cudaSetDevice(device()));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device()));
  device_name_ = prop.name;
  sm_count_ = prop.multiProcessorCount;
}

void GpuRuntime::init_cublas() {
  CUBLAS_CHECK(cublasCreate(&cublas_));
  // A fixed workspace: cuBLAS would otherwise allocate one inside the run.
  CUDA_CHECK(cudaMalloc(&cublas_workspace_, kCublasWorkspaceBytes));
  CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_, kCublasWorkspaceBytes));
}

GpuRuntime::GpuRuntime(int ranks) {
  const int visible = visible_gpus();
  if (visible < 1) throw Error("no CUDA device visible");
  if (ranks < 1 || ranks > visible)
    throw OptionError("--ranks " + std::to_string(ranks) + ": this machine has " + std::to_string(visible) + " GPU(s)");
  if (ranks > 1 && !nccl_available()) throw OptionError("--ranks " + std::to_string(ranks) + ": built without NCCL");
  std::vector<int> devices(ranks);
  for (int r = 0; r < ranks; ++r) devices[r] = r;
  world_size_ = ranks;
  open_devices(devices);
  init_cublas();
#if SCHEDLAB_HAVE_NCCL
  if (ranks > 1) {
    std::vector<ncclComm_t> comms(ranks);
    NCCL_CHECK(ncclCommInitAll(comms.data(), ranks, devices.data()));
    for (int r = 0; r < ranks; ++r) ranks_[r].nccl = comms[r];
  }
#endif
}

GpuRuntime::GpuRuntime(int local_rank, int world_size, int rank, const std::vector<std::uint8_t>& nccl_id) {
  const int visible = visible_gpus();
  if (local_rank >= visible)
    throw OptionError("LOCAL_RANK " + std::to_string(local_rank) + ": this machine has " + std::to_string(visible) + " GPU(s)");
  if (world_size > 1 && !nccl_available()) throw OptionError("WORLD_SIZE " + std::to_string(world_size) + ": built without NCCL");
  world_size_ = world_size;
  open_devices({local_rank});
  init_cublas();
#if SCHEDLAB_HAVE_NCCL
  if (world_size > 1) {
    ncclUniqueId id;
    if (nccl_id.size() != sizeof id.internal) throw Error("NCCL id of " + std::to_string(nccl_id.size()) + " bytes");
    std::memcpy(id.internal, nccl_id.data(), sizeof id.internal);
    ncclComm_t comm = nullptr;
    NCCL_CHECK(ncclCommInitRank(&comm, world_size, id, rank));
    ranks_[0].nccl = comm;
  }
#else
  (void)rank, (void)nccl_id;
#endif
}

GpuRuntime::~GpuRuntime() {
  // Best effort: a destructor must not throw, and the process is ending.
  for (Rank& k : ranks_) {
    cudaSetDevice(k.device);
    cudaDeviceSynchronize();
#if SCHEDLAB_HAVE_NCCL
    if (k.nccl) ncclCommDestroy(static_cast<ncclComm_t>(k.nccl));
#endif
    if (k.src) cudaFree(k.src);
    if (k.dst) cudaFree(k.dst);
    if (k.compute) cudaStreamDestroy(k.compute);
    if (k.comm) cudaStreamDestroy(k.comm);
  }
  if (!ranks_.empty()) cudaSetDevice(device());
  if (cublas_) cublasDestroy(cublas_);
  if (cublas_workspace_) cudaFree(cublas_workspace_);
}

void GpuRuntime::reserve_scratch(std::int64_t src_bytes, std::int64_t dst_bytes) {
  // Whole 16-byte words, at least one: the touch kernel moves uint4s.
  auto round_up = [](std::int64_t b) { return std::max<std::int64_t>(16, (b + 15) / 16 * 16); };
  src_bytes = round_up(src_bytes);
  dst_bytes = round_up(dst_bytes);
  for (Rank& k : ranks_) {
    CUDA_CHECK(cudaSetDevice(k.device));
    auto grow = [&](void*& p, std::int64_t& have, std::int64_t want, std::uint32_t seed) {
      if (have >= want) return;
      if (p) CUDA_CHECK(cudaFree(p));
      CUDA_CHECK(cudaMalloc(&p, static_cast<std::size_t>(want)));
      have = want;
      const std::size_t halves = static_cast<std::size_t>(want) / 2;
      fill_kernel<<<blocks_for(halves, sm_count_), kThreads>>>(static_cast<std::uint16_t*>(p), halves, seed);
      CUDA_CHECK(cudaGetLastError());
    };
    grow(k.src, k.src_bytes, src_bytes, 0x9E3779B9u + k.device);
    grow(k.dst, k.dst_bytes, dst_bytes, 0x85EBCA6Bu + k.device);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaSetDevice(device()));
}

void GpuRuntime::gemm(cudaStream_t stream, std::string_view dtype, const GemmShape& s) {
  const bool tf32 = dtype == "tf32";
  const cudaDataType_t type = cuda_type(dtype);
  const std::int64_t e = (type == CUDA_R_32F) ? 4 : 2;
  const std::int64_t a_elems = s.m * s.k, b_elems = s.k * s.n, c_elems = s.m * s.n;
  if (e * s.batch * (a_elems + b_elems) > ranks_[0].src_bytes || e * s.batch * c_elems > ranks_[0].dst_bytes)
    throw Error("GEMM operands exceed the reserved scratch");
  // f32 without tensor cores (PyTorch's default), tf32 with; half types accumulate in f32.
  const cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float alpha = 1.0f, beta = 0.0f;
  auto* a = static_cast<char*>(ranks_[0].src);
  auto* b = a + e * s.batch * a_elems;
  CUBLAS_CHECK(cublasSetStream(cublas_, stream));
  // Column-major C(m×n) = A(m×k) · B(k×n): the shape is what matters here.
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(s.m), static_cast<int>(s.n),
                                          static_cast<int>(s.k), &alpha, a, type, static_cast<int>(s.m), a_elems, b, type,
                                          static_cast<int>(s.k), b_elems, &beta, ranks_[0].dst, type, static_cast<int>(s.m),
                                          c_elems, static_cast<int>(s.batch), compute, CUBLAS_GEMM_DEFAULT));
}

void GpuRuntime::touch(cudaStream_t stream, std::int64_t read_bytes, std::int64_t write_bytes) {
  if (read_bytes > ranks_[0].src_bytes || write_bytes > ranks_[0].dst_bytes)
    throw Error("memory-bound operands exceed the reserved scratch");
  const std::size_t n_read = static_cast<std::size_t>(read_bytes + 15) / 16;
  const std::size_t n_write = static_cast<std::size_t>(write_bytes + 15) / 16;
  touch_kernel<<<blocks_for(std::max(n_read, n_write), sm_count_), kThreads, 0, stream>>>(
      static_cast<const uint4*>(ranks_[0].src), n_read, static_cast<uint4*>(ranks_[0].dst), n_write);
  CUDA_CHECK(cudaGetLastError());
}

void GpuRuntime::empty_kernel(cudaStream_t stream) {
  empty_kernel_impl<<<1, 32, 0, stream>>>();
  CUDA_CHECK(cudaGetLastError());
}

void GpuRuntime::copy(cudaStream_t stream, std::int64_t bytes) {
  if (bytes > ranks_[0].src_bytes || bytes > ranks_[0].dst_bytes) throw Error("copy exceeds the reserved scratch");
  CUDA_CHECK(cudaMemcpyAsync(ranks_[0].dst, ranks_[0].src, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice, stream));
}

void GpuRuntime::collective(CollectiveOp op, std::string_view dtype, std::int64_t payload_bytes, cudaStream_t rank0_stream) {
#if SCHEDLAB_HAVE_NCCL
  const int n = ranks();  // the communicator's size; this process drives ranks_.size() of them
  if (n < 2) throw Error("a collective needs two or more ranks");
  StandIn s;
  s.kind = StandInKind::Collective;
  s.op = op;
  s.dtype = std::string(dtype);
  s.collective_bytes = payload_bytes;
  const OperandBytes need = operand_bytes(s, n);
  if (need.src > ranks_[0].src_bytes || need.dst > ranks_[0].dst_bytes) throw Error("collective operands exceed the reserved scratch");
  const std::int64_t e = collective_elem_bytes(dtype);
  const ncclDataType_t type = nccl_type(dtype);
  const std::size_t count = static_cast<std::size_t>(payload_bytes / e);  // output elements
  NCCL_CHECK(ncclGroupStart());
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    Rank& k = ranks_[r];
    auto comm = static_cast<ncclComm_t>(k.nccl);
    cudaStream_t st = r == 0 ? rank0_stream : k.comm;
    switch (op) {
      case CollectiveOp::AllReduce:
        NCCL_CHECK(ncclAllReduce(k.src, k.dst, count, type, ncclSum, comm, st));
        break;
      case CollectiveOp::AllGather:
        NCCL_CHECK(ncclAllGather(k.src, k.dst, count / n, type, comm, st));
        break;
      case CollectiveOp::ReduceScatter:
        NCCL_CHECK(ncclReduceScatter(k.src, k.dst, count, type, ncclSum, comm, st));
        break;
      case CollectiveOp::Broadcast:
        NCCL_CHECK(ncclBroadcast(k.src, k.dst, count, type, 0, comm, st));
        break;
      case CollectiveOp::AllToAll: {
        const std::size_t chunk = count / n;
        for (int peer = 0; peer < n; ++peer) {
          NCCL_CHECK(ncclSend(static_cast<char*>(k.src) + peer * chunk * e, chunk, type, peer, comm, st));
          NCCL_CHECK(ncclRecv(static_cast<char*>(k.dst) + peer * chunk * e, chunk, type, peer, comm, st));
        }
        break;
      }
    }
  }
  NCCL_CHECK(ncclGroupEnd());
#else
  (void)op, (void)dtype, (void)payload_bytes, (void)rank0_stream;
  throw Error("built without NCCL: collectives cannot run");
#endif
}

void GpuRuntime::synchronize_all() {
  for (Rank& k : ranks_) {
    CUDA_CHECK(cudaSetDevice(k.device));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaSetDevice(device()));
}

}  // namespace schedlab::gpu
