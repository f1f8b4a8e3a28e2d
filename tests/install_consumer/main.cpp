// Doubles a vector with a tile kernel, then runs the README's gradient example; exits 0 only
// when every element is right. Built by run.sh with the README's CMake snippet against an
// installed tilejit.
#include <tilejit/dsl/autotune.hpp>  // the README names it for tune(): it must be installed and self-contained
#include <tilejit/grad.hpp>
#include <tilejit/tilejit.hpp>

#include <cmath>
#include <cstdio>

namespace {

using namespace tj;

bool near(double got, double want) { return std::fabs(got - want) <= 1e-6 * std::fabs(want) + 1e-12; }

// The README's "Gradients" example: a custom operation with its gradient kernels, and the same
// product as a tile program whose backward is derived. d mean(relu(a * b)) / da = (ab > 0) b / n.
int gradients() {
  Tensor a = Tensor::random({1001}, 8), b = Tensor::random({1001}, 9);
  auto product = [](const Tensor& a, const Tensor& b) {
    Tensor out = Tensor::empty(a.shape());
    run({cdiv(a.numel(), 1024)}, [&](Program& p) {
      Index i = p.id(0);
      p.write(out, {1024}).put(p.read(a, {1024}).at({i}) * p.read(b, {1024}).at({i}), {i});
    });
    return out;
  };
  grad::Graph g({.device = "cpu"});
  grad::Var x = g.input(a), w = g.input(b);
  grad::Var y = g.custom({x, w}, product(a, b),
                         [&](const Tensor& dy) { return std::vector{product(dy, b), product(dy, a)}; }, "product");
  Tensor out = Tensor::empty(a.shape());
  grad::Var z = g.tile({cdiv(a.numel(), 1024)}, [&](Program& p) {
    Index i = p.id(0);
    p.write(out, {1024}).put(p.read(x.value(), {1024}).at({i}) * p.read(w.value(), {1024}).at({i}), {i});
  }, {x, w}, out, "product");
  grad::Gradients d = g.backward(g.mean(g.relu(y)) + g.mean(g.relu(z)));
  Tensor dx = d.of(x), dw = d.of(w);
  for (int64_t i = 0; i < 1001; ++i) {
    double on = a.item(i) * b.item(i) > 0 ? 2.0 / 1001 : 0.0;
    if (!near(dx.item(i), on * b.item(i)) || !near(dw.item(i), on * a.item(i)))
      return std::printf("wrong gradient %ld\n", static_cast<long>(i)), 1;
  }
  return 0;
}

}  // namespace

int main() {
  Tensor x = Tensor::random({1001}, 7), y = Tensor::zeros({1001});
  run({cdiv(1001, 256)}, [&](Program& p) {
    Index i = p.id(0);
    p.write(y, {256}).put(p.read(x, {256}).at({i}) * 2.0, {i});
  });
  for (int64_t i = 0; i < 1001; ++i)
    if (y.item(i) != 2 * x.item(i)) return std::printf("wrong element %ld\n", static_cast<long>(i)), 1;
  if (gradients() != 0) return 1;
  std::puts("consumer: ok");
  return 0;
}
