#include "devices/vulkan/vulkan_device.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>

#include "devices/cpu/cpu_device.hpp"
#include "devices/vulkan/vulkan_runtime.hpp"
#include "ir/error.hpp"
#include "ir/passes.hpp"
#include "jit/cpu_target.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"
#include "lower/spirv/print_kernel_ir.hpp"

namespace tj::vulkan {

namespace {

thread_local LaunchInfo gLastLaunch;

[[noreturn]] void unsupported(const std::string& what) { throw Error("vulkan: unsupported: " + what); }

// The vulkan target with this device's subgroup size and workgroup memory.
layout::Target targetFor(const vk::DeviceInfo& info) {
  layout::Target t = layout::targetByName("vulkan");
  t.subgroupSize = info.subgroupSize;
  t.sharedBytes = info.sharedMemoryBytes;
  t.maxWorkgroupThreads = std::min<int64_t>(t.maxWorkgroupThreads, info.maxWorkgroupInvocations);
  t.warpsPerProgram = std::max<int64_t>(1, std::min(t.warpsPerProgram, t.maxWorkgroupThreads / t.subgroupSize));
  return t;
}

// Elements from a view's first element to its last, inclusive; strides must be non-negative.
int64_t extent(const TensorArg& t) {
  int64_t last = 0;
  for (size_t a = 0; a < t.shape.size(); ++a) {
    if (t.shape[a] == 0) return 0;
    if (t.strides[a] < 0) unsupported("negative strides");
    last += (t.shape[a] - 1) * t.strides[a];
  }
  return last + 1;
}

// The params buffer: one i64 slot per kernel parameter (print_kernel_ir.hpp).
std::vector<int64_t> paramSlots(const gpu::KernelFunction& f, const LaunchArgs& args) {
  std::vector<int64_t> slots(std::max<size_t>(1, f.params.size()), 0);
  for (size_t p = 0; p < f.params.size(); ++p) {
    const gpu::KParam& param = f.params[p];
    size_t n = param.number;
    switch (param.kind) {
      case gpu::KParam::Kind::buffer: break;
      case gpu::KParam::Kind::size: slots[p] = args.tensors[n].shape.at(param.axis); break;
      case gpu::KParam::Kind::stride: slots[p] = args.tensors[n].strides.at(param.axis); break;
      case gpu::KParam::Kind::scalar:
        slots[p] = isFloat(param.dtype) ? int64_t(std::bit_cast<uint32_t>(float(args.scalars[n].f))) : args.scalars[n].i;
        break;
    }
  }
  return slots;
}

// Parameter indices of the buffers the kernel stores to.
void storedBuffers(const gpu::KBlock& b, std::vector<bool>& stored) {
  for (const gpu::KInst& i : b.insts) {
    if (i.op == gpu::KOp::store_global)
      for (const gpu::KAttr& a : i.attrs)
        if (a.name == "buffer") stored.at(size_t(std::get<int64_t>(a.value))) = true;
    for (const gpu::KBlock& r : i.regions) storedBuffers(r, stored);
  }
}

struct Compiled {
  gpu::KernelFunction function;
  std::shared_ptr<const std::vector<uint32_t>> spirv;
  std::unique_ptr<vk::Pipeline> pipeline;
  std::vector<bool> stored;  // by parameter index
};

}  // namespace

struct VulkanDevice::State {
  explicit State(uint32_t index) : gpu(index) {}
  vk::Gpu gpu;
  std::map<uint64_t, Compiled> pipelines;  // by semantic hash; one State per physical device

  // Kernels reach devices canonical (run() and Kernel handles canonicalize them).
  Compiled& compile(const ir::Kernel& kernel, uint64_t hash) {
    if (auto it = pipelines.find(hash); it != pipelines.end()) return it->second;
    layout::Target target = targetFor(gpu.info());
    Compiled c{gpu::lowerToKernelIR(kernel, layout::inferLayouts(kernel, target), target), {}, {}, {}};
    c.spirv = std::make_shared<const std::vector<uint32_t>>(spirv::printSpirv(c.function));
    c.pipeline = std::make_unique<vk::Pipeline>(gpu, *c.spirv, spirv::paramsBinding(c.function) + 1, 0);
    c.stored.assign(c.function.params.size(), false);
    storedBuffers(c.function.body, c.stored);
    return pipelines.emplace(hash, std::move(c)).first->second;
  }
};

VulkanDevice::VulkanDevice(std::string name) : name_(std::move(name)) { vk::deviceIndex(name_); }
VulkanDevice::~VulkanDevice() = default;

VulkanDevice& VulkanDevice::instance(const std::string& name) {
  static std::mutex mutex;
  // Never destroyed: at exit the Vulkan instance may be gone before the pipelines.
  static auto* devices = new std::map<std::string, VulkanDevice*>;
  std::lock_guard lock(mutex);
  VulkanDevice*& d = (*devices)[name];
  if (!d) d = new VulkanDevice(name);
  return *d;
}

const LaunchInfo& lastLaunchInfo() { return gLastLaunch; }

std::string VulkanDevice::name() const {
  std::lock_guard lock(mutex_);
  return ran_.empty() ? name_ : ran_;
}

void VulkanDevice::launch(const ir::Kernel& kernel, const LaunchArgs& args) {
  checkLaunchArgs(kernel, args, "vulkan");
  std::lock_guard lock(mutex_);
  gLastLaunch = {};
  try {
    runOnVulkan(kernel, args);
    gLastLaunch.onVulkan = true;
    ran_ = name_;
  } catch (const Error& e) {
    fallBack(kernel, args, e.what());
  }
}

// Nothing is written to the arguments before the dispatch finished, so any failure
// before it leaves them as they were for the fallback.
void VulkanDevice::fallBack(const ir::Kernel& kernel, const LaunchArgs& args, const std::string& reason) {
  Device& cpu = jit::hostTargetSupported() ? static_cast<Device&>(cpu::CpuDevice::instance()) : selectDevice("interp");
  spdlog::warn("tilejit: kernel '{}' runs on {} instead of {}: {}", kernel.name, cpu.name(), name_, reason);
  gLastLaunch.fallbackReason = reason;
  cpu.launch(kernel, args);
  ran_ = cpu.name();
}

void VulkanDevice::runOnVulkan(const ir::Kernel& kernel, const LaunchArgs& args) {
  if (!vk::status().available) throw Error(vk::status().reason);
  if (!state_) state_ = std::make_unique<State>(vk::deviceIndex(name_));
  if (args.grid.size() > 3) unsupported("grid rank " + std::to_string(args.grid.size()));
  uint32_t groups[3] = {1, 1, 1};
  for (size_t a = 0; a < args.grid.size(); ++a) {
    if (args.grid[a] > state_->gpu.info().maxWorkgroupCount[a]) unsupported("grid size " + std::to_string(args.grid[a]));
    groups[a] = uint32_t(args.grid[a]);
  }
  Compiled& c = state_->compile(kernel, args.kernelHash ? args.kernelHash : ir::semanticHash(kernel));
  gLastLaunch.spirv = c.spirv;
  if (std::ranges::any_of(args.grid, [](int64_t g) { return g == 0; })) return;

  std::vector<std::unique_ptr<vk::Buffer>> buffers;
  std::vector<size_t> bytes;
  for (const TensorArg& t : args.tensors) {
    bytes.push_back(size_t(extent(t)) * size_t(dtypeBytes(t.dtype)));
    buffers.push_back(std::make_unique<vk::Buffer>(state_->gpu, std::max<size_t>(bytes.back(), 16)));
    if (bytes.back()) buffers.back()->upload(std::span(static_cast<const std::byte*>(t.data), bytes.back()));
  }
  std::vector<int64_t> slots = paramSlots(c.function, args);
  buffers.push_back(std::make_unique<vk::Buffer>(state_->gpu, slots.size() * 8));
  buffers.back()->upload(std::span<const int64_t>(slots));

  std::vector<vk::Buffer*> bound;
  for (auto& b : buffers) bound.push_back(b.get());
  state_->gpu.dispatch(*c.pipeline, bound, {}, groups[0], groups[1], groups[2]);
  for (size_t p = 0; p < c.function.params.size(); ++p) {
    const gpu::KParam& param = c.function.params[p];
    if (param.kind != gpu::KParam::Kind::buffer || !c.stored[p]) continue;
    size_t n = param.number;
    if (bytes[n]) buffers[n]->download(std::span(static_cast<std::byte*>(args.tensors[n].data), bytes[n]));
  }
}

}  // namespace tj::vulkan
