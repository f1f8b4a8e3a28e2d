// Element types of tensors and tiles, and exact conversions between them.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace tj {

enum class DType : uint8_t { f32, f64, f16, bf16, i8, i32, i64, boolean };

std::string_view dtypeName(DType t);                 // "f32", ..., "bool"
std::optional<DType> parseDType(std::string_view s);
int dtypeBytes(DType t);
bool isFloat(DType t);
bool isInteger(DType t);                             // i8, i32, i64 (not bool)

// IEEE binary16 / bfloat16 conversions, round-to-nearest-even like the hardware.
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
uint16_t floatToBF16(float f);
float bf16ToFloat(uint16_t b);

// Rounds a float64 value to the nearest value representable in `t` (RNE),
// or wraps an integer into `t`'s range. bool maps nonzero to 1.
double roundToFloat(DType t, double v);
int64_t wrapToInt(DType t, int64_t v);
// Shifts of an integer of dtype t by n, as every device computes them: a count outside
// [0, bits) shifts every bit out (shl and the logical shr give 0, the arithmetic shr the sign).
int64_t shiftLeft(DType t, int64_t a, int64_t n);
int64_t shiftRight(DType t, int64_t a, int64_t n);         // arithmetic
int64_t shiftRightLogical(DType t, int64_t a, int64_t n);  // of t's bits as unsigned
// The largest finite value of float dtype t.
double maxFinite(DType t);
// Whether a number is a value of `t`, as a constant or a load's fill must be (lowerings
// convert them without range checks): an integer dtype takes integers in its range (bool:
// 0 and 1), a float dtype infinities, NaN and numbers up to its largest finite value.
bool isValueOf(double v, DType t);
bool isValueOf(int64_t v, DType t);  // exact past 2^53
// A float converted to integer dtype t: toward zero, NaN to 0, saturating at t's range;
// bool maps nonzero to 1.
int64_t saturateToInt(DType t, double v);

}  // namespace tj
