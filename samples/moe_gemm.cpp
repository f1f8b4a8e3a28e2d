// A grouped GEMM as mixture-of-experts layers run it: the rows routed to each expert are
// contiguous, their offsets come from a tensor, and one launch multiplies every group by its
// expert's weights. Tiles past a group's rows skip their work; groups may be empty.
#include <algorithm>
#include <random>

#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("moe_gemm", "Grouped GEMM: each group of rows times its expert's weights, in one launch");
  int64_t experts = 8, tokens = 2048, k = 512, n = 1024;
  cli.app.add_option("--experts", experts, "groups")->check(CLI::Range(int64_t{1}, int64_t{1024}));
  cli.app.add_option("--tokens", tokens, "rows in all")->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  cli.app.add_option("--k", k, "input features")->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  cli.app.add_option("--n", n, "output features")->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  return cli.main(argc, argv, [&](samples::Report& r) {
    // Uneven groups, one of them empty when there are two or more.
    std::mt19937_64 gen(11);
    std::vector<double> offsets = {0};
    std::vector<int64_t> cuts;
    for (int64_t g = 1; g < experts; ++g) cuts.push_back(int64_t(gen() % uint64_t(tokens + 1)));
    if (experts > 1) cuts.push_back(cuts.front());
    std::sort(cuts.begin(), cuts.end());
    for (int64_t c : cuts) offsets.push_back(double(c));
    offsets.resize(size_t(experts));
    offsets.push_back(double(tokens));
    int64_t maxRows = 0;
    for (size_t g = 0; g + 1 < offsets.size(); ++g) maxRows = std::max(maxRows, int64_t(offsets[g + 1] - offsets[g]));
    Tensor x = Tensor::random({tokens, k}, 1), w = Tensor::random({experts, k, n}, 2),
           groups = Tensor::from({experts + 1}, offsets, DType::i32), out = samples::poisoned({tokens, n});
    cli.keepOnDevice({&x, &w, &groups, &out});
    r.time([&] { return samples::moeGemm(x, w, groups, maxRows, out, cli.runOptions()); });
    r.dtype = "f32";
    r.shape = std::to_string(experts) + "x" + std::to_string(tokens) + "x" + std::to_string(k) + "x" + std::to_string(n);
    r.work = 2.0 * double(tokens) * double(k) * double(n);
    if (!cli.check()) return;
    std::vector<double> xv = x.values(), wv = w.values(), ref(size_t(tokens * n), 0.0);
    for (int64_t g = 0; g < experts; ++g)
      for (auto row = int64_t(offsets[size_t(g)]); row < int64_t(offsets[size_t(g) + 1]); ++row)
        for (int64_t kk = 0; kk < k; ++kk)
          for (int64_t col = 0; col < n; ++col)
            ref[size_t(row * n + col)] += xv[size_t(row * k + kk)] * wv[size_t((g * k + kk) * n + col)];
    r.compare(out, ref, samples::tolerance(DType::f32, k));
  });
}
