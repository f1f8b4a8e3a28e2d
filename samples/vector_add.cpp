// out = a + b over a vector of any length.
#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("vector_add", "Elementwise sum of two vectors");
  int64_t n = 100003;
  cli.app.add_option("--n", n, "length")->check(CLI::PositiveNumber);
  return cli.main(argc, argv, [&](samples::Report& r) {
    Tensor a = Tensor::random({n}, 1), b = Tensor::random({n}, 2), out = samples::poisoned({n});
    cli.keepOnDevice({&a, &b, &out});
    r.time([&] { return samples::vectorAdd(a, b, out, cli.runOptions()); });
    r.dtype = "f32";
    r.shape = std::to_string(n);
    r.rateName = "gbps";
    r.work = 3.0 * 4 * n;
    if (!cli.check()) return;
    std::vector<double> av = a.values(), bv = b.values(), ref(av.size());
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = av[i] + bv[i];
    r.compare(out, ref, samples::tolerance(DType::f32, 1));
  });
}
