// lower/math/float8 on the host: its straight-line arithmetic evaluated in f32 and int32 here
// against ir/dtype's conversions, over a sweep of f32 bit patterns, the ends and the specials.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ir/dtype.hpp"
#include "lower/math/float8.hpp"

namespace tj {
namespace {

// A MathEmitter that computes at once: each value an f32, an int32 or a bool (f32 only).
class ScalarMath final : public math::MathEmitter {
 public:
  struct Value {
    float f = 0;
    int32_t i = 0;
    bool b = false;
  };
  math::MathValue put(Value v) {
    values_.push_back(v);
    return math::MathValue(values_.size() - 1);
  }
  math::MathValue putFloat(float f) { return put({.f = f}); }
  math::MathValue putInt(int32_t i) { return put({.i = i}); }
  const Value& at(math::MathValue v) const { return values_.at(v); }

  bool f64() const override { return false; }
  math::MathValue c(double v) override { return putFloat(float(v)); }
  math::MathValue add(math::MathValue a, math::MathValue b) override { return putFloat(f(a) + f(b)); }
  math::MathValue sub(math::MathValue a, math::MathValue b) override { return putFloat(f(a) - f(b)); }
  math::MathValue mul(math::MathValue a, math::MathValue b) override { return putFloat(f(a) * f(b)); }
  math::MathValue div(math::MathValue a, math::MathValue b) override { return putFloat(f(a) / f(b)); }
  math::MathValue neg(math::MathValue a) override { return putFloat(-f(a)); }
  math::MathValue fma(math::MathValue a, math::MathValue b, math::MathValue c) override {
    return putFloat(std::fma(f(a), f(b), f(c)));
  }
  math::MathValue abs(math::MathValue a) override { return putFloat(std::fabs(f(a))); }
  math::MathValue floor(math::MathValue a) override { return putFloat(std::floor(f(a))); }
  math::MathValue roundEven(math::MathValue a) override { return putFloat(std::nearbyint(f(a))); }
  math::MathValue sqrt(math::MathValue a) override { return putFloat(std::sqrt(f(a))); }
  math::MathValue min(math::MathValue a, math::MathValue b) override { return putFloat(std::fmin(f(a), f(b))); }
  math::MathValue max(math::MathValue a, math::MathValue b) override { return putFloat(std::fmax(f(a), f(b))); }
  math::MathValue sel(math::MathValue c, math::MathValue a, math::MathValue b) override { return put(at(c).b ? at(a) : at(b)); }
  math::MathValue isel(math::MathValue c, math::MathValue a, math::MathValue b) override { return sel(c, a, b); }
  math::MathValue lt(math::MathValue a, math::MathValue b) override { return put({.b = f(a) < f(b)}); }
  math::MathValue eq(math::MathValue a, math::MathValue b) override { return put({.b = f(a) == f(b)}); }
  math::MathValue isNan(math::MathValue a) override { return put({.b = std::isnan(f(a))}); }
  math::MathValue isInf(math::MathValue a) override { return put({.b = std::isinf(f(a))}); }
  math::MathValue either(math::MathValue p, math::MathValue q) override { return put({.b = at(p).b || at(q).b}); }
  math::MathValue differ(math::MathValue p, math::MathValue q) override { return put({.b = at(p).b != at(q).b}); }
  math::MathValue ci(int32_t v) override { return putInt(v); }
  math::MathValue iadd(math::MathValue a, math::MathValue b) override { return putInt(int32_t(uint32_t(i(a)) + uint32_t(i(b)))); }
  math::MathValue isub(math::MathValue a, math::MathValue b) override { return putInt(int32_t(uint32_t(i(a)) - uint32_t(i(b)))); }
  math::MathValue imul(math::MathValue a, math::MathValue b) override { return putInt(int32_t(uint32_t(i(a)) * uint32_t(i(b)))); }
  math::MathValue idiv(math::MathValue a, math::MathValue b) override { return putInt(i(a) / i(b)); }
  math::MathValue iand(math::MathValue a, math::MathValue b) override { return putInt(i(a) & i(b)); }
  math::MathValue shr(math::MathValue a, int n) override { return putInt(i(a) >> n); }
  math::MathValue shl(math::MathValue a, int n) override { return putInt(int32_t(uint32_t(i(a)) << n)); }
  math::MathValue ieq(math::MathValue a, math::MathValue b) override { return put({.b = i(a) == i(b)}); }
  math::MathValue ine(math::MathValue a, math::MathValue b) override { return put({.b = i(a) != i(b)}); }
  math::MathValue toInt(math::MathValue a) override { return putInt(int32_t(f(a))); }
  math::MathValue toFloat(math::MathValue a) override { return putFloat(float(i(a))); }
  math::MathValue bitsToFloat(math::MathValue a) override { return putFloat(std::bit_cast<float>(i(a))); }
  math::MathValue floatToBits(math::MathValue a) override { return putInt(std::bit_cast<int32_t>(f(a))); }
  math::MathValue ilt(math::MathValue a, math::MathValue b) override { return put({.b = i(a) < i(b)}); }
  math::MathValue hi(math::MathValue) override { throw std::logic_error("ScalarMath: f32 only"); }
  math::MathValue lo(math::MathValue) override { throw std::logic_error("ScalarMath: f32 only"); }
  math::MathValue fromWords(math::MathValue, math::MathValue) override { throw std::logic_error("ScalarMath: f32 only"); }

 private:
  float f(math::MathValue v) const { return at(v).f; }
  int32_t i(math::MathValue v) const { return at(v).i; }
  std::vector<Value> values_;
};

// What NVIDIA's cvt.rn.satfinite gives: rounded to nearest even, clamped to the largest finite
// value, a NaN the positive canonical one (0x7f).
uint8_t satfinite(DType t, float x) {
  if (std::isnan(x)) return 0x7f;
  const float largest = f8ToFloat(t, uint8_t(float8Format(t).largestFinite));
  return floatToF8(t, std::clamp(x, -largest, largest));
}

// The f32s to try: a sweep of bit patterns of both signs, the specials, and every pattern near
// the rounding ties past the largest finite value.
std::vector<float> samples(DType t) {
  std::vector<float> xs;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4093) xs.push_back(std::bit_cast<float>(uint32_t(bits)));
  for (float special : {0.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()})
    xs.insert(xs.end(), {special, -special});
  const uint32_t code = float8Format(t).largestFinite;
  const float largest = f8ToFloat(t, uint8_t(code)), step = largest - f8ToFloat(t, uint8_t(code - 1));
  for (float tie : {largest + step / 2, largest})
    for (int32_t d = -2000; d <= 2000; ++d) {
      float x = std::bit_cast<float>(std::bit_cast<int32_t>(tie) + d);
      xs.insert(xs.end(), {x, -x});
    }
  return xs;
}

TEST_CASE("float8 math: f32ToFloat8's arithmetic rounds as ir/dtype does, and so does a saturating conversion made unsaturated") {
  for (DType t : {DType::f8e4m3, DType::f8e5m2}) {
    CAPTURE(dtypeName(t));
    int64_t wrong = 0, wrongFromSaturated = 0;
    for (float x : samples(t)) {
      ScalarMath e;
      const math::MathValue in = e.putFloat(x);
      const uint8_t want = floatToF8(t, x);
      const auto code = uint8_t(e.at(math::f32ToFloat8(e, t, in)).i);
      const auto unsaturated = uint8_t(e.at(math::unsaturatedFloat8(e, t, in, e.putInt(satfinite(t, x)))).i);
      if (code != want && wrong++ < 3) FAIL_CHECK(x << ": f32ToFloat8 " << int(code) << ", want " << int(want));
      if (unsaturated != want && wrongFromSaturated++ < 3)
        FAIL_CHECK(x << ": from cvt.rn.satfinite's " << int(satfinite(t, x)) << " " << int(unsaturated) << ", want " << int(want));
    }
    CHECK(wrong == 0);
    CHECK(wrongFromSaturated == 0);
    // The emulated conversion does saturate (so the fix-up above had work to do): -inf is not its code.
    CHECK(floatToF8(t, -std::numeric_limits<float>::infinity()) != satfinite(t, -std::numeric_limits<float>::infinity()));
  }
}

}  // namespace
}  // namespace tj
