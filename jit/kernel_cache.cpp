#include "jit/kernel_cache.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>

#include "ir/passes.hpp"
#include "jit/cpu_jit.hpp"
#include "jit/timing.hpp"

namespace tj::jit {

namespace fs = std::filesystem;

namespace {

std::mutex gStatsMutex;
CacheStats gStats;

void record(const CacheLookup& r, uint64_t irHash) {
  std::lock_guard lock(gStatsMutex);
  switch (r.source) {
    case CacheSource::memory: ++gStats.memoryHits; break;
    case CacheSource::disk:
      ++gStats.diskHits;
      gStats.lastDiskLoadMs = r.loadMs;
      break;
    case CacheSource::compiled:
      ++gStats.misses;
      gStats.lastCompileMs = r.compileMs;
      gStats.totalCompileMs += r.compileMs;
      break;
  }
  if (!spdlog::should_log(spdlog::level::debug)) return;  // launches hit this: no formatting for nothing
  spdlog::debug("tilejit: kernel {} cache={} compile_ms={:.2f} load_ms={:.3f} (memory {}, disk {}, miss {}, "
                "total compile {:.1f} ms)",
                ir::hashHex(irHash), cacheSourceName(r.source), r.compileMs, r.loadMs, gStats.memoryHits,
                gStats.diskHits, gStats.misses, gStats.totalCompileMs);
}

}  // namespace

CacheStats cacheStats() {
  std::lock_guard lock(gStatsMutex);
  return gStats;
}

void resetCacheStats() {
  std::lock_guard lock(gStatsMutex);
  gStats = {};
}

KernelCache::KernelCache(CompileFn compile, fs::path diskDir)
    : compile_(std::move(compile)), store_(std::move(diskDir)) {}

fs::path KernelCache::diskDirFromEnvironment() {
  const char* enabled = std::getenv("TILEJIT_CACHE");
  if (enabled && std::string_view(enabled) == "0") return {};
  if (const char* dir = std::getenv("TILEJIT_CACHE_DIR"); dir && *dir) return dir;
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "tilejit";
  return {};
}

CacheLookup KernelCache::lookup(const ir::Kernel& kernel, const ArtifactKey& key) {
  std::string keyText = key.str();
  std::shared_ptr<Slot> s = slot(keyText);
  std::lock_guard lock(s->mutex);
  CacheLookup r{s->entry, CacheSource::memory};
  if (!r.entry) {
    std::optional<CacheLookup> loaded = loadFromDisk(key);
    r = loaded ? *loaded : compile(kernel, key);
    s->entry = r.entry;
  }
  record(r, key.irHash);
  return r;
}

std::shared_ptr<KernelCache::Slot> KernelCache::slot(const std::string& keyText) {
  std::lock_guard lock(mutex_);
  std::shared_ptr<Slot>& s = slots_[keyText];
  if (!s) s = std::make_shared<Slot>();
  return s;
}

std::optional<CacheLookup> KernelCache::loadFromDisk(const ArtifactKey& key) {
  auto start = Clock::now();
  return store_.load(key, [&](const std::vector<char>& object) {
    cpu::KernelEntry entry = loadKernel(object, cpu::entrySymbol(key.irHash));
    return CacheLookup{entry, CacheSource::disk, 0, msSince(start)};
  });
}

CacheLookup KernelCache::compile(const ir::Kernel& kernel, const ArtifactKey& key) {
  std::string entryName = cpu::entrySymbol(key.irHash);
  auto start = Clock::now();
  ObjectCode code = compile_(kernel, entryName);
  cpu::KernelEntry entry = loadKernel(code.bytes, entryName);
  double ms = msSince(start);
  store_.write(key, code.bytes);
  return {entry, CacheSource::compiled, ms, 0};
}

KernelCache& kernelCache() {
  static KernelCache cache([](const ir::Kernel& kernel, const std::string& entry) { return compileKernel(kernel, entry); },
                           KernelCache::diskDirFromEnvironment());
  return cache;
}

}  // namespace tj::jit
