#include "dsl/kernel.hpp"

#include <atomic>
#include <map>
#include <mutex>

#include "dsl/launch.hpp"
#include "dsl/tracer.hpp"

namespace tj::kernel_detail {

Index TraceArguments::index(size_t scalar) const { return tracer_.index(scalars_.at(scalar)); }
Tile TraceArguments::tile(size_t scalar) const { return tracer_.tile(scalars_.at(scalar)); }

class KernelCore {
 public:
  KernelCore(std::string name, std::vector<DType> scalarTypes, Body body)
      : name_(std::move(name)), op_("kernel '" + name_ + "'"), scalarTypes_(std::move(scalarTypes)),
        body_(std::move(body)) {}

  std::string launch(std::span<const int64_t> grid, std::span<const Tensor* const> tensors,
                     std::span<const ScalarArg> scalars, const RunOptions& options, Loc loc) {
    SourceLoc where = SourceLoc::from(loc);
    detail::checkGrid(grid, where, op_);
    for (size_t i = 0; i < tensors.size(); ++i)
      tensors[i]->checkDefined(op_ + ": tensor argument " + std::to_string(i), where);
    if (CaptureTraces* capture = detail::activeCapture()) {
      capture->add(*trace(grid.size(), tensors).kernel);
      return "none";
    }
    Device& device = detail::deviceFor(options.device, options.sanitize, where, op_);
    std::shared_ptr<const TracedKernel> traced = find(device, grid.size(), tensors);
    return detail::launchTraced(device, *traced, tensors, grid, scalars, options, where, op_);
  }

  int64_t traceCount() const { return traceCount_; }
  const std::string& name() const { return name_; }

 private:
  // What a trace depends on besides the body: the device, the grid's rank and each
  // tensor argument's dtype and shape (host code in the body may read the shape).
  struct Signature {
    std::string device;
    std::vector<int64_t> shapes;  // grid rank, then per tensor: dtype, rank, sizes
    auto operator<=>(const Signature&) const = default;
  };

  static Signature signature(const Device& device, size_t gridRank, std::span<const Tensor* const> tensors) {
    Signature s{device.name(), {static_cast<int64_t>(gridRank)}};
    for (const Tensor* t : tensors) {
      s.shapes.push_back(static_cast<int64_t>(t->dtype()));
      s.shapes.push_back(t->rank());
      s.shapes.insert(s.shapes.end(), t->shape().begin(), t->shape().end());
    }
    return s;
  }

  // The trace for this signature, tracing on a miss. Two threads missing at once
  // may both trace; the first to finish is kept.
  std::shared_ptr<const TracedKernel> find(const Device& device, size_t gridRank,
                                           std::span<const Tensor* const> tensors) {
    Signature key = signature(device, gridRank, tensors);
    {
      std::lock_guard lock(mutex_);
      if (auto it = traces_.find(key); it != traces_.end()) return it->second;
    }
    auto traced = std::make_shared<const TracedKernel>(trace(gridRank, tensors));
    std::lock_guard lock(mutex_);
    return traces_.try_emplace(std::move(key), std::move(traced)).first->second;
  }

  // Runs the body with the parameters bound first: tensors 0..n-1 in argument order,
  // then the scalars. The result's tensors are only the body's captures, which
  // every launch passes after the arguments.
  TracedKernel trace(size_t gridRank, std::span<const Tensor* const> tensors) {
    ++traceCount_;
    Tracer tracer(name_, static_cast<int>(gridRank));
    TraceArguments args(tracer);
    for (const Tensor* t : tensors) args.tensors_.push_back(tracer.bindTensorParam(*t));
    for (DType d : scalarTypes_) args.scalars_.push_back(tracer.bindScalarParam(d));
    Program program(tracer);
    body_(program, args);
    TracedKernel traced = detail::finishTrace(tracer);
    traced.tensors.erase(traced.tensors.begin(), traced.tensors.begin() + static_cast<std::ptrdiff_t>(tensors.size()));
    return traced;
  }

  const std::string name_, op_;
  const std::vector<DType> scalarTypes_;
  const Body body_;
  std::mutex mutex_;
  std::map<Signature, std::shared_ptr<const TracedKernel>> traces_;
  std::atomic<int64_t> traceCount_{0};
};

std::shared_ptr<KernelCore> makeCore(std::string name, std::vector<DType> scalarTypes, Body body) {
  return std::make_shared<KernelCore>(std::move(name), std::move(scalarTypes), std::move(body));
}

std::string launch(KernelCore& core, std::span<const int64_t> grid, std::span<const Tensor* const> tensors,
                   std::span<const ScalarArg> scalars, const RunOptions& options, Loc loc) {
  return core.launch(grid, tensors, scalars, options, loc);
}

int64_t traceCount(const KernelCore& core) { return core.traceCount(); }
const std::string& name(const KernelCore& core) { return core.name(); }

}  // namespace tj::kernel_detail
