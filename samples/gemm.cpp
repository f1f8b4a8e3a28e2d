// C = A·B for any M, N, K: the tile kernel of samples/kernels.cpp against float64. With an
// 8-bit float --dtype, A and B are quantized with scales first and the scaled product runs;
// with i8 or u8, A of that dtype times B of i8 accumulates exactly into an i32 C.
#include <cmath>

#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

namespace {

// A·B of row-major values, in float64 (exact for the integer dtypes).
std::vector<double> product(const std::vector<double>& av, const std::vector<double>& bv, int64_t m, int64_t n, int64_t k) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += av[i * k + p] * bv[p * n + j];
  return c;
}

// How far a dequantized element may be from the value it quantizes: half an ulp of the 8-bit
// float (relative 2^-(mantissa + 1)), or half the subnormal step, in units of the scale.
void checkQuantized(const Tensor& x, const std::vector<double>& dequantized, DType dtype,
                    const Tensor& scale, int64_t blockRows) {
  const Float8Format f = float8Format(dtype);
  const std::vector<double> v = x.values(), s = samples::elementScales(scale, x.shape(), blockRows);
  double worst = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    double bound = std::ldexp(std::fabs(v[i]), -(f.mantissaBits + 1)) * (1 + 1e-6) +
                   std::ldexp(s[i], -f.bias - f.mantissaBits);
    worst = std::max(worst, std::fabs(dequantized[i] - v[i]) / bound);
  }
  if (!(worst <= 1.0))
    throw Error("gemm: quantized " + std::string(dtypeName(dtype)) + " elements are " + std::to_string(worst) +
                " times further from their f32 values than rounding allows");
}

// A [m, k] and B [k, n] quantized (per row and K block and per 128x128 block, or per tensor),
// B stored [n, k] as a linear layer's weights are (and torch._scaled_mm takes them); then C =
// the scaled product, checked against float64 products of the dequantized values.
void scaledGemm(samples::SampleCli& cli, samples::Report& r, DType dtype, int64_t m, int64_t n, int64_t k,
                bool perTensor, samples::GemmBlocks blocks) {
  using samples::kScaleBlock;
  Tensor a32 = Tensor::random({m, k}, 1, f32, -3, 3), b32 = Tensor::random({k, n}, 2, f32, -0.5, 0.5);
  Tensor a = Tensor::empty({m, k}, dtype), bStored = Tensor::empty({n, k}, dtype);
  Tensor aScale = Tensor::empty({m, cdiv(k, kScaleBlock)}), bStoredScale = Tensor::empty({cdiv(n, kScaleBlock), cdiv(k, kScaleBlock)});
  Tensor b32Stored = b32.transpose().contiguous();
  if (perTensor) {
    double sa, sb;
    std::tie(a, sa) = samples::quantizePerTensor(a32, dtype);
    std::tie(bStored, sb) = samples::quantizePerTensor(b32Stored, dtype);
    aScale = Tensor::full({1, 1}, sa), bStoredScale = Tensor::full({1, 1}, sb);
  } else {
    samples::quantizeFp8(a32, a, aScale, 1, cli.runOptions());
    samples::quantizeFp8(b32Stored, bStored, bStoredScale, kScaleBlock, cli.runOptions());
  }
  Tensor b = bStored.transpose(), bScale = bStoredScale.transpose();
  Tensor c = samples::poisoned({m, n});
  cli.keepOnDevice({&a, &aScale, &b, &bScale, &c});
  r.tune = "off";
  r.time([&] { return samples::scaledGemm(a, aScale, b, bScale, c, cli.runOptions(), blocks); });
  r.dtype = std::string(dtypeName(dtype)) + (perTensor ? "_tensor_scales" : "_block_scales");
  r.shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  r.work = 2.0 * m * n * k;
  if (!cli.check()) return;
  std::vector<double> av = samples::dequantize(a, aScale, 1), bv = samples::dequantize(b, bScale, kScaleBlock);
  checkQuantized(a32, av, dtype, aScale, 1);
  checkQuantized(b32, bv, dtype, bScale, kScaleBlock);
  r.compare(c, product(av, bv, m, n, k), samples::tolerance(DType::f32, k));
}

}  // namespace

int main(int argc, char** argv) {
  samples::SampleCli cli("gemm", "Matrix product C[M,N] = A[M,K] B[K,N]");
  int64_t m = 257, n = 191, k = 129;
  std::string dtypeName = "f32";
  cli.app.add_option("--m", m, "rows of A and C")->check(CLI::PositiveNumber);
  cli.app.add_option("--n", n, "columns of B and C")->check(CLI::PositiveNumber);
  cli.app.add_option("--k", k, "columns of A, rows of B")->check(CLI::PositiveNumber);
  cli.app.add_option("--dtype", dtypeName,
                     "operand dtype (C is f32, but i32 for i8 and u8); f8e4m3 and f8e5m2 quantize A and B with "
                     "scales; i8 and u8 multiply A of that dtype by B of i8")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "f8e4m3", "f8e5m2", "i8", "u8"}));
  std::string scales = "block";
  cli.app.add_option("--scales", scales, "8-bit floats: block (per row and 128 K for A, 128x128 for B) or tensor")
      ->check(CLI::IsMember({"block", "tensor"}));
  int64_t splits = 1;
  cli.app.add_option("--split-k", splits, "programs sharing each C block's K loop, adding into C atomically")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  samples::GemmBlocks blocks;
  // Blocks given on the command line are used as they are; otherwise they are autotuned.
  cli.addBlockOptions({{"m", "rows of a C block", &blocks.m},
                       {"n", "columns of a C block", &blocks.n},
                       {"k", "depth of one step of the K loop", &blocks.k}},
                      blocks.stages, blocks.warps, blocks.specialize);
  return cli.main(argc, argv, [&](samples::Report& r) {
    DType dtype = samples::parseDTypeOption(dtypeName);
    if (isFloat8(dtype)) {
      if (!cli.blocksGiven()) blocks = samples::scaledGemmBlocks(cli.runOptions());
      return scaledGemm(cli, r, dtype, m, n, k, scales == "tensor", blocks);
    }
    const bool integer = dtype == DType::i8 || dtype == DType::u8;
    if (integer && splits > 1)
      throw Error("--split-k=" + std::to_string(splits) + " adds f32 partial products, and --dtype=" + dtypeName +
                  " accumulates in i32; run it without --split-k");
    auto [a, b, cType] = samples::gemmOperands(dtype, m, n, k);
    Tensor c = samples::poisoned({m, n}, cType);
    cli.keepOnDevice({&a, &b, &c});
    if (cli.blocksGiven()) {
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
    r.compare(c, product(a.values(), b.values(), m, n, k), integer ? 0 : samples::tolerance(DType::f32, k));
  });
}
