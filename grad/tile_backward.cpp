#include "grad/tile_backward.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
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

// Copies of gradients past this many bytes in all are atomic adds instead; so are those of a
// read in a fold past this many copies: its programs write only the blocks their iterations
// visit (half of them in causal attention) while every copy is zeroed and added up whole.
constexpr int64_t kMaxCopyBytes = int64_t{1} << 28;
constexpr int64_t kMaxFoldCopies = 8;

int64_t copyCount(const Backward::Copies& c, const std::vector<int64_t>& grid) {
  int64_t n = 1;
  for (int64_t a : c.axes) n *= grid[static_cast<size_t>(a)];
  return n;
}

Shape copiesShape(const Backward::Copies& c, const TracedKernel& forward, const std::vector<int64_t>& grid) {
  Shape shape = forward.tensors[static_cast<size_t>(c.input)].shape();
  shape[0] = copyCount(c, grid) * c.stride(shape[0]);
  return shape;
}

// Per forward tensor: whether its gradient takes atomics instead of the copies `derived` writes
// (kMaxCopyBytes, kMaxFoldCopies).
std::vector<bool> atomicInstead(const Backward& derived, const TracedKernel& forward, const std::vector<int64_t>& grid) {
  std::vector<bool> atomic(forward.tensors.size());
  int64_t bytes = 0;
  for (const Backward::Copies& c : derived.copies) {
    bytes += ir::Type{c.dtype, copiesShape(c, forward, grid)}.numel() * dtypeBytes(c.dtype);
    atomic[static_cast<size_t>(c.input)] = c.inFold && copyCount(c, grid) > kMaxFoldCopies;
  }
  if (bytes > kMaxCopyBytes) std::fill(atomic.begin(), atomic.end(), true);
  return atomic;
}

// gradient (contiguous) = the sum of the `n` copies stacked in `copies` (Backward::Copies).
void sumCopies(const Tensor& copies, int64_t n, const Tensor& gradient, const RunOptions& options) {
  const int64_t elements = gradient.numel(), rows = 32, cols = 256;
  // Each copy a row of `flat`, its first `elements` columns the gradient's (the rest padding).
  const Tensor flat = copies.reshape({n, copies.numel() / n}), into = gradient.reshape({elements});
  RunOptions named = options;
  named.name = options.name + "_copies";
  run({cdiv(elements, cols)}, [&](Program& p) {
    Index j = p.id(0);
    auto rowsOf = p.read(flat, {rows, cols}, 0.0);  // sums past `elements` (padding rows) the store drops
    Tile sum = p.fold(0, rowsOf.blocks(0), p.zeros({cols}, copies.dtype()),
                      [&](Index k, Tile acc) { return acc + rowsOf.at({k, j}).sum(0); });
    p.write(into, {cols}).put(sum.cast(gradient.dtype()), {j});
  }, named);
}

}  // namespace

std::vector<Tensor> backward(const TracedKernel& forward, const std::vector<int64_t>& grid,
                             const std::vector<Tensor>& inputs, const std::vector<OutputGradient>& outputs,
                             const RunOptions& options, Loc loc) {
  const SourceLoc l = SourceLoc::from(loc);
  const ir::Kernel& k = *forward.kernel;
  const std::vector<bool> written = ir::writtenTensors(k);
  BackwardRequest request;
  request.inputs.assign(k.tensors.size(), false);
  request.outputs.assign(k.tensors.size(), false);
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
  request.atomicGradients = atomicInstead(derived, forward, grid);
  if (std::ranges::find(request.atomicGradients, true) != request.atomicGradients.end()) derived = deriveBackward(k, request);
  std::vector<Tensor> copies;
  for (const Backward::Copies& c : derived.copies) copies.push_back(Tensor::zeros(copiesShape(c, forward, grid), c.dtype));
  tensors.insert(tensors.end(), copies.begin(), copies.end());
  launch(bindKernel(derived.kernel, std::move(tensors), loc), grid, named, loc);
  for (size_t i = 0; i < copies.size(); ++i) {
    const Backward::Copies& c = derived.copies[i];
    sumCopies(copies[i], copyCount(c, grid), gradients[static_cast<size_t>(c.input)], named);
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
