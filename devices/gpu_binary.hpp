// The payload fields both GPU devices' cache entries share (Vulkan's SPIR-V, CUDA's cubins):
// the kernel IR's launch interface (parameters and prints) that a kernel loaded from disk
// launches with, without lowering it again. The entries themselves are artifacts of the one
// cache (jit/artifact_cache.hpp).
#pragma once
#include <vector>

#include "jit/artifact_cache.hpp"
#include "lower/gpu/kernel_ir.hpp"

namespace tj {

void putParams(jit::FieldWriter& out, const std::vector<gpu::KParam>& params);  // without names; tensor maps' boxes and swizzles too
void putPrints(jit::FieldWriter& out, const std::vector<gpu::KPrint>& prints);

// Each throws jit::CorruptCacheEntry for fields the writers above did not write.
std::vector<gpu::KParam> getParams(jit::FieldReader& in);
// `params` bounds each print's buffer parameter.
std::vector<gpu::KPrint> getPrints(jit::FieldReader& in, size_t params);
// The fault words' parameter: an index below `params`, or -1 for none.
int64_t getFaultParam(jit::FieldReader& in, size_t params);

}  // namespace tj
