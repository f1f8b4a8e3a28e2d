// Case labels of the ops that the dispatchers over ir::OpCode treat alike, for switches that
// name every op: the verifier, the interpreter, layout inference and both lowerings each
// dispatch in one such switch, with no default, in a file compiled with
// `#pragma GCC diagnostic error "-Wswitch"`; so an op added to ir/ops.def that one of them does not
// handle is a compile error there. A static_assert in ir.cpp checks these lists against the
// traits of ir/ops.def, where the predicates (isUnaryElementwise, ...) come from.
#pragma once
#include "ir/ir.hpp"

// clang-format off
#define TJ_UNARY_ELEMENTWISE_OPS                                                                               \
  case ::tj::ir::OpCode::neg: case ::tj::ir::OpCode::abs: case ::tj::ir::OpCode::exp:                          \
  case ::tj::ir::OpCode::exp2: case ::tj::ir::OpCode::log: case ::tj::ir::OpCode::log2:                        \
  case ::tj::ir::OpCode::sqrt: case ::tj::ir::OpCode::rsqrt: case ::tj::ir::OpCode::sin:                       \
  case ::tj::ir::OpCode::cos: case ::tj::ir::OpCode::tanh: case ::tj::ir::OpCode::sigmoid:                     \
  case ::tj::ir::OpCode::erf: case ::tj::ir::OpCode::relu: case ::tj::ir::OpCode::floor:                       \
  case ::tj::ir::OpCode::ceil: case ::tj::ir::OpCode::logical_not

#define TJ_BINARY_ELEMENTWISE_OPS                                                                              \
  case ::tj::ir::OpCode::add: case ::tj::ir::OpCode::sub: case ::tj::ir::OpCode::mul:                          \
  case ::tj::ir::OpCode::div: case ::tj::ir::OpCode::rem: case ::tj::ir::OpCode::max:                          \
  case ::tj::ir::OpCode::min: case ::tj::ir::OpCode::logical_and: case ::tj::ir::OpCode::logical_or:           \
  case ::tj::ir::OpCode::cmp: case ::tj::ir::OpCode::bit_xor: case ::tj::ir::OpCode::shl:                      \
  case ::tj::ir::OpCode::shr: case ::tj::ir::OpCode::shru

#define TJ_REDUCTION_OPS                                                                                       \
  case ::tj::ir::OpCode::reduce_sum: case ::tj::ir::OpCode::reduce_max: case ::tj::ir::OpCode::reduce_min:     \
  case ::tj::ir::OpCode::argmax: case ::tj::ir::OpCode::argmin

// Ops that only rearrange a tile's elements by its shape.
#define TJ_SHAPE_OPS                                                                                           \
  case ::tj::ir::OpCode::broadcast: case ::tj::ir::OpCode::reshape: case ::tj::ir::OpCode::permute
// clang-format on
