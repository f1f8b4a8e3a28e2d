// The interpreter as a device ("interp"): exact, slow, on host memory.
#pragma once
#include "devices/registry.hpp"

namespace tj::interp {

DeviceKind deviceKind();

}  // namespace tj::interp
