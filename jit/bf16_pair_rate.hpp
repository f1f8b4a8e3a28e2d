// How fast the host's AVX512-BF16 pair products are against f32 FMAs, measured, since the
// instructions alone do not say which is faster: a Sapphire Rapids core issues vdpbf16ps at a
// quarter of vfmadd231ps's rate (half the multiply-adds), where Zen 4 issues both at one a cycle.
#pragma once
#include <optional>

namespace tj::jit {

// The multiply-adds a second of 512-bit vdpbf16ps (two a lane) over those of 512-bit vfmadd231ps
// (one a lane), each on independent accumulators in registers, timed on the calling thread
// (about a millisecond); nothing on a host without AVX512-BF16 (the caller checks) or off x86-64.
std::optional<double> measureBf16PairRate();

}  // namespace tj::jit
