// The workspace of a CPU launch (KernelArgs::workspace): one block that all of the launch's
// calls of the kernel share, for the operand blocks its programs pack once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "lower/cpu/abi.hpp"

namespace tj::cpu {

// Blocks kept between launches: a fresh block's pages fault in at their first touch, which a
// GEMM that launches again and again would pay at every launch. At most one block, of at most
// kKeptBytes, is kept.
class WorkspacePool {
 public:
  static constexpr int64_t kKeptBytes = int64_t{256} << 20;

  struct Block {
    std::unique_ptr<std::byte, void (*)(void*)> memory{nullptr, nullptr};
    size_t bytes = 0;
  };
  Block take(size_t bytes);  // memory null when it cannot be had
  void give(Block block);

 private:
  std::mutex mutex_;
  Block kept_;
};

// One launch's: allocated at the kernel's first request (a kernel without packed operands never
// asks), its zeroed prefix cleared then, given back to the pool when the launch ends.
class LaunchWorkspace {
 public:
  explicit LaunchWorkspace(WorkspacePool& pool) : pool_(pool) {}
  ~LaunchWorkspace() {
    if (block_.memory) pool_.give(std::move(block_));
  }
  LaunchWorkspace(const LaunchWorkspace&) = delete;
  LaunchWorkspace& operator=(const LaunchWorkspace&) = delete;

  // KernelArgs::workspace, with this as the context.
  static void* provide(void* context, int64_t bytes, int64_t zeroedBytes) noexcept;

 private:
  WorkspacePool& pool_;
  std::once_flag once_;
  WorkspacePool::Block block_;
};

}  // namespace tj::cpu
