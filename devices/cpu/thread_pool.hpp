// The CPU device's worker threads. A launch splits the grid's programs into
// chunks that the caller and the workers claim from an atomic ticket. Idle
// workers poll the ticket for a few microseconds before they sleep, so
// back-to-back launches rarely pay for a wake-up.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace tj::cpu {

class ThreadPool {
 public:
  // Below this many programs a launch runs on the caller alone.
  static constexpr int64_t kDefaultSerialBelow = 2;

  // `threads` counts the caller, which works too: threads - 1 workers, or
  // fewer (with a warning) when the system cannot start that many.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // The process's pool: $TILEJIT_THREADS threads (at most 4 per core), default one per core the
  // process may run on.
  static ThreadPool& global();

  // Calls fn(begin, end) on disjoint ranges that cover [0, total) once.
  // Fewer than `serialBelow` programs, a pool of one thread, or a call from
  // inside fn run on the caller alone. Calls from other threads wait for the
  // pool. Rethrows the first exception fn threw, after every started range
  // has finished; ranges not yet started are skipped.
  template <typename F>
  void parallelFor(int64_t total, F&& fn, int64_t serialBelow = kDefaultSerialBelow) {
    if (total <= 0) return;
    using Fn = std::remove_reference_t<F>;
    run(total, serialBelow,
        {[](const void* f, int64_t b, int64_t e) { (*static_cast<Fn*>(const_cast<void*>(f)))(b, e); }, &fn});
  }

 private:
  struct RangeFn {
    void (*call)(const void* context, int64_t begin, int64_t end);
    const void* context;
  };

  void run(int64_t total, int64_t serialBelow, RangeFn fn);
  void workerLoop();
  uint64_t awaitJob(uint32_t seen);
  void work(uint32_t generation);
  void waitDone(int64_t chunks);

  const std::chrono::microseconds spin_;  // how long a waiting thread polls before it sleeps
  std::vector<std::thread> workers_;
  std::mutex launchMutex_;   // held by the parallelFor that owns the workers
  uint32_t generation_ = 0;  // the count of jobs, under launchMutex_

  // The current job, written before its ticket is published and stable until
  // every chunk is done.
  RangeFn fn_{};
  int64_t total_ = 0, chunk_ = 1, chunks_ = 0;
  // generation << 32 | chunks not yet claimed. Claiming a chunk is a CAS that
  // also checks the generation, so a late worker never claims a newer job's
  // chunk in the name of an old one.
  std::atomic<uint64_t> ticket_{0};
  std::atomic<int64_t> done_{0};  // chunks finished (or skipped after a throw)
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;  // guarded by mutex_

  std::mutex mutex_;
  std::condition_variable wake_;      // workers: a new ticket or stop
  std::condition_variable finished_;  // caller: done_ == chunks_
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace tj::cpu
