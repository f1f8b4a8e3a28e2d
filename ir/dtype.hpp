// Element types of tensors and tiles, and exact conversions between them.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace tj {

// Unsigned dtypes come last so that the numbering of the others (hashed) stays.
// f8e4m3 and f8e5m2 are OCP's 8-bit floats: storage for values and operands of dot (see isFloat8).
enum class DType : uint8_t { f32, f64, f16, bf16, i8, i32, i64, boolean, u8, u16, u32, u64, f8e4m3, f8e5m2 };
inline constexpr uint8_t kDTypeCount = 14;  // for checking a stored dtype's number

std::string_view dtypeName(DType t);                 // "f32", ..., "bool"
std::optional<DType> parseDType(std::string_view s);
int dtypeBytes(DType t);
bool isFloat(DType t);                               // f32, f64, f16, bf16 and the 8-bit floats
// f8e4m3 (OCP's e4m3fn: bias 7, largest 448, no infinities, NaN 0x7f/0xff) and f8e5m2 (bias 15,
// largest 57344, infinities and NaNs as IEEE; a NaN converts to 0x7f/0xff, as in PyTorch). Tiles of
// them only move and convert values and feed dot.
bool isFloat8(DType t);
bool isInteger(DType t);                             // i8, i32, i64 and the unsigned (not bool)
bool isUnsigned(DType t);                            // u8, u16, u32, u64

// IEEE binary16 / bfloat16 conversions, round-to-nearest-even like the hardware.
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
uint16_t floatToBF16(float f);
float bf16ToFloat(uint16_t b);
// An 8-bit float's fields and the codes (sign bit clear) at its ends; `overflow` is what a value
// past the largest finite one becomes (NaN for f8e4m3, infinity for f8e5m2), `nan` what a NaN does.
struct Float8Format {
  int mantissaBits, bias;
  uint32_t largestFinite, overflow, nan;
};
Float8Format float8Format(DType t);  // t is f8e4m3 or f8e5m2
// A float rounded to nearest even into the 8-bit float t; past its largest finite value (infinities
// too) as OCP's non-saturating conversion does. NaN stays NaN.
uint8_t floatToF8(DType t, float f);
float f8ToFloat(DType t, uint8_t bits);

// Rounds a float64 value to the nearest value representable in `t` (RNE),
// or wraps an integer into `t`'s range. bool maps nonzero to 1.
// Integers are held in int64s: u8, u16 and u32 zero-extended, u64 as its bits (a u64 past
// 2^63 is a negative int64); the functions below that order or convert them take the dtype.
double roundToFloat(DType t, double v);
int64_t wrapToInt(DType t, int64_t v);
// An integral number in (-2^63, 2^64) as held for integer dtype t, wrapped into its range.
int64_t wrapNumberToInt(DType t, double v);
// One integer or bool element in memory, in its dtype's storage format, as held in an int64.
int64_t loadInt(const void* p, DType t);
void storeInt(void* p, DType t, int64_t v);
// The integer held as `v`, of dtype t, as a double rounded to nearest (exact up to 2^53).
double intToDouble(DType t, int64_t v);
// a < b for integers of dtype t (unsigned order for the unsigned dtypes).
bool intLess(DType t, int64_t a, int64_t b);
// Shifts of an integer of dtype t by n, as every device computes them: a count outside
// [0, bits) shifts every bit out (shl and the logical shr give 0, the arithmetic shr the sign).
int64_t shiftLeft(DType t, int64_t a, int64_t n);
int64_t shiftRight(DType t, int64_t a, int64_t n);         // arithmetic; logical for unsigned t
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
