#include "devices/driver_gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <functional>
#include <limits>

#include "devices/gpu_binary.hpp"
#include "devices/print_buffers.hpp"
#include "ir/passes.hpp"
#include "jit/timing.hpp"
#include "lower/gpu/spread_over_warps.hpp"

namespace tj {

// ---- DriverBinary ----

std::vector<char> encodeDriverBinary(const DriverBinary& b, uint32_t format) {
  jit::FieldWriter out;
  out.put(format);
  out.put(b.workgroupSize);
  out.put(b.sharedBytes);
  putParams(out, b.params);
  putPrints(out, b.prints);
  out.put(b.faultParam);
  out.putString(b.entry);
  out.putBytes(b.image);
  return std::move(out.bytes);
}

DriverBinary decodeDriverBinary(std::span<const char> bytes, const char* what, uint32_t format) {
  jit::FieldReader in(bytes, what);
  in.expectFormat(format);
  DriverBinary b;
  b.workgroupSize = in.get<int64_t>();
  b.sharedBytes = in.get<int64_t>();
  b.params = getParams(in);
  b.prints = getPrints(in, b.params.size());
  b.faultParam = getFaultParam(in, b.params.size());
  b.entry = in.getString();
  b.image = in.getBytes();
  if (b.workgroupSize < 1 || b.sharedBytes < 0)
    in.bad(fmt::format("{} threads and {} bytes of shared memory", b.workgroupSize, b.sharedBytes));
  if (b.entry.empty() || b.image.empty() || in.remaining()) in.bad("no kernel name, no image or bytes after it");
  return b;
}

std::string vectorFactsText(const std::vector<bool>& vectorTensors) {
  std::string facts;
  for (bool vector : vectorTensors) facts += vector ? '1' : '0';
  return facts;
}

size_t parameterBytes(const gpu::KParam& p) {
  if (p.kind == gpu::KParam::Kind::tensor_map) return 128;
  return p.kind == gpu::KParam::Kind::scalar && isFloat(p.dtype) && p.dtype != DType::f64 ? 4 : 8;
}

// ---- the launch skeleton ----

// A loaded kernel and the interface its launches need (its image dropped once loaded).
struct DriverContext::Compiled final : LoadedKernel {
  DriverBinary binary;
  std::unique_ptr<DriverModule> module;
  std::vector<bool> storedTensors;  // by tensor: the kernel stores to it
};

// One tensor argument's device memory: its storage's device copy (`copy` set), or a
// temporary copy of the bytes its view reaches. `address` is the view's first element.
struct DriverContext::Binding {
  uint64_t address = 0;
  DeviceBuffer* memory = nullptr;  // the temporary
  Residency* copy = nullptr;
  std::byte* host = nullptr;
  size_t bytes = 0;
};

namespace {

// A tensor storage's copy in device memory (Tensor::on). Any thread may move its bytes or
// free it, so each call makes its context current first. The context outlives it: devices
// are never destroyed (deviceNamed).
class DriverCopy final : public DeviceCopy {
 public:
  // `device` names the context's device ("cuda:0").
  DriverCopy(const void* owner, DriverContext& context, std::unique_ptr<DeviceBuffer> memory, std::string device)
      : DeviceCopy(owner), context_(context), memory_(std::move(memory)), device_(std::move(device)) {}
  ~DriverCopy() override { context_.makeCurrentQuietly(); }  // before memory_ is freed
  void upload(std::span<const std::byte> host) override {
    context_.makeCurrent();
    memory_->upload(host.data(), host.size(), nullptr);
    // A pageable copy may return before its DMA lands: finished before a kernel on any stream reads it.
    context_.synchronize(nullptr);
  }
  void download(std::span<std::byte> host) override {
    context_.makeCurrent();
    memory_->download(host.data(), host.size(), nullptr);
  }
  Address address() const override { return {device_, memory_->address()}; }

 private:
  DriverContext& context_;
  std::unique_ptr<DeviceBuffer> memory_;
  std::string device_;
};

// The kernel's parameters as the driver reads them, as lower/llvm_gpu/print_kernel_ir.hpp
// declares them: a buffer as its device address, sizes, strides and integer scalars as i64,
// f64 scalars as double, other float scalars as float, each in an 8-byte word (the driver
// reads a float's 4); a tensor map as the 128 bytes encoded for its tensor's binding. One
// pointer per parameter into those: not copyable, so that they stay valid.
class ParameterValues {
 public:
  using EncodeMap = std::function<std::array<std::byte, 128>(const gpu::KParam&, size_t tensor)>;
  ParameterValues(const DriverBinary& c, const LaunchArgs& args, const std::vector<uint64_t>& buffers,
                  const EncodeMap& encodeMap)
      : words_(c.params.size(), 0) {
    std::vector<size_t> mapOf(c.params.size(), SIZE_MAX);  // by parameter: its index in maps_
    for (size_t p = 0; p < c.params.size(); ++p) {
      const gpu::KParam& param = c.params[p];
      size_t n = param.number;
      auto put = [&](auto value) {
        static_assert(sizeof value <= sizeof(uint64_t));
        if (sizeof value != parameterBytes(param)) throw InternalError("gpu", fmt::format("parameter {}'s size", p));
        std::memcpy(&words_[p], &value, sizeof value);
      };
      switch (param.kind) {
        case gpu::KParam::Kind::buffer:
          if (!buffers.at(p)) throw InternalError("gpu", fmt::format("buffer parameter {} has no memory", p));
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
          mapOf[p] = maps_.size();
          maps_.push_back(encodeMap(param, n));
          break;
        case gpu::KParam::Kind::program_count:
          put(param.axis < args.grid.size() ? int64_t(args.grid[param.axis]) : int64_t{1});
          break;
      }
    }
    for (size_t p = 0; p < c.params.size(); ++p)
      pointers_.push_back(mapOf[p] == SIZE_MAX ? static_cast<void*>(&words_[p]) : maps_[mapOf[p]].data());
  }
  ParameterValues(const ParameterValues&) = delete;
  ParameterValues& operator=(const ParameterValues&) = delete;
  void** pointers() { return pointers_.data(); }

 private:
  std::vector<uint64_t> words_;  // by parameter (unused for a tensor map)
  std::vector<std::array<std::byte, 128>> maps_;  // by tensor-map parameter, in order
  std::vector<void*> pointers_;  // by parameter
};

}  // namespace

// A launched kernel whose arguments are not written yet: its device memory.
class DriverContext::Launched final : public StartedLaunch {
 public:
  Launched(DriverContext& context, void* stream) : stream(stream), context_(context) {}
  LaunchReport finish(const ir::Kernel& kernel, const LaunchArgs& args, LaunchReport report) override;

  void* const stream;                  // the launch's and its copies' (null: the legacy default stream)
  const Compiled* compiled = nullptr;  // null: an empty grid, nothing ran
  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  std::vector<Binding> tensors;
  std::vector<DeviceBuffer*> prints;
  DeviceBuffer* faults = nullptr;
  const LaunchTimer* timer = nullptr;  // its events, when both were recorded

 private:
  DriverContext& context_;
};

DriverContext::DriverContext(std::string kind, uint32_t index, layout::Target target, Limits limits,
                             std::filesystem::path cacheDir)
    : kind_(std::move(kind)), name_(fmt::format("{}:{}", kind_, index)), target_(std::move(target)), limits_(limits),
      store_(std::move(cacheDir)) {}

void DriverContext::unsupported(const std::string& what) const {
  throw Unsupported(kind_ + ": unsupported: " + what);
}

std::array<std::byte, 128> DriverContext::encodeTensorMap(const gpu::KParam& map, const TensorArg&, uint64_t) {
  throw InternalError(kind_, "tensor map " + map.name + " on a device without tensor maps");
}

std::string DriverContext::launchFacts(const LaunchArgs& args) const { return vectorFactsText(vectorFacts(args)); }

// A launch copies each tensor's bytes to the start of a device allocation (bind), which the
// drivers align to 256 bytes; a device copy's view starts at its offset there.
std::vector<bool> DriverContext::vectorFacts(const LaunchArgs& args) const {
  std::vector<bool> facts;
  for (const TensorArg& t : args.tensors)
    facts.push_back(gpu::allowsVectorAccess(residentAddress(t), t.dtype, t.shape, t.strides, target_.vectorBytes));
  return facts;
}

std::unique_ptr<LoadedKernel> DriverContext::load(const ir::Kernel& kernel, uint64_t hash, const LaunchArgs& args,
                                                  LaunchReport& report) {
  makeCurrent();
  return std::make_unique<Compiled>(build(kernel, hash, vectorFacts(args), report));
}

std::unique_ptr<DeviceCopy> DriverContext::copyOf(size_t bytes) {
  makeCurrent();
  return std::make_unique<DriverCopy>(owner(), *this, allocate(bytes), name_);
}

std::unique_ptr<DeviceCopy> DriverContext::adopt(uint64_t address, size_t bytes) {
  makeCurrent();
  return std::make_unique<DriverCopy>(owner(), *this, borrow(address, bytes), name_);
}

// The image from the disk cache, else compiled now (and written there). Throws Unsupported
// for what this device cannot run.
DriverContext::Compiled DriverContext::build(const ir::Kernel& kernel, uint64_t hash,
                                             const std::vector<bool>& vectorTensors, LaunchReport& report) {
  auto start = jit::Clock::now();
  jit::ArtifactKey cacheKey = imageKey(hash, vectorTensors);
  // An image the driver or the kernel rejects is as untrustworthy as a torn entry: rebuilt.
  if (auto hit = store_.load(cacheKey, [&](const std::vector<char>& bytes) {
        return loadBinary(kernel, decode(bytes), jit::CacheSource::disk, start, report);
      }))
    return std::move(*hit);
  DriverBinary binary = compileKernel(kernel, vectorTensors);
  std::vector<char> entry = store_.enabled() ? encode(binary) : std::vector<char>{};
  Compiled c = loadBinary(kernel, std::move(binary), jit::CacheSource::compiled, start, report);
  store_.write(cacheKey, entry);  // only what loaded
  return c;
}

DriverBinary DriverContext::compileKernel(const ir::Kernel& kernel, const std::vector<bool>& vectorTensors) {
  gpu::KernelLoweringOptions options;
  options.vectorTensors = vectorTensors;
  gpu::KernelFunction f = gpu::lowerWithinCodeBudget(kernel, target_, options);
  if (f.workgroupSize > limits_.maxThreadsPerBlock)
    unsupported(fmt::format("{} threads per block, more than the device's {}", f.workgroupSize,
                            limits_.maxThreadsPerBlock));
  Image image = compile(f);
  DriverBinary b{.params = f.params, .prints = f.prints, .faultParam = f.faultParam, .workgroupSize = f.workgroupSize,
                 .sharedBytes = f.sharedBytes(), .entry = std::move(image.entry), .image = std::move(image.bytes)};
  for (gpu::KParam& p : b.params) p.name.clear();
  return b;
}

// Throws Error where the binary's interface does not fit `kernel` or this device.
void DriverContext::checkInterface(const DriverBinary& b, const ir::Kernel& kernel) const {
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
      case gpu::KParam::Kind::program_count: return param.axis < 3;
    }
    return false;
  };
  for (size_t p = 0; p < b.params.size(); ++p)
    if (!fits(p)) throw InternalError(kind_, fmt::format("parameter {} does not fit kernel '{}'", p, kernel.name));
  if (b.workgroupSize > limits_.maxThreadsPerBlock)
    throw Unsupported(fmt::format("{}: {} threads per block, more than the device's {}", kind_, b.workgroupSize,
                                  limits_.maxThreadsPerBlock));
}

DriverContext::Compiled DriverContext::loadBinary(const ir::Kernel& kernel, DriverBinary binary,
                                                  jit::CacheSource source, jit::Clock::time_point start,
                                                  LaunchReport& report) {
  checkInterface(binary, kernel);
  Compiled c;
  c.module = loadModule(binary);
  binary.image = {};
  c.binary = std::move(binary);
  c.storedTensors = ir::writtenTensors(kernel);
  report.cache = source;
  report.compileMs = jit::msSince(start);
  return c;
}

// The tensor's device copy where it has one here, else a temporary from the host bytes,
// shared by arguments over the same bytes (a tensor passed twice).
DriverContext::Binding DriverContext::bind(const TensorArg& t, Launched& l) {
  if (t.residency && t.residency->copy().owner == owner()) {
    t.residency->toDevice();
    return {residentAddress(t), nullptr, t.residency};
  }
  Binding b{0, nullptr, nullptr, static_cast<std::byte*>(t.data),
            size_t(viewExtent(t, kind_)) * size_t(dtypeBytes(t.dtype))};
  for (const Binding& other : l.tensors) {
    if (other.copy || !b.bytes || !other.bytes) continue;
    if (other.host == b.host && other.bytes == b.bytes) return other;
    if (b.host < other.host + other.bytes && other.host < b.host + b.bytes)
      unsupported("two arguments are different views over overlapping bytes");
  }
  l.owned.push_back(allocate(b.bytes));
  l.owned.back()->upload(b.host, b.bytes, l.stream);
  b.memory = l.owned.back().get();
  b.address = b.memory->address();
  return b;
}

// A view's device address in a storage's copy here (0 otherwise: bind gives it a new allocation).
uint64_t DriverContext::residentAddress(const TensorArg& t) const {
  if (!t.residency || t.residency->copy().owner != owner()) return 0;
  auto offset = uintptr_t(static_cast<const std::byte*>(t.data) - t.residency->host().data());
  return t.residency->copy().address().address + offset;
}

DeviceBuffer* DriverContext::scratch(Launched& l, size_t bytes) {
  l.owned.push_back(allocate(bytes));
  l.owned.back()->zero(l.stream);
  return l.owned.back().get();
}

// Copies the kernel's arguments and launches it. Throws Unsupported for what this device
// cannot run; nothing is written to the arguments.
std::unique_ptr<StartedLaunch> DriverContext::start(const LoadedKernel& loaded, const ir::Kernel&,
                                                    const LaunchArgs& args, LaunchReport& report) {
  const auto& compiled = static_cast<const Compiled&>(loaded);
  makeCurrent();
  if (args.grid.size() > 3) unsupported("grid rank " + std::to_string(args.grid.size()));
  const DriverBinary& c = compiled.binary;
  const bool persistent = gpu::isPersistent(c.params);  // launched on a grid of its own below
  unsigned grid[3] = {1, 1, 1};
  for (size_t a = 0; a < args.grid.size(); ++a) {
    if (!persistent && args.grid[a] > limits_.maxGrid[a]) unsupported(fmt::format("grid size {} on axis {}", args.grid[a], a));
    grid[a] = unsigned(std::min<int64_t>(args.grid[a], std::numeric_limits<unsigned>::max()));
  }
  report.threadsPerProgram = c.workgroupSize;
  auto launched = std::make_unique<Launched>(*this, args.stream);
  Launched& l = *launched;
  if (std::ranges::any_of(args.grid, [](int64_t g) { return g == 0; })) return launched;
  l.compiled = &compiled;
  int64_t programs = 1;
  for (int64_t g : args.grid) programs *= g;
  if (persistent) {  // one workgroup per multiprocessor, each taking programs in turn
    int64_t workgroups = limits_.multiprocessors > 0 ? std::min(programs, limits_.multiprocessors) : programs;
    if (workgroups > limits_.maxGrid[0]) unsupported(fmt::format("{} persistent workgroups", workgroups));
    grid[0] = unsigned(workgroups), grid[1] = grid[2] = 1;
  }
  std::vector<uint64_t> buffers(c.params.size(), 0);  // by parameter
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
    buffers.at(p.param) = l.prints.back()->address();
  }
  if (c.faultParam >= 0) {
    l.faults = scratch(l, gpu::kFaultWords * sizeof(int32_t));
    buffers.at(size_t(c.faultParam)) = l.faults->address();
  }
  ParameterValues values(c, args, buffers, [&](const gpu::KParam& map, size_t tensor) {
    return encodeTensorMap(map, args.tensors[tensor], l.tensors.at(tensor).address);
  });
  if (!timer_) timer_ = makeTimer();
  bool timed = timer_->recordStart(l.stream);
  launchKernel(*compiled.module, c, grid, values.pointers(), l.stream);
  if (timed && timer_->recordEnd(l.stream)) l.timer = timer_.get();  // from here on nothing may throw: the kernel runs
  return launched;
}

// Waits for the kernel, writes back what it stored (a device copy is marked newer instead),
// prints its prints; then raises a fault it reported.
LaunchReport DriverContext::Launched::finish(const ir::Kernel& kernel, const LaunchArgs& args, LaunchReport report) {
  if (!compiled) return report;
  context_.synchronize(stream);  // the kernel's own failure first
  std::array<int32_t, gpu::kFaultWords> words{};
  if (faults) faults->download(words.data(), sizeof words, stream);
  for (size_t n = 0; n < tensors.size(); ++n) {
    const Binding& b = tensors[n];
    if (!compiled->storedTensors.at(n)) continue;
    if (b.copy) b.copy->deviceWrote();
    else b.memory->download(b.host, b.bytes, stream);
  }
  std::vector<std::vector<std::byte>> printed;
  for (DeviceBuffer* m : prints) {
    printed.emplace_back(m->size());
    m->download(printed.back().data(), m->size(), stream);
  }
  if (stream) context_.synchronize(stream);  // copies on a stream may land after they return
  if (!prints.empty()) printBuffers(compiled->binary.prints, {printed.begin(), printed.end()}, args.grid, args.print);
  if (timer) report.kernelMs = timer->ms();
  throwGpuFaults(kernel, words, args.grid, report.device);
  return report;
}

}  // namespace tj
