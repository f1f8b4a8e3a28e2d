// The CPU lowering of dots (loops, the micro-kernels, in-place operands) and reductions.
#include "lower/cpu/kernel_lowering.hpp"

namespace tj::cpu::detail {

// C = acc + A·B. The product accumulates in place into a loop-carried tile when the next
// value of that tile is this dot and the tile is read only by the accumulator: either the
// accumulator is the tile itself, or one elementwise op of it (flash attention's rescale
// `acc * s + p·v`), which then runs over the tile's buffer first. No copies in and out of the
// loop state.
void KernelLowering::lowerDot(const ir::Op& op) {
  ValueId r = op.results[0];
  const ir::Type& rt = type(r);
  DType accType = isFloat(rt.dtype) ? (rt.dtype == DType::f64 ? DType::f64 : DType::f32) : rt.dtype;
  ir::Type accTile{accType, rt.shape};
  bool hasAcc = op.operands.size() == 3;
  if (hasAcc && accType == rt.dtype) {
    if (ValueId carried = inPlaceAccumulator(op); carried >= 0) {
      llvm::Value* c = buffers_[carried];
      if (carried != op.operands[2])
        emitNest(rt.shape, {op.operands[2]}, [&](const Indices& idx) { storeToBuffer(c, rt, idx, element(op.operands[2], idx)); });
      if (const OutputAccumulator* output = outputAccumulatorOf(carried)) {
        const BlockView& view = output->block.view;
        CTarget target{b_.CreateSelect(output->lastStep, view.base, c),
                       b_.CreateSelect(output->lastStep, view.strides[0], i64(rt.shape[1])), output->firstStep};
        if (!emitDotMicroKernel(op, c, accType, target))
          throw InternalError("lower/cpu", "an output accumulator's dot has no micro-kernel");
      } else if (!emitDotMicroKernel(op, c, accType)) {
        emitDotLoops(op, c, accType);
      }
      buffers_[r] = c;
      return;
    }
  }
  llvm::Value* c = allocateBuffer(accTile);
  // Without an accumulator a micro-kernel starts from zeros itself, so no pass zeroes C first
  // (attention's scores: a 32 KiB memset and C's loads at every step).
  bool fromZeros = !hasAcc && emitDotMicroKernel(op, c, accType, {c, i64(rt.shape[1]), b_.getTrue()});
  if (!fromZeros) {
    emitNest(rt.shape, hasAcc ? std::vector<ValueId>{op.operands[2]} : std::vector<ValueId>{}, [&](const Indices& idx) {
      llvm::Value* init = hasAcc ? cast(element(op.operands[2], idx), rt.dtype, accType) : llvm::Constant::getNullValue(compute(accType));
      storeToBuffer(c, accTile, idx, init);
    });
    // (Without an accumulator no micro-kernel applies here: the one above would have run.)
    if (!hasAcc || !emitDotMicroKernel(op, c, accType)) emitDotLoops(op, c, accType);
  }
  if (accType == rt.dtype) {
    buffers_[r] = c;
    return;
  }
  llvm::Value* out = allocateBuffer(rt);
  emitNest(rt.shape, {}, [&](const Indices& idx) {
    llvm::Value* v = b_.CreateLoad(compute(accType), bufferAddress(c, accTile, idx));
    storeToBuffer(out, rt, idx, cast(v, accType, rt.dtype));
  });
  buffers_[r] = out;
}

// The loop-carried tile a dot may accumulate into in place (see lowerDot), or -1.
ValueId KernelLowering::inPlaceAccumulator(const ir::Op& dot) const {
  ValueId acc = dot.operands[2], carried = acc;
  if (const ir::Op* update = info_.def[acc]) {
    // One elementwise op reading the tile once, fused (not buffered) and read only here.
    bool elementwise = ir::isUnaryElementwise(update->code) || ir::isBinaryElementwise(update->code);
    if (!elementwise || buffers_[acc] || info_.uses[acc] != 1) return -1;
    auto it = std::find_if(update->operands.begin(), update->operands.end(),
                           [&](ValueId o) { return !info_.def[o] && buffers_[o] && type(o) == type(acc); });
    if (it == update->operands.end()) return -1;
    carried = *it;
  }
  bool ownsTile = !info_.def[carried] && buffers_[carried] && info_.uses[carried] == 1;
  return ownsTile && info_.yieldedInto[dot.results[0]] == carried ? carried : -1;
}

// c += A·B, row by row: for m, for k, c[m, :] += A[m, k] * B[k, :]; the inner loop is
// contiguous in B and c so it vectorizes.
void KernelLowering::emitDotLoops(const ir::Op& op, llvm::Value* c, DType accType) {
  ValueId a = op.operands[0], bv = op.operands[1];
  const ir::Type& at = type(a);
  const ir::Type& rt = type(op.results[0]);
  ir::Type accTile{accType, rt.shape};
  llvm::Type* acc = compute(accType);
  emitLoop(b_, i64(0), i64(rt.shape[0]), [&](llvm::Value* mi) {
    emitLoop(b_, i64(0), i64(at.shape[1]), [&](llvm::Value* ki) {
      llvm::Value* av = cast(element(a, {mi, ki}), at.dtype, accType);
      emitLoop(b_, i64(0), i64(rt.shape[1]), [&](llvm::Value* ni) {
        llvm::Value* bvv = cast(element(bv, {ki, ni}), type(bv).dtype, accType);
        llvm::Value* address = bufferAddress(c, accTile, {mi, ni});
        llvm::Value* old = b_.CreateLoad(acc, address);
        llvm::Value* sum = isFloat(accType) ? b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {acc}, {av, bvv, old})
                                            : b_.CreateAdd(old, b_.CreateMul(av, bvv));
        b_.CreateStore(sum, address);
      });
    });
  });
}

// The value a sum, max or min leaves every element unchanged by (-0.0 for float sums, so a
// sum of -0.0s stays -0.0).
llvm::Value* reductionIdentity(OpCode code, DType t, llvm::Type* type) {
  if (code == OpCode::reduce_sum) return isFloat(t) ? llvm::ConstantFP::getNegativeZero(type) : llvm::ConstantInt::get(type, 0);
  bool isMax = code == OpCode::reduce_max;
  if (isFloat(t)) return llvm::ConstantFP::getInfinity(type, isMax);
  unsigned bits = type->getIntegerBitWidth();
  if (isUnsigned(t)) return llvm::ConstantInt::get(type, isMax ? llvm::APInt::getMinValue(bits) : llvm::APInt::getMaxValue(bits));
  return llvm::ConstantInt::get(type, isMax ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getSignedMaxValue(bits));
}

void KernelLowering::lowerReduction(const ir::Op& op) {
  ValueId x = op.operands[0], r = op.results[0];
  const ir::Type& xt = type(x);
  const ir::Type& rt = type(r);
  size_t axis = static_cast<size_t>(op.get(ir::attr::axis));
  bool isArg = op.code == OpCode::argmax || op.code == OpCode::argmin;
  // Float sums run in the compute type (float for the 16-bit floats), reassociated so
  // the loop vectorizes: within the (n + 1) u sum bound every device is held to, at
  // twice the lanes of summing in double.
  llvm::Type* accTy = compute(xt.dtype);
  llvm::Value* out = rt.isScalar() ? nullptr : allocateBuffer(rt);
  llvm::IRBuilder<> entry(allocaBlock_, allocaBlock_->begin());
  llvm::Value* accSlot = entry.CreateAlloca(accTy);
  llvm::Value* argSlot = entry.CreateAlloca(b_.getInt64Ty());
  llvm::Value* result = nullptr;
  auto reduceLane = [&](const Indices& outIdx) {
    auto at = [&](llvm::Value* k) {
      Indices idx(outIdx);
      idx.insert(idx.begin() + static_cast<std::ptrdiff_t>(axis), k);
      return element(x, idx);
    };
    llvm::Value* value = nullptr;
    auto step = [&](llvm::Value* k) {
      llvm::Value* v = at(k);
      llvm::Value* best = b_.CreateLoad(accTy, accSlot);
      if (isArg) {
        bool isMax = op.code == OpCode::argmax;
        llvm::Value* better = isFloat(xt.dtype) ? (isMax ? b_.CreateFCmpOGT(v, best) : b_.CreateFCmpOLT(v, best))
                                                : b_.CreateICmp(intPredicate(isMax ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_SLT, xt.dtype), v, best);
        if (isFloat(xt.dtype))  // the first NaN wins and stays
          better = b_.CreateAnd(b_.CreateOr(better, b_.CreateFCmpUNO(v, v)), b_.CreateFCmpORD(best, best));
        b_.CreateStore(b_.CreateSelect(better, v, best), accSlot);
        b_.CreateStore(b_.CreateSelect(better, k, b_.CreateLoad(b_.getInt64Ty(), argSlot)), argSlot);
        return;
      }
      llvm::Value* next = nullptr;
      bool isF = isFloat(xt.dtype);
      switch (op.code) {
        case OpCode::reduce_sum:
          next = isF ? b_.CreateFAdd(best, v) : b_.CreateAdd(best, v);
          if (isF) llvm::cast<llvm::Instruction>(next)->setHasAllowReassoc(true);
          break;
        case OpCode::reduce_max:
          next = b_.CreateBinaryIntrinsic(intMax(xt.dtype), best, v);
          break;
        default:
          next = b_.CreateBinaryIntrinsic(intMin(xt.dtype), best, v);
          break;
      }
      b_.CreateStore(next, accSlot);
    };
    if (isFloat(xt.dtype) && !isArg && op.code != OpCode::reduce_sum) {
      value = floatExtremum(op.code, xt.dtype, at, xt.shape[axis], accSlot);
    } else {
      // Sums (and integer extrema) start from their identity so the loop covers the whole axis:
      // no scalar remainder when its length is a multiple of the vector. argmax/argmin start
      // from element 0 and its index.
      b_.CreateStore(isArg ? at(i64(0)) : reductionIdentity(op.code, xt.dtype, accTy), accSlot);
      b_.CreateStore(i64(0), argSlot);
      emitLoop(b_, i64(isArg ? 1 : 0), i64(xt.shape[axis]), step);
      value = isArg ? b_.CreateTrunc(b_.CreateLoad(b_.getInt64Ty(), argSlot), b_.getInt32Ty())
                    : b_.CreateLoad(accTy, accSlot);
    }
    if (op.code == OpCode::reduce_sum && isFloat(xt.dtype)) value = roundToDType(b_, value, rt.dtype);
    if (out) storeToBuffer(out, rt, outIdx, value);
    else result = value;
  };
  if (rt.isScalar()) {
    reduceLane({});
    scalars_[r] = result;
  } else {
    emitNest(rt.shape, {x}, reduceLane);
    buffers_[r] = out;
  }
}

// A float max or min with maximum/minimum's meaning (NaN wins; +0 > -0), fast: the loop takes
// maxnum/minnum with no-NaN and no-signed-zero flags (a plain vmaxps that vectorizes, where
// maximum costs three blends per vector) and tracks NaN on the side. Only a zero result,
// whose sign those flags leave open, is recomputed exactly.
llvm::Value* KernelLowering::floatExtremum(OpCode code, DType t, const std::function<llvm::Value*(llvm::Value*)>& at,
                                           int64_t length, llvm::Value* accSlot) {
  bool isMax = code == OpCode::reduce_max;
  llvm::Type* ty = llvm::cast<llvm::AllocaInst>(accSlot)->getAllocatedType();
  llvm::IRBuilder<> entry(allocaBlock_, allocaBlock_->begin());
  // The largest magnitude's bits seen, past infinity's for a NaN: an unsigned max of integers
  // (vpand, vpmaxud a vector), where an OR of isnan's i1 vectorizes into mask packing.
  llvm::IntegerType* bitsTy = b_.getIntNTy(ty->getPrimitiveSizeInBits());
  llvm::APInt infinity = llvm::APFloat::getInf(ty->getFltSemantics()).bitcastToAPInt();
  llvm::Value* nanSlot = entry.CreateAlloca(bitsTy);
  auto reduce = [&](llvm::Intrinsic::ID fn, bool fast) {
    b_.CreateStore(reductionIdentity(code, t, ty), accSlot);
    emitLoop(b_, i64(0), i64(length), [&](llvm::Value* k) {
      llvm::Value* v = at(k);
      llvm::Value* next = b_.CreateBinaryIntrinsic(fn, b_.CreateLoad(ty, accSlot), v);
      if (fast) {
        auto* call = llvm::cast<llvm::Instruction>(next);
        call->setHasNoNaNs(true);
        call->setHasNoSignedZeros(true);
        llvm::Value* magnitude = b_.CreateAnd(b_.CreateBitCast(v, bitsTy), llvm::APInt::getSignedMaxValue(bitsTy->getBitWidth()));
        b_.CreateStore(b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, b_.CreateLoad(bitsTy, nanSlot), magnitude), nanSlot);
      }
      b_.CreateStore(next, accSlot);
    });
  };
  b_.CreateStore(llvm::ConstantInt::get(bitsTy, 0), nanSlot);
  reduce(isMax ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum, true);
  llvm::Value* sawNaN = b_.CreateICmpUGT(b_.CreateLoad(bitsTy, nanSlot), llvm::ConstantInt::get(bitsTy, infinity));
  // A logical and: with a NaN seen the fast result is poison and must not reach a branch.
  llvm::Value* zero = b_.CreateLogicalAnd(b_.CreateNot(sawNaN), b_.CreateFCmpOEQ(b_.CreateLoad(ty, accSlot), llvm::ConstantFP::get(ty, 0.0)));
  emitIf(b_, zero, [&] { reduce(isMax ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, false); });
  return b_.CreateSelect(sawNaN, llvm::ConstantFP::getNaN(ty), b_.CreateLoad(ty, accSlot));
}

// A register-blocked product in f32 (or i32 for i8 operands): C is cut into rows x (vectors * lanes)
// micro-tiles whose accumulators stay in SIMD registers across the whole K
// loop; each step broadcasts one A element (or 4-byte group of them, see emitGroupStep) per row
// and loads B's row once. AMX dots run on tiles instead (emitAmxTiles).
// Bands of the tile the register file holds (below) cover C's rows; a shorter band finishes
// what is left.
// Returns false (and emits nothing) when the columns do not fit the blocking.
bool KernelLowering::emitDotMicroKernel(const ir::Op& op, llvm::Value* c, DType accType, CTarget target) {
  const ir::Type& at = type(op.operands[0]);
  const ir::Type& bt = type(op.operands[1]);
  int64_t lanes = options_.vectorBytes / 4;
  int64_t m = at.shape[0], k = at.shape[1], n = bt.shape[1];
  if (!microKernelApplies(kernel_, op, options_) || !buffers_[op.operands[0]] || !buffers_[op.operands[1]]) return false;
  // AVX-512's 32 registers hold 6 rows of 4 vectors (24 accumulators, 10 loads a step for 24
  // products) or 8 of 2 (16, 10 for 16): f32 GEMM 2048 at 512x64x512 on one Sapphire Rapids core,
  // 121 -> 108 ms; 7 rows spill. AVX2's 16 hold 6 rows of 2.
  bool fourVectors = lanes >= 16 && n % (4 * lanes) == 0;
  int64_t vectors = fourVectors ? 4 : n % (2 * lanes) == 0 ? 2 : 1;
  int64_t rows = std::min(m, lanes >= 16 && !fourVectors ? int64_t{8} : int64_t{6});
  DotProducts products = dotProducts(kernel_, op, options_);
  ValueId bv = op.operands[1];
  llvm::Value* b = buffers_[bv];
  llvm::Value* packedB = nullptr;
  if (bPackingOf(op) != BPacking::rows) {
    bool written = plan_.of[size_t(bv)] == Placement::packedOnce || packsTransposedPairs(bv);  // so already
    packedB = written ? b : packB(op, b, allocateBuffer({DType::i8, {packedOperandBytes(op, 1)}}));
  }
  MicroTile tile{.lanes = lanes, .vectors = vectors, .rows = rows, .accType = accType, .operandType = at.dtype,
                 .products = products, .a = buffers_[op.operands[0]], .b = b, .aRowStride = i64(k),
                 .aElement = storageType(ctx_, at.dtype), .packedB = packedB, .acc = {}};
  if (products == DotProducts::pairs) tile.aElement = b_.getInt16Ty();  // bf16, or i8 widened
  if (repacksRowsOfA(at.dtype, products) && plan_.of[size_t(op.operands[0])] != Placement::packedOnce)
    tile.a = packRowsOfA(tile.a, at, products, allocateBuffer({packedRowsOfA(products), at.shape}));
  if (auto view = inPlaceOperands_.find(op.operands[0]); view != inPlaceOperands_.end()) {
    // widenToF32 and packRowsOfA read A as a contiguous block: the plan reads in place only f32
    // operands and AMX's, which neither touches.
    if (at.dtype != DType::f32 && products != DotProducts::amxTiles)
      throw InternalError("lower/cpu", "only an f32 or AMX dot operand can be read in place");
    tile.a = view->second.base;
    tile.aRowStride = view->second.strides[0];
  }
  // 16- and 8-bit floats without pair products are widened to f32 once, not at every use in
  // the K loop (most were written as f32 already: Placement::widened).
  if (widensOperands(kernel_, op, options_)) {
    if (!widened_.count(op.operands[0])) tile.a = widenToF32(tile.a, at);
    if (!widened_.count(op.operands[1])) tile.b = widenToF32(tile.b, bt);
    tile.operandType = DType::f32;
    tile.aElement = b_.getFloatTy();
  }
  b_.CreateCall(microKernelFunction(op, tile), {tile.a, tile.aRowStride, tile.packedB ? tile.packedB : tile.b, c,
                                                target.out ? target.out : c, target.out ? target.outRowStride : i64(n),
                                                target.startsAtZero ? target.startsAtZero : b_.getFalse()});
  return true;
}

// The micro-kernels of a dot, band by band, as a function
// `void(a, aRowStride, b or packedB, c, out, outRowStride, startsAtZero)`
// that the kernel's dots of the same shapes and types share (attention's two: sharing took its
// cold compile from 163 to 142 ms).
llvm::Function* KernelLowering::microKernelFunction(const ir::Op& op, const MicroTile& tile) {
  const ir::Type& at = type(op.operands[0]);
  const ir::Type& bt = type(op.operands[1]);
  int64_t m = at.shape[0];
  std::string key = at.str() + " " + bt.str() + " " + std::string(dtypeName(tile.accType)) + " " +
                    std::string(dtypeName(tile.operandType)) + " " + std::to_string(static_cast<int>(tile.products)) + " " +
                    std::to_string(tile.lanes) + "x" +
                    std::to_string(tile.vectors) + "x" + std::to_string(tile.rows);
  if (auto known = microKernels_.find(key); known != microKernels_.end()) return known->second;
  llvm::Type* ptr = b_.getPtrTy();
  auto* fnType = llvm::FunctionType::get(b_.getVoidTy(), {ptr, b_.getInt64Ty(), ptr, ptr, ptr, b_.getInt64Ty(), b_.getInt1Ty()}, false);
  std::string name = "tj_dot_" + std::to_string(microKernels_.size());
  llvm::Function* fn = emitHelperFunction(name, fnType, [&](llvm::Function& fn) {
    // B is the dot's own copy, or a workspace slot no one writes while it is read; A may be a
    // tensor's rows, and c and out (which may be c) are written.
    fn.addParamAttr(2, llvm::Attribute::NoAlias);
    MicroTile local = tile;
    local.a = fn.getArg(0);
    local.aRowStride = fn.getArg(1);
    (tile.packedB ? local.packedB : local.b) = fn.getArg(2);
    local.target = {fn.getArg(4), fn.getArg(5), fn.getArg(6)};
    if (tile.products == DotProducts::amxTiles) return emitAmxTiles(op, fn.getArg(3), local);
    // Accumulators live in allocas that mem2reg turns into registers.
    auto* vecTy = llvm::FixedVectorType::get(compute(tile.accType), static_cast<unsigned>(tile.lanes));
    for (int64_t i = 0; i < tile.rows * tile.vectors; ++i) local.acc.push_back(b_.CreateAlloca(vecTy));
    emitLoop(b_, i64(0), i64(m / tile.rows), [&](llvm::Value* band) {
      emitMicroTileRow(op, fn.getArg(3), local, b_.CreateMul(band, i64(tile.rows)));
    });
    if (m % tile.rows != 0) {
      local.rows = m % tile.rows;
      emitMicroTileRow(op, fn.getArg(3), local, i64(m - m % tile.rows));
    }
  });
  microKernels_.emplace(key, fn);
  return fn;
}

// A function of the kernel's module for one of its parts (a micro-kernel, an AMX band), never
// inlined, with the kernel's attributes: `body` emits all of it but the `ret void`, its allocas
// in its own entry block.
llvm::Function* KernelLowering::emitHelperFunction(const std::string& name, llvm::FunctionType* type,
                                                   const std::function<void(llvm::Function&)>& body) {
  auto* fn = llvm::Function::Create(type, llvm::Function::InternalLinkage, name, module_);
  fn->copyAttributesFrom(b_.GetInsertBlock()->getParent());
  fn->setDSOLocal(true);
  fn->addFnAttr(llvm::Attribute::NoInline);
  llvm::IRBuilderBase::InsertPointGuard resume(b_);
  llvm::BasicBlock* callerAllocas = std::exchange(allocaBlock_, llvm::BasicBlock::Create(ctx_, "entry", fn));
  auto restore = llvm::make_scope_exit([&] { allocaBlock_ = callerAllocas; });
  b_.SetInsertPoint(allocaBlock_);
  body(*fn);
  b_.CreateRetVoid();
  return fn;
}

// A block read in place (Placement::inPlace): its tensor's rows where the block lies inside with unit columns,
// else the buffer, which the runtime's gather fills.
void KernelLowering::lowerInPlaceOperand(const ir::Op& load, llvm::Value* buffer) {
  inPlaceOperands_.emplace(load.results[0], stageLoad(load, buffer));
}

// One band of `tile.rows` rows of C from row0, micro-tile by micro-tile.
void KernelLowering::emitMicroTileRow(const ir::Op& op, llvm::Value* c, const MicroTile& tile, llvm::Value* row0) {
  const ir::Type& at = type(op.operands[0]);
  const ir::Type& bt = type(op.operands[1]);
  int64_t m = at.shape[0], k = at.shape[1], n = bt.shape[1];
  int64_t lanes = tile.lanes, vectors = tile.vectors, rows = tile.rows;
  bool integer = tile.accType == DType::i32;
  const std::vector<llvm::Value*>& acc = tile.acc;
  auto* vecTy = llvm::FixedVectorType::get(compute(tile.accType), static_cast<unsigned>(lanes));
  auto* bVecTy = llvm::FixedVectorType::get(storageType(ctx_, tile.operandType), static_cast<unsigned>(lanes));
  const ir::Type bTile{tile.operandType, bt.shape};
  ir::Type accTile{tile.accType, {m, n}};
  auto cAddress = [&](llvm::Value* row, llvm::Value* col) { return bufferAddress(c, accTile, {row, col}); };
  const BlockView out{tile.target.out, {tile.target.outRowStride, i64(1)}};
  emitLoop(b_, i64(0), i64(n / (vectors * lanes)), [&](llvm::Value* tileCol) {
    llvm::Value* col0 = b_.CreateMul(tileCol, i64(vectors * lanes));
    auto each = [&](const std::function<void(int64_t r, int64_t v, llvm::Value* row, llvm::Value* col)>& f) {
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t v = 0; v < vectors; ++v) f(r, v, b_.CreateAdd(row0, i64(r)), b_.CreateAdd(col0, i64(v * lanes)));
    };
    emitIf(b_, tile.target.startsAtZero, [&] {
      each([&](int64_t r, int64_t v, llvm::Value*, llvm::Value*) { b_.CreateStore(llvm::Constant::getNullValue(vecTy), acc[r * vectors + v]); });
    }, [&] {
      each([&](int64_t r, int64_t v, llvm::Value* row, llvm::Value* col) {
        b_.CreateStore(b_.CreateAlignedLoad(vecTy, cAddress(row, col), llvm::Align(4)), acc[r * vectors + v]);
      });
    });
    std::vector<llvm::Value*> aRows = rowPointers(tile, row0);
    emitLoop(b_, i64(0), i64(k / groupSize(tile.products)), [&](llvm::Value* step) {
      if (tile.products != DotProducts::single) return emitGroupStep(op, tile, step, aRows, col0);
      std::vector<llvm::Value*> bRow(static_cast<size_t>(vectors));
      for (int64_t v = 0; v < vectors; ++v) {
        llvm::Value* address = bufferAddress(tile.b, bTile, {step, b_.CreateAdd(col0, i64(v * lanes))});
        llvm::Value* raw = b_.CreateAlignedLoad(bVecTy, address, llvm::Align(dtypeBytes(tile.operandType)));
        bRow[v] = integer ? b_.CreateSExt(raw, vecTy) : fromStorage(b_, raw, tile.operandType);
      }
      for (int64_t r = 0; r < rows; ++r) {
        llvm::Value* aRaw = b_.CreateLoad(storageType(ctx_, tile.operandType), b_.CreateInBoundsGEP(tile.aElement, aRows[r], step));
        llvm::Value* aValue = cast(fromStorage(b_, aRaw, tile.operandType), tile.operandType, tile.accType);
        llvm::Value* aSplat = b_.CreateVectorSplat(static_cast<unsigned>(lanes), aValue);
        for (int64_t v = 0; v < vectors; ++v) {
          llvm::Value* slot = acc[r * vectors + v];
          llvm::Value* old = b_.CreateLoad(vecTy, slot);
          b_.CreateStore(integer ? b_.CreateAdd(old, b_.CreateMul(aSplat, bRow[v]))
                                 : b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vecTy}, {aSplat, bRow[v], old}),
                         slot);
        }
      }
    }, {.unroll = 2});
    each([&](int64_t r, int64_t v, llvm::Value* row, llvm::Value* col) {
      llvm::Value* to = viewAddress(tile.accType, out, {row, col});
      llvm::Value* sum = b_.CreateLoad(vecTy, acc[r * vectors + v]);
      if (biasedQuads(tile.products, at.dtype)) sum = b_.CreateSub(sum, quadBiasOf(tile, k, n, col));
      b_.CreateAlignedStore(sum, to, llvm::Align(4));
    });
  });
}

// The first element of each of the band's rows of A, made before the K loop and hidden from
// LLVM's loop strength reduction (an empty inline asm that returns its operand): seeing the rows
// as row0 plus multiples of a run-time stride, it rebuilt them from one register and the stride
// at every step, 8 LEAs per two k on an AVX-512 f32 tile, which share ports with the FMAs. Each
// row in a register of its own is one broadcast per k with no address arithmetic (f32 GEMM
// 2048 at 256x64x256: 129-135 -> 126-127 ms on one thread, 66.4 -> 63.7 on two).
std::vector<llvm::Value*> KernelLowering::rowPointers(const MicroTile& tile, llvm::Value* row0) {
  auto* opaque = llvm::InlineAsm::get(llvm::FunctionType::get(b_.getPtrTy(), {b_.getPtrTy()}, false), "", "=r,0",
                                      /*hasSideEffects=*/false);
  std::vector<llvm::Value*> rows;
  for (int64_t r = 0; r < tile.rows; ++r) rows.push_back(b_.CreateCall(opaque, {aAddress(tile, b_.CreateAdd(row0, i64(r)), i64(0))}));
  return rows;
}

// A copy of a 16- or 8-bit float buffer in f32, a vector at a time.
llvm::Value* KernelLowering::widenToF32(llvm::Value* buffer, const ir::Type& t) {
  llvm::Value* wide = allocateBuffer({DType::f32, t.shape});
  mapBuffer(buffer, storageType(ctx_, t.dtype), wide, b_.getFloatTy(), t.numel(),
            [&](llvm::Value* v) { return fromStorage(b_, v, t.dtype); });
  return wide;
}

// to[i] = f(from[i]) for `count` elements, `vectorBytes / 4` at a time, then one by one.
void KernelLowering::mapBuffer(llvm::Value* from, llvm::Type* fromType, llvm::Value* to, llvm::Type* toType, int64_t count,
                               const std::function<llvm::Value*(llvm::Value*)>& f) {
  int64_t lanes = options_.vectorBytes / 4;
  auto map = [&](unsigned width, llvm::Value* at) {
    llvm::Type* source = width == 1 ? fromType : llvm::FixedVectorType::get(fromType, width);
    auto align = [](llvm::Type* t) { return llvm::Align(t->getScalarSizeInBits() / 8); };
    llvm::Value* raw = b_.CreateAlignedLoad(source, b_.CreateInBoundsGEP(fromType, from, at), align(fromType));
    b_.CreateAlignedStore(f(raw), b_.CreateInBoundsGEP(toType, to, at), align(toType));
  };
  emitLoop(b_, i64(0), i64(count / lanes), [&](llvm::Value* chunk) { map(static_cast<unsigned>(lanes), b_.CreateMul(chunk, i64(lanes))); });
  emitLoop(b_, i64(count / lanes * lanes), i64(count), [&](llvm::Value* i) { map(1, i); });
}

// A's bytes in the form a step of pair or quad products reads with one broadcast: widened to
// i16 for pmaddwd, i8 biased to u8 (quadBiasOf) for vpdpbusd, whose u8 operand a u8 A already
// is. Other A are read as they are.
bool KernelLowering::repacksRowsOfA(DType a, DotProducts products) {
  bool bytes = a == DType::i8 || a == DType::u8;
  return bytes && (products == DotProducts::pairs || biasedQuads(products, a));
}

DType KernelLowering::packedRowsOfA(DotProducts products) {
  return products == DotProducts::pairs ? DType::bf16 : DType::i8;  // bf16: 16-bit storage
}

llvm::Value* KernelLowering::packRowsOfA(llvm::Value* a, const ir::Type& t, DotProducts products, llvm::Value* packed) {
  bool pairs = products == DotProducts::pairs;
  llvm::Type* to = pairs ? b_.getInt16Ty() : b_.getInt8Ty();
  bool isSigned = t.dtype == DType::i8;
  mapBuffer(a, b_.getInt8Ty(), packed, to, t.numel(), [&](llvm::Value* v) {
    llvm::Type* wide = v->getType()->getWithNewType(to);
    if (pairs) return isSigned ? b_.CreateSExt(v, wide) : b_.CreateZExt(v, wide);
    return b_.CreateXor(v, llvm::ConstantInt::get(v->getType(), 0x80));
  });
  return packed;
}

KernelLowering::BPacking KernelLowering::bPackingOf(const ir::Op& dot) const {
  DotProducts products = dotProducts(kernel_, dot, options_);
  if (products == DotProducts::pairs || (products == DotProducts::amxTiles && type(dot.operands[1]).dtype == DType::bf16))
    return BPacking::pairs;
  return products == DotProducts::single ? BPacking::rows : BPacking::quads;
}

int64_t KernelLowering::packedOperandBytes(const ir::Op& dot, size_t operand) const {
  const ir::Type& t = type(dot.operands[operand]);
  const DotProducts products = dotProducts(kernel_, dot, options_);
  const bool widens = widensOperands(kernel_, dot, options_);
  if (operand == 0) {
    DType form = widens ? DType::f32 : repacksRowsOfA(t.dtype, products) ? packedRowsOfA(products) : t.dtype;
    return t.numel() * dtypeBytes(form);
  }
  int64_t k = t.shape[0], n = t.shape[1];
  switch (bPackingOf(dot)) {
    case BPacking::rows: return k * n * (widens ? 4 : dtypeBytes(t.dtype));
    case BPacking::pairs: return k * n * 2;
    case BPacking::quads: break;
  }
  bool sums = biasedQuads(products, type(dot.operands[0]).dtype);
  return (k + (sums ? 4 : 0)) * n;  // the column sums' i32s after the bytes
}

llvm::Value* KernelLowering::packB(const ir::Op& dot, llvm::Value* b, llvm::Value* packed) {
  const ir::Type& bt = type(dot.operands[1]);
  int64_t k = bt.shape[0], n = bt.shape[1], lanes = options_.vectorBytes / 4;
  DotProducts products = dotProducts(kernel_, dot, options_);
  if (bPackingOf(dot) == BPacking::pairs) packPairs(b, bt.dtype, k, n, lanes, packed);
  else packQuads(b, k, n, lanes, biasedQuads(products, type(dot.operands[0]).dtype), packed);
  return packed;
}

// B [k, n] -> [k/2, n, 2] of 16-bit values (bf16 bits, or i8 sign-extended): element
// (2p + i, j) at (p * n + j) * 2 + i. `lanes` columns at a time: two row loads, one
// interleaving shuffle, one store.
void KernelLowering::packPairs(llvm::Value* b, DType dtype, int64_t k, int64_t n, int64_t lanes, llvm::Value* packed) {
  llvm::Type* i16 = b_.getInt16Ty();
  llvm::Type* storage = storageType(ctx_, dtype);
  auto* rowTy = llvm::FixedVectorType::get(storage, static_cast<unsigned>(lanes));
  auto* wideTy = llvm::FixedVectorType::get(i16, static_cast<unsigned>(lanes));
  std::vector<int> interleave;
  for (int i = 0; i < lanes; ++i) interleave.insert(interleave.end(), {i, static_cast<int>(lanes) + i});
  emitLoop(b_, i64(0), i64(k / 2), [&](llvm::Value* p) {
    emitLoop(b_, i64(0), i64(n / lanes), [&](llvm::Value* chunk) {
      llvm::Value* col = b_.CreateMul(chunk, i64(lanes));
      auto row = [&](int64_t i) {
        llvm::Value* r = b_.CreateAdd(b_.CreateMul(p, i64(2)), i64(i));
        llvm::Value* at = b_.CreateInBoundsGEP(storage, b, b_.CreateAdd(b_.CreateMul(r, i64(n)), col));
        return b_.CreateSExtOrBitCast(b_.CreateAlignedLoad(rowTy, at, llvm::Align(1)), wideTy);
      };
      llvm::Value* pairs = b_.CreateShuffleVector(row(0), row(1), interleave);
      llvm::Value* to = b_.CreateMul(b_.CreateAdd(b_.CreateMul(p, i64(n)), col), i64(2));
      b_.CreateAlignedStore(pairs, b_.CreateInBoundsGEP(i16, packed, to), llvm::Align(4));
    });
  });
}

// One step of the micro-kernel over the k of one 4-byte group of B's packing: a pair of bf16
// (vdpbf16ps: it treats subnormal inputs as zero; products are exact and summed in f32) or of
// i8 widened to i16 (pmaddwd: exact, a pair of i8 products fits i32), or a quad of i8
// (vpdpbusd, see quadBiasOf). Each row's group of A is one broadcast word.
void KernelLowering::emitGroupStep(const ir::Op& op, const MicroTile& tile, llvm::Value* group,
                                   const std::vector<llvm::Value*>& aRows, llvm::Value* col0) {
  int64_t n = type(op.operands[1]).shape[1], lanes = tile.lanes, vectors = tile.vectors;
  auto* accTy = llvm::FixedVectorType::get(compute(tile.accType), static_cast<unsigned>(lanes));
  auto* wordsTy = llvm::FixedVectorType::get(b_.getInt32Ty(), static_cast<unsigned>(lanes));
  std::vector<llvm::Value*> bWords(static_cast<size_t>(vectors));
  for (int64_t v = 0; v < vectors; ++v) {
    llvm::Value* col = b_.CreateAdd(col0, i64(v * lanes));
    llvm::Value* offset = b_.CreateMul(b_.CreateAdd(b_.CreateMul(group, i64(n)), col), i64(4));
    bWords[v] = b_.CreateAlignedLoad(wordsTy, b_.CreateInBoundsGEP(b_.getInt8Ty(), tile.packedB, offset), llvm::Align(4));
  }
  llvm::Value* k0 = b_.CreateMul(group, i64(groupSize(tile.products)));
  for (int64_t r = 0; r < tile.rows; ++r) {
    llvm::Value* word = b_.CreateAlignedLoad(b_.getInt32Ty(), b_.CreateInBoundsGEP(tile.aElement, aRows[r], k0), llvm::Align(1));
    llvm::Value* aWords = b_.CreateVectorSplat(static_cast<unsigned>(lanes), word);
    for (int64_t v = 0; v < vectors; ++v) {
      llvm::Value* slot = tile.acc[static_cast<size_t>(r * vectors + v)];
      b_.CreateStore(groupProduct(tile, b_.CreateLoad(accTy, slot), aWords, bWords[v]), slot);
    }
  }
}

// acc plus the products of a and b's groups, per 32-bit lane.
llvm::Value* KernelLowering::groupProduct(const MicroTile& tile, llvm::Value* acc, llvm::Value* a, llvm::Value* b) {
  if (tile.products == DotProducts::quads) return dotI8Quads(acc, a, b);
  auto pairs = [&](llvm::Type* half, llvm::Value* words) {
    return b_.CreateBitCast(words, llvm::FixedVectorType::get(half, static_cast<unsigned>(2 * tile.lanes)));
  };
  if (tile.accType != DType::i32) return dotBf16Pairs(acc, pairs(b_.getBFloatTy(), a), pairs(b_.getBFloatTy(), b));
  auto pmadd = tile.lanes == 16 ? llvm::Intrinsic::x86_avx512_pmaddw_d_512
               : tile.lanes == 8 ? llvm::Intrinsic::x86_avx2_pmadd_wd
                                 : llvm::Intrinsic::x86_sse2_pmadd_wd;
  return b_.CreateAdd(acc, b_.CreateIntrinsic(pmadd, {}, {pairs(b_.getInt16Ty(), a), pairs(b_.getInt16Ty(), b)}));
}

}  // namespace tj::cpu::detail
