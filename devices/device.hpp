// What a device needs to run a kernel: raw tensor arguments and a grid.
// Devices see only IR and these plain structs, never the DSL's classes.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"
#include "jit/artifact_cache.hpp"

namespace tj {

// A copy of a tensor storage's bytes that a device keeps (Tensor::on); `owner` names
// the device state it belongs to, which outlives it.
class DeviceCopy {
 public:
  explicit DeviceCopy(const void* owner) : owner(owner) {}
  virtual ~DeviceCopy() = default;
  virtual void upload(std::span<const std::byte> host) = 0;
  virtual void download(std::span<std::byte> host) = 0;
  // Where other libraries reach the copy (DLPack): its device's name ("cuda:1") and its
  // address there; an empty name for a copy only its device can use.
  struct Address {
    std::string device;
    uint64_t address = 0;
  };
  virtual Address address() const { return {}; }
  const void* const owner;
};

// A tensor storage with a device copy: its host bytes, the copy and which side is
// newer. Every view of the storage shares it. Its transfers are thread-safe; replacing
// it (Tensor::on to another device) is not.
class Residency {
 public:
  // Which side holds the tensor's values when it is made: a new copy holds nothing yet; a copy
  // over memory another library allocated (Device::adopt) holds them, and stays their home:
  // what the host side writes must reach it (publish).
  enum class Home { host, device };
  Residency(std::span<std::byte> host, std::unique_ptr<DeviceCopy> copy, Home home = Home::host)
      : host_(host), copy_(std::move(copy)), home_(home), hostStale_(home == Home::device),
        deviceStale_(home == Home::host) {}
  std::span<std::byte> host() const { return host_; }
  const DeviceCopy& copy() const { return *copy_; }
  Home home() const { return home_; }
  // Makes the host bytes current (downloading a newer copy); after `willWrite` the copy is stale.
  void toHost(bool willWrite);
  // Makes the copy current (uploading newer host bytes) and returns it.
  DeviceCopy& toDevice();
  // After a device wrote the copy: the host bytes are stale.
  void deviceWrote();
  // Where the copy is the values' home: uploads what the host side wrote since (a launch on
  // another device, setItem), so that the library that owns the memory sees it.
  void publish();

 private:
  std::mutex mutex_;
  std::span<std::byte> host_;
  std::unique_ptr<DeviceCopy> copy_;
  Home home_;
  bool hostStale_, deviceStale_;
};

// Host-device copies since the process started, for tests and logs.
struct TransferCounts {
  int64_t uploads = 0, downloads = 0;
};
TransferCounts transferCounts();

// Which elements of a storage made by Tensor::empty something has written (bit i: the
// storage's element i, of `elementBytes` from `base`), kept only while some may not be:
// the sanitizer reports reads of the others.
struct WrittenElements {
  const std::byte* base;
  int elementBytes;
  std::vector<bool> bits;
  bool all = false;  // a launch that keeps no record wrote to the storage: assume every element
};

// One tensor argument: data pointer, element type, sizes and strides (in
// elements). Matches the kernel's TensorParam of the same position. `residency`
// is set for a tensor with a device copy; `data` then points into its host bytes,
// which are current only once checkLaunchArgs ran.
struct TensorArg {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  Residency* residency = nullptr;
  std::shared_ptr<WrittenElements> written;  // null: every element holds a written value
  bool readOnly = false;  // a kernel that stores to it is refused (a DLPack import marked so)
};

// Receives `p.print` output: the label, the program's grid index and the
// tile's text. The default writes to stdout.
using PrintSink = std::function<void(const std::string& line)>;

// One scalar argument, matching the kernel's ScalarParam of the same position:
// `i` for an i64 parameter, `f` for a float one (rounded to its dtype by the kernel).
struct ScalarArg {
  int64_t i = 0;
  double f = 0;
};

struct LaunchArgs {
  std::span<const TensorArg> tensors;
  std::span<const int64_t> grid;
  PrintSink print;  // empty: stdout
  std::span<const ScalarArg> scalars = {};
  uint64_t kernelHash = 0;  // ir::semanticHash(kernel) when the caller has it; 0: the device computes it
  // A CUDA or HIP stream (CUstream, hipStream_t) to order the launch and its copies on; null: the
  // legacy default stream. Other devices ignore it.
  void* stream = nullptr;
};

// Checks a launch against the kernel's signature before any program runs: the
// grid's rank and sizes, each tensor's dtype, rank, sizes and data, and the
// number of scalars, and that no tensor the kernel stores to is read-only or has a zero stride
// on an axis of more than one element (its elements overlap). Throws
// Error("<device>: kernel '<name>': ...").
// Every device calls it first: it also makes the host bytes of each tensor with
// a device copy current, except copies of `owner`, on which that device runs; the
// copies of tensors the kernel stores to become stale.
void checkLaunchArgs(const ir::Kernel& kernel, const LaunchArgs& args, std::string_view device = "launch",
                     const void* owner = nullptr);

// What is wrong with the tensors `kernel` stores to, or "": one is read-only (a DLPack import
// marked so) or has a zero stride on an axis of more than one element (its elements overlap).
// checkLaunchArgs refuses such a launch; run() says so first, at the user's line.
std::string storedTensorProblem(const ir::Kernel& kernel, std::span<const TensorArg> tensors);

// The error a kernel's integer division or remainder by zero raises on a compiled device:
// devices learn only that one happened, so it names every integer division of the kernel
// (the interpreter names the one).
[[noreturn]] void throwDivisionByZero(const ir::Kernel& kernel, std::string_view device);
// After a GPU launch: the Error of a fault the kernel reported in its fault words
// (gpu::FaultWord: division by zero, a failed check), if any. The loop limit is the device's.
void throwGpuFaults(const ir::Kernel& kernel, std::span<const int32_t> faults, std::span<const int64_t> grid,
                    std::string_view device);
// The Error of a failed p.check: check number `check` (in the kernel's op order) was false in
// the program of row-major id `program` at the row-major element `element` of its condition.
[[noreturn]] void throwCheckFailed(const ir::Kernel& kernel, int64_t check, int64_t program,
                                   std::span<const int64_t> grid, int64_t element, std::string_view device);

// What one launch did: the device that ran its programs and, for a compiled kernel, where
// the kernel came from and what it cost. Device::launch returns it; run() hands it to
// every LaunchWatch of the thread.
struct LaunchReport {
  std::string device{};          // the device that ran the programs: "cpu", "interp", "vulkan:1"...
  std::string fallbackReason{};  // why that is not the device launched on; "" when it is
  // The rest is the launched-on device's: where its kernel (or its refusal of the kernel)
  // came from, and the milliseconds loading (from disk) or building (a miss) took.
  jit::CacheSource cache = jit::CacheSource::memory;
  double compileMs = 0;
  double driverMs = 0;   // the driver's compile of the code (a Vulkan pipeline), when not from memory
  double kernelMs = -1;  // the kernel's time on the GPU, from events around it; -1: not timed
  std::string target{};  // the GPU code's target ("sm_90", "vulkan"); "" for the host
  int64_t threadsPerProgram = 0;                  // a GPU kernel's workgroup; 0 on the host
  uint32_t requiredSubgroupSize = 0;              // what the pipeline asks the driver for; 0: nothing
  bool fullSubgroups = false;                     // whether it asks for full subgroups
  std::shared_ptr<const std::vector<uint32_t>> spirv{};  // the module a Vulkan launch dispatched
  bool fellBack() const { return !fallbackReason.empty(); }
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;  // "interp", "cpu", "vulkan", ...
  // What a measurement here holds for (an autotune file's name): the name, and for a GPU its
  // model and the target its kernels compile for, so two kinds of GPU never share a tuning.
  virtual std::string identity() { return name(); }
  // Runs the kernel here, or where this device cannot (Unsupported) and is a GPU, on the host,
  // the reason in the report. Throws Error for bad arguments and InternalError for a bug.
  virtual LaunchReport launch(const ir::Kernel& kernel, const LaunchArgs& args) = 0;
  // Room on this device for a copy of `bytes` host bytes (Tensor::on); null, with
  // `why` set, where the device keeps tensors in host memory.
  virtual std::unique_ptr<DeviceCopy> copyOf(size_t bytes, std::string& why);
  // Whether `copy` is one of this device's (Tensor::on then has nothing to do).
  virtual bool holds(const DeviceCopy& copy) const;
  // A copy over `bytes` bytes of this device's memory at `address`, which another library
  // allocated and frees (a DLPack import): never freed here. Null, with `why` set, where this
  // device cannot use such memory.
  virtual std::unique_ptr<DeviceCopy> adopt(uint64_t address, size_t bytes, std::string& why);
};

// A scalar argument as a GPU kernel receives it, in 64 bits: an f64 as its bits, f32/f16/bf16
// as the f32 bits in the low word (rounded to odd for f16/bf16, so the device's rounding to
// them is exact), integers as i64.
int64_t scalarSlot(DType dtype, const ScalarArg& value);

// A failure after a kernel reached the device: it may have written its arguments, so the
// launch must not run again elsewhere.
class SubmittedError : public Error {
 public:
  using Error::Error;
};

// Device by name ("interp", ...). An empty name means $TILEJIT_DEVICE, else the
// best available device. Throws Error listing the known devices for a bad name, and the
// devices of the kind for an index past them ("cpu:7"; "vulkan:N" and "cuda:N" where the
// driver loads: without it they run on the CPU, saying why).
Device& selectDevice(const std::string& name = "");
// The N of "<kind>" (0) or "<kind>:N"; throws Error for anything else.
uint32_t deviceIndex(std::string_view name, std::string_view kind);
std::vector<std::string> availableDevices();

// The device that runs what a GPU device cannot: the CPU where LLVM targets the host,
// else the interpreter.
Device& hostDevice();

// Runs on hostDevice() a launch that `report.device` cannot run, with a warning naming the
// reason (once per device, kernel and reason); returns `report` saying so. Only for
// failures before anything was written to the arguments.
LaunchReport runOnHostInstead(LaunchReport report, const ir::Kernel& kernel, const LaunchArgs& args,
                              const std::string& reason);

}  // namespace tj
