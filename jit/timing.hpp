// Milliseconds since a steady-clock instant, for the compile, load and tuning times
// the caches and the tuner report.
#pragma once
#include <chrono>

namespace tj::jit {

using Clock = std::chrono::steady_clock;

inline double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace tj::jit
