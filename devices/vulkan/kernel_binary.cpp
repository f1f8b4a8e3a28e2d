#include "devices/vulkan/kernel_binary.hpp"

#include <fmt/format.h>

#include <optional>

#include "devices/gpu_binary.hpp"
#include "jit/timing.hpp"
#include "lower/gpu/spread_over_warps.hpp"
#include "lower/spirv/print_kernel_ir.hpp"

namespace tj::vulkan {

namespace {

// Bumped whenever the encoding below, or what buildKernelBinary records, changes
// (the build id covers ir/, layout/, lower/ and jit/, not this file).
constexpr uint32_t kFormat = 5;

// Parameter indices of the buffers the kernel stores to.
void storedBuffers(const gpu::KBlock& b, std::vector<bool>& stored) {
  for (const gpu::KInst& i : b.insts) {
    if (i.op == gpu::KOp::store_global || i.op == gpu::KOp::atomic_global)
      for (const gpu::KAttr& a : i.attrs)
        if (a.name == "buffer") stored.at(size_t(std::get<int64_t>(a.value))) = true;
    for (const gpu::KBlock& r : i.regions) storedBuffers(r, stored);
  }
}

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
  jit::FieldWriter out;
  out.put(kFormat);
  out.put(b.bufferCount);
  out.put(b.pushConstantBytes);
  out.put(b.workgroupSize);
  out.put(b.subgroupSize);
  putParams(out, b.params);
  for (bool stored : b.stored) out.put(uint8_t(stored));
  putPrints(out, b.prints);
  out.put(b.faultParam);
  out.put(uint64_t(b.spirv->size()));
  for (uint32_t w : *b.spirv) out.put(w);
  return std::move(out.bytes);
}

KernelBinary decodeKernelBinary(std::span<const char> bytes) {
  jit::FieldReader in(bytes, "Vulkan kernel");
  in.expectFormat(kFormat);
  KernelBinary b;
  b.bufferCount = in.get<uint32_t>();
  b.pushConstantBytes = in.get<uint32_t>();
  b.workgroupSize = in.get<int64_t>();
  b.subgroupSize = in.get<int64_t>();
  b.params = getParams(in);
  for (size_t p = 0; p < b.params.size(); ++p) b.stored.push_back(in.get<uint8_t>() != 0);
  b.prints = getPrints(in, b.params.size());
  b.faultParam = getFaultParam(in, b.params.size());
  uint64_t count = in.get<uint64_t>();
  if (count != in.remaining() / 4 || in.remaining() % 4)
    in.bad(fmt::format("{} SPIR-V words in {} bytes", count, in.remaining()));
  auto words = std::make_shared<std::vector<uint32_t>>(count);
  for (uint32_t& w : *words) w = in.get<uint32_t>();
  b.spirv = std::move(words);
  return b;
}

jit::ArtifactKey kernelBinaryKey(uint64_t irHash, const std::string& deviceFeatures, const layout::Target& t) {
  std::string options = fmt::format("spirv target={} sg={} warps={} threads={} shared={} loops={} budget={}/{}", t.name,
                                    t.subgroupSize, t.warpsPerProgram, t.maxWorkgroupThreads, t.sharedBytes,
                                    t.loopIterationLimit, t.codeBudget, t.sharedAccessBudget);
  return {jit::ArtifactKind::spirvKernel, irHash, deviceFeatures, options};
}

LoadedBinary buildStoredKernelBinary(const ir::Kernel& kernel, const jit::ArtifactKey& key,
                                     const layout::Target& target, const jit::ArtifactStore& store,
                                     jit::Clock::time_point start) {
  std::optional<KernelBinary> binary;
  try {
    binary = buildKernelBinary(kernel, target);
  } catch (const Unsupported& e) {
    store.refuse(key, e.what());
    throw KernelRefused(e.what(), jit::CacheSource::compiled, msSince(start));
  }
  LoadedBinary built{std::move(*binary), jit::CacheSource::compiled, msSince(start)};
  if (store.enabled()) store.write(key, encodeKernelBinary(built.binary));
  return built;
}

}  // namespace tj::vulkan
