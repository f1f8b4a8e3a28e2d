// A reference executor for the kernel IR: runs every thread of each workgroup in
// lockstep on the host (so barriers hold trivially), each op computed in float64 and
// rounded to its register's dtype. For tests: it checks lowering against the tile-IR
// interpreter without a GPU. Slow; meant for small grids.
#pragma once
#include <vector>

#include "lower/gpu/kernel_ir.hpp"

namespace tj::gpu {

struct SimTensor {
  void* data;
  DType dtype;
  std::vector<int64_t> shape, strides;  // in elements
};

// Runs `f` over `grid` (one workgroup per grid point). `tensors` are the kernel's, then one
// per print (KernelFunction::prints). `scalars` holds i64 and float scalar parameters as doubles. Throws Error on an instruction it cannot run.
void simulate(const KernelFunction& f, const std::vector<SimTensor>& tensors, const std::vector<double>& scalars,
              const std::vector<int64_t>& grid);

}  // namespace tj::gpu
