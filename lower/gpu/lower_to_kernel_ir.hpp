// Lowers a canonical, layout-annotated tile kernel to the per-thread kernel IR.
#pragma once
#include "ir/ir.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/kernel_ir.hpp"

namespace tj::gpu {

// Each tile value becomes the registers this thread holds under its layout (one per
// register bit pattern; a register's tile coordinate is computed from the lane and warp
// ids through the linear layout). Throws Error("kernel ir: unsupported: ...") naming the
// op and layout it cannot lower yet, never emitting wrong code.
struct KernelLoweringOptions {
  // A warp-shuffle conversion whose source register depends on the lane reads every candidate
  // register and selects; past this many candidates workgroup memory is cheaper.
  int maxShuffleCandidates = 2;
  // Instructions per thread, a bound on the driver's compile time (tiles are unrolled per
  // register: lavapipe took 16 s for the 5.7K of exp over a 16K-element block, and does
  // not finish 22K in minutes); past it the kernel is unsupported. 0: no limit.
  int64_t maxInstructions = 8192;
  // By tensor: whether its launch arguments allow the target's widest accesses along the last
  // axis (allowsVectorAccess). Block loads and stores of those tensors move whole vectors where
  // the layout and the block's offsets allow it; missing entries are false. A device checks the
  // facts at each launch and keeps a kernel per fact set, the general one when none holds.
  std::vector<bool> vectorTensors;
  // The most stages a fold reads ahead with (ir.hpp's fold); lowerToKernelIR lowers with fewer
  // when the rings do not fit in workgroup memory.
  int64_t maxStages = ir::kMaxStages;
  // Whether a fold {specialize = 1} gets a producer warpgroup on a target with TMA;
  // lowerToKernelIR lowers without where that cannot be done.
  bool warpSpecialize = true;
  // Whether a warp-specialized GEMM-shaped kernel is persistent (isPersistent): its workgroups
  // go through the programs, the producer filling the next program's stages while the
  // consumers store this one's result. lowerToKernelIR lowers without where that cannot be done.
  bool persistent = true;
};

// Whether a tensor argument at device address `address` allows `bytes`-wide accesses along
// its last axis: unit last stride, an address aligned to `bytes`, and every other stride
// and the last size multiples of the elements `bytes` holds.
bool allowsVectorAccess(uintptr_t address, DType t, const std::vector<int64_t>& sizes,
                        const std::vector<int64_t>& strides, int64_t bytes);

// The kernel passes options.maxInstructions: Unsupported, naming the op that did, its tile
// and its file:line.
struct CodeOverBudget : Unsupported {
  using Unsupported::Unsupported;
};

KernelFunction lowerToKernelIR(const ir::Kernel& k, const layout::LayoutAssignment& a, const layout::Target& t,
                               const KernelLoweringOptions& options = {});

}  // namespace tj::gpu
