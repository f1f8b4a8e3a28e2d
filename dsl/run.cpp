#include "dsl/run.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "devices/device.hpp"
#include "devices/interp/sanitizer.hpp"
#include "dsl/launch.hpp"
#include "dsl/tracer.hpp"
#include "ir/passes.hpp"
#include "jit/cache_file.hpp"

namespace tj {

namespace {

thread_local CaptureTraces* gCapture = nullptr;
thread_local LaunchWatch* gLaunchWatch = nullptr;

// A dump is a debugging aid: one that cannot be written is skipped, with one
// warning per TILEJIT_DUMP value rather than one per kernel.
void warnDumpFailed(const std::string& dir, const std::string& why) {
  if (firstTime("TILEJIT_DUMP=" + dir)) spdlog::warn("tilejit: TILEJIT_DUMP={}: cannot write kernels there ({}); not dumping", dir, why);
}

std::filesystem::path writeKernelText(const std::filesystem::path& dir, const ir::Kernel& k, uint64_t hash) {
  auto path = dir / (k.name + "-" + ir::hashHex(hash) + ".tir");
  jit::writeFileAtomically(path, ir::print(k));  // with the system's reason, and no SIGXFSZ past ulimit -f
  return path;
}

void dumpKernel(const ir::Kernel& k, uint64_t hash) {
  const char* dir = std::getenv("TILEJIT_DUMP");
  if (!dir || !*dir) return;
  try {
    spdlog::debug("tilejit: wrote {}", writeKernelText(dir, k, hash).string());
  } catch (const std::exception& e) {
    warnDumpFailed(dir, e.what());
  }
}

// The internal error with the kernel's IR kept for its report: in TILEJIT_DUMP when set, else
// in the temporary folder (where that fails, the error as it is).
InternalError withKernelKept(const InternalError& e, const ir::Kernel& k, uint64_t hash) {
  const char* dump = std::getenv("TILEJIT_DUMP");
  try {
    return e.withIrAt(writeKernelText(dump && *dump ? dump : std::filesystem::temp_directory_path(), k, hash).string());
  } catch (const std::exception&) {
    return e;
  }
}

}  // namespace

namespace detail {

void checkGrid(std::span<const int64_t> grid, const SourceLoc& loc, std::string_view op) {
  if (grid.empty() || grid.size() > 3)
    fail(loc, op, "the grid has rank " + std::to_string(grid.size()) + "; use 1 to 3 axes");
  for (size_t i = 0; i < grid.size(); ++i)
    if (grid[i] < 0)
      fail(loc, op, "grid axis " + std::to_string(i) + " has negative size " + std::to_string(grid[i]));
}

namespace {

// Canonical kernels by the hash and name of what was traced: run() traces its lambda
// every time, but a trace seen before skips verification and canonicalization.
class CanonicalMemo {
 public:
  struct Entry {
    std::shared_ptr<const ir::Kernel> kernel;
    uint64_t hash;
  };
  std::optional<Entry> find(uint64_t rawHash, const std::string& name) {
    std::lock_guard lock(mutex_);
    auto it = kernels_.find({rawHash, name});
    if (it == kernels_.end()) return std::nullopt;
    return it->second;
  }
  void add(uint64_t rawHash, const std::string& name, Entry e) {
    std::lock_guard lock(mutex_);
    if (kernels_.size() >= kCapacity) kernels_.clear();  // programs with endless distinct kernels stay bounded
    kernels_[{rawHash, name}] = std::move(e);
  }

 private:
  static constexpr size_t kCapacity = 4096;
  std::mutex mutex_;
  std::map<std::pair<uint64_t, std::string>, Entry> kernels_;
};

// Which loads and gathers have a default fill: not hashed, but the sanitizer reads them, so
// traces that differ only there keep canonical kernels of their own.
uint64_t defaultFillMarks(const ir::Kernel& k) {
  uint64_t marks = 0, position = 0;
  ir::forEachOp(k.body, [&](const ir::Op& op) {
    ++position;
    if (op.defaultFill) marks = marks * 0x9E3779B97F4A7C15ull + position;
  });
  return marks;
}

CanonicalMemo& canonicalMemo() {
  static CanonicalMemo memo;
  return memo;
}

}  // namespace

TracedKernel finishTrace(Tracer& tracer) {
  tracer.closeExits();
  const ir::Kernel& raw = tracer.kernel();
  uint64_t rawHash = ir::semanticHash(raw) ^ defaultFillMarks(raw);
  if (auto known = canonicalMemo().find(rawHash, raw.name)) return {known->kernel, tracer.takeTensors(), known->hash};
  ir::verify(raw);
  auto canonical = std::make_shared<const ir::Kernel>(ir::canonicalize(raw));
  ir::verify(*canonical);
  if (spdlog::should_log(spdlog::level::debug))
    spdlog::debug("tilejit: traced {}\n{}", canonical->name, ir::print(*canonical));
  uint64_t hash = ir::semanticHash(*canonical);
  dumpKernel(*canonical, hash);
  canonicalMemo().add(rawHash, raw.name, {canonical, hash});
  return {canonical, tracer.takeTensors(), hash};
}

Device& deviceFor(const std::string& name, bool sanitize, const SourceLoc& loc, std::string_view op) {
  if (sanitize || interp::sanitizeRequested()) return interp::sanitizingInterpreter();
  try {
    return selectDevice(name);
  } catch (const Error& e) {
    fail(loc, op, e.what());
  }
}

CaptureTraces* activeCapture() { return gCapture; }

namespace {

// A launch that keeps no record of the elements it wrote may have written each element of
// the tensors it stores to.
void markWritten(const ir::Kernel& kernel, std::span<const TensorArg> args) {
  if (std::ranges::none_of(args, [](const TensorArg& a) { return a.written != nullptr; })) return;  // most launches
  std::vector<bool> stored = ir::writtenTensors(kernel);
  for (size_t i = 0; i < args.size(); ++i)
    if (stored[i] && args[i].written) args[i].written->all = true;
}

}  // namespace

std::string launchTraced(Device& device, const TracedKernel& traced, std::span<const Tensor* const> leading,
                         std::span<const int64_t> grid, std::span<const ScalarArg> scalars, const RunOptions& options,
                         const SourceLoc& loc, std::string_view op) {
  std::vector<TensorArg> args;
  args.reserve(leading.size() + traced.tensors.size());
  for (const Tensor* t : leading) args.push_back(t->launchArg());
  for (const Tensor& t : traced.tensors) args.push_back(t.launchArg());
  if (std::string problem = storedTensorProblem(*traced.kernel, args); !problem.empty()) fail(loc, op, problem);
  LaunchReport report;
  try {
    void* stream = options.stream ? options.stream : StreamScope::current();
    report = device.launch(*traced.kernel, {args, grid, {}, scalars, traced.hash, stream});
  } catch (const InternalError& e) {
    throw withKernelKept(e, *traced.kernel, traced.hash);
  }
  if (&device != &interp::sanitizingInterpreter()) markWritten(*traced.kernel, args);
  for (const TensorArg& a : args)  // what a launch elsewhere wrote reaches a DLPack producer's GPU memory
    if (a.residency) a.residency->publish();
  LaunchWatch::record(report);
  return report.device;
}

}  // namespace detail

LaunchWatch::LaunchWatch() : previous_(gLaunchWatch) { gLaunchWatch = this; }
LaunchWatch::~LaunchWatch() { gLaunchWatch = previous_; }

const LaunchReport& LaunchWatch::last() const {
  if (reports_.empty()) throw Error("LaunchWatch: no kernel was launched while it watched");
  return reports_.back();
}

const LaunchReport* LaunchWatch::firstFallback() const {
  auto it = std::ranges::find_if(reports_, &LaunchReport::fellBack);
  return it == reports_.end() ? nullptr : &*it;
}

void LaunchWatch::record(const LaunchReport& report) {
  for (LaunchWatch* w = gLaunchWatch; w; w = w->previous_) w->reports_.push_back(report);
}

TracedKernel trace(const std::vector<int64_t>& grid, const KernelBody& body, const std::string& name, Loc loc) {
  detail::checkGrid(grid, SourceLoc::from(loc), "run");
  Tracer tracer(name, static_cast<int>(grid.size()));
  Program program(tracer);
  body(program);
  return detail::finishTrace(tracer);
}

TracedKernel bindKernel(const ir::Kernel& kernel, std::vector<Tensor> tensors, Loc loc) {
  if (tensors.size() != kernel.tensors.size())
    fail(SourceLoc::from(loc), "bindKernel",
         fmt::format("kernel '{}' takes {} tensors, not {}", kernel.name, kernel.tensors.size(), tensors.size()));
  ir::verify(kernel);
  auto canonical = std::make_shared<const ir::Kernel>(ir::canonicalize(kernel));
  ir::verify(*canonical);
  uint64_t hash = ir::semanticHash(*canonical);
  dumpKernel(*canonical, hash);
  return {canonical, std::move(tensors), hash};
}

std::string launch(const TracedKernel& traced, const std::vector<int64_t>& grid, const RunOptions& options, Loc loc) {
  detail::checkGrid(grid, SourceLoc::from(loc), "launch");
  if (gCapture) {
    gCapture->add(*traced.kernel);
    return "none";
  }
  SourceLoc where = SourceLoc::from(loc);
  return detail::launchTraced(detail::deviceFor(options.device, options.sanitize, where, "run"), traced, {}, grid, {},
                              options, where, "run");
}

std::string run(const std::vector<int64_t>& grid, const KernelBody& body, const RunOptions& options, Loc loc) {
  return launch(trace(grid, body, options.name, loc), grid, options, loc);
}

namespace {
thread_local void* gStream = nullptr;
}  // namespace

StreamScope::StreamScope(void* stream) : previous_(gStream) { gStream = stream; }
StreamScope::~StreamScope() { gStream = previous_; }
void* StreamScope::current() { return gStream; }

CaptureTraces::CaptureTraces() : previous_(gCapture) { gCapture = this; }
CaptureTraces::~CaptureTraces() { gCapture = previous_; }

}  // namespace tj
