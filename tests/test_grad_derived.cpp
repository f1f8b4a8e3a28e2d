// Derived backward kernels (grad/derive_backward, grad/tile_backward): the gradients of tile
// programs against central finite differences of the forward in f64 on the interpreter, at odd
// sizes on random data; the same on cpu and vulkan against the interpreter; what is not derived
// is an Error at the user's line.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dsl/tilejit.hpp"
#include "grad/tile_backward.hpp"
#include "ir/passes.hpp"
#include "tests/support.hpp"

using namespace tj;

namespace {

// A forward tile program: reads `in`, writes `out`.
using Forward = std::function<void(Program& p, const std::vector<Tensor>& in, const Tensor& out)>;

struct Case {
  std::vector<int64_t> grid;
  Forward body;
  Shape outShape;
};

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The forward's output for these inputs, on `device`.
Tensor forwardOf(const Case& c, const std::vector<Tensor>& in, const std::string& device, DType dtype) {
  Tensor out = Tensor::full(c.outShape, kNaN, dtype);
  run(c.grid, [&](Program& p) { c.body(p, in, out); }, {.name = "forward", .device = device});
  return out;
}

// The derived gradients of sum(out * weights) against every input, on `device`, checking that no
// launch fell back to the CPU.
std::vector<Tensor> derivedGradients(const Case& c, const std::vector<Tensor>& in, const Tensor& weights,
                                     const std::string& device) {
  LaunchWatch watch;
  Tensor out = Tensor::full(c.outShape, kNaN, weights.dtype());
  TracedKernel forward = trace(c.grid, [&](Program& p) { c.body(p, in, out); }, "forward");
  launch(forward, c.grid, {.device = device});
  std::vector<Tensor> d = grad::backward(forward, c.grid, in, {{out, weights}}, {.device = device});
  const LaunchReport* fallback = watch.firstFallback();
  CHECK_MESSAGE(fallback == nullptr, "fell back from " << device << ": " << (fallback ? fallback->fallbackReason : ""));
  return d;
}

// Each element of each input's derived gradient (f64, interp) against central differences of
// sum(out * weights).
void checkFiniteDifferences(const Case& c, const std::vector<Tensor>& in, double tolerance = 1e-6) {
  const double h = 1e-6;
  Tensor weights = Tensor::random(c.outShape, 77, f64);
  std::vector<Tensor> d = derivedGradients(c, in, weights, "interp");
  auto loss = [&](const std::vector<Tensor>& at) {
    std::vector<double> y = forwardOf(c, at, "interp", f64).values(), w = weights.values();
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += y[i] * w[i];
    return sum;
  };
  for (size_t i = 0; i < in.size(); ++i)
    for (int64_t e = 0; e < in[i].numel(); ++e) {
      auto shifted = [&](double by) {
        std::vector<Tensor> moved = in;
        moved[i] = in[i].contiguous();
        moved[i].setItem(e, in[i].item(e) + by);
        return loss(moved);
      };
      const double numeric = (shifted(h) - shifted(-h)) / (2 * h), derived = d[i].item(e);
      CHECK_MESSAGE(std::abs(numeric - derived) <= tolerance * std::max(1.0, std::abs(numeric)),
                    "input " << i << " element " << e << ": derived " << derived << ", finite differences " << numeric);
    }
}

// The derived gradients in f32 on cpu and vulkan against the interpreter's.
void checkDevices(const Case& c, const std::vector<Tensor>& in) {
  Tensor weights = Tensor::random(c.outShape, 78, f32);
  std::vector<Tensor> want = derivedGradients(c, in, weights, "interp");
  std::vector<std::string> devices{"cpu"};
  if (test::vulkanAvailable()) devices.push_back("vulkan");
  for (const std::string& device : devices) {
    CAPTURE(device);
    std::vector<Tensor> got = derivedGradients(c, in, weights, device);
    for (size_t i = 0; i < got.size(); ++i)
      for (int64_t e = 0; e < got[i].numel(); ++e)
        REQUIRE_MESSAGE(std::abs(got[i].item(e) - want[i].item(e)) <= 1e-4 * std::max(1.0, std::abs(want[i].item(e))),
                        "input " << i << " element " << e << ": " << got[i].item(e) << " against " << want[i].item(e));
  }
}

std::vector<Tensor> randoms(const std::vector<Shape>& shapes, DType dtype, double lo = -1.0, double hi = 1.0) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < shapes.size(); ++i) out.push_back(Tensor::random(shapes[i], 10 + i, dtype, lo, hi));
  return out;
}

// out = exp(x) * w + sin(x) / (1 + x^2), blocks of 16 over n: each program reads its own blocks.
Case elementwise(int64_t n) {
  return {{cdiv(n, 16)}, [](Program& p, const std::vector<Tensor>& in, const Tensor& out) {
            Index i = p.id(0);
            Tile x = p.read(in[0], {16}, 0.0).at({i}), w = p.read(in[1], {16}, 0.0).at({i});
            p.write(out, {16}).put(x.exp() * w + x.sin() / (x * x + 1.0) + max(x, w).tanh() + fma(x, w, x.cos()), {i});
          }, {n}};
}

// Rows normalized and scaled: a weight [cols] read by every program (summed per program by a
// second kernel), reductions
// and broadcasts along rows.
Case rowNorm(int64_t rows, int64_t cols) {
  return {{cdiv(rows, 4)}, [cols](Program& p, const std::vector<Tensor>& in, const Tensor& out) {
            Index i = p.id(0);
            const int64_t block = 16;
            Tile x = p.read(in[0], {4, block}, 0.0).at({i, 0});
            Tile w = p.read(in[1], {block}, 0.0).at({0}).expand_dims(0);
            Tile mean = x.sum(1, true) / static_cast<double>(cols);
            Tile inside = p.iota({4, block}, 1) < static_cast<double>(cols);
            Tile centered = where(inside, x - mean, 0.0);
            Tile rstd = ((centered * centered).sum(1, true) / static_cast<double>(cols) + 1e-3).rsqrt();
            p.write(out, {4, block}).put(centered * rstd * w + x.max(1, true).sigmoid(), {i, 0});
          }, {rows, cols}};
}

// C = A . B with a fold over K: the carried accumulator reaches only the dot's accumulator.
Case matmul(int64_t m, int64_t n, int64_t k) {
  return {{cdiv(m, 16), cdiv(n, 16)}, [](Program& p, const std::vector<Tensor>& in, const Tensor& out) {
            Index i = p.id(0), j = p.id(1);
            auto A = p.read(in[0], {16, 8}, 0.0), B = p.read(in[1], {8, 16}, 0.0);
            Tile acc = p.fold(0, A.blocks(1), p.zeros({16, 16}, in[0].dtype()),
                              [&](Index kk, Tile acc) { return dot(A.at({i, kk}), B.at({kk, j}), acc); });
            p.write(out, {16, 16}).put(acc.relu() * 0.5 + acc, {i, j});
          }, {m, n}};
}

// Rows summed over column blocks in a fold, each block scaled by a per-row vector read inside it.
Case foldedRowSum(int64_t rows, int64_t cols) {
  return {{cdiv(rows, 2)}, [](Program& p, const std::vector<Tensor>& in, const Tensor& out) {
            Index i = p.id(0);
            auto X = p.read(in[0], {2, 8}, 0.0);
            Tile s = p.read(in[1], {2}, 0.0).at({i});
            Tile total = p.fold(0, X.blocks(1), p.zeros({2}, in[0].dtype()), [&](Index k, Tile acc) {
              return acc + (X.at({i, k}).exp() * s.expand_dims(1)).sum(1);
            });
            p.write(out, {2}).put(total, {i});
          }, {rows}};
}

// A running maximum over column blocks: the carried value reaches max(), whose gradient needs it
// at every iteration, so the reversed loop recomputes it.
Case runningMax(int64_t rows, int64_t cols) {
  return {{cdiv(rows, 2)}, [](Program& p, const std::vector<Tensor>& in, const Tensor& out) {
            Index i = p.id(0);
            auto X = p.read(in[0], {2, 8}, -1e30);
            Tile m = p.fold(0, X.blocks(1), p.full({2}, -1e30, in[0].dtype()),
                            [&](Index k, Tile m) { return max(m, (X.at({i, k}) * 2.0).max(1)); });
            p.write(out, {2}).put(m, {i});
          }, {rows}};
}

// Attention over one head, q [M, 8], k and v [N, 8]: softmax(q k^T / sqrt(8)) v with the online
// softmax of FlashAttention (running max, running sum, rescaled accumulator).
Case attention(int64_t m, int64_t n) {
  return {{cdiv(m, 8)}, [n](Program& p, const std::vector<Tensor>& in, const Tensor& out) {
            Index i = p.id(0);
            const DType t = in[0].dtype();
            Tile q = p.read(in[0], {8, 8}, 0.0).at({i, 0}) * (1 / std::sqrt(8.0));
            auto K = p.read(in[1], {8, 8}, 0.0), V = p.read(in[2], {8, 8}, 0.0);
            auto [rowMax, rowSum, acc] = p.fold(
                0, K.blocks(0), std::tuple{p.full({8}, -1e30, t), p.zeros({8}, t), p.zeros({8, 8}, t)},
                [&](Index k, Tile rowMax, Tile rowSum, Tile acc) {
                  Tile s = dot(q, K.at({k, 0}).transpose());
                  Tile keys = p.iota({8, 8}, 1) + p.scalar(k * 8, i32);
                  s = where(keys < static_cast<double>(n), s, -1e30);
                  Tile next = max(rowMax, s.max(1));
                  Tile probs = (s - next.expand_dims(1)).exp();
                  Tile rescale = (rowMax - next).exp();
                  return std::tuple{next, rowSum * rescale + probs.sum(1),
                                    acc * rescale.expand_dims(1) + dot(probs, V.at({k, 0}))};
                });
            (void)rowMax;
            p.write(out, {8, 8}).put(acc / rowSum.expand_dims(1), {i, 0});
          }, {m, 8}};
}

// Each block of x read by two programs (ids 2b and 2b + 1, through a quotient alone): the
// derived backward adds their gradients with atomics.
Case pairedBlocks(int64_t n) {
  return {{2 * cdiv(n, 16)}, [](Program& p, const std::vector<Tensor>& in, const Tensor& out) {
            Index i = p.id(0);
            Tile x = p.read(in[0], {16}, 0.0).at({i / 2});
            p.write(out, {16}).put(x.exp() * (p.scalar(i % 2, x.dtype()) + 1.0), {i});
          }, {2 * cdiv(n, 16) * 16}};
}

// Rows of x [heads, rows, 16] scaled by a weight [heads, 16] per head, over a grid (row blocks,
// heads); each program reads its head's weight, which programs of other row blocks read too.
Case headWeights(int64_t heads, int64_t rows) {
  return {{cdiv(rows, 4), heads}, [](Program& p, const std::vector<Tensor>& in, const Tensor& out) {
            Index i = p.id(0), h = p.id(1);
            Tile x = p.read(in[0], {1, 4, 16}, 0.0).at({h, i, 0});
            Tile w = p.read(in[1], {1, 16}, 0.0).at({h, 0}).reshape({1, 1, 16});
            p.write(out, {1, 4, 16}).put((x * w).sin(), {h, i, 0});
          }, {heads, rows, 16}};
}

// Program i folds over x's blocks from block i to two past x's end, which read only the fill:
// x's gradient goes to a copy per program, and the blocks outside x must write none of it (the
// last one would reach the next copy, in rows its program does not write). Past 8 programs, a
// read in a fold takes atomics instead of copies (grad::backward's kMaxFoldCopies).
Case overrun(int64_t programs) {
  return {{programs}, [](Program& p, const std::vector<Tensor>& in, const Tensor& out) {
            Index i = p.id(0);
            auto X = p.read(in[0], {8}, 0.0);
            Tile shift = p.scalar(i, in[0].dtype());
            Tile total = p.fold(i, X.blocks(0) + 2, p.zeros({8}, in[0].dtype()),
                                [&](Index k, Tile acc) { return acc + (X.at({k}) + shift).exp(); });
            p.write(out, {8}).put(total, {i});
          }, {programs * 8}};
}

}  // namespace

TEST_CASE("grad derived: elementwise programs against finite differences and on every device") {
  checkFiniteDifferences(elementwise(37), randoms({{37}, {37}}, f64));
  checkDevices(elementwise(1001), randoms({{1001}, {1001}}, f32));
}

TEST_CASE("grad derived: reductions, broadcasts and a block read by every program") {
  checkFiniteDifferences(rowNorm(7, 13), randoms({{7, 13}, {13}}, f64));
  checkDevices(rowNorm(45, 13), randoms({{45, 13}, {13}}, f32));
}

TEST_CASE("grad derived: a matrix product's fold runs in reverse") {
  checkFiniteDifferences(matmul(17, 19, 11), randoms({{17, 11}, {11, 19}}, f64));
  checkDevices(matmul(37, 29, 45), randoms({{37, 45}, {45, 29}}, f32));
}

TEST_CASE("grad derived: a fold whose body reads a value from outside it carries that value's gradient") {
  checkFiniteDifferences(foldedRowSum(5, 19), randoms({{5, 19}, {5}}, f64));
  checkDevices(foldedRowSum(9, 45), randoms({{9, 45}, {9}}, f32));
}

TEST_CASE("grad derived: a fold carrying a running maximum saves, or recomputes, its carried values") {
  for (const char* recompute : {"0", "1"}) {
    CAPTURE(recompute);
    test::ScopedEnv mode("TILEJIT_GRAD_RECOMPUTE", recompute);
    checkFiniteDifferences(runningMax(5, 19), randoms({{5, 19}}, f64));
    checkDevices(runningMax(9, 45), randoms({{9, 45}}, f32));
  }
}

TEST_CASE("grad derived: attention with an online softmax (FlashAttention's forward), saved and recomputed") {
  for (const char* recompute : {"0", "1"}) {
    CAPTURE(recompute);
    test::ScopedEnv mode("TILEJIT_GRAD_RECOMPUTE", recompute);
    checkFiniteDifferences(attention(5, 11), randoms({{5, 8}, {11, 8}, {11, 8}}, f64));
    checkDevices(attention(19, 37), randoms({{19, 8}, {37, 8}, {37, 8}}, f32, -2.0, 2.0));
  }
}

TEST_CASE("grad derived: blocks read by several programs, through copies of the gradient or atomics") {
  checkFiniteDifferences(pairedBlocks(37), randoms({{37}}, f64));
  checkDevices(pairedBlocks(101), randoms({{101}}, f32));
  checkFiniteDifferences(headWeights(3, 9), randoms({{3, 9, 16}, {3, 16}}, f64));
  checkDevices(headWeights(5, 37), randoms({{5, 37, 16}, {5, 16}}, f32));
  checkFiniteDifferences(overrun(3), randoms({{13}}, f64));
  checkDevices(overrun(3), randoms({{29}}, f32));
  checkFiniteDifferences(overrun(11), randoms({{13}}, f64));
  checkDevices(overrun(11), randoms({{29}}, f32));
}

TEST_CASE("grad derived: a block read by one program is stored, by others summed from copies, else added atomically") {
  Tensor x = Tensor::zeros({64}), y = Tensor::zeros({64}), w = Tensor::zeros({13}), out = Tensor::zeros({64});
  ir::Kernel own = *trace({4}, [&](Program& p) { elementwise(64).body(p, {x, y}, out); }).kernel;
  std::string text = ir::print(grad::backwardKernel(own));
  CHECK(text.find("store(") != std::string::npos);
  CHECK(text.find("atomic(") == std::string::npos);
  CHECK(text.find("copies_") == std::string::npos);
  // The weight, read whole by every program: a copy of its gradient per program.
  Tensor rows = Tensor::zeros({8, 13}), normed = Tensor::zeros({8, 13});
  ir::Kernel weighted = *trace({2}, [&](Program& p) { rowNorm(8, 13).body(p, {rows, w}, normed); }).kernel;
  text = ir::print(grad::backwardKernel(weighted));
  CHECK(text.find("copies_t1: tensor<f32, 1>") != std::string::npos);
  CHECK(text.find("atomic(") == std::string::npos);
  // Blocks that two programs each read: atomic adds.
  Tensor half = Tensor::zeros({32});
  ir::Kernel pairs = *trace({4}, [&](Program& p) {
    p.write(out, {16}).put(p.read(half, {16}).at({p.id(0) / 2}) * 2.0, {p.id(0)});
  }).kernel;
  text = ir::print(grad::backwardKernel(pairs));
  CHECK(text.find("atomic(") != std::string::npos);
  CHECK(text.find("copies_") == std::string::npos);
  // Attention's keys, read in the fold by every block of queries: copies over the query blocks;
  // its queries, each program's own: stored.
  Tensor q = Tensor::zeros({19, 8}), keys = Tensor::zeros({37, 8}), values = Tensor::zeros({37, 8});
  Tensor o = Tensor::zeros({19, 8});
  ir::Kernel heads = *trace({3}, [&](Program& p) { attention(19, 37).body(p, {q, keys, values}, o); }).kernel;
  text = ir::print(grad::backwardKernel(heads));
  CHECK(text.find("copies_t1: tensor<f32, 2>") != std::string::npos);
  CHECK(text.find("copies_t2: tensor<f32, 2>") != std::string::npos);
  CHECK(text.find("copies_t0") == std::string::npos);
  CHECK(text.find("atomic(") == std::string::npos);
}

TEST_CASE("grad derived: what is not derived is an Error at the user's line") {
  Tensor x = Tensor::random({4, 32}, 1), out = Tensor::zeros({4});
  // A scan.
  int line = 0;
  TracedKernel scan = trace({1}, [&](Program& p) {
    Tile v = p.read(x, {4, 32}, 0.0).at({0, 0});
    line = __LINE__ + 1;
    p.write(out, {4}).put(v.cumsum(1).sum(1), {0});
  });
  std::string message = test::errorOf([&] { grad::backward(scan, {1}, {x}, {{out, Tensor::zeros({4})}}); });
  CHECK_MESSAGE(message.find("test_grad_derived.cpp:" + std::to_string(line) + ": grad: `scan` is outside what is "
                             "derived: scans and sorts are not derived yet") != std::string::npos,
                message);
  // Atomic updates in the forward.
  Tensor counts = Tensor::zeros({4});
  TracedKernel atomic = trace({1}, [&](Program& p) {
    Tile v = p.read(x, {4, 32}, 0.0).at({0, 0});
    line = __LINE__ + 1;
    Tile old = p.atomic_add(counts, {p.arange(4)}, v.sum(1));
    p.write(out, {4}).put(old, {0});
  });
  message = test::errorOf([&] { grad::backward(atomic, {1}, {x}, {{out, Tensor::zeros({4})}}); });
  CHECK_MESSAGE(message.find("test_grad_derived.cpp:" + std::to_string(line) + ": grad: `atomic` is outside what is "
                             "derived") != std::string::npos,
                message);
  // Gradients of the wrong shape, inputs the kernel writes.
  line = __LINE__ + 1;
  message = test::errorOf([&] { grad::backward(atomic, {1}, {x}, {{out, Tensor::zeros({5})}}); });
  CHECK_MESSAGE(message.find("test_grad_derived.cpp:" + std::to_string(line) +
                             ": grad::backward: the gradient of output f32[4] is f32[5]") != std::string::npos,
                message);
  line = __LINE__ + 1;
  message = test::errorOf([&] { grad::backward(atomic, {1}, {out}, {}); });
  CHECK_MESSAGE(message.find("test_grad_derived.cpp:" + std::to_string(line) + ": grad::backward: input f32[4] is "
                             "also written") != std::string::npos,
                message);
}
