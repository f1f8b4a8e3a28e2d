// Multi-head latent attention at decode with the up-projections absorbed (DeepSeek-V2):
// each token's cache entry is one latent vector and one rotary key shared by all heads, so
// the cache is far smaller than per-head keys and values. Prints the cache bytes per token of
// MHA, GQA and MLA, decodes a batch of sequences of different lengths against the latent
// cache, and with --check compares with the explicit form (keys and values decompressed
// per head, standard attention) in float64.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

namespace {

struct Dims {
  int64_t batch = 4, heads = 128, nope = 128, rope = 64, value = 128, latent = 512, seq = 1024, groups = 8;
};

// Cache values per token: per-head keys (nope + rope) and values for MHA, per group for
// GQA, one latent and one rotary key for MLA.
void printCacheTable(const Dims& d, DType dtype) {
  const int64_t bytes = dtypeBytes(dtype), perHead = d.nope + d.rope + d.value;
  const int64_t mha = d.heads * perHead * bytes, gqa = d.groups * perHead * bytes, mla = (d.latent + d.rope) * bytes;
  std::printf("cache bytes per token (%s): MHA %lld (%lld heads x (%lld + %lld + %lld)), GQA %lld (%lld groups), "
              "MLA %lld (%lld + %lld)\n",
              std::string(dtypeName(dtype)).c_str(), (long long)mha, (long long)d.heads, (long long)d.nope, (long long)d.rope,
              (long long)d.value, (long long)gqa, (long long)d.groups, (long long)mla, (long long)d.latent,
              (long long)d.rope);
  std::printf("cache ratio: MHA/MLA %.2fx, GQA/MLA %.2fx\n", double(mha) / double(mla), double(gqa) / double(mla));
}

// The bytes of cache a decode reads: every token's latent and rotary key, once.
double cacheBytesRead(const Dims& d, DType cacheType, int64_t tokens) {
  return double(tokens * (d.latent + d.rope) * dtypeBytes(cacheType));
}

// The latent attention launch alone reads the cache (the other two read the absorbed
// weights): its median time and cache bytes per second, against memcpy on the CPU.
void printAttentionSpeed(const samples::MlaTensors& t, const Dims& d, int64_t tokens, const RunOptions& opts) {
  Tensor qAbs = Tensor::random({d.batch, d.heads, d.latent}, 7), ctx = Tensor::empty({d.batch, d.heads, d.latent});
  samples::Report attention{.repeat = 6};
  attention.time([&] { return samples::mlaLatentAttention(t, qAbs, ctx, opts); });
  const double bytes = cacheBytesRead(d, t.latentCache.dtype(), tokens), gbps = bytes / (attention.ms * 1e6);
  const double flops = 2.0 * double(tokens * d.heads * (2 * d.latent + d.rope));  // scores and P . c_kv
  std::printf("latent attention on %s: %.3f ms, %.1f GFLOP/s, %.2f GB/s of cache", attention.device.c_str(),
              attention.ms, flops / (attention.ms * 1e6), gbps);
  if (attention.device == "cpu") {
    const double copy = samples::memcpyGBps(2 * bytes) / 2;  // the rate at which a copy reads those bytes
    std::printf("; a memcpy reads the same %.1f MB at %.2f GB/s, so %.2fx", bytes / 1e6, copy, gbps / copy);
  }
  std::printf("\n");
}

// The explicit form in float64: per head, K = [c_kv . wUK[h]^T, k_pe] and V = c_kv . wUV[h]
// for every cached token, then softmax(q K^T * scale) V.
std::vector<double> explicitDecode(const samples::MlaTensors& t, const Dims& d, const std::vector<int64_t>& lengths) {
  const std::vector<double> qn = t.qNope.values(), qp = t.qPe.values(), cosv = t.ropeCos.values(),
                            sinv = t.ropeSin.values(), wuk = t.wUK.values(), wuv = t.wUV.values(),
                            scales = t.cacheScales.values();
  std::vector<double> c = t.latentCache.values(), kpe = t.ropeKeyCache.values();  // dequantized
  for (double& x : c) x *= scales[0];
  for (double& x : kpe) x *= scales[1];
  const int64_t half = d.rope / 2;
  const double scale = 1.0 / std::sqrt(double(d.nope + d.rope));
  std::vector<double> out(size_t(d.batch * d.heads * d.value));
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h) {
      const int64_t n = lengths[size_t(b)], qi = (b * d.heads + h);
      std::vector<double> rotated(static_cast<size_t>(d.rope));
      for (int64_t i = 0; i < half; ++i) {
        double x1 = qp[size_t(qi * d.rope + i)], x2 = qp[size_t(qi * d.rope + half + i)];
        double cs = cosv[size_t(b * half + i)], sn = sinv[size_t(b * half + i)];
        rotated[size_t(i)] = x1 * cs - x2 * sn;
        rotated[size_t(half + i)] = x2 * cs + x1 * sn;
      }
      std::vector<double> scores(static_cast<size_t>(n)), values(static_cast<size_t>(n * d.value));
      for (int64_t tok = 0; tok < n; ++tok) {
        const double* latent = &c[size_t((b * d.seq + tok) * d.latent)];
        double s = 0;
        for (int64_t r = 0; r < d.rope; ++r) s += rotated[size_t(r)] * kpe[size_t((b * d.seq + tok) * d.rope + r)];
        for (int64_t i = 0; i < d.nope; ++i) {
          double key = 0;
          for (int64_t l = 0; l < d.latent; ++l) key += wuk[size_t((h * d.nope + i) * d.latent + l)] * latent[l];
          s += qn[size_t(qi * d.nope + i)] * key;
        }
        scores[size_t(tok)] = s * scale;
        for (int64_t e = 0; e < d.value; ++e) {
          double v = 0;
          for (int64_t l = 0; l < d.latent; ++l) v += wuv[size_t((h * d.latent + l) * d.value + e)] * latent[l];
          values[size_t(tok * d.value + e)] = v;
        }
      }
      double top = *std::max_element(scores.begin(), scores.end()), total = 0;
      for (double& s : scores) total += s = std::exp(s - top);
      for (int64_t e = 0; e < d.value; ++e) {
        double o = 0;
        for (int64_t tok = 0; tok < n; ++tok) o += scores[size_t(tok)] * values[size_t(tok * d.value + e)];
        out[size_t(qi * d.value + e)] = o / total;
      }
    }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  samples::SampleCli cli("mla_decode", "Weight-absorbed multi-head latent attention decode against a latent cache");
  Dims d;
  std::string dtypeOption = "f32";
  auto positive = CLI::Range(int64_t{1}, int64_t{1} << 20);
  cli.app.add_option("--batch", d.batch, "sequences")->check(positive);
  cli.app.add_option("--heads", d.heads, "query heads")->check(positive);
  cli.app.add_option("--nope", d.nope, "per-head query/key dimension without RoPE")->check(positive);
  cli.app.add_option("--rope", d.rope, "RoPE dimension of queries and the shared key (even)")->check(positive);
  cli.app.add_option("--value", d.value, "per-head value dimension")->check(positive);
  cli.app.add_option("--latent", d.latent, "latent (compressed KV) dimension")->check(positive);
  cli.app.add_option("--seq", d.seq, "longest sequence; lengths are drawn in [1, seq]")->check(positive);
  cli.app.add_option("--groups", d.groups, "KV groups of the GQA row of the cache table")->check(positive);
  cli.app.add_option("--dtype", dtypeOption, "latent cache dtype; the 8-bit floats with a scale per cache")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "f8e4m3", "f8e5m2"}));
  return cli.main(argc, argv, [&](samples::Report& r) {
    const DType cacheType = samples::parseDTypeOption(dtypeOption);
    d.groups = std::min(d.groups, d.heads);  // GQA has at most one group per head
    printCacheTable(d, cacheType);
    std::mt19937_64 gen(11);
    std::vector<int64_t> lengths(size_t(d.batch));
    for (int64_t& n : lengths) n = 1 + int64_t(gen() % uint64_t(d.seq));
    const int64_t half = d.rope / 2;
    std::vector<double> cosv(size_t(d.batch * half)), sinv(cosv.size());
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t i = 0; i < half; ++i) {  // the query sits at position length - 1
        double angle = double(lengths[size_t(b)] - 1) * std::pow(10000.0, -2.0 * double(i) / double(d.rope));
        cosv[size_t(b * half + i)] = std::cos(angle);
        sinv[size_t(b * half + i)] = std::sin(angle);
      }
    auto weights = [](const Shape& s, uint64_t seed, int64_t fanIn) {  // about unit-scale products
      double bound = std::sqrt(3.0 / double(fanIn));
      return Tensor::random(s, seed, f32, -bound, bound);
    };
    samples::MlaTensors t{
        .qNope = Tensor::random({d.batch, d.heads, d.nope}, 1),
        .qPe = Tensor::random({d.batch, d.heads, d.rope}, 2),
        .ropeCos = Tensor::from({d.batch, half}, cosv),
        .ropeSin = Tensor::from({d.batch, half}, sinv),
        .wUK = weights({d.heads, d.nope, d.latent}, 3, d.nope),
        .wUV = weights({d.heads, d.latent, d.value}, 4, d.latent),
        .latentCache = Tensor::random({d.batch, d.seq, d.latent}, 5, isFloat8(cacheType) ? f32 : cacheType),
        .ropeKeyCache = Tensor::random({d.batch, d.seq, d.rope}, 6, isFloat8(cacheType) ? f32 : cacheType),
        .seqLens = Tensor::from({d.batch}, std::vector<double>(lengths.begin(), lengths.end()), DType::i32),
        .out = samples::poisoned({d.batch, d.heads, d.value}),
    };
    if (isFloat8(cacheType)) {  // an FP8 cache: each quantized with one scale
      auto [latent, latentScale] = samples::quantizePerTensor(t.latentCache, cacheType);
      auto [ropeKey, ropeKeyScale] = samples::quantizePerTensor(t.ropeKeyCache, cacheType);
      t.latentCache = latent, t.ropeKeyCache = ropeKey;
      t.cacheScales = Tensor::from({2}, {latentScale, ropeKeyScale});
    }
    cli.keepOnDevice({&t.qNope, &t.qPe, &t.ropeCos, &t.ropeSin, &t.wUK, &t.wUV, &t.latentCache, &t.ropeKeyCache,
                      &t.seqLens, &t.out, &t.cacheScales});
    r.time([&] { return samples::mlaDecode(t, cli.runOptions()); });
    const int64_t tokens = std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
    r.dtype = dtypeOption;
    r.shape = std::to_string(d.batch) + "x" + std::to_string(d.heads) + "h_latent" + std::to_string(d.latent) +
              "_rope" + std::to_string(d.rope) + "_tokens" + std::to_string(tokens);
    r.rateName = "gbps";  // cache bytes read per second
    r.work = cacheBytesRead(d, cacheType, tokens);
    printAttentionSpeed(t, d, tokens, cli.runOptions());
    if (!cli.check()) return;
    // An 8-bit cache computes in bf16: the query and P each rounded once to bf16's 2^-9, which
    // the scores' exp and the sums carry to the output a few times over (0.002 measured at the
    // test's sizes), not bf16 products' error over the whole reduction.
    const double tolerance = isFloat8(cacheType) ? 0.03 : samples::tolerance(cacheType, d.latent + d.rope);
    r.compare(t.out, explicitDecode(t, d, lengths), tolerance);
  });
}
