// Vulkan compute without linking Vulkan: libvulkan.so.1 is loaded with dlopen
// on first use, so a build runs where Vulkan is missing (status() says why).
// Gives devices, buffers, compute pipelines from SPIR-V words, and dispatches
// timed with timestamp queries. Errors throw tj::Error naming the Vulkan call
// and its VkResult.
#pragma once
#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES  // types only: every entry point comes from vkGetInstanceProcAddr
#endif
#include <vulkan/vulkan.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "devices/device.hpp"
#include "ir/error.hpp"
#include "jit/artifact_cache.hpp"

namespace tj::vk {

struct Functions;  // the loaded entry points (vulkan_runtime.cpp)

// Whether Vulkan can be used here; `reason` is "Vulkan not available: ..." when not.
struct Status {
  bool available = false;
  std::string reason;
};

const Status& status();

// One physical device as listDevices() reports it.
struct DeviceInfo {
  uint32_t index = 0;
  std::string name;
  uint32_t vendorId = 0, deviceId = 0, driverVersion = 0, apiVersion = 0;
  VkDriverId driverId = VkDriverId(0);  // VK_DRIVER_ID_MESA_LLVMPIPE: lavapipe
  uint32_t subgroupSize = 0;
  uint32_t maxWorkgroupInvocations = 0;
  uint32_t maxWorkgroupCount[3] = {0, 0, 0};
  uint32_t sharedMemoryBytes = 0;
  bool float16 = false, float64 = false, int8 = false, int16 = false, storage8 = false, storage16 = false,
       subgroupExtendedTypes = false, int64 = false, bufferDeviceAddress = false;
  // Atomics on 64-bit integers, and f32 atomic add (VK_EXT_shader_atomic_float), in storage buffers.
  bool int64Atomics = false, float32AtomicAdd = false;
  bool timestamps = false;        // compute queue timestamps are valid
  double timestampPeriodNs = 0;   // ns per timestamp tick
  // Subgroup size control (Vulkan 1.3 or VK_EXT_subgroup_size_control), enabled when
  // offered: a compute pipeline may require a size in [min, max] and full subgroups.
  bool subgroupSizeControl = false, computeFullSubgroups = false;
  uint32_t minSubgroupSize = 0, maxSubgroupSize = 0, maxComputeWorkgroupSubgroups = 0;
  std::vector<std::string> extensions;  // those that matter to code generation
  // What compiled kernels depend on, for cache keys: vendor, device, driver,
  // API version, subgroup size, features and extensions.
  std::string featureKey() const;
};
// Throws Error("vulkan: unsupported: ...") for a module that needs what `device` lacks (a
// capability, or subgroup operations on 8/16/64-bit values): such a kernel runs elsewhere
// instead of reaching a driver that may not survive it.
void checkCapabilities(std::span<const uint32_t> words, const DeviceInfo& device);

// Every physical device supporting Vulkan 1.2, in enumeration order (the N
// of TILEJIT_DEVICE=vulkan:N). Throws Error when Vulkan is not available.
std::vector<DeviceInfo> listDevices();

// The N of "vulkan" (0) or "vulkan:N"; throws Error for anything else.
uint32_t deviceIndex(std::string_view deviceName);

class Gpu;

// A storage buffer in host-visible, host-coherent memory, mapped for its life.
class Buffer {
 public:
  Buffer(Gpu& gpu, size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  size_t size() const { return bytes_; }
  void upload(std::span<const std::byte> data, size_t offset = 0);
  void download(std::span<std::byte> data, size_t offset = 0) const;
  template <class T>
  void upload(std::span<const T> data) { upload(std::as_bytes(data)); }
  template <class T>
  void download(std::span<T> data) const { download(std::as_writable_bytes(data)); }
  VkBuffer handle() const { return buffer_; }

 private:
  void release();
  Gpu& gpu_;
  size_t bytes_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  std::byte* mapped_ = nullptr;
};

// How a pipeline's subgroups must run: `size` 0 leaves it to the driver; `full` asks
// for full subgroups (the workgroup size must be a multiple of `size`). Needs
// DeviceInfo::subgroupSizeControl (and computeFullSubgroups for `full`).
struct SubgroupRequest {
  uint32_t size = 0;
  bool full = false;
};

// A compute pipeline for a SPIR-V module: `bufferCount` storage buffers at
// set 0, bindings 0.., and `pushConstantBytes` of push constants.
class Pipeline {
 public:
  Pipeline(Gpu& gpu, std::span<const uint32_t> spirv, uint32_t bufferCount, uint32_t pushConstantBytes,
           SubgroupRequest subgroups = {}, const std::string& entryPoint = "main");
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  uint32_t bufferCount() const { return bufferCount_; }
  uint32_t pushConstantBytes() const { return pushConstantBytes_; }

 private:
  friend class Gpu;
  void release();
  Gpu& gpu_;
  uint32_t bufferCount_, pushConstantBytes_;
  VkDescriptorSetLayout setLayout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

// A logical device on one physical device: a compute queue, a command pool
// and a pipeline cache. Dispatches are synchronous; one thread at a time.
//
// With a `pipelineCacheDir`, the VkPipelineCache starts from the file
// pipelineCachePath() names (keyed by featureKey(); a corrupt one is reported and
// ignored) and savePipelineCache() writes it back atomically.
class Gpu {
 public:
  explicit Gpu(uint32_t index, std::filesystem::path pipelineCacheDir = {});
  ~Gpu();
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  const DeviceInfo& info() const { return info_; }
  // Runs `groups` workgroups and waits. Returns the GPU time in ns from
  // timestamps, or -1 where the queue has none.
  double dispatch(const Pipeline& pipeline, std::span<Buffer* const> buffers, std::span<const std::byte> pushConstants,
                  uint32_t groupsX, uint32_t groupsY = 1, uint32_t groupsZ = 1);
  // The pipeline cache's contents, for saving across runs.
  std::vector<std::byte> pipelineCacheData() const;
  // Empty without a pipelineCacheDir.
  std::filesystem::path pipelineCachePath() const {
    return pipelineCache_.enabled() ? pipelineCache_.path(pipelineCacheKey_) : std::filesystem::path{};
  }
  size_t pipelineCacheLoadedBytes() const { return cacheLoadedBytes_; }
  // Writes the cache's contents when they changed since loaded or last saved;
  // returns whether it wrote. A failed write only warns.
  bool savePipelineCache();

  const Functions& fn() const { return *fn_; }
  VkDevice device() const { return device_; }
  VkPipelineCache pipelineCache() const { return cache_; }
  uint32_t memoryType(uint32_t allowedTypes, VkMemoryPropertyFlags required) const;

 private:
  void createDevice(VkPhysicalDevice physical);
  void createPipelineCache();
  void release();
  VkDescriptorPool writeDescriptors(const Pipeline& pipeline, std::span<Buffer* const> buffers, VkDescriptorSet& set);
  void record(VkCommandBuffer cmd, const Pipeline& pipeline, VkDescriptorSet set,
              std::span<const std::byte> pushConstants, uint32_t x, uint32_t y, uint32_t z);
  void submitAndWait(VkCommandBuffer cmd);
  double elapsedNs();

  const Functions* fn_;
  DeviceInfo info_;
  VkPhysicalDeviceMemoryProperties memory_{};
  uint32_t queueFamily_ = 0;
  uint32_t timestampBits_ = 0;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool commandPool_ = VK_NULL_HANDLE;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  jit::ArtifactStore pipelineCache_{std::filesystem::path{}};  // disabled without a pipelineCacheDir
  jit::ArtifactKey pipelineCacheKey_;
  size_t cacheLoadedBytes_ = 0;
  uint64_t cacheSavedHash_ = 0;  // of the contents last loaded or saved
};

}  // namespace tj::vk
