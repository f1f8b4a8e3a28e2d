#include "devices/gpu_device.hpp"

#include "ir/passes.hpp"

namespace tj {

int64_t viewExtent(const TensorArg& t, std::string_view device) {
  int64_t last = 0;
  for (size_t a = 0; a < t.shape.size(); ++a) {
    if (t.shape[a] == 0) return 0;
    if (t.strides[a] < 0) throw Unsupported(std::string(device) + ": unsupported: negative strides");
    last += (t.shape[a] - 1) * t.strides[a];
  }
  return last + 1;
}

LaunchReport GpuDevice::launch(const ir::Kernel& kernel, const LaunchArgs& args) {
  std::lock_guard lock(mutex_);
  checkLaunchArgs(kernel, args, std::string_view(name_).substr(0, name_.find(':')), context_.get());
  LaunchReport report{.device = name_};
  std::unique_ptr<StartedLaunch> started;
  try {
    GpuContext& c = context();
    report.target = c.targetName();
    started = c.start(loadOnce(c, kernel, args, report), kernel, args, report);
  } catch (const Unsupported& e) {  // nothing was written to the arguments yet: the host runs them as they are
    return runOnHostInstead(std::move(report), kernel, args, e.what());
  }
  return started->finish(kernel, args, std::move(report));
}

const LoadedKernel& GpuDevice::loadOnce(GpuContext& c, const ir::Kernel& kernel, const LaunchArgs& args,
                                        LaunchReport& report) {
  KernelKey key{args.kernelHash ? args.kernelHash : ir::semanticHash(kernel), c.launchFacts(args)};
  if (auto it = loaded_.find(key); it != loaded_.end()) return *it->second;
  if (auto it = refused_.find(key); it != refused_.end()) throw Unsupported(it->second);
  try {
    return *loaded_.emplace(key, c.load(kernel, key.first, args, report)).first->second;
  } catch (const Unsupported& e) {
    refused_.emplace(key, e.what());
    throw;
  }
}

std::string GpuDevice::identity() {
  try {
    std::lock_guard lock(mutex_);
    return name_ + "-" + context().model();
  } catch (const Unsupported&) {
    return name_;
  }
}

GpuContext& GpuDevice::context() {
  if (!unusable_.empty()) throw Unsupported(unusable_);
  if (!context_) {
    try {
      context_ = open();
    } catch (const InternalError&) {
      throw;
    } catch (const Error& e) {  // no driver, no such device, no target for it: the host runs its kernels
      unusable_ = e.what();
      throw Unsupported(unusable_);
    }
  }
  return *context_;
}

bool GpuDevice::holds(const DeviceCopy& copy) const {
  std::lock_guard lock(mutex_);
  return context_ && copy.owner == context_.get();
}

std::unique_ptr<DeviceCopy> GpuDevice::copyOf(size_t bytes, std::string& why) {
  return copyFrom([&](GpuContext& c) { return c.copyOf(bytes); }, why);
}

std::unique_ptr<DeviceCopy> GpuDevice::adopt(uint64_t address, size_t bytes, std::string& why) {
  return copyFrom([&](GpuContext& c) { return c.adopt(address, bytes); }, why);
}

std::unique_ptr<DeviceCopy> GpuDevice::copyFrom(
    const std::function<std::unique_ptr<DeviceCopy>(GpuContext&)>& make, std::string& why) {
  std::lock_guard lock(mutex_);
  try {
    return make(context());
  } catch (const Unsupported& e) {
    why = e.what();
    return nullptr;
  }
}

std::unique_ptr<DeviceCopy> GpuContext::adopt(uint64_t, size_t) {
  throw Unsupported(targetName() + ": unsupported: using device memory allocated elsewhere");
}

}  // namespace tj
