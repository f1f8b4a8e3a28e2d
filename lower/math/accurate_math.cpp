// f32 exp, exp2, sigmoid and tanh are computed natively in f32 (the hot paths of softmax,
// attention, SiLU and GELU, where f64 is slow or missing on many GPUs); every other
// function in float64, f32 arguments included: an f32 (denormals too) is a normal double,
// so driver denormal flushing and the loose GLSL.std.450 builtins never touch it, and a
// double result within ~2^-50 of the true value rounds to the correctly rounded f32 or a
// neighbour: at most 1 f32 ulp. Bounds quoted per function are in ulps of the width
// computed, as measured by tests/test_vulkan_math.cpp. The polynomials for log, log2, erf,
// sin and cos are fdlibm's (Sun Microsystems, freely redistributable); exp's is its Taylor
// series truncated below the working precision on the reduced range.
#include "lower/math/accurate_math.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <numbers>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tj::math {
namespace {

constexpr double kPi = std::numbers::pi;

// ---- helpers on the emitter's primitives. The emitter's float arithmetic is not contracted
// (without that Mesa applied inexact algebraic rewrites, e.g. it folded v - 4·floor(v/4)
// wrongly, that break the error-free steps below). fma() is not assumed fused (Vulkan does
// not promise it; lavapipe's is not): no error bound here counts on its single rounding.

// NaN in gives some value; callers select NaN back at the end.
MathValue clamp(MathEmitter& d, MathValue a, double lo, double hi) {
  MathValue atLeastLo = d.max(a, d.c(lo));
  return d.min(atLeastLo, d.c(hi));
}
// 2^k for an int k in the normal exponent range.
MathValue pow2(MathEmitter& d, MathValue k) {
  if (!d.f64()) return d.bitsToFloat(d.shl(d.iadd(k, d.ci(127)), 23));
  return d.fromWords(d.ci(0), d.shl(d.iadd(k, d.ci(1023)), 20));
}
// v·2^k for k in twice that range, in two exact steps (one rounding if the result is subnormal).
MathValue scale(MathEmitter& d, MathValue v, MathValue k) {
  MathValue half = d.shr(k, 1);
  return d.mul(d.mul(v, pow2(d, half)), pow2(d, d.isub(k, half)));
}
// values[index + i] for i < count, index an int in [0, 2^bits): a barrel shifter of
// selects (a Function-variable table costs far more on lavapipe); past the end reads 0.
std::vector<MathValue> window(MathEmitter& d, std::span<const double> values, MathValue index, int bits,
                              size_t count) {
  std::vector<MathValue> w;
  for (double v : values) w.push_back(d.c(v));
  for (int b = bits - 1; b >= 0; --b) {
    size_t shift = size_t{1} << b, keep = count + shift - 1;
    MathValue masked = d.iand(index, d.ci(int32_t(shift)));
    MathValue set = d.ine(masked, d.ci(0));
    std::vector<MathValue> next;
    for (size_t i = 0; i < keep; ++i)
      next.push_back(d.sel(set, i + shift < w.size() ? w[i + shift] : d.c(0), i < w.size() ? w[i] : d.c(0)));
    w = std::move(next);
  }
  w.resize(count);
  return w;
}
// c[0] + x·(c[1] + x·(c[2] + ...)).
template <size_t N>
MathValue horner(MathEmitter& d, MathValue x, const std::array<double, N>& cs) {
  MathValue r = d.c(cs[N - 1]);
  for (size_t i = N - 1; i-- > 0;) r = d.fma(r, x, d.c(cs[i]));
  return r;
}

constexpr double factorial(int n) { return n <= 1 ? 1 : n * factorial(n - 1); }

// 1/2!, 1/3!, ..., 1/(N+1)!: the Taylor coefficients of (exp(r) - 1 - r)/r².
template <size_t N>
constexpr std::array<double, N> expTaylor() {
  std::array<double, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = 1 / factorial(static_cast<int>(i) + 2);
  return out;
}

// ---- error-free transformations (exact, given round-to-nearest and NoContraction)

// s + err = a + b exactly (Knuth), and the same for |a| >= |b| (Dekker).
std::pair<MathValue, MathValue> twoSum(MathEmitter& d, MathValue a, MathValue b) {
  MathValue s = d.add(a, b), bb = d.sub(s, a);
  return {s, d.add(d.sub(a, d.sub(s, bb)), d.sub(b, bb))};
}
std::pair<MathValue, MathValue> fastTwoSum(MathEmitter& d, MathValue a, MathValue b) {
  MathValue s = d.add(a, b);
  return {s, d.sub(b, d.sub(s, a))};
}

// p + err = a·b exactly (Dekker): a and b split into halves (Veltkamp) make every
// partial product exact, with no fused fma.
std::pair<MathValue, MathValue> twoProduct(MathEmitter& d, MathValue a, MathValue b) {
  auto split = [&](MathValue v) {
    MathValue t = d.mul(v, d.c(d.f64() ? 0x1p27 + 1 : 0x1p12 + 1));
    MathValue hi = d.sub(t, d.sub(t, v));
    return std::pair{hi, d.sub(v, hi)};
  };
  auto [aHi, aLo] = split(a);
  auto [bHi, bLo] = split(b);
  MathValue p = d.mul(a, b);
  MathValue err = d.add(d.sub(d.mul(aHi, bHi), p), d.mul(aHi, bLo));
  return {p, d.add(d.add(err, d.mul(aLo, bHi)), d.mul(aLo, bLo))};
}

// ---- exp family: x = k·ln2 + r, |r| <= ln2/2, exp(x) = 2^k·(1 + r + tail(r)), the tail
// r²·(1/2! + r/3! + ...) by its Taylor series, to r^13 in f64 (truncation < 2^-58), to r^7
// in f32 (< 2^-27). Its error is then below a quarter ulp of the result, so 1 + r + tail
// is within 1 ulp in either width. r comes as rHi + rLo, rHi exact where it can be, rLo
// small and carrying the tail.

struct ExpSplit {
  MathValue k;  // int
  MathValue rHi, rLo;
};

MathValue expm1Tail(MathEmitter& d, MathValue r) {
  static constexpr auto k64 = expTaylor<12>();
  static constexpr auto k32 = expTaylor<6>();
  return d.mul(d.mul(r, r), d.f64() ? horner(d, r, k64) : horner(d, r, k32));
}

// Cody-Waite: rHi = x - k·hi exact (fdlibm's split for f64, for |k| < 2^11; a 15-bit hi
// for f32, |k| < 2^9), lo carrying ln2 on to 2^-86 / 2^-44.
ExpSplit expSplit(MathEmitter& d, MathValue x) {
  double hi = d.f64() ? 0x1.62e42feep-1 : 0x1.62e4p-1, lo = d.f64() ? 0x1.a39ef35793c76p-33 : 0x1.7f7d1cp-20;
  MathValue k = d.roundEven(d.mul(x, d.c(std::numbers::log2e)));
  MathValue rHi = d.sub(x, d.mul(k, d.c(hi))), rLo = d.neg(d.mul(k, d.c(lo)));
  return {d.toInt(k), rHi, d.add(rLo, expm1Tail(d, d.add(rHi, rLo)))};
}

// f = x - k is exact; r = f·ln2 with ln2 as hi + lo.
ExpSplit exp2Split(MathEmitter& d, MathValue x) {
  double hi = d.f64() ? 0x1.62e42fefa39efp-1 : 0x1.62e43p-1, lo = d.f64() ? 0x1.abc9e3b39803fp-56 : -0x1.05c61p-29;
  MathValue k = d.roundEven(x);
  MathValue f = d.sub(x, k);
  MathValue r = d.fma(f, d.c(hi), d.mul(f, d.c(lo)));
  return {d.toInt(k), r, expm1Tail(d, r)};
}

MathValue expm1Reduced(MathEmitter& d, const ExpSplit& e) { return d.add(e.rHi, e.rLo); }  // expm1(r)

// Clamping keeps k in scale()'s range while still overflowing to inf / underflowing to 0.
MathValue expOf(MathEmitter& d, const ExpSplit& e, MathValue x) {
  return d.sel(d.isNan(x), x, scale(d, d.add(d.c(1), expm1Reduced(d, e)), e.k));
}
MathValue expGeneric(MathEmitter& d, MathValue x) {
  double bound = d.f64() ? 800 : 110;
  return expOf(d, expSplit(d, clamp(d, x, -bound, bound)), x);
}
MathValue exp2Generic(MathEmitter& d, MathValue x) {
  double bound = d.f64() ? 1100 : 160;
  return expOf(d, exp2Split(d, clamp(d, x, -bound, bound)), x);
}

// expm1(x) = (2^k - 1) + 2^k·expm1(r), accurate near 0 (2^k - 1 is exact); for |x| <= 40.
MathValue expm1Small(MathEmitter& d, MathValue x) {
  ExpSplit e = expSplit(d, x);
  MathValue t = pow2(d, e.k);
  return d.fma(t, expm1Reduced(d, e), d.sub(t, d.c(1)));
}

// tanh(x) = u/(u + 2), u = expm1(2x): no cancellation for either sign; |x| >= 20
// rounds to ±1 anyway. ±0 and NaN pass through. <= 2 ulps.
MathValue tanh64(MathEmitter& d, MathValue x) {
  MathValue u = expm1Small(d, d.mul(d.c(2), clamp(d, x, -20, 20)));
  MathValue t = d.div(u, d.add(u, d.c(2)));
  return d.sel(d.either(d.eq(x, d.c(0)), d.isNan(x)), x, t);
}

// As the interpreter defines it (so 0 below x = -709.78 in f64). <= 2 ulps.
MathValue sigmoid64(MathEmitter& d, MathValue x) { return d.div(d.c(1), d.add(d.c(1), expGeneric(d, d.neg(x)))); }

// ---- f32-native sigmoid and tanh (SiLU's and GELU's hot paths), within 1 ulp: with
// exp(a) = 2^k·(1 + rHi + rLo) from expSplit, rHi exact, sums like 1 ± exp(a) come out as
// double-floats good to ~2^-26 (only rLo's rounding and the tail's truncation err); then
// one division corrected by its exact residual.

// s + t·(1 + rHi + rLo) as a double-float, t a power of two.
std::pair<MathValue, MathValue> plusScaled(MathEmitter& d, MathValue s, MathValue t, const ExpSplit& e) {
  auto [h, l] = twoSum(d, s, t);
  auto [h2, l2] = twoSum(d, h, d.mul(t, e.rHi));
  return fastTwoSum(d, h2, d.add(d.add(l, l2), d.mul(t, e.rLo)));
}

// (nHi + nLo)/(dHi + dLo): a quotient corrected once by its residual, exact to first order
// (nHi - q·dHi cancels exactly).
MathValue divide(MathEmitter& d, std::pair<MathValue, MathValue> n, std::pair<MathValue, MathValue> den) {
  MathValue q = d.div(n.first, den.first);
  auto [p, err] = twoProduct(d, q, den.first);
  MathValue residual = d.sub(d.add(d.sub(d.sub(n.first, p), err), n.second), d.mul(q, den.second));
  return d.add(q, d.div(residual, den.first));
}

// 1/(1 + e) for x >= 0, e/(1 + e) for x < 0 (e = exp(-|x|) = 2^k·E); 2^k applied last so a
// subnormal result rounds once.
MathValue sigmoid32(MathEmitter& d, MathValue x) {
  ExpSplit e = expSplit(d, d.neg(d.abs(clamp(d, x, -110, 110))));
  MathValue negative = d.lt(x, d.c(0));
  auto den = plusScaled(d, d.c(1), scale(d, d.c(1), e.k), e);
  auto mantissa = plusScaled(d, d.c(0), d.c(1), e);
  std::pair<MathValue, MathValue> num = {d.sel(negative, mantissa.first, d.c(1)),
                                         d.sel(negative, mantissa.second, d.c(0))};
  return d.sel(d.isNan(x), x, scale(d, divide(d, num, den), d.isel(negative, e.k, d.ci(0))));
}

// ±(1 - e)/(1 + e), e = exp(-2|x|); |x| >= 10 rounds to ±1. ±0 and NaN pass through.
MathValue tanh32(MathEmitter& d, MathValue x) {
  ExpSplit e = expSplit(d, d.mul(d.c(-2), d.abs(clamp(d, x, -10, 10))));
  MathValue t = scale(d, d.c(1), e.k);
  MathValue q = divide(d, plusScaled(d, d.c(1), d.neg(t), e), plusScaled(d, d.c(1), t, e));
  return d.sel(d.either(d.eq(x, d.c(0)), d.isNan(x)), x, d.sel(d.lt(x, d.c(0)), d.neg(q), q));
}

// ---- log family (fdlibm): x = 2^k·(1 + f), sqrt(2)/2 <= 1 + f < sqrt(2);
// log(1 + f) = f - hfsq + s·(hfsq + R(s²)), s = f/(2 + f), hfsq = f²/2. < 1 ulp.

struct LogParts {
  MathValue k;     // float
  MathValue f;     // 1 + f is the mantissa
  MathValue hfsq;  // f²/2
  MathValue tail;  // s·(hfsq + R)
};

LogParts logParts(MathEmitter& d, MathValue x) {
  static constexpr std::array<double, 7> kLg = {6.666666666666735130e-01, 3.999999999940941908e-01,
                                                2.857142874366239149e-01, 2.222219843214978396e-01,
                                                1.818357216161805012e-01, 1.531383769920937332e-01,
                                                1.479819860511658591e-01};
  constexpr int32_t kSqrtHalfHi = 0x3fe6a09e;  // high word of sqrt(2)/2
  MathValue subnormal = d.lt(x, d.c(0x1p-1022));
  MathValue xs = d.sel(subnormal, d.mul(x, d.c(0x1p54)), x);
  MathValue hx = d.iadd(d.hi(xs), d.ci(0x3ff00000 - kSqrtHalfHi));
  MathValue k = d.isub(d.shr(hx, 20), d.ci(0x3ff));
  MathValue mantissa = d.fromWords(d.lo(xs), d.iadd(d.iand(hx, d.ci(0x000fffff)), d.ci(kSqrtHalfHi)));
  MathValue f = d.sub(mantissa, d.c(1));
  MathValue hfsq = d.mul(d.c(0.5), d.mul(f, f));
  MathValue s = d.div(f, d.add(d.c(2), f));
  MathValue z = d.mul(s, s);
  MathValue tail = d.mul(s, d.add(hfsq, d.mul(z, horner(d, z, kLg))));
  MathValue kf = d.sub(d.toFloat(k), d.sel(subnormal, d.c(54), d.c(0)));
  return {kf, f, hfsq, tail};
}

// log's special values: NaN below 0 and for NaN, -inf at ±0, +inf at +inf.
MathValue logSpecials(MathEmitter& d, MathValue x, MathValue r) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  r = d.sel(d.eq(x, d.c(kInf)), x, r);
  r = d.sel(d.eq(x, d.c(0)), d.c(-kInf), r);
  return d.sel(d.either(d.lt(x, d.c(0)), d.isNan(x)), d.c(std::numeric_limits<double>::quiet_NaN()), r);
}

MathValue log64(MathEmitter& d, MathValue x) {  // <= 1 ulp
  constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
  LogParts l = logParts(d, x);
  MathValue r = d.add(d.sub(d.fma(l.k, d.c(kLn2Lo), l.tail), l.hfsq), l.f);
  return logSpecials(d, x, d.fma(l.k, d.c(kLn2Hi), r));
}

// log2 = k + log(1 + f)/ln2 with f - hfsq split exactly into hi + lo and k added as
// a two-sum, as fdlibm's e_log2.c: the cancellation near x = sqrt(2)/2 stays exact. <= 1 ulp.
MathValue log2_64(MathEmitter& d, MathValue x) {
  constexpr double kInvLn2Hi = 1.44269504072144627571e+00, kInvLn2Lo = 1.67517131648865118353e-10;
  LogParts l = logParts(d, x);
  MathValue hi = d.fromWords(d.ci(0), d.hi(d.sub(l.f, l.hfsq)));
  MathValue lo = d.add(d.sub(d.sub(l.f, hi), l.hfsq), l.tail);
  MathValue valHi = d.mul(hi, d.c(kInvLn2Hi));
  MathValue valLo = d.add(d.mul(d.add(lo, hi), d.c(kInvLn2Lo)), d.mul(lo, d.c(kInvLn2Hi)));
  MathValue w = d.add(l.k, valHi);
  valLo = d.add(valLo, d.add(d.sub(l.k, w), valHi));
  return logSpecials(d, x, d.add(valLo, w));
}

// ---- sin and cos: |x| = n·π/2 + (y0 + y1), y0 + y1 a double-double with |y0| <= π/4 (about).

struct Quadrant {
  MathValue n;       // float, integral
  MathValue y0, y1;  // radians
};

// |x| < 2^20·π/2: fdlibm's medium reduction, always all three rounds: π/2 in 33-bit parts
// (n·part exact) plus tails, good to 151 bits, which covers the closest any double
// comes to a multiple of π/2.
Quadrant reduceMedium(MathEmitter& d, MathValue ax) {
  static constexpr std::array<std::array<double, 2>, 3> kParts = {{{0x1.921fb544p+0, 0x1.0b4611a626331p-34},
                                                                   {0x1.0b4611a6p-34, 0x1.3198a2e037073p-69},
                                                                   {0x1.3198a2ep-69, 0x1.b839a252049c1p-104}}};
  MathValue n = d.roundEven(d.mul(ax, d.c(2 / kPi)));
  MathValue r = d.sub(ax, d.mul(n, d.c(kParts[0][0])));
  MathValue w = d.mul(n, d.c(kParts[0][1]));
  for (size_t i = 1; i < kParts.size(); ++i) {
    MathValue t = r;
    w = d.mul(n, d.c(kParts[i][0]));
    r = d.sub(t, w);
    w = d.sub(d.mul(n, d.c(kParts[i][1])), d.sub(d.sub(t, r), w));
  }
  MathValue y0 = d.sub(r, w);
  return {n, y0, d.sub(d.sub(r, y0), w)};
}

// 2^20 <= |x| < 2^1024 (the caller clamps), Payne-Hanek in doubles: |x| = Σ m_a·2^(e+24a)
// (three limbs m_a < 2^24 of the 53-bit mantissa) and 2/π = Σ c_i·2^(-24i-24) (c_i < 2^24),
// so |x|·2/π = Σ_j S_j·2^(e-24j-24) with S_j = Σ_a m_a·c_(j+a) < 2^50 exact. Terms T_k from
// j0 on, j0 chosen so T_0's scale 2^s has s in [-22, 1] (earlier ones are multiples of 4):
// T_0, T_1 exact mod 4; T_2..T_4 join by TwoSums, exact whenever the sum cancels; T_5..T_7
// (< 2^-69) go to the low part; truncation < 2^-140. Error < 2^-120, against a remainder
// above 2^-62 for every double.
Quadrant reduceLarge(MathEmitter& d, MathValue ax) {
  static constexpr std::array<double, 52> kTwoOverPi = {  // c_-2, c_-1 = 0, then c_0..c_49
      0,        0,        0xa2f983, 0x6e4e44, 0x1529fc, 0x2757d1, 0xf534dd, 0xc0db62, 0x95993c, 0x439041,
      0xfe5163, 0xabdebb, 0xc561b7, 0x246e3a, 0x424dd2, 0xe00649, 0x2eea09, 0xd1921c, 0xfe1deb, 0x1cb129,
      0xa73ee8, 0x8235f5, 0x2ebb44, 0x84e99c, 0x7026b4, 0x5f7e41, 0x3991d6, 0x398353, 0x39f49c, 0x845f8b,
      0xbdf928, 0x3b1ff8, 0x97ffde, 0x05980f, 0xef2f11, 0x8b5a0a, 0x6d1f6d, 0x367ecf, 0x27cb09, 0xb74f46,
      0x3f669e, 0x5fea2d, 0x7527ba, 0xc7ebe5, 0xf17b3d, 0x0739f7, 0x8a5292, 0xea6bfb, 0x5fb11f, 0x8d5d08,
      0x560330, 0x46fc7b};
  MathValue e = d.isub(d.shr(d.hi(ax), 20), d.ci(1023 + 52));            // -32..972
  MathValue j0 = d.isub(d.idiv(d.iadd(e, d.ci(70)), d.ci(24)), d.ci(3));  // -2..40
  MathValue s = d.isub(e, d.iadd(d.imul(j0, d.ci(24)), d.ci(24)));
  MathValue mant = d.mul(ax, pow2(d, d.isub(d.ci(0), e)));
  MathValue m2 = d.floor(d.mul(mant, d.c(0x1p-48)));
  MathValue rest = d.sub(mant, d.mul(m2, d.c(0x1p48)));
  MathValue m1 = d.floor(d.mul(rest, d.c(0x1p-24)));
  MathValue m0 = d.sub(rest, d.mul(m1, d.c(0x1p24)));
  std::vector<MathValue> chunks = window(d, kTwoOverPi, d.iadd(j0, d.ci(2)), 6, 10);
  auto chunk = [&](int k) { return chunks[k]; };
  auto term = [&](int k) {
    MathValue sum = d.add(d.add(d.mul(m0, chunk(k)), d.mul(m1, chunk(k + 1))), d.mul(m2, chunk(k + 2)));
    return d.mul(sum, pow2(d, d.isub(s, d.ci(24 * k))));
  };
  auto mod4 = [&](MathValue v) { return d.sub(v, d.mul(d.c(4), d.floor(d.mul(v, d.c(0.25))))); };
  MathValue a = mod4(d.add(mod4(term(0)), mod4(term(1))));
  MathValue t2 = term(2);
  MathValue n = d.roundEven(d.add(a, t2));
  auto [h, l] = twoSum(d, d.sub(a, n), t2);
  for (int k = 3; k <= 4; ++k) {
    auto [sum, err] = twoSum(d, h, term(k));
    h = sum;
    l = d.add(l, err);
  }
  l = d.add(l, d.add(term(5), d.add(term(6), term(7))));
  auto [y0, y1] = fastTwoSum(d, h, l);
  // Quarter turns to radians, π/2 = hi + lo.
  constexpr double kHi = 0x1.921fb54442d18p+0, kLo = 0x1.1a62633145c07p-54;
  auto [th, err] = twoProduct(d, y0, d.c(kHi));
  auto [r0, r1] = fastTwoSum(d, th, d.add(err, d.add(d.mul(y0, d.c(kLo)), d.mul(y1, d.c(kHi)))));
  return {n, r0, r1};
}

// fdlibm's kernels for sin and cos of y0 + y1, |y0| <= π/4: < 1 ulp.
MathValue sinKernel(MathEmitter& d, MathValue x, MathValue y) {
  static constexpr std::array<double, 5> kS = {8.33333333332248946124e-03, -1.98412698298579493134e-04,
                                               2.75573137070700676789e-06, -2.50507602534068634195e-08,
                                               1.58969099521155010221e-10};
  constexpr double kS1 = -1.66666666666666324348e-01;
  MathValue z = d.mul(x, x), v = d.mul(z, x), r = horner(d, z, kS);
  MathValue inner = d.sub(d.mul(z, d.sub(d.mul(d.c(0.5), y), d.mul(v, r))), y);
  return d.sub(x, d.sub(inner, d.mul(v, d.c(kS1))));
}
MathValue cosKernel(MathEmitter& d, MathValue x, MathValue y) {
  static constexpr std::array<double, 6> kC = {4.16666666666666019037e-02, -1.38888888888741095749e-03,
                                               2.48015872894767294178e-05, -2.75573143513906633035e-07,
                                               2.08757232129817482790e-09, -1.13596475577881948265e-11};
  MathValue z = d.mul(x, x), r = d.mul(z, horner(d, z, kC));
  MathValue hz = d.mul(d.c(0.5), z), w = d.sub(d.c(1), hz);
  return d.add(w, d.add(d.sub(d.sub(d.c(1), w), hz), d.sub(d.mul(z, r), d.mul(x, y))));
}

// ±sin or ±cos of the remainder by quadrant (cos x = sin(x + π/2): one quadrant on); sin
// takes x's sign, sin(±0) = ±0, inf and NaN give NaN.
MathValue sinCos(MathEmitter& d, MathValue x, bool cosine) {
  MathValue ax = d.abs(x);
  Quadrant medium = reduceMedium(d, ax);
  Quadrant large = reduceLarge(d, clamp(d, ax, 0x1p20, std::numeric_limits<double>::max()));
  MathValue isLarge = d.lt(d.c(0x1.921fb54442d18p+20), ax);
  MathValue y0 = d.sel(isLarge, large.y0, medium.y0), y1 = d.sel(isLarge, large.y1, medium.y1);
  MathValue q = d.iand(d.iadd(d.toInt(d.sel(isLarge, large.n, medium.n)), d.ci(cosine)), d.ci(3));
  MathValue odd = d.ieq(d.iand(q, d.ci(1)), d.ci(1));
  MathValue negate = d.ieq(d.iand(q, d.ci(2)), d.ci(2));
  if (!cosine) negate = d.differ(negate, d.lt(x, d.c(0)));
  MathValue v = d.sel(odd, cosKernel(d, y0, y1), sinKernel(d, y0, y1));
  v = d.sel(negate, d.neg(v), v);
  if (!cosine) v = d.sel(d.eq(x, d.c(0)), x, v);
  return d.sel(d.either(d.isInf(x), d.isNan(x)), d.c(std::numeric_limits<double>::quiet_NaN()), v);
}

MathValue sin64(MathEmitter& d, MathValue x) { return sinCos(d, x, false); }
MathValue cos64(MathEmitter& d, MathValue x) { return sinCos(d, x, true); }

// ---- erf (fdlibm s_erf.c): on |x| < 0.84375 x + x·P/Q(x²); < 1.25 erf(1) - c + P/Q(|x| - 1);
// < 6 1 - exp(-z² - 0.5625)·exp((z - |x|)(z + |x|) + R/S(1/x²))/|x| with z = |x| cut to 21
// bits (so z² is exact), two R/S fits split at 1/0.35; beyond, 1. < 1 ulp in fdlibm, <= 2 here.
MathValue erf64(MathEmitter& d, MathValue x) {
  static constexpr std::array<double, 5> kPp = {1.28379167095512558561e-01, -3.25042107247001499370e-01,
                                                -2.84817495755985104766e-02, -5.77027029648944159157e-03,
                                                -2.37630166566501626084e-05};
  static constexpr std::array<double, 6> kQq = {1, 3.97917223959155352819e-01, 6.50222499887672944485e-02,
                                                5.08130628187576562776e-03, 1.32494738004321644526e-04,
                                                -3.96022827877536812320e-06};
  static constexpr std::array<double, 7> kPa = {-2.36211856075265944077e-03, 4.14856118683748331666e-01,
                                                -3.72207876035701323847e-01, 3.18346619901161753674e-01,
                                                -1.10894694282396677476e-01, 3.54783043256182359371e-02,
                                                -2.16637559486879084300e-03};
  static constexpr std::array<double, 7> kQa = {1, 1.06420880400844228286e-01, 5.40397917702171048937e-01,
                                                7.18286544141962662868e-02, 1.26171219808761642112e-01,
                                                1.36370839120290507362e-02, 1.19844998467991074170e-02};
  static constexpr std::array<double, 8> kRa = {-9.86494403484714822705e-03, -6.93858572707181764372e-01,
                                                -1.05586262253232909814e+01, -6.23753324503260060396e+01,
                                                -1.62396669462573470355e+02, -1.84605092906711035994e+02,
                                                -8.12874355063065934246e+01, -9.81432934416914548592e+00};
  static constexpr std::array<double, 9> kSa = {1, 1.96512716674392571292e+01, 1.37657754143519042600e+02,
                                                4.34565877475229228821e+02, 6.45387271733267880336e+02,
                                                4.29008140027567833386e+02, 1.08635005541779435134e+02,
                                                6.57024977031928170135e+00, -6.04244152148580987438e-02};
  static constexpr std::array<double, 7> kRb = {-9.86494292470009928597e-03, -7.99283237680523006574e-01,
                                                -1.77579549177547519889e+01, -1.60636384855821916062e+02,
                                                -6.37566443368389627722e+02, -1.02509513161107724954e+03,
                                                -4.83519191608651397019e+02};
  static constexpr std::array<double, 8> kSb = {1, 3.03380607434824582924e+01, 3.25792512996573918826e+02,
                                                1.53672958608443695994e+03, 3.19985821950859553908e+03,
                                                2.55305040643316442583e+03, 4.74528541206955367215e+02,
                                                -2.24409524465858183362e+01};
  constexpr double kErx = 8.45062911510467529297e-01;
  MathValue ax = d.abs(x);
  MathValue x2 = d.mul(x, x);
  MathValue near0 = d.fma(x, d.div(horner(d, x2, kPp), horner(d, x2, kQq)), x);
  MathValue s = d.sub(ax, d.c(1));
  MathValue near1 = d.add(d.c(kErx), d.div(horner(d, s, kPa), horner(d, s, kQa)));
  MathValue w = d.div(d.c(1), x2);
  MathValue ratio = d.sel(d.lt(ax, d.c(1 / 0.35)), d.div(horner(d, w, kRa), horner(d, w, kSa)),
                          d.div(horner(d, w, kRb), horner(d, w, kSb)));
  MathValue z = d.fromWords(d.ci(0), d.hi(ax));
  MathValue tail = d.mul(expGeneric(d, d.sub(d.c(-0.5625), d.mul(z, z))),
                         expGeneric(d, d.add(d.mul(d.sub(z, ax), d.add(z, ax)), ratio)));
  MathValue far = d.sub(d.c(1), d.div(tail, ax));
  MathValue v = d.sel(d.lt(ax, d.c(6)), far, d.c(1));
  v = d.sel(d.lt(ax, d.c(1.25)), near1, v);
  v = d.sel(d.lt(x, d.c(0)), d.neg(v), v);
  return d.sel(d.either(d.lt(ax, d.c(0.84375)), d.isNan(x)), near0, v);
}

// Two roundings: < 1 ulp.
MathValue rsqrt64(MathEmitter& d, MathValue x) { return d.div(d.c(1), d.sqrt(x)); }
// Correctly rounded for f32 (a double square root rounded again to 24 bits is exact).
MathValue sqrt64(MathEmitter& d, MathValue x) { return d.sqrt(x); }

using Fn = MathValue (*)(MathEmitter&, MathValue);
struct Version {
  Fn f;         // in the emitter's width
  Fn native32;  // an f32 version computing in f32, or null: f32 computes f in float64
  bool f64;     // f also serves float64 arguments
};

const Version* findVersion(std::string_view fn) {
  static const std::map<std::string_view, Version> kVersions = {
      {"exp", {expGeneric, expGeneric, true}}, {"exp2", {exp2Generic, exp2Generic, true}},
      {"log", {log64, nullptr, true}},         {"log2", {log2_64, nullptr, true}},
      {"sin", {sin64, nullptr, true}},         {"cos", {cos64, nullptr, true}},
      {"tanh", {tanh64, tanh32, true}},       {"sigmoid", {sigmoid64, sigmoid32, true}},
      {"erf", {erf64, nullptr, true}},         {"rsqrt", {rsqrt64, nullptr, true}},
      {"sqrt", {sqrt64, nullptr, false}}};
  auto it = kVersions.find(fn);
  return it == kVersions.end() ? nullptr : &it->second;
}

}  // namespace

int computeBits(std::string_view fn, int floatBits) {
  const Version* v = findVersion(fn);
  if (!v) return 0;
  if (floatBits == 64) return v->f64 ? 64 : 0;
  if (floatBits == 32) return v->native32 ? 32 : 64;
  return 0;
}

MathValue accurateUnary(MathEmitter& e, std::string_view fn, int floatBits, MathValue x) {
  int bits = computeBits(fn, floatBits);
  if (bits == 0) return 0;
  if (e.f64() != (bits == 64))
    throw std::logic_error("accurateUnary: " + std::string(fn) + " on f" + std::to_string(floatBits) +
                           " computes in f" + std::to_string(bits) + ", not in the emitter's width");
  const Version& v = *findVersion(fn);
  return floatBits == 32 && v.native32 ? v.native32(e, x) : v.f(e, x);
}

}  // namespace tj::math
