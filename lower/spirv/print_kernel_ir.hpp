// Prints the per-thread kernel IR as a Vulkan GLCompute SPIR-V module (SPIR-V 1.5,
// Vulkan 1.2), preserving the semantics tests/kernel_ir_simulator.cpp gives each instruction.
//
// Interface: tensor `tN` is the storage buffer at set 0, binding N, an array of its
// dtype (bool as u8). Sizes, strides and scalars live in one more storage buffer, the
// "params" buffer at binding paramsBinding(f): one i64 slot per kernel parameter, by
// parameter index (a float scalar holds its f32 bits in the low word; buffer slots are
// unused). The grid is the dispatch's workgroup count.
#pragma once
#include <cstdint>
#include <vector>

#include "lower/gpu/kernel_ir.hpp"

namespace tj::spirv {

// Throws Error("spirv: unsupported: ...") naming an instruction, attribute or dtype it
// cannot print yet, never emitting wrong code.
std::vector<uint32_t> printSpirv(const gpu::KernelFunction& f);

// The number of tensor buffers: the params buffer's binding.
uint32_t paramsBinding(const gpu::KernelFunction& f);

}  // namespace tj::spirv
