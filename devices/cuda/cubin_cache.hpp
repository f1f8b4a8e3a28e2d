// What a CUDA launch needs of a compiled kernel, and its disk cache.
//
// A CubinBinary is the cubin the driver linked from the kernel's PTX plus the kernel IR's
// launch interface (parameters, prints, fault flag, threads, workgroup memory), so that a
// kernel found on disk is loaded by cuModuleLoadData without layout inference, lowering,
// LLVM or the driver's PTX compiler. It is the cubin artifact of the one cache
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
#include "jit/artifact_cache.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/kernel_ir.hpp"

namespace tj::cuda {

struct CubinBinary {
  std::vector<gpu::KParam> params;  // as the kernel IR's, without names
  std::vector<gpu::KPrint> prints;  // the print buffers' parameters and what they hold
  int64_t faultParam = -1;          // the fault words' parameter, or -1
  int64_t workgroupSize = 1;
  int64_t sharedBytes = 0;  // the kernel's workgroup memory
  std::string entry;        // the kernel's name in the cubin
  std::vector<char> cubin;
};

std::vector<char> encodeCubinBinary(const CubinBinary& binary);
// Throws jit::CorruptCacheEntry for bytes encodeCubinBinary did not make.
CubinBinary decodeCubinBinary(std::span<const char> bytes);

// The cache key (kind cubin) of a kernel (by its semantic hash) on `device`, lowered for `target` with
// the launch facts `vectorTensors`.
jit::ArtifactKey cubinKey(uint64_t irHash, const DeviceInfo& device, const layout::Target& target,
                       const std::vector<bool>& vectorTensors);

}  // namespace tj::cuda
