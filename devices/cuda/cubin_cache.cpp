#include "devices/cuda/cubin_cache.hpp"

#include <fmt/format.h>


namespace tj::cuda {

namespace {

// Bumped whenever the encoding below, or what the CUDA device records in it, changes (the
// build id covers ir/, layout/, lower/ and jit/, not devices/).
constexpr uint32_t kFormat = 3;

}  // namespace

std::vector<char> encodeCubinBinary(const DriverBinary& b) { return encodeDriverBinary(b, kFormat); }

DriverBinary decodeCubinBinary(std::span<const char> bytes) { return decodeDriverBinary(bytes, "CUDA kernel", kFormat); }

jit::ArtifactKey cubinKey(uint64_t irHash, const DeviceInfo& d, const layout::Target& t,
                       const std::vector<bool>& vectorTensors) {
  std::string device = fmt::format("cuda-{}-{}-sms{}-driver{}", d.name, d.arch(), d.multiprocessors, d.driverVersion);
  std::string options = fmt::format("ptx target={} warps={} threads={} shared={} loops={} budget={} tma={} vector={}",
                                    t.name, t.warpsPerProgram, t.maxWorkgroupThreads, t.sharedBytes,
                                    t.loopIterationLimit, t.codeBudget, t.tma, vectorFactsText(vectorTensors));
  return {jit::ArtifactKind::cubin, irHash, device, options};
}

}  // namespace tj::cuda
