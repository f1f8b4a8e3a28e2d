// Compiled CPU kernels, cached in memory and on disk.
//
// A kernel is keyed by its semantic IR hash, the device feature string, the
// compile options and the compiler build id. In memory a repeated lookup does
// no LLVM work; on disk ($TILEJIT_CACHE_DIR, default $HOME/.cache/tilejit;
// TILEJIT_CACHE=0 turns it off) one file per key holds the object code (see
// jit/cache_file.hpp). A corrupt entry is reported, recompiled and replaced.
// The Vulkan device keeps its SPIR-V in the same folder (devices/vulkan/kernel_binary.hpp).
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
#include "jit/cpu_compiler.hpp"
#include "lower/cpu/abi.hpp"

namespace tj::jit {

// Which path served a lookup.
enum class CacheSource { memory, disk, compiled };
std::string_view cacheSourceName(CacheSource s);  // "memory", "disk", "miss"

// tilejit version, LLVM version and a hash of the CPU lowering's version:
// whatever changes generated code for the same IR.
const std::string& compilerBuildId();

// A disk entry's file name: the hex xxh3 of its full key text, then `extension`.
std::string cacheFileName(std::string_view keyText, std::string_view extension);

struct CacheKey {
  uint64_t irHash = 0;  // ir::semanticHash
  std::string device;   // CpuTarget::deviceFeatures
  std::string options;  // compile options that change the code
  std::string buildId = compilerBuildId();
  std::string str() const;  // the full key, as stored in a disk entry
};

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
  // disk. Thread-safe; concurrent lookups of one key compile it once.
  CacheLookup lookup(const ir::Kernel& kernel, const CacheKey& key);

  // The disk entry for `key`: the hex xxh3 of key.str().
  std::filesystem::path entryPath(const std::string& keyText) const;

 private:
  struct Slot {
    std::mutex mutex;  // held while the key is loaded or compiled
    cpu::KernelEntry entry = nullptr;
  };
  std::shared_ptr<Slot> slot(const std::string& keyText);
  std::optional<CacheLookup> loadFromDisk(const CacheKey& key, const std::string& keyText);
  CacheLookup compile(const ir::Kernel& kernel, const CacheKey& key, const std::string& keyText);

  CompileFn compile_;
  std::filesystem::path diskDir_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
};

// The process's cache: compileKernel, with the disk folder from the environment.
KernelCache& kernelCache();

}  // namespace tj::jit
