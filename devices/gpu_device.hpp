// What the GPU devices share: one device object per name, one launch at a time, the launch
// skeleton (check the arguments, start the kernel, run it on the host instead when the
// device cannot start it, finish it) and device copies (Tensor::on). A backend supplies its
// GpuContext (driver context, loaded kernels) and its StartedLaunch.
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

// A GPU device once set up: its driver context and the kernels loaded there. It owns the
// device copies made from it (DeviceCopy::owner).
class GpuContext {
 public:
  virtual ~GpuContext() = default;
  // Compiles (or finds) the kernel, binds its arguments and starts it, filling `report`'s
  // compile facts. Throws Unsupported for what the device cannot run, before anything was
  // written to the arguments (the host runs it instead), SubmittedError once the device may
  // have written them, and InternalError for a bug.
  virtual std::unique_ptr<StartedLaunch> start(const ir::Kernel& kernel, const LaunchArgs& args,
                                               LaunchReport& report) = 0;
  // Room for a copy of `bytes` host bytes in device memory; throws Unsupported where there is none.
  virtual std::unique_ptr<DeviceCopy> copyOf(size_t bytes) = 0;

 protected:
  const void* owner() const { return this; }  // of this context's device copies
};

class GpuDevice : public Device {
 public:
  std::string name() const final { return name_; }
  LaunchReport launch(const ir::Kernel& kernel, const LaunchArgs& args) final;
  std::unique_ptr<DeviceCopy> copyOf(size_t bytes, std::string& why) final;
  bool holds(const DeviceCopy& copy) const final;

 protected:
  explicit GpuDevice(std::string name) : name_(std::move(name)) {}  // "<kind>" or "<kind>:N"
  // Sets the device up: throws Error where it cannot be (no driver, no such device), which
  // is decided once and makes its launches run on the host.
  virtual std::unique_ptr<GpuContext> open() = 0;

 private:
  GpuContext& context();

  std::string name_;
  std::string unusable_;  // why open() failed, once it did
  mutable std::mutex mutex_;  // one launch at a time: the driver contexts are single-threaded
  std::unique_ptr<GpuContext> context_;
};

// The process's one `D` named `name`, created on first use and never destroyed (at exit the
// driver may be gone before its kernels).
template <class D>
D& deviceNamed(const std::string& name) {
  static std::mutex mutex;
  static auto* devices = new std::map<std::string, D*>;
  std::lock_guard lock(mutex);
  D*& d = (*devices)[name];
  if (!d) d = new D(name);
  return *d;
}

}  // namespace tj
