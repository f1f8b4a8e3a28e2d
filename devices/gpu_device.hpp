// What the GPU devices share: one device object per name, one launch at a time, the launch
// skeleton (check the arguments, load the kernel once, start it, run it on the host instead
// when the device cannot, finish it) and device copies (Tensor::on). A backend supplies its
// GpuContext (driver context: load and start), its LoadedKernel and its StartedLaunch.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "devices/device.hpp"

namespace tj {

// Programs' print output beyond this runs on the host instead (which prints as it goes).
constexpr size_t kMaxGpuPrintBytes = size_t{256} << 20;

// Elements from a view's first element to its last, inclusive: what a launch copies to the
// device. Throws Unsupported("<device>: unsupported: negative strides").
int64_t viewExtent(const TensorArg& t, std::string_view device);

// A kernel running on a GPU, nothing written to its arguments yet.
class StartedLaunch {
 public:
  virtual ~StartedLaunch() = default;
  // Waits for the kernel, writes back what it stored, prints its prints and raises its
  // faults; returns `report` completed. Errors propagate: the kernel ran, and running it
  // again elsewhere could apply it twice.
  virtual LaunchReport finish(const ir::Kernel& kernel, const LaunchArgs& args, LaunchReport report) = 0;
};

// A kernel loaded into a GPU context (a module, a pipeline) with its launch interface.
class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
};

// A GPU device once set up: its driver context, where kernels load and run. It owns the
// device copies made from it (DeviceCopy::owner). Its errors: Unsupported for what the device
// cannot run, before anything was written to the arguments (the host runs it instead);
// SubmittedError once the device may have written them; InternalError for a bug.
class GpuContext {
 public:
  virtual ~GpuContext() = default;
  // The code's target, as reports name it ("sm_90", "vulkan").
  virtual std::string targetName() const = 0;
  // The GPU's model and its target ("NVIDIA H200-sm_90a"): Device::identity's part.
  virtual std::string model() const = 0;
  // What of a launch besides its kernel the compiled code depends on ("" where nothing does):
  // with the kernel's hash, the key its loaded kernel is kept under.
  virtual std::string launchFacts(const LaunchArgs&) const { return {}; }
  // The kernel's artifact, from the artifact cache or compiled now (and written there),
  // loaded into the driver; fills `report`'s cache and compile facts.
  virtual std::unique_ptr<LoadedKernel> load(const ir::Kernel& kernel, uint64_t hash, const LaunchArgs& args,
                                             LaunchReport& report) = 0;
  // Binds the arguments and starts the kernel `loaded` (one of this context's).
  virtual std::unique_ptr<StartedLaunch> start(const LoadedKernel& loaded, const ir::Kernel& kernel,
                                               const LaunchArgs& args, LaunchReport& report) = 0;
  // Room for a copy of `bytes` host bytes in device memory; throws Unsupported where there is none.
  virtual std::unique_ptr<DeviceCopy> copyOf(size_t bytes) = 0;
  // A copy over device memory another library allocated (Device::adopt); throws Unsupported
  // where the context cannot use it.
  virtual std::unique_ptr<DeviceCopy> adopt(uint64_t address, size_t bytes);

 protected:
  const void* owner() const { return this; }  // of this context's device copies
};

class GpuDevice : public Device {
 public:
  std::string name() const final { return name_; }
  // The name and the context's model, or the name alone where the device cannot open (its
  // launches then run on the host, and the tuner keeps nothing).
  std::string identity() final;
  LaunchReport launch(const ir::Kernel& kernel, const LaunchArgs& args) final;
  std::unique_ptr<DeviceCopy> copyOf(size_t bytes, std::string& why) final;
  std::unique_ptr<DeviceCopy> adopt(uint64_t address, size_t bytes, std::string& why) final;
  bool holds(const DeviceCopy& copy) const final;

 protected:
  explicit GpuDevice(std::string name) : name_(std::move(name)) {}  // "<kind>" or "<kind>:N"
  // Sets the device up: throws Error where it cannot be (no driver, no such device), which
  // is decided once and makes its launches run on the host.
  virtual std::unique_ptr<GpuContext> open() = 0;

 private:
  using KernelKey = std::pair<uint64_t, std::string>;  // semantic hash, launch facts

  GpuContext& context();
  // `make(context())`, or null with `why` set where the device cannot open or refuses.
  std::unique_ptr<DeviceCopy> copyFrom(const std::function<std::unique_ptr<DeviceCopy>(GpuContext&)>& make,
                                       std::string& why);
  const LoadedKernel& loadOnce(GpuContext& c, const ir::Kernel& kernel, const LaunchArgs& args, LaunchReport& report);

  std::string name_;
  std::string unusable_;  // why open() failed, once it did
  mutable std::mutex mutex_;  // one launch at a time: the driver contexts are single-threaded
  std::unique_ptr<GpuContext> context_;
  // Each kernel loaded, or refused, once: declared after the context, so destroyed before it.
  std::map<KernelKey, std::unique_ptr<LoadedKernel>> loaded_;
  std::map<KernelKey, std::string> refused_;  // kernels the device cannot run, and why
};

// The process's one `D` named `name`, created on first use and never destroyed (at exit the
// driver may be gone before its kernels). "<kind>:0" is "<kind>": one object, so that a tensor
// resident on either (a DLPack import names the index) is resident on both.
template <class D>
D& deviceNamed(const std::string& name) {
  static std::mutex mutex;
  static auto* devices = new std::map<std::string, D*>;
  std::string canonical = name.ends_with(":0") ? name.substr(0, name.size() - 2) : name;
  std::lock_guard lock(mutex);
  D*& d = (*devices)[canonical];
  if (!d) d = new D(canonical);
  return *d;
}

}  // namespace tj
