// Float64 / int64 reference semantics for the conformance tests, written
// independently of the interpreter: every result is computed exactly (or in
// float64) and rounded once to the dtype.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "dsl/tilejit.hpp"

namespace tj::ref {

// One element: floats as float64 already rounded to their dtype; ints and bool exactly (a u64
// as its bits: past 2^63 a negative int64).
using Num = std::variant<int64_t, double>;

inline bool isNum(const Num& n) { return std::holds_alternative<double>(n); }
inline double asDouble(const Num& n) {
  return isNum(n) ? std::get<double>(n) : static_cast<double>(std::get<int64_t>(n));
}
inline int64_t asInt(const Num& n) { return std::get<int64_t>(n); }

inline double inf() { return std::numeric_limits<double>::infinity(); }
inline double nan() { return std::numeric_limits<double>::quiet_NaN(); }

inline std::pair<int64_t, int64_t> intRange(DType t) {
  switch (t) {
    case DType::i8: return {-128, 127};
    case DType::i32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case DType::boolean: return {0, 1};
    case DType::u8: return {0, 255};
    case DType::u16: return {0, 65535};
    case DType::u32: return {0, std::numeric_limits<uint32_t>::max()};
    case DType::u64: return {0, std::numeric_limits<int64_t>::max()};  // the largest u64 is -1 as bits
    default: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

// Two's-complement wrap into t (bool: nonzero is 1).
inline int64_t wrap(DType t, int64_t v) {
  switch (t) {
    case DType::i8: return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint64_t>(v)));
    case DType::i32: return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    case DType::u8: return static_cast<uint8_t>(static_cast<uint64_t>(v));
    case DType::u16: return static_cast<uint16_t>(static_cast<uint64_t>(v));
    case DType::u32: return static_cast<uint32_t>(static_cast<uint64_t>(v));
    case DType::boolean: return v != 0;
    default: return v;
  }
}

// Wrapping int64 arithmetic without undefined behavior.
inline int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
// Truncating division and remainder; b != 0. INT64_MIN / -1 wraps.
inline int64_t truncDiv(int64_t a, int64_t b) { return b == -1 ? wrapSub(0, a) : a / b; }
inline int64_t truncRem(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }

// a < b in t's order (unsigned for u8...u64).
inline bool intLess(DType t, int64_t a, int64_t b) {
  return isUnsigned(t) ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
}

// Float -> int: truncate toward zero, NaN -> 0, saturate to t's range.
inline int64_t floatToInt(DType t, double v) {
  if (t == DType::boolean) return v != 0;
  if (std::isnan(v)) return 0;
  double tv = std::trunc(v);
  if (t == DType::u64) return tv <= 0 ? 0 : tv >= 0x1p64 ? -1 : static_cast<int64_t>(static_cast<uint64_t>(tv));
  auto [lo, hi] = intRange(t);
  if (tv <= -0x1p63) return lo;
  if (tv >= 0x1p63) return hi;
  auto i = static_cast<int64_t>(tv);
  return i < lo ? lo : i > hi ? hi : i;
}

inline int precisionBits(DType t) {
  switch (t) {
    case DType::f64: return 53;
    case DType::f32: return 24;
    case DType::f16: return 11;
    case DType::bf16: return 8;
    case DType::f8e4m3: return 4;
    case DType::f8e5m2: return 3;
    default: return 64;
  }
}

// An integer of dtype `from` rounded exactly once to float dtype t (round to nearest, ties to
// even), by integer arithmetic on the magnitude.
inline double intToFloat(DType t, int64_t v, DType from = DType::i64) {
  bool negative = v < 0 && !isUnsigned(from);
  uint64_t mag = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int p = precisionBits(t);
  int shift = std::bit_width(mag) - p;
  if (shift > 0) {
    uint64_t q = mag >> shift, rest = mag & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (q & 1))) ++q;
    mag = q;
  } else {
    shift = 0;
  }
  double r = std::ldexp(static_cast<double>(mag), shift);  // exact: mag has at most p + 1 bits
  if (r > tj::maxFinite(t)) r = t == DType::f8e4m3 ? nan() : inf();  // e4m3 has no infinities
  return negative ? -r : r;
}

// The element of t at row-major position `flat` of its view, exactly (i64 and u64 included).
inline Num element(const Tensor& t, int64_t flat) {
  if (isFloat(t.dtype())) return t.item(flat);
  if (dtypeBytes(t.dtype()) != 8) return static_cast<int64_t>(t.item(flat));
  int64_t offset = 0;
  for (size_t d = t.shape().size(); d-- > 0;) {
    offset += (flat % t.shape()[d]) * t.strides()[d];
    flat /= t.shape()[d];
  }
  int64_t v;
  std::memcpy(&v, static_cast<const int64_t*>(t.data()) + offset, sizeof v);
  return v;
}

inline std::vector<Num> elements(const Tensor& t) {
  std::vector<Num> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(element(t, i));
  return v;
}

// Sets an element exactly (i64 and u64 included); floats are rounded to the dtype.
inline void setElement(Tensor& t, int64_t flat, const Num& v) {
  if (isInteger(t.dtype()) && dtypeBytes(t.dtype()) == 8 && !isNum(v)) {
    int64_t offset = 0;
    for (size_t d = t.shape().size(); d-- > 0;) {
      offset += (flat % t.shape()[d]) * t.strides()[d];
      flat /= t.shape()[d];
    }
    std::memcpy(static_cast<int64_t*>(t.data()) + offset, &std::get<int64_t>(v), sizeof(int64_t));
    return;
  }
  if (!isNum(v) && isFloat(t.dtype())) {
    t.setItem(flat, intToFloat(t.dtype(), std::get<int64_t>(v)));
    return;
  }
  t.setItem(flat, asDouble(v));
}

// A position in the total order of t's encodings (-0 and +0 both 0), for ulp distances.
inline int64_t orderedBits(DType t, double v) {
  int64_t bits = 0, sign = 0;
  switch (t) {
    case DType::f64: {
      auto b = std::bit_cast<uint64_t>(v);
      sign = static_cast<int64_t>(b >> 63);
      bits = static_cast<int64_t>(b & ~(uint64_t{1} << 63));
      break;
    }
    case DType::f32: {
      auto b = std::bit_cast<uint32_t>(static_cast<float>(v));
      sign = b >> 31;
      bits = b & 0x7fffffffu;
      break;
    }
    case DType::f8e4m3: case DType::f8e5m2: {
      uint8_t b = floatToF8(t, static_cast<float>(v));
      sign = b >> 7;
      bits = b & 0x7f;
      break;
    }
    default: {
      uint16_t b = t == DType::f16 ? floatToHalf(static_cast<float>(v)) : floatToBF16(static_cast<float>(v));
      sign = b >> 15;
      bits = b & 0x7fff;
    }
  }
  return sign ? -bits : bits;
}

inline int64_t ulpDistance(DType t, double a, double b) {
  int64_t d = orderedBits(t, a) - orderedBits(t, b);
  return d < 0 ? -d : d;
}

inline double unitRoundoff(DType t) { return std::ldexp(1.0, -precisionBits(t)); }

inline std::string text(const Num& n) {
  if (!isNum(n)) return std::to_string(std::get<int64_t>(n));  // a u64 past 2^63 shows as negative
  double v = std::get<double>(n);
  if (std::isnan(v)) return "nan";
  if (v == 0) return std::signbit(v) ? "-0" : "+0";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Row-major multi-index of `flat` in `shape`, as text "[i, j]".
inline std::string indexText(const Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

inline std::string shapeText(const Shape& s) {
  std::string r = "[";
  for (size_t d = 0; d < s.size(); ++d) r += (d ? ", " : "") + std::to_string(s[d]);
  return r + "]";
}

// An element of an [m, n] product that differs from float64's (productMismatches).
struct ProductMismatch {
  int64_t row, col;
  double got, want;
};

// The elements of `out`, an [m, n] product of k terms term(r, c, i) added to start(r, c), that
// differ from the float64 sum: NaN where it is NaN, the same infinity, else within 2 (k + 2) u of
// f32 of the terms' magnitudes (the bound of f32 sums in any order); an i32 `out` exactly,
// wrapped to 32 bits.
inline std::vector<ProductMismatch> productMismatches(const Tensor& out, int64_t m, int64_t n, int64_t k,
                                                      const std::function<double(int64_t, int64_t, int64_t)>& term,
                                                      const std::function<double(int64_t, int64_t)>& start = {}) {
  std::vector<ProductMismatch> bad;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double sum = start ? start(r, c) : 0, magnitude = std::fabs(sum);
      for (int64_t i = 0; i < k; ++i) {
        double t = term(r, c, i);
        sum += t;
        magnitude += std::fabs(t);
      }
      double got = out.item(r * n + c);
      bool ok = std::isnan(sum) ? std::isnan(got)
                : std::isinf(sum) ? got == sum
                : out.dtype() == DType::i32 ? got == static_cast<double>(static_cast<int32_t>(static_cast<int64_t>(sum)))
                                            : std::fabs(got - sum) <= 2.0 * double(k + 2) * 0x1p-24 * magnitude + 1e-30;
      if (!ok) bad.push_back({r, c, got, sum});
    }
  return bad;
}

}  // namespace tj::ref
