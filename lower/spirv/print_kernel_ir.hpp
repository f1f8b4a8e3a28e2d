// Prints the per-thread kernel IR as a Vulkan GLCompute SPIR-V module (SPIR-V 1.5,
// Vulkan 1.2). Each instruction computes what the reference interpreter (devices/interp)
// computes for its dtype, on edge inputs too: f16 natively, bf16 in f32 rounded to bf16
// after every op, f64 natively, integers wrapping, casts rounding once and saturating,
// max/min/relu with the interpreter's NaN and signed zeros, C's fmod exactly.
//
// Interface: tensor `tN` is the storage buffer at set 0, binding N, an array of unsigned
// integers of its element's width holding the elements' bits (bool as a byte 0 or 1).
// Sizes, strides and scalars are one i64 slot per kernel parameter, by parameter index (an
// f64 scalar holds std::bit_cast<int64_t>(double), another float scalar its f32 bits in
// the low word; buffer slots are unused): push constants when they fit the 128 bytes every
// Vulkan device has (pushConstantBytes(f) > 0), else one more storage buffer, the "params"
// buffer at binding paramsBinding(f). The grid is the dispatch's workgroup count.
#pragma once
#include <cstdint>
#include <vector>

#include "lower/gpu/kernel_ir.hpp"

namespace tj::spirv {

// Throws Error("spirv: unsupported: ...") naming an instruction, attribute or dtype it
// cannot print yet, never emitting wrong code. Workgroup memory is declared per element
// width and may take more than f.sharedBytes(); maxSharedBytes (the device's limit, by
// default f.sharedBytes()) bounds it.
std::vector<uint32_t> printSpirv(const gpu::KernelFunction& f, int64_t maxSharedBytes = -1);

// The number of tensor, print and fault buffers: the params buffer's binding.
uint32_t paramsBinding(const gpu::KernelFunction& f);

// The bytes of push constants the module reads its parameter slots from; 0 when they are
// in the params buffer instead.
uint32_t pushConstantBytes(const gpu::KernelFunction& f);

}  // namespace tj::spirv
