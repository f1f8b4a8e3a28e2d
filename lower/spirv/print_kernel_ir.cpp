#include "lower/spirv/print_kernel_ir.hpp"

#include <bit>
#include <cmath>
#include <map>
#include <string>

#include "ir/error.hpp"
#include "lower/spirv/spirv_builder.hpp"
#include "lower/spirv/spirv_math.hpp"

namespace tj::spirv {

namespace {

using gpu::KAttrValue;
using gpu::KBlock;
using gpu::KInst;
using gpu::KOp;
using gpu::Reg;

// Opcodes, decorations and capabilities the builder's enums do not name yet.
constexpr Op kCopyObject = Op(83);
constexpr Op kIsNan = Op(156);
constexpr Op kGroupNonUniformSMin = Op(353);
constexpr Decoration kNoContraction = Decoration(42);
constexpr uint32_t kReduce = 0;
constexpr GlslOp kSAbs = GlslOp(5);

[[noreturn]] void unsupported(const std::string& what) { throw Error("spirv: unsupported: " + what); }

const KAttrValue& attr(const KInst& i, const std::string& name) {
  for (const gpu::KAttr& a : i.attrs)
    if (a.name == name) return a.value;
  unsupported(std::string(gpu::kopName(i.op)) + " without attribute " + name);
}
int64_t intAttr(const KInst& i, const std::string& name) { return std::get<int64_t>(attr(i, name)); }
const std::string& strAttr(const KInst& i, const std::string& name) { return std::get<std::string>(attr(i, name)); }
double numberAttr(const KInst& i, const std::string& name) {
  const KAttrValue& v = attr(i, name);
  return std::holds_alternative<double>(v) ? std::get<double>(v) : double(std::get<int64_t>(v));
}

class Printer {
 public:
  explicit Printer(const gpu::KernelFunction& f)
      : f_(f), ids_(f.regTypes.size(), 0), u32_(m_.typeInt(32, false)), i64_(m_.typeInt(64, true)) {}

  Words print() {
    m_.capability(Capability::Shader);
    m_.capability(Capability::Int64);
    declareBuffers();
    declareShared();
    Id voidT = m_.typeVoid();
    Id fn = m_.beginFunction(voidT, m_.typeFunction(voidT));
    m_.entryPoint(fn, "main", uint32_t(f_.workgroupSize));
    m_.label(m_.newLabel());
    block(f_.body);
    m_.returnVoid();
    m_.endFunction();
    return m_.words();
  }

 private:
  // ---- types and constants ----

  Id type(DType t) {
    switch (t) {
      case DType::f32: return m_.typeFloat(32);
      case DType::f16: m_.capability(Capability::Float16); return m_.typeFloat(16);
      case DType::i8: m_.capability(Capability::Int8); return m_.typeInt(8, true);
      case DType::i32: return m_.typeInt(32, true);
      case DType::i64: return i64_;
      case DType::boolean: return m_.typeBool();
      default: unsupported("dtype " + std::string(dtypeName(t)));
    }
  }
  // How a tensor's elements are stored: its dtype, bool as one byte.
  DType storageDType(DType t) { return t == DType::boolean ? DType::i8 : t; }

  Id constant(DType t, double v) {
    switch (t) {
      case DType::f32: return m_.constant(type(t), std::bit_cast<uint32_t>(float(v)));
      case DType::f16: return m_.constant(type(t), floatToHalf(float(v)));
      case DType::boolean: return m_.constBool(v != 0);
      case DType::i64: return m_.constant(type(t), uint64_t(int64_t(v)));
      default: return m_.constant(type(t), uint32_t(wrapToInt(t, int64_t(v))));  // sign-extended to a word
    }
  }

  DType dtypeOf(Reg r) const { return f_.regTypes.at(size_t(r)); }
  Id id(Reg r) const { return ids_.at(size_t(r)); }

  // ---- interface ----

  void declareBuffers() {
    for (size_t p = 0; p < f_.params.size(); ++p) {
      const gpu::KParam& param = f_.params[p];
      if (param.kind != gpu::KParam::Kind::buffer) continue;
      DType s = storageDType(param.dtype);
      if (s == DType::f16) m_.capability(Capability::StorageBuffer16BitAccess);
      if (s == DType::i8) m_.capability(Capability::StorageBuffer8BitAccess);
      buffers_[int64_t(p)] = m_.storageBuffer(type(s), uint32_t(dtypeBytes(s)), 0, uint32_t(param.number));
    }
    params_ = m_.storageBuffer(i64_, 8, 0, paramsBinding(f_));
  }

  // Workgroup memory as 32-bit words: every allocation's elements are 4 bytes for now.
  void declareShared() {
    if (f_.shared.empty()) return;
    for (const gpu::SharedAlloc& a : f_.shared)
      if (dtypeBytes(a.dtype) != 4 || a.offset % 4) unsupported("workgroup memory of " + std::string(dtypeName(a.dtype)));
    Id array = m_.typeArray(u32_, uint32_t(std::max<int64_t>(1, f_.sharedBytes() / 4)));
    shared_ = m_.variable(m_.typePointer(StorageClass::Workgroup, array), StorageClass::Workgroup);
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
    return m_.op(Op::Bitcast, i64_, {m_.op(Op::UConvert, m_.typeInt(64, false), {x})});
  }

  // A parameter's slot, decoded by the parameter's dtype then cast to the register's.
  Id param(int64_t index, DType to) {
    const gpu::KParam& p = f_.params.at(size_t(index));
    Id ptr = m_.typePointer(StorageClass::StorageBuffer, i64_);
    Id slot = m_.load(i64_, m_.accessChain(ptr, params_.variable, {m_.constU32(0), m_.constU32(uint32_t(index))}));
    DType from = p.kind == gpu::KParam::Kind::scalar ? p.dtype : DType::i64;
    if (isFloat(from)) {
      if (from != DType::f32 && from != DType::f16) unsupported("scalar of " + std::string(dtypeName(from)));
      Id bits = m_.op(Op::SConvert, type(DType::i32), {slot});
      return cast(m_.op(Op::Bitcast, type(DType::f32), {bits}), DType::f32, to);
    }
    return cast(slot, DType::i64, to);
  }

  // ---- arithmetic ----

  Id arith(Op op, DType t, Id a, Id b) {
    Id r = m_.op(op, type(t), {a, b});
    if (isFloat(t)) m_.decorate(r, kNoContraction);  // no fusing into FMA: results must match the host's
    return r;
  }

  Id cast(Id x, DType from, DType to) {
    if (from == to) return x;
    Id T = type(to);
    if (from == DType::boolean) return m_.select(T, x, constant(to, 1), constant(to, 0));
    if (to == DType::boolean)
      return m_.op(isFloat(from) ? Op::FUnordNotEqual : Op::INotEqual, T, {x, constant(from, 0)});
    if (isFloat(from) && isFloat(to)) return m_.op(Op::FConvert, T, {x});
    if (isFloat(from)) return m_.op(Op::ConvertFToS, T, {x});
    if (isFloat(to)) return m_.op(Op::ConvertSToF, T, {x});
    return m_.op(Op::SConvert, T, {x});
  }

  Id unary(const std::string& fn, DType t, Id x) {
    Id T = type(t);
    bool fl = isFloat(t);
    auto glsl = [&](GlslOp g) { return m_.ext(g, T, {x}); };
    if (fn == "neg") return m_.op(fl ? Op::FNegate : Op::SNegate, T, {x});
    if (fn == "abs") return glsl(fl ? GlslOp::FAbs : kSAbs);
    if (fn == "not") {
      if (t == DType::boolean) return m_.op(Op::LogicalNot, T, {x});
      return cast(compare("eq", t, x, constant(t, 0)), DType::boolean, t);
    }
    if (fn == "relu") return m_.select(T, compare("gt", t, x, constant(t, 0)), x, constant(t, 0));
    if (!fl) unsupported("unary " + fn + " on " + std::string(dtypeName(t)));
    if (Id r = accurate(fn, t, x)) return r;
    static const std::map<std::string, GlslOp> kGlsl = {
        {"exp", GlslOp::Exp},   {"exp2", GlslOp::Exp2}, {"log", GlslOp::Log},   {"log2", GlslOp::Log2},
        {"sqrt", GlslOp::Sqrt}, {"sin", GlslOp::Sin},   {"cos", GlslOp::Cos},   {"tanh", GlslOp::Tanh},
        {"floor", GlslOp::Floor}, {"ceil", GlslOp::Ceil}, {"rsqrt", GlslOp::InverseSqrt}};
    if (auto it = kGlsl.find(fn); it != kGlsl.end()) return glsl(it->second);
    if (fn == "sigmoid") {
      Id e = m_.ext(GlslOp::Exp, T, {m_.op(Op::FNegate, T, {x})});
      return arith(Op::FDiv, t, constant(t, 1), arith(Op::FAdd, t, constant(t, 1), e));
    }
    unsupported("unary " + fn);
  }

  // fn from spirv_math.hpp: f16 computed in f32 and rounded once; 0 where it has no version.
  Id accurate(const std::string& fn, DType t, Id x) {
    if (t == DType::f64) {
      Id r = accurateUnary(m_, fn, 64, x);
      if (!r && !isExactUnary(fn)) unsupported("f64 " + fn + " (GLSL.std.450 has no f64 version)");
      return r;
    }
    Id r = accurateUnary(m_, fn, 32, cast(x, t, DType::f32));
    return r ? cast(r, DType::f32, t) : 0;
  }
  static bool isExactUnary(const std::string& fn) { return fn == "floor" || fn == "ceil" || fn == "sqrt"; }

  // max/min as std::max/std::min pick (b only when strictly better), NaN if either is.
  Id minMax(bool isMax, DType t, Id a, Id b) {
    Id T = type(t);
    Id better = isMax ? compare("lt", t, a, b) : compare("lt", t, b, a);
    Id r = m_.select(T, better, b, a);
    if (!isFloat(t)) return r;
    Id boolT = m_.typeBool();
    Id nan = m_.op(Op::LogicalOr, boolT, {m_.op(kIsNan, boolT, {a}), m_.op(kIsNan, boolT, {b})});
    return m_.select(T, nan, arith(Op::FAdd, t, a, b), r);
  }

  // Integer division and remainder give 0 for a zero divisor, like the host.
  Id intDivision(Op op, DType t, Id a, Id b) {
    Id T = type(t);
    Id zero = compare("eq", t, b, constant(t, 0));
    Id safe = m_.select(T, zero, constant(t, 1), b);
    return m_.select(T, zero, constant(t, 0), m_.op(op, T, {a, safe}));
  }

  Id binary(const std::string& fn, DType t, Id a, Id b) {
    if (fn == "max" || fn == "min") return minMax(fn == "max", t, a, b);
    if (t == DType::boolean) {
      static const std::map<std::string, Op> kLogical = {
          {"and", Op::LogicalAnd}, {"or", Op::LogicalOr}, {"xor", Op::LogicalNotEqual}};
      if (auto it = kLogical.find(fn); it != kLogical.end()) return m_.op(it->second, type(t), {a, b});
      unsupported("binary " + fn + " on bool");
    }
    if (isFloat(t)) {
      static const std::map<std::string, Op> kFloat = {
          {"add", Op::FAdd}, {"sub", Op::FSub}, {"mul", Op::FMul}, {"div", Op::FDiv}, {"rem", Op::FRem}};
      if (auto it = kFloat.find(fn); it != kFloat.end()) return arith(it->second, t, a, b);
      unsupported("binary " + fn + " on " + std::string(dtypeName(t)));
    }
    if (fn == "div") return intDivision(Op::SDiv, t, a, b);
    if (fn == "rem") return intDivision(Op::SRem, t, a, b);
    static const std::map<std::string, Op> kInt = {
        {"add", Op::IAdd}, {"sub", Op::ISub}, {"mul", Op::IMul}, {"and", Op::BitwiseAnd}, {"or", Op::BitwiseOr},
        {"xor", Op::BitwiseXor}, {"shl", Op::ShiftLeftLogical}, {"shr", Op::ShiftRightArithmetic}};
    if (auto it = kInt.find(fn); it != kInt.end()) return m_.op(it->second, type(t), {a, b});
    unsupported("binary " + fn);
  }

  // `t` is the operands' dtype. Float `ne` is unordered: NaN != NaN, as on the host.
  Id compare(const std::string& pred, DType t, Id a, Id b) {
    Id boolT = m_.typeBool();
    if (pred == "ult") {  // 0 <= a < b
      if (isFloat(t) || t == DType::boolean) unsupported("cmp ult on " + std::string(dtypeName(t)));
      return m_.op(Op::LogicalAnd, boolT, {compare("ge", t, a, constant(t, 0)), compare("lt", t, a, b)});
    }
    struct Ops { Op f, i, logical; };
    static const std::map<std::string, Ops> kOps = {
        {"lt", {Op::FOrdLessThan, Op::SLessThan, Op::Return}},
        {"le", {Op::FOrdLessThanEqual, Op::SLessThanEqual, Op::Return}},
        {"gt", {Op::FOrdGreaterThan, Op::SGreaterThan, Op::Return}},
        {"ge", {Op::FOrdGreaterThanEqual, Op::SGreaterThanEqual, Op::Return}},
        {"eq", {Op::FOrdEqual, Op::IEqual, Op::LogicalEqual}},
        {"ne", {Op::FUnordNotEqual, Op::INotEqual, Op::LogicalNotEqual}}};
    auto it = kOps.find(pred);
    if (it == kOps.end()) unsupported("cmp " + pred);
    Op op = isFloat(t) ? it->second.f : t == DType::boolean ? it->second.logical : it->second.i;
    if (op == Op::Return) unsupported("cmp " + pred + " on bool");
    return m_.op(op, boolT, {a, b});
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
    if (intAttr(i, "vec") != 1) unsupported(std::string(gpu::kopName(i.op)) + " with vec > 1");
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
    DType t = dtypeOf(i.results[0]), stored = storageDType(bufferDType(i));
    Id fill = constant(t, numberAttr(i, "fill"));
    ids_[size_t(i.results[0])] = predicated(id(i.operands[1]), t, fill, [&] {
      Id raw = m_.load(type(stored), element(b, id(i.operands[0])));
      return cast(cast(raw, stored, bufferDType(i)), bufferDType(i), t);
    });
  }

  void storeGlobal(const KInst& i) {
    const Module::Buffer& b = bufferOf(i);
    DType t = dtypeOf(i.operands[2]), stored = storageDType(bufferDType(i));
    predicated(id(i.operands[1]), t, 0, [&] {
      Id value = cast(cast(id(i.operands[2]), t, bufferDType(i)), bufferDType(i), stored);
      m_.store(element(b, id(i.operands[0])), value);
      return Id(0);
    });
  }

  // The word of workgroup memory holding element `index` of the instruction's allocation.
  Id sharedWord(const KInst& i, Reg index) {
    const gpu::SharedAlloc& a = f_.shared.at(size_t(intAttr(i, "alloc")));
    Id idx = cast(id(index), dtypeOf(index), DType::i64);
    Id word = m_.op(Op::IAdd, i64_, {idx, constant(DType::i64, double(a.offset / 4))});
    return m_.accessChain(m_.typePointer(StorageClass::Workgroup, u32_), shared_, {word});
  }

  // ---- subgroups and loops ----

  Id subgroupScope() { return m_.constU32(uint32_t(Scope::Subgroup)); }

  Id subgroupReduce(const KInst& i) {
    DType t = dtypeOf(i.operands[0]);
    const std::string& fn = strAttr(i, "fn");
    static const std::map<std::string, std::pair<Op, Op>> kOps = {
        {"add", {Op::GroupNonUniformFAdd, Op::GroupNonUniformIAdd}},
        {"max", {Op::GroupNonUniformFMax, Op::GroupNonUniformSMax}},
        {"min", {Op::GroupNonUniformFMin, kGroupNonUniformSMin}}};
    auto it = kOps.find(fn);
    if (it == kOps.end() || t == DType::boolean) unsupported("subgroup_reduce " + fn + " on " + std::string(dtypeName(t)));
    m_.capability(Capability::GroupNonUniformArithmetic);
    Op op = isFloat(t) ? it->second.first : it->second.second;
    int64_t cluster = intAttr(i, "cluster");
    if (cluster == f_.subgroupSize) return m_.op(op, type(t), {subgroupScope(), kReduce, id(i.operands[0])});
    return butterfly(fn, t, id(i.operands[0]), cluster);
  }

  // A reduction over clusters of lanes by xor shuffles: drivers may lack clustered
  // subgroup operations (lavapipe's give wrong sums).
  Id butterfly(const std::string& fn, DType t, Id x, int64_t cluster) {
    m_.capability(Capability::GroupNonUniformShuffle);
    for (int64_t mask = cluster / 2; mask >= 1; mask /= 2)
      x = binary(fn, t, x, shuffleXor(t, x, mask));
    return x;
  }

  Id shuffleXor(DType t, Id x, int64_t mask) {
    m_.capability(Capability::GroupNonUniformShuffle);
    return m_.op(Op::GroupNonUniformShuffleXor, type(t), {subgroupScope(), x, m_.constU32(uint32_t(mask))});
  }

  // Header: phis for k and the carried values, then `k < end` or leave. The continue
  // block names the next values with ids the phis reserved.
  void loop(const KInst& i) {
    const KBlock& body = i.regions.at(0);
    DType kType = dtypeOf(body.args[0]);
    Id before = m_.currentBlock(), header = m_.newLabel(), bodyLabel = m_.newLabel(), cont = m_.newLabel(),
       merge = m_.newLabel();
    Id kNext = m_.newId();
    std::vector<Id> next;
    m_.branch(header);
    m_.label(header);
    ids_[size_t(body.args[0])] = m_.phi(type(kType), {{id(i.operands[0]), before}, {kNext, cont}});
    for (size_t c = 2; c < i.operands.size(); ++c) {
      next.push_back(m_.newId());
      ids_[size_t(body.args[c - 1])] = m_.phi(type(dtypeOf(body.args[c - 1])), {{id(i.operands[c]), before}, {next.back(), cont}});
    }
    Id k = id(body.args[0]);
    Id more = compare("lt", kType, k, id(i.operands[1]));
    m_.loopMerge(merge, cont);
    m_.branchConditional(more, bodyLabel, merge);
    m_.label(bodyLabel);
    std::vector<Reg> yielded = block(body);
    m_.branch(cont);
    m_.label(cont);
    m_.op(Op::IAdd, type(kType), {k, constant(kType, 1)}, kNext);
    for (size_t c = 0; c < next.size(); ++c)
      m_.op(kCopyObject, type(dtypeOf(yielded.at(c))), {id(yielded.at(c))}, next[c]);
    m_.branch(header);
    m_.label(merge);
    for (size_t c = 0; c < i.results.size(); ++c) ids_[size_t(i.results[c])] = id(body.args[c + 1]);
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
      case KOp::load_global: return loadGlobal(i);
      case KOp::store_shared:
        if (dtypeOf(i.operands[1]) == DType::boolean) unsupported("store_shared of bool");
        return m_.store(sharedWord(i, i.operands[0]), m_.op(Op::Bitcast, u32_, {id(i.operands[1])}));
      case KOp::barrier:
        return m_.controlBarrier(Scope::Workgroup, Scope::Workgroup,
                                 semantics::kAcquireRelease | semantics::kWorkgroupMemory);
      case KOp::for_loop: return loop(i);
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
      case KOp::warp_id:
        return m_.op(Op::SDiv, T, {builtInI32(BuiltIn::LocalInvocationIndex), constant(t, double(f_.subgroupSize))});
      case KOp::workgroup_id: return cast(builtInAxis(BuiltIn::WorkgroupId, intAttr(i, "axis")), DType::i64, t);
      case KOp::workgroup_count: return cast(builtInAxis(BuiltIn::NumWorkgroups, intAttr(i, "axis")), DType::i64, t);
      case KOp::param: return param(intAttr(i, "index"), t);
      case KOp::constant: return constant(t, numberAttr(i, "value"));
      case KOp::unary: return unary(strAttr(i, "fn"), t, id(o[0]));
      case KOp::binary: return binary(strAttr(i, "fn"), t, id(o[0]), id(o[1]));
      case KOp::cmp: return compare(strAttr(i, "pred"), dtypeOf(o[0]), id(o[0]), id(o[1]));
      case KOp::select: return m_.select(T, cast(id(o[0]), dtypeOf(o[0]), DType::boolean), id(o[1]), id(o[2]));
      case KOp::cast: return cast(id(o[0]), dtypeOf(o[0]), t);
      case KOp::load_shared: {
        if (t == DType::boolean) unsupported("load_shared of bool");
        return m_.op(Op::Bitcast, T, {m_.load(u32_, sharedWord(i, o[0]))});
      }
      case KOp::shuffle_xor: return shuffleXor(t, id(o[0]), intAttr(i, "mask"));
      case KOp::shuffle_idx:
        return m_.subgroupShuffle(T, id(o[0]), m_.op(Op::Bitcast, u32_, {cast(id(o[1]), dtypeOf(o[1]), DType::i32)}));
      case KOp::subgroup_reduce: return subgroupReduce(i);
      default: unsupported(std::string(gpu::kopName(i.op)));
    }
  }

  const gpu::KernelFunction& f_;
  Module m_;
  std::vector<Id> ids_;  // by register
  Id u32_, i64_;
  std::map<int64_t, Module::Buffer> buffers_;  // by parameter index
  Module::Buffer params_{};
  Id shared_ = 0;
  std::map<uint32_t, Id> builtIns_;
};

}  // namespace

uint32_t paramsBinding(const gpu::KernelFunction& f) {
  uint32_t n = 0;
  for (const gpu::KParam& p : f.params) n += p.kind == gpu::KParam::Kind::buffer;
  return n;
}

std::vector<uint32_t> printSpirv(const gpu::KernelFunction& f) { return Printer(f).print(); }

}  // namespace tj::spirv
