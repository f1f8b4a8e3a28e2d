// What the stand-in HIP runtime (fake_libamdhip64.cpp) and its tests (test_fake_hip.cpp) share
// beyond the HIP API: the tjFakeHip* entry points' types.
#pragma once
#include <cstddef>
#include <cstdint>

#include "devices/hip/hip_api.hpp"

extern "C" {

// tjFakeHipCounts(): how often the fake did each thing, since the process started.
struct TjFakeHipCounts {
  int moduleLoads, launches, allocations, uploads, downloads;
};

// What a launch hands the test's kernel: the current device (hipSetDevice's), the code object's
// kernel (its name, and from its
// kernel descriptor the static LDS and kernel-argument bytes), the grid in workgroups, the
// threads per workgroup and kernelParams as the launch passed them (one pointer per explicit
// parameter; the test knows how many).
struct TjFakeHipLaunch {
  int device;
  const char* kernel;
  std::uint32_t ldsBytes, kernargBytes;
  unsigned grid[3];
  unsigned block;
  void** params;
};
using TjFakeHipKernel = tj::hip::hipError_t (*)(const TjFakeHipLaunch* launch);

}  // extern "C"
