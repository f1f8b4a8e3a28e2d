// The SPIR-V printer's memory accesses, subgroup operations, loops, and the loop limit of
// drivers that end loops early.
#include "lower/spirv/printer.hpp"

namespace tj::spirv::detail {

auto Printer::bufferOf(const KInst& i) -> const Module::Buffer& {
  if (i.op != KOp::atomic_global && intAttr(i, "vec") != 1) unsupported(std::string(gpu::kopName(i.op)) + " with vec > 1");
  auto it = buffers_.find(intAttr(i, "buffer"));
  if (it == buffers_.end()) unsupported("buffer attribute naming no buffer parameter");
  return it->second;
}

void Printer::loadGlobal(const KInst& i) {
  const Module::Buffer& b = bufferOf(i);
  DType t = dtypeOf(i.results[0]), stored = bufferDType(i);
  Id fill = constantOf(t, attr(i, "fill"));
  ids_[size_t(i.results[0])] = predicated(id(i.operands[1]), t, fill, [&] {
    Id raw = m_.load(uint(dtypeBytes(stored)), element(b, id(i.operands[0])));
    return cast(fromMemory(stored, raw), stored, t);
  });
}

void Printer::storeGlobal(const KInst& i) {
  const Module::Buffer& b = bufferOf(i);
  DType t = dtypeOf(i.operands[2]), stored = bufferDType(i);
  predicated(id(i.operands[1]), t, 0, [&] {
    m_.store(element(b, id(i.operands[0])), toMemory(stored, cast(id(i.operands[2]), t, stored)));
    return Id(0);
  });
}

void Printer::atomicGlobal(const KInst& i) {
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

auto Printer::compareExchangeLoop(Id U, int bytes, Id at, Id pred, const std::function<Id(Id)>& update) -> Id {
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

void Printer::atomicByCompareExchange(const KInst& i) {
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

auto Printer::aliasedView(const KInst& i, Id elementType) -> const Module::Buffer& {
  int64_t param = intAttr(i, "buffer");
  auto [view, fresh] = aliasedViews_.try_emplace({param, elementType});
  if (fresh) {
    view->second = m_.storageBuffer(elementType, 4, 0, uint32_t(f_.params.at(size_t(param)).number));
    m_.decorate(view->second.variable, Decoration::Aliased);
    m_.decorate(bufferOf(i).variable, Decoration::Aliased);
  }
  return view->second;
}

void Printer::atomicFloatAdd(const KInst& i) {
  m_.capability(Capability::AtomicFloat32AddEXT);
  m_.extension("SPV_EXT_shader_atomic_float_add");
  const Module::Buffer& floats = aliasedView(i, type(DType::f32));
  Id scope = m_.constU32(uint32_t(Scope::Device)), ordered = m_.constU32(semantics::kAcquireRelease | semantics::kUniformMemory);
  ids_[size_t(i.results[0])] = predicated(id(i.operands[1]), DType::f32, constant(DType::f32, 0), [&] {
    return m_.op(Op::AtomicFAddEXT, type(DType::f32), {element(floats, id(i.operands[0])), scope, ordered, id(i.operands[2])});
  });
}

void Printer::atomicHalf(const KInst& i) {
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

auto Printer::sharedElement(const KInst& i, Reg index) -> SharedElement {
  const gpu::SharedAlloc& a = f_.shared.at(size_t(intAttr(i, "alloc")));
  int w = dtypeBytes(a.dtype);
  Id idx = cast(id(index), dtypeOf(index), DType::i64);
  const SharedArray& array = shared_.at(w);
  Id at = m_.op(Op::IAdd, i64_, {idx, constant(DType::i64, double((a.offset - array.firstByte) / w))});
  return {m_.accessChain(m_.typePointer(StorageClass::Workgroup, uint(w)), array.variable, {at}), a.dtype};
}

void Printer::storeShared(const KInst& i) {
  if (i.operands.size() != 2) unsupported("store_shared of " + std::to_string(i.operands.size() - 1) + " values");
  SharedElement e = sharedElement(i, i.operands[0]);
  m_.store(e.pointer, toMemory(e.dtype, cast(id(i.operands[1]), dtypeOf(i.operands[1]), e.dtype)));
}

void Printer::atomicShared(const KInst& i) {
  SharedElement e = sharedElement(i, i.operands[0]);
  if (e.dtype != DType::i32) unsupported("atomic_shared on " + std::string(dtypeName(e.dtype)));
  Id value = bitsOf(DType::i32, cast(id(i.operands[1]), dtypeOf(i.operands[1]), DType::i32));  // the array's uint
  m_.op(Op::AtomicIAdd, uint(4), {e.pointer, m_.constU32(uint32_t(Scope::Workgroup)), m_.constU32(0), value});
}

auto Printer::subgroupReduce(const KInst& i) -> Id {
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

void Printer::countLoopsFrom0() {
  if (f_.loopIterationLimit <= 0) return;
  loopCount_ = m_.variable(m_.typePointer(StorageClass::Function, u32_), StorageClass::Function);
  m_.store(loopCount_, m_.constU32(0));
}

void Printer::countDivergentLoop(Id steps) {
  if (!loopCount_) return;
  Id slowest = m_.subgroupReduce(Op::GroupNonUniformSMax, type(DType::i32), steps);
  countLoops(m_.op(Op::Bitcast, u32_, {m_.op(Op::IAdd, type(DType::i32), {slowest, m_.constI32(1)})}));
}

void Printer::reportLoopLimit() {
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

auto Printer::whileLoop(const Values& types, const Values& inits, const std::function<Id(const Values&)>& more,
                        const std::function<Values(const Values&)>& body, bool uniform)
    -> Values {
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

void Printer::whileInst(const KInst& i) {
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

void Printer::loop(const KInst& i) {
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

}  // namespace tj::spirv::detail
