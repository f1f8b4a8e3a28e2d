// Flash-attention forward (online softmax), causal or not, against float64.
#include <cmath>
#include <limits>

#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

namespace {
// softmax(q kᵀ / sqrt(d)) v for one [seq, dim] head.
void referenceHead(const double* q, const double* k, const double* v, double* o, int64_t seq, int64_t dim,
                   bool causal) {
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
      double acc = 0;
      for (int64_t j = 0; j <= last; ++j) acc += scores[j] * v[j * dim + d];
      o[i * dim + d] = acc / sum;
    }
  }
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
  std::string dtypeName = "f32";
  cli.app.add_option("--dtype", dtypeName, "q, k, v dtype (products accumulate in f32; out is f32)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  samples::AttentionBlocks blocks;
  // Blocks given on the command line are used as they are; otherwise they are autotuned.
  cli.app.add_option("--block-m", blocks.m, "query rows of a block (default: tuned)")->check(CLI::PositiveNumber);
  cli.app.add_option("--block-n", blocks.n, "keys per step of the loop (default: tuned)")->check(CLI::PositiveNumber);
  return cli.main(argc, argv, [&](samples::Report& r) {
    Shape shape{batch, heads, seq, dim};
    DType dtype = samples::parseDTypeOption(dtypeName);
    Tensor q = Tensor::random(shape, 1, dtype), k = Tensor::random(shape, 2, dtype), v = Tensor::random(shape, 3, dtype);
    Tensor o = samples::poisoned(shape);
    cli.keepOnDevice({&q, &k, &v, &o});
    if (cli.app.count("--block-m") + cli.app.count("--block-n") > 0) {
      r.tune = "off";
    } else {
      TuneResult tuned = samples::tuneAttention(q, k, v, o, causal, cli.runOptions());
      blocks = samples::AttentionBlocks::from(tuned.chosen);
      r.tune = tuneSourceName(tuned.source);
    }
    r.time([&] { return samples::attention(q, k, v, o, causal, cli.runOptions(), blocks); });
    r.dtype = dtypeName;
    r.shape = std::to_string(batch) + "x" + std::to_string(heads) + "x" + std::to_string(seq) + "x" +
              std::to_string(dim) + (causal ? "-causal" : "");
    r.work = 4.0 * batch * heads * seq * seq * dim * (causal ? 0.5 : 1.0);
    if (!cli.check()) return;
    std::vector<double> qv = q.values(), kv = k.values(), vv = v.values(), ref(qv.size());
    for (int64_t h = 0; h < batch * heads; ++h) {
      size_t off = static_cast<size_t>(h * seq * dim);
      referenceHead(&qv[off], &kv[off], &vv[off], &ref[off], seq, dim, causal);
    }
    r.compare(o, ref, samples::tolerance(dtype, seq + dim));
  });
}
