// The tile kernels under the gradient graph's built-in operations, forward and backward. Each
// takes row-major inputs (or strided views where it says so), allocates its result and runs on
// `opts.device`, so a graph runs wherever a kernel does. f32 and f64 only: the graph checks.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "dsl/tilejit.hpp"

namespace tj::grad::kernels {

// A row-major tensor read at each element of an output of another shape: element c of the
// output reads the tensor's flat element sum(c[d] * strides[d]), one stride per output axis.
struct Strided {
  Tensor tensor;
  Shape strides;
};
// `t` broadcast to `shape` (NumPy's rules, axes aligned at the right; the caller checked them):
// stride 0 along the axes it is repeated on.
Strided broadcast(const Tensor& t, const Shape& shape);
// `t` with its axes permuted: output axis d is t's axis perm[d].
Strided permuted(const Tensor& t, const std::vector<int>& perm);

// out[c] = f(inputs at c) over every element c of `shape`, elementwise ops of `dtype` from
// the inputs' tiles; `name` names the kernel in logs and dumps.
using ElementFn = std::function<Tile(const std::vector<Tile>&)>;
Tensor map(const std::vector<Strided>& inputs, const Shape& shape, DType dtype, const ElementFn& f,
           const std::string& name, const RunOptions& opts);

// The sum of x over the axes marked in `reduced`, which keep size 1 in the result.
Tensor sumOver(const Tensor& x, const std::vector<bool>& reduced, const RunOptions& opts);

// a [M, K] times b [K, N]; either may be a strided view (a transpose).
Tensor matmul(const Tensor& a, const Tensor& b, const RunOptions& opts);

// Row kernels over x [rows, cols] (a graph's last axis), rows independent.
Tensor softmax(const Tensor& x, bool logarithm, const RunOptions& opts);  // log_softmax when logarithm
// The gradient of x given y = softmax(x, logarithm) and the gradient of y.
Tensor softmaxBackward(const Tensor& y, const Tensor& dy, bool logarithm, const RunOptions& opts);

// y = (x - mean) * rstd * weight + bias over each row, rstd = 1 / sqrt(variance + eps);
// weight and bias [cols] may be undefined (no scale, no shift). mean and rstd are [rows].
struct LayerNorm {
  Tensor y, mean, rstd;
};
LayerNorm layerNorm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, const RunOptions& opts);
// The gradient of x given dy, from the forward's mean and rstd.
Tensor layerNormBackward(const Tensor& x, const Tensor& dy, const Tensor& weight, const Tensor& mean,
                         const Tensor& rstd, const RunOptions& opts);

}  // namespace tj::grad::kernels
