// The CUDA device: tile kernels lowered to per-thread kernel IR for the device's compute
// capability, printed as PTX (lower/ptx), linked into a cubin by the driver and launched
// with the CUDA Driver API (cuda_runtime.hpp). A machine without a usable driver, or a
// kernel this path cannot run yet, runs on the CPU device instead, with a warning naming
// why (and its LaunchReport says so).
//
// Loaded modules are kept in memory per kernel hash and launch facts, and their cubins on
// disk (cubin_cache.hpp), so another process loads them without LLVM or the driver's PTX
// compiler. A tensor with a copy here (Tensor::on("cuda")) is used in place, and stays
// there after the kernel stores to it; any other tensor is copied to device memory for the
// launch and what the kernel stored is copied back. Past 48 KiB a kernel's shared memory is
// dynamic, up to the device's opt-in limit. The launch path is unverified on hardware.
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "devices/cuda/cuda_runtime.hpp"
#include "devices/device.hpp"
#include "devices/gpu_device.hpp"
#include "devices/registry.hpp"
#include "jit/kernel_cache.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/kernel_ir.hpp"

namespace tj::cuda {

// "cuda" and "cuda:N": the driver's devices.
DeviceKind deviceKind();

// The layout target for a device: sm_80's table for compute capability 8.x, sm_90's for
// 9.x, with the device's warp size, threads and (opt-in) shared memory per block. Throws
// Error("cuda: unsupported: ...") for other capabilities.
layout::Target targetFor(const DeviceInfo& device);

// The kernel's name in `ptx`: the identifier after ".entry".
std::string ptxEntryName(const std::string& ptx);

// The CUtensorMap of tensor-map parameter `map` for its tensor `t`, whose view starts at
// device `address`: the driver's cuTensorMapEncodeTiled of t's sizes and byte strides and
// map's box (reversed: the driver's dimensions run innermost first), element strides 1, no
// interleave, map's swizzle, 128-byte L2 promotion and zeros outside the tensor. Throws
// Unsupported("cuda: unsupported: ...") for a size of 0 or of 2^31 or more (TMA coordinates
// are i32), where the driver lacks the entry point and, naming the tensor, its sizes and
// strides, the box and the driver's error, where the driver refuses; InternalError for a
// map of another dtype or rank than t's, or of a dtype TMA cannot copy (f16, bf16, f32 and
// 8-bit types can).
CUtensorMap encodeTensorMap(const gpu::KParam& map, const TensorArg& t, CUdeviceptr address);

// Device copies are device allocations: launches use them in place (Tensor::on("cuda"));
// the launch itself is devices/driver_gpu.hpp's.
class CudaDevice final : public GpuDevice {
 public:
  explicit CudaDevice(std::string name);  // "cuda" or "cuda:N"
  // One per device name, for the process.
  static CudaDevice& instance(const std::string& name);

 private:
  std::unique_ptr<GpuContext> open() override;  // its primary context and the cubin store
};

}  // namespace tj::cuda
