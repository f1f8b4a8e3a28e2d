#include "devices/cpu/launch_workspace.hpp"

#include <cstdlib>
#include <cstring>

namespace tj::cpu {

namespace {
constexpr size_t kAlign = 64;  // the kernel lays its packed blocks out on cache lines
}

WorkspacePool::Block WorkspacePool::take(size_t bytes) {
  {
    std::lock_guard lock(mutex_);
    if (kept_.memory && kept_.bytes >= bytes) return std::move(kept_);
  }
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  return {{static_cast<std::byte*>(std::aligned_alloc(kAlign, rounded)), std::free}, rounded};
}

void WorkspacePool::give(Block block) {
  if (block.bytes > static_cast<size_t>(kKeptBytes)) return;
  std::lock_guard lock(mutex_);
  if (!kept_.memory || kept_.bytes < block.bytes) kept_ = std::move(block);
}

void* LaunchWorkspace::provide(void* context, int64_t bytes, int64_t zeroedBytes) noexcept {
  auto& self = *static_cast<LaunchWorkspace*>(context);
  if (bytes <= 0 || bytes > kMaxWorkspaceBytes || zeroedBytes < 0 || zeroedBytes > bytes) return nullptr;
  // Every call of a launch asks for the same bytes: the first one's request is the launch's.
  std::call_once(self.once_, [&] {
    self.block_ = self.pool_.take(static_cast<size_t>(bytes));
    if (self.block_.memory) std::memset(self.block_.memory.get(), 0, static_cast<size_t>(zeroedBytes));
  });
  return self.block_.bytes >= static_cast<size_t>(bytes) ? self.block_.memory.get() : nullptr;
}

}  // namespace tj::cpu
