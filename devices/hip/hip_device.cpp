#include "devices/hip/hip_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include <spdlog/spdlog.h>

#include "devices/hip/comgr.hpp"
#include "jit/kernel_cache.hpp"
#include "lower/amdgpu/amdgpu.hpp"
#include "lower/llvm_gpu/print_kernel_ir.hpp"

namespace tj::hip {

namespace {

// Bumped whenever the encoding, or what the HIP device records in it, changes (the build id
// covers ir/, layout/, lower/ and jit/, not devices/).
constexpr uint32_t kFormat = 1;

// HIP may keep reading the image it loaded a module from (clr keeps a plain code object by
// reference; ROCr records it by host address for debuggers and profilers): the module owns it.
struct HipModule final : DriverModule {
  explicit HipModule(const DriverBinary& b) : image(b.image), module(image, b.entry) {}
  std::vector<char> image;
  Module module;  // declared after the image: unloaded before it is freed
};

// A HIP device once set up; code objects are its images.
class Context final : public DriverContext {
 public:
  Context(const DeviceInfo& info, std::filesystem::path cacheDir)
      : DriverContext("hip", info.index, targetFor(info), limitsOf(info), std::move(cacheDir)), info_(info),
        toolchain_(comgr::toolchainFor(info.arch())) {
    spdlog::info("tilejit: hip:{} ({}, {}): code objects compiled by {} and linked by {} ({})", info.index, info.name,
                 info.arch(), toolchain_.compiler, toolchain_.comgrLinks ? toolchain_.linker : "LLD in process",
                 toolchain_.why);
  }
  std::string targetName() const override { return info_.arch(); }
  std::string model() const override { return info_.name + "-" + info_.arch(); }
  void makeCurrent() override { check(functions().hipSetDevice(int(info_.index)), "hipSetDevice"); }
  void makeCurrentQuietly() noexcept override { functions().hipSetDevice(int(info_.index)); }

 private:
  std::unique_ptr<DeviceBuffer> allocate(size_t bytes) override { return std::make_unique<DeviceBufferOf<DeviceMemory>>(bytes); }
  std::unique_ptr<DeviceBuffer> borrow(uint64_t address, size_t bytes) override {
    return std::make_unique<DeviceBufferOf<DeviceMemory>>(address, bytes, info_);
  }
  jit::ArtifactKey imageKey(uint64_t irHash, const std::vector<bool>& vectorTensors) const override {
    return codeObjectKey(irHash, info_, target(), vectorTensors, toolchain_.name());
  }
  std::vector<char> encode(const DriverBinary& binary) const override { return encodeCodeObjectBinary(binary); }
  DriverBinary decode(std::span<const char> bytes) const override { return decodeCodeObjectBinary(bytes); }

  // Compiled by LLVM's AMDGPU backend for the device's processor (by comgr from LLVM's bitcode
  // where this LLVM does not know it), linked by comgr or LLD.
  Image compile(const gpu::KernelFunction& f) override {
    const std::string arch = info_.arch();
    std::vector<char> object = toolchain_.comgrCompiles ? comgr::compileBitcode(amdgpu::compileBitcode(f, arch), arch)
                                                        : amdgpu::compileObject(f, arch);
    return {llvmgpu::entryName(f.name), toolchain_.comgrLinks ? linkWithComgr(object, f.name) : amdgpu::linkCodeObject(object)};
  }
  // A comgr that failed where TILEJIT_AMD_LINKER did not ask for it leaves the link to LLD (the
  // code object is as good, so it is cached under the key that names comgr all the same).
  std::vector<char> linkWithComgr(const std::vector<char>& object, const std::string& kernel) const {
    try {
      return comgr::linkCodeObject(object, info_.arch());
    } catch (const Unsupported& e) {
      if (toolchain_.comgrRequired) throw;
      spdlog::warn("tilejit: kernel '{}': {}; LLD links it instead", kernel, e.what());
      return amdgpu::linkCodeObject(object);
    }
  }
  std::unique_ptr<DriverModule> loadModule(const DriverBinary& b) override { return std::make_unique<HipModule>(b); }

  // The kernel's LDS is static (its code object declares it): no dynamic bytes.
  void launchKernel(const DriverModule& module, const DriverBinary& b, const unsigned grid[3], void** parameters,
                    void* stream) override {
    const auto& m = static_cast<const HipModule&>(module);
    check(functions().hipModuleLaunchKernel(m.module.function(), grid[0], grid[1], grid[2], unsigned(b.workgroupSize),
                                            1, 1, 0, static_cast<hipStream_t>(stream), parameters, nullptr),
          "hipModuleLaunchKernel");
  }
  void synchronize(void* stream) override {
    if (stream) check(functions().hipStreamSynchronize(static_cast<hipStream_t>(stream)), "hipStreamSynchronize");
    else check(functions().hipDeviceSynchronize(), "hipDeviceSynchronize");
  }
  std::unique_ptr<LaunchTimer> makeTimer() override { return std::make_unique<LaunchTimerOf<Event>>(); }

  DeviceInfo info_;
  comgr::Toolchain toolchain_;
};

}  // namespace

layout::Target targetFor(const DeviceInfo& d) {
  layout::Target t = layout::targetByName(amdgpu::layoutTargetName(d.arch()));
  if (d.warpSize != t.subgroupSize)
    throw Unsupported(fmt::format("hip: unsupported: {} ({}) runs waves of {}; tilejit's {} kernels need {}", d.name,
                                  d.targetId, d.warpSize, t.name, t.subgroupSize));
  if (d.sharedPerBlock > 0) t.sharedBytes = std::min<int64_t>(t.sharedBytes, d.sharedPerBlock);
  if (d.maxThreadsPerBlock > 0) t.maxWorkgroupThreads = std::min<int64_t>(t.maxWorkgroupThreads, d.maxThreadsPerBlock);
  t.warpsPerProgram = std::max<int64_t>(1, std::min(t.warpsPerProgram, t.maxWorkgroupThreads / t.subgroupSize));
  return t;
}

jit::ArtifactKey codeObjectKey(uint64_t irHash, const DeviceInfo& d, const layout::Target& t,
                               const std::vector<bool>& vectorTensors, const std::string& toolchain) {
  std::string device = fmt::format("hip-{}-{}-wave{}-cus{}-runtime{}", d.name, d.targetId, d.warpSize,
                                   d.multiprocessors, d.runtimeVersion);
  std::string options = fmt::format(
      "amdgpu target={} arch={} warps={} threads={} shared={} loops={} budget={} vector={} toolchain={}", t.name,
      d.arch(), t.warpsPerProgram, t.maxWorkgroupThreads, t.sharedBytes, t.loopIterationLimit, t.codeBudget,
      vectorFactsText(vectorTensors), toolchain);
  return {jit::ArtifactKind::codeObject, irHash, device, options};
}

std::vector<char> encodeCodeObjectBinary(const DriverBinary& b) { return encodeDriverBinary(b, kFormat); }

DriverBinary decodeCodeObjectBinary(std::span<const char> bytes) {
  return decodeDriverBinary(bytes, "HIP kernel", kFormat);
}

DeviceKind deviceKind() {
  return {.name = "hip",
          .fallsBackToHost = true,
          .unavailableReason = [] { return status().available ? std::string() : status().reason; },
          .devices =
              [] {
                return describedDevices("hip", status().available ? status().devices : 0, [](int i) {
                  DeviceInfo info = deviceInfo(uint32_t(i));
                  return info.name + ", " + info.targetId;
                });
              },
          .open = [](const std::string& name) -> Device& { return HipDevice::instance(name); }};
}

HipDevice::HipDevice(std::string name) : GpuDevice(std::move(name)) { deviceIndex(this->name()); }

HipDevice& HipDevice::instance(const std::string& name) { return deviceNamed<HipDevice>(name); }

// No such device, or no layout target for it: decided once.
std::unique_ptr<GpuContext> HipDevice::open() {
  if (!status().available) throw Unsupported(status().reason);
  return std::make_unique<Context>(deviceInfo(deviceIndex(name())), jit::KernelCache::diskDirFromEnvironment());
}

}  // namespace tj::hip
