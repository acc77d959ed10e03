// core/predict — "will it fit?": a plan's predicted memory against a
// device's memory (`plan --device-memory 80GiB`, schedplan/1 `device_fit`,
// docs/schedplan-1.md).
//
// Contract: a pure function of the plan's prediction (memory as executed:
// the caching allocator's reserved peak), the planned graph (which fixed
// costs apply) and the device's bytes. The need is the reserved peak plus
// what a step holds beside it, each cost with where its number comes from;
// costs the caching allocator holds count against
// torch.cuda.set_per_process_memory_fraction's cap, the others (CUDA
// context, NCCL's own buffers) only against the device. The stated margin
// is the reserved peak's uncertainty: the verdict is `fits` or
// `does_not_fit` outside it and `within_margin` (either may happen) inside.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph/graph.h"
#include "core/predict/predicted.h"

namespace schedlab {

struct FixedCost {
  std::string name;         // "cuda_context", "cublas_workspace", "cudnn_workspaces", "nccl_buffers"
  std::int64_t bytes = 0;
  bool in_allocator = false;  // held by the caching allocator (counts against a memory-fraction cap)
  std::string source;         // where the number comes from
};

// The share of the reserved peak stated as its uncertainty: the widest
// reserved miss of the held-out graphs (unet_gn_0_fwd on the H100, estimated
// / measured 0.923; docs/memory-as-executed.md "Accuracy"), rounded up.
inline constexpr double kReservedPeakUncertainty = 0.10;

struct DeviceFit {
  std::int64_t device_bytes = 0;
  std::int64_t reserved_peak_bytes = 0;   // predicted.reserved_bytes
  std::vector<FixedCost> fixed;
  std::int64_t allocator_need_bytes = 0;  // reserved peak + the fixed costs the allocator holds
  std::int64_t need_bytes = 0;            // allocator need + the others
  std::int64_t margin_bytes = 0;          // device - need (negative: short)
  std::int64_t uncertainty_bytes = 0;     // the stated margin: kReservedPeakUncertainty x reserved peak
  std::string verdict;                    // "fits" | "does_not_fit" | "within_margin"
  // The same question for a cap of device_bytes on the caching allocator
  // (torch.cuda.set_per_process_memory_fraction(device_bytes / total)),
  // which the costs outside the allocator do not count against: the GPU
  // validation's caps.
  std::int64_t allocator_margin_bytes = 0;
  std::string allocator_verdict;
  int data_dependent_buffers = 0;         // buffers sized by a hint (size_hint): the figure depends on them
};

// `device_bytes` > 0.
DeviceFit check_device_fit(const Graph& g, const Prediction& p, std::int64_t device_bytes);

// The verdict for a need against a capacity with the stated uncertainty
// (shared by check_device_fit and the GPU validation's per-cap answers).
std::string_view fit_verdict(std::int64_t capacity_bytes, std::int64_t need_bytes, std::int64_t uncertainty_bytes);

std::string device_fit_to_text(const DeviceFit& f);

}  // namespace schedlab
