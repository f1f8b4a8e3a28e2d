// What a CUDA launch needs of a compiled kernel, and its disk cache.
//
// A CUDA kernel's DriverBinary holds the cubin the driver linked from the kernel's PTX, so
// that a kernel found on disk is loaded by cuModuleLoadData without layout inference,
// lowering, LLVM or the driver's PTX compiler. It is the cubin artifact of the one cache
// (jit/artifact_cache.hpp; $TILEJIT_CACHE_DIR, TILEJIT_CACHE=0 turns it off), keyed by the
// IR's semantic hash, the device (name, compute capability, SM count, driver version), the
// launch facts (which tensors allow 16-byte accesses), the layout target and the compiler
// build id. A corrupt entry, or one the driver rejects, is reported, rebuilt and replaced.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "devices/cuda/cuda_runtime.hpp"
#include "devices/driver_gpu.hpp"
#include "jit/artifact_cache.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/kernel_ir.hpp"

namespace tj::cuda {

std::vector<char> encodeCubinBinary(const DriverBinary& binary);
// Throws jit::CorruptCacheEntry for bytes encodeCubinBinary did not make.
DriverBinary decodeCubinBinary(std::span<const char> bytes);

// The cache key (kind cubin) of a kernel (by its semantic hash) on `device`, lowered for `target` with
// the launch facts `vectorTensors`.
jit::ArtifactKey cubinKey(uint64_t irHash, const DeviceInfo& device, const layout::Target& target,
                       const std::vector<bool>& vectorTensors);

}  // namespace tj::cuda
