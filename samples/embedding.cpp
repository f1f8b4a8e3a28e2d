// An embedding lookup: rows of a table selected by int32 ids, read through p.gather. Ids
// outside the table (every 17th is -1 here, a padding id) read rows of zeros.
#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("embedding", "Rows of a table selected by ids");
  int64_t vocab = 10007, dim = 768, n = 4099;
  cli.app.add_option("--vocab", vocab, "rows of the table")->check(CLI::Range(int64_t{1}, int64_t{1} << 31));
  cli.app.add_option("--dim", dim, "columns of the table")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cli.app.add_option("--n", n, "ids looked up")->check(CLI::Range(int64_t{1}, int64_t{1} << 31));
  return cli.main(argc, argv, [&](samples::Report& r) {
    Tensor table = Tensor::random({vocab, dim}, 1), ids = Tensor::random({n}, 2, DType::i32, 0, double(vocab - 1));
    for (int64_t i = 0; i < n; i += 17) ids.setItem(i, -1);
    Tensor out = samples::poisoned({n, dim});
    cli.keepOnDevice({&table, &ids, &out});
    r.time([&] { return samples::embedding(table, ids, out, cli.runOptions()); });
    r.dtype = "f32";
    r.shape = std::to_string(n) + "x" + std::to_string(dim) + "_of_" + std::to_string(vocab);
    r.rateName = "gbps";
    r.work = 2.0 * 4 * double(n * dim) + 4.0 * double(n);  // rows read and written, ids read
    if (!cli.check()) return;
    std::vector<double> tv = table.values(), iv = ids.values(), ref(size_t(n * dim), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      auto id = int64_t(iv[size_t(i)]);
      if (id < 0 || id >= vocab) continue;
      std::copy_n(tv.begin() + id * dim, dim, ref.begin() + i * dim);
    }
    r.compare(out, ref, 0);
  });
}
