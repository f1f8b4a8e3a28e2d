// Layer normalization over rows, with weight and bias, against float64; with --backward, the
// gradients of x, weight and bias by hand-written kernels and by the backward derived from the
// forward kernel (grad::backward), both against float64, and the speed of each.
#include <cmath>
#include <cstdio>

#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

namespace {

struct Rows {
  std::vector<double> normalized, rstd;  // x̂ = (x - mean) / sqrt(variance + eps), per row 1 / sqrt(...)
};
Rows normalize(const std::vector<double>& x, int64_t rows, int64_t cols, double eps) {
  Rows r{std::vector<double>(x.size()), std::vector<double>(size_t(rows))};
  for (int64_t i = 0; i < rows; ++i) {
    const double* row = &x[size_t(i * cols)];
    double mean = 0, var = 0;
    for (int64_t j = 0; j < cols; ++j) mean += row[j] / double(cols);
    for (int64_t j = 0; j < cols; ++j) var += (row[j] - mean) * (row[j] - mean) / double(cols);
    r.rstd[size_t(i)] = 1 / std::sqrt(var + eps);
    for (int64_t j = 0; j < cols; ++j) r.normalized[size_t(i * cols + j)] = (row[j] - mean) * r.rstd[size_t(i)];
  }
  return r;
}

// --backward: the hand-written kernels timed as the sample's run, the derived backward beside them.
void runBackward(samples::SampleCli& cli, samples::Report& r, const Tensor& x, const Tensor& w, const Tensor& b,
                 double eps) {
  const int64_t rows = x.dim(0), cols = x.dim(1);
  Tensor y = samples::poisoned({rows, cols});
  samples::KernelDefinition forward = samples::layernormKernel(x, w, b, y, eps);
  TracedKernel traced = trace(forward.grid, forward.body, "layernorm");
  launch(traced, forward.grid, cli.runOptions());
  samples::LayerNormGradients g{x, w, Tensor::random({rows, cols}, 4), samples::poisoned({rows, cols}),
                                samples::poisoned({cols}), samples::poisoned({cols})};
  r.time([&] { return samples::layernormBackward(g, eps, cli.runOptions()); });
  std::vector<Tensor> derived =
      samples::timeDerivedBackward(r, traced, forward.grid, {x, w, b}, {{y, g.dOut}}, cli.runOptions());
  if (!cli.check()) return;
  std::vector<double> dy = g.dOut.values(), wv = w.values(), dx(dy.size());
  std::vector<double> dw(static_cast<size_t>(cols)), db(static_cast<size_t>(cols));
  Rows n = normalize(x.values(), rows, cols, eps);
  for (int64_t i = 0; i < rows; ++i) {
    double meanG = 0, meanGX = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const size_t e = size_t(i * cols + j);
      dw[size_t(j)] += dy[e] * n.normalized[e];
      db[size_t(j)] += dy[e];
      meanG += dy[e] * wv[size_t(j)] / double(cols);
      meanGX += dy[e] * wv[size_t(j)] * n.normalized[e] / double(cols);
    }
    for (int64_t j = 0; j < cols; ++j) {
      const size_t e = size_t(i * cols + j);
      dx[e] = n.rstd[size_t(i)] * (dy[e] * wv[size_t(j)] - meanG - n.normalized[e] * meanGX);
    }
  }
  const double tolerance = samples::tolerance(f32, std::max(rows, cols));
  for (const auto& [got, want] : {std::pair{g.dx, &dx}, {g.dWeight, &dw}, {g.dBias, &db}, {derived[0], &dx},
                                  {derived[1], &dw}, {derived[2], &db}})
    r.compare(got, *want, tolerance);
}

}  // namespace

int main(int argc, char** argv) {
  samples::SampleCli cli("layernorm", "Layer norm of each row of X[rows, cols], times weight plus bias");
  int64_t rows = 37, cols = 301;
  bool backward = false;
  cli.app.add_option("--rows", rows)->check(CLI::PositiveNumber);
  cli.app.add_option("--cols", cols)->check(CLI::PositiveNumber);
  cli.app.add_flag("--backward", backward,
                   "time and check the gradients of x, weight and bias: hand-written kernels and the derived backward");
  return cli.main(argc, argv, [&](samples::Report& r) {
    const double eps = 1e-5;
    Tensor x = Tensor::random({rows, cols}, 1, f32, -3.0, 5.0);
    Tensor w = Tensor::random({cols}, 2), b = Tensor::random({cols}, 3), y = samples::poisoned({rows, cols});
    r.dtype = "f32";
    r.shape = std::to_string(rows) + "x" + std::to_string(cols) + (backward ? "-backward" : "");
    r.rateName = "gbps";
    if (backward) {
      r.work = 4.0 * (3 * rows * cols + 2 * cols);  // x and dy read, dx written, the column sums
      return runBackward(cli, r, x, w, b, eps);
    }
    cli.keepOnDevice({&x, &w, &b, &y});
    r.time([&] { return samples::layernorm(x, w, b, y, eps, cli.runOptions()); });
    r.work = 2.0 * 4 * rows * cols;
    if (!cli.check()) return;
    Rows n = normalize(x.values(), rows, cols, eps);
    std::vector<double> wv = w.values(), bv = b.values(), ref(n.normalized.size());
    for (size_t e = 0; e < ref.size(); ++e)
      ref[e] = n.normalized[e] * wv[e % size_t(cols)] + bv[e % size_t(cols)];
    r.compare(y, ref, samples::tolerance(DType::f32, cols));
  });
}
