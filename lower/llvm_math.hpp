// lower/math's emitter as LLVM instructions, for both LLVM lowerings (the CPU's and the GPU
// kernel IR's printer): scalars, or vectors of `lanes` elements (not for the f64 word
// splitting); no fast-math flags (nothing contracts).
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include <vector>

#include "lower/math/accurate_math.hpp"
#include "lower/math/float8.hpp"

namespace tj::math {

class LlvmMath final : public MathEmitter {
 public:
  LlvmMath(llvm::IRBuilder<>& b, bool f64, unsigned lanes = 0) : b_(b), f64_(f64), lanes_(lanes) {}
  bool f64() const override { return f64_; }
  MathValue put(llvm::Value* v) {
    values_.push_back(v);
    return MathValue(values_.size() - 1);
  }
  llvm::Value* get(MathValue v) const { return values_.at(v); }

  MathValue c(double v) override { return put(llvm::ConstantFP::get(ft(), f64_ ? v : double(float(v)))); }
  MathValue add(MathValue a, MathValue c) override { return put(b_.CreateFAdd(get(a), get(c))); }
  MathValue sub(MathValue a, MathValue c) override { return put(b_.CreateFSub(get(a), get(c))); }
  MathValue mul(MathValue a, MathValue c) override { return put(b_.CreateFMul(get(a), get(c))); }
  MathValue div(MathValue a, MathValue c) override { return put(b_.CreateFDiv(get(a), get(c))); }
  MathValue neg(MathValue a) override { return put(b_.CreateFNeg(get(a))); }
  MathValue fma(MathValue a, MathValue x, MathValue y) override {
    return put(b_.CreateIntrinsic(llvm::Intrinsic::fma, {ft()}, {get(a), get(x), get(y)}));
  }
  MathValue abs(MathValue a) override { return unaryIntrinsic(llvm::Intrinsic::fabs, a); }
  MathValue floor(MathValue a) override { return unaryIntrinsic(llvm::Intrinsic::floor, a); }
  MathValue roundEven(MathValue a) override { return unaryIntrinsic(llvm::Intrinsic::roundeven, a); }
  MathValue sqrt(MathValue a) override { return unaryIntrinsic(llvm::Intrinsic::sqrt, a); }
  MathValue min(MathValue a, MathValue c) override {
    return put(b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, get(a), get(c)));
  }
  MathValue max(MathValue a, MathValue c) override {
    return put(b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, get(a), get(c)));
  }
  MathValue sel(MathValue p, MathValue a, MathValue c) override {
    return put(b_.CreateSelect(get(p), get(a), get(c)));
  }
  MathValue isel(MathValue p, MathValue a, MathValue c) override { return sel(p, a, c); }
  MathValue lt(MathValue a, MathValue c) override { return put(b_.CreateFCmpOLT(get(a), get(c))); }
  MathValue eq(MathValue a, MathValue c) override { return put(b_.CreateFCmpOEQ(get(a), get(c))); }
  MathValue isNan(MathValue a) override { return put(b_.CreateFCmpUNO(get(a), get(a))); }
  MathValue isInf(MathValue a) override {
    return put(b_.CreateFCmpOEQ(get(abs(a)), llvm::ConstantFP::getInfinity(ft())));
  }
  MathValue either(MathValue p, MathValue q) override { return put(b_.CreateOr(get(p), get(q))); }
  MathValue differ(MathValue p, MathValue q) override { return put(b_.CreateXor(get(p), get(q))); }

  MathValue ci(int32_t v) override { return put(llvm::ConstantInt::get(it(), uint64_t(uint32_t(v)))); }
  MathValue iadd(MathValue a, MathValue c) override { return put(b_.CreateAdd(get(a), get(c))); }
  MathValue isub(MathValue a, MathValue c) override { return put(b_.CreateSub(get(a), get(c))); }
  MathValue imul(MathValue a, MathValue c) override { return put(b_.CreateMul(get(a), get(c))); }
  MathValue idiv(MathValue a, MathValue c) override { return put(b_.CreateSDiv(get(a), get(c))); }
  MathValue iand(MathValue a, MathValue c) override { return put(b_.CreateAnd(get(a), get(c))); }
  MathValue shr(MathValue a, int n) override { return put(b_.CreateAShr(get(a), uint64_t(n))); }
  MathValue shl(MathValue a, int n) override { return put(b_.CreateShl(get(a), uint64_t(n))); }
  MathValue ieq(MathValue a, MathValue c) override { return put(b_.CreateICmpEQ(get(a), get(c))); }
  MathValue ine(MathValue a, MathValue c) override { return put(b_.CreateICmpNE(get(a), get(c))); }
  MathValue toInt(MathValue a) override { return put(b_.CreateFPToSI(get(a), it())); }
  MathValue toFloat(MathValue a) override { return put(b_.CreateSIToFP(get(a), ft())); }
  MathValue bitsToFloat(MathValue i) override { return put(b_.CreateBitCast(get(i), ft())); }
  MathValue floatToBits(MathValue f) override { return put(b_.CreateBitCast(get(f), it())); }
  MathValue ilt(MathValue a, MathValue c) override { return put(b_.CreateICmpSLT(get(a), get(c))); }
  MathValue hi(MathValue x) override {
    return put(b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(get(x), b_.getInt64Ty()), 32), b_.getInt32Ty()));
  }
  MathValue lo(MathValue x) override {
    return put(b_.CreateTrunc(b_.CreateBitCast(get(x), b_.getInt64Ty()), b_.getInt32Ty()));
  }
  MathValue fromWords(MathValue l, MathValue h) override {
    llvm::Value* high = b_.CreateShl(b_.CreateZExt(get(h), b_.getInt64Ty()), 32);
    return put(b_.CreateBitCast(b_.CreateOr(high, b_.CreateZExt(get(l), b_.getInt64Ty())), ft()));
  }

 private:
  llvm::Type* lanesOf(llvm::Type* scalar) const {
    return lanes_ ? llvm::FixedVectorType::get(scalar, lanes_) : scalar;
  }
  llvm::Type* ft() const { return lanesOf(f64_ ? b_.getDoubleTy() : b_.getFloatTy()); }
  llvm::Type* it() const { return lanesOf(b_.getInt32Ty()); }
  MathValue unaryIntrinsic(llvm::Intrinsic::ID id, MathValue a) {
    return put(b_.CreateUnaryIntrinsic(id, get(a)));
  }
  llvm::IRBuilder<>& b_;
  bool f64_;
  unsigned lanes_;
  std::vector<llvm::Value*> values_;
};

// lower/math/float8 on LLVM values: the f32 of 8-bit float codes (i8, or a vector of them), and
// the codes of f32s.
inline llvm::Value* float8ToF32(llvm::IRBuilder<>& b, DType t, llvm::Value* code) {
  auto* vec = llvm::dyn_cast<llvm::FixedVectorType>(code->getType());
  LlvmMath e(b, false, vec ? vec->getNumElements() : 0);
  return e.get(float8ToF32(e, t, e.put(b.CreateZExt(code, code->getType()->getWithNewType(b.getInt32Ty())))));
}
inline llvm::Value* f32ToFloat8(llvm::IRBuilder<>& b, DType t, llvm::Value* f) {
  auto* vec = llvm::dyn_cast<llvm::FixedVectorType>(f->getType());
  LlvmMath e(b, false, vec ? vec->getNumElements() : 0);
  return b.CreateTrunc(e.get(f32ToFloat8(e, t, e.put(f))), f->getType()->getWithNewType(b.getInt8Ty()));
}
inline llvm::Value* unsaturatedFloat8(llvm::IRBuilder<>& b, DType t, llvm::Value* f, llvm::Value* saturated) {
  LlvmMath e(b, false, 0);
  MathValue code = unsaturatedFloat8(e, t, e.put(f), e.put(b.CreateZExt(saturated, b.getInt32Ty())));
  return b.CreateTrunc(e.get(code), b.getInt8Ty());
}

}  // namespace tj::math
