#include "devices/cuda/cuda_device.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>

#include "devices/cuda/cubin_cache.hpp"
#include "devices/driver_gpu.hpp"
#include "ir/error.hpp"
#include "jit/artifact_cache.hpp"
#include "lower/ptx/nvptx.hpp"

namespace tj::cuda {

namespace {

[[noreturn]] void unsupported(const std::string& what) { throw Unsupported("cuda: unsupported: " + what); }

// The driver's element type for TMA copies of `t`: what moves is bytes, so 8-bit types are all
// UINT8; nullopt where TMA has none that fits.
std::optional<CUtensorMapDataType> tensorMapType(DType t) {
  switch (t) {
    case DType::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::f8e4m3:
    case DType::f8e5m2:
    case DType::i8:
    case DType::u8: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    default: return std::nullopt;
  }
}

}  // namespace

std::string ptxEntryName(const std::string& ptx) {
  size_t at = ptx.find(".entry ");
  if (at == std::string::npos) throw InternalError("cuda", "the PTX has no .entry");
  at = ptx.find_first_not_of(' ', at + sizeof(".entry ") - 1);
  size_t end = ptx.find_first_of("( \n", at);
  return ptx.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

CUtensorMap encodeTensorMap(const gpu::KParam& map, const TensorArg& t, CUdeviceptr address) {
  const size_t rank = t.shape.size();
  std::optional<CUtensorMapDataType> type = tensorMapType(t.dtype);
  // The lowering maps only tensors whose launch facts allow 16-byte vectors: a unit last stride.
  if (!type || map.dtype != t.dtype || map.box.size() != rank || rank < 1 || rank > 5 || t.strides.back() != 1)
    throw InternalError("cuda", fmt::format("tensor map {} ({}, box [{}]) of tensor t{} ({}, strides [{}])", map.name,
                                            dtypeName(map.dtype), fmt::join(map.box, ", "), map.number,
                                            dtypeName(t.dtype), fmt::join(t.strides, ", ")));
  for (size_t d = 0; d < rank; ++d)
    if (t.shape[d] < 1 || t.shape[d] >= int64_t(1) << 31)
      unsupported(fmt::format("a tensor map of tensor t{}, whose size along dimension {} is {} (TMA takes 1 to 2^31 - 1: "
                              "its coordinates are i32)",
                              map.number, d, t.shape[d]));
  const int64_t bytes = dtypeBytes(t.dtype);
  // The driver's order: dimension i is the tensor's rank - 1 - i.
  std::array<cuuint64_t, 5> dims{}, strides{};
  std::array<cuuint32_t, 5> box{}, elementStrides{};
  for (size_t i = 0; i < rank; ++i) {
    size_t d = rank - 1 - i;
    dims[i] = cuuint64_t(t.shape[d]);
    box[i] = cuuint32_t(map.box[d]);
    elementStrides[i] = 1;
    if (i > 0) strides[i - 1] = cuuint64_t(t.strides[d] * bytes);
  }
  CUtensorMapSwizzle swizzle = map.swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                               : map.swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                               : map.swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                   : CU_TENSOR_MAP_SWIZZLE_NONE;
  if (map.swizzle != 0 && swizzle == CU_TENSOR_MAP_SWIZZLE_NONE)
    throw InternalError("cuda", fmt::format("tensor map {} swizzles {} bytes", map.name, map.swizzle));
  auto encode = optionalFunction(functions().cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
  // The driver writes only to a 64-byte-aligned map. The slot of a returned value may be less
  // aligned than its type says (g++ 12 puts such temporaries 16 bytes off in frames it
  // realigns), so the map is encoded into storage aligned here, then copied.
  std::array<std::byte, 2 * sizeof(CUtensorMap)> storage;
  void* at = storage.data();
  size_t space = storage.size();
  CUtensorMap* slot = new (std::align(alignof(CUtensorMap), sizeof(CUtensorMap), at, space)) CUtensorMap{};
  CUresult r = encode(slot, *type, cuuint32_t(rank), reinterpret_cast<void*>(uintptr_t(address)), dims.data(),
                      strides.data(), box.data(), elementStrides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Unsupported(fmt::format("{} for tensor t{} ({}, sizes [{}], strides [{}] elements, at {:#x}), box [{}], "
                                  "swizzle {}",
                                  errorMessage(r, "cuTensorMapEncodeTiled"), map.number, dtypeName(t.dtype),
                                  fmt::join(t.shape, ", "), fmt::join(t.strides, ", "), address,
                                  fmt::join(map.box, ", "), map.swizzle));
  return *slot;
}

layout::Target targetFor(const DeviceInfo& d) {
  if (d.major != 8 && d.major != 9)
    unsupported(fmt::format("{} has compute capability {}.{}; tilejit has layout targets for 8.0-8.7 (sm_80), "
                            "8.9 (sm_89), 9.0 (sm_90a: wgmma) and 9.x (sm_90)",
                            d.name, d.major, d.minor));
  layout::Target t = layout::targetByName(d.major == 9 ? (d.arch() == "sm_90a" ? "sm_90a" : "sm_90") : d.minor >= 9 ? "sm_89" : "sm_80");
  t.sharedBytes = std::max(d.sharedPerBlockOptin, d.sharedPerBlock);
  t.tma = t.tma && d.tma;
  if (d.maxThreadsPerBlock > 0) t.maxWorkgroupThreads = std::min<int64_t>(t.maxWorkgroupThreads, d.maxThreadsPerBlock);
  t.warpsPerProgram = std::max<int64_t>(1, std::min(t.warpsPerProgram, t.maxWorkgroupThreads / t.subgroupSize));
  return t;
}

namespace {

struct CudaModule final : DriverModule {
  explicit CudaModule(const DriverBinary& b)
      : module(b.image, b.entry), dynamicSharedBytes(b.sharedBytes > ptx::kStaticSharedBytes ? b.sharedBytes : 0) {}
  Module module;
  int64_t dynamicSharedBytes;  // past the static 48 KiB the kernel's shared array is dynamic (lower/ptx); else 0
};

// A CUDA device once set up: its primary context; cubins are its images.
class Context final : public DriverContext {
 public:
  Context(uint32_t index, std::filesystem::path cacheDir) : Context(deviceInfo(index), std::move(cacheDir)) {}
  std::string targetName() const override { return info_.arch(); }
  std::string model() const override { return info_.name + "-" + info_.arch(); }
  void makeCurrent() override { check(functions().cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }
  void makeCurrentQuietly() noexcept override { functions().cuCtxSetCurrent(context_); }

 private:
  Context(const DeviceInfo& info, std::filesystem::path cacheDir)
      : DriverContext("cuda", info.index, targetFor(info), limitsOf(info), std::move(cacheDir)), info_(info),
        context_(primaryContext(info.device)) {}
  std::unique_ptr<DeviceBuffer> allocate(size_t bytes) override { return std::make_unique<DeviceBufferOf<DeviceMemory>>(bytes); }
  std::unique_ptr<DeviceBuffer> borrow(uint64_t address, size_t bytes) override {
    return std::make_unique<DeviceBufferOf<DeviceMemory>>(address, bytes, info_);
  }
  jit::ArtifactKey imageKey(uint64_t irHash, const std::vector<bool>& vectorTensors) const override {
    return cubinKey(irHash, info_, target(), vectorTensors);
  }
  std::vector<char> encode(const DriverBinary& binary) const override { return encodeCubinBinary(binary); }
  DriverBinary decode(std::span<const char> bytes) const override { return decodeCubinBinary(bytes); }

  // Prints PTX and links it into a cubin.
  Image compile(const gpu::KernelFunction& f) override {
    std::string ptx = ptx::printPtx(f, info_.arch());
    return {ptxEntryName(ptx), linkPtx(ptx)};
  }

  // Opts in to a dynamic shared array's size (the layout target allows up to the device's
  // sharedPerBlockOptin).
  std::unique_ptr<DriverModule> loadModule(const DriverBinary& b) override {
    auto m = std::make_unique<CudaModule>(b);
    if (m->dynamicSharedBytes)
      check(functions().cuFuncSetAttribute(m->module.function(), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           int(m->dynamicSharedBytes)),
            "cuFuncSetAttribute");
    return m;
  }

  void launchKernel(const DriverModule& module, const DriverBinary& b, const unsigned grid[3], void** parameters,
                    void* stream) override {
    const auto& m = static_cast<const CudaModule&>(module);
    check(functions().cuLaunchKernel(m.module.function(), grid[0], grid[1], grid[2], unsigned(b.workgroupSize), 1, 1,
                                     unsigned(m.dynamicSharedBytes), static_cast<CUstream>(stream), parameters,
                                     nullptr),
          "cuLaunchKernel");
  }
  void synchronize(void* stream) override {
    if (stream) check(functions().cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
    else check(functions().cuCtxSynchronize(), "cuCtxSynchronize");
  }
  std::unique_ptr<LaunchTimer> makeTimer() override { return std::make_unique<LaunchTimerOf<Event>>(); }

  std::array<std::byte, 128> encodeTensorMap(const gpu::KParam& map, const TensorArg& t, uint64_t address) override {
    static_assert(sizeof(CUtensorMap) == 128);
    return std::bit_cast<std::array<std::byte, 128>>(cuda::encodeTensorMap(map, t, address));
  }

  DeviceInfo info_;
  CUcontext context_;
};

}  // namespace

DeviceKind deviceKind() {
  return {.name = "cuda",
          .fallsBackToHost = true,
          .unavailableReason = [] { return status().available ? std::string() : status().reason; },
          .devices =
              [] {
                return describedDevices("cuda", status().available ? status().devices : 0,
                                        [](int i) { return deviceInfo(uint32_t(i)).name; });
              },
          .open = [](const std::string& name) -> Device& { return CudaDevice::instance(name); }};
}

CudaDevice::CudaDevice(std::string name) : GpuDevice(std::move(name)) { deviceIndex(this->name()); }

CudaDevice& CudaDevice::instance(const std::string& name) { return deviceNamed<CudaDevice>(name); }

// No such device, or no layout target for it: decided once.
std::unique_ptr<GpuContext> CudaDevice::open() {
  if (!status().available) throw Unsupported(status().reason);
  return std::make_unique<Context>(deviceIndex(name()), jit::KernelCache::diskDirFromEnvironment());
}

}  // namespace tj::cuda
