// The host's dot-product instructions in the CPU micro-kernels: VNNI's vpdpbusd (four byte
// products per i32 lane), AVX512-BF16's vdpbf16ps, and AMX tiles (tdpbssd, tdpbusd, tdpbf16ps); each
// also as what it computes in plain IR (CpuLoweringOptions::emulateMatrixInstructions), so tests
// run every path on any x86 host.
#include <llvm/Support/CommandLine.h>

#include "lower/cpu/kernel_lowering.hpp"

namespace tj::cpu::detail {

namespace {

// The four byte lanes of each 32-bit lane of `v`, widened to i32: [0] holds bytes 0, 4, 8, ...
std::array<llvm::Value*, 4> byteLanes(llvm::IRBuilder<>& b, llvm::Value* v, bool isSigned) {
  auto* words = llvm::cast<llvm::FixedVectorType>(v->getType());
  unsigned lanes = words->getNumElements();
  llvm::Value* bytes = b.CreateBitCast(v, llvm::FixedVectorType::get(b.getInt8Ty(), 4 * lanes));
  std::array<llvm::Value*, 4> out{};
  for (unsigned j = 0; j < 4; ++j) {
    std::vector<int> pick;
    for (unsigned i = 0; i < lanes; ++i) pick.push_back(static_cast<int>(4 * i + j));
    llvm::Value* lane = b.CreateShuffleVector(bytes, pick);
    out[j] = isSigned ? b.CreateSExt(lane, words) : b.CreateZExt(lane, words);
  }
  return out;
}

}  // namespace

// acc + Σ (a's u8 quads · b's i8 quads) per 32-bit lane, wrapping: vpdpbusd.
llvm::Value* KernelLowering::dotI8Quads(llvm::Value* acc, llvm::Value* a, llvm::Value* b) {
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(acc->getType())->getNumElements();
  if (!options_.emulateMatrixInstructions) {
    auto id = lanes == 16 ? llvm::Intrinsic::x86_avx512_vpdpbusd_512 : llvm::Intrinsic::x86_avx512_vpdpbusd_256;
    return b_.CreateIntrinsic(id, {}, {acc, a, b});
  }
  std::array<llvm::Value*, 4> ua = byteLanes(b_, a, false), sb = byteLanes(b_, b, true);
  for (int j = 0; j < 4; ++j) acc = b_.CreateAdd(acc, b_.CreateMul(ua[j], sb[j]));
  return acc;
}

// acc + a.odd · b.odd + a.even · b.even per f32 lane of bf16 pairs, the order vdpbf16ps adds in
// (which also flushes subnormal inputs and results: the emulation keeps them).
llvm::Value* KernelLowering::dotBf16Pairs(llvm::Value* acc, llvm::Value* a, llvm::Value* b) {
  if (!options_.emulateMatrixInstructions)
    return b_.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512, {}, {acc, a, b});
  auto* floats = llvm::cast<llvm::FixedVectorType>(acc->getType());
  unsigned lanes = floats->getNumElements();
  auto half = [&](llvm::Value* pairs, int odd) {
    std::vector<int> pick;
    for (unsigned i = 0; i < lanes; ++i) pick.push_back(static_cast<int>(2 * i) + odd);
    return b_.CreateFPExt(b_.CreateShuffleVector(pairs, pick), floats);
  };
  acc = b_.CreateFAdd(acc, b_.CreateFMul(half(a, 1), half(b, 1)));
  return b_.CreateFAdd(acc, b_.CreateFMul(half(a, 0), half(b, 0)));
}

// B [k, n] of i8 -> [k/4, n, 4]: element (4q + i, j) at (q * n + j) * 4 + i, the layout of
// vpdpbusd's and AMX's right operand. With the column sums Σ_k B[k, j] as i32 after the k * n
// bytes (quadBiasOf). `lanes` columns at a time: four row loads, two concatenations, one interleave.
void KernelLowering::packQuads(llvm::Value* b, int64_t k, int64_t n, int64_t lanes, bool withColumnSums, llvm::Value* packed) {
  llvm::Type* i8 = b_.getInt8Ty();
  auto* rowTy = llvm::FixedVectorType::get(i8, static_cast<unsigned>(lanes));
  auto* sumTy = llvm::FixedVectorType::get(b_.getInt32Ty(), static_cast<unsigned>(lanes));
  llvm::Value* sums = b_.CreateInBoundsGEP(i8, packed, i64(k * n));
  std::vector<int> concat, interleave;
  for (int i = 0; i < 2 * lanes; ++i) concat.push_back(i);
  for (int j = 0; j < lanes; ++j)
    for (int i = 0; i < 4; ++i) interleave.push_back(static_cast<int>((i / 2) * 2 * lanes + (i % 2) * lanes + j));
  auto sumsAt = [&](llvm::Value* col) { return b_.CreateInBoundsGEP(b_.getInt32Ty(), sums, col); };
  if (withColumnSums)
    emitLoop(b_, i64(0), i64(n / lanes), [&](llvm::Value* chunk) {
      b_.CreateAlignedStore(llvm::Constant::getNullValue(sumTy), sumsAt(b_.CreateMul(chunk, i64(lanes))), llvm::Align(4));
    });
  emitLoop(b_, i64(0), i64(k / 4), [&](llvm::Value* q) {
    emitLoop(b_, i64(0), i64(n / lanes), [&](llvm::Value* chunk) {
      llvm::Value* col = b_.CreateMul(chunk, i64(lanes));
      std::array<llvm::Value*, 4> rows{};
      for (int64_t i = 0; i < 4; ++i) {
        llvm::Value* r = b_.CreateAdd(b_.CreateMul(q, i64(4)), i64(i));
        rows[i] = b_.CreateAlignedLoad(rowTy, b_.CreateInBoundsGEP(i8, b, b_.CreateAdd(b_.CreateMul(r, i64(n)), col)), llvm::Align(1));
      }
      llvm::Value* quads = b_.CreateShuffleVector(b_.CreateShuffleVector(rows[0], rows[1], concat),
                                                  b_.CreateShuffleVector(rows[2], rows[3], concat), interleave);
      llvm::Value* to = b_.CreateMul(b_.CreateAdd(b_.CreateMul(q, i64(n)), col), i64(4));
      b_.CreateAlignedStore(quads, b_.CreateInBoundsGEP(i8, packed, to), llvm::Align(4));
      if (!withColumnSums) return;
      llvm::Value* sum = b_.CreateAlignedLoad(sumTy, sumsAt(col), llvm::Align(4));
      for (llvm::Value* row : rows) sum = b_.CreateAdd(sum, b_.CreateSExt(row, sumTy));
      b_.CreateAlignedStore(sum, sumsAt(col), llvm::Align(4));
    });
  });
}

// vpdpbusd multiplies unsigned bytes by signed ones, so A's i8 enter as a + 128 (the sign bit
// flipped): the sums gain 128 · Σ_k B[k, j], which this returns for C's columns col.., to
// subtract once. Exact in wrapping i32 arithmetic, like the products themselves.
llvm::Value* KernelLowering::quadBiasOf(const MicroTile& tile, int64_t k, int64_t n, llvm::Value* col) {
  auto* sumTy = llvm::FixedVectorType::get(b_.getInt32Ty(), static_cast<unsigned>(tile.lanes));
  llvm::Value* sums = b_.CreateInBoundsGEP(b_.getInt8Ty(), tile.packedB, i64(k * n));
  llvm::Value* sum = b_.CreateAlignedLoad(sumTy, b_.CreateInBoundsGEP(b_.getInt32Ty(), sums, col), llvm::Align(4));
  return b_.CreateShl(sum, 7);
}

// C += A·B on AMX tiles, in bands of 32 rows (two tiles of 16) and one band of the rows left.
// Each band height has a function of its own: LLVM configures the tile registers once per
// function, one shape per register, so a function with a 32-row band of two column tiles (all 8
// registers at 16 rows) and a band of 5 rows had none left for the latter, a fatal "ran out of
// registers".
void KernelLowering::emitAmxTiles(const ir::Op& op, llvm::Value* c, const MicroTile& tile) {
  int64_t m = type(op.operands[0]).shape[0];
  auto bands = [&](const std::vector<int64_t>& tileRows, int64_t firstRow, int64_t count) {
    b_.CreateCall(amxBandFunction(op, tile, tileRows),
                  {tile.a, tile.aRowStride, tile.packedB, c, tile.target.out, tile.target.outRowStride,
                   tile.target.startsAtZero, i64(firstRow), i64(count)});
  };
  if (m >= 32) bands({16, 16}, 0, m / 32);
  if (int64_t rest = m % 32; rest > 16) bands({16, rest - 16}, m - rest, 1);
  else if (rest > 0) bands({rest}, m - rest, 1);
}

// `void(a, aRowStride, packedB, c, out, outRowStride, startsAtZero, firstRow, bands)`: C += A·B
// for `bands` bands of C's rows from firstRow, each of tiles of tileRows rows. C in tiles of up
// to 16 rows x 16 columns (64 bytes a row), A as tiles of up to 16 rows x `step` k read where it
// lies, B packed in 4-byte groups (k pairs of bf16, quads of i8) as tiles of step / groups rows
// x 16 columns. A block of 32 x 32 of C takes 4 C tiles, 2 of A and 2 of B: the 8 tile
// registers. The K loop runs in chunks of up to 8 unrolled steps, C loaded before and stored
// after each, so no tile value crosses a loop edge (LLVM configures the tiles by the shapes it
// sees at each use). The first chunk starts from zero where the caller says so, and from C
// otherwise; each stores to `out`, which later chunks read.
llvm::Function* KernelLowering::amxBandFunction(const ir::Op& op, const MicroTile& caller, const std::vector<int64_t>& tileRows) {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* index = b_.getInt64Ty();
  auto* fnType = llvm::FunctionType::get(b_.getVoidTy(), {ptr, index, ptr, ptr, ptr, index, b_.getInt1Ty(), index, index}, false);
  std::string name = std::string(b_.GetInsertBlock()->getParent()->getName()) + "_rows";
  for (int64_t rows : tileRows) name += "_" + std::to_string(rows);
  return emitHelperFunction(name, fnType, [&](llvm::Function& fn) {
    fn.addParamAttr(2, llvm::Attribute::NoAlias);  // B packed for the dot, as in the micro-kernel
    MicroTile tile = caller;
    tile.a = fn.getArg(0);
    tile.aRowStride = fn.getArg(1);
    tile.packedB = fn.getArg(2);
    tile.target = {fn.getArg(4), fn.getArg(5), fn.getArg(6)};
    emitLoop(b_, i64(0), fn.getArg(8), [&](llvm::Value* band) {
      emitAmxBand(op, fn.getArg(3), tile, b_.CreateAdd(fn.getArg(7), b_.CreateMul(band, i64(32))), tileRows);
    });
    if (options_.emulateMatrixInstructions) compileAmxAsLoops(fn);
  });
}

void KernelLowering::emitAmxBand(const ir::Op& op, llvm::Value* c, const MicroTile& tile, llvm::Value* row0,
                                 const std::vector<int64_t>& tileRows) {
  int64_t m = type(op.operands[0]).shape[0], k = type(op.operands[0]).shape[1], n = type(op.operands[1]).shape[1];
  int64_t bytes = dtypeBytes(tile.operandType), step = amxStepK(k, tile.operandType), steps = k / step;
  int64_t chunk = 8;
  while (steps % chunk != 0) --chunk;
  int64_t colTiles = n % 32 == 0 ? 2 : 1;
  // i8 x i8, u8 x i8 (A unsigned, as tdpbusd's first operand), bf16 x bf16.
  llvm::Intrinsic::ID productOf = tile.operandType == DType::u8   ? llvm::Intrinsic::x86_tdpbusd_internal
                                  : tile.operandType == DType::i8 ? llvm::Intrinsic::x86_tdpbssd_internal
                                                                  : llvm::Intrinsic::x86_tdpbf16ps_internal;
  auto* zerosTy = llvm::ArrayType::get(b_.getInt8Ty(), 64);
  llvm::Value* zeros = module_.getOrInsertGlobal("tj_amx_zero_row", zerosTy, [&] {
    return new llvm::GlobalVariable(module_, zerosTy, true, llvm::GlobalValue::PrivateLinkage,
                                    llvm::Constant::getNullValue(zerosTy), "tj_amx_zero_row");
  });
  llvm::Type* amx = llvm::Type::getX86_AMXTy(ctx_);
  auto i16 = [&](int64_t v) { return b_.getInt16(static_cast<uint16_t>(v)); };
  auto load = [&](int64_t rows, int64_t rowBytes, llvm::Value* at, llvm::Value* strideBytes) {
    return b_.CreateIntrinsic(amx, llvm::Intrinsic::x86_tileloadd64_internal, {i16(rows), i16(rowBytes), at, strideBytes});
  };
  const ir::Type accTile{tile.accType, {m, n}};
  const BlockView out{tile.target.out, {tile.target.outRowStride, i64(1)}};
  llvm::Value* outStrideBytes = b_.CreateMul(tile.target.outRowStride, i64(4));
  emitLoop(b_, i64(0), i64(n / (16 * colTiles)), [&](llvm::Value* colBlock) {
    llvm::Value* col0 = b_.CreateMul(colBlock, i64(16 * colTiles));
    auto rowOf = [&](size_t i) { return b_.CreateAdd(row0, i64(16 * static_cast<int64_t>(i))); };
    auto colOf = [&](int64_t j) { return b_.CreateAdd(col0, i64(16 * j)); };
    emitLoop(b_, i64(0), i64(steps / chunk), [&](llvm::Value* chunkIndex) {
      llvm::Value* first = b_.CreateICmpEQ(chunkIndex, i64(0));
      llvm::Value* zero = b_.CreateAnd(first, tile.target.startsAtZero);
      std::vector<llvm::Value*> acc;
      for (size_t i = 0; i < tileRows.size(); ++i)
        for (int64_t j = 0; j < colTiles; ++j) {
          llvm::Value* at = b_.CreateSelect(first, bufferAddress(c, accTile, {rowOf(i), colOf(j)}),
                                            viewAddress(tile.accType, out, {rowOf(i), colOf(j)}));
          llvm::Value* stride = b_.CreateSelect(first, i64(n * 4), outStrideBytes);
          acc.push_back(load(tileRows[i], 64, b_.CreateSelect(zero, zeros, at), b_.CreateSelect(zero, i64(0), stride)));
        }
      for (int64_t s = 0; s < chunk; ++s) {
        llvm::Value* k0 = b_.CreateAdd(b_.CreateMul(chunkIndex, i64(chunk * step)), i64(s * step));
        std::vector<llvm::Value*> a, bt;
        for (size_t i = 0; i < tileRows.size(); ++i)
          a.push_back(load(tileRows[i], step * bytes, aAddress(tile, rowOf(i), k0), b_.CreateMul(tile.aRowStride, i64(bytes))));
        for (int64_t j = 0; j < colTiles; ++j) {
          llvm::Value* group = b_.CreateUDiv(b_.CreateMul(k0, i64(bytes)), i64(4));
          llvm::Value* offset = b_.CreateMul(b_.CreateAdd(b_.CreateMul(group, i64(n)), colOf(j)), i64(4));
          bt.push_back(load(step * bytes / 4, 64, b_.CreateInBoundsGEP(b_.getInt8Ty(), tile.packedB, offset), i64(n * 4)));
        }
        for (size_t i = 0; i < tileRows.size(); ++i)
          for (int64_t j = 0; j < colTiles; ++j) {
            llvm::Value*& sum = acc[i * static_cast<size_t>(colTiles) + static_cast<size_t>(j)];
            sum = b_.CreateIntrinsic(amx, productOf,
                                     {i16(tileRows[i]), i16(64), i16(step * bytes), sum, a[i], bt[static_cast<size_t>(j)]});
          }
      }
      for (size_t i = 0; i < tileRows.size(); ++i)
        for (int64_t j = 0; j < colTiles; ++j)
          b_.CreateIntrinsic(b_.getVoidTy(), llvm::Intrinsic::x86_tilestored64_internal,
                             {i16(tileRows[i]), i16(64), viewAddress(tile.accType, out, {rowOf(i), colOf(j)}), outStrideBytes,
                              acc[i * static_cast<size_t>(colTiles) + static_cast<size_t>(j)]});
    });
  });
}

// LLVM rewrites AMX intrinsics as loops in a function it compiles unoptimized, when asked
// (its -enable-x86-scalar-amx, a process-wide switch that only such functions see).
void KernelLowering::compileAmxAsLoops(llvm::Function& fn) {
  static const bool enabled = [] {
    auto& registered = llvm::cl::getRegisteredOptions();
    auto it = registered.find("enable-x86-scalar-amx");
    if (it == registered.end()) return false;
    static_cast<llvm::cl::opt<bool>*>(it->second)->setValue(true);
    return true;
  }();
  if (!enabled) throw InternalError("lower/cpu", "this LLVM cannot compile AMX intrinsics as loops");
  fn.addFnAttr(llvm::Attribute::OptimizeNone);
}

}  // namespace tj::cpu::detail
