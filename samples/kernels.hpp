// The sample kernels, shared by the sample programs, tile-ir --sample and the tests.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "dsl/tilejit.hpp"
#include "dsl/autotune.hpp"

namespace tj::samples {

// Each function fills `out` (allocated by the caller; a Tensor is a handle to shared storage) and returns the
// name of the device that ran the kernel.
struct GemmBlocks {
  int64_t m = 128, n = 64, k = 64;  // the fastest of a sweep at 2048^3 on AVX-512
  int64_t stages = 0;               // p.stages of the K loop; 0: the device's default
  int64_t warps = 0;                // p.warps; 0: the device's default
  bool specialize = false;          // p.warp_specialize: a producer warpgroup issues the K loop's copies
  TuneConfig config() const;        // block_m, block_n, block_k and, when set, stages, warps and warp_specialize
  static GemmBlocks from(const TuneConfig& config);
};
// C accumulates in its own dtype: f32 for f32, f16 or bf16 operands, i32 for i8.
std::string gemm(const Tensor& a, const Tensor& b, const Tensor& c, const RunOptions& opts = {}, GemmBlocks blocks = {});
// Split-K: the K loop divided among `splits` programs per C block, each adding its partial
// product into C with atomic adds; C must start at zero. For skinny M x N with a long K.
std::string gemmSplitK(const Tensor& a, const Tensor& b, const Tensor& c, int64_t splits, const RunOptions& opts,
                       GemmBlocks blocks);

// FP8 products with scales, as DeepSeek-V3 trains and serves (kScaleBlock-wide blocks along K):
// quantizeFp8 turns an f32 matrix x [rows, cols] (or a stack of them, [groups, rows, cols])
// into q (f8e4m3 or f8e5m2, x's shape) with one f32 scale per block of blockRows x kScaleBlock
// elements (blockRows 1: per row, for activations; kScaleBlock: square blocks, for weights):
// scale = the block's largest magnitude over q's largest finite value (1 for an all-zero block),
// q = x / scale rounded and saturated. scale is [cdiv(rows, blockRows), cdiv(cols, kScaleBlock)]
// (after groups for a stack).
inline constexpr int64_t kScaleBlock = 128;
std::string quantizeFp8(const Tensor& x, const Tensor& q, const Tensor& scale, int64_t blockRows,
                        const RunOptions& opts = {});
// C [M, N] = sum over K blocks of (A·B restricted to the block) · aScale · bScale, with A [M, K]
// and B [K, N] 8-bit floats, the products in f32. aScale is [M, cdiv(K, kScaleBlock)] (per row
// and K block) or [1, 1] (per tensor); bScale [cdiv(K, kScaleBlock), cdiv(N, kScaleBlock)] or
// [1, 1]. blocks.k and blocks.n must divide kScaleBlock. C is f32, f16 or bf16. B may be the
// transposed view of weights stored [N, K] (torch._scaled_mm's layout), read along K then.
std::string scaledGemm(const Tensor& a, const Tensor& aScale, const Tensor& b, const Tensor& bScale, const Tensor& c,
                       const RunOptions& opts, GemmBlocks blocks);
// scaledGemm's blocks on the device opts picks: deep 128-wide steps on the CPU and CUDA (two
// warpgroups, 3 stages), small ones for lavapipe's workgroup memory elsewhere.
GemmBlocks scaledGemmBlocks(const RunOptions& opts);

// q, k, v, out: [batch, heads, seq, dim]; flash attention with online softmax.
struct AttentionBlocks {
  int64_t m = 64, n = 64;  // query rows of a program, keys per step of its loop
  int64_t stages = 0;      // p.stages of the key loop; 0: the device's default
  int64_t warps = 0;       // p.warps; 0: the device's default
  bool specialize = false;  // p.warp_specialize: a producer warpgroup issues the key loop's copies
  // Each step multiplies the previous key block's probabilities (carried) by its values, which
  // nothing in this block's softmax feeds, so that the product runs while the softmax does
  // (FlashAttention-3's pipelining within a warpgroup, on Hopper's asynchronous wgmma). One step more.
  bool overlapSoftmax = false;
  TuneConfig config() const;  // block_m, block_n and, when set, stages, warps, warp_specialize and overlap_softmax
  static AttentionBlocks from(const TuneConfig& config);
};
// FP8 attention (FlashAttention-3's recipe, with DeepSeek-V3's fine-grained scales): q, k and v
// in f8e4m3 or f8e5m2, each with f32 scales: q per query row ([batch * heads, seq, 1]), k and v
// per kScaleBlock keys ([batch * heads, cdiv(seq, kScaleBlock), 1]), as quantizeFp8 makes them
// from [batch * heads, seq, dim] views; blocks.n must divide kScaleBlock, dim be at most it.
// Both products run on the 8-bit values (P rounded to v's dtype, times 2^8), the scales applied
// to their f32 results. v may be the transposed view of values stored [batch, heads, dim, seq],
// which 8-bit wgmma then reads as it is (its b must run along K, the keys).
struct AttentionScales {
  Tensor q, k, v;
};
std::string attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, bool causal,
                      const RunOptions& opts = {}, AttentionBlocks blocks = {}, const AttentionScales& scales = {});
// A kernel's grid and body, for tracing it (grad::backward derives its backward from the trace).
struct KernelDefinition {
  std::vector<int64_t> grid;
  KernelBody body;
};
// What attention and layer norm compute in for inputs of `input`: f64 for f64 (gradient
// checks), else f32.
DType accumulatorFor(DType input);
// attention()'s kernel; with `lse` ([batch, heads, seq], f64 for f64 inputs, else f32) it also
// writes each query row's logsumexp of scores, which the hand-written backward reads.
KernelDefinition attentionKernel(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, bool causal,
                                 AttentionBlocks blocks = {}, const Tensor& lse = {}, const AttentionScales& scales = {});
// The tensors of attention's backward (all f32, or all f64): the forward's inputs, output and
// logsumexp, the output's gradient, and the inputs' gradients to write.
struct AttentionGradients {
  Tensor q, k, v, out, lse, dOut;
  Tensor dq, dk, dv;
};
// Hand-written, as FlashAttention-2's: D = rowsum(dO * O); then one kernel per block of keys
// (dK, dV over the query blocks that see it) and one per block of queries (dQ), both
// recomputing P = exp(S - lse) blockwise; no atomics.
std::string attentionBackward(const AttentionGradients& t, bool causal, const RunOptions& opts = {},
                              AttentionBlocks blocks = {});

// Autotuning (dsl/autotune.hpp). The spaces to tune over on a device, the default first:
// a sweep on cpu, vulkan and cuda (blocks and, on cuda, stages and warps), only the default elsewhere.
std::vector<TuneConfig> gemmTuneSpace(const std::string& device);
std::vector<TuneConfig> attentionTuneSpace(const std::string& device);
// Split-K products have a small C: deep K steps over C-sized blocks, reading A and B once.
std::vector<TuneConfig> gemmSplitKTuneSpace(const std::string& device);
// Random operands of an MxNxK gemm of `dtype` (f32, f16, bf16, i8, u8), and C's dtype: i8 and u8
// multiply A of that dtype (its whole range) by B of i8 into an exact i32 C; the floats into f32.
struct GemmOperands {
  Tensor a, b;
  DType cType;
};
GemmOperands gemmOperands(DType dtype, int64_t m, int64_t n, int64_t k);
// The best blocks for these arguments on opts.device (key: the bucketed sizes and the operand
// dtype), from the tuning file or timed now; use GemmBlocks::from(result.chosen). Writes `c`.
// `tuning` sets the file and the timing; its device is opts.device.
TuneResult tuneGemm(const Tensor& a, const Tensor& b, const Tensor& c, const RunOptions& opts = {},
                    TuneOptions tuning = {});
// gemmSplitK's blocks, keyed on the sizes and the splits as well. Adds into `c`.
TuneResult tuneGemmSplitK(const Tensor& a, const Tensor& b, const Tensor& c, int64_t splits,
                          const RunOptions& opts = {}, TuneOptions tuning = {});
// Keyed on batch * heads, seq, dim; the kernel is "attention" or "attention_causal". Writes `out`.
TuneResult tuneAttention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, bool causal,
                         const RunOptions& opts = {}, TuneOptions tuning = {}, const AttentionScales& scales = {});

// Multi-head latent attention (DeepSeek-V2) at decode, with the up-projections absorbed:
// per-head keys and values are never formed. A token's cache entry is its latent c_kv
// [latent] and its rotary key k_pe [rope] (stored after RoPE at its position), shared by
// every head. Three launches:
//   qAbs[b, h] = qNope[b, h] . wUK[h]                       (absorb the key projection)
//   ctx[b, h]  = softmax((qAbs . c_kv^T + rope(qPe) . k_pe^T) * scale) . c_kv
//   out[b, h]  = ctx[b, h] . wUV[h]                         (absorb the value projection)
// with scale = 1 / sqrt(nope + rope) and online softmax over each sequence's first
// seqLens[b] tokens. The caches are f32, f16 or bf16, whose products accumulate in f32, or an
// 8-bit float with a scale per cache (an FP8 KV cache, as vLLM's): widened to bf16, as the
// query is, the products accumulating in f32.
struct MlaTensors {
  Tensor qNope;             // [batch, heads, nope]
  Tensor qPe;               // [batch, heads, rope], before RoPE
  Tensor ropeCos, ropeSin;  // [batch, rope / 2]: the rotation at each query's position
  Tensor wUK;               // [heads, nope, latent]
  Tensor wUV;               // [heads, latent, value]
  Tensor latentCache;       // c_kv [batch, maxSeq, latent]
  Tensor ropeKeyCache;      // k_pe [batch, maxSeq, rope], same dtype as latentCache
  Tensor seqLens;           // [batch] i32, each in [1, maxSeq]
  Tensor out;               // [batch, heads, value] f32
  // [2] f32: what 8-bit float caches hold times these is c_kv and k_pe (unused for others).
  Tensor cacheScales = Tensor::full({2}, 1.0);
};
// The attention launch's blocks: heads per program, tokens per step, the latent chunk of
// one score product, and the latent columns of ctx one program accumulates (the latent
// is split over programs where workgroup memory is small).
struct MlaBlocks {
  int64_t heads, tokens, chunk, split;
  static MlaBlocks forDevice(const std::string& device, int64_t latent);
};
// Returns the device that ran all three launches, or their devices joined by '+' if not one.
std::string mlaDecode(const MlaTensors& t, const RunOptions& opts = {});
// Its three launches, for timing them apart; qAbs and ctx are [batch, heads, latent] f32.
std::string mlaAbsorbQuery(const MlaTensors& t, const Tensor& qAbs, const RunOptions& opts = {});
// The latent attention's blocks are MlaBlocks::forDevice(opts' device) unless given.
std::string mlaLatentAttention(const MlaTensors& t, const Tensor& qAbs, const Tensor& ctx, const RunOptions& opts = {},
                               std::optional<MlaBlocks> blocks = {});
std::string mlaAbsorbValue(const MlaTensors& t, const Tensor& ctx, const RunOptions& opts = {});

std::string softmax(const Tensor& x, const Tensor& out, const RunOptions& opts = {});                 // over rows
std::string layernorm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
                      double eps = 1e-5, const RunOptions& opts = {});
KernelDefinition layernormKernel(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
                                 double eps = 1e-5);
// The tensors of layer norm's backward: the forward's input and weight, the output's gradient,
// and the gradients to write (computed in accumulatorFor(x's dtype)).
struct LayerNormGradients {
  Tensor x, weight, dOut;
  Tensor dx, dWeight, dBias;
};
// Hand-written, as Triton's layer-norm tutorial: a kernel per block of rows recomputes the
// mean and 1/std, writes dx and the block's column sums of dOut * x̂ and dOut; a second kernel
// adds those partial sums per column block into dWeight and dBias (no atomics).
std::string layernormBackward(const LayerNormGradients& t, double eps = 1e-5, const RunOptions& opts = {});
std::string vectorAdd(const Tensor& a, const Tensor& b, const Tensor& out, const RunOptions& opts = {});
std::string fused(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& out,
                  const RunOptions& opts = {});  // relu(a * b + c)
// Triton's low-memory dropout: out = x / (1 - p) where rand(seed, offset) > p, else 0. The
// mask is never stored: the seed redraws it. One kernel for every p and seed (runtime scalars).
std::string dropout(const Tensor& x, const Tensor& out, double p, int64_t seed, const RunOptions& opts = {});
// An embedding lookup: out[i, :] = table[ids[i], :], the rows read through gather; an id
// outside [0, rows of the table) reads a row of zeros (a padding id such as -1).
std::string embedding(const Tensor& table, const Tensor& ids, const Tensor& out, const RunOptions& opts = {});
// Decode attention over a paged KV cache (vLLM's layout): one query per sequence and head,
// q [batch, heads, dim]; kCache and vCache [pages, heads, pageSize, dim]; blockTable [batch,
// maxPages] i32, the cache page of each sequence's j-th page; seqLens [batch] i32, each >= 1.
// Pages past a sequence's length are never read.
std::string pagedAttention(const Tensor& q, const Tensor& kCache, const Tensor& vCache, const Tensor& blockTable,
                           const Tensor& seqLens, const Tensor& out, const RunOptions& opts = {});
// A grouped (mixture-of-experts) GEMM in one launch: rows [offsets[g], offsets[g + 1]) of x
// [rows, K] go through expert g's weights w [groups, K, N] into out [rows, N]; offsets is
// i32 [groups + 1], nondecreasing, from 0 to rows. maxRows bounds any group's row count.
std::string moeGemm(const Tensor& x, const Tensor& w, const Tensor& offsets, int64_t maxRows, const Tensor& out,
                    const RunOptions& opts = {});
// out[r, c] = x[r, 0] + ... + x[r, c]: a prefix sum of each row (cols up to 2^14).
std::string cumsum(const Tensor& x, const Tensor& out, const RunOptions& opts = {});
// The k largest elements of each row of x [rows, cols] f32, largest first, into values
// [rows, k] f32 and their column indices into indices [rows, k] i32 (of equal elements, the
// first; NaN counts as largest). Rows up to 2^14 columns.
std::string topk(const Tensor& x, int64_t k, const Tensor& values, const Tensor& indices, const RunOptions& opts = {});
// counts[v] += 1 for every value v of `values` (i32) inside [0, bins), by atomic adds: counts
// must start at zero (or hold counts to add to). Up to kBlockHistogramBins bins each program
// counts its block first (tj::histogram) and adds its nonzero counts; past it, one atomic add
// per value.
inline constexpr int64_t kBlockHistogramBins = 4096;
std::string histogram(const Tensor& values, const Tensor& counts, const RunOptions& opts = {});

// Names accepted by traceSample; traceSample returns the canonical IR of the sample
// at small odd sizes (for tile-ir --sample and golden tests), with the blocks the sample
// uses by default on `device` (the first of its tuning space).
std::vector<std::string> sampleNames();
ir::Kernel traceSample(const std::string& name, const std::string& device = "cpu");

}  // namespace tj::samples
