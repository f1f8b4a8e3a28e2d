// How fast the host's AVX512-BF16 pair products are against f32 FMAs, measured, since the
// instructions alone do not say which is faster: a Sapphire Rapids core issues vdpbf16ps at a
// quarter of vfmadd231ps's rate (half the multiply-adds), where Zen 4, by published instruction
// tables, issues both at one a cycle.
#pragma once
#include <optional>

namespace tj::jit {

// The multiply-adds a second of 512-bit vdpbf16ps (two a lane) over those of 512-bit vfmadd231ps
// (one a lane), each on independent accumulators in registers, timed on the calling thread
// (about a millisecond); nothing off x86-64. Call it only where AVX512-BF16 runs: it executes
// vdpbf16ps.
std::optional<double> measureBf16PairRate();

// Below this rate bf16 dots widen to f32 (CpuTarget::slowBf16Pairs): clearly slower pairs only,
// so a host measuring about even keeps one choice from run to run (Sapphire Rapids measures 0.5;
// Zen 4 should be about 2).
inline constexpr double kSlowBf16PairRate = 0.75;

}  // namespace tj::jit
