#include "lower/llvm_gpu/print_kernel_ir.hpp"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <bit>
#include <cctype>
#include <cmath>
#include <map>
#include <numbers>

#include "ir/error.hpp"
#include "lower/llvm_atomic.hpp"
#include "lower/llvm_dtype.hpp"
#include "lower/llvm_math.hpp"
#include "lower/math/accurate_math.hpp"

namespace tj::llvmgpu {

namespace {

using gpu::attr;
using gpu::intAttr;
using gpu::KAttrValue;
using gpu::number;
using gpu::strAttr;
using gpu::KBlock;
using gpu::KInst;
using gpu::KOp;
using gpu::Reg;
using llvm::Value;
using math::LlvmMath;

[[noreturn]] void unsupported(const std::string& what) { throw Unsupported("llvm gpu: unsupported: " + what); }


class Printer {
 public:
  Printer(const gpu::KernelFunction& f, const LlvmGpuTarget& t, llvm::LLVMContext& c)
      : f_(f), t_(t), c_(c), m_(std::make_unique<llvm::Module>(f.name, c)), b_(c), values_(f.regTypes.size()) {}

  std::unique_ptr<llvm::Module> print() {
    m_->setTargetTriple(t_.triple());
    m_->setDataLayout(t_.dataLayout());
    std::vector<llvm::Type*> params;
    for (const gpu::KParam& p : f_.params) params.push_back(paramType(p));
    fn_ = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                                 llvm::Function::ExternalLinkage, entryName(f_.name), m_.get());
    for (size_t p = 0; p < f_.params.size(); ++p)
      if (f_.params[p].kind == gpu::KParam::Kind::tensor_map) {
        fn_->addParamAttr(unsigned(p), llvm::Attribute::getWithByValType(c_, llvm::ArrayType::get(b_.getInt8Ty(), 128)));
        fn_->addParamAttr(unsigned(p), llvm::Attribute::getWithAlignment(c_, llvm::Align(64)));
      }
    t_.declareKernel(*m_, *fn_, f_.workgroupSize);
    b_.SetInsertPoint(llvm::BasicBlock::Create(c_, "entry", fn_));
    declareShared();
    block(f_.body);
    b_.CreateRetVoid();
    std::string problems;
    llvm::raw_string_ostream out(problems);
    if (llvm::verifyModule(*m_, &out)) throw InternalError("llvm gpu", "the printed module is invalid: " + problems);
    return std::move(m_);
  }

 private:
  // ---- types: registers (bf16 and the 8-bit floats held in an f32, bf16 rounded after each op) and memory ----
  llvm::Type* type(DType t) {
    switch (t) {
      case DType::f32: case DType::bf16: case DType::f8e4m3: case DType::f8e5m2: return b_.getFloatTy();
      case DType::f64: return b_.getDoubleTy();
      case DType::f16: return b_.getHalfTy();
      case DType::boolean: return b_.getInt1Ty();
      default: return b_.getIntNTy(unsigned(8 * dtypeBytes(t)));  // integers
    }
  }
  // Memory holds bool as one byte 0 or 1, bf16 as its 16 bits and the 8-bit floats as their codes.
  llvm::Type* memoryType(DType t) {
    if (t == DType::boolean || isFloat8(t)) return b_.getInt8Ty();
    if (t == DType::bf16) return b_.getInt16Ty();
    return type(t);
  }
  llvm::Type* paramType(const gpu::KParam& p) {
    if (p.kind == gpu::KParam::Kind::buffer) return b_.getPtrTy(t_.globalAddressSpace());
    if (p.kind == gpu::KParam::Kind::tensor_map) return b_.getPtrTy();
    if (p.kind != gpu::KParam::Kind::scalar || !isFloat(p.dtype)) return b_.getInt64Ty();
    return p.dtype == DType::f64 ? b_.getDoubleTy() : b_.getFloatTy();
  }
  DType paramDType(const gpu::KParam& p) {
    if (p.kind != gpu::KParam::Kind::scalar || !isFloat(p.dtype)) return DType::i64;
    return p.dtype == DType::f64 ? DType::f64 : DType::f32;
  }

  Value* constant(DType t, double v) {
    if (isFloat(t)) return llvm::ConstantFP::get(type(t), t == DType::f64 ? v : roundToFloat(t, v));
    return intConstant(t, saturateToInt(t, v));
  }
  Value* intConstant(DType t, int64_t v) {
    if (t == DType::boolean) return b_.getInt1(v != 0);
    return llvm::ConstantInt::get(type(t), uint64_t(t == DType::i64 ? v : wrapToInt(t, v)), true);
  }
  Value* constantOf(DType t, const KAttrValue& v) {
    if (!isFloat(t) && std::holds_alternative<int64_t>(v)) return intConstant(t, std::get<int64_t>(v));
    return constant(t, number(v));
  }

  DType dtypeOf(Reg r) const { return f_.regTypes.at(size_t(r)); }
  Value* val(Reg r) const { return values_.at(size_t(r)); }

  Value* toMemory(DType t, Value* v) {
    if (t == DType::boolean) return b_.CreateZExt(v, b_.getInt8Ty());
    if (t == DType::bf16) return b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, b_.getInt32Ty()), 16), b_.getInt16Ty());
    if (isFloat8(t)) {  // a value decoded from a code of t (read, or rounded here) stores that code
      auto code = float8Codes_.find({v, t});
      return code != float8Codes_.end() ? code->second : math::f32ToFloat8(b_, t, v);
    }
    return v;
  }
  Value* fromMemory(DType t, Value* v) {
    if (t == DType::boolean) return b_.CreateICmpNE(v, b_.getInt8(0));
    if (t == DType::bf16) return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
    if (isFloat8(t)) {
      Value* decoded = math::float8ToF32(b_, t, v);
      float8Codes_[{decoded, t}] = v;
      return decoded;
    }
    return v;
  }

  // ---- rounding and casts, each rounding once as the interpreter does ----

  // An f32 rounded to bf16, to nearest even, NaN kept quiet.
  Value* roundBF16(Value* f) {
    Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
    Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), 1);
    Value* rounded = b_.CreateAdd(bits, b_.CreateAdd(lsb, b_.getInt32(0x7fff)));
    Value* quiet = b_.CreateOr(bits, 0x400000);
    Value* chosen = b_.CreateSelect(b_.CreateFCmpUNO(f, f), quiet, rounded);
    return b_.CreateBitCast(b_.CreateAnd(chosen, 0xffff0000u), b_.getFloatTy());
  }
  // An f32 rounded to 8-bit float t, held in an f32.
  Value* roundFloat8(DType t, Value* f) { return fromMemory(t, toMemory(t, f)); }
  // f (of either sign) rounded to odd instead of to nearest, given whether it was inexact and
  // rounded away from zero: a later rounding to 16 bits is then the only one.
  Value* nudgeToOdd(Value* f, Value* inexact, Value* roundedAway) {
    Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
    Value* even = b_.CreateICmpEQ(b_.CreateAnd(bits, 1), b_.getInt32(0));
    Value* odd = b_.CreateSelect(roundedAway, b_.CreateSub(bits, b_.getInt32(1)), b_.CreateAdd(bits, b_.getInt32(1)));
    return b_.CreateBitCast(b_.CreateSelect(b_.CreateAnd(inexact, even), odd, bits), b_.getFloatTy());
  }
  // x converted to the float type T, rounding to nearest even. PTX's cvt gives a NaN its
  // canonical code, which is positive (an H200 made a -NaN f16 0x7fff); the interpreter keeps
  // the sign, as the CPU does. Rounding keeps every other value's sign, so x's sign bit is or-ed
  // into the result's bits: a no-op but for a negative NaN. (Integer ops on x's bits, not a
  // select of the negated result, which LLVM would turn into float abs and neg, themselves cvts
  // of f16 through f32 here.)
  Value* resized(Value* x, llvm::Type* T) {
    const unsigned from = x->getType()->getPrimitiveSizeInBits(), to = T->getPrimitiveSizeInBits();
    if (from == to) return x;
    Value* r = b_.CreateBitCast(to > from ? b_.CreateFPExt(x, T) : b_.CreateFPTrunc(x, T), b_.getIntNTy(to));
    Value* bits = b_.CreateBitCast(x, b_.getIntNTy(from));
    Value* sign = to > from ? b_.CreateShl(b_.CreateZExt(b_.CreateLShr(bits, from - 1), r->getType()), to - 1)
                            : b_.CreateShl(b_.CreateTrunc(b_.CreateLShr(bits, from - 1), r->getType()), to - 1);
    return b_.CreateBitCast(b_.CreateOr(r, sign), T);
  }
  Value* roundToOddF32(Value* d) {
    Value* f = resized(d, b_.getFloatTy());
    Value* back = b_.CreateFPExt(f, b_.getDoubleTy());
    Value* away = b_.CreateFCmpOGT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                   b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d));
    return nudgeToOdd(f, b_.CreateFCmpONE(back, d), away);
  }
  // Below 64 bits the f32 converts back exactly into an i64, so the signed value converts as
  // it is. (Converting its magnitude instead, ptxas 13.0 compiles the cvt.rn.f32.u32 of an
  // abs.s32 as I2FP.F32.S32, which makes -2^31 positive.)
  Value* intToOddF32(Value* x, bool isUnsignedInt) {
    if (x->getType()->getIntegerBitWidth() == 64) return int64ToOddF32(x, isUnsignedInt);
    llvm::Type* i64 = b_.getInt64Ty();
    Value* f = isUnsignedInt ? b_.CreateUIToFP(x, b_.getFloatTy()) : b_.CreateSIToFP(x, b_.getFloatTy());
    Value* wide = isUnsignedInt ? b_.CreateZExt(x, i64) : b_.CreateSExt(x, i64);
    Value* back = b_.CreateFPToSI(f, i64);
    Value* negative = b_.CreateICmpSLT(wide, b_.getInt64(0));
    Value* away = b_.CreateSelect(negative, b_.CreateICmpSLT(back, wide), b_.CreateICmpSGT(back, wide));
    return nudgeToOdd(f, b_.CreateICmpNE(back, wide), away);
  }
  Value* int64ToOddF32(Value* x, bool isUnsignedInt) {
    Value* negative = isUnsignedInt ? b_.getFalse() : b_.CreateICmpSLT(x, llvm::ConstantInt::get(x->getType(), 0));
    Value* magnitude = b_.CreateSelect(negative, b_.CreateNeg(x), x);
    Value* f = b_.CreateUIToFP(magnitude, b_.getFloatTy());
    // An unsigned magnitude near 2^bits rounds up to 2^bits, which converts back to nothing
    // (poison): that f is inexact and rounded away.
    unsigned bits = x->getType()->getIntegerBitWidth();
    Value* over = b_.CreateFCmpOGE(f, llvm::ConstantFP::get(b_.getFloatTy(), std::ldexp(1.0, int(bits))));
    Value* back = b_.CreateFPToUI(b_.CreateSelect(over, llvm::ConstantFP::get(b_.getFloatTy(), 0.0), f), x->getType());
    Value* odd = nudgeToOdd(f, b_.CreateOr(over, b_.CreateICmpNE(back, magnitude)),
                            b_.CreateOr(over, b_.CreateICmpUGT(back, magnitude)));
    return b_.CreateSelect(negative, b_.CreateFNeg(odd), odd);
  }

  Value* cast(Value* x, DType from, DType to) {
    if (from == to) return x;
    if (from == DType::boolean) return b_.CreateSelect(x, constant(to, 1), constant(to, 0));
    if (to == DType::boolean)
      return isFloat(from) ? b_.CreateFCmpUNE(x, constant(from, 0)) : b_.CreateICmpNE(x, constant(from, 0));
    if (isFloat(from) && isFloat(to)) return floatToFloat(x, from, to);
    if (isFloat(from)) {  // toward zero, saturating, NaN to 0
      if (from == DType::f16) x = b_.CreateFPExt(x, b_.getFloatTy());
      return b_.CreateIntrinsic(isUnsigned(to) ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat,
                                {type(to), x->getType()}, {x});
    }
    bool isU = isUnsigned(from);
    if (isFloat(to)) {
      if (isFloat8(to)) return roundFloat8(to, intToOddF32(x, isU));
      if (dtypeBytes(from) == 1 || to != DType::bf16)  // one rounding
        return isU ? b_.CreateUIToFP(x, type(to)) : b_.CreateSIToFP(x, type(to));
      return roundBF16(intToOddF32(x, isU));
    }
    return isU ? b_.CreateZExtOrTrunc(x, type(to)) : b_.CreateSExtOrTrunc(x, type(to));
  }
  Value* floatToFloat(Value* x, DType from, DType to) {
    if (isFloat8(from)) from = DType::f32;  // held exactly in an f32
    Value* r = nullptr;
    if (isFloat8(to) || to == DType::bf16) {  // from an f32 (f64 rounded to odd: one rounding in all)
      Value* f = from == DType::f64 ? roundToOddF32(x) : resized(x, b_.getFloatTy());
      r = isFloat8(to) ? roundFloat8(to, f) : roundBF16(f);
      if (isFloat8(to)) roundedFrom_[r] = f;
    } else {
      r = resized(x, type(to));
    }
    if (from == DType::f32 && (to == DType::f16 || to == DType::bf16)) roundedFrom_[r] = x;
    return r;
  }
  // Registers of the 16-bit float t that an operand packs two to a word: pairs both rounded
  // here from f32s are rounded again, together, where the target converts pairs at once (the
  // single roundings become dead).
  std::vector<Value*> withPairedRoundings(DType t, std::vector<Value*> regs) {
    if (t != DType::f16 && t != DType::bf16) return regs;
    for (size_t r = 0; r + 1 < regs.size(); r += 2) {
      auto lo = roundedFrom_.find(regs[r]), hi = roundedFrom_.find(regs[r + 1]);
      if (lo == roundedFrom_.end() || hi == roundedFrom_.end()) continue;
      std::vector<Value*> pair = t_.roundPair(b_, t, lo->second, hi->second);
      if (pair.size() == 2) regs[r] = pair[0], regs[r + 1] = pair[1];
    }
    return regs;
  }

  // The 8-bit float codes of registers of t, to store or multiply: pairs rounded here from f32s
  // take the target's paired conversion where it has one.
  std::vector<Value*> float8Codes(DType t, const std::vector<Value*>& values) {
    std::vector<Value*> codes;
    for (size_t r = 0; r < values.size(); ++r) {
      auto lo = roundedFrom_.find(values[r]);
      auto hi = r + 1 < values.size() ? roundedFrom_.find(values[r + 1]) : roundedFrom_.end();
      std::vector<Value*> pair;
      if (lo != roundedFrom_.end() && hi != roundedFrom_.end()) pair = t_.saturatedFloat8Pair(b_, t, lo->second, hi->second);
      if (pair.size() != 2) {
        codes.push_back(toMemory(t, values[r]));
        continue;
      }
      codes.push_back(math::unsaturatedFloat8(b_, t, lo->second, pair[0]));
      codes.push_back(math::unsaturatedFloat8(b_, t, hi->second, pair[1]));
      ++r;
    }
    return codes;
  }

  // ---- arithmetic ----

  Value* unary(const std::string& fn, DType t, Value* x, bool approx) {
    Value* r = approx && t != DType::f64 ? approxExp(fn, t, x) : nullptr;
    if (!r) r = unaryInRegister(fn, t, x);
    return t == DType::bf16 ? roundBF16(r) : r;
  }
  // The target's fast exp2 (exp: of x log2(e)), in f32 (bf16 registers are f32 values already);
  // null where it has none.
  Value* approxExp(const std::string& fn, DType t, Value* x) {
    if (fn != "exp" && fn != "exp2") return nullptr;
    Value* r = t_.approxExp2(b_, x, fn == "exp" ? std::numbers::log2e : 1.0);
    return r ? cast(r, DType::f32, t == DType::bf16 ? DType::f32 : t) : nullptr;
  }
  Value* binary(const std::string& fn, DType t, Value* a, Value* b) {
    Value* r = binaryInRegister(fn, t, a, b);
    return t == DType::bf16 ? roundBF16(r) : r;
  }

  Value* unaryInRegister(const std::string& fn, DType t, Value* x) {
    bool fl = isFloat(t);
    if (fn == "neg") return fl ? b_.CreateFNeg(x) : b_.CreateNeg(x);
    if ((fn == "abs" || fn == "relu") && isUnsigned(t)) return x;
    if (fn == "abs")
      return fl ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x)
                : b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
    if (fn == "not") return b_.CreateNot(x);  // bitwise on integers
    if (fn == "relu") return minMax(true, t, x, constant(t, 0));
    if (!fl) unsupported("unary " + fn + " on " + std::string(dtypeName(t)));
    if (fn == "floor") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
    if (fn == "ceil") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
    if (fn == "sqrt" && t == DType::f64) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);  // sqrt.rn
    return accurate(fn, t, x);
  }
  // lower/math's version, computed in its width; f16 in f32 and rounded again.
  Value* accurate(const std::string& fn, DType t, Value* x) {
    int bits = t == DType::f64 ? 64 : 32;
    int computeBits = math::computeBits(fn, bits);
    if (computeBits == 0) unsupported("unary " + fn + " on " + std::string(dtypeName(t)) + " (lower/math has no version)");
    DType arg = bits == 64 ? DType::f64 : DType::f32, in = computeBits == 64 ? DType::f64 : DType::f32;
    LlvmMath e(b_, computeBits == 64);
    Value* r = e.get(math::accurateUnary(e, fn, bits, e.put(cast(cast(x, t, arg), arg, in))));
    return cast(cast(r, in, arg), arg, t == DType::bf16 ? DType::f32 : t);  // bf16: unary() rounds
  }

  // The interpreter's max/min: NaN if either is; +0 above -0.
  Value* minMax(bool isMax, DType t, Value* a, Value* b) {
    if (isFloat(t)) return b_.CreateBinaryIntrinsic(isMax ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, a, b);
    if (t == DType::boolean) return isMax ? b_.CreateOr(a, b) : b_.CreateAnd(a, b);
    return b_.CreateBinaryIntrinsic(isMax ? intMax(t) : intMin(t), a, b);
  }

  // Truncating division; x / -1 is -x (wrapping) and x % -1 is 0; a zero divisor gives 0.
  Value* intDivision(bool isDiv, DType t, Value* a, Value* b) {
    Value* zero = b_.CreateICmpEQ(b, constant(t, 0));
    if (isUnsigned(t)) {
      Value* safe = b_.CreateSelect(zero, constant(t, 1), b);
      return b_.CreateSelect(zero, constant(t, 0), isDiv ? b_.CreateUDiv(a, safe) : b_.CreateURem(a, safe));
    }
    Value* minusOne = b_.CreateICmpEQ(b, constant(t, -1));
    Value* special = b_.CreateOr(zero, minusOne);
    Value* safe = b_.CreateSelect(special, constant(t, 1), b);
    Value* q = isDiv ? b_.CreateSDiv(a, safe) : b_.CreateSRem(a, safe);
    Value* specialValue = isDiv ? b_.CreateSelect(zero, constant(t, 0), b_.CreateNeg(a)) : constant(t, 0);
    return b_.CreateSelect(special, specialValue, q);
  }

  // A count outside [0, width) shifts every bit out: shl and shru give 0, shr the sign.
  Value* shift(const std::string& fn, DType t, Value* a, Value* count) {
    Value* outside = b_.CreateICmpUGE(count, constant(t, dtypeBytes(t) * 8));
    if (fn != "shr" || isUnsigned(t))
      return b_.CreateSelect(outside, constant(t, 0), fn == "shl" ? b_.CreateShl(a, count) : b_.CreateLShr(a, count));
    return b_.CreateAShr(a, b_.CreateSelect(outside, constant(t, dtypeBytes(t) * 8 - 1), count));
  }

  Value* binaryInRegister(const std::string& fn, DType t, Value* a, Value* b) {
    if (fn == "max" || fn == "min") return minMax(fn == "max", t, a, b);
    if (fn == "and") return b_.CreateAnd(a, b);
    if (fn == "or") return b_.CreateOr(a, b);
    if (fn == "xor") return b_.CreateXor(a, b);
    if (t == DType::boolean) unsupported("binary " + fn + " on bool");
    if (isFloat(t)) {
      if (fn == "add") return b_.CreateFAdd(a, b);
      if (fn == "sub") return b_.CreateFSub(a, b);
      if (fn == "mul") return b_.CreateFMul(a, b);
      if (fn == "div") return b_.CreateFDiv(a, b);
      if (fn == "rem") return floatRemainder(t, a, b);
      unsupported("binary " + fn + " on " + std::string(dtypeName(t)));
    }
    if (fn == "div" || fn == "rem") return intDivision(fn == "div", t, a, b);
    if (fn == "shl" || fn == "shr" || fn == "shru") return shift(fn, t, a, b);
    if (fn == "add") return b_.CreateAdd(a, b);
    if (fn == "sub") return b_.CreateSub(a, b);
    if (fn == "mul") return b_.CreateMul(a, b);
    unsupported("binary " + fn);
  }

  // ---- fmod ----

  // C's fmod, exactly (LLVM's frem lowers to x - y * trunc(x / y) on GPUs). f16 computes
  // in f32 (the result is exact); bf16 registers are f32 already.
  Value* floatRemainder(DType t, Value* a, Value* b) {
    DType c = t == DType::f64 ? DType::f64 : DType::f32;
    DType held = t == DType::bf16 ? DType::f32 : t;
    return cast(fmod(c, cast(a, held, c), cast(b, held, c)), c, held);
  }
  // |x| loses the largest |y|·2^k not above it, one exact subtraction per step (Sterbenz),
  // so the remainder halves each time: at most 2·bias + mantissa bits + 1 steps, a bound the
  // loop keeps. The result has x's sign, NaN where C's has.
  Value* fmod(DType t, Value* x, Value* y) {
    const bool f64 = t == DType::f64;
    const int mantissaBits = f64 ? 52 : 23, bias = f64 ? 1023 : 127;
    Value* ax = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    Value* ay = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y);
    Value* special = b_.CreateOr(b_.CreateOr(b_.CreateFCmpUNO(y, y), b_.CreateFCmpOEQ(ay, constant(t, 0))),
                                 b_.CreateNot(b_.CreateFCmpOLT(ax, constant(t, HUGE_VAL))));
    Value* divisor = b_.CreateSelect(special, constant(t, HUGE_VAL), ay);  // the loop then never runs
    llvm::BasicBlock* before = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(c_, "fmod", fn_);
    auto* step = llvm::BasicBlock::Create(c_, "fmod.step", fn_);
    auto* done = llvm::BasicBlock::Create(c_, "fmod.done", fn_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* r = b_.CreatePHI(type(t), 2);
    llvm::PHINode* steps = b_.CreatePHI(b_.getInt32Ty(), 2);
    r->addIncoming(ax, before);
    steps->addIncoming(b_.getInt32(0), before);
    Value* more = b_.CreateAnd(b_.CreateFCmpOGE(r, divisor), b_.CreateICmpSLT(steps, b_.getInt32(2 * bias + mantissaBits + 1)));
    b_.CreateCondBr(more, step, done);
    b_.SetInsertPoint(step);
    Value* next = fmodStep(t, r, divisor);
    r->addIncoming(next, b_.GetInsertBlock());
    steps->addIncoming(b_.CreateAdd(steps, b_.getInt32(1)), b_.GetInsertBlock());
    b_.CreateBr(header);
    b_.SetInsertPoint(done);
    llvm::Type* I = b_.getIntNTy(f64 ? 64 : 32);
    Value* sign = b_.CreateAnd(b_.CreateBitCast(x, I), llvm::ConstantInt::get(I, uint64_t{1} << (f64 ? 63 : 31)));
    Value* signed_ = b_.CreateBitCast(b_.CreateOr(b_.CreateBitCast(r, I), sign), type(t));
    return b_.CreateSelect(special, constant(t, NAN), signed_);
  }
  // r - ay·2^k for the largest k keeping it >= 0, given r >= ay > 0.
  Value* fmodStep(DType t, Value* r, Value* ay) {
    Value* k = b_.CreateSub(exponentOf(t, r), exponentOf(t, ay));
    Value* half = scaleByPowerOfTwo(t, ay, b_.CreateSub(k, b_.getInt32(1)));  // in (r / 4, r)
    Value* twice = b_.CreateFMul(half, constant(t, 2));                      // inf where it overflows
    Value* d = b_.CreateSelect(b_.CreateFCmpOLE(twice, r), twice, half);
    d = b_.CreateSelect(b_.CreateICmpEQ(k, b_.getInt32(0)), ay, d);
    return b_.CreateFSub(r, d);
  }
  // The biased exponent of v > 0 as an i32; for subnormals what it would be normalized.
  Value* exponentOf(DType t, Value* v) {
    const bool f64 = t == DType::f64;
    const int mantissaBits = f64 ? 52 : 23, bias = f64 ? 1023 : 127, guard = mantissaBits + 2;
    llvm::Type* I = b_.getIntNTy(f64 ? 64 : 32);
    auto field = [&](Value* x) {
      Value* bits = b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(x, I), uint64_t(mantissaBits)), b_.getInt32Ty());
      return b_.CreateAnd(bits, uint64_t(2 * bias + 1));
    };
    Value* normal = field(v);
    Value* scaled = b_.CreateSub(field(b_.CreateFMul(v, constant(t, std::ldexp(1.0, guard)))), b_.getInt32(guard));
    return b_.CreateSelect(b_.CreateICmpEQ(normal, b_.getInt32(0)), scaled, normal);
  }
  // v·2^e for 0 <= e < 3·bias, in three exact power-of-two factors each within range.
  Value* scaleByPowerOfTwo(DType t, Value* v, Value* e) {
    Value* third = b_.CreateSDiv(e, b_.getInt32(3));
    Value* rest = b_.CreateSub(e, b_.CreateMul(third, b_.getInt32(2)));
    Value* p = powerOfTwo(t, third);
    return b_.CreateFMul(b_.CreateFMul(b_.CreateFMul(v, p), p), powerOfTwo(t, rest));
  }
  Value* powerOfTwo(DType t, Value* e) {
    const bool f64 = t == DType::f64;
    llvm::Type* I = b_.getIntNTy(f64 ? 64 : 32);
    Value* biased = b_.CreateAdd(b_.CreateSExt(e, I), llvm::ConstantInt::get(I, f64 ? 1023 : 127));
    return b_.CreateBitCast(b_.CreateShl(biased, uint64_t(f64 ? 52 : 23)), type(t));
  }

  // `t` is the operands' dtype. Float `ne` is unordered: NaN != NaN, as on the host.
  Value* compare(const std::string& pred, DType t, Value* a, Value* b) {
    if (pred == "ult") {  // unsigned: 0 <= a < b for b >= 0
      if (isFloat(t) || t == DType::boolean) unsupported("cmp ult on " + std::string(dtypeName(t)));
      return b_.CreateICmpULT(a, b);
    }
    using P = llvm::CmpInst::Predicate;
    struct Preds { P f, i; };
    static const std::map<std::string, Preds> kPreds = {
        {"lt", {P::FCMP_OLT, P::ICMP_SLT}}, {"le", {P::FCMP_OLE, P::ICMP_SLE}}, {"gt", {P::FCMP_OGT, P::ICMP_SGT}},
        {"ge", {P::FCMP_OGE, P::ICMP_SGE}}, {"eq", {P::FCMP_OEQ, P::ICMP_EQ}},  {"ne", {P::FCMP_UNE, P::ICMP_NE}}};
    auto it = kPreds.find(pred);
    if (it == kPreds.end()) unsupported("cmp " + pred);
    if (t == DType::boolean && pred != "eq" && pred != "ne") unsupported("cmp " + pred + " on bool");
    return isFloat(t) ? b_.CreateFCmp(it->second.f, a, b) : b_.CreateICmp(intPredicate(it->second.i, t), a, b);
  }

  // ---- memory ----

  // if (pred) value = body(); merged with `otherwise` (null: no value).
  template <class Body>
  Value* predicated(Value* pred, Value* otherwise, Body body) {
    llvm::BasicBlock* before = b_.GetInsertBlock();
    auto* then = llvm::BasicBlock::Create(c_, "then", fn_);
    auto* merge = llvm::BasicBlock::Create(c_, "merge", fn_);
    b_.CreateCondBr(pred, then, merge);
    b_.SetInsertPoint(then);
    Value* value = body();
    llvm::BasicBlock* thenEnd = b_.GetInsertBlock();
    b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
    if (!otherwise) return nullptr;
    llvm::PHINode* phi = b_.CreatePHI(value->getType(), 2);
    phi->addIncoming(value, thenEnd);
    phi->addIncoming(otherwise, before);
    return phi;
  }

  int64_t bufferParam(const KInst& i) {
    int64_t p = intAttr(i, "buffer");
    if (p < 0 || size_t(p) >= f_.params.size() || f_.params[size_t(p)].kind != gpu::KParam::Kind::buffer)
      unsupported("buffer attribute naming no buffer parameter");
    return p;
  }
  Value* element(int64_t param, DType stored, Reg index) {
    Value* at = b_.CreateSExtOrTrunc(val(index), b_.getInt64Ty());
    return b_.CreateGEP(memoryType(stored), fn_->getArg(unsigned(param)), at);
  }
  // vec elements from `index` on as one access: a vector aligned to its size (the kernel
  // IR's vec promises it); one element as itself.
  llvm::Type* accessType(DType stored, int64_t vec) {
    return vec == 1 ? memoryType(stored) : llvm::FixedVectorType::get(memoryType(stored), unsigned(vec));
  }
  llvm::Align accessAlign(DType stored, int64_t vec) { return llvm::Align(uint64_t(vec * std::max<int64_t>(1, dtypeBytes(stored)))); }
  void loadGlobal(const KInst& i) {
    int64_t p = bufferParam(i), vec = intAttr(i, "vec");
    DType t = dtypeOf(i.results[0]), stored = f_.params[size_t(p)].dtype;
    Value* fill = toMemory(stored, cast(constantOf(t, attr(i, "fill")), t, stored));
    if (vec > 1) fill = b_.CreateVectorSplat(unsigned(vec), fill);
    Value* raw = predicated(val(i.operands[1]), fill, [&] {
      return b_.CreateAlignedLoad(accessType(stored, vec), element(p, stored, i.operands[0]), accessAlign(stored, vec));
    });
    for (int64_t e = 0; e < vec; ++e) {
      Value* x = vec == 1 ? raw : b_.CreateExtractElement(raw, uint64_t(e));
      values_[size_t(i.results.at(size_t(e)))] = cast(fromMemory(stored, x), stored, t);
    }
  }
  void storeGlobal(const KInst& i) {
    int64_t p = bufferParam(i);
    DType stored = f_.params[size_t(p)].dtype;
    std::vector<Reg> values(i.operands.begin() + 2, i.operands.end());
    predicated(val(i.operands[1]), nullptr, [&] {
      return b_.CreateAlignedStore(inMemory(stored, values), element(p, stored, i.operands[0]),
                                   accessAlign(stored, int64_t(values.size())));
    });
  }
  // Registers as the value one access stores: an element, or a vector of them.
  Value* inMemory(DType stored, const std::vector<Reg>& values) {
    std::vector<Value*> converted;
    for (Reg r : values) converted.push_back(cast(val(r), dtypeOf(r), stored));
    if (isFloat8(stored)) {
      converted = float8Codes(stored, converted);
    } else {
      for (Value*& v : converted) v = toMemory(stored, v);
    }
    if (values.size() == 1) return converted[0];
    Value* v = llvm::PoisonValue::get(accessType(stored, int64_t(values.size())));
    for (size_t e = 0; e < values.size(); ++e) v = b_.CreateInsertElement(v, converted[e], uint64_t(e));
    return v;
  }

  // LLVM's atomics at the agent (device) scope; each target lowers them (atom.global on NVPTX).
  void atomicGlobal(const KInst& i) {
    int64_t p = bufferParam(i);
    DType t = dtypeOf(i.results[0]);
    const std::string& fn = strAttr(i, "fn");
    Value* zero = constant(t, 0);
    values_[size_t(i.results[0])] = predicated(val(i.operands[1]), zero, [&]() -> Value* {
      Value* at = element(p, t, i.operands[0]);
      constexpr auto order = llvm::AtomicOrdering::AcquireRelease;
      llvm::SyncScope::ID scope = c_.getOrInsertSyncScopeID("agent");
      if (fn == "cas") {
        Value* pair = b_.CreateAtomicCmpXchg(at, val(i.operands[3]), val(i.operands[2]), llvm::MaybeAlign(), order,
                                             llvm::AtomicOrdering::Acquire, scope);
        return b_.CreateExtractValue(pair, 0);
      }
      if (isFloat(t) && dtypeBytes(t) == 2) {  // f16, bf16: compare-exchange of the 16 bits in memory
        Value* value = val(i.operands[2]);
        Value* old = atomicUpdateByCompareExchange(b_, at, memoryType(t), [&](Value* stored) {
          Value* x = fromMemory(t, stored);
          Value* next = fn == "xchg" ? value : fn == "add" ? binary("add", t, x, value) : minMax(fn == "max", t, x, value);
          return toMemory(t, next);
        }, scope);
        return fromMemory(t, old);
      }
      if (isFloat(t) && (fn == "max" || fn == "min")) {
        Value* value = val(i.operands[2]);
        return atomicUpdateByCompareExchange(
            b_, at, value->getType(), [&](Value* old) { return minMax(fn == "max", t, old, value); }, scope);
      }
      using Rmw = llvm::AtomicRMWInst;
      static const std::map<std::string, Rmw::BinOp> kOps = {
          {"add", Rmw::Add}, {"max", Rmw::Max}, {"min", Rmw::Min}, {"xchg", Rmw::Xchg}};
      auto it = kOps.find(fn);
      if (it == kOps.end()) unsupported("atomic " + fn);
      Rmw::BinOp op = fn == "add" && isFloat(t) ? Rmw::FAdd : it->second;
      if (isUnsigned(t) && (op == Rmw::Max || op == Rmw::Min)) op = op == Rmw::Max ? Rmw::UMax : Rmw::UMin;
      return b_.CreateAtomicRMW(op, at, val(i.operands[2]), llvm::MaybeAlign(), order, scope);
    });
  }

  void declareShared() {
    int64_t bytes = f_.sharedBytes();
    if (bytes == 0) return;
    bool dynamic = t_.dynamicShared(bytes);
    auto* array = llvm::ArrayType::get(b_.getInt8Ty(), dynamic ? 0 : uint64_t(bytes));
    auto* g = new llvm::GlobalVariable(*m_, array, false,
                                       dynamic ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage,
                                       dynamic ? nullptr : llvm::UndefValue::get(array), "shared", nullptr,
                                       llvm::GlobalValue::NotThreadLocal, t_.sharedAddressSpace());
    g->setAlignment(llvm::Align(uint64_t(std::max<int64_t>(f_.sharedAlignment, 16))));
    shared_ = g;
  }
  struct SharedElement {
    Value* pointer;
    DType dtype;
  };
  SharedElement sharedElement(const KInst& i, Reg indexReg) { return sharedElement(intAttr(i, "alloc"), indexReg); }
  SharedElement sharedElement(int64_t alloc, Reg indexReg) { return sharedElementAt(alloc, val(indexReg)); }
  SharedElement sharedElementAt(int64_t alloc, Value* elementIndex) {
    const gpu::SharedAlloc& a = f_.shared.at(size_t(alloc));
    Value* index = b_.CreateSExtOrTrunc(elementIndex, b_.getInt64Ty());
    Value* offset = b_.CreateAdd(b_.CreateMul(index, b_.getInt64(uint64_t(dtypeBytes(a.dtype)))), b_.getInt64(uint64_t(a.offset)));
    return {b_.CreateGEP(b_.getInt8Ty(), shared_, offset), a.dtype};
  }

  // ---- subgroups ----

  // Any register through 32-bit shuffles: narrower widened, 64-bit in two halves. (bf16 and
  // 8-bit floats are held in f32 registers.)
  template <class Shuffle32>
  Value* shuffled(Value* x, Shuffle32 shuffle32) {
    const unsigned bits = x->getType()->getPrimitiveSizeInBits();
    llvm::Type* I = b_.getIntNTy(bits);
    Value* asInt = x->getType()->isIntegerTy() ? x : b_.CreateBitCast(x, I);
    Value* out;
    if (bits == 64) {
      Value* low = shuffle32(b_.CreateTrunc(asInt, b_.getInt32Ty()));
      Value* high = shuffle32(b_.CreateTrunc(b_.CreateLShr(asInt, 32), b_.getInt32Ty()));
      out = b_.CreateOr(b_.CreateShl(b_.CreateZExt(high, I), 32), b_.CreateZExt(low, I));
    } else {
      out = b_.CreateTrunc(shuffle32(b_.CreateZExt(asInt, b_.getInt32Ty())), I);
    }
    return x->getType()->isIntegerTy() ? out : b_.CreateBitCast(out, x->getType());
  }
  Value* shuffleXor(Value* x, int64_t mask) {
    return shuffled(x, [&](Value* w) { return t_.shuffleXor(b_, w, mask, f_.subgroupSize); });
  }
  // Butterflies over clusters of lanes, rounding as every op does.
  Value* subgroupReduce(const KInst& i) {
    DType t = dtypeOf(i.operands[0]);
    const std::string& fn = strAttr(i, "fn");
    Value* x = val(i.operands[0]);
    for (int64_t mask = intAttr(i, "cluster") / 2; mask >= 1; mask /= 2) x = binary(fn, t, x, shuffleXor(x, mask));
    return x;
  }

  // Values' bits in one i32, as memory holds them (8-bit floats' codes paired where rounded together).
  Value* pack(const KInst& i) {
    DType t = dtypeOf(i.operands[0]);
    std::vector<Value*> values;
    for (Reg r : i.operands) values.push_back(val(r));
    if (isFloat8(t)) values = float8Codes(t, values);
    else for (Value*& v : values) v = toMemory(t, v);
    return word(values, unsigned(8 * dtypeBytes(t)));
  }
  // Pieces of `bits` bits each (memory's representation) in one i32, the first lowest.
  Value* word(const std::vector<Value*>& pieces, unsigned bits) {
    Value* w = b_.getInt32(0);
    for (unsigned e = 0; e < unsigned(pieces.size()); ++e) {
      Value* piece = b_.CreateZExt(b_.CreateBitOrPointerCast(pieces[e], b_.getIntNTy(bits)), b_.getInt32Ty());
      w = b_.CreateOr(w, b_.CreateShl(piece, e * bits));
    }
    return w;
  }
  void unpack(const KInst& i) {
    DType t = dtypeOf(i.results[0]);
    auto bits = unsigned(8 * dtypeBytes(t));
    Value* word = val(i.operands[0]);
    for (unsigned e = 0; e < unsigned(i.results.size()); ++e) {
      Value* piece = b_.CreateTrunc(b_.CreateLShr(word, e * bits), b_.getIntNTy(bits));
      values_[size_t(i.results[e])] = fromMemory(t, b_.CreateBitOrPointerCast(piece, memoryType(t)));
    }
  }

  void mma(const KInst& i) {
    int64_t m = intAttr(i, "m"), n = intAttr(i, "n"), k = intAttr(i, "k");
    size_t lanes = size_t(f_.subgroupSize), aCount = size_t(m * k) / lanes, bCount = size_t(k * n) / lanes;
    // Lanes that repeat a and b (RDNA 3's WMMA: lanes 16-31 as 0-15) hold more of them.
    size_t repeat = (i.operands.size() - i.results.size()) / (aCount + bCount);
    aCount *= repeat;
    bCount *= repeat;
    auto regs = [&](size_t from, size_t count) {
      std::vector<Value*> out;
      for (size_t r = from; r < from + count; ++r) out.push_back(val(i.operands.at(r)));
      return out;
    };
    DType a = operandType(i, "a"), b = operandType(i, "b");
    // 8-bit float operands go as their codes.
    auto operands = [&](DType t, size_t from, size_t count) {
      std::vector<Value*> out = regs(from, count);
      return isFloat8(t) ? float8Codes(t, out) : withPairedRoundings(t, out);
    };
    std::vector<Value*> d = t_.mma(b_, strAttr(i, "instr"), a, b, operands(a, 0, aCount), operands(b, aCount, bCount),
                                   regs(aCount + bCount, i.operands.size() - aCount - bCount));
    for (size_t r = 0; r < i.results.size(); ++r) values_[size_t(i.results[r])] = d.at(r);
  }

  void loadShared(const KInst& i) {
    SharedElement e = sharedElement(i, i.operands[0]);
    auto vec = int64_t(i.results.size());
    Value* raw = b_.CreateAlignedLoad(accessType(e.dtype, vec), e.pointer, accessAlign(e.dtype, vec));
    for (int64_t r = 0; r < vec; ++r) {
      Value* x = vec == 1 ? raw : b_.CreateExtractElement(raw, uint64_t(r));
      values_[size_t(i.results[size_t(r)])] = cast(fromMemory(e.dtype, x), e.dtype, dtypeOf(i.results[size_t(r)]));
    }
  }
  void storeShared(const KInst& i) {
    SharedElement e = sharedElement(i, i.operands[0]);
    std::vector<Reg> values(i.operands.begin() + 1, i.operands.end());
    b_.CreateAlignedStore(inMemory(e.dtype, values), e.pointer, accessAlign(e.dtype, int64_t(values.size())));
  }

  void atomicShared(const KInst& i) {
    SharedElement e = sharedElement(i, i.operands[0]);
    b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, e.pointer, cast(val(i.operands[1]), dtypeOf(i.operands[1]), DType::i32),
                       llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
  }

  // Where pred is false nothing is read (0 source bytes) from the buffer's start, a valid address.
  void asyncCopy(const KInst& i) {
    int64_t p = bufferParam(i), bytes = intAttr(i, "bytes");
    Value* pred = cast(val(i.operands[1]), dtypeOf(i.operands[1]), DType::boolean);
    Value* from = b_.CreateSelect(pred, element(p, f_.params[size_t(p)].dtype, i.operands[0]), fn_->getArg(unsigned(p)));
    SharedElement to = sharedElement(i, i.operands[2]);
    t_.asyncCopy(b_, to.pointer, from, bytes, b_.CreateSelect(pred, b_.getInt32(uint32_t(bytes)), b_.getInt32(0)));
  }

  // ---- transaction barriers and TMA ----
  Value* sharedAddress(int64_t alloc, Reg index) { return b_.CreatePtrToInt(sharedElement(alloc, index).pointer, b_.getInt32Ty()); }
  Value* predicate(Reg r) { return cast(val(r), dtypeOf(r), DType::boolean); }
  void mbarrier(const KInst& i) {
    Value* barrier = sharedAddress(intAttr(i, "alloc"), i.operands[0]);
    bool wait = i.op == KOp::mbarrier_wait;
    if (wait && i.operands.size() == 2) return t_.mbarrierWait(b_, barrier, cast(val(i.operands[1]), dtypeOf(i.operands[1]), DType::i32));
    predicated(predicate(i.operands[wait ? 2 : 1]), nullptr, [&]() -> Value* {
      if (wait) t_.mbarrierWait(b_, barrier, cast(val(i.operands[1]), dtypeOf(i.operands[1]), DType::i32));
      else if (i.op == KOp::mbarrier_init) t_.mbarrierInit(b_, barrier, intAttr(i, "count"));
      else if (i.op == KOp::mbarrier_expect) t_.mbarrierExpect(b_, barrier, intAttr(i, "bytes"));
      else if (i.op == KOp::mbarrier_arrive) t_.mbarrierArrive(b_, barrier);
      else t_.mbarrierInval(b_, barrier);
      return nullptr;
    });
  }
  // tma_load (pred, slot, barrier, coords...) and tma_store (pred, slot, coords...).
  void tma(const KInst& i) {
    int64_t map = intAttr(i, "map");
    if (map < 0 || size_t(map) >= f_.params.size() || f_.params[size_t(map)].kind != gpu::KParam::Kind::tensor_map)
      unsupported(std::string(gpu::kopName(i.op)) + " of a parameter that is no tensor map");
    bool load = i.op == KOp::tma_load;
    predicated(predicate(i.operands[0]), nullptr, [&]() -> Value* {
      std::vector<Value*> coords;
      for (size_t d = load ? 3 : 2; d < i.operands.size(); ++d) coords.push_back(cast(val(i.operands[d]), dtypeOf(i.operands[d]), DType::i32));
      Value* shared = sharedAddress(intAttr(i, "alloc"), i.operands[1]);
      if (load) t_.tmaLoad(b_, shared, fn_->getArg(unsigned(map)), sharedAddress(intAttr(i, "barrier"), i.operands[2]), coords);
      else t_.tmaStore(b_, shared, fn_->getArg(unsigned(map)), coords);
      return nullptr;
    });
  }

  void ldmatrix(const KInst& i) {
    SharedElement e = sharedElement(i, i.operands[0]);
    std::vector<Value*> words = t_.loadMatrix(b_, e.pointer, intAttr(i, "num"), intAttr(i, "trans") != 0);
    unsigned width = unsigned(dtypeBytes(e.dtype)), perWord = 4 / width;
    for (size_t j = 0; j < words.size(); ++j)
      for (unsigned part = 0; part < perWord; ++part) {
        Value* bits = b_.CreateTrunc(b_.CreateLShr(words[j], 8 * width * part), b_.getIntNTy(8 * width));
        Value* element = e.dtype == DType::f16 ? b_.CreateBitCast(bits, memoryType(e.dtype)) : bits;
        values_[size_t(i.results.at(perWord * j + part))] = fromMemory(e.dtype, element);
      }
  }

  // ---- control ----

  // A loop: its header, with a phi per loop value started by `inits`, where the test goes; its
  // body; and its exit.
  struct Loop {
    llvm::BasicBlock *header, *body, *exit;
    std::vector<llvm::PHINode*> phis;
  };
  Loop openLoop(const std::vector<Value*>& inits) {
    llvm::BasicBlock* before = b_.GetInsertBlock();
    Loop l{llvm::BasicBlock::Create(c_, "loop", fn_), llvm::BasicBlock::Create(c_, "body", fn_),
           llvm::BasicBlock::Create(c_, "exit", fn_), {}};
    b_.CreateBr(l.header);
    b_.SetInsertPoint(l.header);
    for (Value* init : inits) {
      l.phis.push_back(b_.CreatePHI(init->getType(), 2));
      l.phis.back()->addIncoming(init, before);
    }
    return l;
  }
  // The body's end feeds `next` back to the header; code goes on after the exit.
  void closeLoop(const Loop& l, const std::vector<Value*>& next) {
    for (size_t v = 0; v < next.size(); ++v) l.phis[v]->addIncoming(next[v], b_.GetInsertBlock());
    b_.CreateBr(l.header);
    b_.SetInsertPoint(l.exit);
  }
  // The region's arguments are the loop's values.
  void bindArgs(const KBlock& region, const Loop& l) {
    for (size_t a = 0; a < region.args.size(); ++a) values_[size_t(region.args[a])] = l.phis.at(a);
  }

  void loop(const KInst& i) {
    const KBlock& body = i.regions.at(0);
    std::vector<Value*> inits = {val(i.operands[0])};
    for (size_t a = 2; a < i.operands.size(); ++a) inits.push_back(val(i.operands[a]));
    Loop l = openLoop(inits);
    bindArgs(body, l);
    b_.CreateCondBr(b_.CreateICmpSLT(l.phis[0], val(i.operands[1])), l.body, l.exit);
    b_.SetInsertPoint(l.body);
    std::vector<Value*> next = {b_.CreateAdd(l.phis[0], llvm::ConstantInt::get(l.phis[0]->getType(), 1))};
    for (Reg y : block(body)) next.push_back(val(y));
    closeLoop(l, next);
    for (size_t r = 0; r < i.results.size(); ++r) values_[size_t(i.results[r])] = l.phis.at(r + 1);
  }

  // Each side in a block of its own, both going on at the join.
  void branch(const KInst& i) {
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    llvm::LLVMContext& c = fn->getContext();
    auto* then = llvm::BasicBlock::Create(c, "then", fn);
    auto* otherwise = llvm::BasicBlock::Create(c, "else", fn);
    auto* join = llvm::BasicBlock::Create(c, "join", fn);
    b_.CreateCondBr(val(i.operands.at(0)), then, otherwise);
    for (auto [side, region] : {std::pair{then, &i.regions.at(0)}, std::pair{otherwise, &i.regions.at(1)}}) {
      b_.SetInsertPoint(side);
      block(*region);
      b_.CreateBr(join);
    }
    b_.SetInsertPoint(join);
  }

  // while (cond(carried)) carried = body(carried): the cond region runs from the loop's header.
  void whileInst(const KInst& i) {
    const KBlock &cond = i.regions.at(0), &body = i.regions.at(1);
    std::vector<Value*> inits;
    for (Reg init : i.operands) inits.push_back(val(init));
    Loop l = openLoop(inits);
    bindArgs(cond, l);
    b_.CreateCondBr(val(block(cond).at(0)), l.body, l.exit);
    b_.SetInsertPoint(l.body);
    bindArgs(body, l);
    std::vector<Value*> next;
    for (Reg y : block(body)) next.push_back(val(y));
    closeLoop(l, next);
    for (size_t r = 0; r < i.results.size(); ++r) values_[size_t(i.results[r])] = l.phis.at(r);
  }

  std::vector<Reg> block(const KBlock& blk) {
    for (size_t at = 0; at < blk.insts.size(); ++at) {
      const KInst& i = blk.insts[at];
      if (i.op == KOp::yield) return i.operands;
      if (i.op == KOp::wgmma_fence) warpgroupFence(blk, at);
      else inst(i);
    }
    return {};
  }

  DType operandType(const KInst& i, const char* name) {
    std::optional<DType> t = parseDType(strAttr(i, name));
    if (!t) unsupported(std::string(gpu::kopName(i.op)) + " of " + strAttr(i, name));
    return *t;
  }
  void wgmma(const KInst& i) {
    auto operand = [&](Reg start, const char* side) {
      std::string s(side);
      const int64_t alloc = intAttr(i, "alloc" + s);
      auto [base, offset] = baseAndOffset(start, f_.shared.at(size_t(alloc)).dtype);
      Value* address = b_.CreatePtrToInt(sharedElementAt(alloc, base).pointer, b_.getInt32Ty());
      return LlvmGpuTarget::WarpgroupOperand{address, offset, intAttr(i, "swizzle" + s), intAttr(i, "leading" + s),
                                             intAttr(i, "stride" + s), intAttr(i, "trans" + s) != 0};
    };
    bool aShared = gpu::hasAttr(i, "allocA");
    size_t aCount = aShared ? 1 : fragmentARegisters(i);
    std::vector<Value*> c;
    std::optional<LlvmGpuTarget::WarpgroupOperand> a;
    if (aShared) a = operand(i.operands[0], "A");
    else packFragmentA(i);
    for (size_t r = aCount + 1; r < i.operands.size(); ++r) c.push_back(val(i.operands[r]));
    std::vector<Value*> d = t_.warpgroupMma(b_, intAttr(i, "n"), operandType(i, "a"), operandType(i, "b"),
                                            a ? &*a : nullptr, aShared ? std::vector<Value*>{} : packedA_.at(&i),
                                            operand(i.operands.at(aCount), "B"), c);
    packedA_.erase(&i);
    for (size_t r = 0; r < d.size(); ++r) values_[size_t(i.results.at(r))] = d[r];
  }
  // A wgmma operand's start element as a base and a byte offset, a multiple of 16, where it is a
  // register plus a constant (a k-step or a row block into a stage); else itself and 0.
  std::pair<Value*, int64_t> baseAndOffset(Reg start, DType t) {
    Value* index = val(start);
    auto* add = llvm::dyn_cast<llvm::BinaryOperator>(index);
    if (!add || add->getOpcode() != llvm::Instruction::Add) return {index, 0};
    for (unsigned c : {0u, 1u})
      if (auto* constant = llvm::dyn_cast<llvm::ConstantInt>(add->getOperand(c))) {
        int64_t bytes = constant->getSExtValue() * dtypeBytes(t);
        if (bytes >= 0 && bytes % 16 == 0) return {add->getOperand(1 - c), bytes};
      }
    return {index, 0};
  }
  // A register a fragment packed into words before the wgmma_fence that precedes its group: a
  // register written after the fence would make ptxas wait for every wgmma before the next.
  void packFragmentA(const KInst& i) {
    if (gpu::hasAttr(i, "allocA") || packedA_.count(&i)) return;
    std::vector<Value*> registers;
    for (size_t r = 0; r < fragmentARegisters(i); ++r) registers.push_back(val(i.operands.at(r)));
    DType a = operandType(i, "a");
    if (!isFloat8(a)) {
      packedA_[&i] = t_.warpgroupFragmentA(b_, a, withPairedRoundings(a, registers));
      return;
    }
    std::vector<Value*> codes = float8Codes(a, registers), words;  // four a word, as pack puts them
    for (size_t r = 0; r < codes.size(); r += 4) words.push_back(word({codes.begin() + r, codes.begin() + r + 4}, 8));
    packedA_[&i] = words;
  }
  // A thread's elements of a register a: four words of 16-bit pairs (k16) or 8-bit quads (k32).
  size_t fragmentARegisters(const KInst& i) { return size_t(4 * 4 / dtypeBytes(operandType(i, "a"))); }
  void warpgroupFence(const KBlock& blk, size_t at) {
    for (size_t j = at + 1; j < blk.insts.size() && blk.insts[j].op != KOp::wgmma_commit; ++j)
      if (blk.insts[j].op == KOp::wgmma) packFragmentA(blk.insts[j]);
    t_.warpgroupFence(b_);
  }
  void wgmmaWait(const KInst& i) {
    std::vector<Value*> values;
    for (Reg r : i.operands) values.push_back(val(r));
    std::vector<Value*> d = t_.warpgroupWait(b_, intAttr(i, "pending"), values);
    for (size_t r = 0; r < d.size(); ++r) values_[size_t(i.results.at(r))] = d[r];
  }

  void inst(const KInst& i) {
    switch (i.op) {
      case KOp::wgmma: return wgmma(i);
      case KOp::wgmma_commit: return t_.warpgroupCommit(b_);
      case KOp::wgmma_wait: return wgmmaWait(i);
      case KOp::fence_async_shared: return t_.fenceAsyncShared(b_);
      case KOp::mbarrier_init: case KOp::mbarrier_expect: case KOp::mbarrier_wait: case KOp::mbarrier_inval:
      case KOp::mbarrier_arrive: return mbarrier(i);
      case KOp::tma_load: case KOp::tma_store: return tma(i);
      case KOp::tma_store_wait:
        predicated(predicate(i.operands[0]), nullptr, [&]() -> Value* { t_.tmaStoreWait(b_, intAttr(i, "pending")); return nullptr; });
        return;
      case KOp::store_global: return storeGlobal(i);
      case KOp::atomic_global: return atomicGlobal(i);
      case KOp::load_global: return loadGlobal(i);
      case KOp::load_shared: return loadShared(i);
      case KOp::store_shared: return storeShared(i);
      case KOp::atomic_shared: return atomicShared(i);
      case KOp::barrier:
        if (gpu::hasAttr(i, "id"))
          return t_.namedBarrier(b_, intAttr(i, "id"), intAttr(i, "threads"), gpu::hasAttr(i, "arrive"));
        return t_.barrier(b_);
      case KOp::set_max_registers: return t_.setMaxRegisters(b_, intAttr(i, "count"), intAttr(i, "grow") != 0);
      case KOp::branch: return branch(i);
      case KOp::for_loop: return loop(i);
      case KOp::while_loop: return whileInst(i);
      case KOp::mma: return mma(i);
      case KOp::ldmatrix: return ldmatrix(i);
      case KOp::async_copy: return asyncCopy(i);
      case KOp::async_commit: return t_.asyncCommit(b_);
      case KOp::async_wait: return t_.asyncWait(b_, intAttr(i, "pending"));
      case KOp::unpack: return unpack(i);
      default: break;
    }
    if (i.results.size() != 1) unsupported(std::string(gpu::kopName(i.op)));
    values_[size_t(i.results[0])] = value(i, dtypeOf(i.results[0]));
  }

  Value* value(const KInst& i, DType t) {
    const std::vector<Reg>& o = i.operands;
    int laneBits = std::countr_zero(uint64_t(f_.subgroupSize));
    switch (i.op) {
      case KOp::thread_id: return t_.threadId(b_);
      case KOp::lane_id: return b_.CreateAnd(t_.threadId(b_), uint64_t(f_.subgroupSize - 1));
      case KOp::warp_id: return b_.CreateLShr(t_.threadId(b_), uint64_t(laneBits));
      case KOp::workgroup_id:
        return cast(b_.CreateZExt(t_.workgroupId(b_, int(intAttr(i, "axis"))), b_.getInt64Ty()), DType::i64, t);
      case KOp::workgroup_count:
        return cast(b_.CreateZExt(t_.workgroupCount(b_, int(intAttr(i, "axis"))), b_.getInt64Ty()), DType::i64, t);
      case KOp::param: {
        int64_t p = intAttr(i, "index");
        return cast(fn_->getArg(unsigned(p)), paramDType(f_.params.at(size_t(p))), t);
      }
      case KOp::constant: return constantOf(t, attr(i, "value"));
      case KOp::unary: return unary(strAttr(i, "fn"), t, val(o[0]), gpu::hasAttr(i, "approx"));
      case KOp::binary: return binary(strAttr(i, "fn"), t, val(o[0]), val(o[1]));
      case KOp::cmp: return compare(strAttr(i, "pred"), dtypeOf(o[0]), val(o[0]), val(o[1]));
      case KOp::select: return b_.CreateSelect(cast(val(o[0]), dtypeOf(o[0]), DType::boolean), val(o[1]), val(o[2]));
      case KOp::cast: return cast(val(o[0]), dtypeOf(o[0]), t);
      case KOp::shuffle_xor: return shuffleXor(val(o[0]), intAttr(i, "mask"));
      case KOp::shuffle_idx: {
        Value* lane = cast(val(o[1]), dtypeOf(o[1]), DType::i32);
        return shuffled(val(o[0]), [&](Value* w) { return t_.shuffleIdx(b_, w, lane, f_.subgroupSize); });
      }
      case KOp::subgroup_reduce: return subgroupReduce(i);
      case KOp::pack: return pack(i);
      case KOp::fma: return b_.CreateIntrinsic(llvm::Intrinsic::fma, {type(t)}, {val(o[0]), val(o[1]), val(o[2])});
      case KOp::byte_perm: return t_.bytePermute(b_, val(o[0]), val(o[1]), val(o[2]));
      default: unsupported(std::string(gpu::kopName(i.op)));
    }
  }

  const gpu::KernelFunction& f_;
  const LlvmGpuTarget& t_;
  llvm::LLVMContext& c_;
  std::unique_ptr<llvm::Module> m_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::GlobalVariable* shared_ = nullptr;
  std::vector<Value*> values_;  // by register
  std::map<const KInst*, std::vector<Value*>> packedA_;  // wgmmas' a fragments, packed at their fence
  // An 8-bit float of a dtype, read from memory or rounded: its code (i8) in that dtype (the same
  // f32 value is another code in the other 8-bit dtype).
  std::map<std::pair<Value*, DType>, Value*> float8Codes_;
  std::map<Value*, Value*> roundedFrom_;  // an f16, bf16 or 8-bit float rounded (once) from an f32: that f32
};

}  // namespace

std::vector<llvm::Value*> LlvmGpuTarget::loadMatrix(llvm::IRBuilderBase&, llvm::Value*, int64_t, bool) const {
  throw Unsupported("llvm gpu: unsupported: ldmatrix on " + triple());
}
void LlvmGpuTarget::asyncCopy(llvm::IRBuilderBase&, llvm::Value*, llvm::Value*, int64_t, llvm::Value*) const {
  throw Unsupported("llvm gpu: unsupported: async_copy on " + triple());
}
std::vector<llvm::Value*> LlvmGpuTarget::warpgroupMma(llvm::IRBuilderBase&, int64_t, DType, DType, const WarpgroupOperand*,
                                                      const std::vector<llvm::Value*>&, const WarpgroupOperand&,
                                                      const std::vector<llvm::Value*>&) const {
  throw Unsupported("llvm gpu: unsupported: wgmma on " + triple());
}
llvm::Value* LlvmGpuTarget::approxExp2(llvm::IRBuilderBase&, llvm::Value*, double) const { return nullptr; }
std::vector<llvm::Value*> LlvmGpuTarget::roundPair(llvm::IRBuilderBase&, DType, llvm::Value*, llvm::Value*) const { return {}; }
llvm::Value* LlvmGpuTarget::bytePermute(llvm::IRBuilderBase& b, llvm::Value* lo, llvm::Value* hi, llvm::Value* selector) const {
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Value* both = b.CreateOr(b.CreateZExt(lo, i64), b.CreateShl(b.CreateZExt(hi, i64), 32));
  llvm::Value* out = b.getInt32(0);
  for (unsigned j = 0; j < 4; ++j) {
    llvm::Value* from = b.CreateAnd(b.CreateLShr(selector, 4 * j), 7);
    llvm::Value* byte = b.CreateLShr(both, b.CreateZExt(b.CreateShl(from, 3), i64));
    out = b.CreateOr(out, b.CreateShl(b.CreateAnd(b.CreateTrunc(byte, b.getInt32Ty()), 0xff), 8 * j));
  }
  return out;
}

std::vector<llvm::Value*> LlvmGpuTarget::saturatedFloat8Pair(llvm::IRBuilderBase&, DType, llvm::Value*, llvm::Value*) const {
  return {};
}
std::vector<llvm::Value*> LlvmGpuTarget::warpgroupFragmentA(llvm::IRBuilderBase&, DType, const std::vector<llvm::Value*>&) const {
  throw Unsupported("llvm gpu: unsupported: wgmma on " + triple());
}
void LlvmGpuTarget::warpgroupFence(llvm::IRBuilderBase&) const {
  throw Unsupported("llvm gpu: unsupported: wgmma_fence on " + triple());
}
void LlvmGpuTarget::warpgroupCommit(llvm::IRBuilderBase&) const {
  throw Unsupported("llvm gpu: unsupported: wgmma_commit on " + triple());
}
std::vector<llvm::Value*> LlvmGpuTarget::warpgroupWait(llvm::IRBuilderBase&, int64_t, const std::vector<llvm::Value*>&) const {
  throw Unsupported("llvm gpu: unsupported: wgmma_wait on " + triple());
}
void LlvmGpuTarget::fenceAsyncShared(llvm::IRBuilderBase&) const {
  throw Unsupported("llvm gpu: unsupported: fence_async_shared on " + triple());
}
void LlvmGpuTarget::namedBarrier(llvm::IRBuilderBase&, int64_t, int64_t, bool) const {
  throw Unsupported("llvm gpu: unsupported: a named barrier on " + triple());
}
void LlvmGpuTarget::setMaxRegisters(llvm::IRBuilderBase&, int64_t, bool) const {
  throw Unsupported("llvm gpu: unsupported: set_max_registers on " + triple());
}
void LlvmGpuTarget::mbarrierInit(llvm::IRBuilderBase&, llvm::Value*, int64_t) const {
  throw Unsupported("llvm gpu: unsupported: mbarrier_init on " + triple());
}
void LlvmGpuTarget::mbarrierExpect(llvm::IRBuilderBase&, llvm::Value*, int64_t) const {
  throw Unsupported("llvm gpu: unsupported: mbarrier_expect on " + triple());
}
void LlvmGpuTarget::mbarrierArrive(llvm::IRBuilderBase&, llvm::Value*) const {
  throw Unsupported("llvm gpu: unsupported: mbarrier_arrive on " + triple());
}
void LlvmGpuTarget::mbarrierWait(llvm::IRBuilderBase&, llvm::Value*, llvm::Value*) const {
  throw Unsupported("llvm gpu: unsupported: mbarrier_wait on " + triple());
}
void LlvmGpuTarget::mbarrierInval(llvm::IRBuilderBase&, llvm::Value*) const {
  throw Unsupported("llvm gpu: unsupported: mbarrier_inval on " + triple());
}
void LlvmGpuTarget::tmaLoad(llvm::IRBuilderBase&, llvm::Value*, llvm::Value*, llvm::Value*, const std::vector<llvm::Value*>&) const {
  throw Unsupported("llvm gpu: unsupported: tma_load on " + triple());
}
void LlvmGpuTarget::tmaStore(llvm::IRBuilderBase&, llvm::Value*, llvm::Value*, const std::vector<llvm::Value*>&) const {
  throw Unsupported("llvm gpu: unsupported: tma_store on " + triple());
}
void LlvmGpuTarget::tmaStoreWait(llvm::IRBuilderBase&, int64_t) const {
  throw Unsupported("llvm gpu: unsupported: tma_store_wait on " + triple());
}
void LlvmGpuTarget::asyncCommit(llvm::IRBuilderBase&) const {
  throw Unsupported("llvm gpu: unsupported: async_commit on " + triple());
}
void LlvmGpuTarget::asyncWait(llvm::IRBuilderBase&, int64_t) const {
  throw Unsupported("llvm gpu: unsupported: async_wait on " + triple());
}

std::string entryName(const std::string& name) {
  std::string out = name.empty() || !std::isalpha(static_cast<unsigned char>(name[0])) ? "kernel_" : "";
  for (char ch : name) out += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '$' ? ch : '_';
  return out;
}

std::unique_ptr<llvm::Module> printLlvm(const gpu::KernelFunction& f, const LlvmGpuTarget& target,
                                        llvm::LLVMContext& context) {
  return Printer(f, target, context).print();
}

}  // namespace tj::llvmgpu
