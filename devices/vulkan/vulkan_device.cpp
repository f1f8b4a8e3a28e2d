#include "devices/vulkan/vulkan_device.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <optional>

#include "devices/print_buffers.hpp"
#include "devices/vulkan/kernel_binary.hpp"
#include "ir/error.hpp"

namespace tj::vulkan {

namespace {

// Mesa's llvmpipe ends every loop of a shader once its loops ran this many iterations in
// total (LP_MAX_TGSI_LOOP_ITERATIONS), silently; kernels count theirs (lower/spirv).
constexpr int64_t kLavapipeLoopIterations = 65535;
// Lavapipe's compile time grows faster than a shader's code (attention's 5.1K kernel-IR
// instructions per thread took 9 s on 4 warps, 1 s on 16): kernels past this many
// instructions per thread spread over more warps (gpu::lowerWithinCodeBudget).
constexpr int64_t kLavapipeCodeBudget = 1500;
// Lavapipe compiles each workgroup-memory access as a loop over the subgroup's lanes: a sort
// of [8, 131] (264 accesses per thread on 4 warps) took 2.5 s, 1.0 s on 8 (136); attention's
// 152 on 16 warps stay.
constexpr int64_t kLavapipeSharedAccessBudget = 200;
[[noreturn]] void unsupported(const std::string& what) { throw Unsupported("vulkan: unsupported: " + what); }

// The params buffer: one i64 slot per kernel parameter.
std::vector<int64_t> paramSlots(const KernelBinary& b, const LaunchArgs& args) {
  std::vector<int64_t> slots(std::max<size_t>(1, b.params.size()), 0);
  for (size_t p = 0; p < b.params.size(); ++p) {
    const gpu::KParam& param = b.params[p];
    size_t n = param.number;
    switch (param.kind) {
      case gpu::KParam::Kind::buffer: break;
      case gpu::KParam::Kind::size: slots[p] = args.tensors[n].shape.at(param.axis); break;
      case gpu::KParam::Kind::stride: slots[p] = args.tensors[n].strides.at(param.axis); break;
      case gpu::KParam::Kind::scalar: slots[p] = scalarSlot(param.dtype, args.scalars[n]); break;
      case gpu::KParam::Kind::tensor_map: throw InternalError("vulkan", "a tensor map parameter (TMA is Hopper's)");
      case gpu::KParam::Kind::program_count: throw InternalError("vulkan", "a persistent kernel (warp specialization is Hopper's)");
    }
  }
  return slots;
}

struct Compiled final : LoadedKernel {
  KernelBinary binary;
  vk::SubgroupRequest subgroups;
  std::unique_ptr<vk::Pipeline> pipeline;
  std::vector<bool> storedTensors;  // by tensor: the kernel stores to it
};

std::vector<bool> storedTensors(const KernelBinary& b) {
  std::vector<bool> stored;
  for (size_t p = 0; p < b.params.size(); ++p) {
    if (b.params[p].kind != gpu::KParam::Kind::buffer) continue;
    stored.resize(std::max(stored.size(), b.params[p].number + 1));
    stored[b.params[p].number] = b.stored[p];
  }
  return stored;
}

// A buffer's size for `bytes` of data: whole 32-bit words (16-bit atomics update the word
// holding their element), at least 16 bytes.
size_t bufferBytes(size_t bytes) { return std::max<size_t>((bytes + 3) / 4 * 4, 16); }

// A tensor storage's copy in a Vulkan buffer (Tensor::on).
class VulkanCopy final : public DeviceCopy {
 public:
  VulkanCopy(const void* owner, vk::Gpu& gpu, size_t bytes)
      : DeviceCopy(owner), buffer(gpu, bufferBytes(bytes)) {}
  void upload(std::span<const std::byte> host) override { buffer.upload(host); }
  void download(std::span<std::byte> host) override { buffer.download(host); }
  vk::Buffer buffer;
};

// The fault words a kernel sets (gpu::FaultWord).
using Faults = std::array<int32_t, gpu::kFaultWords>;

// A tensor's buffer in one launch: its device copy, or a temporary holding the view's extent.
struct Binding {
  vk::Buffer* buffer;
  Residency* copy = nullptr;       // the residency whose copy is bound
  const std::byte* host = nullptr;  // a temporary's host bytes, and their count
  size_t bytes = 0;
};

// A dispatched launch, before anything is written to its arguments: its buffers by
// binding (tensors, prints, the fault flag, then the params buffer).
class Dispatched final : public StartedLaunch {
 public:
  explicit Dispatched(const vk::DeviceInfo& device) : device(device) {}
  LaunchReport finish(const ir::Kernel& kernel, const LaunchArgs& args, LaunchReport report) override;

  const vk::DeviceInfo& device;
  const Compiled* compiled = nullptr;  // null: an empty grid, nothing ran
  std::vector<std::unique_ptr<vk::Buffer>> temporaries;
  std::vector<Binding> tensors;
  std::vector<vk::Buffer*> bound, prints;
  vk::Buffer* faults = nullptr;

 private:
  Faults faultWords() const;
  void collect(const LaunchArgs& args) const;
  int64_t storedDeviceCopy() const;
  LaunchReport rerunCutShort(const ir::Kernel& kernel, const LaunchArgs& args, LaunchReport report) const;
};

// Downloads the print buffers and prints them as the CPU device would.
void printAll(const std::vector<gpu::KPrint>& prints, const std::vector<vk::Buffer*>& buffers,
              const LaunchArgs& args) {
  std::vector<std::vector<std::byte>> bytes;
  std::vector<std::span<const std::byte>> views;
  for (vk::Buffer* b : buffers) {
    bytes.emplace_back(b->size());
    b->download(std::span<std::byte>(bytes.back()));
    views.push_back(bytes.back());
  }
  printBuffers(prints, views, args.grid, args.print);
}

// TILEJIT_VULKAN_WARPS: the warps of every program, a power of two up to `most`.
std::optional<int64_t> warpsFromEnvironment(int64_t most) {
  const char* env = std::getenv("TILEJIT_VULKAN_WARPS");
  if (!env || !*env) return std::nullopt;
  std::string_view s(env);
  int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec == std::errc() && end == s.data() + s.size() && n >= 1 && n <= most && std::has_single_bit(uint64_t(n)))
    return n;
  if (firstTime("TILEJIT_VULKAN_WARPS"))
    spdlog::warn("tilejit: TILEJIT_VULKAN_WARPS='{}' is not a power of two from 1 to {}; ignored", s, most);
  return std::nullopt;
}

}  // namespace

layout::Target targetFor(const vk::DeviceInfo& info) {
  layout::Target t = layout::targetByName("vulkan");
  t.subgroupSize = info.subgroupSize;
  t.sharedBytes = info.sharedMemoryBytes;
  t.maxWorkgroupThreads = std::min<int64_t>(t.maxWorkgroupThreads, info.maxWorkgroupInvocations);
  t.warpsPerProgram = std::max<int64_t>(1, std::min(t.warpsPerProgram, t.maxWorkgroupThreads / t.subgroupSize));
  if (info.driverId == VK_DRIVER_ID_MESA_LLVMPIPE) {
    t.loopIterationLimit = kLavapipeLoopIterations;
    t.codeBudget = kLavapipeCodeBudget;
    t.sharedAccessBudget = kLavapipeSharedAccessBudget;
  }
  if (std::optional<int64_t> warps = warpsFromEnvironment(t.maxWorkgroupThreads / t.subgroupSize)) {
    t.warpsPerProgram = *warps;
    t.codeBudget = 0;
    t.sharedAccessBudget = 0;
  }
  return t;
}

vk::SubgroupRequest subgroupRequest(const vk::DeviceInfo& d, int64_t size, int64_t workgroupSize) {
  if (!d.subgroupSizeControl) {
    if (size != d.subgroupSize)
      unsupported(fmt::format("the kernel assumes subgroups of {} but the device runs {} and cannot be asked for "
                              "another size",
                              size, d.subgroupSize));
    return {};
  }
  if (size < d.minSubgroupSize || size > d.maxSubgroupSize)
    unsupported(fmt::format("the kernel assumes subgroups of {}, outside the device's [{}, {}]", size,
                            d.minSubgroupSize, d.maxSubgroupSize));
  bool full = d.computeFullSubgroups && workgroupSize % size == 0;
  // A device of one subgroup size runs every workgroup in it; asking for that size would
  // bound the workgroup by maxComputeWorkgroupSubgroups (256 threads on lavapipe) for nothing.
  if (d.minSubgroupSize == d.maxSubgroupSize) return {0, full};
  if (workgroupSize > size * d.maxComputeWorkgroupSubgroups)
    unsupported(fmt::format("{} threads are more than {} subgroups of {}", workgroupSize,
                            d.maxComputeWorkgroupSubgroups, size));
  return {uint32_t(size), full};
}

namespace {

// A Vulkan device once set up: its Gpu and artifact store.
class Context final : public GpuContext {
 public:
  Context(uint32_t index, const std::filesystem::path& cacheDir) : gpu(index, cacheDir), store(cacheDir) {}
  std::string targetName() const override { return "vulkan"; }
  std::string model() const override { return gpu.info().name + fmt::format("-drv{:x}", gpu.info().driverVersion); }
  // Kernels reach devices canonical (run() and Kernel handles canonicalize them). What the
  // lowering cannot build is also remembered in the cache folder.
  std::unique_ptr<LoadedKernel> load(const ir::Kernel& kernel, uint64_t hash, const LaunchArgs&,
                                     LaunchReport& report) override {
    try {
      auto c = std::make_unique<Compiled>(build(kernel, hash, report));
      gpu.savePipelineCache();
      return c;
    } catch (const KernelRefused& e) {
      report.cache = e.source;
      report.compileMs = e.ms;
      throw;
    }
  }
  std::unique_ptr<StartedLaunch> start(const LoadedKernel& loaded, const ir::Kernel&, const LaunchArgs& args,
                                       LaunchReport& report) override {
    return dispatch(static_cast<const Compiled&>(loaded), args, report);
  }
  std::unique_ptr<DeviceCopy> copyOf(size_t bytes) override { return std::make_unique<VulkanCopy>(owner(), gpu, bytes); }

 private:
  vk::Gpu gpu;
  jit::ArtifactStore store;  // of kernels and refusals

  // A pipeline the driver rejects is refused for this process only: the rejection may be
  // transient (out of memory), unlike a kernel the lowering cannot build.
  Compiled build(const ir::Kernel& kernel, uint64_t hash, LaunchReport& report) {
    layout::Target target = targetFor(gpu.info());
    jit::ArtifactKey key = kernelBinaryKey(hash, gpu.info().featureKey(), target);
    return loadOrBuildKernel(kernel, key, target, store,
                             [&](LoadedBinary& loaded) { return pipelineFor(loaded, report); });
  }

  Compiled pipelineFor(LoadedBinary& loaded, LaunchReport& report) {
    report.cache = loaded.source;
    report.compileMs = loaded.ms;
    Compiled c;
    c.binary = loaded.binary;
    c.storedTensors = storedTensors(c.binary);
    c.subgroups = subgroupRequest(gpu.info(), c.binary.subgroupSize, c.binary.workgroupSize);
    auto start = std::chrono::steady_clock::now();
    c.pipeline = std::make_unique<vk::Pipeline>(gpu, *c.binary.spirv, c.binary.bufferCount,
                                                c.binary.pushConstantBytes, c.subgroups);
    std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    report.driverMs = took.count();
    return c;
  }

  // The tensor's device copy where it has one here, else a temporary from the host bytes,
  // shared by arguments over the same bytes (a tensor passed twice, or its transpose).
  Binding bind(const TensorArg& t, Dispatched& d) {
    if (t.residency && t.residency->copy().owner == owner()) {
      // Tensor views all start at their storage's first element; one further in would
      // need an aligned descriptor offset.
      if (t.data != t.residency->host().data()) unsupported("a device-resident view not at its storage's start");
      return {&static_cast<VulkanCopy&>(t.residency->toDevice()).buffer, t.residency};
    }
    Binding b{nullptr, nullptr, static_cast<const std::byte*>(t.data), size_t(viewExtent(t, "vulkan")) * size_t(dtypeBytes(t.dtype))};
    for (const Binding& other : d.tensors) {
      if (other.copy || !b.bytes || !other.bytes) continue;
      if (other.host == b.host && other.bytes == b.bytes) return other;
      if (b.host < other.host + other.bytes && other.host < b.host + b.bytes)
        unsupported("two arguments are different views over overlapping bytes");
    }
    d.temporaries.push_back(std::make_unique<vk::Buffer>(gpu, bufferBytes(b.bytes)));
    if (b.bytes) d.temporaries.back()->upload(std::span(b.host, b.bytes));
    b.buffer = d.temporaries.back().get();
    return b;
  }

  // A buffer of its own for parameter `param` (a print or the fault flag), at its binding.
  vk::Buffer* extraBuffer(Dispatched& d, size_t param, size_t bytes) {
    d.temporaries.push_back(std::make_unique<vk::Buffer>(gpu, bufferBytes(bytes)));
    d.bound.at(d.compiled->binary.params.at(param).number) = d.temporaries.back().get();
    return d.temporaries.back().get();
  }

  // Binds the kernel's buffers and runs it. Throws Unsupported for what this device cannot
  // run, before anything is written to the arguments.
  std::unique_ptr<Dispatched> dispatch(const Compiled& c, const LaunchArgs& args, LaunchReport& report) {
    if (args.grid.size() > 3) unsupported("grid rank " + std::to_string(args.grid.size()));
    uint32_t groups[3] = {1, 1, 1};
    for (size_t a = 0; a < args.grid.size(); ++a) {
      if (args.grid[a] > gpu.info().maxWorkgroupCount[a]) unsupported("grid size " + std::to_string(args.grid[a]));
      groups[a] = uint32_t(args.grid[a]);
    }
    report.threadsPerProgram = c.binary.workgroupSize;
    report.requiredSubgroupSize = c.subgroups.size;
    report.fullSubgroups = c.subgroups.full;
    report.spirv = c.binary.spirv;
    auto launch = std::make_unique<Dispatched>(gpu.info());
    Dispatched& d = *launch;
    int64_t programs = groups[0] * int64_t(groups[1]) * groups[2];
    if (std::ranges::any_of(args.grid, [](int64_t g) { return g == 0; })) return launch;
    d.compiled = &c;
    d.bound.assign(c.binary.bufferCount, nullptr);
    for (size_t n = 0; n < args.tensors.size(); ++n) {
      d.tensors.push_back(bind(args.tensors[n], d));
      d.bound[n] = d.tensors.back().buffer;
    }
    for (const gpu::KPrint& p : c.binary.prints) {
      if (printBufferBytes(p, programs) > kMaxGpuPrintBytes)
        unsupported(fmt::format("print '{}' over {} programs needs more than {} MiB", p.label, programs, kMaxGpuPrintBytes >> 20));
      d.prints.push_back(extraBuffer(d, p.param, printBufferBytes(p, programs)));
    }
    if (c.binary.faultParam >= 0) {
      d.faults = extraBuffer(d, size_t(c.binary.faultParam), sizeof(Faults));
      d.faults->upload(std::span<const int32_t>(Faults{}));
    }
    std::vector<int64_t> slots = paramSlots(c.binary, args);
    std::span<const std::byte> pushed;
    if (c.binary.pushConstantBytes) {
      pushed = std::as_bytes(std::span(slots)).first(c.binary.pushConstantBytes);
    } else {
      d.temporaries.push_back(std::make_unique<vk::Buffer>(gpu, slots.size() * 8));
      d.temporaries.back()->upload(std::span<const int64_t>(slots));
      d.bound.back() = d.temporaries.back().get();
    }
    gpu.dispatch(*c.pipeline, d.bound, pushed, groups[0], groups[1], groups[2]);
    return launch;
  }
};

LaunchReport Dispatched::finish(const ir::Kernel& kernel, const LaunchArgs& args, LaunchReport report) {
  Faults words = faultWords();
  if (words[size_t(gpu::FaultWord::loopLimit)]) return rerunCutShort(kernel, args, std::move(report));
  // From here on the arguments are written: errors propagate; running again would apply twice.
  collect(args);
  throwGpuFaults(kernel, words, args.grid, report.device);
  return report;
}

// The fault words the kernel set (gpu::FaultWord).
Faults Dispatched::faultWords() const {
  Faults words{};
  if (faults) faults->download(std::span<int32_t>(words));
  return words;
}

// Writes back what the kernel stored (a device copy is marked newer instead), prints its prints.
void Dispatched::collect(const LaunchArgs& args) const {
  if (!compiled) return;
  const std::vector<bool>& stored = compiled->storedTensors;
  for (size_t n = 0; n < args.tensors.size(); ++n) {
    if (n >= stored.size() || !stored[n]) continue;
    const Binding& b = tensors[n];
    if (b.copy) b.copy->deviceWrote();
    else if (b.bytes) b.buffer->download(std::span(static_cast<std::byte*>(args.tensors[n].data), b.bytes));
  }
  if (!prints.empty()) printAll(compiled->binary.prints, prints, args);
}

// A stored tensor whose device copy the kernel wrote in place, or -1: a kernel cut short
// may have left it half written, so it cannot run again elsewhere.
int64_t Dispatched::storedDeviceCopy() const {
  const std::vector<bool>& stored = compiled->storedTensors;
  for (size_t n = 0; n < tensors.size(); ++n)
    if (n < stored.size() && stored[n] && tensors[n].copy) return int64_t(n);
  return -1;
}

// The driver ended the kernel's loops early. Nothing was written back to host memory, so
// the CPU runs it again, unless it stored into a device copy in place.
LaunchReport Dispatched::rerunCutShort(const ir::Kernel& kernel, const LaunchArgs& args, LaunchReport report) const {
  std::string reason = fmt::format("its loops ran past the {} iterations per thread after which this driver ({}) "
                                   "ends them early",
                                   targetFor(device).loopIterationLimit, device.name);
  if (int64_t tensor = storedDeviceCopy(); tensor >= 0)
    throw Error(fmt::format("vulkan: kernel '{}': {}, and it wrote tensor {} in place on the device, so its result "
                            "is lost; run it with device=cpu or larger blocks",
                            kernel.name, reason, tensor));
  return runOnHostInstead(std::move(report), kernel, args, reason);
}

}  // namespace

DeviceKind deviceKind() {
  return {.name = "vulkan",
          .fallsBackToHost = true,
          .unavailableReason = [] { return vk::status().available ? std::string() : vk::status().reason; },
          .devices =
              [] {
                std::vector<std::string> names;
                if (vk::status().available)
                  for (const vk::DeviceInfo& d : vk::listDevices())
                    names.push_back(fmt::format("vulkan:{} ({})", d.index, d.name));
                return names;
              },
          .open = [](const std::string& name) -> Device& { return VulkanDevice::instance(name); }};
}

VulkanDevice::VulkanDevice(std::string name) : GpuDevice(std::move(name)) { vk::deviceIndex(this->name()); }

VulkanDevice& VulkanDevice::instance(const std::string& name) { return deviceNamed<VulkanDevice>(name); }

std::unique_ptr<GpuContext> VulkanDevice::open() {
  if (!vk::status().available) throw Unsupported(vk::status().reason);
  return std::make_unique<Context>(vk::deviceIndex(name()), jit::KernelCache::diskDirFromEnvironment());
}

}  // namespace tj::vulkan
