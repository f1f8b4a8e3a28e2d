// The byte format shared by the GPU devices' disk caches (Vulkan's SPIR-V, CUDA's cubins):
// plain values in host byte order, and the kernel IR's launch interface (parameters and
// prints) that a kernel loaded from disk launches with, without lowering it again.
#pragma once
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "jit/cache_file.hpp"
#include "lower/gpu/kernel_ir.hpp"

namespace tj {

class BinaryWriter {
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
  void putParams(const std::vector<gpu::KParam>& params);  // without names
  void putPrints(const std::vector<gpu::KPrint>& prints);
  std::vector<char> bytes;
};

// Reads what a BinaryWriter wrote. Throws jit::CorruptCacheEntry("the <what> is truncated"
// or "the <what> has ...") for bytes it did not write.
class BinaryReader {
 public:
  BinaryReader(std::span<const char> bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}
  template <class T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof value).data(), sizeof value);
    return value;
  }
  // Reads the format number a writer put first; throws unless it is `expected`.
  void expectFormat(uint32_t expected);
  std::vector<char> getBytes();
  std::string getString();
  std::vector<gpu::KParam> getParams();
  // `params` bounds each print's buffer parameter.
  std::vector<gpu::KPrint> getPrints(size_t params);
  // The fault words' parameter: an index below `params`, or -1 for none.
  int64_t getFaultParam(size_t params);
  size_t remaining() const { return bytes_.size(); }
  [[noreturn]] void bad(const std::string& what) const;

 private:
  std::span<const char> take(size_t n);
  std::span<const char> bytes_;
  std::string what_;
};

}  // namespace tj
