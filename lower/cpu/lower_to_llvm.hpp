// Lowers a tile-IR kernel to an LLVM module for the host CPU.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "ir/ir.hpp"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tj::cpu {

struct CpuLoweringOptions {
  int vectorBytes = 64;  // the widest SIMD register: 64 with AVX-512, 32 with AVX2, 16 otherwise
  bool bf16DotProduct = false;  // AVX512-BF16's vdpbf16ps for bf16 x bf16 -> f32 products
  // With it, bf16 dots that AMX does not take still widen to f32: the host runs vdpbf16ps's
  // multiply-adds slower than f32 FMAs (jit::CpuTarget::slowBf16Pairs). vcvtneps2bf16 still
  // rounds the f32 tiles AMX dots take as bf16.
  bool widenBf16Dots = false;
  bool i16PairProducts = false;  // pmaddwd at the vector width, for i8 x i8 -> i32 products
  bool i8QuadProducts = false;   // VNNI's vpdpbusd at the vector width: four i8 products per i32 lane
  bool amxInt8 = false;          // AMX tiles: tdpbssd for i8 x i8 -> i32
  bool amxBf16 = false;          // AMX tiles: tdpbf16ps for bf16 x bf16 -> f32
  // For a host without those instructions (tests): vpdpbusd and vdpbf16ps are written as the
  // plain IR they compute, and AMX micro-kernels are compiled unoptimized, where LLVM turns tile
  // instructions into loops, so the packing, tile shapes and strides of each path run anywhere.
  bool emulateMatrixInstructions = false;
};

// What the options choose beyond the vector width, for cache keys and messages: "pmaddwd vnni".
std::string dotInstructionsName(const CpuLoweringOptions& options);

// The options the JIT chooses on an x86 host of a named level: "sse4.2", "avx2",
// "avx2vnni", "avx512" (F and BW), "avx512vnni", "avx512bf16" (with VNNI) or "amx" (Sapphire
// Rapids: AMX int8 and bf16 too); for output that must not depend on the host (tile-ir
// --cpu, golden files). Throws Error naming the levels for another name.
CpuLoweringOptions loweringOptionsForIsa(std::string_view isa);
// An LLVM CPU of that level ("amx": sapphirerapids), for its assembly (tile-ir --stage=asm).
std::string_view x86CpuForIsa(std::string_view isa);

// Builds a module with one external function `entryName` of type KernelEntry
// (lower/cpu/abi.hpp). Elementwise chains are fused into the loop nest of
// their consumer; dots, reductions and fold-carried tiles live in buffers: on
// the stack up to 1 MiB per kernel, the rest in one heap block per call of the
// entry (whose failure reports kFaultOutOfMemory). Throws Error naming an op it
// cannot lower.
std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Kernel& kernel, llvm::LLVMContext& context,
                                          const std::string& entryName, const CpuLoweringOptions& options = {});

// The unoptimized LLVM IR of a kernel as text (tile-ir --stage=llvm).
std::string lowerToLLVMText(const ir::Kernel& kernel, const CpuLoweringOptions& options = {});

}  // namespace tj::cpu
