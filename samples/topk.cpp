// The k largest elements of each row and their columns (torch.topk; Triton's tl.topk): one
// sort per row, in the kernel, instead of k rounds of argmax.
#include <algorithm>
#include <numeric>

#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("topk", "The k largest elements of each row of a matrix, and their columns");
  int64_t rows = 4096, cols = 1024, k = 8;
  cli.app.add_option("--rows", rows, "rows")->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  cli.app.add_option("--cols", cols, "columns")->check(CLI::Range(int64_t{1}, int64_t{1} << 14));
  cli.app.add_option("--k", k, "elements kept per row (at most --cols)")->check(CLI::Range(int64_t{1}, int64_t{1} << 14));
  return cli.main(argc, argv, [&](samples::Report& r) {
    if (k > cols) throw Error("topk: --k=" + std::to_string(k) + " is more than the " + std::to_string(cols) + " columns");
    // Integers in [-50, 50] as floats: many equal elements, so the order among equals is checked too.
    Tensor x = Tensor::from({rows, cols}, Tensor::random({rows, cols}, 1, DType::i32, -50, 50).values());
    Tensor values = samples::poisoned({rows, k}), indices = Tensor::full({rows, k}, -1, DType::i32);
    cli.keepOnDevice({&x, &values, &indices});
    r.time([&] { return samples::topk(x, k, values, indices, cli.runOptions()); });
    r.dtype = "f32";
    r.shape = std::to_string(rows) + "x" + std::to_string(cols) + " k=" + std::to_string(k);
    r.rateName = "gbps";
    r.work = 4.0 * double(rows * cols);
    if (!cli.check()) return;
    std::vector<double> xv = x.values(), wantValues, wantIndices;
    std::vector<int64_t> order(static_cast<size_t>(cols));
    for (int64_t i = 0; i < rows; ++i) {
      const double* row = xv.data() + i * cols;
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
      for (int64_t j = 0; j < k; ++j) {
        wantValues.push_back(row[order[size_t(j)]]);
        wantIndices.push_back(double(order[size_t(j)]));
      }
    }
    r.compare(values, wantValues, 0);
    r.compare(indices, wantIndices, 0);
  });
}
