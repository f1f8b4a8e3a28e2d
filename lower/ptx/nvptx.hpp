// NVIDIA GPUs through LLVM's NVPTX backend: the target hooks of the LLVM GPU printer
// (special registers, bar.sync, shfl.sync, mma.sync) and the kernel IR printed as PTX.
#pragma once
#include <string>

#include "lower/gpu/kernel_ir.hpp"

namespace tj::ptx {

// Shared memory a kernel may declare statically; past it the printed kernel's shared array
// is dynamic (`.extern .shared`), sized at launch after the device opts in to that many bytes.
inline constexpr int64_t kStaticSharedBytes = 48 * 1024;

// `f` (lowered for an NVIDIA layout target) as PTX for `arch` ("sm_80", "sm_90", ...),
// through LLVM's NVPTX backend at O3. Throws Error("llvm gpu: unsupported: ...") for
// what the printer cannot print, Error("ptx: ...") for an unknown arch.
std::string printPtx(const gpu::KernelFunction& f, const std::string& arch);

// The LLVM IR of the same module, before the backend (tile-ir --stage=llvm).
std::string printNvptxLlvm(const gpu::KernelFunction& f, const std::string& arch);

}  // namespace tj::ptx
