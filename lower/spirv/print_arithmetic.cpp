// The SPIR-V printer's arithmetic: rounding, casts (each rounding once, as the interpreter
// does), integer and float ops, and fmod.
#include "lower/spirv/printer.hpp"

namespace tj::spirv::detail {

auto Printer::arith(Op op, DType t, Id a, Id b) -> Id {
  Id r = m_.op(op, type(t), {a, b});
  if (isFloat(t)) m_.decorate(r, Decoration::NoContraction);  // no fusing into FMA: results must match the host's
  return r;
}

auto Printer::fusedMultiplyAdd(DType t, Id a, Id b, Id c) -> Id {
  if (t != DType::f32) unsupported("fma of " + std::string(dtypeName(t)) + " values (exact for f32 only)");
  const DType d = DType::f64;
  Id x = cast(a, t, d), y = cast(b, t, d), z = cast(c, t, d);
  Id product = arith(Op::FMul, d, x, y), sum = arith(Op::FAdd, d, product, z);
  Id fromZ = arith(Op::FSub, d, sum, product), fromProduct = arith(Op::FSub, d, sum, fromZ);
  Id error = arith(Op::FAdd, d, arith(Op::FSub, d, product, fromProduct), arith(Op::FSub, d, z, fromZ));
  // Inexact where the error is nonzero (NaN where the sum is not finite: left as it is); the
  // sum was rounded away from zero where the error's sign is not the sum's.
  Id zero = constant(d, 0.0);
  Id inexact = m_.op(Op::FOrdNotEqual, bool_, {error, zero});
  Id roundedAway = m_.op(Op::LogicalNotEqual, bool_, {m_.op(Op::FOrdGreaterThan, bool_, {error, zero}),
                                                      m_.op(Op::FOrdGreaterThan, bool_, {sum, zero})});
  return cast(nudgeToOdd(d, sum, inexact, roundedAway), d, t);
}

auto Printer::roundBF16(Id f) -> Id {
  Id bits = bitsOf(DType::f32, f);
  Id lsb = m_.op(Op::BitwiseAnd, u32_, {m_.op(Op::ShiftRightLogical, u32_, {bits, m_.constU32(16)}), m_.constU32(1)});
  Id rounded = m_.op(Op::IAdd, u32_, {bits, m_.op(Op::IAdd, u32_, {lsb, m_.constU32(0x7fff)})});
  Id quiet = m_.op(Op::BitwiseOr, u32_, {bits, m_.constU32(0x400000)});
  Id chosen = m_.select(u32_, m_.op(Op::IsNan, bool_, {f}), quiet, rounded);
  return m_.op(Op::Bitcast, type(DType::f32), {m_.op(Op::BitwiseAnd, u32_, {chosen, m_.constU32(0xffff0000u)})});
}

auto Printer::nudgeToOdd(DType t, Id f, Id inexact, Id roundedAway) -> Id {
  const int bytes = dtypeBytes(t);
  Id U = uint(bytes), bits = bitsOf(t, f), one = uconst(bytes, 1);
  Id even = m_.op(Op::IEqual, bool_, {m_.op(Op::BitwiseAnd, U, {bits, one}), uconst(bytes, 0)});
  Id odd = m_.select(U, roundedAway, m_.op(Op::ISub, U, {bits, one}), m_.op(Op::IAdd, U, {bits, one}));
  Id nudge = m_.op(Op::LogicalAnd, bool_, {inexact, even});
  return m_.op(Op::Bitcast, type(t), {m_.select(U, nudge, odd, bits)});
}

auto Printer::roundToOddF32(Id d) -> Id {
  Id F = type(DType::f32), D = type(DType::f64);
  Id f = m_.op(Op::FConvert, F, {d});
  Id back = m_.op(Op::FConvert, D, {f});
  Id inexact = m_.op(Op::FOrdNotEqual, bool_, {back, d});  // false for NaN
  Id away = m_.op(Op::FOrdGreaterThan, bool_, {m_.ext(GlslOp::FAbs, D, {back}), m_.ext(GlslOp::FAbs, D, {d})});
  return nudgeToOdd(DType::f32, f, inexact, away);
}

auto Printer::intToOddF32(Id x, DType from) -> Id {
  int bytes = dtypeBytes(from);
  Id U = uint(bytes), F = type(DType::f32);
  Id negative = isUnsigned(from) ? m_.constBool(false) : compare("lt", from, x, constant(from, 0));
  Id magnitude = m_.op(Op::Bitcast, U, {m_.select(type(from), negative, m_.op(Op::SNegate, type(from), {x}), x)});
  Id f = m_.op(Op::ConvertUToF, F, {magnitude});
  // An unsigned magnitude near 2^bits rounds up to 2^bits, which does not convert back
  // (undefined): that f is inexact and rounded away.
  Id over = compare("ge", DType::f32, f, constant(DType::f32, std::ldexp(1.0, 8 * bytes)));
  Id back = m_.op(Op::ConvertFToU, U, {m_.select(F, over, constant(DType::f32, 0), f)});
  Id odd = nudgeToOdd(DType::f32, f, any({over, m_.op(Op::INotEqual, bool_, {back, magnitude})}),
                      any({over, m_.op(Op::UGreaterThan, bool_, {back, magnitude})}));
  return m_.select(F, negative, m_.op(Op::FNegate, F, {odd}), odd);
}

auto Printer::cast(Id x, DType from, DType to) -> Id {
  if (from == to) return x;
  if (from == DType::boolean) return m_.select(type(to), x, constant(to, 1), constant(to, 0));
  if (to == DType::boolean)
    return m_.op(isFloat(from) ? Op::FUnordNotEqual : Op::INotEqual, bool_, {x, constant(from, 0)});
  if (isFloat(from) && isFloat(to)) return floatToFloat(x, from, to);
  if (isFloat(from)) return floatToInt(x, from, to);
  if (isFloat(to)) return intToFloat(x, from, to);
  if (dtypeBytes(to) <= dtypeBytes(from)) return type(to) == type(from) ? x : m_.op(Op::SConvert, type(to), {x});
  return isUnsigned(from) ? zeroExtend(x, from, to) : signExtend(x, from, to);
}

auto Printer::signExtend(Id x, DType from, DType to) -> Id {
  Id wide = zeroExtend(x, from, to);
  Id shift = constant(to, double(8 * (dtypeBytes(to) - dtypeBytes(from))));
  return m_.op(Op::ShiftRightArithmetic, type(to), {m_.op(Op::ShiftLeftLogical, type(to), {wide, shift}), shift});
}

auto Printer::floatToFloat(Id x, DType from, DType to) -> Id {
  if (isFloat8(from)) from = DType::f32;  // held exactly in an f32
  if (from == DType::f64 && to != DType::f32) x = roundToOddF32(x), from = DType::f32;
  if (isFloat8(to)) return roundFloat8(to, from == DType::f16 ? m_.op(Op::FConvert, type(DType::f32), {x}) : x);
  if (to == DType::bf16) return roundBF16(from == DType::f16 ? m_.op(Op::FConvert, type(DType::f32), {x}) : x);
  return type(from) == type(to) ? x : m_.op(Op::FConvert, type(to), {x});
}

auto Printer::floatToInt(Id x, DType from, DType to) -> Id {
  if (isFloat8(from)) from = DType::f32;  // held exactly in an f32
  bool isU = isUnsigned(to);
  double high = std::ldexp(1.0, dtypeBytes(to) * 8 - (isU ? 0 : 1)), low = isU ? 0 : -high;
  Id below = compare("le", from, x, constant(from, low)), above = compare("ge", from, x, constant(from, high));
  Id outside = any({below, above, m_.op(Op::IsNan, bool_, {x})});
  Id inRange = m_.select(type(from), outside, constant(from, 0), x);
  inRange = isU ? m_.op(Op::Bitcast, type(to), {m_.op(Op::ConvertFToU, uint(dtypeBytes(to)), {inRange})})
                : m_.op(Op::ConvertFToS, type(to), {inRange});
  Id r = m_.select(type(to), below, intConstant(to, saturateToInt(to, low)), inRange);
  return m_.select(type(to), above, intConstant(to, saturateToInt(to, high)), r);
}

auto Printer::intToFloat(Id x, DType from, DType to) -> Id {
  if (isFloat8(to))  // 8 bits are exact in an f32, wider integers rounded to odd
    return roundFloat8(to, dtypeBytes(from) == 1 ? intToFloat(x, from, DType::f32) : intToOddF32(x, from));
  if (dtypeBytes(from) == 1 || to == DType::f32 || to == DType::f64) {
    if (!isUnsigned(from)) return m_.op(Op::ConvertSToF, type(to), {x});
    return m_.op(Op::ConvertUToF, type(to), {m_.op(Op::Bitcast, uint(dtypeBytes(from)), {x})});
  }
  return floatToFloat(intToOddF32(x, from), DType::f32, to);
}

auto Printer::unaryInRegister(const std::string& fn, DType t, Id x) -> Id {
  Id T = type(t);
  bool fl = isFloat(t);
  auto glsl = [&](GlslOp g) { return m_.ext(g, T, {x}); };
  if (fn == "neg") return m_.op(fl ? Op::FNegate : Op::SNegate, T, {x});
  if ((fn == "abs" || fn == "relu") && isUnsigned(t)) return x;
  if (fn == "abs") return glsl(fl ? GlslOp::FAbs : GlslOp::SAbs);
  if (fn == "not") return m_.op(t == DType::boolean ? Op::LogicalNot : Op::Not, T, {x});  // bitwise on integers
  if (fn == "relu") return minMax(true, t, x, constant(t, 0));
  if (!fl) unsupported("unary " + fn + " on " + std::string(dtypeName(t)));
  if (fn == "floor" || fn == "ceil") return glsl(fn == "floor" ? GlslOp::Floor : GlslOp::Ceil);  // exact
  if (Id r = accurate(fn, t, x)) return r;
  if (fn == "sqrt") return glsl(GlslOp::Sqrt);  // f64: lower/math has an f32 version only
  unsupported("unary " + fn + " on " + std::string(dtypeName(t)) + " (lower/math has no version)");
}

auto Printer::accurate(const std::string& fn, DType t, Id x) -> Id {
  if (t == DType::f64) return accurateUnary(m_, fn, 64, x);
  Id r = accurateUnary(m_, fn, 32, cast(x, t, DType::f32));
  return r ? cast(r, DType::f32, t) : 0;
}

auto Printer::minMax(bool isMax, DType t, Id a, Id b) -> Id {
  Id T = type(t);
  Id aBetter = compare(isMax ? "gt" : "lt", t, a, b);
  if (!isFloat(t)) return m_.select(T, aBetter, a, b);
  Id negative = signBit(t, a);
  Id aTies = m_.op(Op::LogicalAnd, bool_, {m_.op(Op::FOrdEqual, bool_, {a, b}),
                                          isMax ? m_.op(Op::LogicalNot, bool_, {negative}) : negative});
  Id r = m_.select(T, any({aBetter, aTies}), a, b);
  Id nan = any({m_.op(Op::IsNan, bool_, {a}), m_.op(Op::IsNan, bool_, {b})});
  return m_.select(T, nan, arith(Op::FAdd, t, a, b), r);
}

auto Printer::intDivision(bool isDiv, DType t, Id a, Id b) -> Id {
  Id T = type(t);
  if (isUnsigned(t)) {  // on the bits as unsigned integers, which the register types are not
    Id U = uint(dtypeBytes(t)), zero = compare("eq", t, b, constant(t, 0));
    auto bits = [&](Id v) { return m_.op(Op::Bitcast, U, {v}); };
    Id q = m_.op(isDiv ? Op::UDiv : Op::UMod, U, {bits(a), bits(m_.select(T, zero, constant(t, 1), b))});
    return m_.select(T, zero, constant(t, 0), m_.op(Op::Bitcast, T, {q}));
  }
  Id zero = compare("eq", t, b, constant(t, 0)), minusOne = compare("eq", t, b, constant(t, -1));
  Id special = any({zero, minusOne});
  Id q = m_.op(isDiv ? Op::SDiv : Op::SRem, T, {a, m_.select(T, special, constant(t, 1), b)});
  Id specialValue = isDiv ? m_.select(T, zero, constant(t, 0), m_.op(Op::SNegate, T, {a})) : constant(t, 0);
  return m_.select(T, special, specialValue, q);
}

auto Printer::shift(const std::string& fn, DType t, Id a, Id count) -> Id {
  Id T = type(t), width = constant(t, dtypeBytes(t) * 8);
  Id outside = m_.op(Op::UGreaterThanEqual, bool_, {count, width});
  if (fn != "shr" || isUnsigned(t)) {
    Op op = fn == "shl" ? Op::ShiftLeftLogical : Op::ShiftRightLogical;
    return m_.select(T, outside, constant(t, 0), m_.op(op, T, {a, count}));
  }
  Id last = constant(t, dtypeBytes(t) * 8 - 1);
  return m_.op(Op::ShiftRightArithmetic, T, {a, m_.select(T, outside, last, count)});
}

auto Printer::binaryInRegister(const std::string& fn, DType t, Id a, Id b) -> Id {
  if (fn == "max" || fn == "min") return minMax(fn == "max", t, a, b);
  if (t == DType::boolean) {
    static const std::map<std::string, Op> kLogical = {
        {"and", Op::LogicalAnd}, {"or", Op::LogicalOr}, {"xor", Op::LogicalNotEqual}};
    if (auto it = kLogical.find(fn); it != kLogical.end()) return m_.op(it->second, type(t), {a, b});
    unsupported("binary " + fn + " on bool");
  }
  if (isFloat(t)) {
    if (fn == "rem") return floatRemainder(t, a, b);
    static const std::map<std::string, Op> kFloat = {
        {"add", Op::FAdd}, {"sub", Op::FSub}, {"mul", Op::FMul}, {"div", Op::FDiv}};
    if (auto it = kFloat.find(fn); it != kFloat.end()) return arith(it->second, t, a, b);
    unsupported("binary " + fn + " on " + std::string(dtypeName(t)));
  }
  if (fn == "div" || fn == "rem") return intDivision(fn == "div", t, a, b);
  if (fn == "shl" || fn == "shr" || fn == "shru") return shift(fn, t, a, b);
  static const std::map<std::string, Op> kInt = {{"add", Op::IAdd},       {"sub", Op::ISub},
                                                 {"mul", Op::IMul},       {"and", Op::BitwiseAnd},
                                                 {"or", Op::BitwiseOr},   {"xor", Op::BitwiseXor}};
  if (auto it = kInt.find(fn); it != kInt.end()) return m_.op(it->second, type(t), {a, b});
  unsupported("binary " + fn);
}

auto Printer::fmod(DType t, Id x, Id y) -> Id {
  Id T = type(t), I = type(DType::i32);
  Id ax = m_.ext(GlslOp::FAbs, T, {x}), ay = m_.ext(GlslOp::FAbs, T, {y});
  Id inf = constant(t, HUGE_VAL);
  Id special = any({m_.op(Op::IsNan, bool_, {y}), compare("eq", t, ay, constant(t, 0)),
                    m_.op(Op::LogicalNot, bool_, {compare("lt", t, ax, inf)})});
  Id divisor = m_.select(T, special, inf, ay);  // the loop then never runs
  FloatFormat f = formatOf(t);
  Id maxSteps = m_.constI32(2 * f.bias + f.mantissaBits + 1);
  Values out = whileLoop(
      {T, I}, {ax, m_.constI32(0)},
      [&](const Values& v) {
        Id more = compare("ge", t, v[0], divisor);
        return m_.op(Op::LogicalAnd, bool_, {more, compare("lt", DType::i32, v[1], maxSteps)});
      },
      [&](const Values& v) {
        return Values{fmodStep(t, v[0], divisor), m_.op(Op::IAdd, I, {v[1], m_.constI32(1)})};
      },
      /*uniform=*/false);
  countDivergentLoop(out[1]);
  Id r = out[0];
  Id U = uint(registerBytes(t));
  Id sign = m_.op(Op::BitwiseAnd, U, {bitsOf(t, x), signMask(t)});
  Id signed_ = m_.op(Op::Bitcast, T, {m_.op(Op::BitwiseOr, U, {bitsOf(t, r), sign})});
  return m_.select(T, special, constant(t, NAN), signed_);
}

auto Printer::fmodStep(DType t, Id r, Id ay) -> Id {
  Id I = type(DType::i32);
  Id k = m_.op(Op::ISub, I, {exponentOf(t, r), exponentOf(t, ay)});
  Id half = scale(t, ay, m_.op(Op::ISub, I, {k, m_.constI32(1)}));  // in (r / 4, r)
  Id twice = arith(Op::FMul, t, half, constant(t, 2));              // inf where it overflows
  Id d = m_.select(type(t), compare("le", t, twice, r), twice, half);
  d = m_.select(type(t), m_.op(Op::IEqual, bool_, {k, m_.constI32(0)}), ay, d);
  return arith(Op::FSub, t, r, d);
}

auto Printer::exponentOf(DType t, Id v) -> Id {
  FloatFormat f = formatOf(t);
  int guard = f.mantissaBits + 2;  // v * 2^guard is normal
  auto field = [&](Id x) {
    Id bits = m_.op(Op::ShiftRightLogical, uint(f.bytes), {bitsOf(t, x), uconst(f.bytes, uint64_t(f.mantissaBits))});
    if (f.bytes == 8) bits = m_.op(Op::UConvert, u32_, {bits});
    return m_.op(Op::Bitcast, type(DType::i32), {m_.op(Op::BitwiseAnd, u32_, {bits, m_.constU32(2 * f.bias + 1)})});
  };
  Id normal = field(v);
  Id scaled = m_.op(Op::ISub, type(DType::i32),
                    {field(arith(Op::FMul, t, v, constant(t, std::ldexp(1.0, guard)))), m_.constI32(guard)});
  return m_.select(type(DType::i32), m_.op(Op::IEqual, bool_, {normal, m_.constI32(0)}), scaled, normal);
}

auto Printer::scale(DType t, Id v, Id e) -> Id {
  Id I = type(DType::i32);
  Id third = m_.op(Op::SDiv, I, {e, m_.constI32(3)});
  Id rest = m_.op(Op::ISub, I, {e, m_.op(Op::IMul, I, {third, m_.constI32(2)})});
  Id p = powerOfTwo(t, third);
  return arith(Op::FMul, t, arith(Op::FMul, t, arith(Op::FMul, t, v, p), p), powerOfTwo(t, rest));
}

auto Printer::powerOfTwo(DType t, Id e) -> Id {
  FloatFormat f = formatOf(t);
  DType it = f.bytes == 8 ? DType::i64 : DType::i32;
  Id biased = m_.op(Op::IAdd, type(it), {cast(e, DType::i32, it), constant(it, f.bias)});
  Id bits = m_.op(Op::ShiftLeftLogical, type(it), {biased, constant(it, f.mantissaBits)});
  return m_.op(Op::Bitcast, type(t), {bits});
}

auto Printer::compare(const std::string& pred, DType t, Id a, Id b) -> Id {
  if (pred == "ult") {  // unsigned: 0 <= a < b for b >= 0, in one compare
    if (isFloat(t) || t == DType::boolean) unsupported("cmp ult on " + std::string(dtypeName(t)));
    return m_.op(Op::ULessThan, bool_, {a, b});
  }
  struct Ops { Op f, i, u, logical; };
  static const std::map<std::string, Ops> kOps = {
      {"lt", {Op::FOrdLessThan, Op::SLessThan, Op::ULessThan, Op::Return}},
      {"le", {Op::FOrdLessThanEqual, Op::SLessThanEqual, Op::ULessThanEqual, Op::Return}},
      {"gt", {Op::FOrdGreaterThan, Op::SGreaterThan, Op::UGreaterThan, Op::Return}},
      {"ge", {Op::FOrdGreaterThanEqual, Op::SGreaterThanEqual, Op::UGreaterThanEqual, Op::Return}},
      {"eq", {Op::FOrdEqual, Op::IEqual, Op::IEqual, Op::LogicalEqual}},
      {"ne", {Op::FUnordNotEqual, Op::INotEqual, Op::INotEqual, Op::LogicalNotEqual}}};
  auto it = kOps.find(pred);
  if (it == kOps.end()) unsupported("cmp " + pred);
  const Ops& ops = it->second;
  Op op = isFloat(t) ? ops.f : t == DType::boolean ? ops.logical : isUnsigned(t) ? ops.u : ops.i;
  if (op == Op::Return) unsupported("cmp " + pred + " on bool");
  return m_.op(op, bool_, {a, b});
}

}  // namespace tj::spirv::detail
