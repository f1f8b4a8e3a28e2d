// The HIP device (AMD GPUs): tile kernels lowered to per-thread kernel IR for the device's gfx
// target (MFMA on CDNA, WMMA on RDNA 3), compiled in process by LLVM's AMDGPU backend (by the
// user's ROCm comgr from LLVM's bitcode for a processor this LLVM does not know) and linked
// into a code object by comgr where it knows the processor, else by LLD in process
// (devices/hip/comgr.hpp, lower/amdgpu), loaded and launched through the HIP runtime
// (hip_runtime.hpp) with devices/driver_gpu.hpp's launch path. A machine without a usable
// runtime, a GPU tilejit has no layouts for, or a kernel the device cannot run, runs on the
// CPU instead with a warning naming why (and its LaunchReport says so).
//
// Code objects are kept on disk (the one artifact cache: $TILEJIT_CACHE_DIR, TILEJIT_CACHE=0
// turns it off), keyed by the IR's semantic hash, the device (name, gfx target id, wave size,
// CU count, runtime version), the launch facts, the layout target and the compiler build id,
// so another process loads them without LLVM. No AMD GPU was within reach of this project: the
// path is tested through a stand-in runtime (tests/fake_hip) whose launches run the kernel-IR
// simulator, never on hardware.
#pragma once
#include <string>

#include "devices/driver_gpu.hpp"
#include "devices/hip/hip_runtime.hpp"
#include "devices/registry.hpp"

namespace tj::hip {

// "hip" and "hip:N": the runtime's devices.
DeviceKind deviceKind();

// The layout target for a device: gfx942's (MFMA, wave64) for CDNA 2/3, gfx1100's (WMMA, wave32)
// for RDNA 3/3.5, with the device's threads and LDS per workgroup. Throws
// Unsupported("amdgpu: unsupported: ...") for another target, Unsupported("hip: unsupported: ...")
// where the device's wave size is not the target's.
layout::Target targetFor(const DeviceInfo& device);

// The cache key (kind codeObject) of a kernel (by its semantic hash) on `device`, lowered for
// `target` with the launch facts `vectorTensors`, compiled and linked by `toolchain`
// ("LLVM 19.1.7 + lld": comgr::Toolchain's compiler and linker).
jit::ArtifactKey codeObjectKey(uint64_t irHash, const DeviceInfo& device, const layout::Target& target,
                               const std::vector<bool>& vectorTensors, const std::string& toolchain);
std::vector<char> encodeCodeObjectBinary(const DriverBinary& binary);
// Throws jit::CorruptCacheEntry for bytes encodeCodeObjectBinary did not make.
DriverBinary decodeCodeObjectBinary(std::span<const char> bytes);

// Device copies are device allocations: launches use them in place (Tensor::on("hip")).
class HipDevice final : public GpuDevice {
 public:
  explicit HipDevice(std::string name);  // "hip" or "hip:N"
  static HipDevice& instance(const std::string& name);  // one per device name, for the process

 private:
  std::unique_ptr<GpuContext> open() override;
};

}  // namespace tj::hip
