#include "jit/cache_file.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>
#include <xxh3.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

namespace tj::jit {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'T', 'J', 'K', 'C', 'A', 'C', 'H', 'E'};
constexpr uint32_t kFormatVersion = 1;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t keySize;
  uint64_t payloadSize;
  uint64_t checksum;
};
static_assert(sizeof(Header) == 32);

// For messages: a damaged key may hold any bytes.
std::string printable(std::string_view s) {
  std::string out(s);
  std::replace_if(out.begin(), out.end(), [](char c) { return !std::isprint(static_cast<unsigned char>(c)); }, '?');
  return out;
}

uint64_t checksum(std::span<const char> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

}  // namespace

std::vector<char> encodeCacheEntry(std::string_view key, std::span<const char> payload) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kFormatVersion;
  h.keySize = static_cast<uint32_t>(key.size());
  h.payloadSize = payload.size();
  h.checksum = checksum(payload);
  std::vector<char> out(sizeof h + key.size() + payload.size());
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + sizeof h, key.data(), key.size());
  std::memcpy(out.data() + sizeof h + key.size(), payload.data(), payload.size());
  return out;
}

std::vector<char> decodeCacheEntry(std::span<const char> entry, std::string_view key) {
  Header h;
  if (entry.size() < sizeof h)
    throw CorruptCacheEntry("truncated header: " + std::to_string(entry.size()) + " bytes");
  std::memcpy(&h, entry.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw CorruptCacheEntry("bad magic");
  if (h.version != kFormatVersion)
    throw CorruptCacheEntry("format version " + std::to_string(h.version) + ", expected " +
                            std::to_string(kFormatVersion));
  // Compared one term at a time so that a huge payloadSize cannot overflow.
  uint64_t rest = entry.size() - sizeof h;
  if (h.keySize > rest || h.payloadSize != rest - h.keySize)
    throw CorruptCacheEntry("size mismatch: the header promises " + std::to_string(h.keySize) + " key and " +
                            std::to_string(h.payloadSize) + " payload bytes, the file has " + std::to_string(rest));
  std::string_view stored(entry.data() + sizeof h, h.keySize);
  if (stored != key) throw CorruptCacheEntry("key mismatch: the entry is for '" + printable(stored) + "'");
  std::span<const char> payload = entry.subspan(sizeof h + h.keySize);
  if (checksum(payload) != h.checksum) throw CorruptCacheEntry("payload checksum mismatch");
  return {payload.begin(), payload.end()};
}

std::optional<std::vector<char>> readCacheEntry(const fs::path& path, std::string_view key) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw CorruptCacheEntry("cannot open it");
  std::vector<char> bytes(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) throw CorruptCacheEntry("cannot read it");
  return decodeCacheEntry(bytes, key);
}

void warnUnusableCacheEntry(const fs::path& path, const char* why) {
  spdlog::warn("tilejit: kernel cache entry {} is unusable ({}); rebuilding it", path.string(), why);
}

void writeFileAtomically(const fs::path& path, std::span<const char> bytes) {
  static std::atomic<uint64_t> writes{0};
  // Unique per process and thread, in the same folder so rename is atomic.
  fs::path temp = path;
  temp += ".tmp." + std::to_string(getpid()) + "." + std::to_string(writes++);
  try {
    fs::create_directories(path.parent_path());
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw std::runtime_error("cannot write " + temp.string());
    fs::rename(temp, path);
  } catch (const std::exception&) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw;
  }
}

bool writeCacheEntry(const fs::path& path, std::string_view key, std::span<const char> payload) {
  try {
    writeFileAtomically(path, encodeCacheEntry(key, payload));
    return true;
  } catch (const std::exception& e) {
    spdlog::warn("tilejit: cannot write kernel cache entry {}: {}", path.string(), e.what());
    return false;
  }
}

}  // namespace tj::jit
