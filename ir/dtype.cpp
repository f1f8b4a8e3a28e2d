#include "ir/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tj {

namespace {
constexpr std::string_view kNames[] = {"f32", "f64", "f16", "bf16", "i8", "i32", "i64", "bool", "u8", "u16", "u32", "u64", "f8e4m3", "f8e5m2"};
}

std::string_view dtypeName(DType t) { return kNames[static_cast<int>(t)]; }

std::optional<DType> parseDType(std::string_view s) {
  for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i)
    if (kNames[i] == s) return static_cast<DType>(i);
  return std::nullopt;
}

int dtypeBytes(DType t) {
  switch (t) {
    case DType::f64: case DType::i64: case DType::u64: return 8;
    case DType::f32: case DType::i32: case DType::u32: return 4;
    case DType::f16: case DType::bf16: case DType::u16: return 2;
    case DType::i8: case DType::boolean: case DType::u8: case DType::f8e4m3: case DType::f8e5m2: return 1;
  }
  return 0;
}

bool isFloat(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::f16 || t == DType::bf16 || isFloat8(t);
}
bool isFloat8(DType t) { return t == DType::f8e4m3 || t == DType::f8e5m2; }
bool isUnsigned(DType t) { return t == DType::u8 || t == DType::u16 || t == DType::u32 || t == DType::u64; }
bool isInteger(DType t) { return t == DType::i8 || t == DType::i32 || t == DType::i64 || isUnsigned(t); }


uint16_t floatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)  // inf or nan (keep nan quiet)
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (absx < 0x38800000u) {  // half subnormal or zero: add 0.5 (as float) and truncate = RNE
    float r = std::bit_cast<float>(absx) + 0.5f;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(r) - 0x3f000000u));
  }
  uint32_t mantOdd = (absx >> 13) & 1u;
  absx += 0xc8000fffu + mantOdd;  // rebias exponent (-112 << 23) and round to nearest even
  return static_cast<uint16_t>(sign | (absx >> 13));
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t floatToBF16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float bf16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

Float8Format float8Format(DType t) {
  if (t == DType::f8e4m3) return {3, 7, 0x7e, 0x7f, 0x7f};
  return {2, 15, 0x7b, 0x7c, 0x7f};  // NaN: the code PyTorch writes, so tensors exchanged with it compare equal
}

uint8_t floatToF8(DType t, float f) {
  const Float8Format fmt = float8Format(t);
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 24) & 0x80u, absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return static_cast<uint8_t>(sign | fmt.nan);
  const int shift = 23 - fmt.mantissaBits;
  uint32_t code;
  if (absx < static_cast<uint32_t>(128 - fmt.bias) << 23) {
    // Below the smallest normal: a count of the subnormal step 2^(1 - bias - mantissaBits),
    // rounded to nearest even; a count of 2^mantissaBits is the smallest normal's code.
    float steps = std::bit_cast<float>(absx) * std::ldexp(1.0f, fmt.bias - 1 + fmt.mantissaBits);
    code = static_cast<uint32_t>(std::nearbyint(steps));
  } else {  // round the float's mantissa to nearest even, then rebias the exponent
    uint32_t rounded = absx + (1u << (shift - 1)) - 1 + ((absx >> shift) & 1u);
    code = (rounded >> shift) - (static_cast<uint32_t>(127 - fmt.bias) << fmt.mantissaBits);
  }
  if (code > fmt.largestFinite) code = fmt.overflow;
  return static_cast<uint8_t>(sign | code);
}

float f8ToFloat(DType t, uint8_t bits) {
  const Float8Format fmt = float8Format(t);
  uint32_t magnitude = bits & 0x7fu;
  uint32_t exponent = magnitude >> fmt.mantissaBits, mantissa = magnitude & ((1u << fmt.mantissaBits) - 1);
  float v;
  if (magnitude == fmt.nan || (t == DType::f8e5m2 && exponent == 31))
    v = t == DType::f8e5m2 && mantissa == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0)
    v = std::ldexp(static_cast<float>(mantissa), 1 - fmt.bias - fmt.mantissaBits);
  else
    v = std::bit_cast<float>(((exponent + 127 - fmt.bias) << 23) | (mantissa << (23 - fmt.mantissaBits)));
  return bits & 0x80u ? -v : v;
}

namespace {
// double -> float -> half would round twice; rounding the float to odd first keeps
// the sticky information so the final RNE to 16 bits is correct.
float roundToOddFloat(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) == v || !std::isfinite(v)) return f;
  uint32_t bits = std::bit_cast<uint32_t>(f);
  bool roundedAway = std::fabs(static_cast<double>(f)) > std::fabs(v);
  if ((bits & 1u) == 0) bits += roundedAway ? -1 : 1;
  return std::bit_cast<float>(bits);
}
}  // namespace

double roundToFloat(DType t, double v) {
  switch (t) {
    case DType::f32: return static_cast<float>(v);
    case DType::f16: return halfToFloat(floatToHalf(roundToOddFloat(v)));
    case DType::bf16: return bf16ToFloat(floatToBF16(roundToOddFloat(v)));
    case DType::f8e4m3: case DType::f8e5m2: return f8ToFloat(t, floatToF8(t, roundToOddFloat(v)));
    default: return v;
  }
}

int64_t wrapToInt(DType t, int64_t v) {
  switch (t) {
    case DType::i8: return static_cast<int8_t>(v);
    case DType::i32: return static_cast<int32_t>(v);
    case DType::u8: return static_cast<uint8_t>(v);
    case DType::u16: return static_cast<uint16_t>(v);
    case DType::u32: return static_cast<uint32_t>(v);
    case DType::boolean: return v != 0;
    default: return v;
  }
}

int64_t wrapNumberToInt(DType t, double v) {
  bool pastInt64 = v >= 0x1p63;  // a u64's top bit
  return wrapToInt(t, pastInt64 ? static_cast<int64_t>(static_cast<uint64_t>(v)) : static_cast<int64_t>(v));
}

namespace {
template <typename T>
int64_t loadAs(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<int64_t>(v);
}
}  // namespace

int64_t loadInt(const void* p, DType t) {
  switch (t) {
    case DType::i8: return loadAs<int8_t>(p);
    case DType::u8: return loadAs<uint8_t>(p);
    case DType::boolean: return loadAs<uint8_t>(p) != 0;
    case DType::u16: return loadAs<uint16_t>(p);
    case DType::i32: return loadAs<int32_t>(p);
    case DType::u32: return loadAs<uint32_t>(p);
    default: return loadAs<int64_t>(p);
  }
}

void storeInt(void* p, DType t, int64_t v) {
  if (t == DType::boolean) v = v != 0;
  // Little-endian: the low bytes of the int64 are the narrower integer's.
  std::memcpy(p, &v, static_cast<size_t>(dtypeBytes(t)));
}

double intToDouble(DType t, int64_t v) {
  return t == DType::u64 ? static_cast<double>(static_cast<uint64_t>(v)) : static_cast<double>(v);
}

bool intLess(DType t, int64_t a, int64_t b) {
  return t == DType::u64 ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
}

namespace {
bool shiftsOut(DType t, int64_t n) { return n < 0 || n >= dtypeBytes(t) * 8; }
}  // namespace

int64_t shiftLeft(DType t, int64_t a, int64_t n) {
  return shiftsOut(t, n) ? 0 : wrapToInt(t, static_cast<int64_t>(static_cast<uint64_t>(a) << n));
}
int64_t shiftRight(DType t, int64_t a, int64_t n) {
  if (isUnsigned(t)) return shiftRightLogical(t, a, n);
  return shiftsOut(t, n) ? (a < 0 ? -1 : 0) : a >> n;
}
int64_t shiftRightLogical(DType t, int64_t a, int64_t n) {
  if (shiftsOut(t, n)) return 0;
  int bits = dtypeBytes(t) * 8;
  uint64_t u = static_cast<uint64_t>(a) & (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
  return wrapToInt(t, static_cast<int64_t>(u >> n));
}

int64_t saturateToInt(DType t, double v) {
  if (t == DType::boolean) return v != 0;
  if (std::isnan(v)) return 0;
  int bits = dtypeBytes(t) * 8;
  if (isUnsigned(t)) {
    if (v <= 0) return 0;
    if (v >= std::ldexp(1.0, bits)) return wrapToInt(t, -1);  // all ones
    return bits == 64 ? static_cast<int64_t>(static_cast<uint64_t>(v)) : static_cast<int64_t>(v);
  }
  double edge = std::ldexp(1.0, bits - 1);
  if (v <= -edge) return std::numeric_limits<int64_t>::min() >> (64 - bits);
  if (v >= edge) return std::numeric_limits<int64_t>::max() >> (64 - bits);
  return static_cast<int64_t>(v);
}

double maxFinite(DType t) {
  switch (t) {
    case DType::f16: return 65504.0;
    case DType::bf16: return 0x1.fep127;
    case DType::f8e4m3: return 448.0;
    case DType::f8e5m2: return 57344.0;
    case DType::f32: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}

bool isValueOf(int64_t v, DType t) {
  if (isFloat(t)) return std::fabs(static_cast<double>(v)) <= maxFinite(t);
  if (t == DType::boolean) return v == 0 || v == 1;
  if (t == DType::u64) return true;  // an integer attribute holds a u64's bits
  return wrapToInt(t, v) == v;
}

bool isValueOf(double v, DType t) {
  if (t == DType::f8e4m3 && std::isinf(v)) return false;  // it has no infinities
  if (isFloat(t)) return !std::isfinite(v) || std::fabs(v) <= maxFinite(t);
  constexpr double kTwo63 = 0x1p63;
  if (t == DType::u64) return std::trunc(v) == v && v >= 0 && v < 2 * kTwo63;
  return std::trunc(v) == v && v >= -kTwo63 && v < kTwo63 && isValueOf(static_cast<int64_t>(v), t);
}

}  // namespace tj
