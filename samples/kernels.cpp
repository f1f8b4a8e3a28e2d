#include "samples/kernels.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "devices/device.hpp"
#include "devices/registry.hpp"

namespace tj::samples {

namespace {
RunOptions named(RunOptions opts, const char* name) {
  opts.name = name;
  return opts;
}

int64_t nextPow2(int64_t n) { return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(n, 1)))); }

std::string deviceName(const RunOptions& opts) { return selectDevice(opts.device).name(); }

// The kind of a device name ("vulkan" of "vulkan:1"), as the registry knows it; "" for none.
std::string kindOf(const std::string& device) {
  const DeviceKind* kind = findDeviceKind(device);
  return kind ? kind->name : "";
}

// The candidates for a device, the first being its default, by device kind ("cpu", "vulkan",
// "cuda", "hip"). Other devices (the interpreter) get only the default: timing them means nothing.
template <class Blocks>
std::vector<TuneConfig> space(const std::string& device, const std::map<std::string, std::vector<Blocks>>& sweeps) {
  auto sweep = sweeps.find(kindOf(device));
  if (sweep == sweeps.end()) return {Blocks{}.config()};
  std::vector<TuneConfig> configs;
  for (const Blocks& b : sweep->second) configs.push_back(b.config());
  return configs;
}
}  // namespace

namespace {
// A config's stages (NVIDIA's read-ahead), warps and warp specialization, where it sets them;
// 0: the device's default.
TuneConfig withKnobs(TuneConfig c, int64_t stages, int64_t warps, bool specialize) {
  if (stages > 0) c.values["stages"] = stages;
  if (warps > 0) c.values["warps"] = warps;
  if (specialize) c.values["warp_specialize"] = 1;
  return c;
}
int64_t knob(const TuneConfig& c, const char* name) { return c.values.count(name) ? c[name] : 0; }
}  // namespace

TuneConfig GemmBlocks::config() const {
  return withKnobs({{{"block_m", m}, {"block_n", n}, {"block_k", k}}}, stages, warps, specialize);
}
GemmBlocks GemmBlocks::from(const TuneConfig& c) {
  return {c["block_m"], c["block_n"], c["block_k"], knob(c, "stages"), knob(c, "warps"), knob(c, "warp_specialize") != 0};
}
TuneConfig AttentionBlocks::config() const {
  TuneConfig c = withKnobs({{{"block_m", m}, {"block_n", n}}}, stages, warps, specialize);
  if (overlapSoftmax) c.values["overlap_softmax"] = 1;
  return c;
}
AttentionBlocks AttentionBlocks::from(const TuneConfig& c) {
  return {c["block_m"], c["block_n"], knob(c, "stages"), knob(c, "warps"), knob(c, "warp_specialize") != 0,
          knob(c, "overlap_softmax") != 0};
}

std::vector<TuneConfig> gemmTuneSpace(const std::string& device) {
  // CPU: tall blocks with a deep K step amortize the copy of B and the trips of C through
  // registers (f32 A is read in place); small ones keep skinny shapes off the masked edges.
  // The widest and deepest (512 rows, 128 columns or 512 deep) are AMX int8's: a dot's C tiles
  // go through memory once per step, so each dot must do more (1263 -> 1611 GOP/s at 2048 on
  // one Sapphire Rapids core). Vulkan stages both operand blocks in workgroup memory (32 KiB
  // on lavapipe).
  return space<GemmBlocks>(
      device,
      {{"cpu", {{128, 64, 64}, {256, 64, 256}, {512, 64, 256}, {256, 64, 64}, {128, 64, 256}, {64, 64, 256},
                {64, 256, 64}, {256, 64, 512}, {512, 128, 256}, {512, 64, 512}}},
       {"vulkan", {{64, 64, 32}, {32, 64, 32}, {32, 32, 32}}},
       // NVIDIA: f16/bf16 tiles on mma.sync, 2 to 4 stages of cp.async read-ahead, 8 warps for
       // the largest blocks and 2 for the smallest, as Triton's configs; Hopper's wgmma: two
       // warpgroups of 64 x 128 (4 stages) or 64 x 256 (3), also warp-specialized (a producer
       // warpgroup more, the consumers' registers raised to 232) and so persistent, where the
       // result's two box buffers leave room for a fourth stage of 64 x 256.
       {"cuda", {{128, 64, 64}, {128, 64, 64, 3}, {128, 128, 32, 3, 8}, {128, 128, 64, 3, 8}, {64, 128, 64, 3},
                 {128, 64, 32, 4}, {64, 64, 64, 4, 2}, {128, 128, 64, 4, 8}, {128, 256, 64, 3, 8},
                 {128, 128, 64, 4, 8, true}, {128, 256, 64, 3, 8, true}, {128, 256, 64, 4, 8, true}}},
       // AMD: MFMA 32x32 (gfx942) or WMMA 16x16 (gfx1100), mostly 8 waves; 2 stages read the
       // next blocks into registers during the dots (Triton's AMD default), 1 does not. Each
       // compiles without scratch on both (untimed: no AMD GPU was at hand).
       {"hip", {{128, 128, 64, 2, 8}, {128, 64, 64, 2, 8}, {64, 128, 64, 2, 8}, {128, 128, 32, 1, 8}, {64, 64, 32, 2, 4}}}});
}

std::vector<TuneConfig> gemmSplitKTuneSpace(const std::string& device) {
  if (device != "cpu") return gemmTuneSpace(device);
  return space<GemmBlocks>(device, {{"cpu", {{64, 64, 256}, {64, 64, 512}, {64, 64, 128}, {128, 64, 256}, {64, 128, 256}}}});
}

std::vector<TuneConfig> attentionTuneSpace(const std::string& device) {
  // CPU: long sequences favour tall query blocks, which reuse each key and value block more, and
  // long key blocks, which pass over fewer rows per key (bf16 s2048: 4.3 ms at 256x128, 4.0 at
  // 256x256; f32 16.8 and 15.6).
  return space<AttentionBlocks>(
      device, {{"cpu", {{64, 64}, {32, 64}, {64, 32}, {128, 64}, {64, 128}, {256, 64}, {256, 128}, {256, 256}}},
               {"vulkan", {{64, 64}, {32, 32}}},
               // NVIDIA: from the seventh, the softmax overlapped with the values product
               // (FlashAttention-3's pipelining within a warpgroup) or warp-specialized (a producer
               // warpgroup fills K's and V's rings), the last both; overlapped only at 128 x 64
               // (at 128 x 128, overlapped FP8 spills).
               {"cuda", {{64, 64}, {64, 64, 3}, {128, 64}, {128, 64, 3, 8}, {64, 128, 3}, {128, 128, 0, 8},
                         {128, 64, 3, 8, false, true}, {128, 64, 3, 8, true}, {128, 128, 2, 8, true},
                         {128, 64, 3, 8, true, true}}},
               // AMD: 8 waves, one stage first as Triton's AMD attention (two would fill gfx942's 64
               // KiB of LDS at 64 keys); each compiles without scratch on gfx942 and gfx1100 (untimed).
               {"hip", {{64, 64, 1, 8}, {128, 32, 2, 8}, {64, 32, 2, 8}, {128, 32, 1, 8}}}});
}

GemmOperands gemmOperands(DType dtype, int64_t m, int64_t n, int64_t k) {
  if (dtype == DType::i8 || dtype == DType::u8) {
    bool u8 = dtype == DType::u8;
    return {Tensor::random({m, k}, 1, dtype, u8 ? 0 : -128, u8 ? 255 : 127), Tensor::random({k, n}, 2, DType::i8, -128, 127),
            DType::i32};
  }
  return {Tensor::random({m, k}, 1, dtype), Tensor::random({k, n}, 2, dtype), DType::f32};
}

TuneResult tuneGemm(const Tensor& a, const Tensor& b, const Tensor& c, const RunOptions& opts, TuneOptions tuning) {
  TuneKey key{{a.dim(0), b.dim(1), a.dim(1)}, {a.dtype()}};
  tuning.device = opts.device;
  return tune("gemm", gemmTuneSpace(deviceName(opts)), key,
              [&](const TuneConfig& config) { gemm(a, b, c, opts, GemmBlocks::from(config)); }, tuning);
}

TuneResult tuneGemmSplitK(const Tensor& a, const Tensor& b, const Tensor& c, int64_t splits, const RunOptions& opts,
                          TuneOptions tuning) {
  TuneKey key{{a.dim(0), b.dim(1), a.dim(1), splits}, {a.dtype()}};
  tuning.device = opts.device;
  return tune("gemm_split_k", gemmSplitKTuneSpace(deviceName(opts)), key,
              [&](const TuneConfig& config) { gemmSplitK(a, b, c, splits, opts, GemmBlocks::from(config)); }, tuning);
}

TuneResult tuneAttention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, bool causal,
                         const RunOptions& opts, TuneOptions tuning, const AttentionScales& scales) {
  TuneKey key{{q.dim(0) * q.dim(1), q.dim(2), q.dim(3)}, {q.dtype()}};
  tuning.device = opts.device;
  return tune(causal ? "attention_causal" : "attention", attentionTuneSpace(deviceName(opts)), key,
              [&](const TuneConfig& config) { attention(q, k, v, out, causal, opts, AttentionBlocks::from(config), scales); },
              tuning);
}

std::string gemm(const Tensor& a, const Tensor& b, const Tensor& c, const RunOptions& opts, GemmBlocks bs) {
  return run({cdiv(a.dim(0), bs.m), cdiv(b.dim(1), bs.n)}, [&](Program& p) {
    if (bs.stages > 0) p.stages(bs.stages);
    if (bs.warps > 0) p.warps(bs.warps);
    p.warp_specialize(bs.specialize);
    Index i = p.id(0), j = p.id(1);
    auto A = p.read(a, {bs.m, bs.k});
    auto B = p.read(b, {bs.k, bs.n});
    Tile acc = p.fold(0, A.blocks(1), p.zeros({bs.m, bs.n}, c.dtype()),
                      [&](Index k, Tile acc) { return acc + dot(A.at({i, k}), B.at({k, j})); });
    p.write(c, {bs.m, bs.n}).put(acc, {i, j});
  }, named(opts, "gemm"));
}

std::string gemmSplitK(const Tensor& a, const Tensor& b, const Tensor& c, int64_t splits, const RunOptions& opts,
                       GemmBlocks bs) {
  return run({cdiv(a.dim(0), bs.m), cdiv(b.dim(1), bs.n), splits}, [&](Program& p) {
    Index i = p.id(0), j = p.id(1), s = p.id(2);
    auto A = p.read(a, {bs.m, bs.k});
    auto B = p.read(b, {bs.k, bs.n});
    Index steps = cdiv(A.blocks(1), splits);
    Tile acc = p.fold(s * steps, min((s + 1) * steps, A.blocks(1)), p.zeros({bs.m, bs.n}),
                      [&](Index k, Tile acc) { return acc + dot(A.at({i, k}), B.at({k, j})); });
    Tile rows = p.iota({bs.m, 1}, 0) + i * bs.m, cols = p.iota({1, bs.n}, 1) + j * bs.n;
    p.atomic_add(c, {rows, cols}, acc);
  }, named(opts, "gemm_split_k"));
}

std::string quantizeFp8(const Tensor& x, const Tensor& q, const Tensor& scale, int64_t blockRows,
                        const RunOptions& opts) {
  if (blockRows != 1 && blockRows != kScaleBlock)
    throw Error("quantizeFp8: blockRows is " + std::to_string(blockRows) + "; it must be 1 or " +
                std::to_string(kScaleBlock));
  if (x.rank() != 2 && x.rank() != 3)
    throw Error("quantizeFp8: x has rank " + std::to_string(x.rank()) + "; it must be [rows, cols] or [groups, rows, cols]");
  // A stack of matrices takes the groups' axis first in its blocks and their coordinates.
  const bool stacked = x.rank() == 3;
  const int64_t rowAxis = x.rank() - 2;
  Shape scaleShape{cdiv(x.dim(rowAxis), blockRows), cdiv(x.dim(rowAxis + 1), kScaleBlock)};
  if (stacked) scaleShape.insert(scaleShape.begin(), x.dim(0));
  if (q.shape() != x.shape() || !isFloat8(q.dtype()) || scale.shape() != scaleShape || scale.dtype() != DType::f32)
    throw Error(fmt::format("quantizeFp8: x [{}] takes an 8-bit q of its shape and f32 scales [{}]; got {} q [{}] and {} "
                            "scales [{}]",
                            fmt::join(x.shape(), ", "), fmt::join(scaleShape, ", "), dtypeName(q.dtype()),
                            fmt::join(q.shape(), ", "), dtypeName(scale.dtype()), fmt::join(scale.shape(), ", ")));
  const int64_t rows = blockRows == 1 ? 16 : blockRows;  // of one program
  const double largest = maxFinite(q.dtype());
  auto block = [&](int64_t r, int64_t c) { return stacked ? Shape{1, r, c} : Shape{r, c}; };
  auto at = [&](Index g, Index i, Index j) { return stacked ? std::vector<Index>{g, i, j} : std::vector<Index>{i, j}; };
  return run({cdiv(x.dim(rowAxis), rows), cdiv(x.dim(rowAxis + 1), kScaleBlock), stacked ? x.dim(0) : 1}, [&](Program& p) {
    Index i = p.id(0), j = p.id(1), g = p.id(2);
    // zeros past the edges leave the largest alone
    Tile v = p.read(x, block(rows, kScaleBlock)).at(at(g, i, j)).reshape({rows, kScaleBlock});
    Tile amax = abs(v).max(1, true);
    if (blockRows != 1) amax = amax.max(0, true);
    Tile s = where(amax > 0, amax / largest, 1.0);
    const int64_t scaleRows = blockRows == 1 ? rows : 1;
    p.write(q, block(rows, kScaleBlock)).put((v / s).cast(q.dtype(), Overflow::saturate).reshape(block(rows, kScaleBlock)),
                                             at(g, i, j));
    p.write(scale, block(scaleRows, 1)).put(s.reshape(block(scaleRows, 1)), at(g, i, j));
  }, named(opts, "quantize_fp8"));
}

GemmBlocks scaledGemmBlocks(const RunOptions& opts) {
  std::string device = deviceName(opts);
  if (device == "cpu") return GemmBlocks{128, 128, 128};
  // Two warpgroups of 64 rows each (wgmma on Hopper), 3 stages of 32 KiB.
  if (device.starts_with("cuda")) return GemmBlocks{128, 128, 128, 3, 8};
  return GemmBlocks{32, 64, 32};
}

std::string scaledGemm(const Tensor& a, const Tensor& aScale, const Tensor& b, const Tensor& bScale, const Tensor& c,
                       const RunOptions& opts, GemmBlocks bs) {
  if (kScaleBlock % bs.k != 0 || kScaleBlock % bs.n != 0)
    throw Error("scaledGemm: blocks " + std::to_string(bs.m) + "x" + std::to_string(bs.n) + "x" + std::to_string(bs.k) +
                ": block_k and block_n must divide the scale blocks' " + std::to_string(kScaleBlock));
  const bool tensorScaleA = aScale.numel() == 1, tensorScaleB = bScale.numel() == 1;
  // B stored [N, K] (b a transposed view: a linear layer's weights, as torch._scaled_mm takes
  // them) is read in [n, k] blocks, so that both operands run along K in memory: 8-bit wgmma's
  // only form, which TMA then copies as they are.
  const bool bAlongK = b.rank() == 2 && b.strides()[0] == 1 && b.strides()[1] != 1;
  const Tensor bRead = bAlongK ? b.transpose() : b;
  return run({cdiv(a.dim(0), bs.m), cdiv(b.dim(1), bs.n)}, [&](Program& p) {
    if (bs.stages > 0) p.stages(bs.stages);
    if (bs.warps > 0) p.warps(bs.warps);
    p.warp_specialize(bs.specialize);
    Index i = p.id(0), j = p.id(1);
    auto A = p.read(a, {bs.m, bs.k});
    auto B = p.read(bRead, bAlongK ? Shape{bs.n, bs.k} : Shape{bs.k, bs.n});
    auto aScales = p.read(aScale, {tensorScaleA ? 1 : bs.m, 1});
    auto bScales = p.read(bScale, {1, 1});
    Tile acc = p.fold(0, A.blocks(1), p.zeros({bs.m, bs.n}), [&](Index k, Tile acc) {
      Index kBlock = k * bs.k / kScaleBlock;
      Tile sa = tensorScaleA ? aScales.at({0, 0}) : aScales.at({i, kBlock});  // [m, 1]: one per row
      Tile sb = tensorScaleB ? bScales.at({0, 0}) : bScales.at({kBlock, j * bs.n / kScaleBlock});
      Tile bBlock = bAlongK ? B.at({j, k}).transpose() : B.at({k, j});
      return acc + dot(A.at({i, k}), bBlock) * (sa * sb);
    });
    p.write(c, {bs.m, bs.n}).put(acc.cast(c.dtype()), {i, j});
  }, named(opts, "scaled_gemm"));
}

DType accumulatorFor(DType input) { return input == f64 ? f64 : f32; }

namespace {
// The attention inputs' 8-bit scales against the inputs and the blocks: one per query row, one
// per kScaleBlock keys (so key blocks must divide it), head dims that one scale covers.
void checkAttentionScales(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionScales& scales,
                          const AttentionBlocks& blocks) {
  const int64_t dim = q.dim(3), heads = q.dim(0) * q.dim(1), keyBlocks = cdiv(k.dim(2), kScaleBlock);
  for (const auto& [name, x] : {std::pair{"q", &q}, {"k", &k}, {"v", &v}})
    if (!isFloat8(x->dtype()))
      throw Error(fmt::format("attention: scales are for 8-bit float q, k and v; {} is {}", name, dtypeName(x->dtype())));
  auto expect = [](const char* name, const Tensor& scale, const Shape& shape) {
    if (!scale.defined())
      throw Error(fmt::format("attention: {}'s scales are missing: q, k and v take theirs together", name));
    if (scale.shape() != shape || scale.dtype() != DType::f32)
      throw Error(fmt::format("attention: {}'s scales are {} [{}]; they must be f32 [{}]", name, dtypeName(scale.dtype()),
                              fmt::join(scale.shape(), ", "), fmt::join(shape, ", ")));
  };
  expect("q", scales.q, {heads, q.dim(2), 1});
  expect("k", scales.k, {heads, keyBlocks, 1});
  expect("v", scales.v, {heads, keyBlocks, 1});
  if (kScaleBlock % blocks.n != 0)
    throw Error("attention: block_n " + std::to_string(blocks.n) + " must divide the key scales' blocks of " +
                std::to_string(kScaleBlock));
  if (dim > kScaleBlock)
    throw Error("attention: 8-bit heads of " + std::to_string(dim) + " dims; one scale per row covers at most " +
                std::to_string(kScaleBlock));
}
}  // namespace

KernelDefinition attentionKernel(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, bool causal,
                                 AttentionBlocks blocks, const Tensor& lse, const AttentionScales& scales) {
  const int64_t heads = q.dim(1), dim = q.dim(3);
  const DType accType = accumulatorFor(q.dtype());
  const int64_t blockM = blocks.m, blockN = blocks.n;
  const bool scaled = scales.q.defined() || scales.k.defined() || scales.v.defined();
  if (scaled) checkAttentionScales(q, k, v, scales, blocks);
  // Scores in base-2 units (times log2 e), so that each probability is one fast exp2.
  const double scale = std::numbers::log2e / std::sqrt(static_cast<double>(dim));
  const double inf = std::numeric_limits<double>::infinity();
  // P rounded to 8 bits: probabilities times 2^8 (in [0, 256]), so that small ones keep their
  // bits; the sum and the products scale alike, and their quotient does not change.
  const double probShift = isFloat8(v.dtype()) ? 8 : 0;
  // v stored [batch, heads, dim, seq] (this a transposed view): blocks read along the keys,
  // as 8-bit wgmma reads its b (K-major) and TMA then copies them.
  const bool vAlongKeys = v.strides()[2] == 1 && v.strides()[3] != 1;
  const Tensor vRead = vAlongKeys ? v.transpose(2, 3) : v;
  return {{cdiv(q.dim(2), blockM), q.dim(0) * heads}, [=](Program& p) {
    if (blocks.stages > 0) p.stages(blocks.stages);
    if (blocks.warps > 0) p.warps(blocks.warps);
    p.warp_specialize(blocks.specialize);
    // Causal: the last query blocks, which see the most keys, first, so that the work left at
    // the end is the smallest (programs run in id order where there are fewer cores than programs).
    Index queryBlocks = cdiv(q.dim(2), blockM);
    Index m = causal ? queryBlocks - 1 - p.id(0) : p.id(0), batch = p.id(1) / heads, head = p.id(1) % heads;
    auto Q = p.read(q, {1, 1, blockM, dim});
    auto K = p.read(k, {1, 1, blockN, dim});
    auto V = p.read(vRead, vAlongKeys ? Shape{1, 1, dim, blockN} : Shape{1, 1, blockN, dim});
    Index seqK = K.size(2);
    Tile qt = Q.at({batch, head, m, 0}).reshape({blockM, dim});
    Tile rows = p.iota({blockM, blockN}, 0) + m * blockM;
    // 8-bit inputs: the scores' scale per query row (the softmax's with q's), and k's and v's
    // per block of keys, read in the loop.
    std::optional<Tile> queryScale;
    std::optional<ReadView> KS, VS;
    if (scaled) {
      queryScale = p.read(scales.q, {1, blockM, 1}).at({p.id(1), m, 0}).reshape({blockM, 1}) * scale;
      KS = p.read(scales.k, {1, 1, 1});
      VS = p.read(scales.v, {1, 1, 1});
    }
    // f16/bf16 inputs: both products accumulate in f32; P is rounded to V's dtype for the second.
    // Causal: key blocks past this query block's last row are never needed.
    Index end = causal ? min(cdiv((m + 1) * blockM, blockN), K.blocks(2)) : K.blocks(2);
    const DType valueType = vRead.dtype();
    auto keys = [&](Index n) { return K.at({batch, head, n, 0}).reshape({blockN, dim}); };
    auto valuesAt = [&](Index n) {
      return vAlongKeys ? V.at({batch, head, 0, n}).reshape({dim, blockN}).transpose()
                        : V.at({batch, head, n, 0}).reshape({blockN, dim});
    };
    auto keyScale = [&](const std::optional<ReadView>& s, Index n) {
      return s->at({p.id(1), n * blockN / kScaleBlock, 0}).reshape({1, 1});
    };
    // 8-bit: a values product times v's scale for key block n.
    auto scaledValues = [&](Tile weighted, Index n) { return scaled ? weighted * keyScale(VS, n) : weighted; };
    // Key block n's probabilities against the running maximum, from its products q . k (made
    // after the mask, the order the kernel has always been traced in: its IR and hash stay).
    struct Softmax {
      Tile newMax, probs, rescale, sum;
    };
    auto softmax = [&](Index n, const std::function<Tile()>& productsOf, Tile rowMax, Tile rowSum) {
      Tile cols = p.iota({blockM, blockN}, 1) + n * blockN;
      Tile valid = cols < seqK;
      if (causal) valid = valid && cols <= rows;
      Tile products = productsOf();
      // Each probability's exponent is products * scale - max, one fused multiply-add where
      // the device has one (muladd); the max is taken of the products and then scaled (a
      // positive scale keeps their order). 8-bit inputs scale each row by its own factor first.
      Tile scores = where(valid, scaled ? products * (*queryScale * keyScale(KS, n)) : products, -inf);
      Tile newMax = max(rowMax, scaled ? scores.max(1) : scores.max(1) * scale);
      Tile shift = -(probShift != 0 ? newMax - probShift : newMax).expand_dims(1);
      Tile probs = (scaled ? scores + shift : muladd(scores, scale, shift)).fast_exp2();
      Tile rescale = (rowMax - newMax).fast_exp2();
      return Softmax{newMax, probs, rescale, rowSum * rescale + probs.sum(1)};
    };
    auto init = std::tuple{p.full({blockM}, -inf, accType), p.zeros({blockM}, accType), p.zeros({blockM, dim}, accType)};
    auto [rowMax, rowSum, acc] = [&]() -> std::tuple<Tile, Tile, Tile> {
      if (!blocks.overlapSoftmax)
        return p.fold(0, end, init, [&](Index n, Tile rowMax, Tile rowSum, Tile acc) {
          Tile kt = keys(n), vt = valuesAt(n);
          Softmax s = softmax(n, [&] { return dot(qt, kt.transpose()); }, rowMax, rowSum);
          Tile weighted = dot(s.probs.cast(valueType), vt);
          return std::tuple{s.newMax, s.sum, acc * s.rescale.expand_dims(1) + scaledValues(weighted, n)};
        });
      // FlashAttention-3's pipelining within a warpgroup: step n multiplies block n - 1's
      // probabilities by its values, which nothing in block n's softmax feeds, so that the
      // product runs while the softmax does (ptxas issues its wgmmas among the softmax's
      // exponentials). acc, the sum over key blocks 0 to n - 2, is rescaled to block n - 1's
      // maximum and the product added into it. A step past the last block (its keys all masked)
      // adds the last block's values; step 0 the product of zeros. The extra step costs 1 / end
      // of the loop.
      [[maybe_unused]] auto [newMax, sum, upToLast, lastProbs, lastRescale] = p.fold(
          0, end + 1, std::tuple_cat(init, std::tuple{p.zeros({blockM, blockN}, valueType), p.full({blockM}, 1.0, accType)}),
          [&](Index n, Tile rowMax, Tile rowSum, Tile acc, Tile prevProbs, Tile prevRescale) {
            Tile products = dot(qt, keys(n).transpose());
            Softmax s = softmax(n, [&] { return products; }, rowMax, rowSum);
            Index prev = max(n - 1, 0);
            Tile weighted = dot(prevProbs, valuesAt(prev));
            Tile upToPrev = acc * prevRescale.expand_dims(1) + scaledValues(weighted, prev);
            return std::tuple{s.newMax, s.sum, upToPrev, s.probs.cast(valueType), s.rescale};
          });
      return {newMax, sum, upToLast};
    }();
    Tile o = acc * (1.0 / rowSum).expand_dims(1);  // one division per row
    p.write(out, {1, 1, blockM, dim}).put(o.reshape({1, 1, blockM, dim}), {batch, head, m, 0});
    if (lse.defined()) {  // in natural units
      Tile logSum = probShift != 0 ? rowSum.log2() - probShift : rowSum.log2();
      p.write(lse, {1, 1, blockM}).put(((rowMax + logSum) * std::numbers::ln2).reshape({1, 1, blockM}), {batch, head, m});
    }
  }};
}

std::string attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, bool causal,
                      const RunOptions& opts, AttentionBlocks blocks, const AttentionScales& scales) {
  KernelDefinition kernel = attentionKernel(q, k, v, out, causal, blocks, {}, scales);
  return run(kernel.grid, kernel.body, named(opts, "attention"));
}

namespace {

// What the backward kernels read of one block of query rows: q, dO, the forward's logsumexp and
// D = rowsum(dO * O), as [blockM, dim] and [blockM].
struct QueryRows {
  Tile q, dOut, lse, delta;
};

}  // namespace

std::string attentionBackward(const AttentionGradients& t, bool causal, const RunOptions& opts, AttentionBlocks blocks) {
  const int64_t heads = t.q.dim(1), seq = t.q.dim(2), dim = t.q.dim(3), blockM = blocks.m, blockN = blocks.n;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  const std::vector<int64_t> queryGrid{cdiv(seq, blockM), t.q.dim(0) * heads}, keyGrid{cdiv(seq, blockN), t.q.dim(0) * heads};
  const DType accType = accumulatorFor(t.q.dtype());
  Tensor delta = Tensor::empty({t.q.dim(0), heads, seq}, accType);
  run(queryGrid, [&](Program& p) {  // D = rowsum(dO * O)
    Index m = p.id(0), batch = p.id(1) / heads, head = p.id(1) % heads;
    Tile product = p.read(t.dOut, {1, 1, blockM, dim}, 0.0).at({batch, head, m, 0}) *
                   p.read(t.out, {1, 1, blockM, dim}, 0.0).at({batch, head, m, 0});
    p.write(delta, {1, 1, blockM}).put(product.sum(3), {batch, head, m});
  }, named(opts, "attention_backward_delta"));
  // The probabilities P of a [blockM, blockN] block of scores (0 where masked) and dS = P (dP - D).
  auto block = [&](Program& p, const QueryRows& r, const Tile& kt, const Tile& vt, const Index& m, const Index& n) {
    Tile rows = p.iota({blockM, blockN}, 0) + m * blockM, cols = p.iota({blockM, blockN}, 1) + n * blockN;
    Tile valid = (rows < static_cast<double>(seq)) && (cols < static_cast<double>(seq));
    if (causal) valid = valid && cols <= rows;
    Tile probs = where(valid, (dot(r.q, kt.transpose()) * scale - r.lse.expand_dims(1)).exp(), 0.0);
    // Masked again: rows past the end multiply dO's fill by V (0 * anything, but not to the sanitizer).
    Tile dScores = where(valid, probs * (dot(r.dOut, vt.transpose()) - r.delta.expand_dims(1)), 0.0);
    return std::pair{probs, dScores};
  };
  auto queryRows = [&](Program& p, const Index& batch, const Index& head, const Index& m) {
    auto rows = [&](const Tensor& x) { return p.read(x, {1, 1, blockM, dim}, 0.0).at({batch, head, m, 0}).reshape({blockM, dim}); };
    auto vector = [&](const Tensor& x) { return p.read(x, {1, 1, blockM}, 0.0).at({batch, head, m}).reshape({blockM}); };
    return QueryRows{rows(t.q), rows(t.dOut), vector(t.lse), vector(delta)};
  };
  auto keys = [&](Program& p, const Tensor& x, const Index& batch, const Index& head, const Index& n) {
    return p.read(x, {1, 1, blockN, dim}, 0.0).at({batch, head, n, 0}).reshape({blockN, dim});
  };
  run(keyGrid, [&](Program& p) {  // dK and dV of a block of keys, over the query blocks that see it
    Index n = p.id(0), batch = p.id(1) / heads, head = p.id(1) % heads;
    Tile kt = keys(p, t.k, batch, head, n), vt = keys(p, t.v, batch, head, n);
    Index first = causal ? n * blockN / blockM : Index(0);
    auto [dk, dv] = p.fold(first, cdiv(seq, blockM), std::tuple{p.zeros({blockN, dim}, accType), p.zeros({blockN, dim}, accType)},
                           [&](Index m, Tile dk, Tile dv) {
      QueryRows r = queryRows(p, batch, head, m);
      auto [probs, dScores] = block(p, r, kt, vt, m, n);
      return std::tuple{dk + dot(dScores.transpose(), r.q) * scale, dv + dot(probs.transpose(), r.dOut)};
    });
    p.write(t.dk, {1, 1, blockN, dim}).put(dk.reshape({1, 1, blockN, dim}), {batch, head, n, 0});
    p.write(t.dv, {1, 1, blockN, dim}).put(dv.reshape({1, 1, blockN, dim}), {batch, head, n, 0});
  }, named(opts, "attention_backward_dkdv"));
  return run(queryGrid, [&](Program& p) {  // dQ of a block of queries, over the key blocks it sees
    Index m = p.id(0), batch = p.id(1) / heads, head = p.id(1) % heads;
    QueryRows r = queryRows(p, batch, head, m);
    Index end = causal ? min(cdiv((m + 1) * blockM, blockN), cdiv(seq, blockN)) : Index(cdiv(seq, blockN));
    Tile dq = p.fold(0, end, p.zeros({blockM, dim}, accType), [&](Index n, Tile dq) {
      Tile kt = keys(p, t.k, batch, head, n);
      return dq + dot(block(p, r, kt, keys(p, t.v, batch, head, n), m, n).second, kt) * scale;
    });
    p.write(t.dq, {1, 1, blockM, dim}).put(dq.reshape({1, 1, blockM, dim}), {batch, head, m, 0});
  }, named(opts, "attention_backward_dq"));
}

std::string softmax(const Tensor& x, const Tensor& out, const RunOptions& opts) {
  const int64_t blockRows = 2, blockCols = nextPow2(x.dim(1));
  const double inf = std::numeric_limits<double>::infinity();
  return run({cdiv(x.dim(0), blockRows)}, [&](Program& p) {
    Index i = p.id(0);
    Tile t = p.read(x, {blockRows, blockCols}, -inf).at({i, 0});
    Tile e = (t - t.max(1, true)).exp();
    p.write(out, {blockRows, blockCols}).put(e / e.sum(1, true), {i, 0});
  }, named(opts, "softmax"));
}

// Rows of a layer-norm program: whole rows, as the rows' statistics need.
constexpr int64_t kLayerNormRows = 4;

KernelDefinition layernormKernel(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
                                 double eps) {
  const int64_t blockRows = kLayerNormRows, blockCols = nextPow2(x.dim(1));
  const DType acc = accumulatorFor(x.dtype());
  return {{cdiv(x.dim(0), blockRows)}, [=](Program& p) {
    Index i = p.id(0);
    auto X = p.read(x, {blockRows, blockCols});
    Tile t = X.at({i, 0}).cast(acc);
    Tile n = p.scalar(X.size(1), acc);
    Tile mean = t.sum(1, true) / n;
    Tile inRow = p.iota({blockRows, blockCols}, 1) < X.size(1);
    Tile centered = where(inRow, t - mean, 0.0);
    Tile variance = (centered * centered).sum(1, true) / n;
    Tile w = p.read(weight, {blockCols}).at({0}).expand_dims(0).cast(acc);
    Tile b = p.read(bias, {blockCols}).at({0}).expand_dims(0).cast(acc);
    p.write(out, {blockRows, blockCols}).put((centered * (variance + eps).rsqrt() * w + b).cast(out.dtype()), {i, 0});
  }};
}

std::string layernorm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out, double eps,
                      const RunOptions& opts) {
  KernelDefinition k = layernormKernel(x, weight, bias, out, eps);
  return run(k.grid, k.body, named(opts, "layernorm"));
}

std::string layernormBackward(const LayerNormGradients& t, double eps, const RunOptions& opts) {
  const int64_t blockRows = kLayerNormRows, blockCols = nextPow2(t.x.dim(1)), cols = t.x.dim(1);
  const int64_t programs = cdiv(t.x.dim(0), blockRows);
  const DType acc = accumulatorFor(t.x.dtype());
  Tensor partialWeight = Tensor::empty({programs, cols}, acc), partialBias = Tensor::empty({programs, cols}, acc);
  std::string ran = run({programs}, [&](Program& p) {
    Index i = p.id(0);
    auto X = p.read(t.x, {blockRows, blockCols}, 0.0);
    Tile dy = p.read(t.dOut, {blockRows, blockCols}, 0.0).at({i, 0}).cast(acc);  // 0 outside: the sums need no mask
    Tile n = p.scalar(X.size(1), acc);
    Tile x = X.at({i, 0}).cast(acc);
    Tile centered = where(p.iota({blockRows, blockCols}, 1) < X.size(1), x - x.sum(1, true) / n, 0.0);
    Tile rstd = ((centered * centered).sum(1, true) / n + eps).rsqrt();
    Tile normalized = centered * rstd;
    Tile g = dy * p.read(t.weight, {blockCols}, 0.0).at({0}).expand_dims(0).cast(acc);
    Tile dx = rstd * (g - g.sum(1, true) / n - normalized * ((g * normalized).sum(1, true) / n));
    p.write(t.dx, {blockRows, blockCols}).put(dx.cast(t.dx.dtype()), {i, 0});
    p.write(partialWeight, {1, blockCols}).put((dy * normalized).sum(0, true), {i, 0});
    p.write(partialBias, {1, blockCols}).put(dy.sum(0, true), {i, 0});
  }, named(opts, "layernorm_backward"));
  const int64_t sumRows = 32, sumCols = 128;
  std::string summed = run({cdiv(cols, sumCols)}, [&](Program& p) {
    Index j = p.id(0);
    auto W = p.read(partialWeight, {sumRows, sumCols}, 0.0), B = p.read(partialBias, {sumRows, sumCols}, 0.0);
    auto [dw, db] = p.fold(0, W.blocks(0), std::tuple{p.zeros({sumCols}, acc), p.zeros({sumCols}, acc)},
                           [&](Index k, Tile dw, Tile db) {
                             return std::tuple{dw + W.at({k, j}).sum(0), db + B.at({k, j}).sum(0)};
                           });
    p.write(t.dWeight, {sumCols}).put(dw.cast(t.dWeight.dtype()), {j});
    p.write(t.dBias, {sumCols}).put(db.cast(t.dBias.dtype()), {j});
  }, named(opts, "layernorm_backward_columns"));
  return ran == summed ? ran : ran + "+" + summed;
}

std::string vectorAdd(const Tensor& a, const Tensor& b, const Tensor& out, const RunOptions& opts) {
  const int64_t block = 1024;
  return run({cdiv(a.dim(0), block)}, [&](Program& p) {
    Index i = p.id(0);
    p.write(out, {block}).put(p.read(a, {block}).at({i}) + p.read(b, {block}).at({i}), {i});
  }, named(opts, "vector_add"));
}

std::string fused(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& out, const RunOptions& opts) {
  const int64_t block = 1024;
  return run({cdiv(a.dim(0), block)}, [&](Program& p) {
    Index i = p.id(0);
    Tile x = p.read(a, {block}).at({i}) * p.read(b, {block}).at({i}) + p.read(c, {block}).at({i});
    p.write(out, {block}).put(x.relu(), {i});
  }, named(opts, "fused"));
}

std::string dropout(const Tensor& x, const Tensor& out, double p, int64_t seed, const RunOptions& opts) {
  constexpr int64_t block = 1024;
  static const auto kernel = tj::kernel("dropout", [](Program& prog, const Tensor& x, const Tensor& out, Tile p,
                                                      Index seed) {
    Index i = prog.id(0);
    Tile offset = prog.arange(block) + i * block;
    Tile keep = prog.rand(seed, offset) > p;
    prog.write(out, {block}).put(where(keep, prog.read(x, {block}).at({i}) / (1.0 - p), 0.0), {i});
  });
  return kernel.launch({cdiv(x.dim(0), block)}, x, out, p, seed, opts);
}

std::string embedding(const Tensor& table, const Tensor& ids, const Tensor& out, const RunOptions& opts) {
  // Blocks as wide as the rows (up to 1024 columns): whole-row copies with no column mask.
  constexpr int64_t rows = 64;
  const int64_t cols = std::min<int64_t>(table.dim(1), 1024);
  return run({cdiv(ids.dim(0), rows), cdiv(table.dim(1), cols)}, [&](Program& p) {
    // Each id becomes the block index of its table row: an id outside the table reads the
    // fill, zeros.
    Index i = p.id(0), j = p.id(1);
    auto rowsOf = p.read(table, {1, cols}, 0.0);
    auto into = p.write(out, {1, cols});
    p.loop(i * rows, min((i + 1) * rows, p.read(ids, {1}).size(0)), [&](Index r) {
      into.put(rowsOf.at({p.index(p.gather(ids, {r})), j}), {r, j});
    });
  }, named(opts, "embedding"));
}

std::string pagedAttention(const Tensor& q, const Tensor& kCache, const Tensor& vCache, const Tensor& blockTable,
                           const Tensor& seqLens, const Tensor& out, const RunOptions& opts) {
  const int64_t dim = q.dim(2), pageSize = kCache.dim(2);
  // Scores in base-2 units (times log2 e), so that each probability is one fast exp2.
  const double scale = std::numbers::log2e / std::sqrt(static_cast<double>(dim));
  const double inf = std::numeric_limits<double>::infinity();
  return run({q.dim(0), q.dim(1)}, [&](Program& p) {
    Index seq = p.id(0), head = p.id(1);
    Index length = p.index(p.gather(seqLens, {seq}));
    Tile qt = p.read(q, {1, 1, dim}).at({seq, head, 0}).reshape({1, dim});
    auto K = p.read(kCache, {1, 1, pageSize, dim});
    auto V = p.read(vCache, {1, 1, pageSize, dim});
    auto [rowMax, rowSum, acc] = p.fold(
        0, cdiv(length, pageSize), std::tuple{p.full({1}, -inf), p.zeros({1}), p.zeros({1, dim})},
        [&](Index j, Tile rowMax, Tile rowSum, Tile acc) {
          Index page = p.index(p.gather(blockTable, {seq, j}));
          Tile kt = K.at({page, head, 0, 0}).reshape({pageSize, dim});
          Tile vt = V.at({page, head, 0, 0}).reshape({pageSize, dim});
          Tile position = p.iota({1, pageSize}, 1) + j * pageSize;
          Tile s = where(position < length, dot(qt, kt.transpose()) * scale, -inf);
          Tile newMax = max(rowMax, s.max(1));
          Tile probs = (s - newMax.expand_dims(1)).fast_exp2();
          Tile rescale = (rowMax - newMax).fast_exp2();
          return std::tuple{newMax, rowSum * rescale + probs.sum(1), acc * rescale.expand_dims(1) + dot(probs, vt)};
        });
    (void)rowMax;
    p.write(out, {1, 1, dim}).put((acc / rowSum.expand_dims(1)).reshape({1, 1, dim}), {seq, head, 0});
  }, named(opts, "paged_attention"));
}

MlaBlocks MlaBlocks::forDevice(const std::string& device, int64_t latent) {
  // The CPU takes whole latent rows for 64 heads; lavapipe's 32 KB of workgroup memory holds an
  // [8, 128] ctx slice and [16, 64] chunks; NVIDIA gets heads enough for mma tiles.
  if (device == "cpu") return {64, 32, latent, latent};
  if (kindOf(device) == "cuda") return {16, 32, 64, 256};
  return {8, 16, 64, 128};
}

namespace {
// One product per head over a batch of rows: out[:, h] = x[:, h] . w[h], x [batch, heads, k]
// and w [heads, k, n].
std::string perHeadProduct(const Tensor& x, const Tensor& w, const Tensor& out, const RunOptions& opts) {
  constexpr int64_t blockK = 32, blockN = 64;
  const int64_t blockB = std::min<int64_t>(16, nextPow2(x.dim(0)));
  return run({x.dim(1), cdiv(w.dim(2), blockN), cdiv(x.dim(0), blockB)}, [&](Program& p) {
    Index h = p.id(0), j = p.id(1), rows = p.id(2);
    auto X = p.read(x, {blockB, 1, blockK});
    auto W = p.read(w, {1, blockK, blockN});
    Tile acc = p.fold(0, X.blocks(2), p.zeros({blockB, blockN}), [&](Index k, Tile acc) {
      return acc + dot(X.at({rows, h, k}).reshape({blockB, blockK}), W.at({h, k, j}).reshape({blockK, blockN}));
    });
    p.write(out, {blockB, 1, blockN}).put(acc.reshape({blockB, 1, blockN}), {rows, h, j});
  }, opts);
}

}  // namespace

// Program (b, head block, latent slice) scores its heads against every token of sequence b
// in steps of bl.tokens, and accumulates its slice of P . c_kv.
std::string mlaLatentAttention(const MlaTensors& t, const Tensor& qAbs, const Tensor& ctx, const RunOptions& opts,
                               std::optional<MlaBlocks> blocks) {
  if (t.qPe.dim(2) % 2 != 0)
    throw Error("mla_decode: the rope dimension must be even to rotate pairs; got " + std::to_string(t.qPe.dim(2)));
  const MlaBlocks bl = blocks ? *blocks : MlaBlocks::forDevice(deviceName(opts), qAbs.dim(2));
  const int64_t heads = t.qNope.dim(1), rope = t.qPe.dim(2), half = rope / 2, latent = qAbs.dim(2);
  // Scores in base-2 units (times log2 e), so that each probability is one fast exp2.
  const double scale = std::numbers::log2e / std::sqrt(static_cast<double>(t.qNope.dim(2) + rope));
  const double inf = std::numeric_limits<double>::infinity();
  const DType cacheType = t.latentCache.dtype();
  // An 8-bit cache is widened to bf16, which holds every 8-bit float exactly, so that its
  // products run on matrix units as a 16-bit cache's do (q in bf16, as FlashMLA's and vLLM's FP8
  // caches take it); the scales apply to the products.
  const bool scaled = isFloat8(cacheType);
  const DType computeType = scaled ? DType::bf16 : cacheType;
  return run({t.qNope.dim(0), cdiv(heads, bl.heads), cdiv(latent, bl.split)}, [&](Program& p) {
    Index b = p.id(0), hb = p.id(1), slice = p.id(2);
    Index length = p.index(p.gather(t.seqLens, {b}));
    auto cacheTile = [&](Tile x, const Shape& shape) { return x.reshape(shape).cast(computeType); };
    std::vector<Tile> cacheScales;  // read once, outside the loop
    for (int64_t cache = 0; scaled && cache < 2; ++cache) cacheScales.push_back(p.gather(t.cacheScales, {Index(cache)}));
    auto scaledBy = [&](Tile x, size_t cache) { return scaled ? x * cacheScales[cache] : x; };
    auto Q = p.read(qAbs, {1, bl.heads, bl.chunk});
    auto C = p.read(t.latentCache, {1, bl.tokens, bl.chunk});
    auto V = p.read(t.latentCache, {1, bl.tokens, bl.split});
    auto K = p.read(t.ropeKeyCache, {1, bl.tokens, rope});
    // RoPE on the query: (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin) over its two halves.
    Tile qPe = p.read(t.qPe, {1, bl.heads, rope}).at({b, hb, 0}).reshape({bl.heads, rope});
    Tile cos = p.read(t.ropeCos, {1, half}).at({b, 0}), sin = p.read(t.ropeSin, {1, half}).at({b, 0});
    Tile x1 = qPe.slice(1, 0, half), x2 = qPe.slice(1, half, half);
    Tile qRot = cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, 1).cast(computeType);
    auto [rowMax, rowSum, acc] = p.fold(
        0, cdiv(length, bl.tokens), std::tuple{p.full({bl.heads}, -inf), p.zeros({bl.heads}), p.zeros({bl.heads, bl.split})},
        [&](Index step, Tile rowMax, Tile rowSum, Tile acc) {
          Tile ropeScores = scaledBy(dot(qRot, cacheTile(K.at({b, step, 0}), {bl.tokens, rope}).transpose(), f32), 1);
          Tile s = p.fold(0, Q.blocks(2), p.zeros({bl.heads, bl.tokens}), [&](Index c, Tile s) {
            Tile q = Q.at({b, hb, c}).reshape({bl.heads, bl.chunk}).cast(computeType);
            return s + dot(q, cacheTile(C.at({b, step, c}), {bl.tokens, bl.chunk}).transpose(), f32);
          });
          s = scaledBy(s, 0) + ropeScores;
          Tile position = p.iota({bl.heads, bl.tokens}, 1) + step * bl.tokens;
          s = where(position < length, s * scale, -inf);
          Tile newMax = max(rowMax, s.max(1));
          Tile probs = (s - newMax.expand_dims(1)).fast_exp2();
          Tile rescale = (rowMax - newMax).fast_exp2();
          Tile values = cacheTile(V.at({b, step, slice}), {bl.tokens, bl.split});
          return std::tuple{newMax, rowSum * rescale + probs.sum(1),
                            acc * rescale.expand_dims(1) + scaledBy(dot(probs.cast(computeType), values, f32), 0)};
        });
    (void)rowMax;
    Tile o = acc / rowSum.expand_dims(1);
    p.write(ctx, {1, bl.heads, bl.split}).put(o.reshape({1, bl.heads, bl.split}), {b, hb, slice});
  }, named(opts, "mla_latent_attention"));
}

std::string mlaAbsorbQuery(const MlaTensors& t, const Tensor& qAbs, const RunOptions& opts) {
  return perHeadProduct(t.qNope, t.wUK, qAbs, named(opts, "mla_absorb_query"));
}

std::string mlaAbsorbValue(const MlaTensors& t, const Tensor& ctx, const RunOptions& opts) {
  return perHeadProduct(ctx, t.wUV, t.out, named(opts, "mla_absorb_value"));
}

std::string mlaDecode(const MlaTensors& t, const RunOptions& opts) {
  const int64_t batch = t.qNope.dim(0), heads = t.qNope.dim(1), latent = t.wUK.dim(2);
  Tensor qAbs = Tensor::empty({batch, heads, latent}), ctx = Tensor::empty({batch, heads, latent});
  std::vector<std::string> devices = {mlaAbsorbQuery(t, qAbs, opts), mlaLatentAttention(t, qAbs, ctx, opts),
                                      mlaAbsorbValue(t, ctx, opts)};
  std::string joined = devices[0];
  for (const std::string& d : devices)
    if (joined.find(d) == std::string::npos) joined += "+" + d;
  return joined;
}

std::string moeGemm(const Tensor& x, const Tensor& w, const Tensor& offsets, int64_t maxRows, const Tensor& out,
                    const RunOptions& opts) {
  constexpr int64_t blockM = 32, blockN = 64, blockK = 32;
  const int64_t tiles = cdiv(std::max<int64_t>(maxRows, 1), blockM);
  return run({w.dim(0) * tiles, cdiv(w.dim(2), blockN)}, [&](Program& p) {
    Index group = p.id(0) / tiles, n = p.id(1);
    Index first = p.index(p.gather(offsets, {group})), end = p.index(p.gather(offsets, {group + 1}));
    Index row0 = first + (p.id(0) % tiles) * blockM;
    auto X = p.read(x, {blockM, blockK});
    auto W = p.read(w, {1, blockK, blockN});
    // A tile past its group's rows does no work: its fold runs zero times and it writes nothing.
    Index steps = select(row0 < end, W.blocks(1), 0);
    Tile acc = p.fold(0, steps, p.zeros({blockM, blockN}), [&](Index k, Tile acc) {
      Tile a = X.at_offset({row0, k * blockK});
      return dot(a, W.at({group, k, n}).reshape({blockK, blockN}), acc);
    });
    Tile rows = p.iota({blockM, 1}, 0) + row0, cols = p.iota({1, blockN}, 1) + n * blockN;
    p.scatter(out, {rows, cols}, acc, rows < end);  // rows of the next group are not this expert's
  }, named(opts, "moe_gemm"));
}

std::string cumsum(const Tensor& x, const Tensor& out, const RunOptions& opts) {
  const int64_t blockRows = 2, blockCols = nextPow2(x.dim(1));
  return run({cdiv(x.dim(0), blockRows)}, [&](Program& p) {
    Index i = p.id(0);
    p.write(out, {blockRows, blockCols}).put(p.read(x, {blockRows, blockCols}).at({i, 0}).cumsum(1), {i, 0});
  }, named(opts, "cumsum"));
}

std::string topk(const Tensor& x, int64_t k, const Tensor& values, const Tensor& indices, const RunOptions& opts) {
  const int64_t blockCols = nextPow2(x.dim(1));
  return run({x.dim(0)}, [&](Program& p) {
    Index i = p.id(0);
    // Columns past the row read -inf, so they come after every real element, -inf ones too.
    auto [largest, at] = tj::topk(p.read(x, {1, blockCols}, -INFINITY).at({i, 0}), k, 1);
    p.write(values, {1, k}).put(largest, {i, 0});
    p.write(indices, {1, k}).put(at, {i, 0});
  }, named(opts, "topk"));
}

std::string histogram(const Tensor& values, const Tensor& counts, const RunOptions& opts) {
  constexpr int64_t block = 4096;
  const int64_t bins = counts.dim(0);
  if (bins > kBlockHistogramBins) {
    static const auto kernel = tj::kernel("histogram", [](Program& p, const Tensor& values, const Tensor& counts) {
      Tile v = p.read(values, {block}, -1).at({p.id(0)});  // past the end: -1, outside every bin
      p.atomic_add(counts, {v}, 1);
    });
    return kernel.launch({cdiv(values.dim(0), block)}, values, counts, opts);
  }
  // Block histograms summed over a program's blocks first: one atomic add per bin and
  // program instead of one per value.
  constexpr int64_t blocksPerProgram = 16;
  return run({cdiv(cdiv(values.dim(0), block), blocksPerProgram)}, [&](Program& p) {
    auto v = p.read(values, {block}, -1);
    Index first = p.id(0) * blocksPerProgram;
    Tile h = p.fold(first, min(first + blocksPerProgram, v.blocks(0)), p.zeros({bins}, i32),
                    [&](Index b, Tile sum) { return sum + tj::histogram(v.at({b}), bins); });
    p.atomic_add(counts, {p.arange(bins)}, h, h != 0);
  }, named(opts, "histogram"));
}

std::vector<std::string> sampleNames() {
  return {"gemm",    "gemm_f16",  "gemm_bf16", "attention",  "attention_causal", "attention_f16", "attention_f8e4m3",
          "softmax", "layernorm", "vector_add", "fused", "dropout", "embedding", "histogram", "paged_attention",
          "moe_gemm", "cumsum", "topk"};
}

ir::Kernel traceSample(const std::string& name, const std::string& device) {
  CaptureTraces capture;
  auto matrix = [](int64_t r, int64_t c, DType t = f32) { return Tensor::zeros({r, c}, t); };
  auto heads = [](DType t = f32) { return Tensor::zeros({1, 2, 37, 64}, t); };
  auto vector = [](int64_t n) { return Tensor::zeros({n}); };
  auto gemmBlocks = GemmBlocks::from(gemmTuneSpace(device).at(0));
  auto attentionBlocks = AttentionBlocks::from(attentionTuneSpace(device).at(0));
  if (name == "gemm") gemm(matrix(37, 29), matrix(29, 23), matrix(37, 23), {}, gemmBlocks);
  else if (name == "gemm_f16") gemm(matrix(37, 29, f16), matrix(29, 23, f16), matrix(37, 23), {}, gemmBlocks);
  else if (name == "gemm_bf16") gemm(matrix(37, 29, bf16), matrix(29, 23, bf16), matrix(37, 23), {}, gemmBlocks);
  else if (name == "attention" || name == "attention_causal")
    attention(heads(), heads(), heads(), heads(), name == "attention_causal", {}, attentionBlocks);
  else if (name == "attention_f16") attention(heads(f16), heads(f16), heads(f16), heads(), false, {}, attentionBlocks);
  else if (name == "attention_f8e4m3")  // v stored [batch, heads, dim, seq]; q's scales per row, k's and v's per block
    attention(heads(f8e4m3), heads(f8e4m3), Tensor::zeros({1, 2, 64, 37}, f8e4m3).transpose(2, 3), heads(), false, {},
              attentionBlocks, {Tensor::zeros({2, 37, 1}), Tensor::zeros({2, 1, 1}), Tensor::zeros({2, 1, 1})});
  else if (name == "softmax") softmax(matrix(37, 29), matrix(37, 29));
  else if (name == "layernorm") layernorm(matrix(37, 29), vector(29), vector(29), matrix(37, 29));
  else if (name == "vector_add") vectorAdd(vector(1000), vector(1000), vector(1000));
  else if (name == "fused") fused(vector(1000), vector(1000), vector(1000), vector(1000));
  else if (name == "dropout") dropout(vector(1000), vector(1000), 0.25, 7);
  else if (name == "paged_attention")
    pagedAttention(Tensor::zeros({3, 2, 8}), Tensor::zeros({7, 2, 16, 8}), Tensor::zeros({7, 2, 16, 8}),
                   Tensor::zeros({3, 4}, DType::i32), Tensor::full({3}, 1, DType::i32), Tensor::zeros({3, 2, 8}));
  else if (name == "moe_gemm")
    moeGemm(matrix(37, 29), Tensor::zeros({3, 29, 23}), Tensor::from({4}, {0, 10, 10, 37}, DType::i32), 27, matrix(37, 23));
  else if (name == "cumsum") cumsum(matrix(37, 29), matrix(37, 29));
  else if (name == "topk") topk(matrix(37, 29), 5, matrix(37, 5), Tensor::zeros({37, 5}, DType::i32));
  else if (name == "histogram") histogram(Tensor::zeros({1000}, DType::i32), Tensor::zeros({37}, DType::i32));
  else if (name == "embedding") embedding(matrix(101, 300), Tensor::zeros({37}, DType::i32), matrix(37, 300));
  else {
    std::string known;
    for (const std::string& n : sampleNames()) known += (known.empty() ? "" : ", ") + n;
    throw Error("sample: unknown sample '" + name + "'; known: " + known);
  }
  return capture.kernels().at(0);
}

}  // namespace tj::samples
