// The Vulkan device: tile kernels lowered to per-thread kernel IR, printed as SPIR-V
// and dispatched on a Vulkan GPU (lavapipe in CI). A kernel the Vulkan path cannot
// run yet, or a machine without Vulkan, runs on the CPU device instead, with a warning
// naming why; name() then reports the device that actually ran.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "devices/device.hpp"

namespace tj::vulkan {

// What the calling thread's last Vulkan-device launch did.
struct LaunchInfo {
  bool onVulkan = false;
  std::string fallbackReason;   // why it ran elsewhere, when it did
  std::shared_ptr<const std::vector<uint32_t>> spirv;  // the module dispatched
};
const LaunchInfo& lastLaunchInfo();

class VulkanDevice final : public Device {
 public:
  explicit VulkanDevice(std::string name);  // "vulkan" or "vulkan:N"
  ~VulkanDevice() override;
  // One per device name, for the process.
  static VulkanDevice& instance(const std::string& name);

  // The device that ran the last launch ("vulkan:N" or the fallback's name); before
  // any launch, the requested name.
  std::string name() const override;
  void launch(const ir::Kernel& kernel, const LaunchArgs& args) override;

 private:
  struct State;  // the Gpu and its compiled pipelines, created on first launch
  void runOnVulkan(const ir::Kernel& kernel, const LaunchArgs& args);
  void fallBack(const ir::Kernel& kernel, const LaunchArgs& args, const std::string& reason);

  std::string name_;
  mutable std::mutex mutex_;  // one launch at a time: the Gpu is single-threaded
  std::string ran_;
  std::unique_ptr<State> state_;
};

}  // namespace tj::vulkan
