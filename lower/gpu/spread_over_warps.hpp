// Lowers a canonical kernel for a GPU target within the target's code budgets, spreading
// each program over more warps while its per-thread code is past them.
#pragma once
#include "ir/ir.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"

namespace tj::gpu {

// The kernel a GPU target lowers for a canonical one: its folds split at their masks
// (ir::splitFoldsAtMasks) where the target asks for it (layout::Target::splitMaskedFolds) and
// every tensor takes whole vectors (options.vectorTensors). The general kernel's loops, their
// addresses computed element by element, are at the register limit already (sm_90a attention:
// 255 registers whole, a 32-byte spill split).
ir::Kernel kernelForTarget(const ir::Kernel& canonical, const layout::Target& target,
                           const KernelLoweringOptions& options);

// Lowers kernelForTarget(k, target): infers layouts and lowers at the kernel's warps (p.warps) when it sets them: an Error when
// they pass target.maxWorkgroupThreads. Otherwise at target.warpsPerProgram; while the kernel IR passes
// target.codeBudget instructions or target.sharedAccessBudget workgroup-memory accesses per
// thread, doubles the warps (up to target.maxWorkgroupThreads). A thread's code shrinks with
// its share of each tile, and drivers like lavapipe compile in time that grows faster than
// the code. When no width is within the budgets, the lowering least past them (each is
// bounded by options.maxInstructions); a width that needs more workgroup memory than the
// target has, or more workgroup-memory accesses per thread than half as many warps, ends
// the search. Throws what lowerToKernelIR throws when no width lowers.
KernelFunction lowerWithinCodeBudget(const ir::Kernel& k, const layout::Target& target,
                                     const KernelLoweringOptions& options = {});

}  // namespace tj::gpu
