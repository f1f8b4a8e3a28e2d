// Kernel IR -> a SPIR-V compute shader: the Printer (printer.hpp) and its types, constants,
// interface and instructions.
#include "lower/spirv/print_kernel_ir.hpp"

#include "lower/spirv/printer.hpp"

namespace tj::spirv {

namespace detail {

auto Printer::print() -> Words {
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

auto Printer::type(DType t) -> Id {
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

auto Printer::uint(int bytes) -> Id {
  if (bytes == 1) m_.capability(Capability::Int8);
  if (bytes == 2) m_.capability(Capability::Int16);
  return m_.typeInt(uint32_t(bytes * 8), false);
}

auto Printer::constant(DType t, double v) -> Id {
  switch (t) {
    case DType::f32: return m_.constant(type(t), std::bit_cast<uint32_t>(float(v)));
    case DType::f64: return m_.constant(type(t), std::bit_cast<uint64_t>(v));
    case DType::f16: return m_.constant(type(t), floatToHalf(float(roundToFloat(t, v))));
    case DType::bf16: case DType::f8e4m3: case DType::f8e5m2:
      return m_.constant(type(t), std::bit_cast<uint32_t>(float(roundToFloat(t, v))));
    default: return intConstant(t, saturateToInt(t, v));
  }
}

auto Printer::intConstant(DType t, int64_t v) -> Id {
  if (t == DType::boolean) return m_.constBool(v != 0);
  if (dtypeBytes(t) == 8) return m_.constant(type(t), uint64_t(v));
  int unused = 64 - 8 * dtypeBytes(t);  // the register type is signed: its literal is sign-extended to a word
  return m_.constant(type(t), uint32_t(static_cast<int64_t>(static_cast<uint64_t>(v) << unused) >> unused));
}

auto Printer::toMemory(DType t, Id v) -> Id {
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

auto Printer::fromMemory(DType t, Id bits) -> Id {
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

auto Printer::any(std::initializer_list<Id> conditions) -> Id {
  Id r = 0;
  for (Id c : conditions) r = r ? m_.op(Op::LogicalOr, bool_, {r, c}) : c;
  return r;
}

void Printer::declareBuffers() {
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

void Printer::declareShared() {
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

auto Printer::builtIn(BuiltIn b, bool vector) -> Id {
  auto [it, added] = builtIns_.try_emplace(uint32_t(b), 0);
  if (added) it->second = m_.builtInInput(b, vector ? m_.typeVector(u32_, 3) : u32_);
  return it->second;
}

auto Printer::builtInAxis(BuiltIn b, int64_t axis) -> Id {
  if (axis < 0 || axis > 2) unsupported("grid axis " + std::to_string(axis));
  Id uvec3 = m_.typeVector(u32_, 3);
  Id x = m_.op(Op::CompositeExtract, u32_, {m_.load(uvec3, builtIn(b, true)), uint32_t(axis)});
  return m_.op(Op::Bitcast, i64_, {m_.op(Op::UConvert, uint(8), {x})});
}

auto Printer::param(int64_t index, DType to) -> Id {
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

auto Printer::block(const KBlock& b) -> std::vector<Reg> {
  for (const KInst& i : b.insts) {
    if (i.op == KOp::yield) return i.operands;
    inst(i);
  }
  return {};
}

void Printer::inst(const KInst& i) {
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
    case KOp::unpack: return unpack(i);
    default: break;
  }
  if (i.results.size() != 1) unsupported(std::string(gpu::kopName(i.op)));
  ids_[size_t(i.results[0])] = value(i, dtypeOf(i.results[0]));
}

auto Printer::value(const KInst& i, DType t) -> Id {
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
    case KOp::pack: return pack(i, T);
    case KOp::byte_perm: return bytePermute(i, T);
    case KOp::fma:  // approx: as fast as it runs here, a multiply then an add
      if (gpu::hasAttr(i, "approx")) return arith(Op::FAdd, t, arith(Op::FMul, t, id(o[0]), id(o[1])), id(o[2]));
      return fusedMultiplyAdd(t, id(o[0]), id(o[1]), id(o[2]));
    default: unsupported(std::string(gpu::kopName(i.op)));
  }
}

auto Printer::pack(const KInst& i, Id T) -> Id {
  DType t = dtypeOf(i.operands[0]);
  auto bits = uint32_t(8 * dtypeBytes(t));
  Id word = m_.constU32(0);
  for (size_t e = 0; e < i.operands.size(); ++e) {
    Id piece = m_.op(Op::UConvert, u32_, {toMemory(t, id(i.operands[e]))});
    word = m_.op(Op::BitwiseOr, u32_, {word, m_.op(Op::ShiftLeftLogical, u32_, {piece, m_.constU32(uint32_t(e) * bits)})});
  }
  return m_.op(Op::Bitcast, T, {word});
}

auto Printer::bytePermute(const KInst& i, Id T) -> Id {
  Id lo = m_.op(Op::Bitcast, u32_, {id(i.operands[0])}), hi = m_.op(Op::Bitcast, u32_, {id(i.operands[1])});
  Id selector = m_.op(Op::Bitcast, u32_, {id(i.operands[2])});
  Id out = m_.constU32(0);
  for (uint32_t j = 0; j < 4; ++j) {
    Id from = m_.op(Op::BitwiseAnd, u32_, {m_.op(Op::ShiftRightLogical, u32_, {selector, m_.constU32(4 * j)}), m_.constU32(7)});
    Id word = m_.select(u32_, m_.op(Op::ULessThan, bool_, {from, m_.constU32(4)}), lo, hi);
    Id shift = m_.op(Op::ShiftLeftLogical, u32_, {m_.op(Op::BitwiseAnd, u32_, {from, m_.constU32(3)}), m_.constU32(3)});
    Id byte = m_.op(Op::BitwiseAnd, u32_, {m_.op(Op::ShiftRightLogical, u32_, {word, shift}), m_.constU32(0xff)});
    out = m_.op(Op::BitwiseOr, u32_, {out, m_.op(Op::ShiftLeftLogical, u32_, {byte, m_.constU32(8 * j)})});
  }
  return m_.op(Op::Bitcast, T, {out});
}

void Printer::unpack(const KInst& i) {
  DType t = dtypeOf(i.results[0]);
  auto bits = uint32_t(8 * dtypeBytes(t));
  Id word = m_.op(Op::Bitcast, u32_, {id(i.operands[0])});
  for (size_t e = 0; e < i.results.size(); ++e) {
    Id piece = m_.op(Op::ShiftRightLogical, u32_, {word, m_.constU32(uint32_t(e) * bits)});
    ids_[size_t(i.results[e])] = fromMemory(t, m_.op(Op::UConvert, uint(dtypeBytes(t)), {piece}));
  }
}

}  // namespace detail

using detail::Printer;

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
