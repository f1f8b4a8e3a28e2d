// The CPU lowering of elements: the register value of each element of a tile, fused
// into its consumer's loop nest.
#include "lower/cpu/kernel_lowering.hpp"

namespace tj::cpu::detail {

// ---------------------------------------------------------------- elements

llvm::Value* KernelLowering::element(ValueId v, const Indices& idx) {
  if (buffers_[v]) return bufferElement(buffers_[v], type(v), idx);
  if (!trueMasks_.empty() && trueMasks_.count(info_.def[v])) return b_.getTrue();
  if (type(v).isScalar()) {
    if (!scalars_[v]) throw InternalError("lower/cpu", "value %" + std::to_string(v) + " used before it was computed");
    return scalars_[v];
  }
  return computeElement(*info_.def[v], idx);
}

llvm::Value* KernelLowering::constant(DType t, const ir::Number& value) {
  const auto* exact = std::get_if<int64_t>(&value);
  if (!exact || isFloat(t)) return constant(t, exact ? double(*exact) : std::get<double>(value));
  return llvm::ConstantInt::get(compute(t), static_cast<uint64_t>(wrapToInt(t, *exact)), true);
}

llvm::Value* KernelLowering::constant(DType t, double value) {
  llvm::Type* ty = compute(t);
  if (isFloat(t)) return llvm::ConstantFP::get(ty, roundToFloat(t, value));
  return llvm::ConstantInt::get(ty, static_cast<uint64_t>(wrapNumberToInt(t, value)), true);
}

llvm::Value* KernelLowering::computeElement(const ir::Op& op, const Indices& idx) {
  const ir::Type& rt = type(op.results[0]);
  switch (op.code) {
    case OpCode::program_id: return programIds_.at(op.get(ir::attr::axis));
    case OpCode::num_programs: return grid_.at(op.get(ir::attr::axis));
    case OpCode::tensor_dim: return tensors_.at(op.get(ir::attr::tensor)).shape.at(op.get(ir::attr::axis));
    case OpCode::scalar_param: return scalarParams_.at(op.get(ir::attr::index));
    case OpCode::constant: return constant(rt.dtype, op.get(ir::attr::value));
    case OpCode::iota: return b_.CreateTrunc(idx.at(op.get(ir::attr::axis)), b_.getInt32Ty());
    case OpCode::broadcast: case OpCode::reshape: case OpCode::permute:
      return element(op.operands[0], operandIndices(op, idx));
    case OpCode::load: return loadElement(op, idx);
    case OpCode::gather: return gatherElement(op, idx);
    case OpCode::slice: {
      Indices at = idx;
      size_t axis = static_cast<size_t>(op.get(ir::attr::axis));
      at[axis] = b_.CreateAdd(idx[axis], i64(op.get(ir::attr::start)));
      return element(op.operands[0], at);
    }
    case OpCode::concat: return concatElement(op, idx);
    case OpCode::atomic: return atomicElement(op, idx);
    default: break;
  }
  // Operands first, in order, one statement each: C++ leaves the order of a call's arguments
  // open and g++ goes right to left, which put every load of a chain `acc + x0 + x1 + ...`
  // before its first add, all of them live at once (quadratic in LLVM's vectorizer).
  llvm::SmallVector<llvm::Value*, 3> x;
  for (ValueId v : op.operands) x.push_back(element(v, idx));
  switch (op.code) {
    case OpCode::cast: return cast(x[0], type(op.operands[0]).dtype, rt.dtype);
    case OpCode::select: return b_.CreateSelect(x[0], x[1], x[2]);
    case OpCode::fma: return b_.CreateIntrinsic(llvm::Intrinsic::fma, {x[0]->getType()}, {x[0], x[1], x[2]});
    case OpCode::cmp: return compare(op, x[0], x[1]);
    default: break;
  }
  if (ir::isUnaryElementwise(op.code)) return unary(op, x[0]);
  if (ir::isBinaryElementwise(op.code)) return binary(op, x[0], x[1]);
  unsupported(op, "no element-wise form");
}

// The operand element that a broadcast, reshape or permute reads for result element idx.
Indices KernelLowering::operandIndices(const ir::Op& op, const Indices& idx) {
  const ir::Shape& from = type(op.operands[0]).shape;
  const ir::Shape& to = type(op.results[0]).shape;
  Indices out(from.size());
  if (op.code == OpCode::broadcast) {
    for (size_t d = 0; d < from.size(); ++d) out[d] = from[d] == 1 ? i64(0) : idx[d];
  } else if (op.code == OpCode::permute) {
    const std::vector<int64_t>& perm = op.get(ir::attr::perm);
    for (size_t d = 0; d < perm.size(); ++d) out[static_cast<size_t>(perm[d])] = idx[d];
  } else {
    // Reshape: the row-major linear position is preserved.
    llvm::Value* linear = i64(0);
    for (size_t d = 0; d < to.size(); ++d) linear = b_.CreateAdd(b_.CreateMul(linear, i64(to[d])), idx[d]);
    for (size_t d = from.size(); d-- > 0;) {
      out[d] = from[d] == 1 ? i64(0) : b_.CreateURem(linear, i64(from[d]));
      linear = b_.CreateUDiv(linear, i64(from[d]));
    }
  }
  return out;
}

// A libm function without an LLVM intrinsic, declared pure (we never read errno)
// so the vectorizer may replace it with its libmvec version.
llvm::Value* KernelLowering::libm(const char* name, llvm::Value* x) {
  llvm::FunctionCallee callee = module_.getOrInsertFunction(name, llvm::FunctionType::get(x->getType(), {x->getType()}, false));
  auto* fn = llvm::cast<llvm::Function>(callee.getCallee());
  fn->setDoesNotAccessMemory();
  fn->setDoesNotThrow();
  fn->addFnAttr(llvm::Attribute::WillReturn);
  llvm::CallInst* call = b_.CreateCall(callee, {x});
  call->setDoesNotAccessMemory();
  return call;
}

llvm::Value* KernelLowering::unary(const ir::Op& op, llvm::Value* x) {
  DType t = type(op.results[0]).dtype;
  if (isUnsigned(t) && (op.code == OpCode::abs || op.code == OpCode::relu)) return x;
  if (!isFloat(t)) {
    switch (op.code) {
      case OpCode::neg: return b_.CreateNeg(x);
      case OpCode::abs: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
      case OpCode::relu: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, llvm::ConstantInt::get(x->getType(), 0));
      case OpCode::floor: case OpCode::ceil: return x;
      case OpCode::logical_not: return b_.CreateNot(x);  // i1: logical; wider: bitwise
      default: unsupported(op, "not defined on " + std::string(dtypeName(t)));
    }
  }
  switch (op.code) {
    case OpCode::neg: return b_.CreateFNeg(x);
    case OpCode::abs: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    case OpCode::relu: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, llvm::ConstantFP::get(x->getType(), 0.0));
    case OpCode::floor: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
    case OpCode::ceil: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
    case OpCode::sqrt: return roundToDType(b_, b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x), t);
    // The hot op of softmax and attention: inline in float, 16 lanes at a time (2 ulps).
    case OpCode::exp:
      if (t != DType::f64) return roundToDType(b_, emitFastExpF32(b_, x), t);
      break;
    // fast_exp2 (approx): attention's probabilities, held to 2^-20 relative, so the same.
    case OpCode::exp2:
      if (t != DType::f64 && op.has(ir::attr::approx) && op.get(ir::attr::approx) != 0)
        return roundToDType(b_, emitFastExp2F32(b_, x), t);
      break;
    default: break;
  }
  // Transcendentals in double, rounded once to the dtype: libm's scalar functions are
  // bit-identical to the interpreter; libmvec's vector ones (used when a loop
  // vectorizes) are within 4 double ulps, almost always the same after rounding.
  llvm::Value* d = x->getType()->isDoubleTy() ? x : b_.CreateFPExt(x, b_.getDoubleTy());
  llvm::Value* r = nullptr;
  switch (op.code) {
    case OpCode::exp: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, d); break;
    case OpCode::exp2: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp2, d); break;
    case OpCode::log: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, d); break;
    case OpCode::log2: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::log2, d); break;
    case OpCode::sin: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sin, d); break;
    case OpCode::cos: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::cos, d); break;
    case OpCode::tanh: r = libm("tanh", d); break;
    case OpCode::erf: r = libm("erf", d); break;
    case OpCode::rsqrt:
      r = b_.CreateFDiv(llvm::ConstantFP::get(b_.getDoubleTy(), 1.0), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, d));
      break;
    case OpCode::sigmoid: {
      llvm::Value* e = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, b_.CreateFNeg(d));
      r = b_.CreateFDiv(llvm::ConstantFP::get(b_.getDoubleTy(), 1.0), b_.CreateFAdd(llvm::ConstantFP::get(b_.getDoubleTy(), 1.0), e));
      break;
    }
    default: unsupported(op, "unknown unary op");
  }
  return roundToDType(b_, r, t);
}

llvm::Value* KernelLowering::binary(const ir::Op& op, llvm::Value* x, llvm::Value* y) {
  DType t = type(op.results[0]).dtype;
  if (isFloat(t)) {
    llvm::Value* r = nullptr;
    switch (op.code) {
      case OpCode::add: r = b_.CreateFAdd(x, y); break;
      case OpCode::sub: r = b_.CreateFSub(x, y); break;
      case OpCode::mul: r = b_.CreateFMul(x, y); break;
      case OpCode::div: r = b_.CreateFDiv(x, y); break;
      case OpCode::rem: r = b_.CreateFRem(x, y); break;
      case OpCode::max: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, y);
      case OpCode::min: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, y);
      default: unsupported(op, "not defined on floats");
    }
    return roundToDType(b_, r, t);
  }
  switch (op.code) {
    case OpCode::add: return b_.CreateAdd(x, y);
    case OpCode::sub: return b_.CreateSub(x, y);
    case OpCode::mul: return b_.CreateMul(x, y);
    case OpCode::max: return b_.CreateBinaryIntrinsic(intMax(t), x, y);
    case OpCode::min: return b_.CreateBinaryIntrinsic(intMin(t), x, y);
    case OpCode::logical_and: return b_.CreateAnd(x, y);
    case OpCode::logical_or: return b_.CreateOr(x, y);
    case OpCode::bit_xor: return b_.CreateXor(x, y);
    case OpCode::shl: case OpCode::shr: case OpCode::shru: {
      // A count outside [0, bits) shifts every bit out (LLVM's shifts are poison there).
      unsigned bits = x->getType()->getIntegerBitWidth();
      llvm::Value* outside = b_.CreateICmpUGE(y, llvm::ConstantInt::get(y->getType(), bits));
      llvm::Value* zero = llvm::ConstantInt::get(x->getType(), 0);
      if (op.code == OpCode::shr && !isUnsigned(t))
        return b_.CreateAShr(x, b_.CreateSelect(outside, llvm::ConstantInt::get(y->getType(), bits - 1), y));
      llvm::Value* shifted = op.code == OpCode::shl ? b_.CreateShl(x, y) : b_.CreateLShr(x, y);
      return b_.CreateSelect(outside, zero, shifted);
    }
    case OpCode::div: case OpCode::rem: {
      if (isUnsigned(t)) return unsignedDivide(op, x, y);
      // Truncating division without traps: x / 0 reports a fault and gives 0; x / -1 is -x.
      llvm::Value* zero = llvm::ConstantInt::get(y->getType(), 0);
      llvm::Value* minusOne = llvm::ConstantInt::get(y->getType(), -1, true);
      llvm::Value* isZero = b_.CreateICmpEQ(y, zero);
      llvm::Value* isMinusOne = b_.CreateICmpEQ(y, minusOne);
      llvm::Value* safe = b_.CreateSelect(b_.CreateOr(isZero, isMinusOne), llvm::ConstantInt::get(y->getType(), 1), y);
      emitIf(b_, isZero, [&] { emitFault(kFaultIntegerDivideByZero); });
      bool isDiv = op.code == OpCode::div;
      llvm::Value* q = isDiv ? b_.CreateSDiv(x, safe) : b_.CreateSRem(x, safe);
      llvm::Value* special = isDiv ? b_.CreateSelect(isZero, zero, b_.CreateNeg(x)) : zero;
      return b_.CreateSelect(b_.CreateOr(isZero, isMinusOne), special, q);
    }
    default: unsupported(op, "not defined on integers");
  }
}

// x / 0 and x % 0 report a fault and give 0.
llvm::Value* KernelLowering::unsignedDivide(const ir::Op& op, llvm::Value* x, llvm::Value* y) {
  llvm::Value* zero = llvm::ConstantInt::get(y->getType(), 0);
  llvm::Value* isZero = b_.CreateICmpEQ(y, zero);
  emitIf(b_, isZero, [&] { emitFault(kFaultIntegerDivideByZero); });
  llvm::Value* safe = b_.CreateSelect(isZero, llvm::ConstantInt::get(y->getType(), 1), y);
  llvm::Value* q = op.code == OpCode::div ? b_.CreateUDiv(x, safe) : b_.CreateURem(x, safe);
  return b_.CreateSelect(isZero, zero, q);
}

llvm::Value* KernelLowering::compare(const ir::Op& op, llvm::Value* x, llvm::Value* y) {
  const std::string& pred = op.get(ir::attr::pred);
  bool isF = x->getType()->isFloatingPointTy();
  using P = llvm::CmpInst::Predicate;
  struct Entry { const char* name; P f, i; };
  static const Entry table[] = {{"lt", P::FCMP_OLT, P::ICMP_SLT}, {"le", P::FCMP_OLE, P::ICMP_SLE},
                                {"gt", P::FCMP_OGT, P::ICMP_SGT}, {"ge", P::FCMP_OGE, P::ICMP_SGE},
                                {"eq", P::FCMP_OEQ, P::ICMP_EQ},  {"ne", P::FCMP_UNE, P::ICMP_NE}};
  for (const Entry& e : table)
    if (pred == e.name) {
      return isF ? b_.CreateFCmp(e.f, x, y) : b_.CreateICmp(intPredicate(e.i, type(op.operands[0]).dtype), x, y);
    }
  unsupported(op, "unknown predicate '" + pred + "'");
}

llvm::Value* KernelLowering::cast(llvm::Value* x, DType from, DType to) {
  if (from == to) return x;
  llvm::Type* target = compute(to);
  if (to == DType::boolean)
    return isFloat(from) ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0))
                         : b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  if (from == DType::boolean) return isFloat(to) ? b_.CreateUIToFP(x, target) : b_.CreateZExt(x, target);
  if (isFloat(from) && isFloat(to))
    return to == DType::f64 ? b_.CreateFPExt(x, target) : roundToDType(b_, x, to);
  if (isFloat(from))  // truncate toward zero, NaN -> 0, saturate
    return b_.CreateIntrinsic(isUnsigned(to) ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat,
                              {target, x->getType()}, {x});
  bool is64 = dtypeBytes(from) == 8;
  if (isFloat(to)) {
    if (to == DType::f64 || (to == DType::f32 && is64))  // one rounding
      return isUnsigned(from) ? b_.CreateUIToFP(x, target) : b_.CreateSIToFP(x, target);
    // Through double, exact up to 32 bits; 64 keep a sticky bit so the final rounding is the only one.
    if (is64) return roundToDType(b_, stickyToDouble(x, isUnsigned(from)), to);
    return roundToDType(b_, isUnsigned(from) ? b_.CreateUIToFP(x, b_.getDoubleTy()) : b_.CreateSIToFP(x, b_.getDoubleTy()), to);
  }
  return isUnsigned(from) ? b_.CreateZExtOrTrunc(x, target) : b_.CreateSExtOrTrunc(x, target);
}

// An i64 (or u64) as a double that is exact or, above 2^53, has its lost low bits folded
// into a sticky bit, so rounding it once more to 16 bits rounds correctly.
llvm::Value* KernelLowering::stickyToDouble(llvm::Value* x, bool isUnsigned) {
  llvm::Value* negative = isUnsigned ? b_.getFalse() : b_.CreateICmpSLT(x, i64(0));
  llvm::Value* magnitude = b_.CreateSelect(negative, b_.CreateNeg(x), x);  // INT64_MIN stays 2^63 unsigned
  llvm::Value* low = b_.CreateAnd(magnitude, i64(0x7ff));
  llvm::Value* jammed = b_.CreateOr(b_.CreateAnd(magnitude, i64(~int64_t{0x7ff})),
                                    b_.CreateSelect(b_.CreateICmpNE(low, i64(0)), i64(0x400), i64(0)));
  llvm::Value* large = b_.CreateICmpUGE(magnitude, i64(int64_t{1} << 53));
  llvm::Value* d = b_.CreateUIToFP(b_.CreateSelect(large, jammed, magnitude), b_.getDoubleTy());
  return b_.CreateSelect(negative, b_.CreateFNeg(d), d);
}

// Whether every coordinate lies inside `tensor`: the per-element mask of the generic nests.
// One unsigned compare per axis is 0 <= c < size, as sizes are never negative.
llvm::Value* KernelLowering::inBounds(int64_t tensor, const Indices& coords) {
  const TensorView& t = tensors_.at(tensor);
  llvm::Value* ok = b_.getTrue();
  for (size_t d = 0; d < coords.size(); ++d) ok = b_.CreateAnd(ok, b_.CreateICmpULT(coords[d], t.shape[d]));
  return ok;
}

// Unmasked through the nest's view of the block (see stageLoad), else masked element by element.
llvm::Value* KernelLowering::loadElement(const ir::Op& op, const Indices& idx) {
  int64_t tensor = op.get(ir::attr::tensor);
  DType dtype = kernel_.tensors[tensor].dtype;
  if (auto view = stagedLoads_.find(&op); view != stagedLoads_.end())
    return fromStorage(b_, b_.CreateLoad(storageType(ctx_, dtype), viewAddress(dtype, view->second, idx)), dtype);
  Indices coords;
  llvm::Value* linear = i64(0);
  for (size_t d = 0; d < idx.size(); ++d) {
    coords.push_back(b_.CreateAdd(element(op.operands[d], {}), idx[d]));
    linear = b_.CreateAdd(linear, b_.CreateMul(coords[d], tensors_.at(tensor).strides[d]));
  }
  return readElement(tensor, linear, inBounds(tensor, coords), op.get(ir::attr::fill));
}

llvm::Value* KernelLowering::gatherElement(const ir::Op& op, const Indices& idx) {
  auto [linear, inside] = indirectAddress(op, kernel_.tensors[op.get(ir::attr::tensor)].rank, idx);
  return readElement(op.get(ir::attr::tensor), linear, inside, op.get(ir::attr::fill));
}

// The operand whose range along the axis holds idx: every operand is read at idx clamped
// into it (always inside), and the right one is selected.
llvm::Value* KernelLowering::concatElement(const ir::Op& op, const Indices& idx) {
  size_t axis = static_cast<size_t>(op.get(ir::attr::axis));
  int64_t end = type(op.results[0]).shape[axis];
  llvm::Value* result = nullptr;
  for (size_t k = op.operands.size(); k-- > 0;) {
    int64_t size = type(op.operands[k]).shape[axis], first = end - size;
    Indices at = idx;
    llvm::Value* shifted = b_.CreateSub(idx[axis], i64(first));
    at[axis] = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, shifted, i64(0)),
                                        i64(size - 1));
    llvm::Value* v = element(op.operands[k], at);
    result = result ? b_.CreateSelect(b_.CreateICmpSLT(idx[axis], i64(end)), v, result) : v;
    end = first;
  }
  return result;
}

// One atomic update (computed once: an atomic's result always has a buffer), 0 where none is made.
llvm::Value* KernelLowering::atomicElement(const ir::Op& op, const Indices& idx) {
  int64_t tensor = op.get(ir::attr::tensor);
  DType dtype = kernel_.tensors[tensor].dtype;
  ir::AtomicFn fn = *ir::parseAtomicFn(op.get(ir::attr::fn));
  size_t rank = static_cast<size_t>(kernel_.tensors[tensor].rank), values = fn == ir::AtomicFn::cas ? 2 : 1;
  llvm::Value* value = element(op.operands[rank], idx);
  llvm::Value* compare = values == 2 ? element(op.operands[rank + 1], idx) : nullptr;
  auto [linear, inside] = indirectAddress(op, rank + values, idx);
  return emitIfValue(b_, inside, [&]() -> llvm::Value* {
    llvm::Value* at = b_.CreateGEP(storageType(ctx_, dtype), tensors_.at(tensor).data, linear);
    constexpr auto order = llvm::AtomicOrdering::AcquireRelease;
    if (fn == ir::AtomicFn::cas)
      return b_.CreateExtractValue(
          b_.CreateAtomicCmpXchg(at, compare, value, llvm::MaybeAlign(), order, llvm::AtomicOrdering::Acquire), 0);
    if (isFloat(dtype) && dtypeBytes(dtype) == 2) return atomicHalf(fn, dtype, at, value);
    if (isFloat(dtype) && (fn == ir::AtomicFn::max || fn == ir::AtomicFn::min)) {
      llvm::Intrinsic::ID order = fn == ir::AtomicFn::max ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum;
      return atomicUpdateByCompareExchange(b_, at, value->getType(),
                                           [&](llvm::Value* old) { return b_.CreateBinaryIntrinsic(order, old, value); });
    }
    using Rmw = llvm::AtomicRMWInst;
    Rmw::BinOp bin = fn == ir::AtomicFn::add  ? (isFloat(dtype) ? Rmw::FAdd : Rmw::Add)
                     : fn == ir::AtomicFn::max ? (isUnsigned(dtype) ? Rmw::UMax : Rmw::Max)
                     : fn == ir::AtomicFn::min ? (isUnsigned(dtype) ? Rmw::UMin : Rmw::Min)
                                               : Rmw::Xchg;
    return b_.CreateAtomicRMW(bin, at, value, llvm::MaybeAlign(), order);
  }, constant(dtype, 0));
}

// An f16 or bf16 atomic: compare-exchange of its 16-bit storage, the update computed in f32
// and rounded once, as the elementwise ops do.
llvm::Value* KernelLowering::atomicHalf(ir::AtomicFn fn, DType dtype, llvm::Value* at, llvm::Value* value) {
  llvm::Value* old = atomicUpdateByCompareExchange(b_, at, storageType(ctx_, dtype), [&](llvm::Value* stored) {
    llvm::Value* x = fromStorage(b_, stored, dtype);
    llvm::Value* next = fn == ir::AtomicFn::add   ? roundToDType(b_, b_.CreateFAdd(x, value), dtype)
                        : fn == ir::AtomicFn::max ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, value)
                        : fn == ir::AtomicFn::min ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, value)
                                                  : value;
    return toStorage(b_, next, dtype);
  });
  return fromStorage(b_, old, dtype);
}

// Element idx of a scatter: the value first (outside any branch, so the nest vectorizes),
// written where it is inside. Duplicate coordinates: the last in row-major order wins.
void KernelLowering::lowerScatter(const ir::Op& op) {
  int64_t tensor = op.get(ir::attr::tensor);
  size_t rank = static_cast<size_t>(kernel_.tensors[tensor].rank);
  ValueId value = op.operands[rank];
  emitNest(type(value).shape, op.operands, [&](const Indices& idx) {
    llvm::Value* v = element(value, idx);
    auto [linear, inside] = indirectAddress(op, rank + 1, idx);
    emitIf(b_, inside, [&] { writeElement(tensor, linear, v); });
  });
}

// The linear element of a gather or scatter at idx, and whether it is read or written: every
// coordinate (as an i64) inside its axis and the mask, operand maskAt where there is one, true.
std::pair<llvm::Value*, llvm::Value*> KernelLowering::indirectAddress(const ir::Op& op, size_t maskAt, const Indices& idx) {
  int64_t tensor = op.get(ir::attr::tensor);
  Indices coords;
  llvm::Value* linear = i64(0);
  for (size_t d = 0; d < static_cast<size_t>(kernel_.tensors[tensor].rank); ++d) {
    coords.push_back(cast(element(op.operands[d], idx), type(op.operands[d]).dtype, DType::i64));
    linear = b_.CreateAdd(linear, b_.CreateMul(coords[d], tensors_.at(tensor).strides[d]));
  }
  llvm::Value* inside = inBounds(tensor, coords);
  if (maskAt < op.operands.size()) inside = b_.CreateAnd(inside, element(op.operands[maskAt], idx));
  return {linear, inside};
}

// The tensor's element at `linear`, or `fill` where `inside` is false.
llvm::Value* KernelLowering::readElement(int64_t tensor, llvm::Value* linear, llvm::Value* inside,
                                         const ir::Number& fill) {
  DType dtype = kernel_.tensors[tensor].dtype;
  llvm::Type* storage = storageType(ctx_, dtype);
  auto read = [&] {
    return fromStorage(b_, b_.CreateLoad(storage, b_.CreateGEP(storage, tensors_.at(tensor).data, linear)), dtype);
  };
  return emitIfValue(b_, inside, read, constant(dtype, fill));  // integers stay exact past 2^53
}

void KernelLowering::writeElement(int64_t tensor, llvm::Value* linear, llvm::Value* v) {
  DType dtype = kernel_.tensors[tensor].dtype;
  b_.CreateStore(toStorage(b_, v, dtype), b_.CreateGEP(storageType(ctx_, dtype), tensors_.at(tensor).data, linear));
}

}  // namespace tj::cpu::detail
