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
#include "devices/print_buffers.hpp"
#include "ir/error.hpp"
#include "ir/passes.hpp"
#include "jit/artifact_cache.hpp"
#include "jit/timing.hpp"
#include "lower/gpu/spread_over_warps.hpp"
#include "lower/ptx/nvptx.hpp"

namespace tj::cuda {

namespace {

[[noreturn]] void unsupported(const std::string& what) { throw Unsupported("cuda: unsupported: " + what); }

// A loaded kernel and the interface its launches need (its cubin dropped once loaded).
struct Compiled final : LoadedKernel {
  CubinBinary binary;
  std::unique_ptr<Module> module;
  std::vector<bool> storedTensors;  // by tensor: the kernel stores to it
  // Past the static 48 KiB the kernel's shared array is dynamic (lower/ptx): its size, passed
  // at launch; else 0.
  int64_t dynamicSharedBytes() const {
    return binary.sharedBytes > ptx::kStaticSharedBytes ? binary.sharedBytes : 0;
  }
};

// A tensor storage's copy in device memory (Tensor::on("cuda")). Any thread may move its
// bytes or free it, so each call makes its context current first.
class CudaCopy final : public DeviceCopy {
 public:
  CudaCopy(const void* owner, CUcontext context, size_t bytes)
      : DeviceCopy(owner), context_(current(context)), memory_(bytes) {}
  ~CudaCopy() override { functions().cuCtxSetCurrent(context_); }  // before memory_ is freed
  void upload(std::span<const std::byte> host) override {
    current(context_);
    memory_.upload(host.data(), host.size());
  }
  void download(std::span<std::byte> host) override {
    current(context_);
    memory_.download(host.data(), host.size());
  }
  CUdeviceptr pointer() const { return memory_.pointer(); }

 private:
  static CUcontext current(CUcontext context) {
    check(functions().cuCtxSetCurrent(context), "cuCtxSetCurrent");
    return context;
  }
  CUcontext context_;
  DeviceMemory memory_;
};

// One tensor argument's device memory: its storage's device copy (`copy` set), or a
// temporary copy of the bytes its view reaches. `address` is the view's first element.
struct Binding {
  CUdeviceptr address = 0;
  DeviceMemory* memory = nullptr;  // the temporary
  Residency* copy = nullptr;
  std::byte* host = nullptr;
  size_t bytes = 0;
};

// Events recorded around a launch, made in the device's context.
struct Timer {
  Event launched, finished;
};

// A launched kernel whose arguments are not written yet: its device memory.
class Launched final : public StartedLaunch {
 public:
  LaunchReport finish(const ir::Kernel& kernel, const LaunchArgs& args, LaunchReport report) override;

  const Compiled* compiled = nullptr;  // null: an empty grid, nothing ran
  std::vector<std::unique_ptr<DeviceMemory>> owned;
  std::vector<Binding> tensors;
  std::vector<DeviceMemory*> prints;
  DeviceMemory* faults = nullptr;
  const Timer* timer = nullptr;  // its events, when both were recorded
};

// The kernel's parameters as cuLaunchKernel reads them, as lower/llvm_gpu/print_kernel_ir.hpp
// declares them: a buffer as its device address, sizes, strides and integer scalars as i64,
// f64 scalars as double, other float scalars as float, each in an 8-byte word (the driver
// reads a float's 4); a tensor map as the CUtensorMap encoded for its tensor's binding, whose
// 128 bytes the driver copies. One pointer per parameter into those, for cuLaunchKernel: not
// copyable, so that they stay valid.
class ParameterValues {
 public:
  ParameterValues(const CubinBinary& c, const LaunchArgs& args, const std::vector<CUdeviceptr>& buffers,
                  const std::vector<Binding>& tensors)
      : words_(c.params.size(), 0) {
    std::vector<size_t> mapOf(c.params.size(), SIZE_MAX);  // by parameter: its index in maps_
    for (size_t p = 0; p < c.params.size(); ++p) {
      const gpu::KParam& param = c.params[p];
      size_t n = param.number;
      auto put = [&](auto value) {
        static_assert(sizeof value <= sizeof(uint64_t));
        if (sizeof value != parameterBytes(param)) throw InternalError("cuda", fmt::format("parameter {}'s size", p));
        std::memcpy(&words_[p], &value, sizeof value);
      };
      switch (param.kind) {
        case gpu::KParam::Kind::buffer:
          if (!buffers.at(p)) throw InternalError("cuda", fmt::format("buffer parameter {} has no memory", p));
          put(buffers[p]);
          break;
        case gpu::KParam::Kind::size: put(int64_t(args.tensors[n].shape.at(param.axis))); break;
        case gpu::KParam::Kind::stride: put(int64_t(args.tensors[n].strides.at(param.axis))); break;
        case gpu::KParam::Kind::scalar:
          if (param.dtype == DType::f64) put(args.scalars[n].f);
          else if (isFloat(param.dtype)) put(std::bit_cast<float>(uint32_t(scalarSlot(param.dtype, args.scalars[n]))));
          else put(int64_t(args.scalars[n].i));
          break;
        case gpu::KParam::Kind::tensor_map:
          static_assert(sizeof(CUtensorMap) == 128);
          mapOf[p] = maps_.size();
          maps_.push_back(encodeTensorMap(param, args.tensors[n], tensors.at(n).address));
          break;
      }
    }
    for (size_t p = 0; p < c.params.size(); ++p)
      pointers_.push_back(mapOf[p] == SIZE_MAX ? static_cast<void*>(&words_[p]) : &maps_[mapOf[p]]);
  }
  ParameterValues(const ParameterValues&) = delete;
  ParameterValues& operator=(const ParameterValues&) = delete;
  void** pointers() { return pointers_.data(); }

 private:
  std::vector<uint64_t> words_;  // by parameter (unused for a tensor map)
  std::vector<CUtensorMap> maps_;  // by tensor-map parameter, in order
  std::vector<void*> pointers_;  // by parameter
};

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

size_t parameterBytes(const gpu::KParam& p) {
  if (p.kind == gpu::KParam::Kind::tensor_map) return sizeof(CUtensorMap);
  return p.kind == gpu::KParam::Kind::scalar && isFloat(p.dtype) && p.dtype != DType::f64 ? 4 : 8;
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

// A CUDA device once set up: its context and artifact store.
class Context final : public GpuContext {
 public:
  Context(uint32_t index, std::filesystem::path cacheDir)
      : info(deviceInfo(index)), target(targetFor(info)), context(primaryContext(info.device)),
        store(std::move(cacheDir)) {}
  std::string targetName() const override { return info.arch(); }
  std::string model() const override { return info.name + "-" + info.arch(); }
  // The code depends on which tensors allow 16-byte accesses: one '0' or '1' each.
  std::string launchFacts(const LaunchArgs& args) const override {
    std::string facts;
    for (bool vector : vectorFacts(args)) facts += vector ? '1' : '0';
    return facts;
  }
  std::unique_ptr<LoadedKernel> load(const ir::Kernel& kernel, uint64_t hash, const LaunchArgs& args,
                                     LaunchReport& report) override {
    check(functions().cuCtxSetCurrent(context), "cuCtxSetCurrent");
    return std::make_unique<Compiled>(build(kernel, hash, vectorFacts(args), report));
  }
  std::unique_ptr<StartedLaunch> start(const LoadedKernel& loaded, const ir::Kernel&, const LaunchArgs& args,
                                       LaunchReport& report) override {
    return launch(static_cast<const Compiled&>(loaded), args, report);
  }
  std::unique_ptr<DeviceCopy> copyOf(size_t bytes) override { return std::make_unique<CudaCopy>(owner(), context, bytes); }

 private:
  DeviceInfo info;
  layout::Target target;
  CUcontext context;
  jit::ArtifactStore store;  // of cubins
  std::unique_ptr<Timer> timer;  // events around the last launch, made in the context

  // A launch copies each tensor's bytes to the start of a device allocation (bind), whose
  // address cuMemAlloc aligns to 256 bytes; a device copy's view starts at its offset there.
  std::vector<bool> vectorFacts(const LaunchArgs& args) const {
    std::vector<bool> facts;
    for (const TensorArg& t : args.tensors)
      facts.push_back(gpu::allowsVectorAccess(residentOffset(t), t.dtype, t.shape, t.strides, target.vectorBytes));
    return facts;
  }

  // The cubin from the disk cache, else lowered, printed as PTX and linked now (and written
  // there). Throws Unsupported for what this device cannot run.
  Compiled build(const ir::Kernel& kernel, uint64_t hash, const std::vector<bool>& vectorTensors, LaunchReport& report) {
    auto start = jit::Clock::now();
    jit::ArtifactKey cacheKey = cubinKey(hash, info, target, vectorTensors);
    // A cubin the driver or the kernel rejects is as untrustworthy as a torn entry: rebuilt.
    if (auto hit = store.load(cacheKey, [&](const std::vector<char>& bytes) {
          return load(kernel, decodeCubinBinary(bytes), jit::CacheSource::disk, start, report);
        }))
      return std::move(*hit);
    CubinBinary binary = compileCubin(kernel, vectorTensors);
    std::vector<char> entry = store.enabled() ? encodeCubinBinary(binary) : std::vector<char>{};
    Compiled c = load(kernel, std::move(binary), jit::CacheSource::compiled, start, report);
    store.write(cacheKey, entry);  // only what loaded
    return c;
  }

  // Lowers, prints PTX and links it into a cubin.
  CubinBinary compileCubin(const ir::Kernel& kernel, const std::vector<bool>& vectorTensors) {
    gpu::KernelLoweringOptions options;
    options.vectorTensors = vectorTensors;
    gpu::KernelFunction f = gpu::lowerWithinCodeBudget(kernel, target, options);
    if (f.workgroupSize > info.maxThreadsPerBlock)
      unsupported(fmt::format("{} threads per block, more than the device's {}", f.workgroupSize,
                              info.maxThreadsPerBlock));
    std::string ptx = ptx::printPtx(f, info.arch());
    CubinBinary b{.params = f.params, .prints = f.prints, .faultParam = f.faultParam,
                  .workgroupSize = f.workgroupSize, .sharedBytes = f.sharedBytes(), .entry = ptxEntryName(ptx),
                  .cubin = linkPtx(ptx)};
    for (gpu::KParam& p : b.params) p.name.clear();
    return b;
  }

  // Throws Error where the cubin's interface does not fit `kernel` or this device.
  void checkInterface(const CubinBinary& b, const ir::Kernel& kernel) const {
    auto fits = [&](size_t p) {
      const gpu::KParam& param = b.params[p];
      bool tensor = param.number < kernel.tensors.size();
      switch (param.kind) {
        case gpu::KParam::Kind::buffer:
          return tensor || int64_t(p) == b.faultParam ||
                 std::ranges::any_of(b.prints, [&](const gpu::KPrint& print) { return print.param == p; });
        case gpu::KParam::Kind::size:
        case gpu::KParam::Kind::stride: return tensor && param.axis < size_t(kernel.tensors[param.number].rank);
        case gpu::KParam::Kind::scalar: return param.number < kernel.scalars.size();
        case gpu::KParam::Kind::tensor_map:
          return tensor && kernel.tensors[param.number].dtype == param.dtype &&
                 param.box.size() == size_t(kernel.tensors[param.number].rank) && !param.box.empty() &&
                 param.box.size() <= 5 && std::ranges::all_of(param.box, [](int64_t n) { return n >= 1 && n <= 256; }) &&
                 (param.swizzle == 0 || param.swizzle == 32 || param.swizzle == 64 || param.swizzle == 128);
      }
      return false;
    };
    for (size_t p = 0; p < b.params.size(); ++p)
      if (!fits(p)) throw InternalError("cuda", fmt::format("parameter {} does not fit kernel '{}'", p, kernel.name));
    if (b.workgroupSize > info.maxThreadsPerBlock)
      throw Unsupported(fmt::format("cuda: {} threads per block, more than the device's {}", b.workgroupSize,
                              info.maxThreadsPerBlock));
  }

  Compiled load(const ir::Kernel& kernel, CubinBinary binary, jit::CacheSource source, jit::Clock::time_point start,
                LaunchReport& report) {
    checkInterface(binary, kernel);
    Compiled c;
    c.module = std::make_unique<Module>(binary.cubin, binary.entry);
    binary.cubin = {};
    c.binary = std::move(binary);
    // Opt in to a dynamic shared array's size (the layout target allows up to the device's
    // sharedPerBlockOptin).
    if (int64_t bytes = c.dynamicSharedBytes())
      check(functions().cuFuncSetAttribute(c.module->function(), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           int(bytes)),
            "cuFuncSetAttribute");
    c.storedTensors = ir::writtenTensors(kernel);
    report.cache = source;
    report.compileMs = jit::msSince(start);
    return c;
  }

  // The tensor's device copy where it has one here, else a temporary from the host bytes,
  // shared by arguments over the same bytes (a tensor passed twice).
  Binding bind(const TensorArg& t, Launched& l) {
    if (t.residency && t.residency->copy().owner == owner()) {
      auto& copy = static_cast<CudaCopy&>(t.residency->toDevice());
      return {copy.pointer() + residentOffset(t), nullptr, t.residency};
    }
    Binding b{0, nullptr, nullptr, static_cast<std::byte*>(t.data), size_t(viewExtent(t, "cuda")) * size_t(dtypeBytes(t.dtype))};
    for (const Binding& other : l.tensors) {
      if (other.copy || !b.bytes || !other.bytes) continue;
      if (other.host == b.host && other.bytes == b.bytes) return other;
      if (b.host < other.host + other.bytes && other.host < b.host + b.bytes)
        unsupported("two arguments are different views over overlapping bytes");
    }
    l.owned.push_back(std::make_unique<DeviceMemory>(b.bytes));
    l.owned.back()->upload(b.host, b.bytes);
    b.memory = l.owned.back().get();
    b.address = b.memory->pointer();
    return b;
  }

  // Where a view of a storage with a copy here starts in that copy, in bytes; 0 otherwise.
  uintptr_t residentOffset(const TensorArg& t) const {
    if (!t.residency || t.residency->copy().owner != owner()) return 0;
    return uintptr_t(static_cast<const std::byte*>(t.data) - t.residency->host().data());
  }

  DeviceMemory* scratch(Launched& l, size_t bytes) {
    l.owned.push_back(std::make_unique<DeviceMemory>(bytes));
    l.owned.back()->zero();
    return l.owned.back().get();
  }

  // Copies the kernel's arguments and launches it. Throws Unsupported for what this device
  // cannot run; nothing is written to the arguments.
  std::unique_ptr<Launched> launch(const Compiled& compiled, const LaunchArgs& args, LaunchReport& report) {
    check(functions().cuCtxSetCurrent(context), "cuCtxSetCurrent");
    if (args.grid.size() > 3) unsupported("grid rank " + std::to_string(args.grid.size()));
    unsigned grid[3] = {1, 1, 1};
    for (size_t a = 0; a < args.grid.size(); ++a) {
      if (args.grid[a] > info.maxGrid[a]) unsupported(fmt::format("grid size {} on axis {}", args.grid[a], a));
      grid[a] = unsigned(args.grid[a]);
    }
    const CubinBinary& c = compiled.binary;
    report.threadsPerProgram = c.workgroupSize;
    auto launched = std::make_unique<Launched>();
    Launched& l = *launched;
    if (std::ranges::any_of(args.grid, [](int64_t g) { return g == 0; })) return launched;
    l.compiled = &compiled;
    int64_t programs = int64_t(grid[0]) * grid[1] * grid[2];
    std::vector<CUdeviceptr> buffers(c.params.size(), 0);  // by parameter
    for (const TensorArg& t : args.tensors) l.tensors.push_back(bind(t, l));
    for (size_t p = 0; p < c.params.size(); ++p)
      if (c.params[p].kind == gpu::KParam::Kind::buffer && c.params[p].number < l.tensors.size())
        buffers[p] = l.tensors[c.params[p].number].address;
    for (const gpu::KPrint& p : c.prints) {
      size_t bytes = printBufferBytes(p, programs);
      if (bytes > kMaxGpuPrintBytes)
        unsupported(fmt::format("print '{}' over {} programs needs more than {} MiB", p.label, programs,
                                kMaxGpuPrintBytes >> 20));
      l.prints.push_back(scratch(l, bytes));
      buffers.at(p.param) = l.prints.back()->pointer();
    }
    if (c.faultParam >= 0) {
      l.faults = scratch(l, gpu::kFaultWords * sizeof(int32_t));
      buffers.at(size_t(c.faultParam)) = l.faults->pointer();
    }
    ParameterValues values(c, args, buffers, l.tensors);
    if (!timer) timer = std::make_unique<Timer>();
    bool timed = timer->launched.record();
    check(functions().cuLaunchKernel(compiled.module->function(), grid[0], grid[1], grid[2], unsigned(c.workgroupSize), 1, 1,
                                     unsigned(compiled.dynamicSharedBytes()), nullptr, values.pointers(), nullptr),
          "cuLaunchKernel");
    if (timed && timer->finished.record()) l.timer = timer.get();  // from here on nothing may throw: the kernel runs
    return launched;
  }
};

}  // namespace

// Waits for the kernel, writes back what it stored (a device copy is marked newer instead),
// prints its prints; then raises a fault it reported.
LaunchReport Launched::finish(const ir::Kernel& kernel, const LaunchArgs& args, LaunchReport report) {
  if (!compiled) return report;
  check(functions().cuCtxSynchronize(), "cuCtxSynchronize");
  std::array<int32_t, gpu::kFaultWords> words{};
  if (faults) faults->download(words.data(), sizeof words);
  for (size_t n = 0; n < tensors.size(); ++n) {
    const Binding& b = tensors[n];
    if (!compiled->storedTensors.at(n)) continue;
    if (b.copy) b.copy->deviceWrote();
    else b.memory->download(b.host, b.bytes);
  }
  if (!prints.empty()) {
    std::vector<std::vector<std::byte>> bytes;
    std::vector<std::span<const std::byte>> views;
    for (DeviceMemory* m : prints) {
      bytes.emplace_back(m->size());
      m->download(bytes.back().data(), m->size());
      views.push_back(bytes.back());
    }
    printBuffers(compiled->binary.prints, views, args.grid, args.print);
  }
  if (timer) report.kernelMs = timer->finished.msSince(timer->launched);
  throwGpuFaults(kernel, words, args.grid, report.device);
  return report;
}

DeviceKind deviceKind() {
  return {.name = "cuda",
          .fallsBackToHost = true,
          .unavailableReason = [] { return status().available ? std::string() : status().reason; },
          .devices =
              [] {
                std::vector<std::string> names;
                for (int i = 0; status().available && i < status().devices; ++i) {
                  std::string name = fmt::format("cuda:{}", i);
                  try {
                    name += " (" + deviceInfo(i).name + ")";
                  } catch (const Error&) {  // the device is there, nameless: the launch says what is wrong
                  }
                  names.push_back(name);
                }
                return names;
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
