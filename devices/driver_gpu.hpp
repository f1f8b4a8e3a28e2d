// What the CUDA and HIP devices share: a GPU behind a driver API of flat device addresses
// (cuMemAlloc, hipMalloc), kernels loaded from a binary image (a cubin, a code object) and
// launched with one pointer per parameter. The backend supplies its driver's calls and its
// compiler (DriverContext's virtuals); binding tensors to device memory, the parameters'
// values, the disk cache of images, writing results back, prints, faults and timing are here.
//
// A tensor with a copy on the device (Tensor::on) is used in place and stays there after the
// kernel stores to it; any other tensor is copied to device memory for the launch and what the
// kernel stored is copied back.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "devices/gpu_device.hpp"
#include "jit/artifact_cache.hpp"
#include "jit/timing.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/kernel_ir.hpp"

namespace tj {

// A compiled kernel's image (a cubin, a code object) with the kernel IR's launch interface
// (parameters, prints, fault flag, threads, workgroup memory), so that a kernel found on disk
// is loaded and launched without layout inference, lowering or a compiler.
struct DriverBinary {
  std::vector<gpu::KParam> params;  // as the kernel IR's, without names
  std::vector<gpu::KPrint> prints;  // the print buffers' parameters and what they hold
  int64_t faultParam = -1;          // the fault words' parameter, or -1
  int64_t workgroupSize = 1;
  int64_t sharedBytes = 0;  // the kernel's workgroup memory
  std::string entry;        // the kernel's name in the image
  std::vector<char> image;
};

// The cache payload of `binary`, in encoding `format` (each backend's own number, bumped
// whenever what it records changes).
std::vector<char> encodeDriverBinary(const DriverBinary& binary, uint32_t format);
// Throws jit::CorruptCacheEntry("the <what> ...") for bytes encodeDriverBinary did not make
// in `format`.
DriverBinary decodeDriverBinary(std::span<const char> bytes, const char* what, uint32_t format);

// Launch facts as keys write them: one '1' (16-byte accesses allowed) or '0' per tensor.
std::string vectorFactsText(const std::vector<bool>& vectorTensors);

// The bytes a driver passes for a parameter, as lower/llvm_gpu declares it: 128 for a tensor
// map (a CUtensorMap), 4 for a float scalar other than f64 (a float), else 8 (a pointer, an
// i64 or a double).
size_t parameterBytes(const gpu::KParam& param);

// One allocation of device memory, freed when destroyed. Its transfers and zeroing are
// ordered on `stream` (a CUstream, a hipStream_t), or synchronous where it is null.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual uint64_t address() const = 0;
  virtual size_t size() const = 0;
  virtual void upload(const void* host, size_t bytes, void* stream) = 0;
  virtual void download(void* host, size_t bytes, void* stream) const = 0;
  virtual void zero(void* stream) = 0;
};

// A DeviceBuffer of a driver's memory class (an allocation with address(), size(), and
// upload, download and zero on a stream of its type Stream), made by its constructor from
// `args` (a size, or an address and a size for memory someone else allocated).
template <class Memory>
class DeviceBufferOf final : public DeviceBuffer {
 public:
  template <class... Args>
  explicit DeviceBufferOf(Args... args) : memory_(args...) {}
  uint64_t address() const override { return memory_.address(); }
  size_t size() const override { return memory_.size(); }
  void upload(const void* host, size_t bytes, void* stream) override { memory_.upload(host, bytes, as(stream)); }
  void download(void* host, size_t bytes, void* stream) const override { memory_.download(host, bytes, as(stream)); }
  void zero(void* stream) override { memory_.zero(as(stream)); }

 private:
  static typename Memory::Stream as(void* stream) { return static_cast<typename Memory::Stream>(stream); }
  Memory memory_;
};

// A driver's module loaded from a DriverBinary's image, with the kernel to launch.
class DriverModule {
 public:
  virtual ~DriverModule() = default;
};

// Two events around a launch, recorded on its stream. Timing is best effort: a failed record
// only loses the time.
class LaunchTimer {
 public:
  virtual ~LaunchTimer() = default;
  virtual bool recordStart(void* stream) = 0;
  virtual bool recordEnd(void* stream) = 0;
  // Milliseconds on the GPU between the two records, both completed; -1 where unknown.
  virtual double ms() const = 0;
};

// A LaunchTimer of two of a driver's events (record(stream), msSince(start)).
template <class Event>
class LaunchTimerOf final : public LaunchTimer {
 public:
  bool recordStart(void* stream) override { return start_.record(static_cast<typename Event::Stream>(stream)); }
  bool recordEnd(void* stream) override { return end_.record(static_cast<typename Event::Stream>(stream)); }
  double ms() const override { return end_.msSince(start_); }

 private:
  Event start_, end_;
};

// A GPU context of a driver with flat device addresses: the launch skeleton over the
// backend's calls below. Every call of the backend throws Unsupported where the driver
// refuses (before the kernel started, the host runs it instead).
class DriverContext : public GpuContext {
 public:
  // The code depends on which tensors allow 16-byte accesses: one '0' or '1' each.
  std::string launchFacts(const LaunchArgs& args) const final;
  std::unique_ptr<LoadedKernel> load(const ir::Kernel& kernel, uint64_t hash, const LaunchArgs& args,
                                     LaunchReport& report) final;
  std::unique_ptr<StartedLaunch> start(const LoadedKernel& loaded, const ir::Kernel& kernel, const LaunchArgs& args,
                                       LaunchReport& report) final;
  std::unique_ptr<DeviceCopy> copyOf(size_t bytes) final;
  std::unique_ptr<DeviceCopy> adopt(uint64_t address, size_t bytes) final;

  // Makes this context current for the calling thread (any thread may move a device copy's
  // bytes); throws where the driver refuses.
  virtual void makeCurrent() = 0;
  // The same, for destructors: errors are dropped.
  virtual void makeCurrentQuietly() noexcept = 0;
  // Waits for the work queued on `stream` (null: all of the context's).
  virtual void synchronize(void* stream) = 0;

 protected:
  struct Limits {
    int64_t maxThreadsPerBlock = 1024;
    int64_t maxGrid[3] = {1, 1, 1};
    int64_t multiprocessors = 0;  // a persistent kernel's workgroups; 0: unknown (one per program)
  };
  // A driver's device facts (maxThreadsPerBlock, maxGrid[3], multiprocessors) as Limits.
  template <class DeviceInfo>
  static Limits limitsOf(const DeviceInfo& d) {
    return {.maxThreadsPerBlock = d.maxThreadsPerBlock, .maxGrid = {d.maxGrid[0], d.maxGrid[1], d.maxGrid[2]},
            .multiprocessors = d.multiprocessors};
  }
  // What a backend's compiler makes of a kernel: its image and the kernel's name in it.
  struct Image {
    std::string entry;
    std::vector<char> bytes;
  };
  // `kind` names the device in messages ("cuda", "hip"), `index` which of its kind it is;
  // images are cached under `cacheDir`.
  DriverContext(std::string kind, uint32_t index, layout::Target target, Limits limits,
                std::filesystem::path cacheDir);

  const layout::Target& target() const { return target_; }
  [[noreturn]] void unsupported(const std::string& what) const;  // "<kind>: unsupported: <what>"

  virtual std::unique_ptr<DeviceBuffer> allocate(size_t bytes) = 0;  // at least one byte
  // The `bytes` of device memory at `address`, which someone else allocated and frees.
  virtual std::unique_ptr<DeviceBuffer> borrow(uint64_t address, size_t bytes) = 0;
  // The cache key of the image of a kernel (by its semantic hash) with these launch facts.
  virtual jit::ArtifactKey imageKey(uint64_t irHash, const std::vector<bool>& vectorTensors) const = 0;
  virtual std::vector<char> encode(const DriverBinary& binary) const = 0;
  virtual DriverBinary decode(std::span<const char> bytes) const = 0;
  // `f`'s image, compiled for this device: throws Unsupported for what it cannot run.
  virtual Image compile(const gpu::KernelFunction& f) = 0;
  // The binary's image loaded into the driver (its workgroup memory opted into where needed).
  virtual std::unique_ptr<DriverModule> loadModule(const DriverBinary& binary) = 0;
  // Starts `module`'s kernel on `grid` with one pointer per parameter, on `stream` (null: the
  // legacy default stream).
  virtual void launchKernel(const DriverModule& module, const DriverBinary& binary, const unsigned grid[3],
                            void** parameters, void* stream) = 0;
  virtual std::unique_ptr<LaunchTimer> makeTimer() = 0;
  // A tensor-map parameter's 128 bytes for tensor `t` at device `address`; only a driver with
  // tensor maps (CUDA) has them.
  virtual std::array<std::byte, 128> encodeTensorMap(const gpu::KParam& map, const TensorArg& t, uint64_t address);

 private:
  struct Compiled;
  class Launched;
  struct Binding;

  std::vector<bool> vectorFacts(const LaunchArgs& args) const;
  Compiled build(const ir::Kernel& kernel, uint64_t hash, const std::vector<bool>& vectorTensors,
                 LaunchReport& report);
  DriverBinary compileKernel(const ir::Kernel& kernel, const std::vector<bool>& vectorTensors);
  void checkInterface(const DriverBinary& b, const ir::Kernel& kernel) const;
  Compiled loadBinary(const ir::Kernel& kernel, DriverBinary binary, jit::CacheSource source,
                      jit::Clock::time_point start, LaunchReport& report);
  Binding bind(const TensorArg& t, Launched& l);
  uint64_t residentAddress(const TensorArg& t) const;
  DeviceBuffer* scratch(Launched& l, size_t bytes);

  std::string kind_;
  std::string name_;  // the device's, for its copies: "<kind>:<index>"
  layout::Target target_;
  Limits limits_;
  jit::ArtifactStore store_;  // of images
  std::unique_ptr<LaunchTimer> timer_;  // around the last launch
};

}  // namespace tj
