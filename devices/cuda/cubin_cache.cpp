#include "devices/cuda/cubin_cache.hpp"

#include <fmt/format.h>

#include "devices/gpu_binary.hpp"

namespace tj::cuda {

namespace {

// Bumped whenever the encoding below, or what the CUDA device records in it, changes (the
// build id covers ir/, layout/, lower/ and jit/, not devices/).
constexpr uint32_t kFormat = 3;

}  // namespace

std::vector<char> encodeCubinBinary(const CubinBinary& b) {
  jit::FieldWriter out;
  out.put(kFormat);
  out.put(b.workgroupSize);
  out.put(b.sharedBytes);
  putParams(out, b.params);
  putPrints(out, b.prints);
  out.put(b.faultParam);
  out.putString(b.entry);
  out.putBytes(b.cubin);
  return std::move(out.bytes);
}

CubinBinary decodeCubinBinary(std::span<const char> bytes) {
  jit::FieldReader in(bytes, "CUDA kernel");
  in.expectFormat(kFormat);
  CubinBinary b;
  b.workgroupSize = in.get<int64_t>();
  b.sharedBytes = in.get<int64_t>();
  b.params = getParams(in);
  b.prints = getPrints(in, b.params.size());
  b.faultParam = getFaultParam(in, b.params.size());
  b.entry = in.getString();
  b.cubin = in.getBytes();
  if (b.workgroupSize < 1 || b.sharedBytes < 0) in.bad(fmt::format("{} threads and {} bytes of shared memory",
                                                                    b.workgroupSize, b.sharedBytes));
  if (b.entry.empty() || b.cubin.empty() || in.remaining()) in.bad("no kernel name, no cubin or bytes after it");
  return b;
}

jit::ArtifactKey cubinKey(uint64_t irHash, const DeviceInfo& d, const layout::Target& t,
                       const std::vector<bool>& vectorTensors) {
  std::string facts;
  for (bool v : vectorTensors) facts += v ? '1' : '0';
  std::string device = fmt::format("cuda-{}-{}-sms{}-driver{}", d.name, d.arch(), d.multiprocessors, d.driverVersion);
  std::string options = fmt::format("ptx target={} warps={} threads={} shared={} loops={} budget={} tma={} vector={}",
                                    t.name, t.warpsPerProgram, t.maxWorkgroupThreads, t.sharedBytes,
                                    t.loopIterationLimit, t.codeBudget, t.tma, facts);
  return {jit::ArtifactKind::cubin, irHash, device, options};
}

}  // namespace tj::cuda
