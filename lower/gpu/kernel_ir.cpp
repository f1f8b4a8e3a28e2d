#include "lower/gpu/kernel_ir.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ir/error.hpp"

namespace tj::gpu {

std::string_view kopName(KOp op) {
  static constexpr std::string_view names[] = {
      "thread_id", "lane_id", "warp_id", "workgroup_id", "workgroup_count", "param", "constant",
      "unary", "binary", "cmp", "select", "cast",
      "load_global", "store_global", "load_shared", "store_shared", "barrier",
      "shuffle_xor", "shuffle_idx", "subgroup_reduce", "mma",
      "for", "yield", "atomic_global", "ldmatrix", "async_copy", "async_commit", "async_wait", "atomic_shared",
      "while", "wgmma", "wgmma_fence", "wgmma_commit", "wgmma_wait", "fence_async_shared",
      "mbarrier_init", "mbarrier_expect", "mbarrier_wait", "mbarrier_inval", "tma_load", "mbarrier_arrive",
      "tma_store", "tma_store_wait", "pack", "unpack", "byte_perm", "fma", "branch",
      "set_max_registers"};
  return names[static_cast<size_t>(op)];
}

bool isPure(KOp op) {
  switch (op) {
    case KOp::thread_id: case KOp::lane_id: case KOp::warp_id: case KOp::workgroup_id:
    case KOp::workgroup_count: case KOp::param: case KOp::constant: case KOp::unary:
    case KOp::binary: case KOp::cmp: case KOp::select: case KOp::cast: case KOp::pack: case KOp::unpack:
    case KOp::byte_perm: case KOp::fma:
      return true;
    default:
      return false;  // memory, barriers, subgroup ops (they depend on which lanes run) and control
  }
}

bool isPersistent(const std::vector<KParam>& params) {
  return std::ranges::any_of(params, [](const KParam& p) { return p.kind == KParam::Kind::program_count; });
}

size_t KernelFunction::addBufferParam(std::string name, DType t) {
  size_t binding = size_t(std::ranges::count(params, KParam::Kind::buffer, &KParam::kind));
  params.push_back({KParam::Kind::buffer, std::move(name), t, binding});
  return params.size() - 1;
}

size_t KernelFunction::faultBuffer() {
  if (faultParam < 0) faultParam = int64_t(addBufferParam("faults", DType::i32));
  return size_t(faultParam);
}

int64_t KernelFunction::sharedBytes() const {
  int64_t bytes = 0;
  for (const SharedAlloc& a : shared) bytes = std::max(bytes, a.offset + a.bytes);
  return bytes;
}

int64_t countOps(const KBlock& b, KOp op) {
  int64_t n = 0;
  for (const KInst& i : b.insts) {
    n += i.op == op;
    for (const KBlock& r : i.regions) n += countOps(r, op);
  }
  return n;
}

const KAttrValue& attr(const KInst& i, std::string_view name) {
  for (const KAttr& a : i.attrs)
    if (a.name == name) return a.value;
  throw InternalError("kernel ir", std::string(kopName(i.op)) + " without attribute " + std::string(name));
}
bool hasAttr(const KInst& i, std::string_view name) {
  return std::ranges::any_of(i.attrs, [&](const KAttr& a) { return a.name == name; });
}
int64_t intAttr(const KInst& i, std::string_view name) { return std::get<int64_t>(attr(i, name)); }
const std::string& strAttr(const KInst& i, std::string_view name) { return std::get<std::string>(attr(i, name)); }
double number(const KAttrValue& v) {
  return std::holds_alternative<double>(v) ? std::get<double>(v) : double(std::get<int64_t>(v));
}

int64_t instructionCount(const KBlock& b) {
  int64_t n = 0;
  for (const KInst& i : b.insts) {
    ++n;
    for (const KBlock& r : i.regions) n += instructionCount(r);
  }
  return n;
}

int64_t sharedAccessCount(const KBlock& b) { return countOps(b, KOp::load_shared) + countOps(b, KOp::store_shared); }

int64_t memoryAccessCount(const KBlock& b) {
  int64_t n = 0;
  for (const KInst& i : b.insts) {
    switch (i.op) {
      case KOp::load_global: case KOp::store_global: case KOp::atomic_global: case KOp::load_shared:
      case KOp::store_shared: case KOp::atomic_shared: case KOp::ldmatrix: case KOp::async_copy: case KOp::tma_load:
      case KOp::tma_store:
        ++n;
        break;
      default: break;
    }
    for (const KBlock& r : i.regions) n += memoryAccessCount(r);
  }
  return n;
}

// ---- building ----

KBuilder::KBuilder(KernelFunction& f, int64_t maxInstructions)
    : f_(f), maxInstructions_(maxInstructions), open_{&f.body}, numbered_(1) {}

void KBuilder::append(KInst inst) {
  if (maxInstructions_ > 0 && ++appended_ > maxInstructions_)
    throw OverBudget(std::to_string(maxInstructions_) + " instructions per thread");
  open_.back()->insts.push_back(std::move(inst));
}

std::string KBuilder::key(KOp op, const std::vector<Reg>& operands, const std::vector<KAttr>& attrs, DType t) const {
  std::ostringstream s;
  s << static_cast<int>(op) << ':' << static_cast<int>(t);
  for (Reg r : operands) s << ',' << r;
  for (const KAttr& a : attrs) {
    s << ';' << a.name << '=' << a.value.index() << ':';
    std::visit([&](const auto& v) { s << v; }, a.value);
  }
  return s.str();
}

Reg KBuilder::emit(KOp op, DType type, std::vector<Reg> operands, std::vector<KAttr> attrs) {
  std::string k = isPure(op) ? key(op, operands, attrs, type) : std::string();
  if (!k.empty())
    for (const auto& scope : numbered_)
      if (auto it = scope.find(k); it != scope.end()) return it->second;
  Reg r = f_.newReg(type);
  append(KInst{op, {r}, std::move(operands), std::move(attrs), {}});
  if (!k.empty()) numbered_.back().emplace(std::move(k), r);
  return r;
}

void KBuilder::effect(KOp op, std::vector<Reg> operands, std::vector<KAttr> attrs) {
  append(KInst{op, {}, std::move(operands), std::move(attrs), {}});
}

std::vector<Reg> KBuilder::emitMulti(KOp op, const std::vector<DType>& types, std::vector<Reg> operands,
                                     std::vector<KAttr> attrs) {
  std::vector<Reg> results;
  for (DType t : types) results.push_back(f_.newReg(t));
  append(KInst{op, results, std::move(operands), std::move(attrs), {}});
  return results;
}

Reg KBuilder::constant(DType t, double value) {
  if (isFloat(t)) return emit(KOp::constant, t, {}, {{"value", value}});
  return emit(KOp::constant, t, {}, {{"value", wrapNumberToInt(t, value)}});
}

Reg KBuilder::constant(DType t, const ir::Number& value) {
  const auto* i = std::get_if<int64_t>(&value);
  if (i && !isFloat(t)) return emit(KOp::constant, t, {}, {{"value", *i}});
  return constant(t, i ? double(*i) : std::get<double>(value));
}

Reg KBuilder::unary(std::string_view fn, Reg x) { return emit(KOp::unary, type(x), {x}, {{"fn", std::string(fn)}}); }

Reg KBuilder::binary(std::string_view fn, Reg a, Reg b) {
  return emit(KOp::binary, type(a), {a, b}, {{"fn", std::string(fn)}});
}

Reg KBuilder::cmp(std::string_view pred, Reg a, Reg b) {
  return emit(KOp::cmp, DType::boolean, {a, b}, {{"pred", std::string(pred)}});
}

Reg KBuilder::select(Reg cond, Reg a, Reg b) { return emit(KOp::select, type(a), {cond, a, b}); }

std::vector<Reg> KBuilder::openRegion(const std::vector<DType>& types) {
  KInst& owner = lastInst();
  owner.regions.emplace_back();
  KBlock& block = owner.regions.back();
  for (DType t : types) block.args.push_back(f_.newReg(t));
  open_.push_back(&block);
  numbered_.emplace_back();
  return block.args;
}

void KBuilder::closeRegion() {
  if (open_.size() <= 1) throw InternalError("kernel ir", "no open region to close");
  open_.pop_back();
  numbered_.pop_back();
}

// ---- printing ----

namespace {

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  std::ostringstream s;
  s.precision(17);
  s << v;
  std::string text = s.str();
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string attrText(const KAttrValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return number(*d);
  return std::get<std::string>(v);
}

class Printer {
 public:
  explicit Printer(const KernelFunction& f) : f_(f) {}

  std::string reg(Reg r) const { return std::string("%").append(std::to_string(r)); }
  std::string typed(Reg r) const { return reg(r) + ": " + std::string(dtypeName(f_.regTypes.at(size_t(r)))); }

  void block(const KBlock& b, int indent) {
    for (const KInst& i : b.insts) inst(i, indent);
  }

  void inst(const KInst& i, int indent) {
    std::string line(size_t(indent) * 2, ' ');
    for (size_t n = 0; n < i.results.size(); ++n) line += (n ? ", " : "") + typed(i.results[n]);
    if (!i.results.empty()) line += " = ";
    line.append(kopName(i.op)).append("(");
    for (size_t n = 0; n < i.operands.size(); ++n) line += (n ? ", " : "") + reg(i.operands[n]);
    line += ")";
    if (!i.attrs.empty()) {
      line += " {";
      for (size_t n = 0; n < i.attrs.size(); ++n) line += (n ? ", " : "") + i.attrs[n].name + " = " + attrText(i.attrs[n].value);
      line += "}";
    }
    for (const KBlock& r : i.regions) {
      out_ << line << " {\n" << std::string(size_t(indent) * 2 + 2, ' ') << "^(";
      for (size_t n = 0; n < r.args.size(); ++n) out_ << (n ? ", " : "") << typed(r.args[n]);
      out_ << "):\n";
      block(r, indent + 2);
      line = std::string(size_t(indent) * 2, ' ') + "}";
    }
    out_ << line << "\n";
  }

  static std::string shapeText(const std::vector<int64_t>& shape) {
    std::string text = "[";
    for (size_t d = 0; d < shape.size(); ++d) text += (d ? "x" : "") + std::to_string(shape[d]);
    return text + "]";
  }

  std::string run() {
    out_ << "kernel @" << f_.name << " target " << f_.target << " workgroup " << f_.workgroupSize << " subgroup "
         << f_.subgroupSize << "\n";
    for (size_t n = 0; n < f_.params.size(); ++n) {
      const KParam& p = f_.params[n];
      out_ << "  param " << n << ": ";
      if (p.kind == KParam::Kind::buffer) out_ << "buffer<" << dtypeName(p.dtype) << ">";
      else if (p.kind == KParam::Kind::tensor_map) out_ << "tensor_map<" << dtypeName(p.dtype) << ", box " << shapeText(p.box)
                                                        << ", swizzle " << p.swizzle << ">";
      else out_ << dtypeName(p.dtype);
      out_ << " " << p.name << "\n";
    }
    for (size_t n = 0; n < f_.shared.size(); ++n)
      out_ << "  shared " << n << ": " << f_.shared[n].bytes << " bytes at " << f_.shared[n].offset << " " << dtypeName(f_.shared[n].dtype) << " "
           << f_.shared[n].layout << "\n";
    for (const KPrint& p : f_.prints) {
      out_ << "  print \"" << p.label << "\" " << dtypeName(p.dtype) << shapeText(p.shape) << " into param " << p.param << "\n";
    }
    out_ << "  // registers: " << f_.regTypes.size() << ", workgroup memory: " << f_.sharedBytes() << " bytes\n{\n";
    block(f_.body, 1);
    out_ << "}\n";
    return out_.str();
  }

 private:
  const KernelFunction& f_;
  std::ostringstream out_;
};

}  // namespace

std::string print(const KernelFunction& f) { return Printer(f).run(); }

}  // namespace tj::gpu
