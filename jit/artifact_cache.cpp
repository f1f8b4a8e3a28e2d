#include "jit/artifact_cache.hpp"

#include <fmt/format.h>
#include <llvm/Config/llvm-config.h>
#include <spdlog/spdlog.h>
#include <xxh3.h>

#include <algorithm>
#include <cctype>

#include "ir/passes.hpp"
#include "jit/cache_file.hpp"

#include "tilejit_source_hash.hpp"  // generated: a hash of ir/, layout/, lower/ and jit/ sources

namespace tj::jit {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'T', 'J', 'K', 'C', 'A', 'C', 'H', 'E'};
// 2: the header names the kind.
constexpr uint32_t kFormatVersion = 2;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t kind;
  uint32_t keySize;
  uint32_t zero;  // keeps the sizes below 8-byte aligned
  uint64_t payloadSize;
  uint64_t checksum;
};
static_assert(sizeof(Header) == 40);

// For messages: a damaged key may hold any bytes.
std::string printable(std::string_view s) {
  std::string out(s);
  std::replace_if(out.begin(), out.end(), [](char c) { return !std::isprint(static_cast<unsigned char>(c)); }, '?');
  return out;
}

uint64_t checksum(std::span<const char> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

std::vector<char> encode(ArtifactKind kind, std::string_view key, std::span<const char> payload) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kFormatVersion;
  h.kind = uint32_t(kind);
  h.keySize = uint32_t(key.size());
  h.payloadSize = payload.size();
  h.checksum = checksum(payload);
  std::vector<char> out(sizeof h + key.size() + payload.size());
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + sizeof h, key.data(), key.size());
  std::memcpy(out.data() + sizeof h + key.size(), payload.data(), payload.size());
  return out;
}

// The header of an entry of `kind`, checked against the entry's size.
Header decodeHeader(std::span<const char> entry, ArtifactKind kind) {
  Header h;
  if (entry.size() < sizeof h) throw CorruptCacheEntry(fmt::format("truncated header: {} bytes", entry.size()));
  std::memcpy(&h, entry.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw CorruptCacheEntry("bad magic");
  if (h.version != kFormatVersion)
    throw CorruptCacheEntry(fmt::format("format version {}, expected {}", h.version, kFormatVersion));
  if (h.kind != uint32_t(kind))
    throw CorruptCacheEntry(fmt::format("kind {}, expected {} ({})", h.kind, uint32_t(kind), artifactExtension(kind)));
  // Compared one term at a time so that a huge payloadSize cannot overflow.
  uint64_t rest = entry.size() - sizeof h;
  if (h.keySize > rest || h.payloadSize != rest - h.keySize)
    throw CorruptCacheEntry(fmt::format("size mismatch: the header promises {} key and {} payload bytes, the file has {}",
                                        h.keySize, h.payloadSize, rest));
  return h;
}

std::vector<char> decode(std::span<const char> entry, ArtifactKind kind, std::string_view key) {
  Header h = decodeHeader(entry, kind);
  std::string_view stored(entry.data() + sizeof h, h.keySize);
  if (stored != key) throw CorruptCacheEntry("key mismatch: the entry is for '" + printable(stored) + "'");
  std::span<const char> payload = entry.subspan(sizeof h + h.keySize);
  if (checksum(payload) != h.checksum) throw CorruptCacheEntry("payload checksum mismatch");
  return {payload.begin(), payload.end()};
}

ArtifactKey refusalKey(ArtifactKey key) {
  key.kind = ArtifactKind::refusal;
  return key;
}

}  // namespace

std::string_view artifactExtension(ArtifactKind kind) {
  switch (kind) {
    case ArtifactKind::cpuObject: return ".tjk";
    case ArtifactKind::spirvKernel: return ".spvk";
    case ArtifactKind::cubin: return ".cubin";
    case ArtifactKind::codeObject: return ".hsaco";
    case ArtifactKind::refusal: return ".spvno";
    case ArtifactKind::pipelineCache: return ".vkpc";
  }
  return ".unknown";
}

std::string_view cacheSourceName(CacheSource s) {
  switch (s) {
    case CacheSource::memory: return "memory";
    case CacheSource::disk: return "disk";
    case CacheSource::compiled: return "miss";
  }
  return "?";
}

const std::string& compilerBuildId() {
  static const std::string id = std::string("tilejit-") + TILEJIT_VERSION + " llvm-" + LLVM_VERSION_STRING +
                                " sources-" + TILEJIT_SOURCE_HASH;
  return id;
}

std::string ArtifactKey::str() const {
  return "ir=" + ir::hashHex(irHash) + " device=" + device + " options=" + options + " build=" + buildId;
}

void FieldWriter::putBytes(std::span<const char> data) {
  put(uint64_t(data.size()));
  bytes.insert(bytes.end(), data.begin(), data.end());
}

std::span<const char> FieldReader::take(size_t n) {
  if (n > bytes_.size()) throw CorruptCacheEntry("the " + what_ + " is truncated");
  std::span<const char> taken = bytes_.first(n);
  bytes_ = bytes_.subspan(n);
  return taken;
}

void FieldReader::bad(const std::string& what) const { throw CorruptCacheEntry("the " + what_ + " has " + what); }

void FieldReader::expectFormat(uint32_t expected) {
  if (auto format = get<uint32_t>(); format != expected) bad(fmt::format("format {}, not {}", format, expected));
}

std::vector<char> FieldReader::getBytes() {
  std::span<const char> data = take(size_t(std::min<uint64_t>(get<uint64_t>(), ~size_t{0})));
  return {data.begin(), data.end()};
}

std::string FieldReader::getString() {
  std::vector<char> data = getBytes();
  return {data.begin(), data.end()};
}

fs::path ArtifactStore::path(const ArtifactKey& key) const {
  std::string text = key.str();
  return dir_ / (ir::hashHex(XXH3_64bits(text.data(), text.size())) + std::string(artifactExtension(key.kind)));
}

std::optional<std::vector<char>> ArtifactStore::read(const ArtifactKey& key) const {
  if (!enabled()) return std::nullopt;
  std::optional<std::vector<char>> bytes;
  try {
    bytes = readRegularFile(path(key));
  } catch (const Error& e) {
    throw CorruptCacheEntry(e.what());
  }
  if (!bytes) return std::nullopt;
  return decode(*bytes, key.kind, key.str());
}

void ArtifactStore::warnUnusable(const ArtifactKey& key, const char* why) const {
  spdlog::warn("tilejit: kernel cache entry {} is unusable ({}); rebuilding it", path(key).string(), why);
}

bool ArtifactStore::write(const ArtifactKey& key, std::span<const char> payload) const {
  if (!enabled()) return false;
  fs::path file = path(key);
  try {
    writeFileAtomically(file, encode(key.kind, key.str(), payload));
    return true;
  } catch (const std::exception& e) {
    spdlog::warn("tilejit: cannot write kernel cache entry {}: {}", file.string(), e.what());
    return false;
  }
}

std::optional<std::string> ArtifactStore::refusal(const ArtifactKey& key) const {
  return load(refusalKey(key), [](const std::vector<char>& why) { return std::string(why.begin(), why.end()); });
}

void ArtifactStore::refuse(const ArtifactKey& key, std::string_view why) const { write(refusalKey(key), why); }

}  // namespace tj::jit
