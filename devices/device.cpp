#include "devices/device.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "devices/registry.hpp"
#include "lower/gpu/kernel_ir.hpp"

namespace tj {

namespace {

// What is wrong with a tensor argument for its parameter, or "".
std::string tensorArgProblem(const ir::TensorParam& p, const TensorArg& t) {
  std::string name = "tensor '" + p.name + "'";
  if (t.dtype != p.dtype)
    return name + " is " + std::string(dtypeName(t.dtype)) + " but the kernel expects " + std::string(dtypeName(p.dtype));
  if (t.shape.size() != static_cast<size_t>(p.rank) || t.strides.size() != static_cast<size_t>(p.rank))
    return name + " has rank " + std::to_string(t.shape.size()) + " with " + std::to_string(t.strides.size()) +
           " strides but the kernel expects rank " + std::to_string(p.rank);
  if (std::ranges::any_of(t.shape, [](int64_t d) { return d < 0; })) return name + " has a negative size";
  bool empty = std::ranges::any_of(t.shape, [](int64_t d) { return d == 0; });
  if (!t.data && !empty) return name + " has no data";
  return "";
}

bool mayRefuseStores(const TensorArg& t) { return t.readOnly || std::ranges::count(t.strides, 0) > 0; }

std::atomic<int64_t> gUploads{0}, gDownloads{0};

}  // namespace

void Residency::toHost(bool willWrite) {
  std::lock_guard lock(mutex_);
  if (hostStale_) {
    copy_->download(host_);
    ++gDownloads;
  }
  hostStale_ = false;
  deviceStale_ = deviceStale_ || willWrite;
}

DeviceCopy& Residency::toDevice() {
  std::lock_guard lock(mutex_);
  if (deviceStale_) {
    copy_->upload(host_);
    ++gUploads;
  }
  deviceStale_ = false;
  return *copy_;
}

void Residency::deviceWrote() {
  std::lock_guard lock(mutex_);
  hostStale_ = true;
}

void Residency::publish() {
  if (home_ == Home::device) toDevice();
}

TransferCounts transferCounts() { return {gUploads.load(), gDownloads.load()}; }

bool Device::holds(const DeviceCopy&) const { return false; }

std::unique_ptr<DeviceCopy> Device::adopt(uint64_t, size_t, std::string& why) {
  why = "the " + name() + " device cannot use memory allocated elsewhere";
  return nullptr;
}

std::unique_ptr<DeviceCopy> Device::copyOf(size_t, std::string& why) {
  why = "the " + name() + " device computes on host memory";
  return nullptr;
}

void throwDivisionByZero(const ir::Kernel& k, std::string_view device) {
  std::string where;
  ir::forEachOp(k.body, [&](const ir::Op& op) {
    bool integerDivision = (op.code == ir::OpCode::div || op.code == ir::OpCode::rem) &&
                           !isFloat(k.type(op.results.at(0)).dtype);
    if (integerDivision && op.loc.known()) where += (where.empty() ? " (at " : ", ") + op.loc.str();
  });
  fail(SourceLoc{}, device, "kernel '" + k.name + "': integer division or remainder by zero" +
                                (where.empty() ? "" : where + ")"));
}

namespace {
// Row-major coordinates of `flat` in `shape`, as "(1, 2)".
std::string coordinates(int64_t flat, std::span<const int64_t> shape) {
  std::vector<int64_t> at(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    at[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  std::string text;
  for (int64_t x : at) text += (text.empty() ? "" : ", ") + std::to_string(x);
  return text;
}
}  // namespace

void throwCheckFailed(const ir::Kernel& k, int64_t check, int64_t program, std::span<const int64_t> grid,
                      int64_t element, std::string_view device) {
  const ir::Op* found = nullptr;
  int64_t seen = 0;
  ir::forEachOp(k.body, [&](const ir::Op& op) {
    if (op.code == ir::OpCode::check && seen++ == check) found = &op;
  });
  if (!found) fail(SourceLoc{}, device, "kernel '" + k.name + "' reported check " + std::to_string(check) + ", which it does not have");
  const ir::Type& cond = k.type(found->operands[0]);
  std::string where = cond.isScalar() ? "" : " at element [" + coordinates(element, cond.shape) + "]";
  fail(found->loc, "check", "'" + found->get(ir::attr::message) + "' is false in program (" + coordinates(program, grid) +
                                ")" + where + " of kernel '" + k.name + "' on " + std::string(device));
}

void throwGpuFaults(const ir::Kernel& k, std::span<const int32_t> faults, std::span<const int64_t> grid,
                    std::string_view device) {
  auto word = [&](gpu::FaultWord w) { return faults[size_t(w)]; };
  if (word(gpu::FaultWord::divisionByZero)) throwDivisionByZero(k, device);
  if (int32_t check = word(gpu::FaultWord::check)) {
    int64_t program = int64_t(uint32_t(word(gpu::FaultWord::checkProgramLow))) |
                      int64_t(uint32_t(word(gpu::FaultWord::checkProgramHigh))) << 32;
    throwCheckFailed(k, check - 1, program, grid, word(gpu::FaultWord::checkElement), device);
  }
}

std::string storedTensorProblem(const ir::Kernel& kernel, std::span<const TensorArg> tensors) {
  if (std::ranges::none_of(tensors, mayRefuseStores)) return "";  // nearly every launch
  std::vector<bool> stored = ir::writtenTensors(kernel);
  for (size_t i = 0; i < tensors.size() && i < stored.size(); ++i) {
    if (!stored[i]) continue;
    const TensorArg& t = tensors[i];
    std::string name = fmt::format("tensor argument {} ('{}')", i, kernel.tensors[i].name);
    if (t.readOnly) return name + " is read-only (its DLPack producer marked it so) but the kernel stores to it";
    for (size_t a = 0; a < t.shape.size(); ++a)
      if (t.strides[a] == 0 && t.shape[a] > 1)
        return fmt::format("{} has stride 0 on axis {} of size {} (a broadcast view), so the kernel's stores to it "
                           "would overlap",
                           name, a, t.shape[a]);
  }
  return "";
}

void checkLaunchArgs(const ir::Kernel& k, const LaunchArgs& args, std::string_view device, const void* owner) {
  auto bad = [&](const std::string& what) { fail(SourceLoc{}, device, "kernel '" + k.name + "': " + what); };
  if (args.grid.size() != static_cast<size_t>(k.gridRank))
    bad("the grid has " + std::to_string(args.grid.size()) + " sizes but the kernel's grid rank is " +
        std::to_string(k.gridRank));
  for (int64_t g : args.grid)
    if (g < 0) bad("negative grid size " + std::to_string(g));
  if (args.tensors.size() != k.tensors.size())
    bad("got " + std::to_string(args.tensors.size()) + " tensors but the kernel takes " +
        std::to_string(k.tensors.size()));
  for (size_t i = 0; i < k.tensors.size(); ++i)
    if (std::string problem = tensorArgProblem(k.tensors[i], args.tensors[i]); !problem.empty()) bad(problem);
  if (args.scalars.size() != k.scalars.size())
    bad("got " + std::to_string(args.scalars.size()) + " scalars but the kernel takes " +
        std::to_string(k.scalars.size()));
  if (std::string problem = storedTensorProblem(k, args.tensors); !problem.empty()) bad(problem);
  if (std::ranges::none_of(args.tensors, &TensorArg::residency)) return;  // launches without device copies
  std::vector<bool> stored = ir::writtenTensors(k);
  for (size_t i = 0; i < args.tensors.size(); ++i) {
    Residency* r = args.tensors[i].residency;
    if (r && r->copy().owner != owner) r->toHost(stored[i]);  // a tensor only read stays current there
  }
}

std::vector<std::string> availableDevices() {
  std::vector<std::string> names;
  for (const DeviceKind& kind : deviceKinds())
    if (kind.unavailableReason().empty()) names.push_back(kind.name);
  return names;
}

namespace {
// kind.devices(), listed once per process: the runtimes enumerate their devices once.
const std::vector<std::string>& devicesOf(const DeviceKind& kind) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<std::string>> lists;
  std::lock_guard lock(mutex);
  auto [it, added] = lists.try_emplace(kind.name);
  if (added) it->second = kind.devices();
  return it->second;
}

// Throws where `name` asks for a device past those of its kind, naming the ones there are.
void requireDevice(const std::string& name, uint32_t index, const std::vector<std::string>& existing) {
  if (index < existing.size()) return;
  std::string list;
  for (const std::string& e : existing) list += (list.empty() ? "" : ", ") + e;
  throw Error(fmt::format("device: no device '{}'; {}: {}", name, existing.size() == 1 ? "there is one" : "there are",
                          list));
}

// Any name of no kind is an Error listing the known ones.
[[noreturn]] void unknownDevice(const std::string& name) {
  std::string known;
  for (const DeviceKind& kind : deviceKinds()) known += (known.empty() ? "" : ", ") + kind.name;
  throw Error("device: unknown device '" + name + "'; known devices: " + known);
}
}  // namespace

uint32_t deviceIndex(std::string_view name, std::string_view kind) {
  if (name == kind) return 0;
  std::string_view digits = name.substr(std::min(name.size(), kind.size() + 1));
  bool ok = name.starts_with(kind) && name.size() > kind.size() && name[kind.size()] == ':' && !digits.empty() &&
            digits.size() < 6 && std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; });
  if (!ok) throw Error(fmt::format("device: '{}' is not '{}' or '{}:N'", name, kind, kind));
  return static_cast<uint32_t>(std::stoul(std::string(digits)));
}

Device& hostDevice() {
  static Device& host = [&]() -> Device& {
    for (const DeviceKind& kind : deviceKinds())  // the first on the host that runs here: cpu, else interp
      if (!kind.fallsBackToHost && kind.unavailableReason().empty()) return kind.open(kind.name);
    throw Error("device: no host device is registered");
  }();
  return host;
}

LaunchReport runOnHostInstead(LaunchReport report, const ir::Kernel& kernel, const LaunchArgs& args,
                              const std::string& reason) {
  Device& host = hostDevice();
  if (firstTime(report.device + " fallback of " + kernel.name + ": " + reason))
    spdlog::warn("tilejit: kernel '{}' runs on {} instead of {}: {}", kernel.name, host.name(), report.device, reason);
  host.launch(kernel, args);
  report.device = host.name();
  report.fallbackReason = reason;
  return report;
}

Device& selectDevice(const std::string& requested) {
  std::string name = requested;
  if (name.empty()) {
    const char* env = std::getenv("TILEJIT_DEVICE");
    name = env ? env : "";
  }
  if (name.empty()) return hostDevice();
  const DeviceKind* kind = findDeviceKind(name);
  if (!kind) unknownDevice(name);
  uint32_t index = deviceIndex(name, kind->name);
  // A GPU kind's device 0 exists wherever its driver loads (elsewhere it runs kernels on the
  // host, saying why): only others are looked up, and only where the driver loads.
  if (kind->fallsBackToHost) {
    if (index > 0 && !devicesOf(*kind).empty()) requireDevice(name, index, devicesOf(*kind));
  } else {
    requireDevice(name, index, devicesOf(*kind));
    if (std::string why = kind->unavailableReason(); !why.empty())
      throw Error("device: the " + kind->name + " device cannot run here: " + why);
  }
  return kind->open(name);
}

int64_t scalarSlot(DType t, const ScalarArg& s) {
  if (t == DType::f64) return std::bit_cast<int64_t>(s.f);
  if (!isFloat(t)) return s.i;
  float f = float(s.f);
  uint32_t bits = std::bit_cast<uint32_t>(f);
  // f16 and bf16 round again on the device; f32 rounded to odd keeps that second rounding exact.
  bool inexact = !std::isnan(s.f) && double(f) != s.f;
  if (t != DType::f32 && inexact && !(bits & 1)) bits += std::fabs(double(f)) > std::fabs(s.f) ? -1 : 1;
  return int64_t(bits);
}

}  // namespace tj
