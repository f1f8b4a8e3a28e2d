// What the stand-in driver (fake_libcuda.cpp) and its tests (test_fake_cuda.cpp) share
// beyond the Driver API: the tjFakeCuda* entry points' types and the record its
// cuTensorMapEncodeTiled writes into a CUtensorMap, which the tests decode.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "devices/cuda/cuda_api.hpp"

extern "C" {

// tjFakeCudaCounts(): how often the fake did each thing, since the process started.
struct TjFakeCudaCounts {
  int links, moduleLoads, launches, allocations, uploads, downloads, tensorMaps;  // tensorMaps: encoded
};

// One kernel parameter as a launch passed it: its bytes, as many as the PTX entry declares
// (`.param .u64 x` 8, `.param .f32 x` 4, `.param .align 64 .b8 x[128]` 128), copied by the
// fake to an offset aligned as declared (a .b8 array's `.align`, else its size).
struct TjFakeCudaParam {
  const unsigned char* bytes;
  std::size_t size;
};

// The kernel's part (tjFakeCudaSetKernel): called by each launch with the PTX, the grid, the
// threads per block, the dynamic shared memory and each parameter in the order the PTX entry
// declares them.
using TjFakeCudaKernel = tj::cuda::CUresult (*)(const char* ptx, const unsigned grid[3], unsigned block,
                                                unsigned sharedBytes, const TjFakeCudaParam* params,
                                                unsigned count);

// What the fake's cuTensorMapEncodeTiled writes at the start of the CUtensorMap: the
// arguments it accepted, in the driver's order (dimension 0 the innermost; strides[i] is
// dimension i + 1's, in bytes), enums as cuda.h numbers them.
struct TjFakeTensorMap {
  static constexpr std::uint32_t kMagic = 0x50414d54;  // "TMAP"
  std::uint32_t magic;
  std::uint8_t dataType, rank, interleave, swizzle, l2Promotion, oobFill;
  std::uint16_t box[5];
  std::uint8_t elementStrides[5];
  std::uint64_t address;
  std::uint64_t dims[5], strides[4];
};
static_assert(sizeof(TjFakeTensorMap) <= sizeof(tj::cuda::CUtensorMap));

}  // extern "C"

// The record in `map`'s bytes (`bytes` of them, 128 for a whole one); nullopt where they hold
// none (no magic, or too few).
inline std::optional<TjFakeTensorMap> decodeFakeTensorMap(const unsigned char* bytes, std::size_t size) {
  TjFakeTensorMap record;
  if (size < sizeof record) return std::nullopt;
  std::memcpy(&record, bytes, sizeof record);
  if (record.magic != TjFakeTensorMap::kMagic) return std::nullopt;
  return record;
}
