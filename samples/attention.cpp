// Flash-attention forward (online softmax), causal or not, against float64; with --backward,
// dQ, dK and dV by hand-written FlashAttention-2 kernels and by the backward derived from the
// forward kernel (grad::backward), both against float64, and the speed of each. With an 8-bit
// float --dtype, q, k and v are quantized with scales first and the FP8 kernel runs.
#include <cmath>
#include <cstdio>
#include <limits>

#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

namespace {
// How far an 8-bit P may be from the probability it rounds (P scaled so that the largest is 1):
// a relative half ulp, or half the subnormal step where the kernel's P (times 2^8) is that small.
struct ProbabilityRounding {
  double relative = 0, absolute = 0;
};

// softmax(q kᵀ / sqrt(d)) v for one [seq, dim] head. With `rounding`, also each output's bound
// for P rounded so: sum_j max(relative P_j, absolute) |v_j| / sum_j P_j.
void referenceHead(const double* q, const double* k, const double* v, double* o, int64_t seq, int64_t dim,
                   bool causal, ProbabilityRounding rounding = {}, double* bound = nullptr) {
  std::vector<double> scores(static_cast<size_t>(seq));
  for (int64_t i = 0; i < seq; ++i) {
    int64_t last = causal ? i : seq - 1;
    double maxScore = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t j = 0; j <= last; ++j) {
      double s = 0;
      for (int64_t d = 0; d < dim; ++d) s += q[i * dim + d] * k[j * dim + d];
      scores[j] = s / std::sqrt(static_cast<double>(dim));
      maxScore = std::max(maxScore, scores[j]);
    }
    for (int64_t j = 0; j <= last; ++j) sum += scores[j] = std::exp(scores[j] - maxScore);
    for (int64_t d = 0; d < dim; ++d) {
      double acc = 0, err = 0;
      for (int64_t j = 0; j <= last; ++j) {
        acc += scores[j] * v[j * dim + d];
        err += std::max(rounding.relative * scores[j], rounding.absolute) * std::fabs(v[j * dim + d]);
      }
      o[i * dim + d] = acc / sum;
      if (bound) bound[i * dim + d] = err / sum;
    }
  }
}

// q, k and v for an 8-bit --dtype: f32 values quantized by quantizeFp8 over [batch * heads, seq,
// dim] views (q per row, k and v per kScaleBlock keys; v stored [batch, heads, dim, seq]), as
// [batch, heads, seq, dim] views; returns their scales. Rows grow by 1x, 2x or 4x from one block
// of keys to the next (v's a block on from k's), so that each block's scale matters and k's are
// not v's, and q is 4x k, so that the softmax is peaked.
samples::AttentionScales quantizeInputs(const Shape& shape, DType dtype, const RunOptions& opts, Tensor& q, Tensor& k,
                                        Tensor& v) {
  const int64_t heads = shape[0] * shape[1], seq = shape[2], dim = shape[3], keyBlocks = cdiv(seq, samples::kScaleBlock);
  auto input = [&](uint64_t seed, double magnitude, int64_t firstBlock) {
    std::vector<double> x = Tensor::random({heads, seq, dim}, seed).values();
    for (size_t i = 0; i < x.size(); ++i)
      x[i] *= magnitude * double(1 << ((static_cast<int64_t>(i) / dim % seq / samples::kScaleBlock + firstBlock) % 3));
    return Tensor::from({heads, seq, dim}, x);
  };
  q = Tensor::empty({heads, seq, dim}, dtype);
  k = Tensor::empty({heads, seq, dim}, dtype);
  Tensor vStored = Tensor::empty({heads, dim, seq}, dtype);
  samples::AttentionScales scales{Tensor::empty({heads, seq, 1}), Tensor::empty({heads, keyBlocks, 1}),
                                  Tensor::empty({heads, keyBlocks, 1})};
  samples::quantizeFp8(input(1, 4, 0), q, scales.q, 1, opts);
  samples::quantizeFp8(input(2, 1, 0), k, scales.k, samples::kScaleBlock, opts);
  samples::quantizeFp8(input(3, 1, 1), vStored.transpose(1, 2), scales.v, samples::kScaleBlock, opts);
  q = q.reshape(shape);
  k = k.reshape(shape);
  v = vStored.reshape({shape[0], shape[1], dim, seq}).transpose(2, 3);
  return scales;
}

// The gradients of sum(O * dO) for one head: P = softmax(S), dV = P^T dO, dP = dO V^T,
// dS = P (dP - rowsum(dP P)), dQ = dS K / sqrt(d), dK = dS^T Q / sqrt(d).
void referenceHeadBackward(const double* q, const double* k, const double* v, const double* dOut, double* dq,
                           double* dk, double* dv, int64_t seq, int64_t dim, bool causal) {
  const double scale = 1 / std::sqrt(static_cast<double>(dim));
  std::vector<double> probs(static_cast<size_t>(seq)), dProbs(static_cast<size_t>(seq));
  std::fill(dk, dk + seq * dim, 0.0);
  std::fill(dv, dv + seq * dim, 0.0);
  for (int64_t i = 0; i < seq; ++i) {
    const int64_t last = causal ? i : seq - 1;
    double maxScore = -std::numeric_limits<double>::infinity(), sum = 0, rowDot = 0;
    for (int64_t j = 0; j <= last; ++j) {
      double s = 0;
      for (int64_t d = 0; d < dim; ++d) s += q[i * dim + d] * k[j * dim + d];
      maxScore = std::max(maxScore, probs[j] = s * scale);
    }
    for (int64_t j = 0; j <= last; ++j) sum += probs[j] = std::exp(probs[j] - maxScore);
    for (int64_t j = 0; j <= last; ++j) {
      probs[j] /= sum;
      double dp = 0;
      for (int64_t d = 0; d < dim; ++d) dp += dOut[i * dim + d] * v[j * dim + d];
      rowDot += (dProbs[j] = dp) * probs[j];
    }
    for (int64_t d = 0; d < dim; ++d) dq[i * dim + d] = 0;
    for (int64_t j = 0; j <= last; ++j) {
      const double ds = probs[j] * (dProbs[j] - rowDot);
      for (int64_t d = 0; d < dim; ++d) {
        dv[j * dim + d] += probs[j] * dOut[i * dim + d];
        dq[i * dim + d] += ds * k[j * dim + d] * scale;
        dk[j * dim + d] += ds * q[i * dim + d] * scale;
      }
    }
  }
}

// --backward: the hand-written kernels timed as the sample's run, the derived backward beside them.
void runBackward(samples::SampleCli& cli, samples::Report& r, const Tensor& q, const Tensor& k, const Tensor& v,
                 bool causal, samples::AttentionBlocks blocks) {
  const Shape shape = q.shape();
  Tensor out = samples::poisoned(shape), lse = samples::poisoned({shape[0], shape[1], shape[2]});
  samples::KernelDefinition forward = samples::attentionKernel(q, k, v, out, causal, blocks, lse);
  TracedKernel traced = trace(forward.grid, forward.body, "attention");
  launch(traced, forward.grid, cli.runOptions());
  samples::AttentionGradients g{q, k, v, out, lse, Tensor::random(shape, 4), samples::poisoned(shape),
                                samples::poisoned(shape), samples::poisoned(shape)};
  r.time([&] { return samples::attentionBackward(g, causal, cli.runOptions(), blocks); });
  std::vector<Tensor> derived =
      samples::timeDerivedBackward(r, traced, forward.grid, {q, k, v}, {{out, g.dOut}}, cli.runOptions());
  if (!cli.check()) return;
  const int64_t heads = shape[0] * shape[1], seq = shape[2], dim = shape[3];
  std::vector<double> qv = q.values(), kv = k.values(), vv = v.values(), dOut = g.dOut.values();
  std::vector<double> dq(qv.size()), dk(qv.size()), dv(qv.size());
  for (int64_t h = 0; h < heads; ++h) {
    const size_t at = static_cast<size_t>(h * seq * dim);
    referenceHeadBackward(&qv[at], &kv[at], &vv[at], &dOut[at], &dq[at], &dk[at], &dv[at], seq, dim, causal);
  }
  const double tolerance = samples::tolerance(f32, seq + dim);
  for (const auto& [got, want] : {std::pair{g.dq, &dq}, {g.dk, &dk}, {g.dv, &dv}, {derived[0], &dq},
                                  {derived[1], &dk}, {derived[2], &dv}})
    r.compare(got, *want, tolerance);
}

}  // namespace

int main(int argc, char** argv) {
  samples::SampleCli cli("attention", "Attention forward: softmax(Q Kᵀ / sqrt(d)) V per batch and head");
  int64_t batch = 1, heads = 2, seq = 97, dim = 64;
  bool causal = false;
  cli.app.add_option("--batch", batch)->check(CLI::PositiveNumber);
  cli.app.add_option("--heads", heads)->check(CLI::PositiveNumber);
  cli.app.add_option("--seq", seq, "sequence length")->check(CLI::PositiveNumber);
  cli.app.add_option("--dim", dim, "head dimension")->check(CLI::PositiveNumber);
  cli.app.add_flag("--causal", causal, "mask keys after the query position");
  bool backward = false;
  cli.app.add_flag("--backward", backward,
                   "time and check dQ, dK, dV: hand-written FlashAttention-2 kernels and the derived backward (f32)");
  std::string dtypeName = "f32";
  cli.app.add_option("--dtype", dtypeName,
                     "q, k, v dtype (products accumulate in f32; out is f32); f8e4m3 and f8e5m2 quantize them with scales")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "f8e4m3", "f8e5m2"}));
  samples::AttentionBlocks blocks;
  // Blocks given on the command line are used as they are; otherwise they are autotuned.
  cli.addBlockOptions({{"m", "query rows of a block", &blocks.m}, {"n", "keys per step of the loop", &blocks.n}},
                      blocks.stages, blocks.warps, blocks.specialize);
  cli.addBlockFlag("--overlap-softmax", blocks.overlapSoftmax,
                   "each step multiplies the previous key block's probabilities by its values, so that on Hopper the "
                   "product runs while this block's softmax does (FlashAttention-3's pipelining; one step more on every "
                   "device; default: off)");
  return cli.main(argc, argv, [&](samples::Report& r) {
    Shape shape{batch, heads, seq, dim};
    DType dtype = samples::parseDTypeOption(dtypeName);
    if (backward && dtype != f32) throw Error("attention --backward: gradients are f32 here, not " + dtypeName);
    if (backward && blocks.overlapSoftmax)
      throw Error("attention --backward: the backward kernels take the plain key loop, not --overlap-softmax's");
    Tensor q, k, v, o = samples::poisoned(shape);
    samples::AttentionScales scales;
    if (isFloat8(dtype)) {
      scales = quantizeInputs(shape, dtype, cli.runOptions(), q, k, v);
    } else {
      q = Tensor::random(shape, 1, dtype), k = Tensor::random(shape, 2, dtype), v = Tensor::random(shape, 3, dtype);
    }
    cli.keepOnDevice({&q, &k, &v, &o, &scales.q, &scales.k, &scales.v});
    if (cli.blocksGiven()) {
      r.tune = "off";
    } else {
      TuneResult tuned = samples::tuneAttention(q, k, v, o, causal, cli.runOptions(), {}, scales);
      blocks = samples::AttentionBlocks::from(tuned.chosen);
      r.tune = tuneSourceName(tuned.source);
    }
    r.dtype = dtypeName;
    if (backward) {
      r.shape = std::to_string(batch) + "x" + std::to_string(heads) + "x" + std::to_string(seq) + "x" +
                std::to_string(dim) + (causal ? "-causal" : "") + "-backward";
      r.work = 10.0 * batch * heads * seq * seq * dim * (causal ? 0.5 : 1.0);  // five products of the forward's size
      return runBackward(cli, r, q, k, v, causal, blocks);
    }
    r.time([&] { return samples::attention(q, k, v, o, causal, cli.runOptions(), blocks, scales); });
    r.shape = std::to_string(batch) + "x" + std::to_string(heads) + "x" + std::to_string(seq) + "x" +
              std::to_string(dim) + (causal ? "-causal" : "");
    r.work = 4.0 * batch * heads * seq * seq * dim * (causal ? 0.5 : 1.0);
    if (!cli.check()) return;
    const bool quantized = isFloat8(dtype);
    auto values = [&](const Tensor& x, const Tensor& scale, int64_t blockRows) {  // 8-bit: as quantizeFp8's stacks
      return quantized ? samples::dequantize(x.contiguous().reshape({batch * heads, seq, dim}), scale, blockRows) : x.values();
    };
    std::vector<double> qv = values(q, scales.q, 1), kv = values(k, scales.k, samples::kScaleBlock),
                        vv = values(v, scales.v, samples::kScaleBlock), ref(qv.size()), bound(qv.size());
    ProbabilityRounding rounding;
    if (quantized) {  // P times 2^8 in the 8-bit float: half an ulp, or half its subnormal step
      const Float8Format f = float8Format(dtype);
      rounding = {std::ldexp(1.0, -(f.mantissaBits + 1)), std::ldexp(1.0, -f.bias - f.mantissaBits - 8)};
    }
    for (int64_t h = 0; h < batch * heads; ++h) {
      size_t off = static_cast<size_t>(h * seq * dim);
      referenceHead(&qv[off], &kv[off], &vv[off], &ref[off], seq, dim, causal, rounding, &bound[off]);
    }
    // 8-bit: P's rounding (the inputs' is the reference's too) as a share of the largest output.
    double largest = 0, worstBound = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      largest = std::max(largest, std::fabs(ref[i]));
      worstBound = std::max(worstBound, bound[i]);
    }
    r.compare(o, ref, samples::tolerance(quantized ? f32 : dtype, seq + dim) + worstBound / std::max(largest, 1e-30));
  });
}
