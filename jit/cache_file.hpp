// One kernel-cache entry on disk: a header naming the full key, then the
// object code.
//
//   "TJKCACHE"  u32 format version  u32 key size  u64 payload size
//   u64 xxh3 of the payload  key bytes  payload bytes        (host byte order)
//
// Entries are written to a temporary file in the same folder and renamed into
// place, so readers, and processes writing the same entry at once, only ever
// see whole files.
#pragma once
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ir/error.hpp"

namespace tj::jit {

// An entry that exists but cannot be trusted; what() gives the reason.
struct CorruptCacheEntry : Error {
  using Error::Error;
};

std::vector<char> encodeCacheEntry(std::string_view key, std::span<const char> payload);

// The payload of an entry for `key`. Throws CorruptCacheEntry when the magic,
// version, sizes, key or checksum do not match.
std::vector<char> decodeCacheEntry(std::span<const char> entry, std::string_view key);

// The bytes of the regular file at `path`; nullopt when there is none. Throws
// Error for anything else there (a directory, a FIFO, ...), which is never
// opened for waiting or read, and for a file it cannot read.
std::optional<std::vector<char>> readRegularFile(const std::filesystem::path& path);

// The payload at `path`; nullopt when there is no such file. Throws
// CorruptCacheEntry for a bad or unreadable file, or anything but a regular file.
std::optional<std::vector<char>> readCacheEntry(const std::filesystem::path& path, std::string_view key);

// What `use` makes of the payload at `path`; nullopt when there is no such file, and,
// after a warning, when the entry is corrupt or `use` rejects it with an Error (a
// checksummed payload that fails to load is as untrustworthy as a torn one): the
// caller then rebuilds it and replaces the entry.
void warnUnusableCacheEntry(const std::filesystem::path& path, const char* why);
template <class Use>
auto loadCacheEntry(const std::filesystem::path& path, std::string_view key, Use use)
    -> std::optional<decltype(use(std::vector<char>{}))> {
  try {
    std::optional<std::vector<char>> payload = readCacheEntry(path, key);
    if (!payload) return std::nullopt;
    return use(std::move(*payload));
  } catch (const Error& e) {
    warnUnusableCacheEntry(path, e.what());
    return std::nullopt;
  }
}

// Writes atomically, creating the folder. Returns false, after a warning,
// when it cannot: a cache that cannot be written only costs a recompile.
bool writeCacheEntry(const std::filesystem::path& path, std::string_view key, std::span<const char> payload);

// Writes `bytes` to `path` through a temporary file in the same folder (made if missing),
// so readers only ever see whole files. The first write into a folder in a process
// removes the temporaries there older than ten minutes, which writers that died
// between writing and renaming left behind. Throws std::exception on failure, naming
// the system's reason ("No space left on device"); a write past the file size limit
// (ulimit -f) fails with "File too large" instead of raising SIGXFSZ, which would kill
// the process.
void writeFileAtomically(const std::filesystem::path& path, std::span<const char> bytes);

}  // namespace tj::jit
