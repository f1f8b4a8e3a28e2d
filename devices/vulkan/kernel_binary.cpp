#include "devices/vulkan/kernel_binary.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <type_traits>

#include "jit/cache_file.hpp"
#include "jit/timing.hpp"
#include "lower/gpu/spread_over_warps.hpp"
#include "lower/spirv/print_kernel_ir.hpp"

namespace tj::vulkan {

namespace {

// Bumped whenever the encoding below, or what buildKernelBinary records, changes
// (the build id covers ir/, layout/, lower/ and jit/, not this file).
constexpr uint32_t kFormat = 3;

// Parameter indices of the buffers the kernel stores to.
void storedBuffers(const gpu::KBlock& b, std::vector<bool>& stored) {
  for (const gpu::KInst& i : b.insts) {
    if (i.op == gpu::KOp::store_global || i.op == gpu::KOp::atomic_global)
      for (const gpu::KAttr& a : i.attrs)
        if (a.name == "buffer") stored.at(size_t(std::get<int64_t>(a.value))) = true;
    for (const gpu::KBlock& r : i.regions) storedBuffers(r, stored);
  }
}

class Writer {
 public:
  template <class T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    size_t at = bytes.size();
    bytes.resize(at + sizeof value);
    std::memcpy(bytes.data() + at, &value, sizeof value);
  }
  void putString(const std::string& s) {
    put(uint32_t(s.size()));
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  std::vector<char> bytes;
};

class Reader {
 public:
  explicit Reader(std::span<const char> bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    T value;
    if (sizeof value > bytes_.size()) throw jit::CorruptCacheEntry("the Vulkan kernel is truncated");
    std::memcpy(&value, bytes_.data(), sizeof value);
    bytes_ = bytes_.subspan(sizeof value);
    return value;
  }
  std::string getString() {
    auto n = get<uint32_t>();
    if (n > bytes_.size()) throw jit::CorruptCacheEntry("the Vulkan kernel is truncated");
    std::string s(bytes_.data(), n);
    bytes_ = bytes_.subspan(n);
    return s;
  }
  size_t remaining() const { return bytes_.size(); }

 private:
  std::span<const char> bytes_;
};

void bad(const std::string& what) { throw jit::CorruptCacheEntry("the Vulkan kernel has " + what); }

gpu::KParam readParam(Reader& in) {
  auto kind = in.get<uint8_t>();
  auto dtype = in.get<uint8_t>();
  if (kind > uint8_t(gpu::KParam::Kind::scalar) || dtype >= kDTypeCount)
    bad(fmt::format("a bad parameter (kind {}, dtype {})", kind, dtype));
  gpu::KParam p{.kind = gpu::KParam::Kind(kind), .name = {}, .dtype = DType(dtype)};
  p.number = in.get<uint32_t>();
  p.axis = in.get<uint32_t>();
  return p;
}

gpu::KPrint readPrint(Reader& in, size_t params) {
  gpu::KPrint p{.label = in.getString(), .dtype = DType(in.get<uint8_t>()), .shape = {}, .param = 0};
  if (uint8_t(p.dtype) >= kDTypeCount) bad("a print of a bad dtype");
  uint32_t rank = in.get<uint32_t>();
  if (rank > 8) bad(fmt::format("a print of rank {}", rank));
  for (uint32_t d = 0; d < rank; ++d) p.shape.push_back(in.get<int64_t>());
  p.param = in.get<uint32_t>();
  if (p.param >= params) bad(fmt::format("a print into parameter {} of {}", p.param, params));
  return p;
}

// Where the reason this device cannot run a kernel is kept, beside where its binary would be.
std::filesystem::path refusalPath(const std::filesystem::path& dir, const std::string& keyText) {
  return dir / jit::cacheFileName(keyText, ".spvno");
}

using jit::Clock;
using jit::msSince;

}  // namespace

KernelBinary buildKernelBinary(const ir::Kernel& kernel, const layout::Target& target) {
  gpu::KernelFunction f = gpu::lowerWithinCodeBudget(kernel, target);
  KernelBinary b{.params = f.params, .stored = std::vector<bool>(f.params.size(), false), .prints = f.prints,
                 .faultParam = f.faultParam,
                 .bufferCount = spirv::paramsBinding(f) + (spirv::pushConstantBytes(f) ? 0 : 1),
                 .pushConstantBytes = spirv::pushConstantBytes(f), .workgroupSize = f.workgroupSize,
                 .subgroupSize = f.subgroupSize,
                 .spirv = std::make_shared<const std::vector<uint32_t>>(spirv::printSpirv(f, target.sharedBytes))};
  for (gpu::KParam& p : b.params) p.name.clear();
  storedBuffers(f.body, b.stored);
  return b;
}

std::vector<char> encodeKernelBinary(const KernelBinary& b) {
  Writer out;
  out.put(kFormat);
  out.put(b.bufferCount);
  out.put(b.pushConstantBytes);
  out.put(b.workgroupSize);
  out.put(b.subgroupSize);
  out.put(uint32_t(b.params.size()));
  for (size_t i = 0; i < b.params.size(); ++i) {
    const gpu::KParam& p = b.params[i];
    out.put(uint8_t(p.kind));
    out.put(uint8_t(p.dtype));
    out.put(uint32_t(p.number));
    out.put(uint32_t(p.axis));
    out.put(uint8_t(b.stored[i]));
  }
  out.put(uint32_t(b.prints.size()));
  for (const gpu::KPrint& p : b.prints) {
    out.putString(p.label);
    out.put(uint8_t(p.dtype));
    out.put(uint32_t(p.shape.size()));
    for (int64_t d : p.shape) out.put(d);
    out.put(uint32_t(p.param));
  }
  out.put(b.faultParam);
  out.put(uint64_t(b.spirv->size()));
  for (uint32_t w : *b.spirv) out.put(w);
  return std::move(out.bytes);
}

KernelBinary decodeKernelBinary(std::span<const char> bytes) {
  Reader in(bytes);
  if (uint32_t format = in.get<uint32_t>(); format != kFormat) bad(fmt::format("format {}, not {}", format, kFormat));
  KernelBinary b;
  b.bufferCount = in.get<uint32_t>();
  b.pushConstantBytes = in.get<uint32_t>();
  b.workgroupSize = in.get<int64_t>();
  b.subgroupSize = in.get<int64_t>();
  for (uint32_t n = in.get<uint32_t>(); n > 0; --n) {
    b.params.push_back(readParam(in));
    b.stored.push_back(in.get<uint8_t>() != 0);
  }
  for (uint32_t n = in.get<uint32_t>(); n > 0; --n) b.prints.push_back(readPrint(in, b.params.size()));
  b.faultParam = in.get<int64_t>();
  if (b.faultParam < -1 || b.faultParam >= int64_t(b.params.size())) bad(fmt::format("fault parameter {}", b.faultParam));
  uint64_t count = in.get<uint64_t>();
  if (count != in.remaining() / 4 || in.remaining() % 4)
    bad(fmt::format("{} SPIR-V words in {} bytes", count, in.remaining()));
  auto words = std::make_shared<std::vector<uint32_t>>(count);
  for (uint32_t& w : *words) w = in.get<uint32_t>();
  b.spirv = std::move(words);
  return b;
}

jit::CacheKey kernelBinaryKey(uint64_t irHash, const std::string& deviceFeatures, const layout::Target& t) {
  std::string options = fmt::format("spirv target={} sg={} warps={} threads={} shared={} loops={} budget={}", t.name,
                                    t.subgroupSize, t.warpsPerProgram, t.maxWorkgroupThreads, t.sharedBytes,
                                    t.loopIterationLimit, t.codeBudget);
  return {irHash, deviceFeatures, options};
}

LoadedBinary loadOrBuildKernelBinary(const ir::Kernel& kernel, const jit::CacheKey& key, const layout::Target& target,
                                     const std::filesystem::path& dir, bool rebuild) {
  auto start = Clock::now();
  std::string keyText = key.str();
  std::filesystem::path path = dir / jit::cacheFileName(keyText, ".spvk");
  if (!dir.empty() && !rebuild) {
    if (auto reason = jit::loadCacheEntry(refusalPath(dir, keyText), keyText, [](std::vector<char> r) {
          return std::string(r.begin(), r.end());
        }))
      throw KernelRefused(*reason, jit::CacheSource::disk, msSince(start));
    if (auto hit = jit::loadCacheEntry(path, keyText, decodeKernelBinary))
      return {std::move(*hit), jit::CacheSource::disk, msSince(start)};
  }
  std::optional<KernelBinary> binary;
  try {
    binary = buildKernelBinary(kernel, target);
  } catch (const Error& e) {
    if (!dir.empty()) jit::writeCacheEntry(refusalPath(dir, keyText), keyText, std::string_view(e.what()));
    throw KernelRefused(e.what(), jit::CacheSource::compiled, msSince(start));
  }
  LoadedBinary built{std::move(*binary), jit::CacheSource::compiled, msSince(start)};
  if (!dir.empty()) jit::writeCacheEntry(path, keyText, encodeKernelBinary(built.binary));
  return built;
}

}  // namespace tj::vulkan
