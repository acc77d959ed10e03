// The classes a calibrated time model has a law for.
#include "core/cost/time_model.h"

namespace schedlab {

bool class_needs_law(KernelClass c) { return c != KernelClass::Collective && c != KernelClass::None; }

}  // namespace schedlab
