#include "devices/cpu/thread_pool.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <string_view>
#if defined(__linux__)
#include <sched.h>
#endif
#include <system_error>

namespace tj::cpu {

namespace {

// How long an idle worker (or a caller waiting for the workers) polls before it sleeps. Waking
// a sleeper costs tens of microseconds, and a program's launches follow one another closer than
// that: a 20 us spin let the worker fall asleep between runs, which cost layernorm 4096x1024
// 0.78 -> 0.70 ms and vector add 4M 0.96 -> 0.89 ms on 2 threads. 100 us to 1 ms did alike and
// 50 us did not: 200 leaves a margin for a slower caller.
// With more threads than cores a spinning thread takes a core from a working one: spin briefly.
constexpr auto kSpin = std::chrono::microseconds(200), kSpinOversubscribed = std::chrono::microseconds(20);

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `ready` for `spin`; true as soon as it holds.
template <typename Ready>
bool spinUntil(std::chrono::microseconds spin, Ready ready) {
  auto deadline = std::chrono::steady_clock::now() + spin;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) return false;
    cpuRelax();
  }
}

// The pool whose chunks this thread runs: its workers always, a caller
// during its parallelFor. A parallelFor from such a thread runs inline.
thread_local const ThreadPool* tWorkingFor = nullptr;

uint32_t generationOf(uint64_t ticket) { return static_cast<uint32_t>(ticket >> 32); }
uint32_t unclaimedOf(uint64_t ticket) { return static_cast<uint32_t>(ticket); }

// Programs are compute-bound: threads beyond a few per core only add switching
// (and each costs a stack), so more are never started.
constexpr int kMaxThreadsPerCore = 4;

// The cores this process may run on: its affinity mask (taskset, a container's cpuset), else
// the machine's.
int coreCount() {
#if defined(__linux__)
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) return std::max(1, CPU_COUNT(&mask));
#endif
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int threadsFromEnvironment() {
  const int cores = coreCount();
  const char* env = std::getenv("TILEJIT_THREADS");
  if (!env || !*env) return cores;
  std::string_view s(env);
  int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < 1) {
    spdlog::warn("tilejit: TILEJIT_THREADS='{}' is not a positive integer; using {} threads", s, cores);
    return cores;
  }
  int most = kMaxThreadsPerCore * cores;
  if (n > most) {
    spdlog::warn("tilejit: TILEJIT_THREADS={} is more than {} ({} per core on {} cores); using {} threads", s, most,
                 kMaxThreadsPerCore, cores, most);
    return most;
  }
  return static_cast<int>(n);
}

}  // namespace

ThreadPool::ThreadPool(int threads) : spin_(threads > coreCount() ? kSpinOversubscribed : kSpin) {
  for (int i = 1; i < threads; ++i) {
    try {
      workers_.emplace_back([this] { workerLoop(); });
    } catch (const std::system_error& e) {
      // Out of threads or memory for their stacks: the workers started so far do the work.
      spdlog::warn("tilejit: could not start thread {} of {} ({}); using {} threads", i + 1, threads, e.what(),
                   this->threads());
      return;
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(threadsFromEnvironment());
  return pool;
}

void ThreadPool::run(int64_t total, int64_t serialBelow, RangeFn fn) {
  if (total < serialBelow || workers_.empty() || tWorkingFor == this) return fn.call(fn.context, 0, total);
  std::lock_guard launch(launchMutex_);
  tWorkingFor = this;
  fn_ = fn;
  total_ = total;
  chunk_ = std::max<int64_t>(1, total / (threads() * 4));
  chunks_ = (total + chunk_ - 1) / chunk_;
  done_.store(0, std::memory_order_relaxed);
  failed_.store(false, std::memory_order_relaxed);
  uint32_t generation = ++generation_;
  // seq_cst pairs with awaitJob: either a sleeper sees this ticket before it
  // waits, or this thread sees the sleeper and wakes it.
  ticket_.store(uint64_t{generation} << 32 | static_cast<uint64_t>(chunks_));
  if (sleepers_.load() > 0) {
    std::lock_guard lock(mutex_);
    wake_.notify_all();
  }
  work(generation);
  waitDone(chunks_);
  tWorkingFor = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadPool::workerLoop() {
  tWorkingFor = this;
  uint32_t seen = 0;
  while (true) {
    uint64_t ticket = awaitJob(seen);
    if (stop_) return;
    seen = generationOf(ticket);
    work(seen);
  }
}

// A ticket of a newer generation than `seen`, or any ticket once stopping.
uint64_t ThreadPool::awaitJob(uint32_t seen) {
  auto fresh = [&] { return stop_ || generationOf(ticket_.load(std::memory_order_acquire)) != seen; };
  if (!spinUntil(spin_, fresh)) {
    std::unique_lock lock(mutex_);
    sleepers_.fetch_add(1);
    wake_.wait(lock, [&] { return stop_ || generationOf(ticket_.load()) != seen; });
    sleepers_.fetch_sub(1);
  }
  return ticket_.load(std::memory_order_acquire);
}

void ThreadPool::work(uint32_t generation) {
  uint64_t ticket = ticket_.load(std::memory_order_acquire);
  while (generationOf(ticket) == generation && unclaimedOf(ticket) > 0) {
    if (!ticket_.compare_exchange_weak(ticket, ticket - 1, std::memory_order_acquire)) continue;
    // The claimed chunk keeps the job alive, so its fields are stable here.
    int64_t chunks = chunks_;
    int64_t begin = (chunks - unclaimedOf(ticket)) * chunk_;
    if (!failed_.load(std::memory_order_relaxed)) {
      try {
        fn_.call(fn_.context, begin, std::min(total_, begin + chunk_));
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        failed_ = true;
      }
    }
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) {
      std::lock_guard lock(mutex_);
      finished_.notify_all();
    }
    ticket = ticket_.load(std::memory_order_acquire);
  }
}

void ThreadPool::waitDone(int64_t chunks) {
  auto finished = [&] { return done_.load(std::memory_order_acquire) == chunks; };
  if (spinUntil(spin_, finished)) return;
  std::unique_lock lock(mutex_);
  finished_.wait(lock, finished);
}

}  // namespace tj::cpu
