// What a Vulkan launch needs of a compiled kernel, and its disk cache.
//
// A KernelBinary is the SPIR-V plus the kernel IR's interface (parameters, stored
// buffers, workgroup and subgroup size), so that a kernel loaded from disk launches
// without layout inference, lowering or printing. It is the spirvKernel artifact of the
// one cache (jit/artifact_cache.hpp; $TILEJIT_CACHE_DIR, TILEJIT_CACHE=0 turns it off),
// keyed by the IR's semantic hash, the device's featureKey(), the layout target and the
// compiler build id. A corrupt entry is reported, rebuilt and replaced.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.hpp"
#include "jit/artifact_cache.hpp"
#include "jit/timing.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/kernel_ir.hpp"

namespace tj::vulkan {

struct KernelBinary {
  std::vector<gpu::KParam> params;  // as the kernel IR's, without names
  std::vector<bool> stored;         // by parameter: a buffer the kernel stores to
  std::vector<gpu::KPrint> prints;  // the print buffers' parameters and what they hold
  int64_t faultParam = -1;          // the integer-division fault flag's parameter, or -1
  uint32_t bufferCount = 0;         // bindings: one per tensor, print and fault buffer, then the params buffer
  uint32_t pushConstantBytes = 0;   // the parameter slots as push constants instead of the params buffer
  int64_t workgroupSize = 1, subgroupSize = 1;
  std::shared_ptr<const std::vector<uint32_t>> spirv;
};

// Lays out, lowers and prints `kernel` for `target`. Throws Error("...unsupported...")
// for what the Vulkan path cannot run yet.
KernelBinary buildKernelBinary(const ir::Kernel& kernel, const layout::Target& target);

std::vector<char> encodeKernelBinary(const KernelBinary& binary);
// Throws jit::CorruptCacheEntry for bytes encodeKernelBinary did not make.
KernelBinary decodeKernelBinary(std::span<const char> bytes);

// The cache key (kind spirvKernel) of `kernel` (by its semantic hash) on a device and layout target.
jit::ArtifactKey kernelBinaryKey(uint64_t irHash, const std::string& deviceFeatures, const layout::Target& target);

struct LoadedBinary {
  KernelBinary binary;
  jit::CacheSource source;  // disk or compiled
  double ms;                // loading or building it
};

// Why a device cannot run a kernel, decided once per cache key: remembered in the cache
// (ArtifactStore::refuse), so that later launches and processes fall back without lowering
// it again.
struct KernelRefused : Unsupported {
  KernelRefused(const std::string& reason, jit::CacheSource source, double ms)
      : Unsupported(reason), source(source), ms(ms) {}
  jit::CacheSource source;  // decided now (compiled) or read from the disk cache
  double ms;                // deciding it or reading the decision
};

// Built for `target` and written to `store`, timed from `start`. Throws KernelRefused when
// the kernel cannot be built for the target, and remembers why in `store`.
LoadedBinary buildStoredKernelBinary(const ir::Kernel& kernel, const jit::ArtifactKey& key,
                                     const layout::Target& target, const jit::ArtifactStore& store,
                                     jit::Clock::time_point start);

// What `use` (a pipeline) makes of the kernel for `key`: from `store` where it holds an entry
// that `use` accepts (one it rejects with an Error is reported and rebuilt, as a torn one),
// else built for `target` and written there. Throws KernelRefused when the kernel cannot be
// built for the target, now or in an earlier build, or `use` rejects the binary built now
// (not remembered: a driver's rejection may be transient).
template <class Use>
auto loadOrBuildKernel(const ir::Kernel& kernel, const jit::ArtifactKey& key, const layout::Target& target,
                       const jit::ArtifactStore& store, Use use) -> decltype(use(std::declval<LoadedBinary&>())) {
  auto start = jit::Clock::now();
  if (std::optional<std::string> reason = store.refusal(key))
    throw KernelRefused(*reason, jit::CacheSource::disk, jit::msSince(start));
  auto fromDisk = [&](const std::vector<char>& bytes) {
    LoadedBinary loaded{decodeKernelBinary(bytes), jit::CacheSource::disk, jit::msSince(start)};
    return use(loaded);
  };
  if (auto hit = store.load(key, fromDisk)) return std::move(*hit);
  LoadedBinary built = buildStoredKernelBinary(kernel, key, target, store, start);
  try {
    return use(built);
  } catch (const Unsupported& e) {
    throw KernelRefused(e.what(), built.source, built.ms);
  }
}

}  // namespace tj::vulkan
