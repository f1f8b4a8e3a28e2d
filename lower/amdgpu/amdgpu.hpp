// AMD GPUs through LLVM's AMDGPU backend: the target hooks of the LLVM GPU printer (work-item
// and workgroup ids, s_barrier, ds_bpermute, MFMA on CDNA 3 and WMMA on RDNA 3) and the kernel
// IR compiled in process to AMDGPU assembly, a relocatable ELF object or, linked by LLD, a code
// object (v5).
#pragma once
#include <string>
#include <vector>

#include "lower/gpu/kernel_ir.hpp"

namespace tj::amdgpu {

// The layout target (layout/infer_layouts) whose kernels an arch runs: "gfx942" (MFMA 32x32x8
// and 16x16x16, wave64) for CDNA 2 to 4 (gfx90a, gfx940-gfx942, gfx950), "gfx1100" (WMMA, wave32)
// for RDNA 3 and 3.5 (gfx1100-gfx1103, gfx1150-gfx1153). Throws Unsupported("amdgpu:
// unsupported: ...") for another.
std::string layoutTargetName(const std::string& arch);
// Whether this build's LLVM can compile for `arch` (LLVM 19 knows no gfx950 or gfx1153), and
// its name ("LLVM 19.1.7").
bool llvmKnows(const std::string& arch);
std::string llvmName();
// The wave size of an AMD target's kernels: 64 on CDNA (gfx9), 32 on RDNA (gfx10 and later).
int64_t waveSize(const std::string& arch);

// `f` (lowered for an AMD layout target: gfx942, wave64; gfx1100, wave32; gfx1151 takes
// gfx1100's kernels) as AMDGPU assembly for `arch`, through LLVM's AMDGPU backend at O3.
// Throws Error("llvm gpu: unsupported: ...") for what the printer cannot print,
// Error("amdgpu: ...") for an arch LLVM does not know or a wave size that is not the arch's.
std::string printAssembly(const gpu::KernelFunction& f, const std::string& arch);

// The same kernel as a relocatable ELF object (what a linker makes a code object of).
std::vector<char> compileObject(const gpu::KernelFunction& f, const std::string& arch);

// A relocatable object linked into a code object (a shared ELF that HIP's module loader takes)
// by LLD's ELF linker in process; and the kernel compiled and linked so.
std::vector<char> linkCodeObject(const std::vector<char>& object);
std::vector<char> compileCodeObject(const gpu::KernelFunction& f, const std::string& arch);

// The same module optimized and written as LLVM bitcode whose functions name `arch`, for a
// compiler that knows an arch this LLVM may not (ROCm's comgr): optimized for `arch`, or where
// LLVM does not know it, for the processor of its layouts (gfx942, gfx1100).
std::vector<char> compileBitcode(const gpu::KernelFunction& f, const std::string& arch);

// The LLVM IR of the same module, before the backend (tile-ir --stage=llvm).
std::string printLlvmIr(const gpu::KernelFunction& f, const std::string& arch);

}  // namespace tj::amdgpu
