// The one disk cache of compiled artifacts, for every backend: CPU object code, Vulkan's
// SPIR-V, CUDA's cubins, AMD code objects, the reasons a device refused a kernel, and Vulkan's pipeline cache.
//
// An entry is keyed by an ArtifactKey (kind, IR semantic hash, the backend's device facts,
// its compile options and the compiler build id) and lives in one file named by the hex
// xxh3 of the key text and the kind's extension. Each file is one byte format:
//
//   "TJKCACHE"  u32 format version  u32 kind  u32 key size  u32 zero  u64 payload size
//   u64 xxh3 of the payload  key bytes  payload bytes        (host byte order)
//
// A torn file, one of another format version or kind, or one for another key is rejected
// here, once for every backend: it is reported and rebuilt. Files are written atomically
// (jit/cache_file.hpp), so readers, and processes writing one entry at once, only ever see
// whole files. Each backend serialises only its own payload, with FieldWriter/FieldReader.
// The devices keep what they loaded (an entry point, a pipeline, a module) in memory.
#pragma once
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ir/error.hpp"

namespace tj::jit {

// Kept in each file's header: a file renamed to another kind's name is rejected.
enum class ArtifactKind : uint32_t {
  cpuObject = 1,       // ".tjk": a CPU kernel's object code
  spirvKernel = 2,     // ".spvk": a Vulkan kernel (devices/vulkan/kernel_binary.hpp)
  cubin = 3,           // ".cubin": a CUDA kernel (devices/cuda/cubin_cache.hpp)
  refusal = 4,         // ".spvno": why a device cannot run a kernel
  pipelineCache = 5,   // ".vkpc": a Vulkan driver's pipeline cache data
  codeObject = 6,      // ".hsaco": a HIP kernel (devices/hip/hip_device.hpp)
};
std::string_view artifactExtension(ArtifactKind kind);

// Which path served a lookup: the device's memory, this cache, or a build.
enum class CacheSource { memory, disk, compiled };
std::string_view cacheSourceName(CacheSource s);  // "memory", "disk", "miss"

// tilejit version, LLVM version and a hash of the ir/, layout/, lower/ and jit/ sources:
// whatever changes generated code for the same IR.
const std::string& compilerBuildId();

struct ArtifactKey {
  ArtifactKind kind = ArtifactKind::cpuObject;
  uint64_t irHash = 0;  // ir::semanticHash
  std::string device;   // the backend's device facts
  std::string options;  // compile options and layout target facts that change the code
  std::string buildId = compilerBuildId();
  std::string str() const;  // the full key but the kind, as stored in the file
};

// An entry that exists but cannot be trusted; what() gives the reason.
struct CorruptCacheEntry : Error {
  using Error::Error;
};

// Appends plain values (host byte order) and sized byte strings to a payload.
class FieldWriter {
 public:
  template <class T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    size_t at = bytes.size();
    bytes.resize(at + sizeof value);
    std::memcpy(bytes.data() + at, &value, sizeof value);
  }
  void putBytes(std::span<const char> data);  // its size, then the bytes
  void putString(const std::string& s) { putBytes(s); }
  std::vector<char> bytes;
};

// Reads what a FieldWriter wrote. Throws CorruptCacheEntry("the <what> is truncated" or
// "the <what> has ...") for bytes it did not write.
class FieldReader {
 public:
  FieldReader(std::span<const char> bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}
  template <class T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof value).data(), sizeof value);
    return value;
  }
  // Reads the payload format number a writer put first; throws unless it is `expected`.
  // A backend bumps its number when its payload changes outside what the build id covers.
  void expectFormat(uint32_t expected);
  std::vector<char> getBytes();
  std::string getString();
  size_t remaining() const { return bytes_.size(); }
  [[noreturn]] void bad(const std::string& what) const;

 private:
  std::span<const char> take(size_t n);
  std::span<const char> bytes_;
  std::string what_;
};

// The entries in one folder.
class ArtifactStore {
 public:
  // An empty folder stores nothing: reads find nothing, writes do nothing.
  explicit ArtifactStore(std::filesystem::path dir) : dir_(std::move(dir)) {}
  bool enabled() const { return !dir_.empty(); }
  std::filesystem::path path(const ArtifactKey& key) const;

  // The payload; nullopt when there is no entry. Throws CorruptCacheEntry for a bad or
  // unreadable file, or anything but a regular file.
  std::optional<std::vector<char>> read(const ArtifactKey& key) const;

  // What `use` makes of the payload; nullopt when there is no entry and, after a warning,
  // when it is corrupt or `use` rejects it with an Error (a checksummed payload that fails
  // to load is as untrustworthy as a torn one): the caller then rebuilds and replaces it.
  template <class Use>
  auto load(const ArtifactKey& key, Use use) const -> std::optional<decltype(use(std::vector<char>{}))> {
    try {
      std::optional<std::vector<char>> payload = read(key);
      if (!payload) return std::nullopt;
      return use(std::move(*payload));
    } catch (const Error& e) {
      warnUnusable(key, e.what());
      return std::nullopt;
    }
  }

  // Returns false, after a warning, when it cannot: a cache that cannot be written only
  // costs a rebuild.
  bool write(const ArtifactKey& key, std::span<const char> payload) const;

  // Why the device of `key` cannot run its kernel, decided by an earlier build, so that
  // later processes do not lower it again; kept beside the kernel's own entry.
  std::optional<std::string> refusal(const ArtifactKey& key) const;
  void refuse(const ArtifactKey& key, std::string_view why) const;

 private:
  void warnUnusable(const ArtifactKey& key, const char* why) const;
  std::filesystem::path dir_;
};

}  // namespace tj::jit
