#include "lower/spirv/print_kernel_ir.hpp"

#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>

#include "ir/error.hpp"
#include "lower/math/float8.hpp"
#include "lower/spirv/spirv_builder.hpp"
#include "lower/spirv/spirv_math.hpp"

namespace tj::spirv {

namespace {

using gpu::attr;
using gpu::intAttr;
using gpu::KAttrValue;
using gpu::number;
using gpu::strAttr;
using gpu::KBlock;
using gpu::KInst;
using gpu::KOp;
using gpu::Reg;

[[noreturn]] void unsupported(const std::string& what) { throw Error("spirv: unsupported: " + what); }


// The bit layout of the float types computed in (f16 and bf16 compute in f32 for fmod).
struct FloatFormat {
  int bytes, mantissaBits, bias;
};
FloatFormat formatOf(DType t) { return t == DType::f64 ? FloatFormat{8, 52, 1023} : FloatFormat{4, 23, 127}; }

class Printer {
 public:
  using Values = std::vector<Id>;

  Printer(const gpu::KernelFunction& f, int64_t maxSharedBytes)
      : f_(f), maxSharedBytes_(maxSharedBytes), ids_(f.regTypes.size(), 0), u32_(m_.typeInt(32, false)),
        i64_(m_.typeInt(64, true)), bool_(m_.typeBool()) {}

  Words print() {
    m_.capability(Capability::Shader);
    m_.capability(Capability::Int64);
    declareBuffers();
    declareShared();
    Id voidT = m_.typeVoid();
    Id fn = m_.beginFunction(voidT, m_.typeFunction(voidT));
    m_.entryPoint(fn, "main", uint32_t(f_.workgroupSize));
    m_.label(m_.newLabel());
    countLoopsFrom0();
    block(f_.body);
    reportLoopLimit();
    m_.returnVoid();
    m_.endFunction();
    return m_.words();
  }

 private:
  // ---- types and constants ----

  // A register's type. bf16 values are held as f32 values that are exactly bf16: every op
  // producing one rounds (roundBF16), so arithmetic runs in f32 like the host's. The 8-bit
  // floats live in f32s too (only casts produce them).
  Id type(DType t) {
    switch (t) {
      case DType::f32: case DType::bf16: case DType::f8e4m3: case DType::f8e5m2: return m_.typeFloat(32);
      case DType::f64: m_.capability(Capability::Float64); return m_.typeFloat(64);
      case DType::f16: m_.capability(Capability::Float16); return m_.typeFloat(16);
      case DType::boolean: return m_.typeBool();
      default:  // integers: signed types whatever the dtype, whose ops say how bits are read
        if (dtypeBytes(t) == 8) return i64_;
        if (dtypeBytes(t) == 1) m_.capability(Capability::Int8);
        if (dtypeBytes(t) == 2) m_.capability(Capability::Int16);
        return m_.typeInt(uint32_t(8 * dtypeBytes(t)), true);
    }
  }
  // Bytes of a register of dtype t (bf16 and the 8-bit floats live in an f32).
  static int registerBytes(DType t) { return t == DType::bf16 || isFloat8(t) ? 4 : dtypeBytes(t); }

  // The unsigned integer of `bytes` bytes: how memory holds every dtype.
  Id uint(int bytes) {
    if (bytes == 1) m_.capability(Capability::Int8);
    if (bytes == 2) m_.capability(Capability::Int16);
    return m_.typeInt(uint32_t(bytes * 8), false);
  }
  Id uconst(int bytes, uint64_t v) {
    return m_.constant(uint(bytes), bytes == 8 ? v : v & ((uint64_t{1} << bytes * 8) - 1));
  }

  Id constant(DType t, double v) {
    switch (t) {
      case DType::f32: return m_.constant(type(t), std::bit_cast<uint32_t>(float(v)));
      case DType::f64: return m_.constant(type(t), std::bit_cast<uint64_t>(v));
      case DType::f16: return m_.constant(type(t), floatToHalf(float(roundToFloat(t, v))));
      case DType::bf16: case DType::f8e4m3: case DType::f8e5m2:
        return m_.constant(type(t), std::bit_cast<uint32_t>(float(roundToFloat(t, v))));
      default: return intConstant(t, saturateToInt(t, v));
    }
  }
  Id intConstant(DType t, int64_t v) {
    if (t == DType::boolean) return m_.constBool(v != 0);
    if (dtypeBytes(t) == 8) return m_.constant(type(t), uint64_t(v));
    int unused = 64 - 8 * dtypeBytes(t);  // the register type is signed: its literal is sign-extended to a word
    return m_.constant(type(t), uint32_t(static_cast<int64_t>(static_cast<uint64_t>(v) << unused) >> unused));
  }
  // An attribute's value in dtype t; integers exactly, even beyond 2^53.
  Id constantOf(DType t, const KAttrValue& v) {
    if (!isFloat(t) && std::holds_alternative<int64_t>(v)) return intConstant(t, std::get<int64_t>(v));
    return constant(t, number(v));
  }

  DType dtypeOf(Reg r) const { return f_.regTypes.at(size_t(r)); }
  Id id(Reg r) const { return ids_.at(size_t(r)); }

  // ---- memory representation ----

  // A value as the unsigned integer memory holds for dtype t: bool one byte 0 or 1, bf16
  // its 16 bits, the 8-bit floats their codes, every other dtype its own bits.
  Id toMemory(DType t, Id v) {
    Id U = uint(dtypeBytes(t));
    if (t == DType::boolean) return m_.select(U, v, uconst(1, 1), uconst(1, 0));
    if (isFloat8(t)) {
      SpirvMath e(m_, 32);
      return m_.op(Op::UConvert, U, {m_.op(Op::Bitcast, u32_, {math::f32ToFloat8(e, t, v)})});
    }
    if (t == DType::bf16) {  // the high half of its f32
      Id high = m_.op(Op::ShiftRightLogical, u32_, {bitsOf(t, v), m_.constU32(16)});
      return m_.op(Op::UConvert, U, {high});
    }
    return m_.op(Op::Bitcast, U, {v});
  }
  Id fromMemory(DType t, Id bits) {
    if (t == DType::boolean) return m_.op(Op::INotEqual, bool_, {bits, uconst(1, 0)});
    if (isFloat8(t)) {
      SpirvMath e(m_, 32);
      Id code = m_.op(Op::Bitcast, m_.typeInt(32, true), {m_.op(Op::UConvert, u32_, {bits})});
      return math::float8ToF32(e, t, code);
    }
    if (t == DType::bf16) {
      Id high = m_.op(Op::ShiftLeftLogical, u32_, {m_.op(Op::UConvert, u32_, {bits}), m_.constU32(16)});
      return m_.op(Op::Bitcast, type(t), {high});
    }
    return m_.op(Op::Bitcast, type(t), {bits});
  }
  // A float register's bits as an unsigned integer of its width.
  Id bitsOf(DType t, Id v) { return m_.op(Op::Bitcast, uint(registerBytes(t)), {v}); }

  // Whether any of the bools holds.
  Id any(std::initializer_list<Id> conditions) {
    Id r = 0;
    for (Id c : conditions) r = r ? m_.op(Op::LogicalOr, bool_, {r, c}) : c;
    return r;
  }

  // ---- interface ----

  // Tensors as arrays of unsigned integers of their element's width (see toMemory).
  void declareBuffers() {
    for (size_t p = 0; p < f_.params.size(); ++p) {
      const gpu::KParam& param = f_.params[p];
      if (param.kind != gpu::KParam::Kind::buffer) continue;
      int bytes = dtypeBytes(param.dtype);
      if (bytes == 1) m_.capability(Capability::StorageBuffer8BitAccess);
      if (bytes == 2) m_.capability(Capability::StorageBuffer16BitAccess);
      buffers_[int64_t(p)] = m_.storageBuffer(uint(bytes), uint32_t(bytes), 0, uint32_t(param.number));
    }
    if (pushConstantBytes(f_)) {
      paramsClass_ = StorageClass::PushConstant;
      params_ = m_.pushConstantArray(i64_, 8, uint32_t(f_.params.size()));
    } else {
      params_ = m_.storageBuffer(i64_, 8, 0, paramsBinding(f_)).variable;
    }
  }

  // Workgroup memory: one array of unsigned integers per element width, since typed arrays
  // cannot alias without VK_KHR_workgroup_memory_explicit_layout. The array of width w spans
  // the bytes from the lowest offset of that width's allocations to their largest end, so
  // allocations of one width overlap as the kernel IR planned them, and widths whose ranges
  // are disjoint (a reduction's values and indices) take no more than it budgeted. Ranges of
  // different widths that overlap get separate storage; where that exceeds maxSharedBytes_
  // the kernel is unsupported rather than over the device's limit.
  void declareShared() {
    std::map<int, std::pair<int64_t, int64_t>> spans;  // byte ranges by width
    for (const gpu::SharedAlloc& a : f_.shared) {
      int w = dtypeBytes(a.dtype);
      if (a.offset % w)
        unsupported("workgroup memory of " + std::string(dtypeName(a.dtype)) + " at an unaligned offset");
      auto [it, added] = spans.try_emplace(w, a.offset, a.offset + a.bytes);
      it->second = {std::min(it->second.first, a.offset), std::max(it->second.second, a.offset + a.bytes)};
    }
    int64_t bytes = 0;
    for (auto [w, span] : spans) bytes += span.second - span.first;
    if (bytes > maxSharedBytes_)
      unsupported(std::to_string(bytes) + " bytes of workgroup memory as one array per element width (" +
                  std::to_string(maxSharedBytes_) + " available)");
    for (auto [w, span] : spans) {
      Id array = m_.typeArray(uint(w), uint32_t((span.second - span.first + w - 1) / w));
      shared_[w] = {m_.variable(m_.typePointer(StorageClass::Workgroup, array), StorageClass::Workgroup), span.first};
    }
  }

  Id builtIn(BuiltIn b, bool vector) {
    auto [it, added] = builtIns_.try_emplace(uint32_t(b), 0);
    if (added) it->second = m_.builtInInput(b, vector ? m_.typeVector(u32_, 3) : u32_);
    return it->second;
  }
  Id builtInI32(BuiltIn b) { return m_.op(Op::Bitcast, type(DType::i32), {m_.load(u32_, builtIn(b, false))}); }
  Id builtInAxis(BuiltIn b, int64_t axis) {
    if (axis < 0 || axis > 2) unsupported("grid axis " + std::to_string(axis));
    Id uvec3 = m_.typeVector(u32_, 3);
    Id x = m_.op(Op::CompositeExtract, u32_, {m_.load(uvec3, builtIn(b, true)), uint32_t(axis)});
    return m_.op(Op::Bitcast, i64_, {m_.op(Op::UConvert, uint(8), {x})});
  }

  // A parameter's slot, decoded by the parameter's dtype then cast to the register's: an f64
  // scalar's slot holds the double's bits, other float scalars an f32's bits in the low word.
  Id param(int64_t index, DType to) {
    const gpu::KParam& p = f_.params.at(size_t(index));
    Id ptr = m_.typePointer(paramsClass_, i64_);
    Id slot = m_.load(i64_, m_.accessChain(ptr, params_, {m_.constU32(0), m_.constU32(uint32_t(index))}));
    DType from = p.kind == gpu::KParam::Kind::scalar ? p.dtype : DType::i64;
    if (from == DType::f64) return cast(m_.op(Op::Bitcast, type(from), {slot}), from, to);
    if (isFloat(from)) {
      Id bits = m_.op(Op::SConvert, type(DType::i32), {slot});
      return cast(m_.op(Op::Bitcast, type(DType::f32), {bits}), DType::f32, to);
    }
    return cast(slot, DType::i64, to);
  }

  // ---- rounding ----

  Id arith(Op op, DType t, Id a, Id b) {
    Id r = m_.op(op, type(t), {a, b});
    if (isFloat(t)) m_.decorate(r, Decoration::NoContraction);  // no fusing into FMA: results must match the host's
    return r;
  }

  // An f32 (or bf16 register) rounded to bf16, to nearest even, NaN kept quiet (ir/dtype's floatToBF16).
  Id roundBF16(Id f) {
    Id bits = bitsOf(DType::f32, f);
    Id lsb = m_.op(Op::BitwiseAnd, u32_, {m_.op(Op::ShiftRightLogical, u32_, {bits, m_.constU32(16)}), m_.constU32(1)});
    Id rounded = m_.op(Op::IAdd, u32_, {bits, m_.op(Op::IAdd, u32_, {lsb, m_.constU32(0x7fff)})});
    Id quiet = m_.op(Op::BitwiseOr, u32_, {bits, m_.constU32(0x400000)});
    Id chosen = m_.select(u32_, m_.op(Op::IsNan, bool_, {f}), quiet, rounded);
    return m_.op(Op::Bitcast, type(DType::f32), {m_.op(Op::BitwiseAnd, u32_, {chosen, m_.constU32(0xffff0000u)})});
  }

  // f rounded to odd instead of to nearest: where f is inexact with an even last bit, the
  // neighbor toward the exact value. A later rounding to 16 bits is then the only one.
  Id nudgeToOdd(Id f, Id inexact, Id roundedAway) {
    Id bits = bitsOf(DType::f32, f);
    Id even = m_.op(Op::IEqual, bool_, {m_.op(Op::BitwiseAnd, u32_, {bits, m_.constU32(1)}), m_.constU32(0)});
    Id odd = m_.select(u32_, roundedAway, m_.op(Op::ISub, u32_, {bits, m_.constU32(1)}),
                       m_.op(Op::IAdd, u32_, {bits, m_.constU32(1)}));
    Id nudge = m_.op(Op::LogicalAnd, bool_, {inexact, even});
    return m_.op(Op::Bitcast, type(DType::f32), {m_.select(u32_, nudge, odd, bits)});
  }

  Id roundToOddF32(Id d) {
    Id F = type(DType::f32), D = type(DType::f64);
    Id f = m_.op(Op::FConvert, F, {d});
    Id back = m_.op(Op::FConvert, D, {f});
    Id inexact = m_.op(Op::FOrdNotEqual, bool_, {back, d});  // false for NaN
    Id away = m_.op(Op::FOrdGreaterThan, bool_, {m_.ext(GlslOp::FAbs, D, {back}), m_.ext(GlslOp::FAbs, D, {d})});
    return nudgeToOdd(f, inexact, away);
  }

  // An integer of 32 or 64 bits as an f32 rounded to odd, through its magnitude as an unsigned integer.
  Id intToOddF32(Id x, DType from) {
    int bytes = dtypeBytes(from);
    Id U = uint(bytes), F = type(DType::f32);
    Id negative = isUnsigned(from) ? m_.constBool(false) : compare("lt", from, x, constant(from, 0));
    Id magnitude = m_.op(Op::Bitcast, U, {m_.select(type(from), negative, m_.op(Op::SNegate, type(from), {x}), x)});
    Id f = m_.op(Op::ConvertUToF, F, {magnitude});
    // An unsigned magnitude near 2^bits rounds up to 2^bits, which does not convert back
    // (undefined): that f is inexact and rounded away.
    Id over = compare("ge", DType::f32, f, constant(DType::f32, std::ldexp(1.0, 8 * bytes)));
    Id back = m_.op(Op::ConvertFToU, U, {m_.select(F, over, constant(DType::f32, 0), f)});
    Id odd = nudgeToOdd(f, any({over, m_.op(Op::INotEqual, bool_, {back, magnitude})}),
                        any({over, m_.op(Op::UGreaterThan, bool_, {back, magnitude})}));
    return m_.select(F, negative, m_.op(Op::FNegate, F, {odd}), odd);
  }

  // ---- casts, each rounding once as the interpreter does ----

  Id cast(Id x, DType from, DType to) {
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

  Id zeroExtend(Id x, DType from, DType to) {
    return m_.op(Op::Bitcast, type(to), {m_.op(Op::UConvert, uint(dtypeBytes(to)), {m_.op(Op::Bitcast, uint(dtypeBytes(from)), {x})})});
  }

  // Widening by zero-extending, then shifting the sign bit up and back. lavapipe miscompiled
  // OpSConvert i32 -> i64 of a negative value feeding a signed compare (the compare saw a
  // positive number), so a gather at coordinate -2 read inside the tensor.
  Id signExtend(Id x, DType from, DType to) {
    Id wide = zeroExtend(x, from, to);
    Id shift = constant(to, double(8 * (dtypeBytes(to) - dtypeBytes(from))));
    return m_.op(Op::ShiftRightArithmetic, type(to), {m_.op(Op::ShiftLeftLogical, type(to), {wide, shift}), shift});
  }

  // f64 to f16, bf16 or an 8-bit float goes through an f32 rounded to odd: one rounding in all.
  Id floatToFloat(Id x, DType from, DType to) {
    if (isFloat8(from)) from = DType::f32;  // held exactly in an f32
    if (from == DType::f64 && to != DType::f32) x = roundToOddF32(x), from = DType::f32;
    if (isFloat8(to)) return roundFloat8(to, from == DType::f16 ? m_.op(Op::FConvert, type(DType::f32), {x}) : x);
    if (to == DType::bf16) return roundBF16(from == DType::f16 ? m_.op(Op::FConvert, type(DType::f32), {x}) : x);
    return type(from) == type(to) ? x : m_.op(Op::FConvert, type(to), {x});
  }

  // An f32 rounded to 8-bit float t, held in an f32.
  Id roundFloat8(DType t, Id f) { return fromMemory(t, toMemory(t, f)); }

  // Toward zero, NaN to 0, saturating at the range (OpConvertFToS/U is undefined outside it).
  Id floatToInt(Id x, DType from, DType to) {
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

  // Integers of 16 bits or more to f16/bf16/f8 through an f32 rounded to odd. 8 bits are exact in
  // every float type but the 8-bit ones (in the f32 holding a bf16 too), and f32 and f64 targets
  // round once.
  Id intToFloat(Id x, DType from, DType to) {
    if (isFloat8(to))  // 8 bits are exact in an f32, wider integers rounded to odd
      return roundFloat8(to, dtypeBytes(from) == 1 ? intToFloat(x, from, DType::f32) : intToOddF32(x, from));
    if (dtypeBytes(from) == 1 || to == DType::f32 || to == DType::f64) {
      if (!isUnsigned(from)) return m_.op(Op::ConvertSToF, type(to), {x});
      return m_.op(Op::ConvertUToF, type(to), {m_.op(Op::Bitcast, uint(dtypeBytes(from)), {x})});
    }
    return floatToFloat(intToOddF32(x, from), DType::f32, to);
  }

  // ---- arithmetic ----

  // bf16 results round after computing in f32: for + - * / sqrt the double rounding is
  // harmless (24 bits >= 2 * 8 + 2), and other functions round their f32 result once.
  Id unary(const std::string& fn, DType t, Id x) {
    Id r = unaryInRegister(fn, t, x);
    return t == DType::bf16 ? roundBF16(r) : r;
  }
  Id binary(const std::string& fn, DType t, Id a, Id b) {
    Id r = binaryInRegister(fn, t, a, b);
    return t == DType::bf16 ? roundBF16(r) : r;
  }

  Id unaryInRegister(const std::string& fn, DType t, Id x) {
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

  // fn from lower/math/accurate_math.cpp (spirv_math.hpp), never GLSL's loosely specified
  // builtins; f16 and bf16 are computed in f32 and rounded again (within 1 ulp of them). 0
  // where it has no version.
  Id accurate(const std::string& fn, DType t, Id x) {
    if (t == DType::f64) return accurateUnary(m_, fn, 64, x);
    Id r = accurateUnary(m_, fn, 32, cast(x, t, DType::f32));
    return r ? cast(r, DType::f32, t) : 0;
  }

  // max/min as the interpreter: NaN if either is (a + b); of two equal values max takes
  // the one without a sign bit (+0 over -0) and min the one with it.
  Id minMax(bool isMax, DType t, Id a, Id b) {
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
  Id signBit(DType t, Id x) { return m_.op(Op::UGreaterThanEqual, bool_, {bitsOf(t, x), signMask(t)}); }
  Id signMask(DType t) {
    int bytes = registerBytes(t);
    return uconst(bytes, uint64_t{1} << (bytes * 8 - 1));
  }

  // Truncating division; x / -1 is -x (wrapping, where OpSDiv is undefined) and x % -1 is 0.
  // A zero divisor gives 0, as the CPU backend does; the kernel IR reports the fault.
  Id intDivision(bool isDiv, DType t, Id a, Id b) {
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

  // A shift by a count outside [0, width) (undefined in SPIR-V) shifts every bit out:
  // shl and shru give 0 and shr the sign.
  Id shift(const std::string& fn, DType t, Id a, Id count) {
    Id T = type(t), width = constant(t, dtypeBytes(t) * 8);
    Id outside = m_.op(Op::UGreaterThanEqual, bool_, {count, width});
    if (fn != "shr" || isUnsigned(t)) {
      Op op = fn == "shl" ? Op::ShiftLeftLogical : Op::ShiftRightLogical;
      return m_.select(T, outside, constant(t, 0), m_.op(op, T, {a, count}));
    }
    Id last = constant(t, dtypeBytes(t) * 8 - 1);
    return m_.op(Op::ShiftRightArithmetic, T, {a, m_.select(T, outside, last, count)});
  }

  Id binaryInRegister(const std::string& fn, DType t, Id a, Id b) {
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

  // ---- fmod ----

  // C's fmod, exactly: drivers' OpFRem is x - y * trunc(x / y), wrong for large quotients,
  // infinite divisors and signed zeros. f16 and bf16 compute in f32 (the result is exact).
  Id floatRemainder(DType t, Id a, Id b) {
    DType c = t == DType::f64 ? DType::f64 : DType::f32;
    return cast(fmod(c, cast(a, t, c), cast(b, t, c)), c, t);
  }

  // |x| loses the largest |y| * 2^k not above it, one exact subtraction per step (Sterbenz:
  // the subtrahend is at least half the remainder), so the remainder halves each time:
  // fewer than 2 * bias + mantissa bits + 1 steps (278 for f32, 2099 for f64), a bound the
  // loop also keeps so that a driver flushing subnormals cannot make it spin. The result
  // has x's sign, NaN where C's has.
  Id fmod(DType t, Id x, Id y) {
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

  // r - ay * 2^k for the largest k keeping it >= 0, given r >= ay > 0.
  Id fmodStep(DType t, Id r, Id ay) {
    Id I = type(DType::i32);
    Id k = m_.op(Op::ISub, I, {exponentOf(t, r), exponentOf(t, ay)});
    Id half = scale(t, ay, m_.op(Op::ISub, I, {k, m_.constI32(1)}));  // in (r / 4, r)
    Id twice = arith(Op::FMul, t, half, constant(t, 2));              // inf where it overflows
    Id d = m_.select(type(t), compare("le", t, twice, r), twice, half);
    d = m_.select(type(t), m_.op(Op::IEqual, bool_, {k, m_.constI32(0)}), ay, d);
    return arith(Op::FSub, t, r, d);
  }

  // The biased exponent of v > 0 as an i32, for subnormals what it would be normalized.
  Id exponentOf(DType t, Id v) {
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

  // v * 2^e for 0 <= e < 3 * bias, in three exact power-of-two factors each within range.
  Id scale(DType t, Id v, Id e) {
    Id I = type(DType::i32);
    Id third = m_.op(Op::SDiv, I, {e, m_.constI32(3)});
    Id rest = m_.op(Op::ISub, I, {e, m_.op(Op::IMul, I, {third, m_.constI32(2)})});
    Id p = powerOfTwo(t, third);
    return arith(Op::FMul, t, arith(Op::FMul, t, arith(Op::FMul, t, v, p), p), powerOfTwo(t, rest));
  }
  Id powerOfTwo(DType t, Id e) {
    FloatFormat f = formatOf(t);
    DType it = f.bytes == 8 ? DType::i64 : DType::i32;
    Id biased = m_.op(Op::IAdd, type(it), {cast(e, DType::i32, it), constant(it, f.bias)});
    Id bits = m_.op(Op::ShiftLeftLogical, type(it), {biased, constant(it, f.mantissaBits)});
    return m_.op(Op::Bitcast, type(t), {bits});
  }

  // `t` is the operands' dtype. Float `ne` is unordered: NaN != NaN, as on the host.
  Id compare(const std::string& pred, DType t, Id a, Id b) {
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

  // ---- memory ----

  // if (pred) { body(); } with body's value, or `otherwise` where pred is false.
  template <class Body>
  Id predicated(Id pred, DType t, Id otherwise, Body body) {
    Id before = m_.currentBlock(), then = m_.newLabel(), merge = m_.newLabel();
    m_.selectionMerge(merge);
    m_.branchConditional(pred, then, merge);
    m_.label(then);
    Id value = body();
    Id thenEnd = m_.currentBlock();
    m_.branch(merge);
    m_.label(merge);
    return otherwise ? m_.phi(type(t), {{value, thenEnd}, {otherwise, before}}) : 0;
  }

  const Module::Buffer& bufferOf(const KInst& i) {
    if (i.op != KOp::atomic_global && intAttr(i, "vec") != 1) unsupported(std::string(gpu::kopName(i.op)) + " with vec > 1");
    auto it = buffers_.find(intAttr(i, "buffer"));
    if (it == buffers_.end()) unsupported("buffer attribute naming no buffer parameter");
    return it->second;
  }
  DType bufferDType(const KInst& i) { return f_.params.at(size_t(intAttr(i, "buffer"))).dtype; }

  Id element(const Module::Buffer& b, Id index) {
    return m_.accessChain(b.elementPointer, b.variable, {m_.constU32(0), index});
  }

  void loadGlobal(const KInst& i) {
    const Module::Buffer& b = bufferOf(i);
    DType t = dtypeOf(i.results[0]), stored = bufferDType(i);
    Id fill = constantOf(t, attr(i, "fill"));
    ids_[size_t(i.results[0])] = predicated(id(i.operands[1]), t, fill, [&] {
      Id raw = m_.load(uint(dtypeBytes(stored)), element(b, id(i.operands[0])));
      return cast(fromMemory(stored, raw), stored, t);
    });
  }

  void storeGlobal(const KInst& i) {
    const Module::Buffer& b = bufferOf(i);
    DType t = dtypeOf(i.operands[2]), stored = bufferDType(i);
    predicated(id(i.operands[1]), t, 0, [&] {
      m_.store(element(b, id(i.operands[0])), toMemory(stored, cast(id(i.operands[2]), t, stored)));
      return Id(0);
    });
  }

  // On the element's bits as an unsigned integer of its width: max/min are signed by their
  // opcode, and f32 exchange moves bits. f32 add goes through a float view of the same
  // binding (SPV_EXT_shader_atomic_float_add; a device without it refuses the module).
  void atomicGlobal(const KInst& i) {
    const Module::Buffer& b = bufferOf(i);
    DType t = dtypeOf(i.results[0]);
    const std::string& fn = strAttr(i, "fn");
    if (t == DType::f32 && fn == "add") return atomicFloatAdd(i);
    if (isFloat(t) && dtypeBytes(t) == 2) return atomicHalf(i);
    if (isFloat(t) && fn != "xchg") return atomicByCompareExchange(i);
    static const std::map<std::string, Op> kOps = {
        {"add", Op::AtomicIAdd}, {"max", Op::AtomicSMax}, {"min", Op::AtomicSMin}, {"xchg", Op::AtomicExchange}};
    static const std::map<std::string, Op> kUnsigned = {{"max", Op::AtomicUMax}, {"min", Op::AtomicUMin}};
    if (dtypeBytes(t) == 8) m_.capability(Capability::Int64Atomics);
    Id U = uint(dtypeBytes(t)), scope = m_.constU32(uint32_t(Scope::Device));
    Id ordered = m_.constU32(semantics::kAcquireRelease | semantics::kUniformMemory);
    auto bits = [&](Reg r) { return m_.op(Op::Bitcast, U, {id(r)}); };
    ids_[size_t(i.results[0])] = predicated(id(i.operands[1]), t, constant(t, 0), [&] {
      Id at = element(b, id(i.operands[0])), old;
      if (fn == "cas") {
        Id unequal = m_.constU32(semantics::kAcquire | semantics::kUniformMemory);
        old = m_.op(Op::AtomicCompareExchange, U, {at, scope, ordered, unequal, bits(i.operands[2]), bits(i.operands[3])});
      } else {
        const auto& ops = isUnsigned(t) && kUnsigned.count(fn) ? kUnsigned : kOps;
        auto it = ops.find(fn);
        if (it == ops.end()) unsupported("atomic " + fn);
        old = m_.op(it->second, U, {at, scope, ordered, bits(i.operands[2])});
      }
      return m_.op(Op::Bitcast, type(t), {old});
    });
  }

  // The compare-exchange loop of the atomics SPIR-V lacks: from a guess of 0 for the bits at
  // `at` (a wrong guess costs one exchange that writes nothing), swaps in update(old bits)
  // until the bits compared are the ones in memory, and returns them. Lanes whose pred is
  // false skip it. The exchanges are relaxed, with fences around the loop for acquire-release
  // ordering: lavapipe runs nothing after a loop holding an ordered atomic. Its loop limit
  // counts the slowest lane's steps.
  Id compareExchangeLoop(Id U, int bytes, Id at, Id pred, const std::function<Id(Id)>& update) {
    Id scope = m_.constU32(uint32_t(Scope::Device)), relaxed = m_.constU32(0), I = type(DType::i32);
    m_.memoryBarrier(Scope::Device, semantics::kAcquireRelease | semantics::kUniformMemory);
    Values out = whileLoop(
        {U, bool_, I}, {uconst(bytes, 0), m_.op(Op::LogicalNot, bool_, {pred}), m_.constI32(0)},
        [&](const Values& v) { return m_.op(Op::LogicalNot, bool_, {v[1]}); },
        [&](const Values& v) {
          Id seen = m_.op(Op::AtomicCompareExchange, U, {at, scope, relaxed, relaxed, update(v[0]), v[0]});
          return Values{seen, m_.op(Op::IEqual, bool_, {seen, v[0]}), m_.op(Op::IAdd, I, {v[2], m_.constI32(1)})};
        },
        /*uniform=*/false);
    countDivergentLoop(out[2]);
    m_.memoryBarrier(Scope::Device, semantics::kAcquireRelease | semantics::kUniformMemory);
    return out[0];
  }

  // Float max/min (as minMax) and f64 add, on the element's bits.
  void atomicByCompareExchange(const KInst& i) {
    DType t = dtypeOf(i.results[0]);
    const std::string& fn = strAttr(i, "fn");
    if (fn != "add" && fn != "max" && fn != "min") unsupported("atomic " + fn + " on " + std::string(dtypeName(t)));
    if (dtypeBytes(t) == 8) m_.capability(Capability::Int64Atomics);
    Id U = uint(dtypeBytes(t)), T = type(t), value = id(i.operands[2]), pred = id(i.operands[1]);
    Id seen = compareExchangeLoop(U, dtypeBytes(t), element(bufferOf(i), id(i.operands[0])), pred, [&](Id bits) {
      Id old = m_.op(Op::Bitcast, T, {bits});
      Id next = fn == "add" ? arith(Op::FAdd, t, old, value) : minMax(fn == "max", t, old, value);
      return m_.op(Op::Bitcast, U, {next});
    });
    ids_[size_t(i.results[0])] = m_.select(T, pred, m_.op(Op::Bitcast, T, {seen}), constant(t, 0));
  }

  // The instruction's buffer seen as an array of 4-byte `elementType`s, a second variable at
  // its binding: both may touch the same bytes, so neither may be assumed alone.
  const Module::Buffer& aliasedView(const KInst& i, Id elementType) {
    int64_t param = intAttr(i, "buffer");
    auto [view, fresh] = aliasedViews_.try_emplace({param, elementType});
    if (fresh) {
      view->second = m_.storageBuffer(elementType, 4, 0, uint32_t(f_.params.at(size_t(param)).number));
      m_.decorate(view->second.variable, Decoration::Aliased);
      m_.decorate(bufferOf(i).variable, Decoration::Aliased);
    }
    return view->second;
  }

  void atomicFloatAdd(const KInst& i) {
    m_.capability(Capability::AtomicFloat32AddEXT);
    m_.extension("SPV_EXT_shader_atomic_float_add");
    const Module::Buffer& floats = aliasedView(i, type(DType::f32));
    Id scope = m_.constU32(uint32_t(Scope::Device)), ordered = m_.constU32(semantics::kAcquireRelease | semantics::kUniformMemory);
    ids_[size_t(i.results[0])] = predicated(id(i.operands[1]), DType::f32, constant(DType::f32, 0), [&] {
      return m_.op(Op::AtomicFAddEXT, type(DType::f32), {element(floats, id(i.operands[0])), scope, ordered, id(i.operands[2])});
    });
  }

  // f16 and bf16, which Vulkan has no atomics for: the compare-exchange loop on the 32-bit word
  // holding the element, through a u32 view of the buffer (the device rounds buffers up to
  // whole words), computing as the elementwise ops.
  void atomicHalf(const KInst& i) {
    DType t = dtypeOf(i.results[0]);
    const std::string& fn = strAttr(i, "fn");
    if (fn == "cas") unsupported("atomic cas on " + std::string(dtypeName(t)));
    const Module::Buffer& words = aliasedView(i, u32_);
    Id I = type(DType::i64), index = id(i.operands[0]), pred = id(i.operands[1]), value = id(i.operands[2]);
    Id at = element(words, m_.op(Op::ShiftRightArithmetic, I, {index, constant(DType::i64, 1)}));
    Id odd = m_.op(Op::UConvert, u32_, {m_.op(Op::Bitcast, uint(8), {m_.op(Op::BitwiseAnd, I, {index, constant(DType::i64, 1)})})});
    Id shift = m_.op(Op::IMul, u32_, {odd, m_.constU32(16)});  // little-endian: the odd element is the high half
    Id kept = m_.op(Op::Not, u32_, {m_.op(Op::ShiftLeftLogical, u32_, {m_.constU32(0xffff), shift})});
    auto half = [&](Id word) { return fromMemory(t, m_.op(Op::UConvert, uint(2), {m_.op(Op::ShiftRightLogical, u32_, {word, shift})})); };
    Id word = compareExchangeLoop(u32_, 4, at, pred, [&](Id old) {
      Id x = half(old);
      Id next = fn == "xchg" ? value : fn == "add" ? binary("add", t, x, value) : minMax(fn == "max", t, x, value);
      Id bits = m_.op(Op::ShiftLeftLogical, u32_, {m_.op(Op::UConvert, u32_, {toMemory(t, next)}), shift});
      return m_.op(Op::BitwiseOr, u32_, {m_.op(Op::BitwiseAnd, u32_, {old, kept}), bits});
    });
    ids_[size_t(i.results[0])] = m_.select(type(t), pred, half(word), constant(t, 0));
  }

  // Element `index` of the instruction's allocation, in its width's array.
  struct SharedElement {
    Id pointer;
    DType dtype;
  };
  SharedElement sharedElement(const KInst& i, Reg index) {
    const gpu::SharedAlloc& a = f_.shared.at(size_t(intAttr(i, "alloc")));
    int w = dtypeBytes(a.dtype);
    Id idx = cast(id(index), dtypeOf(index), DType::i64);
    const SharedArray& array = shared_.at(w);
    Id at = m_.op(Op::IAdd, i64_, {idx, constant(DType::i64, double((a.offset - array.firstByte) / w))});
    return {m_.accessChain(m_.typePointer(StorageClass::Workgroup, uint(w)), array.variable, {at}), a.dtype};
  }

  void storeShared(const KInst& i) {
    if (i.operands.size() != 2) unsupported("store_shared of " + std::to_string(i.operands.size() - 1) + " values");
    SharedElement e = sharedElement(i, i.operands[0]);
    m_.store(e.pointer, toMemory(e.dtype, cast(id(i.operands[1]), dtypeOf(i.operands[1]), e.dtype)));
  }
  void atomicShared(const KInst& i) {
    SharedElement e = sharedElement(i, i.operands[0]);
    if (e.dtype != DType::i32) unsupported("atomic_shared on " + std::string(dtypeName(e.dtype)));
    Id value = bitsOf(DType::i32, cast(id(i.operands[1]), dtypeOf(i.operands[1]), DType::i32));  // the array's uint
    m_.op(Op::AtomicIAdd, uint(4), {e.pointer, m_.constU32(uint32_t(Scope::Workgroup)), m_.constU32(0), value});
  }
  Id loadShared(const KInst& i, DType t) {
    SharedElement e = sharedElement(i, i.operands[0]);
    return cast(fromMemory(e.dtype, m_.load(uint(dtypeBytes(e.dtype)), e.pointer)), e.dtype, t);
  }

  // ---- subgroups and loops ----

  Id subgroupScope() { return m_.constU32(uint32_t(Scope::Subgroup)); }

  // Whole-subgroup sums and integer max/min use the driver's operations; float max/min go
  // through binary() (the drivers' FMax/FMin may drop NaN and order zeros either way), and
  // bf16 rounds the f32 sum once.
  Id subgroupReduce(const KInst& i) {
    DType t = dtypeOf(i.operands[0]);
    const std::string& fn = strAttr(i, "fn");
    static const std::map<std::string, Op> kInt = {
        {"add", Op::GroupNonUniformIAdd}, {"max", Op::GroupNonUniformSMax}, {"min", Op::GroupNonUniformSMin}};
    static const std::map<std::string, Op> kUnsigned = {
        {"add", Op::GroupNonUniformIAdd}, {"max", Op::GroupNonUniformUMax}, {"min", Op::GroupNonUniformUMin}};
    const auto& ops = isUnsigned(t) ? kUnsigned : kInt;
    auto it = ops.find(fn);
    if (it == ops.end() || t == DType::boolean)
      unsupported("subgroup_reduce " + fn + " on " + std::string(dtypeName(t)));
    int64_t cluster = intAttr(i, "cluster");
    // Butterflies for clusters, for float max/min (the driver's need not propagate NaN) and
    // for bf16 (rounded per step, as everywhere, whatever the subgroup size).
    bool butterflies = cluster != f_.subgroupSize || (isFloat(t) && fn != "add") || t == DType::bf16;
    if (butterflies) return butterfly(fn, t, id(i.operands[0]), cluster);
    return m_.subgroupReduce(isFloat(t) ? Op::GroupNonUniformFAdd : it->second, type(t), id(i.operands[0]));
  }

  // A reduction over clusters of lanes by xor shuffles: drivers may lack clustered
  // subgroup operations (lavapipe's give wrong sums).
  Id butterfly(const std::string& fn, DType t, Id x, int64_t cluster) {
    for (int64_t mask = cluster / 2; mask >= 1; mask /= 2) x = binary(fn, t, x, shuffleXor(t, x, mask));
    return x;
  }

  Id shuffleXor(DType t, Id x, int64_t mask) {
    m_.capability(Capability::GroupNonUniformShuffle);
    return m_.op(Op::GroupNonUniformShuffleXor, type(t), {subgroupScope(), x, m_.constU32(uint32_t(mask))});
  }

  // ---- the loop limit: a driver that ends loops early (f.loopIterationLimit) ----
  // The count is of loop headers, the driver's count: a loop of n iterations tests n + 1
  // times, and a masked SIMD loop reaches its end once more for the failing test.
  void countLoopsFrom0() {
    if (f_.loopIterationLimit <= 0) return;
    loopCount_ = m_.variable(m_.typePointer(StorageClass::Function, u32_), StorageClass::Function);
    m_.store(loopCount_, m_.constU32(0));
  }
  void countLoops(Id headers) {  // a u32
    m_.store(loopCount_, m_.op(Op::IAdd, u32_, {m_.load(u32_, loopCount_), headers}));
  }
  void countLoopHeader() {
    if (loopCount_) countLoops(m_.constU32(1));
  }
  // A loop whose trip count differs by lane (`steps` in this lane) runs on a SIMD driver
  // until its slowest lane is done, testing once more.
  void countDivergentLoop(Id steps) {
    if (!loopCount_) return;
    Id slowest = m_.subgroupReduce(Op::GroupNonUniformSMax, type(DType::i32), steps);
    countLoops(m_.op(Op::Bitcast, u32_, {m_.op(Op::IAdd, type(DType::i32), {slowest, m_.constI32(1)})}));
  }
  void reportLoopLimit() {
    if (!loopCount_) return;
    Id limit = m_.constU32(uint32_t(std::min<int64_t>(f_.loopIterationLimit, UINT32_MAX)));
    Id over = m_.op(Op::UGreaterThanEqual, bool_, {m_.load(u32_, loopCount_), limit});
    const Module::Buffer& faults = buffers_.at(f_.faultParam);
    predicated(over, DType::i32, 0, [&] {
      Id word = constant(DType::i64, double(gpu::FaultWord::loopLimit));
      m_.store(element(faults, word), toMemory(DType::i32, constant(DType::i32, 1)));
      return Id(0);
    });
  }

  // while (more(values)) values = body(values); returns the values on leaving. The header
  // holds a phi per value and the test; the continue block names the body's results with
  // the ids the phis reserved. A loop that is not `uniform` (its trip count differs by
  // lane) counts its own iterations towards the loop limit.
  Values whileLoop(const Values& types, const Values& inits, const std::function<Id(const Values&)>& more,
                   const std::function<Values(const Values&)>& body, bool uniform = true) {
    Id before = m_.currentBlock(), header = m_.newLabel(), bodyLabel = m_.newLabel(), cont = m_.newLabel(),
       merge = m_.newLabel();
    Values next, values;
    m_.branch(header);
    m_.label(header);
    for (size_t v = 0; v < types.size(); ++v) {
      next.push_back(m_.newId());
      values.push_back(m_.phi(types[v], {{inits[v], before}, {next[v], cont}}));
    }
    if (uniform) countLoopHeader();
    // The test in a block of its own after the header: it may hold control flow (a while's cond).
    Id testLabel = m_.newLabel();
    m_.loopMerge(merge, cont);
    m_.branch(testLabel);
    m_.label(testLabel);
    Id test = more(values);
    m_.branchConditional(test, bodyLabel, merge);
    m_.label(bodyLabel);
    Values updated = body(values);
    m_.branch(cont);
    m_.label(cont);
    for (size_t v = 0; v < types.size(); ++v) m_.op(Op::CopyObject, types[v], {updated.at(v)}, next[v]);
    m_.branch(header);
    m_.label(merge);
    return values;
  }

  // while (cond(carried)) carried = body(carried), each region's arguments the loop values.
  void whileInst(const KInst& i) {
    const KBlock &cond = i.regions.at(0), &body = i.regions.at(1);
    Values types, inits;
    for (size_t a = 0; a < i.operands.size(); ++a) {
      types.push_back(type(dtypeOf(i.operands[a])));
      inits.push_back(id(i.operands[a]));
    }
    auto run = [&](const KBlock& region, const Values& v) {
      for (size_t a = 0; a < v.size(); ++a) ids_[size_t(region.args[a])] = v[a];
      Values yielded;
      for (Reg r : block(region)) yielded.push_back(id(r));
      return yielded;
    };
    Values out = whileLoop(types, inits, [&](const Values& v) { return run(cond, v).at(0); },
                           [&](const Values& v) { return run(body, v); });
    for (size_t r = 0; r < i.results.size(); ++r) ids_[size_t(i.results[r])] = out[r];
  }

  // for (k = start; k < end; ++k) over the region, k and the carried registers as loop values.
  void loop(const KInst& i) {
    const KBlock& body = i.regions.at(0);
    DType kType = dtypeOf(body.args[0]);
    Values types, inits;
    for (size_t a = 0; a < body.args.size(); ++a) {
      types.push_back(type(dtypeOf(body.args[a])));
      inits.push_back(id(i.operands.at(a == 0 ? 0 : a + 1)));
    }
    Values out = whileLoop(
        types, inits, [&](const Values& v) { return compare("lt", kType, v[0], id(i.operands[1])); },
        [&](const Values& v) {
          for (size_t a = 0; a < v.size(); ++a) ids_[size_t(body.args[a])] = v[a];
          std::vector<Reg> yielded = block(body);
          Values next = {m_.op(Op::IAdd, type(kType), {v[0], constant(kType, 1)})};
          for (Reg r : yielded) next.push_back(id(r));
          return next;
        });
    for (size_t c = 0; c < i.results.size(); ++c) ids_[size_t(i.results[c])] = out.at(c + 1);
  }

  // ---- instructions ----

  std::vector<Reg> block(const KBlock& b) {
    for (const KInst& i : b.insts) {
      if (i.op == KOp::yield) return i.operands;
      inst(i);
    }
    return {};
  }

  void inst(const KInst& i) {
    switch (i.op) {
      case KOp::store_global: return storeGlobal(i);
      case KOp::atomic_global: return atomicGlobal(i);
      case KOp::load_global: return loadGlobal(i);
      case KOp::store_shared: return storeShared(i);
      case KOp::atomic_shared: return atomicShared(i);
      case KOp::barrier:
        return m_.controlBarrier(Scope::Workgroup, Scope::Workgroup,
                                 semantics::kAcquireRelease | semantics::kWorkgroupMemory);
      case KOp::for_loop: return loop(i);
      case KOp::while_loop: return whileInst(i);
      default: break;
    }
    if (i.results.size() != 1) unsupported(std::string(gpu::kopName(i.op)));
    ids_[size_t(i.results[0])] = value(i, dtypeOf(i.results[0]));
  }

  // The result of a single-result instruction of dtype `t`.
  Id value(const KInst& i, DType t) {
    const std::vector<Reg>& o = i.operands;
    Id T = type(t);
    switch (i.op) {
      case KOp::thread_id: return builtInI32(BuiltIn::LocalInvocationIndex);
      case KOp::lane_id:
        m_.capability(Capability::GroupNonUniform);
        return builtInI32(BuiltIn::SubgroupLocalInvocationId);
      case KOp::warp_id:  // the driver numbers subgroups, not necessarily by invocation index
        m_.capability(Capability::GroupNonUniform);
        return builtInI32(BuiltIn::SubgroupId);
      case KOp::workgroup_id: return cast(builtInAxis(BuiltIn::WorkgroupId, intAttr(i, "axis")), DType::i64, t);
      case KOp::workgroup_count: return cast(builtInAxis(BuiltIn::NumWorkgroups, intAttr(i, "axis")), DType::i64, t);
      case KOp::param: return param(intAttr(i, "index"), t);
      case KOp::constant: return constantOf(t, attr(i, "value"));
      case KOp::unary: return unary(strAttr(i, "fn"), t, id(o[0]));
      case KOp::binary: return binary(strAttr(i, "fn"), t, id(o[0]), id(o[1]));
      case KOp::cmp: return compare(strAttr(i, "pred"), dtypeOf(o[0]), id(o[0]), id(o[1]));
      case KOp::select: return m_.select(T, cast(id(o[0]), dtypeOf(o[0]), DType::boolean), id(o[1]), id(o[2]));
      case KOp::cast: return cast(id(o[0]), dtypeOf(o[0]), t);
      case KOp::load_shared: return loadShared(i, t);
      case KOp::shuffle_xor: return shuffleXor(t, id(o[0]), intAttr(i, "mask"));
      case KOp::shuffle_idx:
        return m_.subgroupShuffle(T, id(o[0]), m_.op(Op::Bitcast, u32_, {cast(id(o[1]), dtypeOf(o[1]), DType::i32)}));
      case KOp::subgroup_reduce: return subgroupReduce(i);
      default: unsupported(std::string(gpu::kopName(i.op)));
    }
  }

  const gpu::KernelFunction& f_;
  Id loopCount_ = 0;  // the Function variable counting loop headers, when there is a limit
  int64_t maxSharedBytes_;
  Module m_;
  std::vector<Id> ids_;  // by register
  Id u32_, i64_, bool_;
  std::map<int64_t, Module::Buffer> buffers_;
  std::map<std::pair<int64_t, Id>, Module::Buffer> aliasedViews_;  // by buffer parameter and element type
  Id params_ = 0;  // the parameter slots' variable: a push-constant block or the params buffer
  StorageClass paramsClass_ = StorageClass::StorageBuffer;
  struct SharedArray {
    Id variable;
    int64_t firstByte;  // the workgroup-memory offset of element 0
  };
  std::map<int, SharedArray> shared_;  // by element width
  std::map<uint32_t, Id> builtIns_;
};

}  // namespace

uint32_t paramsBinding(const gpu::KernelFunction& f) {
  uint32_t n = 0;
  for (const gpu::KParam& p : f.params) n += p.kind == gpu::KParam::Kind::buffer;
  return n;
}

uint32_t pushConstantBytes(const gpu::KernelFunction& f) {
  constexpr size_t kGuaranteed = 128;  // maxPushConstantsSize's minimum in the Vulkan spec
  size_t bytes = std::max<size_t>(1, f.params.size()) * 8;
  return bytes <= kGuaranteed ? uint32_t(bytes) : 0;
}

std::vector<uint32_t> printSpirv(const gpu::KernelFunction& f, int64_t maxSharedBytes) {
  return Printer(f, maxSharedBytes < 0 ? f.sharedBytes() : maxSharedBytes).print();
}

}  // namespace tj::spirv
