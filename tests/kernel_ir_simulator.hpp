// A reference executor for the kernel IR: runs every thread of each workgroup in
// lockstep on the host (so barriers hold trivially), each op computed in float64 and
// rounded to its register's dtype. For tests: it checks lowering against the tile-IR
// interpreter without a GPU. Slow; meant for small grids.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "devices/device.hpp"
#include "lower/gpu/kernel_ir.hpp"

namespace tj::gpu {

struct SimTensor {
  void* data;
  DType dtype;
  std::vector<int64_t> shape, strides;  // in elements
};

// Runs `f` over `grid` (one workgroup per grid point; a persistent kernel's programs on
// kSimulatedMultiprocessors workgroups at most, each taking its programs in turn). `tensors`
// are the kernel's, then one per print (KernelFunction::prints). `scalars` holds i64 and float
// scalar parameters as doubles. Throws Error on an instruction it cannot run.
inline constexpr int64_t kSimulatedMultiprocessors = 3;
void simulate(const KernelFunction& f, const std::vector<SimTensor>& tensors, const std::vector<double>& scalars,
              const std::vector<int64_t>& grid);

// Runs `f` as a driver launch passed it (the fake drivers' kernels): `word(p)` is parameter p's
// first 8 bytes (a buffer's device address, a size, stride or scalar; a float's 4 in the low
// half), `tensors` the launch's tensor arguments, at device `addresses` (by tensor); print and
// fault buffers at the addresses their parameters hold, sized for the grid. Throws Error where
// a size or stride parameter is not its tensor's.
void simulateLaunch(const KernelFunction& f, std::span<const TensorArg> tensors, const std::vector<uint64_t>& addresses,
                    const std::function<uint64_t(size_t p)>& word, const std::vector<int64_t>& grid);

}  // namespace tj::gpu
