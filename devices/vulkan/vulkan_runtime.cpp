#include "devices/vulkan/vulkan_runtime.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <xxh3.h>

#include "devices/library_file.hpp"
#include "ir/error.hpp"
#include "jit/artifact_cache.hpp"

// Vulkan's create-info structs are meant to be filled by designated
// initializers with the rest zeroed; -Wextra would flag every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace tj::vk {

// Entry points by level: global ones load with a null instance, the rest
// through the instance (device-level ones then go through the loader's
// trampolines, which is fine for compute).
#define TJ_VK_GLOBAL(X) X(vkCreateInstance) X(vkEnumerateInstanceVersion)
#define TJ_VK_INSTANCE(X)                                                                                         \
  X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)                                                \
  X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties) X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice)
#define TJ_VK_DEVICE(X)                                                                                              \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers) \
  X(vkFreeCommandBuffers) X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkQueueSubmit) X(vkCreateBuffer)         \
  X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory)    \
  X(vkMapMemory) X(vkUnmapMemory) X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreatePipelineCache)        \
  X(vkDestroyPipelineCache) X(vkGetPipelineCacheData) X(vkCreateComputePipelines) X(vkDestroyPipeline)             \
  X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreateDescriptorSetLayout)                             \
  X(vkDestroyDescriptorSetLayout) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkAllocateDescriptorSets) \
  X(vkUpdateDescriptorSets) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch) \
  X(vkCmdPipelineBarrier) X(vkCreateQueryPool) X(vkDestroyQueryPool) X(vkCmdResetQueryPool) X(vkCmdWriteTimestamp) \
  X(vkGetQueryPoolResults) X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences) X(vkResetFences)

struct Functions {
#define TJ_VK_DECLARE(name) PFN_##name name = nullptr;
  TJ_VK_GLOBAL(TJ_VK_DECLARE) TJ_VK_INSTANCE(TJ_VK_DECLARE) TJ_VK_DEVICE(TJ_VK_DECLARE)
#undef TJ_VK_DECLARE
};

namespace {

const char* resultName(VkResult r) {
  switch (r) {
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    default: return "VkResult";
  }
}

void check(VkResult r, const char* call) {
  if (r != VK_SUCCESS) throw Unsupported(fmt::format("vulkan: {} failed: {} ({})", call, resultName(r), static_cast<int>(r)));
}

// Runs a clean-up when the scope ends, however it ends.
struct Defer {
  std::function<void()> run;
  ~Defer() { run(); }
};

std::string versionText(uint32_t v) {
  return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

// Extensions code generation may use; reported and part of the feature key.
const std::vector<std::string> kInterestingExtensions = {
    "VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix", "VK_EXT_subgroup_size_control",
    "VK_KHR_shader_integer_dot_product", "VK_EXT_shader_atomic_float", "VK_KHR_shader_float16_int8",
    "VK_KHR_16bit_storage", "VK_KHR_8bit_storage", "VK_KHR_buffer_device_address"};

// The library, the instance and the Vulkan 1.2 physical devices, set up once.
class Loader {
 public:
  Loader() {
    try {
      load();
      st_.available = true;
    } catch (const std::exception& e) {
      st_.reason = std::string("Vulkan not available: ") + e.what();
    }
  }
  const Status& status() const { return st_; }
  const Functions& fn() const { return fn_; }
  uint32_t apiVersion() const { return apiVersion_; }  // the instance's
  const std::vector<VkPhysicalDevice>& physical() const {
    if (!st_.available) throw Error(st_.reason);
    return physical_;
  }

 private:
  void load() {
    // A truncated file would kill the process inside dlopen (SIGBUS).
    if (std::string problem = libraryFileProblem("libvulkan.so.1"); !problem.empty()) throw Error(problem);
    void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) throw Error(std::string("dlopen(libvulkan.so.1): ") + dlerror());
    auto getProc = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    if (!getProc) throw Error("libvulkan.so.1 has no vkGetInstanceProcAddr");
    loadFunctions(getProc);
    createInstance();
    loadFunctions(getProc);
    enumerate();
  }

  // Fills what the current instance (null at first) can give.
  void loadFunctions(PFN_vkGetInstanceProcAddr getProc) {
    auto one = [&](auto& slot, const char* name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(getProc(instance_, name));
      if (!slot && (instance_ || std::strcmp(name, "vkCreateInstance") == 0))
        throw Error(std::string("the Vulkan loader has no ") + name);
    };
#define TJ_VK_LOAD(name) one(fn_.name, #name);
    // Global commands only load with a null instance (loaders give null otherwise for 1.3 apps).
    if (!instance_) { TJ_VK_GLOBAL(TJ_VK_LOAD) }
    else { TJ_VK_INSTANCE(TJ_VK_LOAD) TJ_VK_DEVICE(TJ_VK_LOAD) }
#undef TJ_VK_LOAD
  }

  void createInstance() {
    uint32_t version = VK_API_VERSION_1_0;
    if (fn_.vkEnumerateInstanceVersion) fn_.vkEnumerateInstanceVersion(&version);
    if (version < VK_API_VERSION_1_2) throw Error("the Vulkan loader is " + versionText(version) + ", 1.2 is needed");
    // 1.3 where the loader has it: subgroup size control is core there.
    apiVersion_ = std::min<uint32_t>(version, VK_API_VERSION_1_3);
    VkApplicationInfo app{.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "tilejit",
                          .pEngineName = "tilejit", .apiVersion = apiVersion_};
    VkInstanceCreateInfo info{.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    check(fn_.vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
  }

  void enumerate() {
    uint32_t count = 0;
    check(fn_.vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> all(count);
    check(fn_.vkEnumeratePhysicalDevices(instance_, &count, all.data()), "vkEnumeratePhysicalDevices");
    for (VkPhysicalDevice d : all) {
      VkPhysicalDeviceProperties p;
      fn_.vkGetPhysicalDeviceProperties(d, &p);
      if (p.apiVersion >= VK_API_VERSION_1_2) physical_.push_back(d);
    }
    if (physical_.empty()) throw Error("no physical device supports Vulkan 1.2");
  }

  Status st_;
  Functions fn_;
  uint32_t apiVersion_ = VK_API_VERSION_1_2;
  VkInstance instance_ = VK_NULL_HANDLE;
  std::vector<VkPhysicalDevice> physical_;
};

// Never destroyed, like the devices (VulkanDevice::instance): destroying the instance at
// exit under a live VkDevice is invalid, and lavapipe's threads then crash the exit.
Loader& loader() {
  static auto* instance = new Loader;
  return *instance;
}

// The first queue family that can run compute.
uint32_t computeFamily(const Functions& fn, VkPhysicalDevice d, VkQueueFamilyProperties* props) {
  uint32_t count = 0;
  fn.vkGetPhysicalDeviceQueueFamilyProperties(d, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  fn.vkGetPhysicalDeviceQueueFamilyProperties(d, &count, families.data());
  for (uint32_t i = 0; i < count; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      *props = families[i];
      return i;
    }
  throw Error("vulkan: the device has no compute queue");
}

std::vector<std::string> interestingExtensions(const Functions& fn, VkPhysicalDevice d) {
  uint32_t count = 0;
  check(fn.vkEnumerateDeviceExtensionProperties(d, nullptr, &count, nullptr), "vkEnumerateDeviceExtensionProperties");
  std::vector<VkExtensionProperties> all(count);
  check(fn.vkEnumerateDeviceExtensionProperties(d, nullptr, &count, all.data()), "vkEnumerateDeviceExtensionProperties");
  std::vector<std::string> found;
  for (const std::string& wanted : kInterestingExtensions)
    if (std::ranges::any_of(all, [&](const VkExtensionProperties& e) { return wanted == e.extensionName; }))
      found.push_back(wanted);
  return found;
}

constexpr const char* kSizeControlExtension = "VK_EXT_subgroup_size_control";
constexpr const char* kAtomicFloatExtension = "VK_EXT_shader_atomic_float";

// How subgroup size control is reached: core (Vulkan 1.3 on both the instance and the
// device), through its extension, or not at all. The structs are the same either way.
enum class SizeControl { none, core, extension };

SizeControl sizeControl(const Functions& fn, VkPhysicalDevice d, const std::vector<std::string>& extensions) {
  VkPhysicalDeviceProperties p;
  fn.vkGetPhysicalDeviceProperties(d, &p);
  if (std::min(p.apiVersion, loader().apiVersion()) >= VK_API_VERSION_1_3) return SizeControl::core;
  return std::ranges::count(extensions, kSizeControlExtension) ? SizeControl::extension : SizeControl::none;
}

// The Vulkan 1.1/1.2 features a kernel may use, and subgroup size control where the
// device has it, as queried (and as enabled).
struct Features {
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomicFloat{
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceSubgroupSizeControlFeatures sizeControl{
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceVulkan12Features v12{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features v11{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &v12};
  VkPhysicalDeviceFeatures2 core{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &v11};
  // An extension's struct is chained only where the device has (and will enable) the extension.
  Features(SizeControl control, bool atomicFloatExtension) {
    void** tail = &v12.pNext;
    if (control != SizeControl::none) {
      *tail = &sizeControl;
      tail = &sizeControl.pNext;
    }
    if (atomicFloatExtension) *tail = &atomicFloat;
  }
  Features(const Features&) = delete;  // the pNext chain points into this object
};

void queryFeatures(const Functions& fn, VkPhysicalDevice d, Features& f) { fn.vkGetPhysicalDeviceFeatures2(d, &f.core); }

// Fills the subgroup-size-control fields of `info` (left off without the feature).
void describeSizeControl(const Functions& fn, VkPhysicalDevice d, const Features& f, DeviceInfo& info) {
  if (!f.sizeControl.subgroupSizeControl) return;
  VkPhysicalDeviceSubgroupSizeControlProperties sizes{
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceProperties2 props{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sizes};
  fn.vkGetPhysicalDeviceProperties2(d, &props);
  info.subgroupSizeControl = (sizes.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  info.computeFullSubgroups = f.sizeControl.computeFullSubgroups == VK_TRUE;
  info.minSubgroupSize = sizes.minSubgroupSize;
  info.maxSubgroupSize = sizes.maxSubgroupSize;
  info.maxComputeWorkgroupSubgroups = sizes.maxComputeWorkgroupSubgroups;
}

DeviceInfo describe(const Functions& fn, VkPhysicalDevice d, uint32_t index) {
  VkPhysicalDeviceDriverProperties driver{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
                                              .pNext = &driver};
  VkPhysicalDeviceProperties2 props{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &subgroup};
  fn.vkGetPhysicalDeviceProperties2(d, &props);
  std::vector<std::string> extensions = interestingExtensions(fn, d);
  Features f(sizeControl(fn, d, extensions), std::ranges::count(extensions, kAtomicFloatExtension) > 0);
  queryFeatures(fn, d, f);
  VkQueueFamilyProperties family;
  computeFamily(fn, d, &family);
  const VkPhysicalDeviceLimits& limits = props.properties.limits;
  DeviceInfo info{.index = index,
                  .name = props.properties.deviceName,
                  .vendorId = props.properties.vendorID,
                  .deviceId = props.properties.deviceID,
                  .driverVersion = props.properties.driverVersion,
                  .apiVersion = props.properties.apiVersion,
                  .driverId = driver.driverID,
                  .subgroupSize = subgroup.subgroupSize,
                  .maxWorkgroupInvocations = limits.maxComputeWorkGroupInvocations,
                  .sharedMemoryBytes = limits.maxComputeSharedMemorySize,
                  .float16 = f.v12.shaderFloat16 == VK_TRUE,
                  .float64 = f.core.features.shaderFloat64 == VK_TRUE,
                  .int8 = f.v12.shaderInt8 == VK_TRUE,
                  .int16 = f.core.features.shaderInt16 == VK_TRUE,
                  .storage8 = f.v12.storageBuffer8BitAccess == VK_TRUE,
                  .storage16 = f.v11.storageBuffer16BitAccess == VK_TRUE,
                  .subgroupExtendedTypes = f.v12.shaderSubgroupExtendedTypes == VK_TRUE,
                  .int64 = f.core.features.shaderInt64 == VK_TRUE,
                  .bufferDeviceAddress = f.v12.bufferDeviceAddress == VK_TRUE,
                  .int64Atomics = f.v12.shaderBufferInt64Atomics == VK_TRUE,
                  .float32AtomicAdd = f.atomicFloat.shaderBufferFloat32AtomicAdd == VK_TRUE,
                  .timestamps = family.timestampValidBits > 0,
                  .timestampPeriodNs = limits.timestampPeriod,
                  .extensions = std::move(extensions)};
  std::copy(limits.maxComputeWorkGroupCount, limits.maxComputeWorkGroupCount + 3, info.maxWorkgroupCount);
  describeSizeControl(fn, d, f, info);
  return info;
}

// Cheap structural checks, so words that are not SPIR-V give an Error rather
// than reach a driver that may not survive them.
void checkSpirvStructure(std::span<const uint32_t> words) {
  auto bad = [](const std::string& why) { throw InternalError("vulkan", "invalid SPIR-V: " + why); };
  if (words.size() < 5) bad("shorter than its 5-word header");
  if (words[0] != 0x07230203u) bad(fmt::format("magic number {:#x}, not 0x07230203", words[0]));
  for (size_t at = 5; at < words.size();) {
    uint32_t count = words[at] >> 16;
    if (count == 0 || at + count > words.size()) bad(fmt::format("instruction at word {} has a bad length", at));
    at += count;
  }
}

// The driver checks its data's own header (vendor, device, cache UUID): no IR and no build id.
jit::ArtifactKey pipelineCacheKey(const DeviceInfo& info) {
  return {jit::ArtifactKind::pipelineCache, 0, info.featureKey(), "", ""};
}


}  // namespace

void checkCapabilities(std::span<const uint32_t> words, const DeviceInfo& info) {
  constexpr uint32_t kOpCapability = 17, kOpTypeInt = 21, kOpTypeFloat = 22;
  constexpr uint32_t kFirstGroupNonUniform = 333, kLastGroupNonUniform = 366;
  const std::pair<uint32_t, std::pair<bool, const char*>> needs[] = {
      {9, {info.float16, "Float16"}}, {10, {info.float64, "Float64"}}, {11, {info.int64, "Int64"}},
      {12, {info.int64Atomics, "Int64Atomics"}}, {6033, {info.float32AtomicAdd, "AtomicFloat32AddEXT"}},
      {22, {info.int16, "Int16"}}, {39, {info.int8, "Int8"}},
      {4433, {info.storage16, "StorageBuffer16BitAccess"}}, {4448, {info.storage8, "StorageBuffer8BitAccess"}}};
  auto lacks = [](const std::string& what) { throw Unsupported("vulkan: unsupported: the device lacks " + what); };
  std::map<uint32_t, uint32_t> widths;  // of the module's int and float types, by id
  for (size_t at = 5; at + 1 < words.size(); at += words[at] >> 16) {
    uint32_t op = words[at] & 0xffff;
    if (op == kOpCapability)
      for (const auto& [capability, has] : needs)
        if (words[at + 1] == capability && !has.first) lacks(fmt::format("the {} capability", has.second));
    if ((op == kOpTypeInt || op == kOpTypeFloat) && at + 2 < words.size()) widths[words[at + 1]] = words[at + 2];
    // Subgroup operations on 8/16/64-bit values need shaderSubgroupExtendedTypes.
    bool group = op >= kFirstGroupNonUniform && op <= kLastGroupNonUniform;
    if (group && !info.subgroupExtendedTypes) {
      auto width = widths.find(words[at + 1]);  // the result type
      if (width != widths.end() && width->second != 32) lacks("subgroup operations on 8/16/64-bit values");
    }
  }
}

const Status& status() { return loader().status(); }

std::string DeviceInfo::featureKey() const {
  std::string key = fmt::format("vulkan-{:x}-{:x}-drv{:x}-api{}-sg{}", vendorId, deviceId, driverVersion,
                                versionText(apiVersion), subgroupSize);
  for (auto [has, flag] : {std::pair{float16, "f16"}, {float64, "f64"}, {int8, "i8"}, {int16, "i16"}, {int64, "i64"},
                           {bufferDeviceAddress, "bda"}, {subgroupSizeControl, "sgctl"}, {computeFullSubgroups, "fullsg"},
                           {int64Atomics, "i64atomic"}, {float32AtomicAdd, "f32atomicadd"}})
    if (has) key += std::string("+") + flag;
  for (const std::string& e : extensions) key += "+" + e;
  return key;
}

std::vector<DeviceInfo> listDevices() {
  const auto& physical = loader().physical();
  std::vector<DeviceInfo> out;
  for (uint32_t i = 0; i < physical.size(); ++i) out.push_back(describe(loader().fn(), physical[i], i));
  return out;
}

uint32_t deviceIndex(std::string_view name) {
  if (name == "vulkan") return 0;
  std::string_view digits = name.substr(std::min(name.size(), sizeof("vulkan:") - 1));
  bool ok = name.starts_with("vulkan:") && !digits.empty() && digits.size() < 6 &&
            std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; });
  if (!ok) throw Error("device: '" + std::string(name) + "' is not 'vulkan' or 'vulkan:N'");
  return static_cast<uint32_t>(std::stoul(std::string(digits)));
}

// ---- Buffer ----

Buffer::Buffer(Gpu& gpu, size_t bytes) : gpu_(gpu), bytes_(bytes) {
  const Functions& fn = gpu.fn();
  VkBufferCreateInfo info{.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                          .size = std::max<size_t>(bytes, 4),  // Vulkan forbids empty buffers
                          .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                          .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  check(fn.vkCreateBuffer(gpu.device(), &info, nullptr, &buffer_), "vkCreateBuffer");
  try {
    VkMemoryRequirements req;
    fn.vkGetBufferMemoryRequirements(gpu.device(), buffer_, &req);
    VkMemoryAllocateInfo alloc{.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .allocationSize = req.size,
                               .memoryTypeIndex = gpu.memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                                                         VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)};
    check(fn.vkAllocateMemory(gpu.device(), &alloc, nullptr, &memory_), "vkAllocateMemory");
    check(fn.vkBindBufferMemory(gpu.device(), buffer_, memory_, 0), "vkBindBufferMemory");
    void* mapped = nullptr;
    check(fn.vkMapMemory(gpu.device(), memory_, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
    mapped_ = static_cast<std::byte*>(mapped);
  } catch (...) {
    release();
    throw;
  }
}

Buffer::~Buffer() { release(); }

void Buffer::release() {
  const Functions& fn = gpu_.fn();
  if (mapped_) fn.vkUnmapMemory(gpu_.device(), memory_);
  if (memory_) fn.vkFreeMemory(gpu_.device(), memory_, nullptr);
  if (buffer_) fn.vkDestroyBuffer(gpu_.device(), buffer_, nullptr);
  mapped_ = nullptr;
  memory_ = VK_NULL_HANDLE;
  buffer_ = VK_NULL_HANDLE;
}

void Buffer::upload(std::span<const std::byte> data, size_t offset) {
  if (offset + data.size() > bytes_)
    throw InternalError("vulkan", fmt::format("upload of {} bytes at {} overruns a {}-byte buffer", data.size(), offset, bytes_));
  std::memcpy(mapped_ + offset, data.data(), data.size());
}

void Buffer::download(std::span<std::byte> data, size_t offset) const {
  if (offset + data.size() > bytes_)
    throw InternalError("vulkan", fmt::format("download of {} bytes at {} overruns a {}-byte buffer", data.size(), offset, bytes_));
  std::memcpy(data.data(), mapped_ + offset, data.size());
}

// ---- Pipeline ----

Pipeline::Pipeline(Gpu& gpu, std::span<const uint32_t> spirv, uint32_t bufferCount, uint32_t pushConstantBytes,
                   SubgroupRequest subgroups, const std::string& entryPoint)
    : gpu_(gpu), bufferCount_(bufferCount), pushConstantBytes_(pushConstantBytes) {
  checkSpirvStructure(spirv);
  checkCapabilities(spirv, gpu.info());
  const Functions& fn = gpu.fn();
  VkDevice dev = gpu.device();
  try {
    std::vector<VkDescriptorSetLayoutBinding> bindings(bufferCount);
    for (uint32_t i = 0; i < bufferCount; ++i)
      bindings[i] = {.binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1,
                     .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo setInfo{.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                            .bindingCount = bufferCount, .pBindings = bindings.data()};
    check(fn.vkCreateDescriptorSetLayout(dev, &setInfo, nullptr, &setLayout_), "vkCreateDescriptorSetLayout");

    VkPushConstantRange range{.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = pushConstantBytes};
    VkPipelineLayoutCreateInfo layoutInfo{.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                          .setLayoutCount = 1, .pSetLayouts = &setLayout_,
                                          .pushConstantRangeCount = pushConstantBytes ? 1u : 0u,
                                          .pPushConstantRanges = &range};
    check(fn.vkCreatePipelineLayout(dev, &layoutInfo, nullptr, &layout_), "vkCreatePipelineLayout");

    VkShaderModuleCreateInfo moduleInfo{.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                        .codeSize = spirv.size_bytes(), .pCode = spirv.data()};
    VkShaderModule module = VK_NULL_HANDLE;
    check(fn.vkCreateShaderModule(dev, &moduleInfo, nullptr, &module), "vkCreateShaderModule");
    Defer destroyModule{[&] { fn.vkDestroyShaderModule(dev, module, nullptr); }};
    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo size{
        .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
        .requiredSubgroupSize = subgroups.size};
    VkPipelineShaderStageCreateFlags full = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    VkComputePipelineCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .pNext = subgroups.size ? &size : nullptr,
                  .flags = subgroups.full ? full : 0u,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = module, .pName = entryPoint.c_str()},
        .layout = layout_};
    check(fn.vkCreateComputePipelines(dev, gpu.pipelineCache(), 1, &info, nullptr, &pipeline_),
          "vkCreateComputePipelines");
  } catch (...) {
    release();
    throw;
  }
}

Pipeline::~Pipeline() { release(); }

void Pipeline::release() {
  const Functions& fn = gpu_.fn();
  VkDevice dev = gpu_.device();
  if (pipeline_) fn.vkDestroyPipeline(dev, pipeline_, nullptr);
  if (layout_) fn.vkDestroyPipelineLayout(dev, layout_, nullptr);
  if (setLayout_) fn.vkDestroyDescriptorSetLayout(dev, setLayout_, nullptr);
  pipeline_ = VK_NULL_HANDLE;
  layout_ = VK_NULL_HANDLE;
  setLayout_ = VK_NULL_HANDLE;
}

// ---- Gpu ----

Gpu::Gpu(uint32_t index, std::filesystem::path pipelineCacheDir) : fn_(&loader().fn()) {
  const auto& physical = loader().physical();
  if (index >= physical.size())
    throw Error(fmt::format("device: vulkan:{} does not exist; this machine has {} Vulkan 1.2 device(s)", index,
                            physical.size()));
  info_ = describe(*fn_, physical[index], index);
  fn_->vkGetPhysicalDeviceMemoryProperties(physical[index], &memory_);
  pipelineCache_ = jit::ArtifactStore(std::move(pipelineCacheDir));
  pipelineCacheKey_ = pipelineCacheKey(info_);
  try {
    createDevice(physical[index]);
  } catch (...) {
    release();
    throw;
  }
}

// Enables the features kernels may use that the device has, and creates the
// queue, command pool, pipeline cache, timestamp queries and fence.
void Gpu::createDevice(VkPhysicalDevice physical) {
  SizeControl control = sizeControl(*fn_, physical, info_.extensions);
  bool atomicFloat = std::ranges::count(info_.extensions, kAtomicFloatExtension) > 0;
  Features has(control, atomicFloat);
  queryFeatures(*fn_, physical, has);
  // An extension's struct may be chained only when the extension is enabled.
  bool extension = control == SizeControl::extension && has.sizeControl.subgroupSizeControl;
  atomicFloat = atomicFloat && has.atomicFloat.shaderBufferFloat32AtomicAdd;
  Features enable(control == SizeControl::extension && !extension ? SizeControl::none : control, atomicFloat);
  enable.atomicFloat.shaderBufferFloat32AtomicAdd = atomicFloat;
  enable.sizeControl.subgroupSizeControl = has.sizeControl.subgroupSizeControl;
  enable.sizeControl.computeFullSubgroups = has.sizeControl.computeFullSubgroups;
  enable.core.features.shaderInt64 = has.core.features.shaderInt64;
  enable.core.features.shaderFloat64 = has.core.features.shaderFloat64;
  enable.core.features.shaderInt16 = has.core.features.shaderInt16;
  enable.v12.shaderSubgroupExtendedTypes = has.v12.shaderSubgroupExtendedTypes;  // 8/16/64-bit shuffles
  enable.v11.storageBuffer16BitAccess = has.v11.storageBuffer16BitAccess;
  enable.v12.shaderFloat16 = has.v12.shaderFloat16;
  enable.v12.shaderInt8 = has.v12.shaderInt8;
  enable.v12.storageBuffer8BitAccess = has.v12.storageBuffer8BitAccess;
  enable.v12.bufferDeviceAddress = has.v12.bufferDeviceAddress;
  enable.v12.shaderBufferInt64Atomics = has.v12.shaderBufferInt64Atomics;

  VkQueueFamilyProperties family;
  queueFamily_ = computeFamily(*fn_, physical, &family);
  timestampBits_ = family.timestampValidBits;
  float priority = 1;
  VkDeviceQueueCreateInfo queue{.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = queueFamily_,
                                .queueCount = 1, .pQueuePriorities = &priority};
  std::vector<const char*> extensions;
  if (extension) extensions.push_back(kSizeControlExtension);
  if (atomicFloat) extensions.push_back(kAtomicFloatExtension);
  VkDeviceCreateInfo info{.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &enable.core,
                          .queueCreateInfoCount = 1, .pQueueCreateInfos = &queue,
                          .enabledExtensionCount = uint32_t(extensions.size()),
                          .ppEnabledExtensionNames = extensions.data()};
  check(fn_->vkCreateDevice(physical, &info, nullptr, &device_), "vkCreateDevice");
  fn_->vkGetDeviceQueue(device_, queueFamily_, 0, &queue_);

  VkCommandPoolCreateInfo pool{.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                               .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT, .queueFamilyIndex = queueFamily_};
  check(fn_->vkCreateCommandPool(device_, &pool, nullptr, &commandPool_), "vkCreateCommandPool");
  createPipelineCache();
  if (info_.timestamps) {
    VkQueryPoolCreateInfo queries{.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2};
    check(fn_->vkCreateQueryPool(device_, &queries, nullptr, &queries_), "vkCreateQueryPool");
  }
  VkFenceCreateInfo fence{.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(fn_->vkCreateFence(device_, &fence, nullptr, &fence_), "vkCreateFence");
}

Gpu::~Gpu() { release(); }

void Gpu::release() {
  if (!device_) return;
  if (fence_) fn_->vkDestroyFence(device_, fence_, nullptr);
  if (queries_) fn_->vkDestroyQueryPool(device_, queries_, nullptr);
  if (cache_) fn_->vkDestroyPipelineCache(device_, cache_, nullptr);
  if (commandPool_) fn_->vkDestroyCommandPool(device_, commandPool_, nullptr);
  fn_->vkDestroyDevice(device_, nullptr);
  device_ = VK_NULL_HANDLE;
}

uint32_t Gpu::memoryType(uint32_t allowedTypes, VkMemoryPropertyFlags required) const {
  // Prefer memory that is also device-local (integrated GPUs, resizable BAR).
  for (VkMemoryPropertyFlags wanted : {required | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, required})
    for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
      if ((allowedTypes >> i & 1) && (memory_.memoryTypes[i].propertyFlags & wanted) == wanted) return i;
  throw Unsupported("vulkan: no host-visible, host-coherent memory type for a storage buffer");
}

// Starts from the saved file where there is one. The driver checks the data's header
// (vendor, device, cache UUID) and ignores data of another driver; the file's checksum
// catches what a torn or damaged file would otherwise feed it.
void Gpu::createPipelineCache() {
  std::vector<char> saved;
  try {
    saved = pipelineCache_.read(pipelineCacheKey_).value_or(std::vector<char>{});
  } catch (const jit::CorruptCacheEntry& e) {
    spdlog::warn("tilejit: Vulkan pipeline cache {} is unusable ({}); starting empty", pipelineCachePath().string(),
                 e.what());
  }
  VkPipelineCacheCreateInfo cache{.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                  .initialDataSize = saved.size(), .pInitialData = saved.data()};
  check(fn_->vkCreatePipelineCache(device_, &cache, nullptr, &cache_), "vkCreatePipelineCache");
  cacheLoadedBytes_ = saved.size();
  cacheSavedHash_ = saved.empty() ? 0 : XXH3_64bits(saved.data(), saved.size());
}

bool Gpu::savePipelineCache() {
  if (!pipelineCache_.enabled()) return false;
  std::vector<std::byte> data = pipelineCacheData();
  uint64_t hash = XXH3_64bits(data.data(), data.size());
  if (hash == cacheSavedHash_) return false;
  auto chars = std::span(reinterpret_cast<const char*>(data.data()), data.size());
  if (!pipelineCache_.write(pipelineCacheKey_, chars)) return false;
  cacheSavedHash_ = hash;
  return true;
}

std::vector<std::byte> Gpu::pipelineCacheData() const {
  size_t size = 0;
  check(fn_->vkGetPipelineCacheData(device_, cache_, &size, nullptr), "vkGetPipelineCacheData");
  std::vector<std::byte> data(size);
  check(fn_->vkGetPipelineCacheData(device_, cache_, &size, data.data()), "vkGetPipelineCacheData");
  data.resize(size);
  return data;
}

VkDescriptorPool Gpu::writeDescriptors(const Pipeline& pipeline, std::span<Buffer* const> buffers,
                                       VkDescriptorSet& set) {
  VkDescriptorPoolSize size{.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            .descriptorCount = std::max<uint32_t>(1, pipeline.bufferCount())};
  VkDescriptorPoolCreateInfo poolInfo{.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1,
                                      .poolSizeCount = 1, .pPoolSizes = &size};
  VkDescriptorPool pool = VK_NULL_HANDLE;
  check(fn_->vkCreateDescriptorPool(device_, &poolInfo, nullptr, &pool), "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo alloc{.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, .descriptorPool = pool,
                                    .descriptorSetCount = 1, .pSetLayouts = &pipeline.setLayout_};
  if (VkResult r = fn_->vkAllocateDescriptorSets(device_, &alloc, &set); r != VK_SUCCESS) {
    fn_->vkDestroyDescriptorPool(device_, pool, nullptr);
    check(r, "vkAllocateDescriptorSets");
  }
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkWriteDescriptorSet> writes;
  infos.reserve(buffers.size());
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    infos.push_back({.buffer = buffers[i]->handle(), .offset = 0, .range = VK_WHOLE_SIZE});
    writes.push_back({.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = i,
                      .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                      .pBufferInfo = &infos.back()});
  }
  fn_->vkUpdateDescriptorSets(device_, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return pool;
}

void Gpu::record(VkCommandBuffer cmd, const Pipeline& pipeline, VkDescriptorSet set,
                 std::span<const std::byte> pushConstants, uint32_t x, uint32_t y, uint32_t z) {
  VkCommandBufferBeginInfo begin{.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  check(fn_->vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
  if (queries_) {
    fn_->vkCmdResetQueryPool(cmd, queries_, 0, 2);
    fn_->vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
  }
  fn_->vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline_);
  fn_->vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout_, 0, 1, &set, 0, nullptr);
  if (!pushConstants.empty())
    fn_->vkCmdPushConstants(cmd, pipeline.layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                            static_cast<uint32_t>(pushConstants.size()), pushConstants.data());
  fn_->vkCmdDispatch(cmd, x, y, z);
  if (queries_) fn_->vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
  // The host reads results through mapped memory once the fence signals.
  VkMemoryBarrier toHost{.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                         .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  fn_->vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &toHost, 0,
                            nullptr, 0, nullptr);
  check(fn_->vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
}

void Gpu::submitAndWait(VkCommandBuffer cmd) {
  VkSubmitInfo submit{.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
  check(fn_->vkQueueSubmit(queue_, 1, &submit, fence_), "vkQueueSubmit");
  try {
    check(fn_->vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    check(fn_->vkResetFences(device_, 1, &fence_), "vkResetFences");
  } catch (const Error& e) {
    throw SubmittedError(e.what());
  }
}

double Gpu::elapsedNs() {
  if (!queries_) return -1;
  uint64_t ticks[2] = {0, 0};
  VkResult r = fn_->vkGetQueryPoolResults(device_, queries_, 0, 2, sizeof ticks, ticks, sizeof ticks[0],
                                          VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (r != VK_SUCCESS) return -1;  // the kernel ran; only its time is unknown
  uint64_t mask = timestampBits_ >= 64 ? ~0ull : (1ull << timestampBits_) - 1;  // the counter may wrap
  return static_cast<double>((ticks[1] - ticks[0]) & mask) * info_.timestampPeriodNs;
}

double Gpu::dispatch(const Pipeline& pipeline, std::span<Buffer* const> buffers,
                     std::span<const std::byte> pushConstants, uint32_t x, uint32_t y, uint32_t z) {
  if (buffers.size() != pipeline.bufferCount())
    throw InternalError("vulkan", fmt::format("dispatch got {} buffers but the pipeline binds {}", buffers.size(),
                            pipeline.bufferCount()));
  if (pushConstants.size() != pipeline.pushConstantBytes())
    throw InternalError("vulkan", fmt::format("dispatch got {} bytes of push constants but the pipeline takes {}",
                            pushConstants.size(), pipeline.pushConstantBytes()));
  uint32_t groups[3] = {x, y, z};
  for (int axis = 0; axis < 3; ++axis)
    if (groups[axis] > info_.maxWorkgroupCount[axis])
      throw Unsupported(fmt::format("vulkan: {} workgroups on axis {} exceed the device's {}", groups[axis], axis,
                              info_.maxWorkgroupCount[axis]));
  if (x == 0 || y == 0 || z == 0) return 0;

  VkDescriptorSet set = VK_NULL_HANDLE;
  VkDescriptorPool pool = writeDescriptors(pipeline, buffers, set);
  Defer destroyPool{[&] { fn_->vkDestroyDescriptorPool(device_, pool, nullptr); }};
  VkCommandBufferAllocateInfo alloc{.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = commandPool_, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  check(fn_->vkAllocateCommandBuffers(device_, &alloc, &cmd), "vkAllocateCommandBuffers");
  Defer freeCmd{[&] { fn_->vkFreeCommandBuffers(device_, commandPool_, 1, &cmd); }};
  record(cmd, pipeline, set, pushConstants, x, y, z);
  submitAndWait(cmd);
  return elapsedNs();
}

}  // namespace tj::vk
