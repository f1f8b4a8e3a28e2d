// The accurate math of lower/math/accurate_math.cpp as SPIR-V instruction sequences:
// GLSL.std.450's exp, log, sin, tanh... have loose precision in Vulkan (sin is only
// specified on [-pi, pi], drivers flush denormals) and no f64 versions. The bounds
// (accurate_math.hpp, measured on lavapipe by tests/test_vulkan_math.cpp) assume what
// lavapipe gives and Vulkan does not promise: correctly rounded FDiv and f64 sqrt, and kept
// subnormals (no DenormPreserve mode is requested). All but the f32 exp, exp2, tanh and
// sigmoid compute in f64, so they need shaderFloat64 (modules declaring Float64 on a device
// without it run on the CPU).
#pragma once
#include <string_view>

#include "lower/math/accurate_math.hpp"
#include "lower/spirv/spirv_builder.hpp"

namespace tj::spirv {

// math::MathEmitter emitting straight-line float (64 or 32 bits) and int32 arithmetic into
// one module. Float arithmetic is decorated NoContraction: without it Mesa applies inexact
// algebraic rewrites (it folded v - 4·floor(v/4) wrongly) that break the error-free steps
// of the math. fma() is GLSL's Fma, which Vulkan does not promise fused (lavapipe's is not).
class SpirvMath final : public math::MathEmitter {
 public:
  SpirvMath(Module& m, int bits);  // adds the Float64 capability when bits is 64
  Id type() const { return f_; }
  bool f64() const override { return bits_ == 64; }

  Id c(double v) override;
  Id add(Id a, Id b) override { return exact(m_.op(Op::FAdd, f_, {a, b})); }
  Id sub(Id a, Id b) override { return exact(m_.op(Op::FSub, f_, {a, b})); }
  Id mul(Id a, Id b) override { return exact(m_.op(Op::FMul, f_, {a, b})); }
  Id div(Id a, Id b) override { return exact(m_.op(Op::FDiv, f_, {a, b})); }
  Id neg(Id a) override { return m_.op(Op::FNegate, f_, {a}); }
  Id fma(Id a, Id b, Id c) override { return m_.ext(GlslOp::Fma, f_, {a, b, c}); }
  Id abs(Id a) override { return m_.ext(GlslOp::FAbs, f_, {a}); }
  Id floor(Id a) override { return m_.ext(GlslOp::Floor, f_, {a}); }
  Id roundEven(Id a) override { return m_.ext(GlslOp::RoundEven, f_, {a}); }
  Id sqrt(Id a) override { return m_.ext(GlslOp::Sqrt, f_, {a}); }
  Id min(Id a, Id b) override { return m_.ext(GlslOp::FMin, f_, {a, b}); }
  Id max(Id a, Id b) override { return m_.ext(GlslOp::FMax, f_, {a, b}); }
  Id sel(Id cond, Id a, Id b) override { return m_.select(f_, cond, a, b); }
  Id isel(Id cond, Id a, Id b) override { return m_.select(i_, cond, a, b); }
  Id lt(Id a, Id b) override { return m_.op(Op::FOrdLessThan, b_, {a, b}); }
  Id eq(Id a, Id b) override { return m_.op(Op::FOrdEqual, b_, {a, b}); }
  Id isNan(Id a) override { return m_.op(Op::IsNan, b_, {a}); }
  Id isInf(Id a) override { return m_.op(Op::IsInf, b_, {a}); }
  Id either(Id p, Id q) override { return m_.op(Op::LogicalOr, b_, {p, q}); }
  Id differ(Id p, Id q) override { return m_.op(Op::LogicalNotEqual, b_, {p, q}); }

  Id ci(int32_t v) override { return m_.constI32(v); }
  Id iadd(Id a, Id b) override { return m_.op(Op::IAdd, i_, {a, b}); }
  Id isub(Id a, Id b) override { return m_.op(Op::ISub, i_, {a, b}); }
  Id imul(Id a, Id b) override { return m_.op(Op::IMul, i_, {a, b}); }
  Id idiv(Id a, Id b) override { return m_.op(Op::SDiv, i_, {a, b}); }
  Id iand(Id a, Id b) override { return m_.op(Op::BitwiseAnd, i_, {a, b}); }
  Id shr(Id a, int n) override { return m_.op(Op::ShiftRightArithmetic, i_, {a, ci(n)}); }
  Id shl(Id a, int n) override { return m_.op(Op::ShiftLeftLogical, i_, {a, ci(n)}); }
  Id ieq(Id a, Id b) override { return m_.op(Op::IEqual, b_, {a, b}); }
  Id ine(Id a, Id b) override { return m_.op(Op::INotEqual, b_, {a, b}); }
  Id toInt(Id a) override { return m_.op(Op::ConvertFToS, i_, {a}); }
  Id toFloat(Id a) override { return m_.op(Op::ConvertSToF, f_, {a}); }
  Id bitsToFloat(Id i) override { return m_.op(Op::Bitcast, f_, {i}); }
  Id floatToBits(Id f) override { return m_.op(Op::Bitcast, i_, {f}); }
  Id ilt(Id a, Id b) override { return m_.op(Op::SLessThan, b_, {a, b}); }
  Id hi(Id x) override { return word(x, 1); }
  Id lo(Id x) override { return word(x, 0); }
  Id fromWords(Id lo, Id hi) override;

 private:
  Id exact(Id r);
  Id word(Id x, uint32_t index);

  Module& m_;
  int bits_;
  Id f_, i_, b_, words_;  // words_: a double as two int32s (f64 only)
};

// `fn` (a tile-IR unary op name: exp, exp2, log, log2, sin, cos, tanh, sigmoid, erf,
// rsqrt, sqrt) of `x`, a float of `floatBits` (32 or 64) bits; 0 when there is no version
// of fn at that width (math::computeBits; none for f64 sqrt: GLSL's is exact). An f32 x
// that math::computeBits computes in f64 is converted to f64 and the result back.
Id accurateUnary(Module& m, std::string_view fn, int floatBits, Id x);

}  // namespace tj::spirv
