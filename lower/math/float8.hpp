// The 8-bit floats (f8e4m3, f8e5m2) to and from f32, as straight-line int32 and f32
// arithmetic on an emitter in f32 mode, bit for bit as ir/dtype's f8ToFloat and floatToF8
// (non-saturating, round to nearest even). Every lowering uses these: no target has 8-bit
// float conversions that all of its devices run (NVIDIA's cvt needs sm_89, SPIR-V none).
#pragma once
#include "ir/dtype.hpp"
#include "lower/math/accurate_math.hpp"

namespace tj::math {

// The f32 value of an 8-bit float whose code (0 to 255) is the int32 `code`.
MathValue float8ToF32(MathEmitter& e, DType t, MathValue code);
// An f32 rounded into 8-bit float t: its code (0 to 255) in an int32.
MathValue f32ToFloat8(MathEmitter& e, DType t, MathValue f);
// f32ToFloat8's code of f, from `saturated`: f's code (an int32) by a conversion that rounds to
// nearest even but saturates (past the largest finite value to it; a NaN to some NaN), as
// NVIDIA's cvt.rn.satfinite does. Overflow becomes t's overflow code and NaN t's NaN, with f's sign.
MathValue unsaturatedFloat8(MathEmitter& e, DType t, MathValue f, MathValue saturated);

}  // namespace tj::math
