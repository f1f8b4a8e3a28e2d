// The SPIR-V printer (printSpirv): one class, Printer, whose steps live in print_kernel_ir.cpp
// (types, constants, the interface, instructions), print_arithmetic.cpp (rounding, casts,
// arithmetic, fmod) and print_memory.cpp (memory, subgroups, loops and their limit).
// Internal to lower/spirv.
#pragma once
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

namespace tj::spirv::detail {

using gpu::attr;
using gpu::intAttr;
using gpu::KAttrValue;
using gpu::number;
using gpu::strAttr;
using gpu::KBlock;
using gpu::KInst;
using gpu::KOp;
using gpu::Reg;

[[noreturn]] inline void unsupported(const std::string& what) { throw Unsupported("spirv: unsupported: " + what); }

// The bit layout of the float types computed in (f16 and bf16 compute in f32 for fmod).
struct FloatFormat {
  int bytes, mantissaBits, bias;
};
inline FloatFormat formatOf(DType t) { return t == DType::f64 ? FloatFormat{8, 52, 1023} : FloatFormat{4, 23, 127}; }

class Printer {
 public:
  using Values = std::vector<Id>;

  Printer(const gpu::KernelFunction& f, int64_t maxSharedBytes)
      : f_(f), maxSharedBytes_(maxSharedBytes), ids_(f.regTypes.size(), 0), u32_(m_.typeInt(32, false)),
        i64_(m_.typeInt(64, true)), bool_(m_.typeBool()) {}

  Words print();

 private:
  // ---- types and constants ----

  // A register's type. bf16 values are held as f32 values that are exactly bf16: every op
  // producing one rounds (roundBF16), so arithmetic runs in f32 like the host's. The 8-bit
  // floats live in f32s too (only casts produce them).
  Id type(DType t);
  // Bytes of a register of dtype t (bf16 and the 8-bit floats live in an f32).
  static int registerBytes(DType t) { return t == DType::bf16 || isFloat8(t) ? 4 : dtypeBytes(t); }

  // The unsigned integer of `bytes` bytes: how memory holds every dtype.
  Id uint(int bytes);
  Id uconst(int bytes, uint64_t v) {
    return m_.constant(uint(bytes), bytes == 8 ? v : v & ((uint64_t{1} << bytes * 8) - 1));
  }

  Id constant(DType t, double v);
  Id intConstant(DType t, int64_t v);
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
  Id toMemory(DType t, Id v);
  Id fromMemory(DType t, Id bits);
  // The kernel IR's pack and unpack: values' bits in a word as memory holds them, and back.
  Id pack(const KInst& i, Id T);
  void unpack(const KInst& i);
  // The kernel IR's byte_perm: each result byte chosen among the 8 bytes of two words.
  Id bytePermute(const KInst& i, Id T);
  // A float register's bits as an unsigned integer of its width.
  Id bitsOf(DType t, Id v) { return m_.op(Op::Bitcast, uint(registerBytes(t)), {v}); }

  // Whether any of the bools holds.
  Id any(std::initializer_list<Id> conditions);

  // ---- interface ----

  // Tensors as arrays of unsigned integers of their element's width (see toMemory).
  void declareBuffers();

  // Workgroup memory: one array of unsigned integers per element width, since typed arrays
  // cannot alias without VK_KHR_workgroup_memory_explicit_layout. The array of width w spans
  // the bytes from the lowest offset of that width's allocations to their largest end, so
  // allocations of one width overlap as the kernel IR planned them, and widths whose ranges
  // are disjoint (a reduction's values and indices) take no more than it budgeted. Ranges of
  // different widths that overlap get separate storage; where that exceeds maxSharedBytes_
  // the kernel is unsupported rather than over the device's limit.
  void declareShared();

  Id builtIn(BuiltIn b, bool vector);
  Id builtInI32(BuiltIn b) { return m_.op(Op::Bitcast, type(DType::i32), {m_.load(u32_, builtIn(b, false))}); }
  Id builtInAxis(BuiltIn b, int64_t axis);

  // A parameter's slot, decoded by the parameter's dtype then cast to the register's: an f64
  // scalar's slot holds the double's bits, other float scalars an f32's bits in the low word.
  Id param(int64_t index, DType to);

  // ---- rounding ----

  Id arith(Op op, DType t, Id a, Id b);

  // An f32 (or bf16 register) rounded to bf16, to nearest even, NaN kept quiet (ir/dtype's floatToBF16).
  Id roundBF16(Id f);

  // f (an f32 or f64) rounded to odd instead of to nearest: where f is inexact with an even last
  // bit, the neighbor toward the exact value. A later rounding to a narrower float is then the only one.
  Id nudgeToOdd(DType t, Id f, Id inexact, Id roundedAway);
  // The kernel IR's fma of f32 values, exactly (SPIR-V's Fma may round twice): the product is
  // exact in f64, the sum rounded to odd there (TwoSum gives its error), then once to f32.
  Id fusedMultiplyAdd(DType t, Id a, Id b, Id c);

  Id roundToOddF32(Id d);

  // An integer of 32 or 64 bits as an f32 rounded to odd, through its magnitude as an unsigned integer.
  Id intToOddF32(Id x, DType from);

  // ---- casts, each rounding once as the interpreter does ----

  Id cast(Id x, DType from, DType to);

  Id zeroExtend(Id x, DType from, DType to) {
    return m_.op(Op::Bitcast, type(to), {m_.op(Op::UConvert, uint(dtypeBytes(to)), {m_.op(Op::Bitcast, uint(dtypeBytes(from)), {x})})});
  }

  // Widening by zero-extending, then shifting the sign bit up and back. lavapipe miscompiled
  // OpSConvert i32 -> i64 of a negative value feeding a signed compare (the compare saw a
  // positive number), so a gather at coordinate -2 read inside the tensor.
  Id signExtend(Id x, DType from, DType to);

  // f64 to f16, bf16 or an 8-bit float goes through an f32 rounded to odd: one rounding in all.
  Id floatToFloat(Id x, DType from, DType to);

  // An f32 rounded to 8-bit float t, held in an f32.
  Id roundFloat8(DType t, Id f) { return fromMemory(t, toMemory(t, f)); }

  // Toward zero, NaN to 0, saturating at the range (OpConvertFToS/U is undefined outside it).
  Id floatToInt(Id x, DType from, DType to);

  // Integers of 16 bits or more to f16/bf16/f8 through an f32 rounded to odd. 8 bits are exact in
  // every float type but the 8-bit ones (in the f32 holding a bf16 too), and f32 and f64 targets
  // round once.
  Id intToFloat(Id x, DType from, DType to);

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

  Id unaryInRegister(const std::string& fn, DType t, Id x);

  // fn from lower/math/accurate_math.cpp (spirv_math.hpp), never GLSL's loosely specified
  // builtins; f16 and bf16 are computed in f32 and rounded again (within 1 ulp of them). 0
  // where it has no version.
  Id accurate(const std::string& fn, DType t, Id x);

  // max/min as the interpreter: NaN if either is (a + b); of two equal values max takes
  // the one without a sign bit (+0 over -0) and min the one with it.
  Id minMax(bool isMax, DType t, Id a, Id b);
  Id signBit(DType t, Id x) { return m_.op(Op::UGreaterThanEqual, bool_, {bitsOf(t, x), signMask(t)}); }
  Id signMask(DType t) {
    int bytes = registerBytes(t);
    return uconst(bytes, uint64_t{1} << (bytes * 8 - 1));
  }

  // Truncating division; x / -1 is -x (wrapping, where OpSDiv is undefined) and x % -1 is 0.
  // A zero divisor gives 0, as the CPU backend does; the kernel IR reports the fault.
  Id intDivision(bool isDiv, DType t, Id a, Id b);

  // A shift by a count outside [0, width) (undefined in SPIR-V) shifts every bit out:
  // shl and shru give 0 and shr the sign.
  Id shift(const std::string& fn, DType t, Id a, Id count);

  Id binaryInRegister(const std::string& fn, DType t, Id a, Id b);

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
  Id fmod(DType t, Id x, Id y);

  // r - ay * 2^k for the largest k keeping it >= 0, given r >= ay > 0.
  Id fmodStep(DType t, Id r, Id ay);

  // The biased exponent of v > 0 as an i32, for subnormals what it would be normalized.
  Id exponentOf(DType t, Id v);

  // v * 2^e for 0 <= e < 3 * bias, in three exact power-of-two factors each within range.
  Id scale(DType t, Id v, Id e);
  Id powerOfTwo(DType t, Id e);

  // `t` is the operands' dtype. Float `ne` is unordered: NaN != NaN, as on the host.
  Id compare(const std::string& pred, DType t, Id a, Id b);

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

  const Module::Buffer& bufferOf(const KInst& i);
  DType bufferDType(const KInst& i) { return f_.params.at(size_t(intAttr(i, "buffer"))).dtype; }

  Id element(const Module::Buffer& b, Id index) {
    return m_.accessChain(b.elementPointer, b.variable, {m_.constU32(0), index});
  }

  void loadGlobal(const KInst& i);

  void storeGlobal(const KInst& i);

  // On the element's bits as an unsigned integer of its width: max/min are signed by their
  // opcode, and f32 exchange moves bits. f32 add goes through a float view of the same
  // binding (SPV_EXT_shader_atomic_float_add; a device without it refuses the module).
  void atomicGlobal(const KInst& i);

  // The compare-exchange loop of the atomics SPIR-V lacks: from a guess of 0 for the bits at
  // `at` (a wrong guess costs one exchange that writes nothing), swaps in update(old bits)
  // until the bits compared are the ones in memory, and returns them. Lanes whose pred is
  // false skip it. The exchanges are relaxed, with fences around the loop for acquire-release
  // ordering: lavapipe runs nothing after a loop holding an ordered atomic. Its loop limit
  // counts the slowest lane's steps.
  Id compareExchangeLoop(Id U, int bytes, Id at, Id pred, const std::function<Id(Id)>& update);

  // Float max/min (as minMax) and f64 add, on the element's bits.
  void atomicByCompareExchange(const KInst& i);

  // The instruction's buffer seen as an array of 4-byte `elementType`s, a second variable at
  // its binding: both may touch the same bytes, so neither may be assumed alone.
  const Module::Buffer& aliasedView(const KInst& i, Id elementType);

  void atomicFloatAdd(const KInst& i);

  // f16 and bf16, which Vulkan has no atomics for: the compare-exchange loop on the 32-bit word
  // holding the element, through a u32 view of the buffer (the device rounds buffers up to
  // whole words), computing as the elementwise ops.
  void atomicHalf(const KInst& i);

  // Element `index` of the instruction's allocation, in its width's array.
  struct SharedElement {
    Id pointer;
    DType dtype;
  };
  SharedElement sharedElement(const KInst& i, Reg index);

  void storeShared(const KInst& i);
  void atomicShared(const KInst& i);
  Id loadShared(const KInst& i, DType t) {
    if (i.results.size() != 1) throw Unsupported("spirv: unsupported: a load of " + std::to_string(i.results.size()) +
                                                 " workgroup-memory elements as one access (the target's vectorBytes is 0)");
    SharedElement e = sharedElement(i, i.operands[0]);
    return cast(fromMemory(e.dtype, m_.load(uint(dtypeBytes(e.dtype)), e.pointer)), e.dtype, t);
  }

  // ---- subgroups and loops ----

  Id subgroupScope() { return m_.constU32(uint32_t(Scope::Subgroup)); }

  // Whole-subgroup sums and integer max/min use the driver's operations; float max/min go
  // through binary() (the drivers' FMax/FMin may drop NaN and order zeros either way), and
  // bf16 rounds the f32 sum once.
  Id subgroupReduce(const KInst& i);

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
  void countLoopsFrom0();
  void countLoops(Id headers) {  // a u32
    m_.store(loopCount_, m_.op(Op::IAdd, u32_, {m_.load(u32_, loopCount_), headers}));
  }
  void countLoopHeader() {
    if (loopCount_) countLoops(m_.constU32(1));
  }
  // A loop whose trip count differs by lane (`steps` in this lane) runs on a SIMD driver
  // until its slowest lane is done, testing once more.
  void countDivergentLoop(Id steps);
  void reportLoopLimit();

  // while (more(values)) values = body(values); returns the values on leaving. The header
  // holds a phi per value and the test; the continue block names the body's results with
  // the ids the phis reserved. A loop that is not `uniform` (its trip count differs by
  // lane) counts its own iterations towards the loop limit.
  Values whileLoop(const Values& types, const Values& inits, const std::function<Id(const Values&)>& more,
                   const std::function<Values(const Values&)>& body, bool uniform = true);

  // while (cond(carried)) carried = body(carried), each region's arguments the loop values.
  void whileInst(const KInst& i);

  // for (k = start; k < end; ++k) over the region, k and the carried registers as loop values.
  void loop(const KInst& i);

  // ---- instructions ----

  std::vector<Reg> block(const KBlock& b);

  void inst(const KInst& i);

  // The result of a single-result instruction of dtype `t`.
  Id value(const KInst& i, DType t);

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

}  // namespace tj::spirv::detail
