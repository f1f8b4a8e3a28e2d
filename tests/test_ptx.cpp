// NVIDIA through LLVM's NVPTX backend (lower/llvm_gpu, lower/ptx): every sample's kernel
// printed as PTX and assembled by the CUDA toolkit's ptxas. There is no GPU here, so these
// check everything short of running: that the PTX is what ptxas accepts, and the
// instructions that carry the semantics (no contraction, mma.sync for f16 dots).
#include <doctest/doctest.h>

#include <cstdio>

#include "dsl/tilejit.hpp"
#include "ir/passes.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"
#include "lower/gpu/spread_over_warps.hpp"
#include "lower/llvm_gpu/print_kernel_ir.hpp"
#include "lower/ptx/nvptx.hpp"
#include "samples/kernels.hpp"
#include "tests/support.hpp"

namespace tj::ptxtest {

namespace {

const char* const kArchs[] = {"sm_80", "sm_90"};

std::string ptxOf(const ir::Kernel& k, const std::string& arch) {
  const layout::Target& t = layout::targetByName(arch);
  return ptx::printPtx(gpu::lowerToKernelIR(k, layout::inferLayouts(k, t), t), arch);
}

ir::Kernel retyped(const std::string& sample, const std::string& from, const std::string& to) {
  return test::retyped(samples::traceSample(sample), {{from, to}});
}

// As a launch with contiguous tensors whose rows are whole 16-byte vectors lowers it.
std::string contiguousPtxOf(const ir::Kernel& k, const std::string& arch) {
  const layout::Target& t = layout::targetByName(arch);
  gpu::KernelLoweringOptions options;
  options.vectorTensors.assign(k.tensors.size(), true);
  return ptx::printPtx(gpu::lowerToKernelIR(k, layout::inferLayouts(k, t), t, options), arch);
}

// As the CUDA device lowers it for such a launch: at the kernel's own warps (p.warps) when it sets them.
std::string devicePtxOf(const ir::Kernel& k, const std::string& arch) {
  gpu::KernelLoweringOptions options;
  options.vectorTensors.assign(k.tensors.size(), true);
  return ptx::printPtx(gpu::lowerWithinCodeBudget(k, layout::targetByName(arch), options), arch);
}

// The f16 gemm sample with 8-bit float operands (e4m3 x e5m2) and its f32 accumulator.
ir::Kernel gemmF8() {
  return test::retyped(samples::traceSample("gemm_f16"), {{"f16", "f8e4m3"},
                                                         {"t1: tensor<f8e4m3", "t1: tensor<f8e5m2"},
                                                         {"tile<64x64xf8e4m3>", "tile<64x64xf8e5m2>"}});
}

// How many instructions of a SASS (or PTX) listing start with `opcode` (e.g. "LDSM", "LDG.E.128").
int64_t sassCount(const std::string& sass, const std::string& opcode) {
  int64_t n = 0;
  for (size_t at = 0; (at = sass.find(" " + opcode, at)) != std::string::npos; ++at) {
    char next = sass[at + 1 + opcode.size()];
    n += next == '.' || next == ' ';
  }
  return n;
}

}  // namespace

TEST_CASE("ptx: f16 and bf16 gemm and attention at their default configs: no spills: HMMA fed by LDSM, LDGSTS and 128-bit loads") {
  for (const char* arch : kArchs)
    for (const char* dtype : {"f16", "bf16"})
      for (const char* sample : {"gemm_f16", "attention_f16"}) {
        CAPTURE(arch);
        CAPTURE(dtype);
        CAPTURE(sample);
        test::Assembled a = test::assemble(contiguousPtxOf(retyped(sample, "f16", dtype), arch), arch, true);
        if (a.report.empty()) continue;
        CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
        size_t used = a.report.find("Used ");
        std::printf("ptx: %s %s %s: %s", sample, dtype, arch, used == std::string::npos ? "" : a.report.c_str() + used);
        if (a.sass.empty()) continue;
        CHECK(sassCount(a.sass, "HMMA") > 0);
        CHECK(sassCount(a.sass, "LDSM") > 0);
        CHECK(sassCount(a.sass, "LDG.E.U16") == 0);  // no operand element is loaded alone
        if (std::string(sample) == "attention_f16") CHECK(sassCount(a.sass, "F2FP") > 0);  // P's pairs rounded at once
        if (std::string(sample) == "gemm_f16") {  // its fold reads ahead: cp.async into a ring of 2 stages
          CHECK(sassCount(a.sass, "LDGSTS.E.BYPASS.128") > 0);
          CHECK(sassCount(a.sass, "DEPBAR") > 0);
        } else {  // through registers: 16-byte loads and stores to workgroup memory
          CHECK(sassCount(a.sass, "LDG.E.128") > 0);
          CHECK(sassCount(a.sass, "STS.128") > 0);
        }
      }
}

TEST_CASE("ptx: on sm_90a f16 and bf16 gemm and attention run HGMMA from descriptors, fed by TMA (UTMALDG) under mbarriers, no spills") {
  for (const char* dtype : {"f16", "bf16"})
    for (const char* sample : {"gemm_f16", "attention_f16"}) {
      CAPTURE(dtype);
      CAPTURE(sample);
      std::string ptx = contiguousPtxOf(retyped(sample, "f16", dtype), "sm_90a");
      for (const char* instruction : {".target sm_90a", "wgmma.fence.sync.aligned", "wgmma.mma_async.sync.aligned.m64n64k16.f32",
                                      "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0",
                                      "fence.proxy.async.shared::cta", ".shared .align 1024", "mbarrier.init.shared::cta.b64",
                                      "mbarrier.arrive.expect_tx.shared::cta.b64", "mbarrier.try_wait.parity.shared::cta.b64",
                                      "cp.async.bulk.tensor.", ".param .align 64 .b8", "cvta.param"})
        CHECK_MESSAGE(ptx.find(instruction) != std::string::npos, instruction);
      // attention's probabilities are fast_exp2's: one ex2.approx each.
      CHECK((ptx.find("ex2.approx.ftz.f32") != std::string::npos) == (std::string(sample) == "attention_f16"));
      // A stage's descriptors add their k-steps' offsets to one encoded address: at most one
      // encoding (a shift of the address) per two wgmmas (one per instruction before).
      auto count = [&](const std::string& what) {
        size_t n = 0;
        for (size_t at = 0; (at = ptx.find(what, at)) != std::string::npos; ++at) ++n;
        return n;
      };
      CHECK(2 * count("shr.u64") <= count("wgmma.mma_async"));
      // 128-byte swizzle (mode 1 in bits 62-63) with 8-row groups 1024 bytes apart (64 << 32).
      CHECK(ptx.find(std::to_string((uint64_t{1} << 62) | (uint64_t{64} << 32) | (uint64_t{1} << 16))) != std::string::npos);
      test::Assembled a = test::assemble(ptx, "sm_90a", true);
      if (a.report.empty()) continue;
      CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
      // Every register a wgmma reads is written before its group's fence: ptxas issues the group
      // at once instead of waiting for each instruction before the next (its advisory C7519).
      CHECK(a.report.find("warpgroup.arrive is injected") == std::string::npos);
      size_t used = a.report.find("Used ");
      std::printf("ptx: %s %s sm_90a: %s", sample, dtype, used == std::string::npos ? "" : a.report.c_str() + used);
      if (a.sass.empty()) continue;
      CHECK(sassCount(a.sass, "HGMMA") > 0);
      CHECK(sassCount(a.sass, "HMMA") == 0);
      CHECK(sassCount(a.sass, "LDSM") == 0);
      CHECK(sassCount(a.sass, "UTMALDG") > 0);
      CHECK(sassCount(a.sass, "SYNCS") > 0);  // the transaction barriers' arrive and phase checks
      if (std::string(sample) == "attention_f16") {
        CHECK(sassCount(a.sass, "MUFU.EX2") > 0);  // its fast_exp2
        CHECK(sassCount(a.sass, "F2FP") > 0);      // P's pairs rounded for wgmma's a at once
        CHECK(sassCount(a.sass, "F2F") == 0);
      }
      if (std::string(sample) == "gemm_f16") CHECK(sassCount(a.sass, "UTMASTG") > 0);  // the result, from workgroup memory
      if (std::string(sample) == "gemm_f16") CHECK(sassCount(a.sass, "LDGSTS") == 0);
    }
}

TEST_CASE("ptx: on sm_90a a gemm on mma.sync fed by TMA aligns workgroup memory to TMA's 1024-byte swizzle patterns") {
  std::string ptx = devicePtxOf(test::retyped(samples::traceSample("gemm_f16"), {{"grid 2 {", "grid 2 warps 2 {"}}), "sm_90a");
  CHECK(ptx.find("cp.async.bulk.tensor.2d") != std::string::npos);
  CHECK(ptx.find("wgmma") == std::string::npos);
  CHECK(ptx.find(".shared .align 1024") != std::string::npos);
  test::Assembled a = test::assemble(ptx, "sm_90a", true);
  if (!a.sass.empty()) CHECK(sassCount(a.sass, "UTMALDG") > 0);
}

TEST_CASE("ptx: a 3-stage sm_90a gemm keeps a wgmma group in flight, which ptxas does not serialize") {
  for (int64_t warps : {4, 8}) {
    CAPTURE(warps);
    ir::Kernel k = test::withStages(samples::traceSample("gemm_f16"), 3);
    if (warps == 8) k = test::retyped(k, {{"grid 2 {", "grid 2 warps 8 {"}});
    std::string ptx = devicePtxOf(k, "sm_90a");
    CHECK(ptx.find("wgmma.wait_group.sync.aligned 1;") != std::string::npos);
    test::Assembled a = test::assemble(ptx, "sm_90a", true);
    if (a.report.empty()) continue;
    CHECK_MESSAGE(a.report.find("serialized") == std::string::npos, a.report);
    CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
    if (!a.sass.empty()) CHECK(sassCount(a.sass, "HGMMA") > 0);
  }
}

// The gemm sample's kernel at `blocks`, as traced for a launch (its canonical IR).
ir::Kernel gemmKernel(const samples::GemmBlocks& blocks, DType dtype) {
  Tensor a = Tensor::zeros({4096, 4096}, dtype), b = Tensor::zeros({4096, 4096}, dtype), c = Tensor::zeros({4096, 4096});
  CaptureTraces capture;
  samples::gemm(a, b, c, {.device = "interp"}, blocks);
  REQUIRE(capture.kernels().size() == 1);
  return capture.kernels()[0];
}

TEST_CASE("ptx: the gemm's CUDA tune space assembles for sm_90a without spills, on HGMMA where its blocks fill warpgroups") {
  for (const TuneConfig& config : samples::gemmTuneSpace("cuda")) {
    samples::GemmBlocks blocks = samples::GemmBlocks::from(config);
    CAPTURE(config.str());
    test::Assembled a = test::assemble(devicePtxOf(gemmKernel(blocks, DType::bf16), "sm_90a"), "sm_90a", true);
    if (a.report.empty()) continue;
    size_t used = a.report.find("Used ");
    std::printf("ptx: gemm bf16 %lldx%lldx%lld, %lld stages, %lld warps%s, sm_90a: %s", (long long)blocks.m, (long long)blocks.n,
                (long long)blocks.k, (long long)blocks.stages, (long long)blocks.warps, blocks.specialize ? ", specialized" : "",
                used == std::string::npos ? "" : a.report.c_str() + used);
    CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
    int64_t warps = blocks.warps > 0 ? blocks.warps : 4;
    if (!a.sass.empty()) CHECK((sassCount(a.sass, "HGMMA") > 0) == (warps % 4 == 0 && blocks.m % (16 * warps) == 0));
  }
}

namespace {

// An attention kernel of the CUDA tune space assembled for sm_90a as the device lowers it,
// ptxas's registers printed under `label`.
test::Assembled assembleAttention(const samples::KernelDefinition& def, const std::string& label, bool causal,
                                  const samples::AttentionBlocks& blocks) {
  test::Assembled a = test::assemble(devicePtxOf(*tj::trace(def.grid, def.body, "attention").kernel, "sm_90a"), "sm_90a", true);
  size_t used = a.report.find("Used ");
  if (used != std::string::npos)
    std::printf("ptx: attention %s%s %lldx%lld, %lld stages, %lld warps%s, sm_90a: %s", label.c_str(), causal ? " causal" : "",
                (long long)blocks.m, (long long)blocks.n, (long long)blocks.stages, (long long)blocks.warps,
                blocks.specialize ? ", specialized" : "", a.report.c_str() + used);
  return a;
}

}  // namespace

// As the device lowers them (the key loop split at its masks): bf16 at d 128, the GPU check's
// attention, causal and not.
TEST_CASE("ptx: a warp-specialized sm_90a gemm: HGMMA and UTMALDG on two roles that meet at named barriers, registers moved by setmaxnreg, the result stored a box at a time") {
  for (int64_t n : {128, 256}) {
    CAPTURE(n);
    samples::GemmBlocks blocks{128, n, 64, n == 128 ? 4 : 3, 8, true};
    std::string ptx = devicePtxOf(gemmKernel(blocks, DType::bf16), "sm_90a");
    for (const char* instruction : {".maxntid 384, 1, 1", "setmaxnreg.inc.sync.aligned.u32 232", "setmaxnreg.dec.sync.aligned.u32 40",
                                    "barrier.sync \t1, 384", "barrier.sync \t2, 256", "cp.async.bulk.tensor.", "wgmma.mma_async",
                                    "cp.async.bulk.wait_group.read 1"})
      CHECK_MESSAGE(ptx.find(instruction) != std::string::npos, instruction);
    // Persistent: the result leaves by boxes of 128 x 32 f32, each waited for on its own so
    // that the next is staged meanwhile.
    CHECK(sassCount(ptx, "cp.async.bulk.wait_group") == n / 32);
    test::Assembled a = test::assemble(ptx, "sm_90a", true);
    if (a.report.empty()) continue;
    CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
    if (a.sass.empty()) continue;
    CHECK(sassCount(a.sass, "HGMMA") > 0);
    // A's box and B's n / 64 (of 128-byte rows), in the producer's loop alone: none before it.
    CHECK(sassCount(a.sass, "UTMALDG") == 1 + n / 64);
    CHECK(sassCount(a.sass, "UTMASTG") == n / 32);
    // ptxas keeps them where the consumers need more than the 168 registers of 384 threads.
    if (n == 256) CHECK(sassCount(a.sass, "USETMAXREG") == 2);
    CHECK(a.sass.find("BAR.SYNC.DEFER_BLOCKING 0x1, 0x180") != std::string::npos);
  }
}

TEST_CASE("ptx: attention's CUDA tune space assembles for sm_90a without spills, bf16 at d 128") {
  for (bool causal : {false, true})
    for (const TuneConfig& config : samples::attentionTuneSpace("cuda")) {
      samples::AttentionBlocks blocks = samples::AttentionBlocks::from(config);
      CAPTURE(config.str());
      CAPTURE(causal);
      Tensor q = Tensor::zeros({1, 2, 256, 128}, DType::bf16), out = Tensor::zeros({1, 2, 256, 128});
      test::Assembled a = assembleAttention(samples::attentionKernel(q, q, q, out, causal, blocks), "bf16 d128", causal, blocks);
      if (a.report.empty()) continue;
      CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
    }
}

// Warp-specialized on two consumer warpgroups: each its own copy of the code, taking turns on
// the tensor cores at named barriers 3 and 4 (FlashAttention-3's ping-pong).
TEST_CASE("ptx: warp-specialized attention's two consumer warpgroups take turns at named barriers (BAR.SYNC, BAR.ARV)") {
  samples::AttentionBlocks blocks{128, 64, 3, 8, true};
  Tensor q = Tensor::zeros({1, 2, 256, 128}, DType::bf16), out = Tensor::zeros({1, 2, 256, 128});
  samples::KernelDefinition def = samples::attentionKernel(q, q, q, out, false, blocks);
  std::string ptx = devicePtxOf(*tj::trace(def.grid, def.body, "attention").kernel, "sm_90a");
  for (const char* instruction : {"barrier.sync \t3, 256", "barrier.sync \t4, 256", "barrier.arrive 3, 256", "barrier.arrive 4, 256",
                                  "setmaxnreg.inc.sync.aligned.u32 232"})
    CHECK_MESSAGE(ptx.find(instruction) != std::string::npos, instruction);
  test::Assembled a = test::assemble(ptx, "sm_90a", true);
  if (a.report.empty()) return;
  CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
  if (a.sass.empty()) return;
  CHECK(sassCount(a.sass, "BAR.ARV") >= 4);  // two products a loop, in each warpgroup's copy
  CHECK(sassCount(a.sass, "HGMMA") > 0);
}

// FlashAttention-3's pipelining within a warpgroup (AttentionBlocks::overlapSoftmax): the values
// product of the previous key block does not wait for this block's softmax, and ptxas issues its
// wgmmas among the softmax's exponentials (MUFU.EX2 between its first HGMMA and the wait after
// it); without, every exponential comes before the product that reads them.
TEST_CASE("ptx: with its softmax overlapped, bf16 attention's values product runs among the exponentials on sm_90a") {
  for (bool specialize : {false, true})
    for (bool overlap : {false, true}) {
      CAPTURE(specialize);
      CAPTURE(overlap);
      samples::AttentionBlocks blocks{128, 64, 3, 8, specialize, overlap};
      Tensor q = Tensor::zeros({1, 2, 256, 128}, DType::bf16), out = Tensor::zeros({1, 2, 256, 128});
      test::Assembled a = assembleAttention(samples::attentionKernel(q, q, q, out, false, blocks),
                                            overlap ? "bf16 d128 softmax overlapped" : "bf16 d128", false, blocks);
      if (a.report.empty()) return;
      CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
      if (a.sass.empty()) return;
      size_t values = a.sass.find("HGMMA.64x128x16"), wait = a.sass.find("WARPGROUP.DEPBAR", values);
      REQUIRE(wait != std::string::npos);
      int64_t during = sassCount(a.sass.substr(values, wait - values), "MUFU.EX2");
      std::printf("ptx: attention bf16 d128%s%s: %lld MUFU.EX2 between the values product's first HGMMA and its wait\n",
                  specialize ? " specialized" : "", overlap ? " overlapped" : "", (long long)during);
      if (overlap) CHECK(during >= 16);
      else CHECK(during == 0);
    }
}

// FP8 at d 128 (the GPU check's FP8 attention), v stored [batch, heads, dim, seq]: P reaches
// the second product's a fragments by shuffles in every configuration. 128x64 on 4 warps (one
// warpgroup holding 128 rows of O, 128 registers a thread, and of S) spills, as it did when P
// went through workgroup memory (336 bytes, causal 360); it is kept in the space for bf16,
// which fits. The others must not spill.
TEST_CASE("ptx: FP8 attention's CUDA tune space assembles for sm_90a at d 128, P shuffled, without spills at 64 rows a warpgroup") {
  const int64_t seq = 256, dim = 128;
  for (bool causal : {false, true})
    for (const TuneConfig& config : samples::attentionTuneSpace("cuda")) {
      samples::AttentionBlocks blocks = samples::AttentionBlocks::from(config);
      CAPTURE(config.str());
      CAPTURE(causal);
      Tensor q = Tensor::zeros({1, 2, seq, dim}, DType::f8e4m3), out = Tensor::zeros({1, 2, seq, dim});
      Tensor v = Tensor::zeros({1, 2, dim, seq}, DType::f8e4m3).transpose(2, 3);
      samples::AttentionScales scales{Tensor::zeros({2, seq, 1}), Tensor::zeros({2, seq / 128, 1}),
                                      Tensor::zeros({2, seq / 128, 1})};
      test::Assembled a =
          assembleAttention(samples::attentionKernel(q, q, v, out, causal, blocks, {}, scales), "f8e4m3 d128", causal, blocks);
      if (a.report.empty()) continue;
      const int64_t warps = blocks.warps > 0 ? blocks.warps : 4;
      if (blocks.m <= 16 * warps) CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
      if (a.sass.empty()) continue;
      CHECK(sassCount(a.sass, "QGMMA") > 0);
      CHECK(sassCount(a.sass, "STS.U16") == 0);
    }
}

TEST_CASE("ptx: an 8-bit float gemm on sm_90a runs QGMMA (wgmma m64nNk32 e4m3 x e5m2) from descriptors") {
  ir::Kernel k = gemmF8();
  std::string ptx = contiguousPtxOf(k, "sm_90a");
  CHECK(ptx.find("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2") != std::string::npos);
  test::Assembled a = test::assemble(ptx, "sm_90a", true);
  if (!a.report.empty()) CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
  if (!a.sass.empty()) {
    CHECK(sassCount(a.sass, "QGMMA") > 0);
    CHECK(sassCount(a.sass, "HMMA") == 0);
    CHECK(sassCount(a.sass, "UTMALDG") > 0);  // a, along K in memory
  }
}

TEST_CASE("ptx: the scaled FP8 gemm with B stored [N, K] runs QGMMA on two warpgroups, both operands by UTMALDG, without spills") {
  const int64_t M = 4096, N = 4096, K = 4096;
  CaptureTraces capture;
  samples::scaledGemm(Tensor::zeros({M, K}, DType::f8e4m3), Tensor::zeros({M, K / samples::kScaleBlock}),
                      Tensor::zeros({N, K}, DType::f8e4m3).transpose(),
                      Tensor::zeros({N / samples::kScaleBlock, K / samples::kScaleBlock}).transpose(), Tensor::zeros({M, N}),
                      {.device = "interp"}, samples::GemmBlocks{128, 128, 128, 3, 8});
  std::string ptx = devicePtxOf(capture.kernels().at(0), "sm_90a");
  CHECK(ptx.find("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3") != std::string::npos);
  CHECK(ptx.find("cp.async.bulk.tensor.2d") != std::string::npos);
  test::Assembled a = test::assemble(ptx, "sm_90a", true);
  if (a.report.empty()) return;
  size_t used = a.report.find("Used ");
  std::printf("ptx: scaled gemm f8e4m3 128x128x128, 3 stages, 8 warps, sm_90a: %s", used == std::string::npos ? "" : a.report.c_str() + used);
  CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
  if (a.sass.empty()) return;
  CHECK(sassCount(a.sass, "QGMMA") > 0);
  CHECK(sassCount(a.sass, "UTMALDG") > 0);
  CHECK(sassCount(a.sass, "LDGSTS") == 0);
}

TEST_CASE("ptx: i8 and u8 x i8 gemms run on IMMA (mma.sync m16n8k32) with i32 accumulators, read ahead by cp.async") {
  ir::Kernel i8 = test::retyped(samples::traceSample("gemm_f16"), {{"f16", "i8"}, {"f32", "i32"}, {"= 0.0", "= 0"}});
  ir::Kernel u8 = test::retyped(i8, {{"t0: tensor<i8", "t0: tensor<u8"}, {"tile<128x64xi8>", "tile<128x64xu8>"}});
  for (const char* arch : kArchs)
    for (const auto& [k, instruction] : {std::pair{i8, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"},
                                         std::pair{u8, "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32"}}) {
    CAPTURE(arch);
    CAPTURE(instruction);
    std::string ptx = contiguousPtxOf(k, arch);
    CHECK(ptx.find(instruction) != std::string::npos);
    test::Assembled a = test::assemble(ptx, arch, true);
    if (a.report.empty()) continue;
    CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
    if (a.sass.empty()) continue;
    CHECK(sassCount(a.sass, "IMMA") > 0);
    CHECK(sassCount(a.sass, "LDGSTS.E.BYPASS.128") > 0);
  }
}

TEST_CASE("ptx: an 8-bit float gemm runs on mma.sync m16n8k32 e4m3 x e5m2 into f32 on sm_89 and sm_90, its codes never decoded") {
  ir::Kernel k = gemmF8();
  std::string ptx = contiguousPtxOf(k, "sm_90");
  CHECK(ptx.find("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32") != std::string::npos);
  CHECK(ptx.find("cvt.rn.f32.s32") == std::string::npos);  // no subnormal decode: operands stay codes
  test::Assembled a = test::assemble(ptx, "sm_90", true);
  if (!a.report.empty()) CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
  if (!a.sass.empty()) {
    CHECK(sassCount(a.sass, "HMMA") + sassCount(a.sass, "QMMA") > 0);
    CHECK(sassCount(a.sass, "LDGSTS.E.BYPASS.128") > 0);
  }
  // Ada (sm_89) has FP8 tensor cores for mma.sync; Hopper's run it as conversions and HMMA
  // (its FP8 rate is wgmma's, not used yet).
  test::Assembled ada = test::assemble(contiguousPtxOf(k, "sm_89"), "sm_89", true);
  if (!ada.sass.empty()) CHECK(sassCount(ada.sass, "QMMA.16832.F32.E4M3.E5M2") > 0);
  CHECK(contiguousPtxOf(k, "sm_80").find("mma.sync") == std::string::npos);  // FMA dot: no FP8 unit before sm_89
  test::assemble(contiguousPtxOf(k, "sm_80"), "sm_80", false);  // ptxas accepts it
}

// A value read as one 8-bit float and stored as the other is encoded again in the other's
// format: the same f32 is another code there (1.0 is 0x3c in e5m2, 0x38 in e4m3), so the
// code it was read as must not be stored as it is.
TEST_CASE("ptx: a cast between the 8-bit floats encodes the value again, rounding it in the other format") {
  Tensor e5m2 = Tensor::zeros({64}, f8e5m2), e4m3 = Tensor::zeros({64}, f8e4m3);
  TracedKernel traced =
      tj::trace({1}, [&](Program& p) { p.write(e4m3, {64}).put(p.read(e5m2, {64}).at({0}).cast(f8e4m3), {0}); });
  for (const char* arch : {"sm_80", "sm_90a"}) {
    CAPTURE(arch);
    std::string ptx = ptxOf(*traced.kernel, arch);
    CHECK(ptx.find("cvt.rni") != std::string::npos);  // f32ToFloat8's subnormal steps: the encode is there
    test::assemblePtx(ptx, arch);
  }
}

// Two folds of ptxas 13.0 (the H200's driver compiles PTX with the same) that lost a sign on
// the GPU: a cvt.rn.f32.u32 of an abs.s32 became a signed I2FP, which made -2^31 positive, and a
// compare and select of one float became FMNMX.NAN, whose NaN is the canonical one.
TEST_CASE("ptx: i32 casts to bf16 and f8 convert the signed value, and a saturating f8 cast keeps a NaN's sign") {
  Tensor ints = Tensor::zeros({64}, i32), floats = Tensor::zeros({64}, f32);
  Tensor bf = Tensor::zeros({64}, bf16), e5m2 = Tensor::zeros({64}, f8e5m2), e4m3 = Tensor::zeros({64}, f8e4m3);
  TracedKernel traced = tj::trace({1}, [&](Program& p) {
    Tile i = p.read(ints, {64}).at({0});
    p.write(bf, {64}).put(i.cast(bf16), {0});
    p.write(e5m2, {64}).put(i.cast(f8e5m2), {0});
    p.write(e4m3, {64}).put(p.read(floats, {64}).at({0}).cast(f8e4m3, Overflow::saturate), {0});
  });
  std::string ptx = ptxOf(*traced.kernel, "sm_90");
  CHECK(ptx.find("abs.s32") == std::string::npos);
  test::Assembled a = test::assemble(ptx, "sm_90", true);
  if (a.sass.empty()) return;
  CAPTURE(a.sass);
  CHECK(sassCount(a.sass, "IABS") == 0);
  CHECK(sassCount(a.sass, "FMNMX.NAN") == 0);
}

// PTX's cvt between float widths gives a NaN its canonical, positive code (an H200 turned a
// -NaN f16 into 0x7fff): each conversion ors the source's sign bit into the result's bits.
TEST_CASE("ptx: conversions between float widths keep a NaN's sign") {
  Tensor single = Tensor::zeros({64}, f32), half = Tensor::zeros({64}, f16), wide = Tensor::zeros({64}, f64);
  TracedKernel traced = tj::trace({1}, [&](Program& p) {
    p.write(half, {64}).put(p.read(single, {64}).at({0}).cast(f16), {0});
    p.write(single, {64}).put(p.read(wide, {64}).at({0}).cast(f32), {0});
    p.write(wide, {64}).put(p.read(half, {64}).at({0}).cast(f64), {0});
  });
  std::string ptx = ptxOf(*traced.kernel, "sm_90");
  CAPTURE(ptx);
  CHECK(ptx.find("and.b16") != std::string::npos);  // f32 -> f16: the f32's sign in 16 bits
  CHECK(ptx.find("or.b16") != std::string::npos);
  CHECK(ptx.find("-2147483648") != std::string::npos);  // f64 -> f32: its sign in 32 bits
  CHECK(ptx.find("or.b64") != std::string::npos);       // f16 -> f64
  test::assemblePtx(ptx, "sm_90");
}

// A dot operand rounded from f32 (attention's P) converts its register pairs at once, each
// pair once however many mma instructions read it, NaN's sign kept as single roundings keep it.
TEST_CASE("ptx: f32 pairs rounded for a dot's f16 or bf16 operand take one paired cvt each") {
  for (const char* arch : {"sm_80", "sm_90a"})
    for (const char* dtype : {"f16", "bf16"}) {
      CAPTURE(arch);
      CAPTURE(dtype);
      std::string ptx = contiguousPtxOf(retyped("attention_f16", "f16", dtype), arch);
      std::string paired = std::string("cvt.rn.") + dtype + "x2.f32";
      size_t pairs = 0;
      for (size_t at = 0; (at = ptx.find(paired, at)) != std::string::npos; ++at) ++pairs;
      CHECK(pairs == 16);  // a 64 x 64 block of P over 128 threads: 32 values a thread
      CHECK(ptx.find(std::string("cvt.rn.") + dtype + ".f32") == std::string::npos);
      CHECK(ptx.find("prmt.b32 signs") != std::string::npos);
      test::assemblePtx(ptx, arch);
    }
}

// As the CUDA device lowers it, attention's key loop is split at its masks: a second copy of the
// loop (twice the wgmmas) whose first copy has no compare or select per score.
TEST_CASE("ptx: on sm_90a the device's attention runs two key loops, split at the mask, without spills") {
  ir::Kernel k = samples::traceSample("attention_f16");
  std::string whole = contiguousPtxOf(k, "sm_90a"), split = devicePtxOf(k, "sm_90a");
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; ++at) ++n;
    return n;
  };
  CHECK(count(split, "wgmma.mma_async") == 2 * count(whole, "wgmma.mma_async"));
  test::Assembled a = test::assemble(split, "sm_90a", true);
  if (a.report.empty()) return;
  CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
  size_t used = a.report.find("Used ");
  std::printf("ptx: attention_f16 sm_90a, split at its mask: %s", used == std::string::npos ? "" : a.report.c_str() + used);
}

// FP8 attention as the device lowers it (its key loop split at the mask): 8-bit wgmma for both
// products, P's f32 pairs rounded by one saturating cvt each (its ends fixed after) and moved
// into the second product's a fragments by shuffles (no workgroup memory, no barrier), no spills.
TEST_CASE("ptx: on sm_90a FP8 attention runs QGMMA on TMA rings, P rounded in pairs and shuffled, without spills") {
  std::string ptx = devicePtxOf(samples::traceSample("attention_f8e4m3"), "sm_90a");
  CHECK(ptx.find("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3") != std::string::npos);
  CHECK(ptx.find("cvt.rn.satfinite.e4m3x2.f32") != std::string::npos);
  test::Assembled a = test::assemble(ptx, "sm_90a", true);
  if (a.report.empty()) return;
  CHECK(a.report.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
  size_t used = a.report.find("Used ");
  std::printf("ptx: attention_f8e4m3 sm_90a, split at its mask: %s", used == std::string::npos ? "" : a.report.c_str() + used);
  if (a.sass.empty()) return;
  CHECK(sassCount(a.sass, "QGMMA") > 0);
  CHECK(sassCount(a.sass, "HGMMA") == 0);
  CHECK(sassCount(a.sass, "UTMALDG") > 0);
  CHECK(sassCount(a.sass, "F2FP.SATFINITE.E4M3") > 0);
  CHECK(sassCount(a.sass, "I2F") == 0);  // no 8-bit code decoded again to be stored
  // Both key loops: 16 shuffles and 8 byte permutes each, where P's codes were 16 two-byte
  // stores to workgroup memory between two barriers.
  CHECK(sassCount(a.sass, "SHFL.IDX") == 32);
  CHECK(sassCount(a.sass, "PRMT") == 16);
  CHECK(sassCount(a.sass, "STS.U16") == 0);
}

TEST_CASE("ptx: past 48 KiB the shared array is dynamic, sized at launch: within it, static") {
  ir::Kernel gemm = samples::traceSample("gemm_f16");
  std::string two = contiguousPtxOf(gemm, "sm_90");  // 2 stages of 24 KiB
  CHECK(two.find(".shared .align 16 .b8 shared[49152]") != std::string::npos);
  std::string three = contiguousPtxOf(test::withStages(gemm, 3), "sm_90");
  CHECK(three.find(".extern .shared .align 16 .b8 shared[]") != std::string::npos);
  test::assemblePtx(three, "sm_90");
}

TEST_CASE("ptx: every sample's kernel prints as PTX that ptxas assembles for sm_80 and sm_90") {
  int assembled = 0;
  for (const std::string& name : samples::sampleNames()) {
    ir::Kernel k = samples::traceSample(name);
    for (const char* arch : kArchs) {
      CAPTURE(name);
      CAPTURE(arch);
      std::string ptx = ptxOf(k, arch);
      CHECK(ptx.find(".visible .entry " + llvmgpu::entryName(k.name) + "(") != std::string::npos);
      CHECK(ptx.find(std::string(".target ") + arch) != std::string::npos);
      std::string report = test::assemblePtx(ptx, arch);
      assembled += !report.empty();
    }
  }
  std::printf("ptx: %d kernels assembled by ptxas\n", assembled);  // tools/dev test adds these up
}

TEST_CASE("ptx: fma is fma.rn, one rounding, where a * b + c stays a multiply and an add") {
  Tensor x = Tensor::zeros({64});
  TracedKernel traced = tj::trace({1}, [&](Program& p) {
    Tile a = p.read(x, {64}).at({0});
    p.write(x, {64}).put(fma(a, a, 1.0) + (a * a + 2.0), {0});
  });
  std::string ptx = ptxOf(*traced.kernel, "sm_90");
  CHECK(ptx.find("fma.rn.f32") != std::string::npos);
  CHECK(ptx.find("mul.rn.f32") != std::string::npos);
  test::assemble(ptx, "sm_90", false);
}

TEST_CASE("ptx: an f16 dot runs on mma.sync with f32 accumulators") {
  std::string ptx = ptxOf(samples::traceSample("attention_f16"), "sm_90");
  CHECK(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") != std::string::npos);
  CHECK(ptx.find("bar.sync") != std::string::npos);
  CHECK(ptx.find("shfl.sync.bfly.b32") != std::string::npos);
}

TEST_CASE("ptx: float products and sums stay separate roundings, as on the host") {
  std::string ptx = ptxOf(samples::traceSample("fused"), "sm_80");  // relu(a * b + c)
  CHECK(ptx.find("mul.rn.f32") != std::string::npos);
  CHECK(ptx.find("add.rn.f32") != std::string::npos);
  CHECK(ptx.find("fma.") == std::string::npos);
}

TEST_CASE("ptx: accurate exp is lower/math's, not the hardware's approximation") {
  std::string ptx = ptxOf(samples::traceSample("softmax"), "sm_90");
  CHECK(ptx.find("ex2.approx") == std::string::npos);
  CHECK(ptx.find("cvt.rni.f32.f32") != std::string::npos);  // the exp's k = roundEven(x·log2(e))
}

TEST_CASE("ptx: fast_exp and fast_exp2 are one ex2.approx each, exp's argument times log2 e first, and f64 stays accurate") {
  ir::Kernel k = ir::parse(R"(kernel @fast(t0: tensor<f32, 1>, t1: tensor<f64, 1>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0) {fill = 0.0, tensor = 0} : tile<64xf32>
  %2 = exp(%1) {approx = 1} : tile<64xf32>
  %3 = exp2(%2) {approx = 1} : tile<64xf32>
  store(%0, %3) {tensor = 0}
  %4 = load(%0) {fill = 0.0, tensor = 1} : tile<64xf64>
  %5 = exp(%4) {approx = 1} : tile<64xf64>
  store(%0, %5) {tensor = 1}
})");
  ir::verify(k);
  std::string ptx = ptxOf(ir::canonicalize(k), "sm_90");
  CHECK(ptx.find("ex2.approx.ftz.f32") != std::string::npos);
  CHECK(ptx.find("mul.rn.f32") != std::string::npos);  // x · log2(e)
  CHECK(ptx.find("cvt.rni.f64.f64") != std::string::npos);  // the f64 exp: lower/math's
  CHECK(ptx.find("cvt.rni.f32.f32") == std::string::npos);
}

TEST_CASE("ptx: a float remainder is C's fmod by exact steps, not LLVM's frem (x - y * trunc(x / y))") {
  ir::Kernel k = ir::parse(R"(kernel @frem(t0: tensor<f32, 1>, t1: tensor<f64, 1>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0) {fill = 1.0, tensor = 0} : tile<64xf32>
  %2 = rem(%1, %1) : tile<64xf32>
  store(%0, %2) {tensor = 0}
  %3 = load(%0) {fill = 1.0, tensor = 1} : tile<64xf64>
  %4 = rem(%3, %3) : tile<64xf64>
  store(%0, %4) {tensor = 1}
})");
  ir::verify(k);
  std::string ptx = ptxOf(ir::canonicalize(k), "sm_90");
  CHECK(ptx.find("div.rn") == std::string::npos);
  CHECK(ptx.find("cvt.rzi") == std::string::npos);
  test::assemblePtx(ptx, "sm_90");
}

TEST_CASE("ptx: kernel names become PTX identifiers") {
  CHECK(llvmgpu::entryName("gemm") == "gemm");
  CHECK(llvmgpu::entryName("x + y on f32[23, 1]") == "x___y_on_f32_23__1_");
  CHECK(llvmgpu::entryName("") == "kernel_");
  CHECK(llvmgpu::entryName("_a") == "kernel__a");
  CHECK(llvmgpu::entryName("2d") == "kernel_2d");
}

TEST_CASE("ptx: a target that is not NVIDIA's is refused, naming it") {
  const layout::Target& t = layout::targetByName("sm_90");
  ir::Kernel add = samples::traceSample("vector_add");
  CHECK_THROWS_WITH_AS(ptx::printPtx(gpu::lowerToKernelIR(add, layout::inferLayouts(add, t), t), "gfx942"),
                       doctest::Contains("unknown target 'gfx942'"), Error);
}

}  // namespace tj::ptxtest
