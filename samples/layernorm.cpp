// Layer normalization over rows, with weight and bias, against float64.
#include <cmath>

#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("layernorm", "Layer norm of each row of X[rows, cols], times weight plus bias");
  int64_t rows = 37, cols = 301;
  cli.app.add_option("--rows", rows)->check(CLI::PositiveNumber);
  cli.app.add_option("--cols", cols)->check(CLI::PositiveNumber);
  return cli.main(argc, argv, [&](samples::Report& r) {
    const double eps = 1e-5;
    Tensor x = Tensor::random({rows, cols}, 1, f32, -3.0, 5.0);
    Tensor w = Tensor::random({cols}, 2), b = Tensor::random({cols}, 3), y = samples::poisoned({rows, cols});
    cli.keepOnDevice({&x, &w, &b, &y});
    r.time([&] { return samples::layernorm(x, w, b, y, eps, cli.runOptions()); });
    r.dtype = "f32";
    r.shape = std::to_string(rows) + "x" + std::to_string(cols);
    r.rateName = "gbps";
    r.work = 2.0 * 4 * rows * cols;
    if (!cli.check()) return;
    std::vector<double> xv = x.values(), wv = w.values(), bv = b.values(), ref(xv.size());
    for (int64_t i = 0; i < rows; ++i) {
      const double* row = &xv[static_cast<size_t>(i * cols)];
      double mean = 0, var = 0;
      for (int64_t j = 0; j < cols; ++j) mean += row[j] / static_cast<double>(cols);
      for (int64_t j = 0; j < cols; ++j) var += (row[j] - mean) * (row[j] - mean) / static_cast<double>(cols);
      for (int64_t j = 0; j < cols; ++j)
        ref[static_cast<size_t>(i * cols + j)] = (row[j] - mean) / std::sqrt(var + eps) * wv[j] + bv[j];
    }
    r.compare(y, ref, samples::tolerance(DType::f32, cols));
  });
}
