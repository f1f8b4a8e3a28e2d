// Row softmax against float64.
#include <cmath>

#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("softmax", "Softmax over each row of X[rows, cols]");
  int64_t rows = 37, cols = 301;
  cli.app.add_option("--rows", rows)->check(CLI::PositiveNumber);
  cli.app.add_option("--cols", cols)->check(CLI::PositiveNumber);
  return cli.main(argc, argv, [&](samples::Report& r) {
    Tensor x = Tensor::random({rows, cols}, 1, f32, -8.0, 8.0), y = samples::poisoned({rows, cols});
    cli.keepOnDevice({&x, &y});
    r.time([&] { return samples::softmax(x, y, cli.runOptions()); });
    r.dtype = "f32";
    r.shape = std::to_string(rows) + "x" + std::to_string(cols);
    r.rateName = "gbps";
    r.work = 2.0 * 4 * rows * cols;
    if (!cli.check()) return;
    std::vector<double> xv = x.values(), ref(xv.size());
    for (int64_t i = 0; i < rows; ++i) {
      double* row = &ref[static_cast<size_t>(i * cols)];
      double maxV = xv[static_cast<size_t>(i * cols)], sum = 0;
      for (int64_t j = 0; j < cols; ++j) maxV = std::max(maxV, xv[static_cast<size_t>(i * cols + j)]);
      for (int64_t j = 0; j < cols; ++j) sum += row[j] = std::exp(xv[static_cast<size_t>(i * cols + j)] - maxV);
      for (int64_t j = 0; j < cols; ++j) row[j] /= sum;
    }
    r.compare(y, ref, samples::tolerance(DType::f32, cols));
  });
}
