// Reverse mode of a tile program: from a forward kernel, the kernel that computes the gradients
// of the tensors it reads given the gradients of the tensors it writes.
#pragma once
#include <algorithm>
#include <optional>
#include <vector>

#include "ir/ir.hpp"

namespace tj::grad {

// Which of the forward kernel's tensor parameters the backward kernel takes the gradient of
// (`inputs`: float tensors the kernel reads and does not write) and which written tensors have
// a gradient given (`outputs`), by parameter index.
struct BackwardRequest {
  std::vector<bool> inputs, outputs;
  bool saveCarried = true;  // save the carried values folds need at each iteration (else recompute them)
  // Per forward tensor (empty: none): add its read's gradient with atomics, where it would
  // otherwise be stored into copies of the input for a second kernel to add up (Backward::copies).
  std::vector<bool> atomicGradients;
};

struct Backward {
  ir::Kernel kernel;
  // The tensors of carried values saved per iteration, the kernel's last parameters, each
  // [programs of the grid, trips of its fold, elements of the value]: the fold (its element in
  // the trip-count probe's tensor), dtype and elements.
  struct Saved {
    int fold;
    DType dtype;
    int64_t elements;
  };
  std::vector<Saved> saved;
  // When some are: the probe to launch first over the grid, with the forward's tensors and an
  // i64 tensor of one zero per fold, into which it writes each fold's largest trip count.
  std::optional<ir::Kernel> tripCounts;
  // Copies of inputs' gradients, the kernel's parameters after the saved ones, in `dtype` (f32
  // for 16-bit inputs) and zeros before the launch: one copy per combination of the ids of the
  // grid's `axes` (row-major), which the programs with those ids write, stacked along the first
  // axis with room for blocks reaching past the input's rows: copy i is rows [i s, i s + rows) of
  // [copies s, the input's other sizes...], s = stride(rows). Their sum is the forward's tensor
  // `input`'s gradient.
  struct Copies {
    int input;
    DType dtype;
    std::vector<int64_t> axes;
    int64_t blockRows;  // the read block's first size
    bool fromRowZero;   // the block's first offset is 0
    bool inFold;        // the read is in a fold: a program writes the blocks its iterations visit
    int64_t stride(int64_t rows) const { return fromRowZero ? std::max(rows, blockRows) : rows + blockRows - 1; }
  };
  std::vector<Copies> copies;
};

// The backward kernel runs over the forward's grid. Its tensor parameters are the forward's, then
// one gradient per output (the forward's order), then one per input, which it adds into (they
// must start at zero); its scalars are the forward's. Each program recomputes its forward values
// (the forward's stores dropped), then walks its ops in reverse, each op's adjoint rule turning
// the gradient of its result into its operands'. A read block's gradient is stored where each
// program provably reads blocks of its own (the tensor read once, at offsets one-to-one in the
// program ids and loop indices: an id or index times the block's size, an id's quotient and
// remainder), into copies of the input where only programs differing in ids the offsets do not
// use read one block (unless atomicGradients; a second kernel adds the copies up), and added
// with atomics otherwise, since other programs may read the same block. A fold runs in
// reverse, each iteration's values recomputed from its index: where the carried values reach
// only ops linear in them whose gradients need none of them (sums, dot accumulators), that is
// all, O(n). Otherwise a top-level fold saves its carried values at every iteration
// (saveCarried: memory of programs x trips x their elements, the trips counted by a probe kernel
// before the launch) and the reversed loop reads them back, O(n); a nested fold, or any without saveCarried, recomputes
// the carried values of iteration k by the forward loop from its start to k, O(n^2 / 2).
// Scans, sorts, atomics, and branches or while loops that carry gradients are an Error naming
// the op and the user's file:line.
Backward deriveBackward(const ir::Kernel& forward, const BackwardRequest& request);

}  // namespace tj::grad
