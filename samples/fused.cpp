// A fused elementwise chain, relu(a * b + c), in one kernel.
#include <algorithm>

#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("fused", "relu(a * b + c) over vectors of any length");
  int64_t n = 100003;
  cli.app.add_option("--n", n, "length")->check(CLI::PositiveNumber);
  return cli.main(argc, argv, [&](samples::Report& r) {
    Tensor a = Tensor::random({n}, 1), b = Tensor::random({n}, 2), c = Tensor::random({n}, 3);
    Tensor out = samples::poisoned({n});
    cli.keepOnDevice({&a, &b, &c, &out});
    r.time([&] { return samples::fused(a, b, c, out, cli.runOptions()); });
    r.dtype = "f32";
    r.shape = std::to_string(n);
    r.rateName = "gbps";
    r.work = 4.0 * 4 * n;
    if (!cli.check()) return;
    std::vector<double> av = a.values(), bv = b.values(), cv = c.values(), ref(av.size());
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = std::max(av[i] * bv[i] + cv[i], 0.0);
    r.compare(out, ref, samples::tolerance(DType::f32, 2));
  });
}
