// LLVM module -> optimized host object code.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"
#include "jit/cpu_target.hpp"
#include "lower/cpu/lower_to_llvm.hpp"

namespace llvm {
class Module;
}  // namespace llvm

namespace tj::jit {

struct ObjectCode {
  std::vector<char> bytes;  // a relocatable object file
  double optimizeMs = 0;    // the O3 pipeline
  double codegenMs = 0;     // instruction selection to object file
};

// Sets the module's triple and data layout, verifies it, runs the O3 pipeline
// and emits an object file. Throws Error for an invalid module.
ObjectCode compileModule(llvm::Module& module, const CpuTarget& target = hostTarget());

// Parses textual LLVM IR and compiles it like compileModule: hand-written
// kernels for tests and for debugging a dumped module.
ObjectCode compileAssembly(std::string_view text, const CpuTarget& target = hostTarget());

// How compileKernel lowers for `target`: vectors as wide as its widest registers.
cpu::CpuLoweringOptions loweringOptions(const CpuTarget& target = hostTarget());

// What compileKernel does that changes the code for the same IR and target,
// for cache keys: "O3 pic vector=64".
std::string compileOptions(const CpuTarget& target = hostTarget());

// The kernel cache's compiler: cpu::lowerToLLVM, then compileModule, for the host.
ObjectCode compileKernel(const ir::Kernel& kernel, const std::string& entryName);
// The optimized x86 assembly of a kernel lowered with `options` for `target` (tile-ir
// --stage=asm; tests that check a path's instructions on any host).
std::string assemblyOf(const ir::Kernel& kernel, const CpuTarget& target, const cpu::CpuLoweringOptions& options);

// The same with lowering options of the caller's choosing (tests of each dot path).
ObjectCode compileKernel(const ir::Kernel& kernel, const std::string& entryName, const cpu::CpuLoweringOptions& options);

}  // namespace tj::jit
