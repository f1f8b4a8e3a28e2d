// Compiled CPU kernels, cached in memory and on disk.
//
// A kernel is keyed by its semantic IR hash, the device feature string, the
// compile options and the compiler build id. In memory a repeated lookup does
// no LLVM work; on disk ($TILEJIT_CACHE_DIR, default $HOME/.cache/tilejit;
// TILEJIT_CACHE=0 turns it off) the object code is an artifact of the one cache
// that the GPU devices share (jit/artifact_cache.hpp). A corrupt entry is
// reported, recompiled and replaced.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ir/ir.hpp"
#include "jit/artifact_cache.hpp"
#include "jit/cpu_compiler.hpp"
#include "lower/cpu/abi.hpp"

namespace tj::jit {

// Process-wide counters over every KernelCache.
struct CacheStats {
  int64_t memoryHits = 0;
  int64_t diskHits = 0;
  int64_t misses = 0;
  double totalCompileMs = 0;
  double lastCompileMs = 0;
  double lastDiskLoadMs = 0;
};
CacheStats cacheStats();
void resetCacheStats();

struct CacheLookup {
  cpu::KernelEntry entry = nullptr;
  CacheSource source = CacheSource::memory;
  double compileMs = 0;  // compiled: compiling and linking
  double loadMs = 0;     // disk: reading, verifying and linking
};

// Makes a kernel's object code, whose entry function is named `entryName`.
using CompileFn = std::function<ObjectCode(const ir::Kernel& kernel, const std::string& entryName)>;

class KernelCache {
 public:
  // An empty diskDir keeps entries in memory only.
  KernelCache(CompileFn compile, std::filesystem::path diskDir);

  // $TILEJIT_CACHE_DIR, else $HOME/.cache/tilejit; empty when TILEJIT_CACHE=0
  // or there is no home.
  static std::filesystem::path diskDirFromEnvironment();

  // The kernel's entry from memory, else disk, else compiled and written to
  // disk. `key` is of kind cpuObject, its device CpuTarget::deviceFeatures.
  // Thread-safe; concurrent lookups of one key compile it once.
  CacheLookup lookup(const ir::Kernel& kernel, const ArtifactKey& key);

 private:
  struct Slot {
    std::mutex mutex;  // held while the key is loaded or compiled
    cpu::KernelEntry entry = nullptr;
  };
  std::shared_ptr<Slot> slot(const std::string& keyText);
  std::optional<CacheLookup> loadFromDisk(const ArtifactKey& key);
  CacheLookup compile(const ir::Kernel& kernel, const ArtifactKey& key);

  CompileFn compile_;
  ArtifactStore store_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
};

// The process's cache: compileKernel, with the disk folder from the environment.
KernelCache& kernelCache();

}  // namespace tj::jit
