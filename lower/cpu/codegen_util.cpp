#include "lower/cpu/codegen_util.hpp"

#include "lower/llvm_math.hpp"

namespace tj::cpu {

llvm::Type* storageType(llvm::LLVMContext& c, DType t) {
  switch (t) {
    case DType::f32: return llvm::Type::getFloatTy(c);
    case DType::f64: return llvm::Type::getDoubleTy(c);
    case DType::f16: return llvm::Type::getHalfTy(c);
    case DType::bf16: return llvm::Type::getInt16Ty(c);  // raw bits: LLVM's bfloat ops flush subnormals
    default: return llvm::Type::getIntNTy(c, static_cast<unsigned>(8 * dtypeBytes(t)));  // integers and bool
  }
}

llvm::Type* computeType(llvm::LLVMContext& c, DType t) {
  if (t == DType::f16 || t == DType::bf16 || isFloat8(t)) return llvm::Type::getFloatTy(c);
  if (t == DType::boolean) return llvm::Type::getInt1Ty(c);
  return storageType(c, t);
}

namespace {

llvm::Value* bitsToFloat(llvm::IRBuilder<>& b, llvm::Value* bits) {
  return b.CreateBitCast(bits, b.getFloatTy());
}

// float -> bf16 with round-to-nearest-even on the bit pattern (NaN stays quiet),
// returned as the float holding the bf16 value. Pure integer ops: vectorizes.
llvm::Value* roundFloatToBF16(llvm::IRBuilder<>& b, llvm::Value* f) {
  llvm::Value* bits = b.CreateBitCast(f, b.getInt32Ty());
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  llvm::Value* rounded = b.CreateAdd(bits, b.CreateAdd(lsb, b.getInt32(0x7fff)));
  llvm::Value* isNaN = b.CreateFCmpUNO(f, f);
  llvm::Value* quiet = b.CreateOr(bits, b.getInt32(0x400000));
  llvm::Value* chosen = b.CreateSelect(isNaN, quiet, rounded);
  return bitsToFloat(b, b.CreateAnd(chosen, b.getInt32(0xffff0000u)));
}

// double -> float rounding to odd, so a later rounding to 16 bits is not a double rounding.
llvm::Value* roundDoubleToOddFloat(llvm::IRBuilder<>& b, llvm::Value* d) {
  llvm::Value* f = b.CreateFPTrunc(d, b.getFloatTy());
  llvm::Value* back = b.CreateFPExt(f, b.getDoubleTy());
  llvm::Value* inexact = b.CreateFCmpONE(back, d);  // false for NaN and exact values
  llvm::Value* bits = b.CreateBitCast(f, b.getInt32Ty());
  llvm::Value* even = b.CreateICmpEQ(b.CreateAnd(bits, 1), b.getInt32(0));
  llvm::Value* roundedAway = b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                             b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d));
  llvm::Value* nudged = b.CreateSelect(roundedAway, b.CreateSub(bits, b.getInt32(1)), b.CreateAdd(bits, b.getInt32(1)));
  llvm::Value* finite = b.CreateFCmpONE(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d),
                                        llvm::ConstantFP::getInfinity(b.getDoubleTy()));
  llvm::Value* nudge = b.CreateAnd(b.CreateAnd(inexact, even), finite);
  return bitsToFloat(b, b.CreateSelect(nudge, nudged, bits));
}

}  // namespace

llvm::Value* roundToDType(llvm::IRBuilder<>& b, llvm::Value* v, DType t) {
  bool isDouble = v->getType()->isDoubleTy();
  switch (t) {
    case DType::f64: return v;
    case DType::f32: return isDouble ? b.CreateFPTrunc(v, b.getFloatTy()) : v;
    case DType::f16: {
      llvm::Value* f = isDouble ? roundDoubleToOddFloat(b, v) : v;
      return b.CreateFPExt(b.CreateFPTrunc(f, b.getHalfTy()), b.getFloatTy());
    }
    case DType::bf16: return roundFloatToBF16(b, isDouble ? roundDoubleToOddFloat(b, v) : v);
    case DType::f8e4m3: case DType::f8e5m2:
      return math::float8ToF32(b, t, math::f32ToFloat8(b, t, isDouble ? roundDoubleToOddFloat(b, v) : v));
    default: return v;
  }
}

namespace {

llvm::Value* f32(llvm::IRBuilder<>& b, double v) { return llvm::ConstantFP::get(b.getFloatTy(), v); }

// p * q + s in float, fused where the host has FMA (mul and add, not a libm call, where not).
llvm::Value* fmuladd(llvm::IRBuilder<>& b, llvm::Value* p, llvm::Value* q, llvm::Value* s) {
  return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {b.getFloatTy()}, {p, q, s});
}

// The polynomial with `coefficients` (highest degree first) at r, by Horner's rule.
llvm::Value* horner(llvm::IRBuilder<>& b, std::initializer_list<double> coefficients, llvm::Value* r) {
  llvm::Value* p = nullptr;
  for (double c : coefficients) p = p ? fmuladd(b, p, r, f32(b, c)) : f32(b, c);
  return p;
}

// 2^n e^r for |r| <= ln2 / 2 and n (as i32) in [-160, 130]: a degree-6 polynomial, then the
// power of two in two exact halves, so subnormal results round once (and a NaN stays NaN).
llvm::Value* scaledExp(llvm::IRBuilder<>& b, llvm::Value* r, llvm::Value* ni) {
  auto i = [&](int v) { return b.getInt32(static_cast<uint32_t>(v)); };
  llvm::Value* p = horner(b, {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
                              5.0000001201e-1}, r);
  p = b.CreateFAdd(fmuladd(b, p, b.CreateFMul(r, r), r), f32(b, 1.0));
  llvm::Value* half1 = b.CreateAShr(ni, i(1));
  llvm::Value* half2 = b.CreateSub(ni, half1);
  auto pow2 = [&](llvm::Value* e) { return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, i(127)), i(23)), b.getFloatTy()); };
  return b.CreateFMul(b.CreateFMul(p, pow2(half1)), pow2(half2));
}

// x clamped to [lo, hi], past which the result is 0 or inf anyway (and 2^n stays
// representable). A compare and select (one vmaxps/vminps each) lets a NaN through.
llvm::Value* clamp(llvm::IRBuilder<>& b, llvm::Value* x, double lo, double hi) {
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOLT(x, f32(b, lo)), f32(b, lo), x);
  return b.CreateSelect(b.CreateFCmpOGT(clamped, f32(b, hi)), f32(b, hi), clamped);
}

// Adding 1.5 * 2^23, whose ulp is 1, rounds to an integer and leaves it in the sum's low bits,
// so no round or convert instruction is needed: the rounded value as a float and as an i32.
constexpr double kShifter = 12582912.0;
llvm::Value* shiftedToInt(llvm::IRBuilder<>& b, llvm::Value* shifted) {
  return b.CreateSub(b.CreateBitCast(shifted, b.getInt32Ty()), b.getInt32(0x4B400000));
}

}  // namespace

llvm::Value* emitFastExpF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value* clamped = clamp(b, x, -110.0, 90.0);
  // n = round(x log2 e); r = x - n ln2, with ln2 split so n * ln2Hi is exact.
  llvm::Value* shifted = fmuladd(b, clamped, f32(b, 1.44269504088896341), f32(b, kShifter));
  llvm::Value* n = b.CreateFSub(shifted, f32(b, kShifter));
  llvm::Value* r = fmuladd(b, n, f32(b, -0.693359375), clamped);
  r = fmuladd(b, n, f32(b, 2.12194440e-4), r);
  return scaledExp(b, r, shiftedToInt(b, shifted));
}

// fast_exp2's contract allows what exp2 does not: 2^-20 relative error, and anything within the
// smallest normal of 0 for smaller results. So n = floor(x) and 2^(x - n), in [1, 2), by one
// degree-5 polynomial (1.6e-7 relative in f32, 1 at 0), times 2^n made in the exponent bits:
// about half of exp2's instructions. x clamped to [-127, 128] makes those bits 0 (a zero
// result) or infinity's; a NaN stays NaN through the product.
llvm::Value* emitFastExp2F32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value* clamped = clamp(b, x, -127.0, 128.0);
  llvm::Value* n = b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, clamped);
  llvm::Value* r = b.CreateFSub(clamped, n);  // exact but for tiny negative x (-1e-30 + 1 rounds to 1)
  llvm::Value* p = horner(b, {1.867130108e-3, 9.017030217e-3, 5.579991321e-2, 2.401644501e-1, 6.931513118e-1, 1.0}, r);
  // n + 1.5 * 2^23 leaves n in the low bits, as an integer, without fptosi's poison for NaN.
  llvm::Value* biased = b.CreateAdd(shiftedToInt(b, b.CreateFAdd(n, f32(b, kShifter))), b.getInt32(127));
  return b.CreateFMul(p, b.CreateBitCast(b.CreateShl(biased, b.getInt32(23)), b.getFloatTy()));
}

llvm::Value* fromStorage(llvm::IRBuilder<>& b, llvm::Value* v, DType t) {
  llvm::Type* ty = v->getType();  // a scalar or a vector
  if (t == DType::f16) return b.CreateFPExt(v, ty->getWithNewType(b.getFloatTy()));
  if (t == DType::bf16) {
    llvm::Value* wide = b.CreateZExt(v, ty->getWithNewType(b.getInt32Ty()));
    llvm::Value* bits = b.CreateShl(wide, llvm::ConstantInt::get(wide->getType(), 16));
    return b.CreateBitCast(bits, ty->getWithNewType(b.getFloatTy()));
  }
  if (isFloat8(t)) return math::float8ToF32(b, t, v);
  if (t == DType::boolean) return b.CreateICmpNE(v, llvm::ConstantInt::get(ty, 0));
  return v;
}

llvm::Value* toStorage(llvm::IRBuilder<>& b, llvm::Value* v, DType t) {
  llvm::Type* ty = v->getType();  // a scalar or a vector (8-bit floats: scalars only)
  if (t == DType::f16) return b.CreateFPTrunc(v, ty->getWithNewType(b.getHalfTy()));  // exact: v is already rounded
  if (t == DType::bf16) {
    llvm::Value* bits = b.CreateBitCast(v, ty->getWithNewType(b.getInt32Ty()));
    return b.CreateTrunc(b.CreateLShr(bits, llvm::ConstantInt::get(bits->getType(), 16)), ty->getWithNewType(b.getInt16Ty()));
  }
  if (isFloat8(t)) return math::f32ToFloat8(b, t, v);  // exact: v is already rounded
  if (t == DType::boolean) return b.CreateZExt(v, ty->getWithNewType(b.getInt8Ty()));
  return v;
}

void emitLoop(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end,
              const std::function<void(llvm::Value*)>& body, LoopHints hints) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(b.getContext(), "loop", fn);
  llvm::BasicBlock* bodyBlock = llvm::BasicBlock::Create(b.getContext(), "loop.body", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(b.getContext(), "loop.exit", fn);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* i = b.CreatePHI(begin->getType(), 2, "i");
  i->addIncoming(begin, pre);
  b.CreateCondBr(b.CreateICmpSLT(i, end), bodyBlock, exit);
  b.SetInsertPoint(bodyBlock);
  body(i);
  llvm::Value* next = b.CreateAdd(i, llvm::ConstantInt::get(i->getType(), 1), "", /*HasNUW=*/true, /*HasNSW=*/true);
  i->addIncoming(next, b.GetInsertBlock());
  llvm::BranchInst* backEdge = b.CreateBr(header);
  std::vector<llvm::Metadata*> loopId = {nullptr};  // the loop's id refers to itself first
  auto hint = [&](const char* name, unsigned value) {
    if (value == 0) return;
    llvm::Metadata* pair[] = {llvm::MDString::get(b.getContext(), name), llvm::ConstantAsMetadata::get(b.getInt32(value))};
    loopId.push_back(llvm::MDNode::get(b.getContext(), pair));
  };
  hint("llvm.loop.unroll.count", hints.unroll);
  hint("llvm.loop.interleave.count", hints.interleave);
  if (loopId.size() > 1) {
    llvm::MDNode* node = llvm::MDNode::getDistinct(b.getContext(), loopId);
    node->replaceOperandWith(0, node);
    backEdge->setMetadata(llvm::LLVMContext::MD_loop, node);
  }
  b.SetInsertPoint(exit);
}

void emitIf(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<void()>& then,
            const std::function<void()>& otherwise) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* thenBlock = llvm::BasicBlock::Create(b.getContext(), "then", fn);
  llvm::BasicBlock* elseBlock = otherwise ? llvm::BasicBlock::Create(b.getContext(), "else", fn) : nullptr;
  llvm::BasicBlock* join = llvm::BasicBlock::Create(b.getContext(), "join", fn);
  b.CreateCondBr(cond, thenBlock, elseBlock ? elseBlock : join);
  b.SetInsertPoint(thenBlock);
  then();
  b.CreateBr(join);
  if (elseBlock) {
    b.SetInsertPoint(elseBlock);
    otherwise();
    b.CreateBr(join);
  }
  b.SetInsertPoint(join);
}

llvm::Value* emitIfValue(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<llvm::Value*()>& then,
                         llvm::Value* otherwise) {
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::Value* value = nullptr;
  llvm::BasicBlock* thenEnd = nullptr;
  emitIf(b, cond, [&] {
    value = then();
    thenEnd = b.GetInsertBlock();
  });
  llvm::PHINode* phi = b.CreatePHI(otherwise->getType(), 2);
  phi->addIncoming(value, thenEnd);
  phi->addIncoming(otherwise, before);
  return phi;
}

}  // namespace tj::cpu
