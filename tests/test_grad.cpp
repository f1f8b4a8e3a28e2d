// The gradient graph (grad/graph.hpp): every built-in operation's gradient against central
// finite differences in f64 on the interpreter, at odd sizes on random data; the same graphs
// on cpu and vulkan against the interpreter; custom operations; errors at the caller's line.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dsl/tilejit.hpp"
#include "grad/graph.hpp"
#include "tests/support.hpp"

using namespace tj;
using tj::grad::Graph;
using tj::grad::Gradients;
using tj::grad::Var;

namespace {

// The scalar loss of the inputs, built on graph g.
using Loss = std::function<Var(Graph& g, const std::vector<Var>& in)>;

// sum(v * w) for a fixed random w of v's shape: a loss whose gradient against v is w, so no
// operation's gradient hides behind a sum that is constant (as a softmax's row sums are).
Var weighted(Graph& g, const Var& v, uint64_t seed = 99) {
  return g.sum(v * g.constant(Tensor::random(v.shape(), seed, v.dtype())));
}

double lossOf(const std::vector<Tensor>& inputs, const Loss& loss, const std::string& device) {
  Graph g({.device = device});
  std::vector<Var> vars;
  for (const Tensor& t : inputs) vars.push_back(g.input(t));
  return loss(g, vars).value().item(0);
}

// Every input's gradient, computed on `device`; a kernel that fell back to the CPU fails.
std::vector<Tensor> gradientsOf(const std::vector<Tensor>& inputs, const Loss& loss, const std::string& device) {
  LaunchWatch watch;
  Graph g({.device = device});
  std::vector<Var> vars;
  for (const Tensor& t : inputs) vars.push_back(g.input(t));
  Gradients grads = g.backward(loss(g, vars));
  std::vector<Tensor> out;
  for (const Var& v : vars) out.push_back(grads.of(v));
  const LaunchReport* fallback = watch.firstFallback();
  CHECK_MESSAGE(fallback == nullptr, "a kernel of the graph fell back from " << device << ": "
                                         << (fallback ? fallback->fallbackReason : ""));
  return out;
}

// Every element of every input's gradient (f64, on the interpreter) against the central
// difference (L(x + h) - L(x - h)) / 2h.
void checkFiniteDifferences(const std::vector<Tensor>& inputs, const Loss& loss, double tolerance = 1e-6) {
  const double h = 1e-6;
  std::vector<Tensor> grads = gradientsOf(inputs, loss, "interp");
  for (size_t i = 0; i < inputs.size(); ++i) {
    REQUIRE(grads[i].shape() == inputs[i].shape());
    for (int64_t e = 0; e < inputs[i].numel(); ++e) {
      auto shifted = [&](double by) {
        std::vector<Tensor> moved = inputs;
        moved[i] = inputs[i].contiguous();
        moved[i].setItem(e, inputs[i].item(e) + by);
        return lossOf(moved, loss, "interp");
      };
      const double numeric = (shifted(h) - shifted(-h)) / (2 * h), analytic = grads[i].item(e);
      CHECK_MESSAGE(std::abs(numeric - analytic) <= tolerance * std::max(1.0, std::abs(numeric)),
                    "input " << i << " element " << e << ": backward gives " << analytic
                             << ", finite differences " << numeric);
    }
  }
}

Tensor random(const Shape& shape, uint64_t seed, double lo = -1.0, double hi = 1.0, DType dtype = f64) {
  return Tensor::random(shape, seed, dtype, lo, hi);
}

std::vector<std::string> compiledDevices() {
  std::vector<std::string> d{"cpu"};
  if (test::vulkanAvailable()) d.push_back("vulkan");
  return d;
}

// Whether `message` is an Error reported at this file's `line` naming `what`.
bool reportedAt(const std::string& message, int line, const std::string& what) {
  return message.find("test_grad.cpp:" + std::to_string(line) + ": ") != std::string::npos &&
         message.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("tensor: reshape is a view of a row-major tensor, sharing its storage") {
  Tensor x = Tensor::from({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor flat = x.reshape({6}), cube = x.reshape({3, 1, 2});
  CHECK(flat.sharesStorage(x));
  CHECK(cube.strides() == Shape{2, 2, 1});
  flat.setItem(4, 50);
  CHECK(x.item(4) == 50);
  CHECK(cube.values() == x.values());
  CHECK(x.is_contiguous());
  CHECK_FALSE(x.transpose().is_contiguous());
  CHECK(x.transpose().contiguous().reshape({6}).values() == std::vector<double>{1, 4, 2, 50, 3, 6});
  CHECK(Tensor::zeros({3, 1, 4}).permute({1, 0, 2}).is_contiguous());  // a size-1 axis moved
}

TEST_CASE("grad: the gradient of sum(a * b) is b for a and a for b, on every device") {
  Tensor a = Tensor::from({2, 2}, {1, 2, 3, 4}), b = Tensor::from({2, 2}, {5, 6, 7, 8});
  for (std::string device : {"interp", "cpu", "vulkan"}) {
    if (device == "vulkan" && !test::vulkanAvailable()) continue;
    CAPTURE(device);
    Graph g({.device = device});
    Var x = g.input(a), y = g.input(b);
    Gradients grads = g.backward(g.sum(x * y));
    CHECK(grads.of(x).values() == b.values());
    CHECK(grads.of(y).values() == a.values());
  }
}

TEST_CASE("grad: elementwise operations and broadcasting against finite differences") {
  Tensor a = random({3, 1, 5}, 1), b = random({4, 5}, 2), positive = random({3, 4, 5}, 3, 0.5, 2.0);
  checkFiniteDifferences({a, b}, [](Graph& g, const auto& v) { return weighted(g, v[0] + v[1]); });
  checkFiniteDifferences({a, b}, [](Graph& g, const auto& v) { return weighted(g, v[0] - v[1]); });
  checkFiniteDifferences({a, b}, [](Graph& g, const auto& v) { return weighted(g, v[0] * v[1]); });
  checkFiniteDifferences({a, positive}, [](Graph& g, const auto& v) { return weighted(g, v[0] / v[1]); });
  checkFiniteDifferences({a}, [](Graph& g, const auto& v) { return weighted(g, 2.5 * v[0] - 1.0); });
  checkFiniteDifferences({a}, [](Graph& g, const auto& v) { return weighted(g, -g.exp(v[0])); });
  checkFiniteDifferences({positive}, [](Graph& g, const auto& v) { return weighted(g, g.log(v[0])); });
  // relu away from its kink, where a difference of 1e-6 cannot cross it.
  Tensor away = random({3, 7}, 4, 0.1, 1.0);
  for (int64_t i = 0; i < away.numel(); i += 2) away.setItem(i, -away.item(i));
  checkFiniteDifferences({away}, [](Graph& g, const auto& v) { return weighted(g, g.relu(v[0])); });
}

TEST_CASE("grad: matmul, reductions and shapes against finite differences") {
  checkFiniteDifferences({random({3, 5}, 5), random({5, 4}, 6)},
                         [](Graph& g, const auto& v) { return weighted(g, g.matmul(v[0], v[1])); });
  Tensor x = random({3, 4, 5}, 7);
  checkFiniteDifferences({x}, [](Graph& g, const auto& v) { return weighted(g, g.sum(v[0], {1})); });
  checkFiniteDifferences({x}, [](Graph& g, const auto& v) { return weighted(g, g.sum(v[0], {0, 2}, true)); });
  checkFiniteDifferences({x}, [](Graph& g, const auto& v) { return weighted(g, g.mean(v[0], {-1})); });
  checkFiniteDifferences({x}, [](Graph& g, const auto& v) { return g.mean(v[0] * v[0]); });
  checkFiniteDifferences({x}, [](Graph& g, const auto& v) { return weighted(g, g.reshape(v[0], {5, 12})); });
  checkFiniteDifferences({x}, [](Graph& g, const auto& v) { return weighted(g, g.permute(v[0], {2, 0, 1})); });
  checkFiniteDifferences({x}, [](Graph& g, const auto& v) { return weighted(g, g.transpose(v[0], 0, 1)); });
}

TEST_CASE("grad: softmax, log_softmax and layer_norm against finite differences") {
  Tensor x = random({3, 7}, 8, -3.0, 3.0), w = random({7}, 9), b = random({7}, 10);
  checkFiniteDifferences({x}, [](Graph& g, const auto& v) { return weighted(g, g.softmax(v[0])); });
  checkFiniteDifferences({x}, [](Graph& g, const auto& v) { return weighted(g, g.softmax(v[0], 0)); });
  checkFiniteDifferences({x}, [](Graph& g, const auto& v) { return weighted(g, g.log_softmax(v[0])); });
  checkFiniteDifferences({x, w, b},
                         [](Graph& g, const auto& v) { return weighted(g, g.layer_norm(v[0], v[1], v[2])); });
  checkFiniteDifferences({x}, [](Graph& g, const auto& v) { return weighted(g, g.layer_norm(v[0], 1e-3)); });
}

TEST_CASE("grad: rows longer than one block (1100 columns) on cpu and vulkan match the interpreter") {
  // The row kernels step through a row 1024 columns at a time: a second, partial block.
  Tensor x = random({3, 1100}, 11, -4.0, 4.0, f32), w = random({1100}, 12, -1.0, 1.0, f32),
         b = random({1100}, 13, -1.0, 1.0, f32);
  Loss loss = [](Graph& g, const auto& v) {
    Var n = g.layer_norm(v[0], v[1], v[2]);
    return weighted(g, g.softmax(n) + g.log_softmax(n * 0.5));
  };
  std::vector<Tensor> want = gradientsOf({x, w, b}, loss, "interp");
  for (const std::string& device : compiledDevices()) {
    CAPTURE(device);
    std::vector<Tensor> got = gradientsOf({x, w, b}, loss, device);
    for (size_t i = 0; i < got.size(); ++i)
      for (int64_t e = 0; e < got[i].numel(); ++e)
        REQUIRE_MESSAGE(std::abs(got[i].item(e) - want[i].item(e)) <= 1e-4 * std::max(1.0, std::abs(want[i].item(e))),
                        "input " << i << " element " << e << ": " << got[i].item(e) << " against " << want[i].item(e));
  }
}

TEST_CASE("grad: a two-layer network's gradients on cpu and vulkan match the interpreter") {
  // x [37, 19] -> layer_norm -> matmul [19, 23] + bias -> relu -> matmul [23, 5] -> cross-entropy.
  Tensor x = random({37, 19}, 20, -2.0, 2.0, f32), w1 = random({19, 23}, 21, -0.5, 0.5, f32),
         b1 = random({23}, 22, -0.1, 0.1, f32), w2 = random({23, 5}, 23, -0.5, 0.5, f32);
  Tensor target = Tensor::zeros({37, 5});
  for (int64_t r = 0; r < 37; ++r) target.setItem(r * 5 + r % 5, 1.0);
  Loss loss = [&](Graph& g, const auto& v) {
    Var h = g.relu(g.matmul(g.layer_norm(v[0]), v[1]) + v[2]);
    Var logits = g.matmul(h, v[3]);
    return -g.mean(g.sum(g.log_softmax(logits) * g.constant(target), {1}));
  };
  std::vector<Tensor> want = gradientsOf({x, w1, b1, w2}, loss, "interp");
  for (const std::string& device : compiledDevices()) {
    CAPTURE(device);
    std::vector<Tensor> got = gradientsOf({x, w1, b1, w2}, loss, device);
    for (size_t i = 0; i < got.size(); ++i)
      for (int64_t e = 0; e < got[i].numel(); ++e)
        REQUIRE_MESSAGE(std::abs(got[i].item(e) - want[i].item(e)) <= 1e-5 + 1e-4 * std::abs(want[i].item(e)),
                        "input " << i << " element " << e << ": " << got[i].item(e) << " against " << want[i].item(e));
  }
}

TEST_CASE("grad: masked scores (-inf) get a zero gradient, and the graph reads nothing unwritten") {
  test::ScopedEnv sanitize("TILEJIT_SANITIZE", "1");
  const double inf = std::numeric_limits<double>::infinity();
  Tensor scores = random({5, 9}, 30, -2.0, 2.0);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = r + 1; c < 9; ++c) scores.setItem(r * 9 + c, -inf);  // causal
  scores.setItem(0, 1e-310);  // a denormal
  Graph g({.device = "interp"});
  Var s = g.input(scores);
  Tensor d = g.backward(weighted(g, g.softmax(s))).of(s);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 9; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      CHECK(std::isfinite(d.item(r * 9 + c)));
      if (c > r) CHECK(d.item(r * 9 + c) == 0.0);
    }
  // A NaN input reaches its row's gradient only.
  scores.setItem(9 * 2 + 1, std::numeric_limits<double>::quiet_NaN());
  Graph h({.device = "interp"});
  Var t = h.input(scores);
  Tensor e = h.backward(weighted(h, h.softmax(t))).of(t);
  CHECK(std::isnan(e.item(9 * 2)));
  CHECK(std::isfinite(e.item(9 * 3)));
}

namespace {

// x * y elementwise as a tile kernel of one's own (the reference guide's Step 4).
Tensor product(const Tensor& x, const Tensor& y, const std::string& device) {
  Tensor out = Tensor::full(x.shape(), std::numeric_limits<double>::quiet_NaN(), x.dtype());
  run({1}, [&](Program& p) {
    auto X = p.read(x, {4, 4}, 0.0), Y = p.read(y, {4, 4}, 0.0);
    p.write(out, {4, 4}).put(X.at({0, 0}) * Y.at({0, 0}), {0, 0});
  }, {.name = "product", .device = device});
  return out;
}

}  // namespace

TEST_CASE("grad: a kernel of one's own joins a graph with its gradient kernels") {
  Tensor a = Tensor::from({2, 2}, {1, 2, 3, 4}), b = Tensor::from({2, 2}, {5, 6, 7, 8});
  for (std::string device : {"interp", "cpu"}) {
    CAPTURE(device);
    Graph g({.device = device});
    Var x = g.input(a), y = g.input(b);
    Var xy = g.custom({x, y}, product(a, b, device), [&](const Tensor& d) {
      return std::vector{product(d, b, device), product(d, a, device)};
    }, "product");
    // The custom operation's output feeds built-in ones: d(sum(exp(xy)))/dx = exp(xy) * b.
    Gradients grads = g.backward(g.sum(g.exp(xy)));
    for (int64_t i = 0; i < 4; ++i) {
      CHECK(grads.of(x).item(i) == doctest::Approx(std::exp(a.item(i) * b.item(i)) * b.item(i)).epsilon(1e-5));
      CHECK(grads.of(y).item(i) == doctest::Approx(std::exp(a.item(i) * b.item(i)) * a.item(i)).epsilon(1e-5));
    }
  }
}

TEST_CASE("grad: a tile program joins a graph with its backward derived") {
  Tensor a = Tensor::random({37, 5}, 40, f64), b = Tensor::random({5}, 41, f64);
  auto lossWith = [&](bool derived) {
    Graph g({.device = "interp"});
    Var x = g.input(a), w = g.input(b);
    Var scaled = x * w;
    if (derived) {  // the same product as a kernel of one's own: rows of x times w
      Tensor out = Tensor::empty({37, 5}, f64);
      scaled = g.tile({cdiv(37, 8)}, [&](Program& p) {
        Tile rows = p.read(x.value(), {8, 8}, 0.0).at({p.id(0), 0});
        p.write(out, {8, 8}).put(rows * p.read(w.value(), {8}, 0.0).at({0}).expand_dims(0), {p.id(0), 0});
      }, {x, w}, out, "scale_rows");
    }
    Gradients grads = g.backward(g.sum(g.softmax(scaled) * g.constant(Tensor::random({37, 5}, 42, f64))));
    return std::vector{grads.of(x), grads.of(w)};
  };
  std::vector<Tensor> want = lossWith(false), got = lossWith(true);
  for (size_t i = 0; i < 2; ++i)
    for (int64_t e = 0; e < want[i].numel(); ++e)
      CHECK(got[i].item(e) == doctest::Approx(want[i].item(e)).epsilon(1e-12));
}

TEST_CASE("grad: a gradient function returning wrong tensors is an Error naming the operation and its line") {
  Tensor a = Tensor::from({2, 2}, {1, 2, 3, 4});
  Graph g({.device = "interp"});
  Var x = g.input(a);
  int line = __LINE__ + 1;
  Var wrongShape = g.custom({x}, a, [](const Tensor&) { return std::vector{Tensor::zeros({4})}; }, "flatten");
  std::string message = test::errorOf([&] { g.backward(g.sum(wrongShape)); });
  CHECK_MESSAGE(reportedAt(message, line, "custom operation 'flatten': gradient 0 is f32[4], but input 0 is f32[2, 2]"),
                message);
  line = __LINE__ + 1;
  Var wrongDtype = g.custom({x}, a, [](const Tensor&) { return std::vector{Tensor::zeros({2, 2}, f64)}; }, "cast");
  message = test::errorOf([&] { g.backward(g.sum(wrongDtype)); });
  CHECK_MESSAGE(reportedAt(message, line, "gradient 0 is f64[2, 2], but input 0 is f32[2, 2]"), message);
  line = __LINE__ + 1;
  Var wrongCount = g.custom({x}, a, [](const Tensor& d) { return std::vector{d, d}; }, "twice");
  message = test::errorOf([&] { g.backward(g.sum(wrongCount)); });
  CHECK_MESSAGE(reportedAt(message, line, "returned 2 tensors for its 1 inputs"), message);
}

TEST_CASE("grad: bad input is an Error at the caller's line") {
  Graph g({.device = "interp"});
  Var a = g.input(Tensor::zeros({3, 4})), b = g.input(Tensor::zeros({5}));
  int line = __LINE__ + 1;
  std::string message = test::errorOf([&] { (void)(a + b); });
  CHECK_MESSAGE(reportedAt(message, line, "add: shapes [3, 4] and [5] do not broadcast"), message);
  line = __LINE__ + 1;
  message = test::errorOf([&] { g.backward(a); });
  CHECK_MESSAGE(reportedAt(message, line, "backward: takes a one-element result, not f32[3, 4]"), message);
  line = __LINE__ + 1;
  message = test::errorOf([&] { g.matmul(a, a); });
  CHECK_MESSAGE(reportedAt(message, line, "matmul: takes [M, K] and [K, N] of one dtype, not f32[3, 4] and f32[3, 4]"),
                message);
  line = __LINE__ + 1;
  message = test::errorOf([&] { g.input(Tensor::zeros({2}, i32)); });
  CHECK_MESSAGE(reportedAt(message, line, "a graph computes in f32 or f64, not i32[2]"), message);
  Graph other({.device = "interp"});
  Var c = other.input(Tensor::zeros({3, 4}));
  line = __LINE__ + 1;
  message = test::errorOf([&] { g.add(a, c); });
  CHECK_MESSAGE(reportedAt(message, line, "add: the value belongs to another graph"), message);
  line = __LINE__ + 1;
  message = test::errorOf([&] { g.softmax(a, 2); });
  CHECK_MESSAGE(reportedAt(message, line, "softmax: axis 2 is outside the 2 axes of the value"), message);
}
