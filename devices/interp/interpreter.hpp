// The reference interpreter: runs tile IR on host memory, program by program,
// exactly per dtype (f32 ops rounded once from float64, f16/bf16 RNE). It is
// the golden reference every backend is tested against.
#pragma once
#include "devices/device.hpp"

namespace tj {

// Runs every grid point of `kernel` in order. Throws Error (naming the op and
// the user's file:line) for runtime faults such as an integer division by zero.
void interpret(const ir::Kernel& kernel, const LaunchArgs& args);

namespace interp {
class Sanitizer;
}
// The same, keeping `sanitizer`'s shadow state of every tensor element and tile value.
void interpret(const ir::Kernel& kernel, const LaunchArgs& args, interp::Sanitizer* sanitizer);

}  // namespace tj
