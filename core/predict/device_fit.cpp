#include "core/predict/device_fit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/cost/kernel_class.h"
#include "core/memory/capped.h"
#include "core/util/units.h"

namespace schedlab {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

// PyTorch's default cuBLAS workspace per (handle, stream), which the caching
// allocator holds (aten/src/ATen/cuda/CublasHandlePool.cpp,
// CUBLAS_WORKSPACE_CONFIG unset): ":4096:8" (32 MiB) on Hopper,
// ":4096:2:16:8" (8 MiB + 128 KiB) before it. The built-in pre-Hopper
// profile is a100-80gb; any other profile is taken as Hopper or newer.
std::int64_t cublas_workspace_bytes(std::string_view hardware) {
  return hardware.rfind("a100", 0) == 0 ? 4096 * 1024 * 2 + 16 * 1024 * 8 : 4096 * 1024 * 8;
}

// The CUDA context with lazy module loading (CUDA 12+, PyTorch's default):
// held by the driver, outside the caching allocator.
constexpr std::int64_t kCudaContextBytes = 512 * kMiB;

// NCCL's own buffers per communicator, allocated by NCCL outside the caching
// allocator: per channel and ring peer (2), the Simple protocol's
// NCCL_BUFFSIZE (4 MiB) + LL128 (about 4.5 MiB) + LL (256 KiB), over 16
// channels.
constexpr std::int64_t kNcclBytesPerCommunicator = 16 * 2 * (4 * kMiB + 4608 * 1024 + 256 * 1024);

}  // namespace

std::string_view fit_verdict(std::int64_t capacity_bytes, std::int64_t need_low_bytes, std::int64_t need_bytes,
                             std::int64_t uncertainty_bytes) {
  if (capacity_bytes - need_bytes > uncertainty_bytes) return "fits";
  if (capacity_bytes - need_low_bytes < -uncertainty_bytes) return "does_not_fit";
  return "within_margin";
}

DeviceFit check_device_fit(const Graph& g, const Prediction& p, std::int64_t device_bytes) {
  DeviceFit f;
  f.device_bytes = device_bytes;
  f.reserved_peak_bytes = p.reserved_bytes;
  f.fixed.push_back({"cuda_context", kCudaContextBytes, false,
                     "typical CUDA 12+ context with lazy module loading, outside the caching allocator (the GPU validation "
                     "records the real one)"});
  const bool has_gemm = p.class_time_us.count(KernelClass::Gemm) != 0;
  const std::int64_t cublas = has_gemm ? cublas_workspace_bytes(p.hardware) : 0;
  f.fixed.push_back({"cublas_workspace", cublas, true,
                     has_gemm ? "PyTorch's default cuBLAS workspace (CUBLAS_WORKSPACE_CONFIG unset) for the compute stream, held "
                                "by the caching allocator through the step (in the allocator need)"
                              : "no matmul in the graph"});
  std::int64_t workspace_peak = 0;
  for (const auto& ws : p.memory.workspaces) workspace_peak = std::max(workspace_peak, ws.bytes);
  f.fixed.push_back({"cudnn_workspaces", 0, true,
                     p.memory.workspaces.empty()
                         ? "no kernel workspace in the graph"
                         : "in the allocator need already: " + std::to_string(p.memory.workspaces.size()) +
                               " kernel workspaces (predicted.workspaces), the largest " + human_bytes(workspace_peak) +
                               "; the low end of the need leaves them out"});
  std::set<std::int64_t> groups;
  for (const Node& n : g.nodes)
    if (n.collective) groups.insert(n.collective->group_size);
  f.fixed.push_back({"nccl_buffers", static_cast<std::int64_t>(groups.size()) * kNcclBytesPerCommunicator, false,
                     groups.empty() ? "no collective in the graph"
                                    : std::to_string(groups.size()) +
                                          " communicator(s) (one per group size) x NCCL's default buffers (16 channels x 2 "
                                          "ring peers x Simple 4 MiB + LL128 4.5 MiB + LL 256 KiB), outside the caching allocator"});
  // The allocator's costs are held in the capped replay (cuBLAS's workspace
  // as a resident block; kernel workspaces are among its events).
  // Without a workspace of any size the two replays are one.
  const bool any_workspace = std::any_of(p.memory.workspaces.begin(), p.memory.workspaces.end(),
                                         [](const KernelWorkspace& ws) { return ws.bytes > 0; });
  f.allocator_need_bytes = smallest_running_cap(g, p.memory, {cublas, true});
  f.allocator_need_low_bytes = any_workspace ? smallest_running_cap(g, p.memory, {cublas, false}) : f.allocator_need_bytes;
  std::int64_t outside = 0;
  for (const auto& c : f.fixed)
    if (!c.in_allocator) outside += c.bytes;
  f.need_bytes = f.allocator_need_bytes + outside;
  f.need_low_bytes = f.allocator_need_low_bytes + outside;
  f.margin_bytes = device_bytes - f.need_bytes;
  f.uncertainty_bytes = static_cast<std::int64_t>(std::ceil(kReservedPeakUncertainty * static_cast<double>(f.allocator_need_bytes)));
  f.verdict = std::string(fit_verdict(device_bytes, f.need_low_bytes, f.need_bytes, f.uncertainty_bytes));
  f.allocator_margin_bytes = device_bytes - f.allocator_need_bytes;
  f.allocator_verdict =
      std::string(fit_verdict(device_bytes, f.allocator_need_low_bytes, f.allocator_need_bytes, f.uncertainty_bytes));
  for (const Buffer& b : g.buffers) f.data_dependent_buffers += b.hint_bytes.has_value();
  return f;
}

std::string device_fit_to_text(const DeviceFit& f) {
  std::string out = "will it fit on " + human_bytes(f.device_bytes) + ": ";
  if (f.verdict == "fits") out += "fits, " + human_bytes(f.margin_bytes) + " to spare";
  else if (f.verdict == "does_not_fit") out += "does not fit, " + human_bytes(-f.margin_bytes) + " short";
  else out += "within the stated margin (" + std::string(f.margin_bytes >= 0 ? "fits by " : "short by ") +
              human_bytes(f.margin_bytes >= 0 ? f.margin_bytes : -f.margin_bytes) + ")";
  out += " (need " + human_bytes(f.need_bytes) + " = caching allocator " + human_bytes(f.allocator_need_bytes);
  if (human_bytes(f.allocator_need_low_bytes) != human_bytes(f.allocator_need_bytes))
    out += " (" + human_bytes(f.allocator_need_low_bytes) + " if kernel workspaces shrink)";
  bool held = false;
  for (const auto& c : f.fixed)
    if (c.bytes && c.in_allocator) {
      out += std::string(held ? ", " : " with ") + c.name + " " + human_bytes(c.bytes);
      held = true;
    }
  for (const auto& c : f.fixed)
    if (c.bytes && !c.in_allocator) out += " + " + c.name + " " + human_bytes(c.bytes);
  out += "; uncapped reserved peak " + human_bytes(f.reserved_peak_bytes) + "; stated margin +/-" + human_bytes(f.uncertainty_bytes) + ")";
  if (f.data_dependent_buffers)
    out += "; " + std::to_string(f.data_dependent_buffers) + " data-dependent buffer sizes (priced at their hints)";
  return out + "\n";
}

}  // namespace schedlab
