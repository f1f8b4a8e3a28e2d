#include "devices/cpu/cpu_device.hpp"

#include <algorithm>
#include <bit>
#include <iostream>
#include <mutex>

#include "devices/cpu/block_copy.hpp"
#include "devices/cpu/launch_workspace.hpp"
#include "devices/interp/values.hpp"
#include "ir/passes.hpp"
#include "jit/cpu_compiler.hpp"
#include "jit/cpu_target.hpp"

namespace tj::cpu {

namespace {

// The ABI's fixed-size arrays bound the ranks a CPU kernel can take.
void checkAbiLimits(const ir::Kernel& k) {
  auto bad = [&](const std::string& what) { fail(SourceLoc{}, "cpu", "kernel '" + k.name + "': " + what); };
  if (k.gridRank > kMaxGridRank)
    bad("grid rank " + std::to_string(k.gridRank) + " exceeds the CPU limit of " + std::to_string(kMaxGridRank));
  for (const ir::TensorParam& p : k.tensors)
    if (p.rank > kMaxRank)
      bad("tensor '" + p.name + "' has rank " + std::to_string(p.rank) + "; the CPU device supports up to " +
          std::to_string(kMaxRank));
}

// KernelArgs::scalars: an integer parameter's value, or a float one's f64 bits.
std::vector<int64_t> scalarSlots(const ir::Kernel& k, std::span<const ScalarArg> args) {
  std::vector<int64_t> slots;
  slots.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    slots.push_back(isFloat(k.scalars[i].dtype) ? std::bit_cast<int64_t>(args[i].f) : args[i].i);
  return slots;
}

TensorDesc descriptor(const TensorArg& t) {
  TensorDesc d{t.data, {1, 1, 1, 1}, {0, 0, 0, 0}};
  std::ranges::copy(t.shape, d.shape);
  std::ranges::copy(t.strides, d.strides);
  return d;
}

// Where a kernel's print ops go during one launch. Programs print from many
// threads; lines are written whole, one at a time.
struct Printer {
  const PrintSink& sink;
  size_t gridRank;
  std::mutex mutex{};
  std::exception_ptr error{};  // the sink's first exception, rethrown after the launch
};

// The kernels' PrintFn. Nothing may unwind into generated code.
void printTile(void* context, const char* label, int32_t dtype, int32_t rank, const int64_t* shape,
               const void* data, const int64_t* programId) noexcept {
  auto& p = *static_cast<Printer*>(context);
  try {
    ir::Type type{static_cast<DType>(dtype), ir::Shape(shape, shape + rank)};
    std::string line = interp::printLine(label, {programId, p.gridRank},
                                         interp::decodeTile(type, static_cast<const std::byte*>(data)));
    std::lock_guard lock(p.mutex);
    if (p.sink) p.sink(line);
    else std::cout << line << '\n';
  } catch (...) {
    std::lock_guard lock(p.mutex);
    if (!p.error) p.error = std::current_exception();
  }
}

}  // namespace

DeviceKind deviceKind() {
  return {.name = "cpu",
          .unavailableReason = [] { return std::string(jit::hostTargetSupported() ? "" : "LLVM cannot target this host"); },
          .devices = [] { return std::vector<std::string>{"cpu:0"}; },
          .open = [](const std::string&) -> Device& { return CpuDevice::instance(); }};
}

CpuDevice& CpuDevice::instance() {
  static CpuDevice device(jit::kernelCache(), ThreadPool::global());
  return device;
}

LaunchReport CpuDevice::launch(const ir::Kernel& kernel, const LaunchArgs& args) {
  checkAbiLimits(kernel);
  checkLaunchArgs(kernel, args, "cpu");
  static const std::string options = jit::compileOptions();
  uint64_t hash = args.kernelHash ? args.kernelHash : ir::semanticHash(kernel);
  jit::ArtifactKey key{jit::ArtifactKind::cpuObject, hash, jit::hostTarget().deviceFeatures, options};
  jit::CacheLookup found = cache_.lookup(kernel, key);
  LaunchReport report{.device = name(), .cache = found.source,
                      .compileMs = found.source == jit::CacheSource::disk ? found.loadMs : found.compileMs};

  std::vector<TensorDesc> tensors;
  tensors.reserve(args.tensors.size());
  for (const TensorArg& t : args.tensors) tensors.push_back(descriptor(t));
  Printer printer{args.print, args.grid.size()};
  KernelFaults faults;
  std::vector<int64_t> scalars = scalarSlots(kernel, args.scalars);
  LaunchWorkspace workspace(workspaces_);
  KernelArgs kernelArgs{tensors.data(), {1, 1, 1}, printTile,   &printer,  &faults, scalars.data(), gatherBlock,
                        scatterBlock,   LaunchWorkspace::provide, &workspace};
  int64_t programs = 1;
  for (size_t i = 0; i < args.grid.size(); ++i) {
    kernelArgs.grid[i] = args.grid[i];
    programs *= args.grid[i];
  }
  KernelEntry entry = found.entry;
  pool_.parallelFor(programs, [&](int64_t begin, int64_t end) { entry(&kernelArgs, begin, end); });
  if (printer.error) std::rethrow_exception(printer.error);
  if (faults.bits & kFaultOutOfMemory)
    fail(SourceLoc{}, "cpu", "kernel '" + kernel.name + "' is out of memory: its tiles past the stack need " +
                                 std::to_string(faults.scratchBytes) + " bytes of heap per thread, which could not be allocated");
  if (faults.bits & kFaultIntegerDivideByZero) throwDivisionByZero(kernel, "cpu");
  if (faults.check) throwCheckFailed(kernel, faults.check - 1, faults.checkProgram, args.grid, faults.checkElement, "cpu");
  return report;
}

}  // namespace tj::cpu
