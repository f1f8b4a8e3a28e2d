// The Vulkan device: tile kernels lowered to per-thread kernel IR, printed as SPIR-V
// and dispatched on a Vulkan GPU (lavapipe in CI). A kernel the Vulkan path cannot
// run yet, or a machine without Vulkan, runs on the CPU device instead, with a warning
// naming why (and a LaunchReport saying so).
//
// Kernels are kept in memory per device and on disk (kernel_binary.hpp), so another
// process skips layout inference, lowering and printing; the VkPipelineCache is saved
// beside them (vk::Gpu). Pipelines require the subgroup size the kernel IR assumes.
// Tensors with a copy here (Tensor::on) are bound without host copies.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "devices/gpu_device.hpp"
#include "devices/registry.hpp"
#include "devices/vulkan/vulkan_runtime.hpp"
#include "jit/kernel_cache.hpp"
#include "layout/infer_layouts.hpp"

namespace tj::vulkan {

// "vulkan" and "vulkan:N": the Vulkan devices of the loader's list.
DeviceKind deviceKind();

// The vulkan layout target with this device's subgroup size, workgroup memory and loop limit.
layout::Target targetFor(const vk::DeviceInfo& device);

// What makes `device` run a kernel written for `subgroupSize` lanes (in workgroups of
// `workgroupSize`) with exactly that size, and full subgroups where it can ask for them.
// Throws Error("vulkan: unsupported: ...") where the device cannot guarantee the size.
vk::SubgroupRequest subgroupRequest(const vk::DeviceInfo& device, int64_t subgroupSize, int64_t workgroupSize);

// Device copies are Vulkan buffers: launches bind them instead of copying (Tensor::on).
class VulkanDevice final : public GpuDevice {
 public:
  explicit VulkanDevice(std::string name);  // "vulkan" or "vulkan:N"
  // One per device name, for the process.
  static VulkanDevice& instance(const std::string& name);

 private:
  std::unique_ptr<GpuContext> open() override;  // its Gpu, pipelines and kernel store
};

}  // namespace tj::vulkan
