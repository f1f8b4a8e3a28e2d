// Reverse mode of a tile program: from a forward kernel, the kernel that computes the gradients
// of the tensors it reads given the gradients of the tensors it writes.
#pragma once
#include <vector>

#include "ir/ir.hpp"

namespace tj::grad {

// Which of the forward kernel's tensor parameters the backward kernel takes the gradient of
// (`inputs`: float tensors the kernel reads and does not write) and which written tensors have
// a gradient given (`outputs`), by parameter index.
struct BackwardRequest {
  std::vector<bool> inputs, outputs;
};

// The backward kernel runs over the forward's grid. Its tensor parameters are the forward's, then
// one gradient per output (the forward's order), then one per input, which it adds into (they
// must start at zero); its scalars are the forward's. Each program recomputes its forward values
// (the forward's stores dropped), then walks its ops in reverse, each op's adjoint rule turning
// the gradient of its result into its operands'. A read block's gradient is added into the
// input's gradient with atomic adds, since other programs may read the same block; a plain
// store where each program provably reads a block of its own (the tensor read once, at block
// offsets that are program ids on every grid axis). A fold runs in reverse, each iteration's
// values recomputed from its index: where the carried values reach only ops linear in them
// whose gradients need none of them (sums, dot accumulators), that is all, O(n); otherwise the
// carried values of iteration k are recomputed by the forward loop from its start to k,
// O(n^2 / 2) iterations and no memory (storing them would need their count before the launch).
// Scans, sorts, atomics, and branches or while loops that carry gradients are an Error naming
// the op and the user's file:line.
ir::Kernel deriveBackward(const ir::Kernel& forward, const BackwardRequest& request);

}  // namespace tj::grad
