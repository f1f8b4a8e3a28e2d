// Layouts: linear layouts against hand-computed coordinates, conversion kinds, and
// the inferred layouts of the samples on every target (golden files).
#include <doctest/doctest.h>

#include "tests/support.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/passes.hpp"
#include "layout/infer_layouts.hpp"
#include "samples/kernels.hpp"

namespace fs = std::filesystem;
using namespace tj;
using namespace tj::layout;

namespace {

Layout blocked(Shape spt, Shape tpw, Shape wpc, std::vector<int64_t> order) {
  return Layout{Blocked{std::move(spt), std::move(tpw), std::move(wpc), std::move(order)}};
}
Layout acc(MatrixInstr instr, Shape wpc) { return Layout{MatrixAcc{instr, std::move(wpc)}}; }
Layout operand(int opIdx, const Layout& parent) { return Layout{DotOperand{opIdx, make(parent)}}; }

// The coordinates of (register, lane, warp).
std::vector<int64_t> at(const Layout& l, const Shape& shape, int64_t reg, int64_t lane, int64_t warp = 0) {
  return toLinear(l, shape).apply({reg, lane, warp});
}

// A sample with every f32 replaced by f16: the samples are f32, which no matrix unit here multiplies.
ir::Kernel halfSample(const std::string& name) {
  std::string text = ir::print(samples::traceSample(name));
  for (size_t at; (at = text.find("f32")) != std::string::npos;) text.replace(at, 3, "f16");
  ir::Kernel k = ir::parse(text);
  ir::verify(k);
  return k;
}

ir::Kernel kernelNamed(const std::string& name) {
  const std::string suffix = "_f16";
  // The f16 attention sample's own kernel (f32 scores, fma): retyped, its fma would take f16 tiles.
  if (name == "attention_f16") return samples::traceSample(name);
  if (name.size() > suffix.size() && name.ends_with(suffix)) return halfSample(name.substr(0, name.size() - suffix.size()));
  return samples::traceSample(name);
}

std::string runTool(const std::string& args, int& status) {
  test::CommandResult r = test::runCommand(test::binDir() + "/tile-ir " + args);
  status = r.status;
  return r.output;
}

}  // namespace

TEST_CASE("layout: a blocked layout's linear layout matches hand-computed coordinates") {
  Layout l = blocked({1, 2}, {2, 2}, {1, 1}, {1, 0});
  LinearLayout lin = toLinear(l, {4, 4});
  // register bit 0: next column; lanes: columns 2, then row 1; the pattern repeats down in registers.
  CHECK(lin.in(kRegister).bases == std::vector<LinearLayout::Basis>{{0, 1}, {2, 0}});
  CHECK(lin.in(kLane).bases == std::vector<LinearLayout::Basis>{{0, 2}, {1, 0}});
  CHECK(at(l, {4, 4}, 3, 1) == std::vector<int64_t>{2, 3});
  CHECK(at(l, {4, 4}, 1, 2) == std::vector<int64_t>{1, 1});
  // On a [1,4] tile the row lane replicates (a zero basis) and the row register is dropped.
  LinearLayout narrow = toLinear(l, {1, 4});
  CHECK(narrow.in(kLane).bases == std::vector<LinearLayout::Basis>{{0, 2}, {0, 0}});
  CHECK(narrow.in(kRegister).bases == std::vector<LinearLayout::Basis>{{0, 1}});
  // Column-major order puts the register bits down the rows first.
  CHECK(at(blocked({2, 1}, {1, 1}, {1, 1}, {0, 1}), {2, 2}, 1, 0) == std::vector<int64_t>{1, 0});
}

TEST_CASE("layout: matrix-core fragments match the ISA tables") {
  // mma.m16n8k16 accumulator: c2, c3 sit 8 rows below; column = (lane % 4) * 2 + register bit 0.
  CHECK(at(acc(MatrixInstr::mma_m16n8k16, {1, 1}), {16, 8}, 3, 5) == std::vector<int64_t>{9, 3});
  // Its a operand: a4, a5 are 8 columns right of a0, a1.
  CHECK(at(operand(0, acc(MatrixInstr::mma_m16n8k16, {1, 1})), {16, 16}, 4, 6) == std::vector<int64_t>{1, 12});
  // WMMA (gfx11): row = 2 * register + lane / 16, column = lane % 16.
  CHECK(at(acc(MatrixInstr::wmma_16x16x16, {1, 1}), {16, 16}, 3, 17) == std::vector<int64_t>{7, 1});
  // MFMA 32x32x8: row = (register / 4) * 8 + (lane / 32) * 4 + register % 4, column = lane % 32.
  CHECK(at(acc(MatrixInstr::mfma_32x32x8, {1, 1}), {32, 32}, 5, 33) == std::vector<int64_t>{13, 1});
  // MFMA 16x16x16 (CDNA 3 ISA): a[i][k] in lane i + 16 (k / 4), register k % 4; b[k][j] in lane
  // j + 16 (k / 4), register k % 4; d[i][j] in lane j + 16 (i / 4), register i % 4.
  Layout mfma16 = acc(MatrixInstr::mfma_16x16x16, {1, 1});
  for (int64_t lane = 0; lane < 64; ++lane)
    for (int64_t r = 0; r < 4; ++r) {
      CAPTURE(lane);
      CAPTURE(r);
      CHECK(at(mfma16, {16, 16}, r, lane) == std::vector<int64_t>{4 * (lane / 16) + r, lane % 16});
      CHECK(at(operand(0, mfma16), {16, 16}, r, lane) == std::vector<int64_t>{lane % 16, 4 * (lane / 16) + r});
      CHECK(at(operand(1, mfma16), {16, 16}, r, lane) == std::vector<int64_t>{4 * (lane / 16) + r, lane % 16});
    }
  // Warps tile rows with wpc=[2,1]; operand b replicates over them (zero warp bases).
  CHECK(at(acc(MatrixInstr::mma_m16n8k16, {2, 1}), {32, 8}, 0, 0, 1) == std::vector<int64_t>{16, 0});
  CHECK(toLinear(operand(1, acc(MatrixInstr::mma_m16n8k16, {2, 1})), {16, 8}).in(kWarp).bases ==
        std::vector<LinearLayout::Basis>{{0, 0}});
  // A slice drops the reduced dimension: rows of the accumulator, replicated over the 4 column lanes.
  Layout rows{Slice{1, make(acc(MatrixInstr::mma_m16n8k16, {1, 1}))}};
  CHECK(toLinear(rows, {16}).in(kLane).bases == std::vector<LinearLayout::Basis>{{0}, {0}, {1}, {2}, {4}});
}

TEST_CASE("layout: wgmma's accumulator is the PTX ISA's m64nNk16 fragment, warpgroups stacked along M") {
  // PTX ISA, "WGMMA .m64nNk16 register fragment layout for accumulator matrix D": thread t of a
  // warpgroup holds d[j] at row 16 (t / 32) + (t % 32) / 4 + 8 ((j / 2) % 2), column 8 (j / 4) + 2 (t % 4) + j % 2.
  for (int64_t n : {16, 64, 256}) {
    CAPTURE(n);
    LinearLayout lin = toLinear(acc(MatrixInstr::wgmma_m64k16, {8, 1}), {128, n});
    CHECK(lin.inSize(kRegister) == n / 2);
    for (int64_t t = 0; t < 256; t += 7)
      for (int64_t j = 0; j < n / 2; j += 3) {
        int64_t w = t % 128, group = t / 128;
        int64_t row = 64 * group + 16 * (w / 32) + w % 32 / 4 + 8 * (j / 2 % 2), col = 8 * (j / 4) + 2 * (w % 4) + j % 2;
        CHECK(lin.apply({j, t % 32, t / 32}) == std::vector<int64_t>{row, col});
      }
  }
}

TEST_CASE("layout: wgmma's operand layouts are the hardware's swizzle on byte addresses, rows of at most 128 bytes") {
  // PTX ISA 9.7.15.5.1.2: Swizzle<B, 4, 3> on the byte address, B = log2(swizzle / 16): bits 4..4+B XOR bits 7..7+B.
  auto hardware = [](int64_t address, int64_t swizzle) {
    int64_t bits = swizzle == 128 ? 3 : swizzle == 64 ? 2 : 1;
    return address ^ ((address >> 7 & ((1 << bits) - 1)) << 4);
  };
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{64, 16}, {64, 32}, {64, 64}, {16, 128}, {32, 256}}) {
    CAPTURE(cols);
    std::optional<Shared> s = wgmmaShared(DType::f16, {rows, cols}, {1, 0});
    REQUIRE(s);
    int64_t swizzle = wgmmaSwizzleBytes(*s, DType::f16), block = std::min<int64_t>(cols, 64);
    CHECK(swizzle == std::min<int64_t>(cols * 2, 128));
    LinearLayout lin = toLinear(Layout{*s}, {rows, cols});
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        // Unswizzled: the column blocks one after another, each [rows][block] row-major.
        int64_t plain = (c / block) * rows * block * 2 + r * block * 2 + c % block * 2;
        int64_t offset = hardware(plain, swizzle) / 2;
        CHECK(lin.apply({offset}) == std::vector<int64_t>{r, c});
      }
  }
  CHECK(!wgmmaShared(DType::f16, {64, 8}, {1, 0}));  // 16-byte rows: no swizzled mode
}

TEST_CASE("layout: on sm_90a f16 dots of whole warpgroups run wgmma, smaller ones mma.sync") {
  ir::Kernel k = halfSample("gemm");
  LayoutAssignment a = inferLayouts(k, targetByName("sm_90a"));
  int dots = 0;
  ir::forEachOp(k.body, [&](const ir::Op& op) {
    if (op.code != ir::OpCode::dot) return;
    ++dots;
    const MatrixAcc* m = a.of(op.results[0]).as<MatrixAcc>();
    REQUIRE(m != nullptr);
    CHECK(m->instr == MatrixInstr::wgmma_m64k16);
    CHECK(m->warpsPerCTA == Shape{4, 1});
    for (int i = 0; i < 2; ++i) {
      const Conversion* c = a.conversionAt(op, i);
      REQUIRE(c != nullptr);
      REQUIRE(c->via);
      CHECK(c->via->maxPhase == 8);  // 64 f16 columns: 128-byte rows, 128-byte swizzle
    }
  });
  CHECK(dots == 1);
  ir::Kernel small = test::retyped(k, {{"tile<128x64xf16>", "tile<32x64xf16>"}});
  LayoutAssignment b = inferLayouts(small, targetByName("sm_90a"));
  ir::forEachOp(small.body, [&](const ir::Op& op) {
    if (op.code == ir::OpCode::dot) CHECK(b.of(op.results[0]).as<MatrixAcc>()->instr == MatrixInstr::mma_m16n8k16);
  });
}

TEST_CASE("layout: inverses and compositions of linear layouts") {
  Layout l = blocked({1, 2}, {2, 2}, {2, 1}, {1, 0});
  LinearLayout lin = toLinear(l, {4, 4});
  std::optional<LinearLayout> inv = lin.invert();
  REQUIRE(inv);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 4; ++c) CHECK(lin.apply(inv->apply({r, c})) == std::vector<int64_t>{r, c});
  // inverse ∘ layout is the identity on (register, lane, warp).
  LinearLayout identity = inv->compose(lin);
  CHECK(identity.apply({1, 2, 1}) == std::vector<int64_t>{1, 2, 1});
  CHECK(identity.apply({0, 3, 0}) == std::vector<int64_t>{0, 3, 0});
  // A layout that replicates has no inverse.
  CHECK_FALSE(toLinear(l, {2, 4}).invert());
  // Swizzled shared memory: row 1 of the memory holds vector 1 of the tile's row 1.
  Layout shared{Shared{2, 1, 2, {1, 0}}};
  LinearLayout mem = toLinear(shared, {4, 4});
  CHECK(mem.apply({4}) == std::vector<int64_t>{1, 2});
  CHECK(mem.apply({6}) == std::vector<int64_t>{1, 0});
  CHECK(mem.invert()->apply({1, 0}) == std::vector<int64_t>{6});
}

TEST_CASE("layout: one GF(2) solver: combinations are unique, and never use a vector its predecessors span") {
  // 0b011 = 0b001 ^ 0b010; the third vector repeats the first two's span and is never used.
  CHECK(solveGF2({0b001, 0b010, 0b011, 0b100}, 0b011) == uint64_t{0b0011});
  CHECK(solveGF2({0b001, 0b010, 0b011, 0b100}, 0b111) == uint64_t{0b1011});
  CHECK(solveGF2({0b110, 0b011}, 0b101) == uint64_t{0b11});
  CHECK_FALSE(solveGF2({0b001, 0b011}, 0b100));
  CHECK(solveGF2({0, 0b001}, 0) == uint64_t{0});
  // Each element of a blocked layout as the register, lane and warp bits that hold it.
  LinearLayout lin = toLinear(blocked({1, 2}, {2, 2}, {2, 1}, {1, 0}), {4, 4});
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 4; ++c) {
      std::optional<uint64_t> combo = lin.combinationOf({kRegister, kLane, kWarp}, {r, c});
      REQUIRE(combo);
      std::vector<int64_t> inputs;  // the combination's bits, split per input dimension
      int first = 0;
      for (const std::string& name : {kRegister, kLane, kWarp}) {
        int bits = int(lin.in(name).bases.size());
        inputs.push_back(int64_t(*combo >> first & ((uint64_t{1} << bits) - 1)));
        first += bits;
      }
      CHECK(lin.apply(inputs) == std::vector<int64_t>{r, c});
    }
  CHECK_FALSE(toLinear(blocked({1, 2}, {2, 2}, {2, 1}, {1, 0}), {2, 4}).combinationOf({kRegister}, {1, 0}));
}

TEST_CASE("layout: conversion kinds come from the linear layouts alone") {
  Layout rowMajor = blocked({1, 4}, {4, 8}, {4, 1}, {1, 0});
  CHECK(conversionKind(rowMajor, rowMajor, {16, 32}) == ConversionKind::none);
  // All in one thread, two register orders: a permutation of registers.
  CHECK(conversionKind(blocked({4, 4}, {1, 1}, {1, 1}, {1, 0}), blocked({4, 4}, {1, 1}, {1, 1}, {0, 1}), {4, 4}) ==
        ConversionKind::register_permute);
  // Lanes rearranged within the one warp: a warp shuffle.
  CHECK(conversionKind(blocked({1, 4}, {4, 8}, {1, 1}, {1, 0}), blocked({1, 4}, {8, 4}, {1, 1}, {1, 0}), {8, 32}) ==
        ConversionKind::warp_shuffle);
  // Warps along rows versus along columns: through shared memory.
  CHECK(conversionKind(rowMajor, blocked({1, 4}, {4, 8}, {1, 4}, {1, 0}), {16, 128}) == ConversionKind::shared_memory);
  // Different names, the same map: an mma accumulator is already the next mma's a operand.
  Layout mma = acc(MatrixInstr::mma_m16n8k16, {4, 1});
  CHECK(conversionKind(mma, operand(0, mma), {64, 64}) == ConversionKind::none);
  CHECK(conversionKind(blocked({1, 8}, {4, 8}, {4, 1}, {1, 0}), operand(0, mma), {64, 64}) == ConversionKind::shared_memory);
}

TEST_CASE("layout: on sm_90 attention's dots are matrix-core and its row reductions slices of them") {
  ir::Kernel k = kernelNamed("attention_f16");
  LayoutAssignment a = inferLayouts(k, targetByName("sm_90"));
  int dots = 0, reductions = 0;
  ir::forEachOp(k.body, [&](const ir::Op& op) {
    if (op.code == ir::OpCode::dot) {
      ++dots;
      CHECK(a.of(op.results[0]).as<MatrixAcc>() != nullptr);
      if (op.operands.size() == 3)  // P = exp(S) feeds the second dot in its accumulator layout: no conversion
        CHECK(a.of(op.operands[0]).as<MatrixAcc>() != nullptr);
    }
    if (op.code == ir::OpCode::reduce_max || op.code == ir::OpCode::reduce_sum) {
      ++reductions;
      const Slice* s = a.of(op.results[0]).as<Slice>();
      REQUIRE(s != nullptr);
      CHECK(s->dim == 1);
      CHECK(s->parent->as<MatrixAcc>() != nullptr);
    }
  });
  CHECK(dots == 2);
  CHECK(reductions == 2);
  // q, kᵀ and v go through workgroup memory into operand fragments; nothing else converts.
  CHECK(a.conversions.size() == 3);
  for (const Conversion& c : a.conversions) CHECK(c.kind == ConversionKind::shared_memory);
  // f32 dots have no matrix unit here: they stay Blocked (FMA).
  ir::Kernel single = samples::traceSample("attention");
  LayoutAssignment f32 = inferLayouts(single, targetByName("sm_90"));
  ir::forEachOp(single.body, [&](const ir::Op& op) {
    if (op.code == ir::OpCode::dot) CHECK(f32.of(op.results[0]).as<Blocked>() != nullptr);
  });
}

TEST_CASE("layout: the samples' layouts on every target match their golden files") {
  fs::path dir = fs::path(TILEJIT_SOURCE_DIR) / "tests" / "golden" / "layout";
  bool update = std::getenv("TILEJIT_UPDATE_GOLDEN") != nullptr;
  if (update) fs::create_directories(dir);
  for (const std::string name : {"gemm", "attention", "softmax", "layernorm", "gemm_f16", "attention_f16"}) {
    ir::Kernel k = kernelNamed(name);
    for (const Target& t : targets()) {
      CAPTURE(name);
      CAPTURE(t.name);
      std::string text = printWithLayouts(k, inferLayouts(k, t));
      fs::path golden = dir / (name + "." + t.name + ".tir");
      if (update) std::ofstream(golden) << text;
      CHECK(test::readText(golden) == text);
    }
  }
}

TEST_CASE("layout: tile-ir --stage=layout prints the library's text and rejects an unknown target") {
  ir::Kernel k = samples::traceSample("softmax");
  int status = 0;
  std::string out = runTool("--sample softmax --stage=layout --target=gfx942", status);
  CHECK(status == 0);
  CHECK(out == printWithLayouts(k, inferLayouts(k, targetByName("gfx942"))));
  out = runTool("--sample softmax --stage=layout --target=sm_70", status);
  CHECK(status == 1);
  CHECK(out.find("vulkan, sm_80, sm_89, sm_90, sm_90a, gfx1100, gfx942, cpu") != std::string::npos);
}

TEST_CASE("layout: a reduction reshaped with unit dimensions before it keeps its threads on every target") {
  Tensor x = Tensor::zeros({64, 64}, DType::f32), out = Tensor::zeros({1, 2, 64}, DType::f32);
  TracedKernel traced = trace({1}, [&](Program& p) {
    Tile rows = p.read(x, {64, 64}).at({0, 0}).sum(1);
    p.write(out, {1, 1, 64}).put(rows.reshape({1, 1, 64}), {Index(0), Index(1), Index(0)});
  }, "row_sums");
  const ir::Kernel& k = *traced.kernel;
  for (const Target& t : targets()) {
    CAPTURE(t.name);
    LayoutAssignment a = inferLayouts(k, t);
    ir::forEachOp(k.body, [&](const ir::Op& op) {
      if (op.code == ir::OpCode::reshape && k.type(op.results[0]).shape.size() == 3) CHECK(a.conversionAt(op, 0) == nullptr);
    });
  }
}
