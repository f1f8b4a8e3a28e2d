// Prefix sums of each row (Triton's tl.cumsum): one scan per row, no triangular matrix.
#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("cumsum", "Prefix sums of each row of a matrix");
  int64_t rows = 4096, cols = 1024;
  cli.app.add_option("--rows", rows, "rows")->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  cli.app.add_option("--cols", cols, "columns")->check(CLI::Range(int64_t{1}, int64_t{1} << 14));
  return cli.main(argc, argv, [&](samples::Report& r) {
    Tensor x = Tensor::random({rows, cols}, 1), out = samples::poisoned({rows, cols});
    cli.keepOnDevice({&x, &out});
    r.time([&] { return samples::cumsum(x, out, cli.runOptions()); });
    r.dtype = "f32";
    r.shape = std::to_string(rows) + "x" + std::to_string(cols);
    r.rateName = "gbps";
    r.work = 2.0 * 4 * double(rows * cols);
    if (!cli.check()) return;
    std::vector<double> xv = x.values(), ref(xv.size());
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        ref[size_t(i * cols + j)] = xv[size_t(i * cols + j)] + (j > 0 ? ref[size_t(i * cols + j - 1)] : 0.0);
    r.compare(out, ref, samples::tolerance(DType::f32, cols));
  });
}
