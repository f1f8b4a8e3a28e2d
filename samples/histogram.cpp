// A histogram by atomic adds: each program counts its block of values (tj::histogram) and
// adds its counts to the bins (up to 4096 bins; past that every value bumps its bin).
// Values outside [0, bins) are dropped, as scatter drops them.
#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("histogram", "Counts of i32 values in bins, by atomic adds");
  int64_t n = 1000003, bins = 1024;
  cli.app.add_option("--n", n, "values")->check(CLI::Range(int64_t{1}, int64_t{1} << 31));
  cli.app.add_option("--bins", bins, "bins")->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  return cli.main(argc, argv, [&](samples::Report& r) {
    Tensor values = Tensor::random({n}, 1, DType::i32, -2, double(bins + 1));  // a few outside the bins
    Tensor counts = Tensor::zeros({bins}, DType::i32);
    cli.keepOnDevice({&values, &counts});
    int runs = 0;
    r.time([&] {
      ++runs;
      return samples::histogram(values, counts, cli.runOptions());
    });
    r.dtype = "i32";
    r.shape = std::to_string(n) + "_into_" + std::to_string(bins);
    r.rateName = "gelems";  // G values counted per second
    r.work = double(n);
    if (!cli.check()) return;
    std::vector<double> vv = values.values(), ref(size_t(bins), 0.0);
    for (double v : vv)
      if (v >= 0 && v < double(bins)) ref[size_t(v)] += runs;  // every timed run added its counts
    r.compare(counts, ref, 0);
  });
}
