// Accurate float math (exp, log, sin, tanh, erf, ...) as straight-line arithmetic, written
// once against an emitter interface that each GPU printer implements (SPIR-V, LLVM for
// NVPTX/AMDGPU): GPU builtins are loosely specified (Vulkan's sin only on [-pi, pi],
// drivers flush denormals, NVPTX has no libm), so kernels that must agree with the host
// within a few ulps use these. Bounds: within 1 ulp of the correctly rounded result for
// f32 (sqrt exact) over the whole range (denormals, ±0, ±inf, NaN, sin/cos of huge
// arguments); f64 within 1 ulp for exp, exp2, log, log2, sin, cos, erf, rsqrt and 2 for
// tanh, sigmoid (measured on lavapipe by tests/test_vulkan_math.cpp). They assume
// correctly rounded division and f64 sqrt, kept subnormals and float ops that are not
// contracted into fmas (fma() is not assumed fused either).
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tj::math {

// A value of the emitter's own numbering (a SPIR-V id, an index of LLVM values...).
using MathValue = uint32_t;

// Straight-line arithmetic in one float width (32 or 64 bits), int32 and bool, as the
// target emits it. Float ops must not be contracted or reassociated.
class MathEmitter {
 public:
  virtual ~MathEmitter() = default;
  virtual bool f64() const = 0;  // the float width: 64, else 32

  virtual MathValue c(double v) = 0;  // a float constant
  virtual MathValue add(MathValue a, MathValue b) = 0;
  virtual MathValue sub(MathValue a, MathValue b) = 0;
  virtual MathValue mul(MathValue a, MathValue b) = 0;
  virtual MathValue div(MathValue a, MathValue b) = 0;
  virtual MathValue neg(MathValue a) = 0;
  virtual MathValue fma(MathValue a, MathValue b, MathValue c) = 0;  // fused or not
  virtual MathValue abs(MathValue a) = 0;
  virtual MathValue floor(MathValue a) = 0;
  virtual MathValue roundEven(MathValue a) = 0;
  virtual MathValue sqrt(MathValue a) = 0;  // correctly rounded
  virtual MathValue min(MathValue a, MathValue b) = 0;  // either operand when one is NaN
  virtual MathValue max(MathValue a, MathValue b) = 0;
  virtual MathValue sel(MathValue cond, MathValue a, MathValue b) = 0;   // floats
  virtual MathValue isel(MathValue cond, MathValue a, MathValue b) = 0;  // int32s
  virtual MathValue lt(MathValue a, MathValue b) = 0;  // ordered
  virtual MathValue eq(MathValue a, MathValue b) = 0;  // ordered
  virtual MathValue isNan(MathValue a) = 0;
  virtual MathValue isInf(MathValue a) = 0;
  virtual MathValue either(MathValue p, MathValue q) = 0;  // bool or
  virtual MathValue differ(MathValue p, MathValue q) = 0;  // bool xor

  virtual MathValue ci(int32_t v) = 0;  // an int32 constant
  virtual MathValue iadd(MathValue a, MathValue b) = 0;
  virtual MathValue isub(MathValue a, MathValue b) = 0;
  virtual MathValue imul(MathValue a, MathValue b) = 0;
  virtual MathValue idiv(MathValue a, MathValue b) = 0;  // signed, truncating
  virtual MathValue iand(MathValue a, MathValue b) = 0;
  virtual MathValue shr(MathValue a, int n) = 0;  // arithmetic
  virtual MathValue shl(MathValue a, int n) = 0;
  virtual MathValue ieq(MathValue a, MathValue b) = 0;
  virtual MathValue ine(MathValue a, MathValue b) = 0;
  virtual MathValue toInt(MathValue a) = 0;    // float -> int32, truncating
  virtual MathValue toFloat(MathValue a) = 0;  // int32 -> float
  virtual MathValue bitsToFloat(MathValue i) = 0;  // f32 only: an int32's bits as a float
  virtual MathValue floatToBits(MathValue f) = 0;  // f32 only: a float's bits as an int32
  virtual MathValue ilt(MathValue a, MathValue b) = 0;  // signed int32 a < b
  // f64 only: a double's high and low 32-bit words, and back.
  virtual MathValue hi(MathValue x) = 0;
  virtual MathValue lo(MathValue x) = 0;
  virtual MathValue fromWords(MathValue lo, MathValue hi) = 0;
};

// Whether accurateUnary has a version of `fn` for `floatBits`, and in which width it
// computes: f32 exp, exp2, tanh and sigmoid compute in f32 (the hot paths of softmax,
// attention, SiLU and GELU); every other f32 function in f64 (so the device needs f64).
// 0: no version (the caller decides what to do instead).
int computeBits(std::string_view fn, int floatBits);

// `fn` (a tile-IR unary op name: exp, exp2, log, log2, sin, cos, tanh, sigmoid, erf, rsqrt,
// sqrt) of `x`, in the emitter's width, which must be computeBits(fn, floatBits): the
// caller converts an f32 argument to f64 and the result back where that is 64.
MathValue accurateUnary(MathEmitter& e, std::string_view fn, int floatBits, MathValue x);

}  // namespace tj::math
