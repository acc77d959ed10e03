#include "core/cost/collective_times.h"

#include <cmath>
#include <limits>

namespace schedlab {
namespace {

double bus_factor(CollectiveOp op, double n) {
  switch (op) {
    case CollectiveOp::AllReduce: return 2 * (n - 1) / n;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll: return (n - 1) / n;
    case CollectiveOp::Broadcast: return 1.0;
  }
  return 1.0;
}

double interpolate(const std::vector<std::pair<double, double>>& curve, double size) {
  if (curve.size() == 1 || size <= curve.front().first) return curve.front().second;
  for (std::size_t i = 1; i < curve.size(); ++i) {
    const auto [s0, t0] = curve[i - 1];
    const auto [s1, t1] = curve[i];
    if (size <= s1) {
      const double f = std::log(size / s0) / std::log(s1 / s0);
      return std::exp(std::log(t0) + f * (std::log(t1) - std::log(t0)));
    }
  }
  const auto [s0, t0] = curve[curve.size() - 2];
  const auto [s1, t1] = curve.back();
  return t1 + (size - s1) * std::max(0.0, (t1 - t0) / (s1 - s0));
}

// The share of a class: its own, else the measured class it resembles, else
// none.
const ContentionShare* class_share(const ContentionLaw& law, KernelClass c) {
  auto find = [&](KernelClass k) -> const ContentionShare* {
    auto it = law.classes.find(k);
    return it == law.classes.end() ? nullptr : &it->second;
  };
  if (const ContentionShare* own = find(c)) return own;
  KernelClass like = c;
  switch (c) {
    case KernelClass::AttentionBackward: like = KernelClass::Attention; break;
    case KernelClass::ConvolutionBackward: like = KernelClass::Convolution; break;
    case KernelClass::Copy:
    case KernelClass::Extern: like = KernelClass::TritonPointwise; break;
    default: return nullptr;
  }
  return find(like);
}

// A peer wait law's figure at this very group size; 0 where none was measured.
double wait_at(const std::map<CollectiveOp, std::map<std::int64_t, double>>& waits, CollectiveOp op, std::int64_t group_size) {
  auto by_op = waits.find(op);
  if (by_op == waits.end()) return 0;
  auto wait = by_op->second.find(group_size);
  return wait == by_op->second.end() ? 0 : wait->second;
}

}  // namespace

double collective_curve_size(CollectiveOp op, std::int64_t payload_bytes, std::int64_t group_size) {
  const double payload = static_cast<double>(payload_bytes);
  return op == CollectiveOp::ReduceScatter ? payload * static_cast<double>(group_size) : payload;
}

std::optional<double> measured_collective_us(const CollectiveTimes& t, CollectiveOp op, std::int64_t payload_bytes,
                                             std::int64_t group_size) {
  auto by_op = t.curves.find(op);
  if (by_op == t.curves.end() || by_op->second.empty() || group_size <= 1) return std::nullopt;
  // The nearest swept group size in log scale; on a tie, the larger.
  const auto* nearest = &*by_op->second.begin();
  double best = std::numeric_limits<double>::infinity();
  for (const auto& entry : by_op->second) {
    const double d = std::abs(std::log(static_cast<double>(entry.first) / static_cast<double>(group_size)));
    if (d <= best) best = d, nearest = &entry;
  }
  const double size = collective_curve_size(op, payload_bytes, group_size);
  double us = interpolate(nearest->second, size);
  if (nearest->first != group_size)
    us *= bus_factor(op, static_cast<double>(group_size)) / bus_factor(op, static_cast<double>(nearest->first));
  return us + wait_at(t.peer_wait_us, op, group_size);
}

double peer_wait_beside_us(const CollectiveTimes& t, CollectiveOp op, std::int64_t group_size) {
  return wait_at(t.peer_wait_beside_us, op, group_size);
}

double contended_comm_slowdown(const ContentionShare& s, double comm_alone_us) {
  return comm_alone_us > 0 ? s.comm_slowdown + s.comm_delay_us / comm_alone_us : s.comm_slowdown;
}

ContentionShare contention_share(const ContentionLaw& law, KernelClass c) {
  const ContentionShare* found = class_share(law, c);
  if (!found) return {};
  ContentionShare share = *found;
  share.start_latency_us = law.start_latency_us;
  return share;
}

}  // namespace schedlab
