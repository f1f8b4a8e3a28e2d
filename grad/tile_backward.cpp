#include "grad/tile_backward.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <optional>
#include <string_view>

#include "grad/derive_backward.hpp"

namespace tj::grad {
namespace {

std::string describe(const Tensor& t) { return fmt::format("{}[{}]", dtypeName(t.dtype()), fmt::join(t.shape(), ", ")); }

// The forward's parameter that is `t` (the same view), or -1.
int paramOf(const TracedKernel& forward, const Tensor& t) {
  for (size_t i = 0; i < forward.tensors.size(); ++i)
    if (forward.tensors[i].sameView(t)) return static_cast<int>(i);
  return -1;
}

bool isGradientDtype(DType t) { return t == f32 || t == f64 || t == f16 || t == bf16; }

// Saved carried values past this many bytes are recomputed instead.
constexpr int64_t kMaxSavedBytes = int64_t{1} << 30;

// The tensors for the carried values `derived` saves, sized by its trip-count probe (run on
// options.device); none when they would take more than kMaxSavedBytes.
std::optional<std::vector<Tensor>> savedTensors(const Backward& derived, const TracedKernel& forward,
                                                const std::vector<int64_t>& grid, const RunOptions& options,
                                                Loc loc) {
  int folds = 0;
  for (const Backward::Saved& s : derived.saved) folds = std::max(folds, s.fold + 1);
  Tensor trips = Tensor::zeros({folds}, i64);
  std::vector<Tensor> probeTensors = forward.tensors;
  probeTensors.push_back(trips);
  RunOptions probe = options;
  probe.name = derived.tripCounts->name;
  launch(bindKernel(*derived.tripCounts, std::move(probeTensors), loc), grid, probe, loc);
  int64_t programs = 1, bytes = 0;
  for (int64_t g : grid) programs *= g;
  std::vector<Shape> shapes;
  for (const Backward::Saved& s : derived.saved) {
    shapes.push_back({programs, std::max<int64_t>(static_cast<int64_t>(trips.item(s.fold)), 0), s.elements});
    bytes += shapes.back()[0] * shapes.back()[1] * s.elements * dtypeBytes(s.dtype);
  }
  if (bytes > kMaxSavedBytes) {
    spdlog::info("tilejit: {}'s backward recomputes its loops' carried values: saving them takes {} MiB", forward.kernel->name,
                 bytes >> 20);
    return std::nullopt;
  }
  std::vector<Tensor> out;
  for (size_t i = 0; i < shapes.size(); ++i) out.push_back(Tensor::empty(shapes[i], derived.saved[i].dtype));
  return out;
}

// Partial sums past this many bytes are added with atomics instead.
constexpr int64_t kMaxPartialBytes = int64_t{1} << 28;

// Zeros for the partial sums `derived` writes, one row per program; none past kMaxPartialBytes.
std::optional<std::vector<Tensor>> partialTensors(const Backward& derived, int64_t programs) {
  std::vector<Tensor> out;
  int64_t bytes = 0;
  for (const Backward::Partial& p : derived.partials) {
    const int64_t elements = ir::Type{p.dtype, p.block}.numel();
    bytes += programs * elements * dtypeBytes(p.dtype);
    if (bytes > kMaxPartialBytes) return std::nullopt;
    out.push_back(Tensor::zeros({programs, elements}, p.dtype));
  }
  return out;
}

// gradient = the column sums of `partial` [programs, elements], each column an element of a
// block of shape `block` (row-major) at offsets 0 of `gradient`; those outside it are dropped.
void sumPartials(const Tensor& partial, const Tensor& gradient, const Shape& block, const RunOptions& options) {
  const int64_t elements = partial.dim(1), rows = 32, cols = 256;
  RunOptions named = options;
  named.name = options.name + "_partial_sums";
  run({cdiv(elements, cols)}, [&](Program& p) {
    Index j = p.id(0);
    auto rowsOf = p.read(partial, {rows, cols}, 0.0);
    Tile sum = p.fold(0, rowsOf.blocks(0), p.zeros({cols}, partial.dtype()),
                      [&](Index k, Tile acc) { return acc + rowsOf.at({k, j}).sum(0); });
    Tile element = p.arange(cols).cast(i64) + p.scalar(j * cols);
    std::vector<Tile> coords;
    int64_t stride = elements;
    for (int64_t size : block) coords.push_back((element / (stride /= size)) % size);
    p.scatter(gradient, std::vector<Operand>(coords.begin(), coords.end()), sum.cast(gradient.dtype()), element < elements);
  }, named);
}

}  // namespace

std::vector<Tensor> backward(const TracedKernel& forward, const std::vector<int64_t>& grid,
                             const std::vector<Tensor>& inputs, const std::vector<OutputGradient>& outputs,
                             const RunOptions& options, Loc loc) {
  const SourceLoc l = SourceLoc::from(loc);
  const ir::Kernel& k = *forward.kernel;
  const std::vector<bool> written = ir::writtenTensors(k);
  BackwardRequest request{std::vector<bool>(k.tensors.size()), std::vector<bool>(k.tensors.size())};
  const char* recompute = std::getenv("TILEJIT_GRAD_RECOMPUTE");
  request.saveCarried = !(recompute && std::string_view(recompute) == "1");
  std::vector<Tensor> gradients(k.tensors.size()), results;
  for (const Tensor& input : inputs) {
    input.checkDefined("grad::backward", l);
    if (!isGradientDtype(input.dtype()))
      fail(l, "grad::backward", fmt::format("input {} has no gradient: take gradients of float tensors", describe(input)));
    int p = paramOf(forward, input);
    if (p >= 0 && written[static_cast<size_t>(p)])
      fail(l, "grad::backward", fmt::format("input {} is also written by kernel '{}': its gradient is not defined",
                                            describe(input), k.name));
    results.push_back(Tensor::zeros(input.shape(), input.dtype()));
    if (p >= 0) request.inputs[static_cast<size_t>(p)] = true, gradients[static_cast<size_t>(p)] = results.back();
  }
  std::vector<Tensor> outputGradients(k.tensors.size());
  for (const OutputGradient& o : outputs) {
    int p = paramOf(forward, o.output);
    if (p < 0 || !written[static_cast<size_t>(p)])
      fail(l, "grad::backward", fmt::format("output {} is not written by kernel '{}'", describe(o.output), k.name));
    if (o.gradient.shape() != o.output.shape() || o.gradient.dtype() != o.output.dtype())
      fail(l, "grad::backward", fmt::format("the gradient of output {} is {}: it must have the output's shape and dtype",
                                            describe(o.output), describe(o.gradient)));
    request.outputs[static_cast<size_t>(p)] = true;
    outputGradients[static_cast<size_t>(p)] = o.gradient;
  }
  // The backward kernel's tensors: the forward's, the outputs' gradients, the inputs' (zeros).
  std::vector<Tensor> tensors = forward.tensors;
  for (size_t p = 0; p < k.tensors.size(); ++p)
    if (request.outputs[p]) tensors.push_back(outputGradients[p]);
  for (size_t p = 0; p < k.tensors.size(); ++p)
    if (request.inputs[p]) tensors.push_back(gradients[p]);
  RunOptions named = options;
  named.name = k.name + "_backward";
  Backward derived = deriveBackward(k, request);
  if (!derived.saved.empty()) {
    std::optional<std::vector<Tensor>> saved = savedTensors(derived, forward, grid, named, loc);
    if (saved) {
      tensors.insert(tensors.end(), saved->begin(), saved->end());
    } else {
      request.saveCarried = false;
      derived = deriveBackward(k, request);
    }
  }
  int64_t programs = 1;
  for (int64_t g : grid) programs *= g;
  std::optional<std::vector<Tensor>> partials = partialTensors(derived, programs);
  if (!partials) {
    request.partialSums = false;
    derived = deriveBackward(k, request);
    partials.emplace();
  }
  tensors.insert(tensors.end(), partials->begin(), partials->end());
  launch(bindKernel(derived.kernel, std::move(tensors), loc), grid, named, loc);
  for (size_t i = 0; i < partials->size(); ++i) {
    const Backward::Partial& p = derived.partials[i];
    sumPartials((*partials)[i], gradients[static_cast<size_t>(p.input)], p.block, named);
  }
  return results;
}

ir::Kernel backwardKernel(const ir::Kernel& forward) {
  const std::vector<bool> written = ir::writtenTensors(forward);
  BackwardRequest request;
  for (size_t t = 0; t < forward.tensors.size(); ++t) {
    const bool gradient = isGradientDtype(forward.tensors[t].dtype);
    request.inputs.push_back(gradient && !written[t]);
    request.outputs.push_back(gradient && written[t]);
  }
  return deriveBackward(forward, request).kernel;
}

}  // namespace tj::grad
