// C = A·B for any M, N, K: the tile kernel of samples/kernels.cpp against float64.
#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("gemm", "Matrix product C[M,N] = A[M,K] B[K,N]");
  int64_t m = 257, n = 191, k = 129;
  std::string dtypeName = "f32";
  cli.app.add_option("--m", m, "rows of A and C")->check(CLI::PositiveNumber);
  cli.app.add_option("--n", n, "columns of B and C")->check(CLI::PositiveNumber);
  cli.app.add_option("--k", k, "columns of A, rows of B")->check(CLI::PositiveNumber);
  cli.app.add_option("--dtype", dtypeName, "operand dtype (C is f32)")->check(CLI::IsMember({"f32", "f16", "bf16"}));
  int64_t splits = 1;
  cli.app.add_option("--split-k", splits, "programs sharing each C block's K loop, adding into C atomically")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  samples::GemmBlocks blocks;
  // Blocks given on the command line are used as they are; otherwise they are autotuned.
  cli.app.add_option("--block-m", blocks.m, "rows of a C block (default: tuned)")->check(CLI::PositiveNumber);
  cli.app.add_option("--block-n", blocks.n, "columns of a C block (default: tuned)")->check(CLI::PositiveNumber);
  cli.app.add_option("--block-k", blocks.k, "depth of one step of the K loop (default: tuned)")->check(CLI::PositiveNumber);
  return cli.main(argc, argv, [&](samples::Report& r) {
    DType dtype = samples::parseDTypeOption(dtypeName);
    Tensor a = Tensor::random({m, k}, 1, dtype), b = Tensor::random({k, n}, 2, dtype);
    Tensor c = samples::poisoned({m, n});
    if (cli.app.count("--block-m") + cli.app.count("--block-n") + cli.app.count("--block-k") > 0) {
      r.tune = "off";
    } else {
      TuneResult tuned = splits == 1 ? samples::tuneGemm(a, b, c, cli.runOptions())
                                     : samples::tuneGemmSplitK(a, b, c, splits, cli.runOptions());
      blocks = samples::GemmBlocks::from(tuned.chosen);
      r.tune = tuneSourceName(tuned.source);
    }
    r.time([&] {
      if (splits == 1) return samples::gemm(a, b, c, cli.runOptions(), blocks);
      c = Tensor::zeros({m, n});  // the partial products add into it: timed with the kernel
      return samples::gemmSplitK(a, b, c, splits, cli.runOptions(), blocks);
    });
    r.dtype = dtypeName;
    r.shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
              (splits > 1 ? "_split" + std::to_string(splits) : "");
    r.work = 2.0 * m * n * k;
    if (!cli.check()) return;
    std::vector<double> av = a.values(), bv = b.values(), ref(static_cast<size_t>(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) ref[i * n + j] += av[i * k + p] * bv[p * n + j];
    r.compare(c, ref, samples::tolerance(DType::f32, k));
  });
}
