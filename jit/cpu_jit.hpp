// Links host object code into this process (one LLVM ORC LLJIT, made on first use).
#pragma once
#include <span>
#include <string>

#include "lower/cpu/abi.hpp"

namespace tj::jit {

// Loads glibc's vector math library (once) so JIT-linked kernels can call it.
bool vectorMathAvailable();

// Links `object` into a JITDylib of its own, so equal symbol names in objects
// built for different keys never clash, and returns its `entryName` function.
// Undefined symbols resolve against the process (libm's expf, tanhf, ...).
// Thread-safe. Throws Error when the object cannot be linked.
cpu::KernelEntry loadKernel(std::span<const char> object, const std::string& entryName);

}  // namespace tj::jit
