// The classes a calibrated time model has a law for.
#include "core/cost/time_model.h"

namespace schedlab {

bool class_needs_law(KernelClass c) { return c != KernelClass::Collective && c != KernelClass::None; }

double host_us_per_node(const TimeModel& m, KernelClass c) {
  switch (c) {
    case KernelClass::None: return 0.0;
    case KernelClass::TritonPointwise:
    case KernelClass::TritonReduction: return m.host_us_per_kernel;
    case KernelClass::Convolution: return m.host_us_per_convolution;
    case KernelClass::ConvolutionBackward: return m.host_us_per_convolution_backward;
    case KernelClass::Collective: return m.host_us_per_collective;
    default: return m.host_us_per_extern;
  }
}

bool is_item_node(const Graph& g, const Node& n) { return n.kind == NodeKind::Extern && classify_node(g, n) == KernelClass::None; }

}  // namespace schedlab
