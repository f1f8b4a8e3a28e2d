// The CPU device: kernels compiled by LLVM (through the kernel cache) and run
// over the grid on a thread pool.
#pragma once
#include "devices/cpu/launch_workspace.hpp"
#include "devices/cpu/thread_pool.hpp"
#include "devices/device.hpp"
#include "devices/registry.hpp"
#include "jit/kernel_cache.hpp"

namespace tj::cpu {

// "cpu": one device, where LLVM targets the host.
DeviceKind deviceKind();

class CpuDevice final : public Device {
 public:
  CpuDevice(jit::KernelCache& cache, ThreadPool& pool) : cache_(cache), pool_(pool) {}
  // On the process's kernel cache and thread pool.
  static CpuDevice& instance();

  std::string name() const override { return "cpu"; }
  // Checks the arguments against the kernel (throwing Error naming the
  // tensor), gets the compiled kernel and runs every program. Prints from
  // different programs may interleave by line, in any order.
  LaunchReport launch(const ir::Kernel& kernel, const LaunchArgs& args) override;

 private:
  jit::KernelCache& cache_;
  ThreadPool& pool_;
  WorkspacePool workspaces_;
};

}  // namespace tj::cpu
