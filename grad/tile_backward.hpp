// The backward of a tile program, derived (grad/derive_backward) and run.
//
//   TracedKernel forward = trace(grid, body);          // reads x and w, writes y
//   launch(forward, grid);
//   std::vector<Tensor> d = tj::grad::backward(forward, grid, {x, w}, {{y, dy}});  // dx, dw
#pragma once
#include <vector>

#include "dsl/tilejit.hpp"
#include "ir/ir.hpp"

namespace tj::grad {

// A tensor the forward kernel writes, and the gradient of the loss against it (its shape and dtype).
struct OutputGradient {
  Tensor output, gradient;
};

// The gradients of `inputs` (tensors the forward kernel reads, f32/f64/f16/bf16) given those of
// its outputs, computed by the backward kernel derived from `forward` over the forward's grid
// on options.device. An input the kernel does not read gets zeros; an input it also writes, an
// output it does not write or a gradient of the wrong shape or dtype is an Error at `loc`, and
// an op outside what is derived is an Error at the user's line that traced it. A fold whose
// carried values the backward needs saves them per iteration (its trips counted by a probe
// launch first) up to 1 GiB, and recomputes them past that or with TILEJIT_GRAD_RECOMPUTE=1.
std::vector<Tensor> backward(const TracedKernel& forward, const std::vector<int64_t>& grid,
                             const std::vector<Tensor>& inputs, const std::vector<OutputGradient>& outputs,
                             const RunOptions& options = {}, Loc loc = Loc::current());

// The derived backward kernel itself (tile-ir --stage=grad prints it): the gradients of every
// float tensor the kernel reads and does not write, given those of every float tensor it writes.
ir::Kernel backwardKernel(const ir::Kernel& forward);

}  // namespace tj::grad
