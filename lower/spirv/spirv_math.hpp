// Accurate float math as SPIR-V instruction sequences. GLSL.std.450's exp, log,
// sin, tanh... have loose precision in Vulkan (sin is only specified on [-pi, pi],
// drivers flush denormals) and no f64 versions, so kernels that must agree with the
// host within a few ulps use these instead. Their bounds (1 ulp for f32, 2 for f64,
// measured on lavapipe by tests/test_vulkan_math.cpp) assume what lavapipe gives and
// Vulkan does not promise: correctly rounded FDiv and f64 sqrt, and kept subnormals
// (no DenormPreserve mode is requested). All but the f32 exp, exp2, tanh and sigmoid
// compute in f64, so they need shaderFloat64 (modules declaring Float64 on a device
// without it run on the CPU).
#pragma once
#include <string_view>

#include "lower/spirv/spirv_builder.hpp"

namespace tj::spirv {

// `fn` (a tile-IR unary op name: exp, exp2, log, log2, sin, cos, tanh, sigmoid, erf,
// rsqrt, sqrt) of `x`, a float of `floatBits` (32 or 64) bits; 0 when this file has
// no version of fn at that width (the caller decides what to do instead).
//
// Within 1 ulp of the correctly rounded result for f32 (sqrt exact), over the whole
// range: denormals, ±0, ±inf, NaN, sin/cos of huge arguments. f64 versions within 1 ulp
// (measured) for exp, exp2, log, log2, sin, cos, erf, rsqrt and 2 for tanh, sigmoid; none
// for sqrt (0: GLSL's is exact). Every f32 function but exp, exp2, sigmoid and tanh
// computes in float64 and adds the Float64 capability, so the device needs shaderFloat64.
Id accurateUnary(Module& m, std::string_view fn, int floatBits, Id x);

}  // namespace tj::spirv
