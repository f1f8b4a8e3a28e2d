#include "devices/gpu_binary.hpp"

#include <fmt/format.h>

namespace tj {

void BinaryWriter::putBytes(std::span<const char> data) {
  put(uint64_t(data.size()));
  bytes.insert(bytes.end(), data.begin(), data.end());
}

void BinaryWriter::putParams(const std::vector<gpu::KParam>& params) {
  put(uint32_t(params.size()));
  for (const gpu::KParam& p : params) {
    put(uint8_t(p.kind));
    put(uint8_t(p.dtype));
    put(uint32_t(p.number));
    put(uint32_t(p.axis));
  }
}

void BinaryWriter::putPrints(const std::vector<gpu::KPrint>& prints) {
  put(uint32_t(prints.size()));
  for (const gpu::KPrint& p : prints) {
    putString(p.label);
    put(uint8_t(p.dtype));
    put(uint32_t(p.shape.size()));
    for (int64_t d : p.shape) put(d);
    put(uint32_t(p.param));
  }
}

std::span<const char> BinaryReader::take(size_t n) {
  if (n > bytes_.size()) throw jit::CorruptCacheEntry("the " + what_ + " is truncated");
  std::span<const char> taken = bytes_.first(n);
  bytes_ = bytes_.subspan(n);
  return taken;
}

void BinaryReader::bad(const std::string& what) const { throw jit::CorruptCacheEntry("the " + what_ + " has " + what); }

void BinaryReader::expectFormat(uint32_t expected) {
  if (auto format = get<uint32_t>(); format != expected) bad(fmt::format("format {}, not {}", format, expected));
}

int64_t BinaryReader::getFaultParam(size_t params) {
  auto p = get<int64_t>();
  if (p < -1 || p >= int64_t(params)) bad(fmt::format("fault parameter {}", p));
  return p;
}

std::vector<char> BinaryReader::getBytes() {
  std::span<const char> data = take(size_t(std::min<uint64_t>(get<uint64_t>(), ~size_t{0})));
  return {data.begin(), data.end()};
}

std::string BinaryReader::getString() {
  std::vector<char> data = getBytes();
  return {data.begin(), data.end()};
}

std::vector<gpu::KParam> BinaryReader::getParams() {
  std::vector<gpu::KParam> params;
  for (uint32_t n = get<uint32_t>(); n > 0; --n) {
    auto kind = get<uint8_t>();
    auto dtype = get<uint8_t>();
    if (kind > uint8_t(gpu::KParam::Kind::scalar) || dtype >= kDTypeCount)
      bad(fmt::format("a bad parameter (kind {}, dtype {})", kind, dtype));
    gpu::KParam p{.kind = gpu::KParam::Kind(kind), .name = {}, .dtype = DType(dtype)};
    p.number = get<uint32_t>();
    p.axis = get<uint32_t>();
    params.push_back(p);
  }
  return params;
}

std::vector<gpu::KPrint> BinaryReader::getPrints(size_t params) {
  std::vector<gpu::KPrint> prints;
  for (uint32_t n = get<uint32_t>(); n > 0; --n) {
    gpu::KPrint p{.label = getString(), .dtype = DType(get<uint8_t>()), .shape = {}, .param = 0};
    if (uint8_t(p.dtype) >= kDTypeCount) bad("a print of a bad dtype");
    uint32_t rank = get<uint32_t>();
    if (rank > 8) bad(fmt::format("a print of rank {}", rank));
    for (uint32_t d = 0; d < rank; ++d) p.shape.push_back(get<int64_t>());
    p.param = get<uint32_t>();
    if (p.param >= params) bad(fmt::format("a print into parameter {} of {}", p.param, params));
    prints.push_back(std::move(p));
  }
  return prints;
}

}  // namespace tj
