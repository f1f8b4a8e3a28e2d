// Dropout with random numbers drawn in the kernel (Philox, as Triton's tl.rand): nothing but
// the seed is kept to redraw the mask.
#include "samples/harness.hpp"
#include "samples/kernels.hpp"
#include "samples/philox_reference.hpp"

using namespace tj;

int main(int argc, char** argv) {
  samples::SampleCli cli("dropout", "Dropout of a vector, its mask drawn from a seed");
  int64_t n = 100003, seed = 20261201;
  double p = 0.3;
  cli.app.add_option("--n", n, "length")->check(CLI::Range(int64_t{1}, int64_t{1} << 31));
  cli.app.add_option("--p", p, "probability of dropping an element")->check(CLI::Range(0.0, 0.999));
  cli.app.add_option("--seed", seed, "the 64-bit seed");
  return cli.main(argc, argv, [&](samples::Report& r) {
    Tensor x = Tensor::random({n}, 1), out = samples::poisoned({n});
    cli.keepOnDevice({&x, &out});
    r.time([&] { return samples::dropout(x, out, p, seed, cli.runOptions()); });
    r.dtype = "f32";
    r.shape = std::to_string(n);
    r.rateName = "gbps";
    r.work = 2.0 * 4 * n;
    if (!cli.check()) return;
    std::vector<double> xv = x.values(), ref(xv.size());
    const float keepScale = 1.0f - float(p);
    for (size_t i = 0; i < ref.size(); ++i) {
      float u = samples::uniformOf(samples::tritonRandint4x(uint64_t(seed), int32_t(i))[0]);
      ref[i] = u > float(p) ? double(float(xv[i]) / keepScale) : 0.0;
    }
    r.compare(out, ref, samples::tolerance(DType::f32, 1));
  });
}
