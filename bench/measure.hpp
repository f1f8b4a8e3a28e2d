// cpu-bench's measurements that are not tilejit: timing and the FMA ceiling (memcpy
// bandwidth is samples::memcpyGBps, which the samples use too).
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "devices/cpu/thread_pool.hpp"

namespace tj::bench {

inline double secondsOf(const std::function<void()>& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Median seconds of f after one warm-up call (a kernel's first call compiles it).
// Runs until the runs add up to `budget` seconds and number at least `minRuns`:
// a 1 ms kernel gets hundreds of runs, a 4096³ GEMM only minRuns.
inline double medianSeconds(const std::function<void()>& f, double budget = 0.3, int minRuns = 3) {
  f();
  std::vector<double> runs;
  double total = 0;
  while (total < budget || static_cast<int>(runs.size()) < minRuns) {
    runs.push_back(secondsOf(f));
    total += runs.back();
  }
  return median(std::move(runs));
}

// Another library's idle threads spin for a while after a call (OpenMP, OpenBLAS);
// on a machine with few cores they would steal time from the next measurement.
inline void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(250)); }

// Keeps a value alive without storing it anywhere shared.
inline void keep(float x) { asm volatile("" : : "x"(x)); }

// The FMA ceiling: independent accumulator chains (more than FMA latency x FMA
// ports) in registers, so the loop is bound by FMA throughput alone: 16 of AVX-512's
// 32 registers, 12 of AVX2's 16 (16 chains there spill and measure the spills).
inline constexpr int kFmaChainsAvx512 = 16, kFmaChainsAvx2 = 12;

__attribute__((target("avx512f"))) inline float fmaChainsAvx512(int64_t iters) {
  __m512 acc[kFmaChainsAvx512];
  for (int j = 0; j < kFmaChainsAvx512; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  const __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-6f);  // stays finite, no denormals
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kFmaChainsAvx512; ++j) acc[j] = _mm512_fmadd_ps(acc[j], mul, add);
  float lanes[16];  // (GCC 12 warns inside _mm512_reduce_add_ps)
  for (int j = 1; j < kFmaChainsAvx512; ++j) acc[0] = _mm512_add_ps(acc[0], acc[j]);
  _mm512_storeu_ps(lanes, acc[0]);
  return lanes[0] + lanes[15];
}

__attribute__((target("avx2,fma"))) inline float fmaChainsAvx2(int64_t iters) {
  __m256 acc[kFmaChainsAvx2];
  for (int j = 0; j < kFmaChainsAvx2; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j));
  const __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-6f);
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kFmaChainsAvx2; ++j) acc[j] = _mm256_fmadd_ps(acc[j], mul, add);
  float lanes[8];
  for (int j = 1; j < kFmaChainsAvx2; ++j) acc[0] = _mm256_add_ps(acc[0], acc[j]);
  _mm256_storeu_ps(lanes, acc[0]);
  return lanes[0] + lanes[7];
}

struct FmaLoop {
  const char* isa;
  int lanes;   // f32 lanes per FMA
  int chains;  // FMAs per iteration
  float (*run)(int64_t iters);
};

inline FmaLoop hostFmaLoop() {
  if (__builtin_cpu_supports("avx512f")) return {"avx512f", 16, kFmaChainsAvx512, fmaChainsAvx512};
  return {"avx2", 8, kFmaChainsAvx2, fmaChainsAvx2};
}

// Wall time of fn(thread) on `threads` threads released together.
inline double parallelSeconds(int threads, const std::function<void(int)>& fn) {
  std::atomic<bool> go{false};
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t)
    others.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire)) {
      }
      fn(t);
    });
  return secondsOf([&] {
    go.store(true, std::memory_order_release);
    fn(0);
    for (auto& t : others) t.join();
  });
}

// GFLOP/s of the FMA loop on `threads` threads; the best of three runs of ~0.2 s,
// since a ceiling is what the cores can do, not what a typical run gets.
inline double fmaPeakGflops(int threads) {
  const FmaLoop loop = hostFmaLoop();
  const double flopsPerIter = 2.0 * loop.lanes * loop.chains;
  const int64_t probe = 1 << 20;
  double probeSeconds = secondsOf([&] { keep(loop.run(probe)); });
  const auto iters = static_cast<int64_t>(static_cast<double>(probe) * 0.2 / probeSeconds);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double s = parallelSeconds(threads, [&](int) { keep(loop.run(iters)); });
    best = std::max(best, threads * static_cast<double>(iters) * flopsPerIter / s / 1e9);
  }
  return best;
}

}  // namespace tj::bench
