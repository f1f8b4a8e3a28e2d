#include "jit/bf16_pair_rate.hpp"

#include <algorithm>
#include <cstdint>

#include "jit/timing.hpp"

namespace tj::jit {

#if defined(__x86_64__)
namespace {

// Twelve accumulators (more than latency x ports for either instruction), zeroed first so no
// subnormal slows a step; vzeroupper after, so the SSE code that follows pays no penalty for
// dirty upper halves. Inline assembly so the compiler's flags and register allocation cannot
// change what is timed.
#define TJ_TWELVE(op)                                                                                              \
  op " %%zmm12, %%zmm13, %%zmm0\n\t" op " %%zmm12, %%zmm13, %%zmm1\n\t" op " %%zmm12, %%zmm13, %%zmm2\n\t" op     \
     " %%zmm12, %%zmm13, %%zmm3\n\t" op " %%zmm12, %%zmm13, %%zmm4\n\t" op " %%zmm12, %%zmm13, %%zmm5\n\t" op      \
     " %%zmm12, %%zmm13, %%zmm6\n\t" op " %%zmm12, %%zmm13, %%zmm7\n\t" op " %%zmm12, %%zmm13, %%zmm8\n\t" op      \
     " %%zmm12, %%zmm13, %%zmm9\n\t" op " %%zmm12, %%zmm13, %%zmm10\n\t" op " %%zmm12, %%zmm13, %%zmm11\n\t"
#define TJ_ZERO(r) "vpxord %%zmm" #r ", %%zmm" #r ", %%zmm" #r "\n\t"
#define TJ_TIMED_LOOP(op)                                                                                          \
  asm volatile(TJ_ZERO(0) TJ_ZERO(1) TJ_ZERO(2) TJ_ZERO(3) TJ_ZERO(4) TJ_ZERO(5) TJ_ZERO(6) TJ_ZERO(7) TJ_ZERO(8) \
                   TJ_ZERO(9) TJ_ZERO(10) TJ_ZERO(11) TJ_ZERO(12) TJ_ZERO(13) "1:\n\t" TJ_TWELVE(op)               \
               "dec %0\n\tjnz 1b\n\tvzeroupper\n\t"                                                            \
               : "+r"(iterations)                                                                                 \
               :                                                                                                  \
               : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",  \
                 "xmm12", "xmm13", "cc", "memory")

void pairLoop(int64_t iterations) { TJ_TIMED_LOOP("vdpbf16ps"); }
void fmaLoop(int64_t iterations) { TJ_TIMED_LOOP("vfmadd231ps"); }

double msOf(void (*loop)(int64_t), int64_t iterations) {
  Clock::time_point start = Clock::now();
  loop(iterations);
  return msSince(start);
}

}  // namespace

std::optional<double> measureBf16PairRate() {
  // 20000 steps of 12: about 0.15 ms of vdpbf16ps where it issues one every two cycles (0.9 ms
  // for the whole measurement on a Sapphire Rapids core). The
  // fastest of five tries each, interleaved, so a frequency change or another thread taking the
  // core during a try does not decide.
  constexpr int64_t kSteps = 20000;
  double pairs = 1e9, fmas = 1e9;
  for (int attempt = 0; attempt < 5; ++attempt) {
    fmas = std::min(fmas, msOf(fmaLoop, kSteps));
    pairs = std::min(pairs, msOf(pairLoop, kSteps));
  }
  return 2 * fmas / pairs;  // two multiply-adds a lane for vdpbf16ps
}
#else
std::optional<double> measureBf16PairRate() { return std::nullopt; }
#endif

}  // namespace tj::jit
