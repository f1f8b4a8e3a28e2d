// Plain C++ references for the DSL's random numbers (dsl/random.cpp), for the samples'
// --check and the conformance tests: Philox 4x32-10 as Random123 defines it (Salmon et al.,
// SC'11), written from the paper in uint32 arithmetic, and Triton's conversion to floats.
#pragma once
#include <array>
#include <cstdint>

namespace tj::samples {

inline std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    uint64_t a = uint64_t{0xD2511F53} * c[0], b = uint64_t{0xCD9E8D57} * c[2];
    c = {uint32_t(b >> 32) ^ c[1] ^ k[0], uint32_t(b), uint32_t(a >> 32) ^ c[3] ^ k[1], uint32_t(a)};
    k = {k[0] + 0x9E3779B9u, k[1] + 0xBB67AE85u};
  }
  return c;
}

// The four words Triton's randint4x(seed, offset) draws: counter (offset, 0, 0, 0), key the seed.
inline std::array<uint32_t, 4> tritonRandint4x(uint64_t seed, int32_t offset) {
  return philox4x32({uint32_t(offset), 0, 0, 0}, {uint32_t(seed), uint32_t(seed >> 32)});
}

// Triton's uint_to_uniform_float, in f32 arithmetic: [0, 1).
inline float uniformOf(uint32_t bits) {
  int64_t x = int32_t(bits);
  return float(x < 0 ? -x - 1 : x) * 4.6566127342e-10f;
}

}  // namespace tj::samples
