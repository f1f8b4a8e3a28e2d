#include "devices/gpu_binary.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tj {

void putParams(jit::FieldWriter& out, const std::vector<gpu::KParam>& params) {
  out.put(uint32_t(params.size()));
  for (const gpu::KParam& p : params) {
    out.put(uint8_t(p.kind));
    out.put(uint8_t(p.dtype));
    out.put(uint32_t(p.number));
    out.put(uint32_t(p.axis));
    out.put(uint32_t(p.box.size()));
    for (int64_t n : p.box) out.put(n);
    out.put(p.swizzle);
  }
}

void putPrints(jit::FieldWriter& out, const std::vector<gpu::KPrint>& prints) {
  out.put(uint32_t(prints.size()));
  for (const gpu::KPrint& p : prints) {
    out.putString(p.label);
    out.put(uint8_t(p.dtype));
    out.put(uint32_t(p.shape.size()));
    for (int64_t d : p.shape) out.put(d);
    out.put(uint32_t(p.param));
  }
}

int64_t getFaultParam(jit::FieldReader& in, size_t params) {
  auto p = in.get<int64_t>();
  if (p < -1 || p >= int64_t(params)) in.bad(fmt::format("fault parameter {}", p));
  return p;
}

std::vector<gpu::KParam> getParams(jit::FieldReader& in) {
  std::vector<gpu::KParam> params;
  for (uint32_t n = in.get<uint32_t>(); n > 0; --n) {
    auto kind = in.get<uint8_t>();
    auto dtype = in.get<uint8_t>();
    if (kind > uint8_t(gpu::KParam::Kind::program_count) || dtype >= kDTypeCount)
      in.bad(fmt::format("a bad parameter (kind {}, dtype {})", kind, dtype));
    gpu::KParam p{.kind = gpu::KParam::Kind(kind), .name = {}, .dtype = DType(dtype)};
    p.number = in.get<uint32_t>();
    p.axis = in.get<uint32_t>();
    uint32_t rank = in.get<uint32_t>();
    if (rank > 8) in.bad(fmt::format("a tensor map box of rank {}", rank));
    for (uint32_t d = 0; d < rank; ++d) p.box.push_back(in.get<int64_t>());
    p.swizzle = in.get<int64_t>();
    // Only a tensor map has a box (of positive sizes) and a swizzle (a span of the pattern).
    bool map = p.kind == gpu::KParam::Kind::tensor_map;
    if (map ? p.box.empty() || std::ranges::any_of(p.box, [](int64_t n) { return n < 1; }) ||
                  (p.swizzle != 0 && p.swizzle != 32 && p.swizzle != 64 && p.swizzle != 128)
            : !p.box.empty() || p.swizzle != 0)
      in.bad(fmt::format("a bad parameter (kind {}, box of rank {}, swizzle {})", kind, rank, p.swizzle));
    params.push_back(std::move(p));
  }
  return params;
}

std::vector<gpu::KPrint> getPrints(jit::FieldReader& in, size_t params) {
  std::vector<gpu::KPrint> prints;
  for (uint32_t n = in.get<uint32_t>(); n > 0; --n) {
    gpu::KPrint p{.label = in.getString(), .dtype = DType(in.get<uint8_t>()), .shape = {}, .param = 0};
    if (uint8_t(p.dtype) >= kDTypeCount) in.bad("a print of a bad dtype");
    uint32_t rank = in.get<uint32_t>();
    if (rank > 8) in.bad(fmt::format("a print of rank {}", rank));
    for (uint32_t d = 0; d < rank; ++d) p.shape.push_back(in.get<int64_t>());
    p.param = in.get<uint32_t>();
    if (p.param >= params) in.bad(fmt::format("a print into parameter {} of {}", p.param, params));
    prints.push_back(std::move(p));
  }
  return prints;
}

}  // namespace tj
