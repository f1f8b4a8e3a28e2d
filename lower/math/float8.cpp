#include "lower/math/float8.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace tj::math {

MathValue float8ToF32(MathEmitter& e, DType t, MathValue code) {
  const Float8Format f = float8Format(t);
  MathValue magnitude = e.iand(code, e.ci(0x7f));
  MathValue exponent = e.shr(magnitude, f.mantissaBits);
  MathValue mantissa = e.iand(magnitude, e.ci((1 << f.mantissaBits) - 1));
  // Normals: the fields moved into an f32's and the exponent rebiased; subnormals: mantissa
  // steps of 2^(1 - bias - mantissaBits), a normal f32 (no subnormal arithmetic).
  MathValue normal = e.bitsToFloat(e.iadd(e.shl(magnitude, 23 - f.mantissaBits), e.ci((127 - f.bias) << 23)));
  MathValue subnormal = e.mul(e.toFloat(mantissa), e.c(std::ldexp(1.0, 1 - f.bias - f.mantissaBits)));
  MathValue v = e.sel(e.ieq(exponent, e.ci(0)), subnormal, normal);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  if (t == DType::f8e4m3) {
    v = e.sel(e.ieq(magnitude, e.ci(int32_t(f.nan))), e.c(nan), v);
  } else {
    MathValue special = e.sel(e.ieq(mantissa, e.ci(0)), e.c(inf), e.c(nan));
    v = e.sel(e.ieq(exponent, e.ci(31)), special, v);
  }
  return e.sel(e.ine(e.iand(code, e.ci(0x80)), e.ci(0)), e.neg(v), v);
}

MathValue f32ToFloat8(MathEmitter& e, DType t, MathValue x) {
  const Float8Format f = float8Format(t);
  const int shift = 23 - f.mantissaBits;
  MathValue bits = e.floatToBits(x);
  MathValue sign = e.iand(e.shr(bits, 24), e.ci(0x80));
  MathValue absBits = e.iand(bits, e.ci(0x7fffffff));
  // Normals: the f32 mantissa rounded to nearest even at the 8-bit float's width (a carry
  // moves into the exponent), then the exponent rebiased. Infinity lands past the largest.
  MathValue roundBit = e.iand(e.shr(absBits, shift), e.ci(1));
  MathValue rounded = e.iadd(e.iadd(absBits, e.ci((1 << (shift - 1)) - 1)), roundBit);
  MathValue normal = e.isub(e.shr(rounded, shift), e.ci((127 - f.bias) << f.mantissaBits));
  // Below the smallest normal: subnormal steps, rounded to nearest even (2^mantissaBits steps
  // is the smallest normal's code). Clamped so the conversion to int stays defined.
  MathValue steps = e.min(e.mul(e.abs(x), e.c(std::ldexp(1.0, f.bias - 1 + f.mantissaBits))), e.c(256.0));
  MathValue subnormal = e.toInt(e.roundEven(steps));
  MathValue code = e.isel(e.ilt(absBits, e.ci((128 - f.bias) << 23)), subnormal, normal);
  code = e.isel(e.ilt(e.ci(int32_t(f.largestFinite)), code), e.ci(int32_t(f.overflow)), code);
  code = e.isel(e.isNan(x), e.ci(int32_t(f.nan)), code);
  return e.iadd(code, sign);
}

MathValue unsaturatedFloat8(MathEmitter& e, DType t, MathValue f, MathValue saturated) {
  const Float8Format fmt = float8Format(t);
  // The smallest magnitude that overflows: half an ulp past the largest finite value, where a tie
  // rounds to an odd largest's even successor, else the next f32.
  const float largest = f8ToFloat(t, uint8_t(fmt.largestFinite));
  const float tie = largest + std::ldexp(1.0f, std::ilogb(largest) - fmt.mantissaBits - 1);
  const auto overflowsFrom = std::bit_cast<int32_t>(tie) + ((fmt.largestFinite & 1) ? 0 : 1);
  MathValue sign = e.iand(e.shr(e.floatToBits(f), 24), e.ci(0x80));
  // An ordered compare of the magnitude: false for NaN, which overflows too.
  MathValue inRange = e.lt(e.abs(f), e.c(std::bit_cast<float>(overflowsFrom)));
  MathValue code = e.isel(inRange, saturated, e.iadd(e.ci(int32_t(fmt.overflow)), sign));
  if (fmt.nan == fmt.overflow) return code;  // f8e4m3: NaN is where the magnitudes overflow
  return e.isel(e.isNan(f), e.iadd(e.ci(int32_t(fmt.nan)), sign), code);
}

}  // namespace tj::math
