#include "devices/cpu/cpu_device.hpp"

#include <algorithm>
#include <iostream>
#include <mutex>

#include "devices/interp/values.hpp"
#include "ir/passes.hpp"
#include "jit/cpu_compiler.hpp"
#include "jit/cpu_target.hpp"

namespace tj::cpu {

namespace {

thread_local LaunchInfo gLastLaunch;

// The launch must match the kernel's signature and the ABI's limits before
// any program runs.
void checkLaunch(const ir::Kernel& k, const LaunchArgs& args) {
  auto bad = [&](const std::string& what) { fail(SourceLoc{}, "cpu", "kernel '" + k.name + "': " + what); };
  if (k.gridRank > kMaxGridRank)
    bad("grid rank " + std::to_string(k.gridRank) + " exceeds the CPU limit of " + std::to_string(kMaxGridRank));
  if (args.grid.size() != static_cast<size_t>(k.gridRank))
    bad("the grid has " + std::to_string(args.grid.size()) + " sizes but the kernel's grid rank is " +
        std::to_string(k.gridRank));
  for (int64_t g : args.grid)
    if (g < 0) bad("negative grid size " + std::to_string(g));
  if (args.tensors.size() != k.tensors.size())
    bad("got " + std::to_string(args.tensors.size()) + " tensors but the kernel takes " +
        std::to_string(k.tensors.size()));
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    const ir::TensorParam& p = k.tensors[i];
    const TensorArg& t = args.tensors[i];
    std::string name = "tensor '" + p.name + "'";
    if (p.rank > kMaxRank)
      bad(name + " has rank " + std::to_string(p.rank) + "; the CPU device supports up to " +
          std::to_string(kMaxRank));
    if (t.dtype != p.dtype)
      bad(name + " is " + std::string(dtypeName(t.dtype)) + " but the kernel expects " + std::string(dtypeName(p.dtype)));
    if (t.shape.size() != static_cast<size_t>(p.rank) || t.strides.size() != static_cast<size_t>(p.rank))
      bad(name + " has rank " + std::to_string(t.shape.size()) + " with " + std::to_string(t.strides.size()) +
          " strides but the kernel expects rank " + std::to_string(p.rank));
    if (std::ranges::any_of(t.shape, [](int64_t d) { return d < 0; })) bad(name + " has a negative size");
    bool empty = std::ranges::any_of(t.shape, [](int64_t d) { return d == 0; });
    if (!t.data && !empty) bad(name + " has no data");
  }
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

// Kernels report faults as bits without saying which op faulted, so the
// error names every op that could have, where the interpreter names the one.
void checkFaults(const ir::Kernel& k, uint32_t faults) {
  if (!(faults & kFaultIntegerDivideByZero)) return;
  std::string where;
  ir::forEachOp(k.body, [&](const ir::Op& op) {
    bool integerDivision = (op.code == ir::OpCode::div || op.code == ir::OpCode::rem) &&
                           !isFloat(k.type(op.results.at(0)).dtype);
    if (integerDivision && op.loc.known()) where += (where.empty() ? " (at " : ", ") + op.loc.str();
  });
  fail(SourceLoc{}, "cpu", "kernel '" + k.name + "': integer division or remainder by zero" +
                               (where.empty() ? "" : where + ")"));
}

}  // namespace

const LaunchInfo& lastLaunchInfo() { return gLastLaunch; }

CpuDevice& CpuDevice::instance() {
  static CpuDevice device(jit::kernelCache(), ThreadPool::global());
  return device;
}

void CpuDevice::launch(const ir::Kernel& kernel, const LaunchArgs& args) {
  checkLaunch(kernel, args);
  static const std::string options = jit::compileOptions();
  jit::CacheKey key{ir::semanticHash(kernel), jit::hostTarget().deviceFeatures, options};
  jit::CacheLookup found = cache_.lookup(kernel, key);
  gLastLaunch = {found.source, found.compileMs, found.loadMs};

  std::vector<TensorDesc> tensors;
  for (const TensorArg& t : args.tensors) tensors.push_back(descriptor(t));
  Printer printer{args.print, args.grid.size()};
  uint32_t faults = 0;
  KernelArgs kernelArgs{tensors.data(), {1, 1, 1}, printTile, &printer, &faults};
  int64_t programs = 1;
  for (size_t i = 0; i < args.grid.size(); ++i) {
    kernelArgs.grid[i] = args.grid[i];
    programs *= args.grid[i];
  }
  KernelEntry entry = found.entry;
  pool_.parallelFor(programs, [&](int64_t begin, int64_t end) { entry(&kernelArgs, begin, end); });
  if (printer.error) std::rethrow_exception(printer.error);
  checkFaults(kernel, faults);
}

}  // namespace tj::cpu
