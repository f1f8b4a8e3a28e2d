// What GPU kernels' print ops stored (lower/gpu/kernel_ir.hpp, KPrint), printed the way
// the CPU device prints: per program in row-major grid order, its prints in op order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "devices/device.hpp"
#include "lower/gpu/kernel_ir.hpp"

namespace tj {

// The bytes print `p` needs over a grid of `programs` programs.
size_t printBufferBytes(const gpu::KPrint& p, int64_t programs);

// buffers[i] holds prints[i]'s slices; lines go to `sink`, or stdout without one.
void printBuffers(const std::vector<gpu::KPrint>& prints, const std::vector<std::span<const std::byte>>& buffers,
                  std::span<const int64_t> grid, const PrintSink& sink);

}  // namespace tj
