// Decode attention over a paged KV cache: each sequence's keys and values live in fixed-size
// pages scattered through one cache, found through its row of the block table; sequences
// of different lengths share one launch and no page past a sequence's end is read.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("paged_attention", "Decode attention through a block table into a paged KV cache");
  int64_t batch = 8, heads = 8, dim = 64, page = 16, maxSeq = 1000;
  cli.app.add_option("--batch", batch, "sequences")->check(CLI::Range(int64_t{1}, int64_t{4096}));
  cli.app.add_option("--heads", heads, "heads")->check(CLI::Range(int64_t{1}, int64_t{256}));
  cli.app.add_option("--dim", dim, "head dimension")->check(CLI::Range(int64_t{1}, int64_t{512}));
  cli.app.add_option("--page", page, "tokens per page")->check(CLI::Range(int64_t{1}, int64_t{256}));
  cli.app.add_option("--max-seq", maxSeq, "longest sequence; lengths are drawn in [1, max-seq]")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  return cli.main(argc, argv, [&](samples::Report& r) {
    std::mt19937_64 gen(7);
    std::vector<int64_t> lengths(static_cast<size_t>(batch)), firstPage(static_cast<size_t>(batch) + 1, 0);
    for (int64_t b = 0; b < batch; ++b) {
      lengths[size_t(b)] = 1 + int64_t(gen() % uint64_t(maxSeq));
      firstPage[size_t(b) + 1] = firstPage[size_t(b)] + (lengths[size_t(b)] + page - 1) / page;
    }
    int64_t used = firstPage.back(), pages = used + 3, maxPages = (maxSeq + page - 1) / page;
    std::vector<int64_t> order(static_cast<size_t>(pages));  // cache pages handed out in a shuffled order
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), gen);
    std::vector<double> table(size_t(batch * maxPages), -1.0), lens(lengths.begin(), lengths.end());
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = firstPage[size_t(b)]; j < firstPage[size_t(b) + 1]; ++j)
        table[size_t(b * maxPages + j - firstPage[size_t(b)])] = double(order[size_t(j)]);
    Tensor q = Tensor::random({batch, heads, dim}, 1), kCache = Tensor::random({pages, heads, page, dim}, 2),
           vCache = Tensor::random({pages, heads, page, dim}, 3), out = samples::poisoned({batch, heads, dim});
    Tensor blockTable = Tensor::from({batch, maxPages}, table, DType::i32), seqLens = Tensor::from({batch}, lens, DType::i32);
    cli.keepOnDevice({&q, &kCache, &vCache, &out, &blockTable, &seqLens});
    r.time([&] { return samples::pagedAttention(q, kCache, vCache, blockTable, seqLens, out, cli.runOptions()); });
    r.dtype = "f32";
    r.shape = std::to_string(batch) + "x" + std::to_string(heads) + "x" + std::to_string(dim) + "_page" + std::to_string(page);
    r.rateName = "gbps";  // the cache bytes read
    r.work = 2.0 * 4 * double(std::accumulate(lengths.begin(), lengths.end(), int64_t{0}) * heads * dim);
    if (!cli.check()) return;
    std::vector<double> qv = q.values(), kv = kCache.values(), vv = vCache.values(), ref(size_t(batch * heads * dim));
    auto at = [&](int64_t b, int64_t h, int64_t t, int64_t d) {  // token t of sequence b in the cache
      int64_t pg = int64_t(table[size_t(b * maxPages + t / page)]);
      return size_t(((pg * heads + h) * page + t % page) * dim + d);
    };
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        int64_t n = lengths[size_t(b)];
        std::vector<double> s(static_cast<size_t>(n));
        for (int64_t t = 0; t < n; ++t) {
          double dotq = 0;
          for (int64_t d = 0; d < dim; ++d) dotq += qv[size_t((b * heads + h) * dim + d)] * kv[at(b, h, t, d)];
          s[size_t(t)] = dotq / std::sqrt(double(dim));
        }
        double top = *std::max_element(s.begin(), s.end()), total = 0;
        for (double& x : s) total += x = std::exp(x - top);
        for (int64_t d = 0; d < dim; ++d) {
          double o = 0;
          for (int64_t t = 0; t < n; ++t) o += s[size_t(t)] * vv[at(b, h, t, d)];
          ref[size_t((b * heads + h) * dim + d)] = o / total;
        }
      }
    r.compare(out, ref, samples::tolerance(DType::f32, maxSeq));
  });
}
