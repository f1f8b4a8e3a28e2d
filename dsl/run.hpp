// Tracing a kernel lambda and running it on a device.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "dsl/program.hpp"
#include "ir/ir.hpp"

namespace tj {

struct RunOptions {
  std::string name = "kernel";  // the kernel's name in IR dumps and logs
  std::string device;           // "" = $TILEJIT_DEVICE or the best available
  // Run on the sanitizing interpreter, whatever the device (also TILEJIT_SANITIZE=1): races
  // between programs, mismatched dot operands and reads of unwritten memory become an Error.
  bool sanitize = false;
  // The CUDA or HIP stream (a CUstream, a hipStream_t: a framework's current stream) that the
  // launch, its copies to the device and back and its timing events are ordered on: it starts
  // after the work queued there before it, and run() returns once it finished there. Null: the
  // thread's StreamScope, else the legacy default stream. Other devices ignore it.
  void* stream = nullptr;
};

// While one lives on a thread, launches there without RunOptions::stream are ordered on
// `stream` (see RunOptions::stream). Scopes nest.
class StreamScope {
 public:
  explicit StreamScope(void* stream);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;
  static void* current();  // the innermost scope's stream on this thread; null without one

 private:
  void* previous_;
};

// A traced, canonicalized kernel and the tensors bound to its parameters.
struct TracedKernel {
  std::shared_ptr<const ir::Kernel> kernel;  // canonical; shared by every trace that produced it
  std::vector<Tensor> tensors;
  uint64_t hash = 0;  // ir::semanticHash(*kernel), computed once
};

using KernelBody = std::function<void(Program&)>;

// Runs `body` once to record the kernel (rank-1 to rank-3 grid). Verifies and
// canonicalizes it, and writes it to $TILEJIT_DUMP/<name>-<hash>.tir when set.
TracedKernel trace(const std::vector<int64_t>& grid, const KernelBody& body, const std::string& name = "kernel",
                   Loc loc = Loc::current());

// A kernel that a pass made (grad's derived backward), with the tensors for its parameters:
// verified, canonicalized and hashed, as trace() gives a kernel. A tensor count that does not
// match the parameters is an Error at `loc`.
TracedKernel bindKernel(const ir::Kernel& kernel, std::vector<Tensor> tensors, Loc loc = Loc::current());
// Runs a traced (or bound) kernel over the grid on options.device. Returns the device that ran it.
std::string launch(const TracedKernel& traced, const std::vector<int64_t>& grid, const RunOptions& options = {},
                   Loc loc = Loc::current());

// Traces `body` and runs it over the grid. Returns the name of the device that ran it.
std::string run(const std::vector<int64_t>& grid, const KernelBody& body, const RunOptions& options = {},
                Loc loc = Loc::current());

// While one of these lives on a thread, run() records kernels instead of running them
// (tools use it to show the IR of a sample).
class CaptureTraces {
 public:
  CaptureTraces();
  ~CaptureTraces();
  CaptureTraces(const CaptureTraces&) = delete;
  CaptureTraces& operator=(const CaptureTraces&) = delete;
  const std::vector<ir::Kernel>& kernels() const { return kernels_; }
  void add(ir::Kernel k) { kernels_.push_back(std::move(k)); }

 private:
  std::vector<ir::Kernel> kernels_;
  CaptureTraces* previous_;
};

// While one lives on a thread, it keeps the LaunchReport of every kernel that run() and
// Kernel handles launch on the thread: the device that ran it, whether and why it fell
// back, where its compiled kernel came from and what that cost.
class LaunchWatch {
 public:
  LaunchWatch();
  ~LaunchWatch();
  LaunchWatch(const LaunchWatch&) = delete;
  LaunchWatch& operator=(const LaunchWatch&) = delete;
  const std::vector<LaunchReport>& reports() const { return reports_; }
  const LaunchReport& last() const;            // throws Error when nothing was launched
  const LaunchReport* firstFallback() const;  // null when every launch ran where asked
  // Gives `report` to every watch of the thread (run() and Kernel handles do, for each launch).
  static void record(const LaunchReport& report);

 private:
  std::vector<LaunchReport> reports_;
  LaunchWatch* previous_;
};

}  // namespace tj
