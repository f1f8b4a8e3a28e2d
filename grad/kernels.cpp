#include "grad/kernels.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <tuple>

namespace tj::grad::kernels {
namespace {

constexpr int64_t kBlock = 1024;  // elements per program of an elementwise kernel
constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t nextPow2(int64_t n) { return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(n, 1)))); }

int64_t elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

RunOptions named(const RunOptions& opts, const std::string& name) {
  RunOptions o = opts;
  o.name = name;
  return o;
}

// The dtype of flat element positions below `n` (plus a block of padding): i32 while they fit.
DType positionType(int64_t n) { return n + kBlock < std::numeric_limits<int32_t>::max() ? i32 : i64; }

Tensor flat(const Tensor& t) { return t.reshape({t.numel()}); }

// Positions start, start + 1, ... of `n` elements as a tile of dtype `type`.
Tile positions(Program& p, const Index& start, int64_t n, DType type) {
  return p.scalar(start, type) + p.arange(n).cast(type);
}

// The flat offset that row-major position `position` within `dims` reads through `strides`.
Tile offsetOf(const Tile& position, const Shape& dims, const Shape& strides) {
  Tile offset = position.k(0);
  int64_t inner = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (strides[d] != 0 && dims[d] != 1) {
      Tile coord = inner == 1 ? position : position / static_cast<double>(inner);
      if (d > 0) coord = coord % static_cast<double>(dims[d]);
      offset = offset + (strides[d] == 1 ? coord : coord * static_cast<double>(strides[d]));
    }
    inner *= dims[d];
  }
  return offset;
}

// Whether `s` reads its tensor in the output's own row-major order (a plain blocked read).
bool inOrder(const Strided& s, const Shape& shape) {
  if (s.tensor.numel() != elements(shape)) return false;
  Shape rowMajor = ir::rowMajorStrides(shape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1 && s.strides[d] != rowMajor[d]) return false;
  return true;
}

// Blocks of a row kernel over [rows, cols]: up to 1024 columns a step, 2048 elements a tile.
struct RowBlocks {
  int64_t rows, cols;
};
RowBlocks rowBlocks(const Tensor& x) {
  int64_t cols = std::min<int64_t>(nextPow2(x.dim(1)), 1024);
  return {std::max<int64_t>(1, std::min<int64_t>(nextPow2(x.dim(0)), 2048 / cols)), cols};
}

// Whether column j of a row kernel's block k lies inside x's `cols`.
Tile columnsInside(Program& p, const RowBlocks& b, const Index& k, int64_t cols) {
  return (p.iota({b.rows, b.cols}, 1) + p.scalar(k * b.cols, i32)) < static_cast<double>(cols);
}

// Block k of an optional per-column vector ([cols]) as a row [1, cols] scaling or shifting y.
std::optional<ReadView> columnVector(Program& p, const Tensor& v, const RowBlocks& b) {
  if (!v.defined()) return std::nullopt;
  return p.read(v, {b.cols}, 0.0);
}
Tile row(const ReadView& v, const Index& k) { return v.at({k}).expand_dims(0); }

}  // namespace

Strided broadcast(const Tensor& t, const Shape& shape) {
  Shape own = ir::rowMajorStrides(t.shape()), strides(shape.size(), 0);
  const size_t lead = shape.size() - static_cast<size_t>(t.rank());
  for (size_t d = 0; d < static_cast<size_t>(t.rank()); ++d)
    if (t.dim(static_cast<int>(d)) != 1) strides[lead + d] = own[d];
  return {t, strides};
}

Strided permuted(const Tensor& t, const std::vector<int>& perm) {
  Shape own = ir::rowMajorStrides(t.shape()), strides;
  for (int axis : perm) strides.push_back(own[static_cast<size_t>(axis)]);
  return {t, strides};
}

Tensor map(const std::vector<Strided>& inputs, const Shape& shape, DType dtype, const ElementFn& f,
           const std::string& name, const RunOptions& opts) {
  Tensor out = Tensor::empty(shape, dtype);
  const int64_t n = out.numel();
  int64_t largest = n;
  for (const Strided& s : inputs) largest = std::max(largest, s.tensor.numel());
  const DType type = positionType(largest);
  run({cdiv(n, kBlock)}, [&](Program& p) {
    Index i = p.id(0);
    Tile position = positions(p, i * kBlock, kBlock, type);
    std::vector<Tile> xs;
    for (const Strided& s : inputs)
      xs.push_back(inOrder(s, shape) ? p.read(flat(s.tensor), {kBlock}, 0.0).at({i})
                                     : p.gather(flat(s.tensor), {offsetOf(position, shape, s.strides)}, 0.0));
    p.write(flat(out), {kBlock}).put(f(xs), {i});
  }, named(opts, name));
  return out;
}

Tensor sumOver(const Tensor& x, const std::vector<bool>& reduced, const RunOptions& opts) {
  Shape outShape = x.shape(), kept, keptStrides, summed, summedStrides, own = ir::rowMajorStrides(x.shape());
  for (size_t d = 0; d < outShape.size(); ++d) {
    (reduced[d] ? summed : kept).push_back(outShape[d]);
    (reduced[d] ? summedStrides : keptStrides).push_back(own[d]);
    if (reduced[d]) outShape[d] = 1;
  }
  Tensor out = Tensor::empty(outShape, x.dtype());
  const int64_t outputs = out.numel(), terms = elements(summed);
  const int64_t step = std::min<int64_t>(nextPow2(terms), 256), block = std::min<int64_t>(nextPow2(outputs), 4096 / step);
  const DType type = positionType(x.numel());
  run({cdiv(outputs, block)}, [&](Program& p) {
    Index i = p.id(0);
    Tile base = offsetOf(positions(p, i * block, block, type), kept, keptStrides).expand_dims(1);
    Tile sum = p.fold(0, cdiv(terms, step), p.zeros({block}, x.dtype()), [&](Index k, Tile acc) {
      Tile term = positions(p, k * step, step, type).expand_dims(0);
      Tile offset = base + offsetOf(term, summed, summedStrides);
      Tile inside = (term < static_cast<double>(terms)).broadcast_to({block, step});
      return acc + p.gather(flat(x), {offset}, inside, 0.0).sum(1);
    });
    p.write(flat(out), {block}).put(sum, {i});
  }, named(opts, "grad_sum"));
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b, const RunOptions& opts) {
  constexpr int64_t kM = 32, kN = 32, kK = 32;
  Tensor c = Tensor::empty({a.dim(0), b.dim(1)}, a.dtype());
  run({cdiv(a.dim(0), kM), cdiv(b.dim(1), kN)}, [&](Program& p) {
    Index i = p.id(0), j = p.id(1);
    auto A = p.read(a, {kM, kK}, 0.0);
    auto B = p.read(b, {kK, kN}, 0.0);
    Tile acc = p.fold(0, A.blocks(1), p.zeros({kM, kN}, a.dtype()),
                      [&](Index k, Tile acc) { return dot(A.at({i, k}), B.at({k, j}), acc); });
    p.write(c, {kM, kN}).put(acc, {i, j});
  }, named(opts, "grad_matmul"));
  return c;
}

namespace {

// The running maximum m and sum s of exp(x - m) of each row of x, in one pass (online softmax).
std::pair<Tile, Tile> rowMaxAndSum(Program& p, const ReadView& X, const Index& i, const RowBlocks& b, DType dtype) {
  const double finite = dtype == f32 ? std::numeric_limits<float>::lowest() : std::numeric_limits<double>::lowest();
  Tile lowest = p.full({b.rows}, finite, dtype);
  auto [m, s] = p.fold(0, X.blocks(1), std::tuple{lowest, p.zeros({b.rows}, dtype)}, [&](Index k, Tile m, Tile s) {
    Tile t = X.at({i, k});
    Tile next = max(m, t.max(1));
    return std::tuple{next, s * (m - next).exp() + (t - next.expand_dims(1)).exp().sum(1)};
  });
  return {m, s};
}

// The sum over each row of f(block k of the row), its columns outside x masked by the caller.
Tile rowSum(Program& p, const ReadView& X, const RowBlocks& b, DType dtype, const std::function<Tile(Index)>& f) {
  return p.fold(0, X.blocks(1), p.zeros({b.rows}, dtype), [&](Index k, Tile acc) { return acc + f(k).sum(1); });
}

}  // namespace

Tensor softmax(const Tensor& x, bool logarithm, const RunOptions& opts) {
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  const RowBlocks b = rowBlocks(x);
  run({cdiv(x.dim(0), b.rows)}, [&](Program& p) {
    Index i = p.id(0);
    auto X = p.read(x, {b.rows, b.cols}, -kInf);
    auto [m, s] = rowMaxAndSum(p, X, i, b, x.dtype());
    auto Y = p.write(y, {b.rows, b.cols});
    if (logarithm) {
      Tile logSum = (m + s.log()).expand_dims(1);
      p.loop(0, X.blocks(1), [&](Index k) { Y.put(X.at({i, k}) - logSum, {i, k}); });
    } else {
      p.loop(0, X.blocks(1), [&](Index k) { Y.put((X.at({i, k}) - m.expand_dims(1)).exp() / s.expand_dims(1), {i, k}); });
    }
  }, named(opts, logarithm ? "grad_log_softmax" : "grad_softmax"));
  return y;
}

// softmax: dx = y (dy - rowsum(y dy)); log_softmax: dx = dy - exp(y) rowsum(dy).
Tensor softmaxBackward(const Tensor& y, const Tensor& dy, bool logarithm, const RunOptions& opts) {
  Tensor dx = Tensor::empty(y.shape(), y.dtype());
  const RowBlocks b = rowBlocks(y);
  run({cdiv(y.dim(0), b.rows)}, [&](Program& p) {
    Index i = p.id(0);
    auto Y = p.read(y, {b.rows, b.cols}, 0.0), DY = p.read(dy, {b.rows, b.cols}, 0.0);
    Tile total = rowSum(p, Y, b, y.dtype(), [&](Index k) { return logarithm ? DY.at({i, k}) : Y.at({i, k}) * DY.at({i, k}); })
                     .expand_dims(1);
    auto DX = p.write(dx, {b.rows, b.cols});
    p.loop(0, Y.blocks(1), [&](Index k) {
      DX.put(logarithm ? DY.at({i, k}) - Y.at({i, k}).exp() * total : Y.at({i, k}) * (DY.at({i, k}) - total), {i, k});
    });
  }, named(opts, logarithm ? "grad_log_softmax_backward" : "grad_softmax_backward"));
  return dx;
}

LayerNorm layerNorm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, const RunOptions& opts) {
  LayerNorm out{Tensor::empty(x.shape(), x.dtype()), Tensor::empty({x.dim(0)}, x.dtype()),
                Tensor::empty({x.dim(0)}, x.dtype())};
  const RowBlocks b = rowBlocks(x);
  const int64_t cols = x.dim(1);
  run({cdiv(x.dim(0), b.rows)}, [&](Program& p) {
    Index i = p.id(0);
    auto X = p.read(x, {b.rows, b.cols}, 0.0);
    Tile mean = rowSum(p, X, b, x.dtype(), [&](Index k) { return X.at({i, k}); }) / static_cast<double>(cols);
    Tile variance = rowSum(p, X, b, x.dtype(), [&](Index k) {
      Tile centered = where(columnsInside(p, b, k, cols), X.at({i, k}) - mean.expand_dims(1), 0.0);
      return centered * centered;
    }) / static_cast<double>(cols);
    Tile rstd = (variance + eps).rsqrt();
    auto W = columnVector(p, weight, b), B = columnVector(p, bias, b);
    auto Y = p.write(out.y, {b.rows, b.cols});
    p.loop(0, X.blocks(1), [&](Index k) {
      Tile y = (X.at({i, k}) - mean.expand_dims(1)) * rstd.expand_dims(1);
      if (W) y = y * row(*W, k);
      if (B) y = y + row(*B, k);
      Y.put(y, {i, k});
    });
    p.write(out.mean, {b.rows}).put(mean, {i});
    p.write(out.rstd, {b.rows}).put(rstd, {i});
  }, named(opts, "grad_layer_norm"));
  return out;
}

Tensor layerNormBackward(const Tensor& x, const Tensor& dy, const Tensor& weight, const Tensor& mean,
                         const Tensor& rstd, const RunOptions& opts) {
  Tensor dx = Tensor::empty(x.shape(), x.dtype());
  const RowBlocks b = rowBlocks(x);
  const double cols = static_cast<double>(x.dim(1));
  run({cdiv(x.dim(0), b.rows)}, [&](Program& p) {
    Index i = p.id(0);
    auto X = p.read(x, {b.rows, b.cols}, 0.0), DY = p.read(dy, {b.rows, b.cols}, 0.0);
    Tile mu = p.read(mean, {b.rows}, 0.0).at({i}).expand_dims(1);
    Tile r = p.read(rstd, {b.rows}, 0.0).at({i}).expand_dims(1);
    // g = dy * weight is 0 outside x (dy reads 0 there), so the sums need no mask.
    auto W = columnVector(p, weight, b);
    auto g = [&](Index k) { return W ? DY.at({i, k}) * row(*W, k) : DY.at({i, k}); };
    auto normalized = [&](Index k) { return (X.at({i, k}) - mu) * r; };
    Tile meanG = (rowSum(p, X, b, x.dtype(), g) / cols).expand_dims(1);
    Tile meanGX = (rowSum(p, X, b, x.dtype(), [&](Index k) { return g(k) * normalized(k); }) / cols).expand_dims(1);
    auto DX = p.write(dx, {b.rows, b.cols});
    p.loop(0, X.blocks(1), [&](Index k) { DX.put(r * (g(k) - meanG - normalized(k) * meanGX), {i, k}); });
  }, named(opts, "grad_layer_norm_backward"));
  return dx;
}

}  // namespace tj::grad::kernels
