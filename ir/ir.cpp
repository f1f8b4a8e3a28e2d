#include "ir/ir.hpp"

#include <algorithm>
#include <array>

#include "ir/op_cases.hpp"

namespace tj::ir {

namespace {
constexpr std::array<std::string_view, kNumOpCodes> kOpNames = {
    "program_id", "num_programs", "tensor_dim", "constant", "iota",
    "neg", "abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
    "erf", "relu", "floor", "ceil", "not",
    "add", "sub", "mul", "div", "rem", "max", "min", "and", "or", "cmp", "select", "cast",
    "broadcast", "reshape", "permute",
    "reduce_sum", "reduce_max", "reduce_min", "argmax", "argmin", "dot",
    "load", "store", "fold", "yield", "print", "scalar_param",
    "xor", "shl", "shr", "shru",
    "gather", "scatter",
    "atomic", "check", "scan",
    "slice", "concat",
    "sort", "if", "histogram", "while",
};
static_assert(!kOpNames.back().empty(), "every OpCode has its name here, in the enum's order");
}  // namespace

int64_t Type::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) throw Error("type: the element count of " + str() + " overflows int64");
  return n;
}

Shape rowMajorStrides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

std::string Type::str() const {
  if (shape.empty()) return std::string(dtypeName(dtype));
  std::string s = "tile<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s + std::string(dtypeName(dtype)) + ">";
}

std::string_view opName(OpCode c) { return kOpNames[static_cast<int>(c)]; }

std::optional<OpCode> parseOpName(std::string_view s) {
  auto it = std::find(kOpNames.begin(), kOpNames.end(), s);
  if (it == kOpNames.end()) return std::nullopt;
  return static_cast<OpCode>(it - kOpNames.begin());
}

bool isUnaryElementwise(OpCode c) {
  switch (c) {
    TJ_UNARY_ELEMENTWISE_OPS: return true;
    default: return false;
  }
}
bool isBinaryElementwise(OpCode c) {
  switch (c) {
    TJ_BINARY_ELEMENTWISE_OPS: return true;
    default: return false;
  }
}
bool isReduction(OpCode c) {
  switch (c) {
    TJ_REDUCTION_OPS: return true;
    default: return false;
  }
}
bool hasSideEffects(OpCode c) { return writesTensor(c) || c == OpCode::print || c == OpCode::check || c == OpCode::yield; }
bool readsTensor(OpCode c) { return c == OpCode::load || c == OpCode::gather || c == OpCode::atomic; }
bool writesTensor(OpCode c) { return c == OpCode::store || c == OpCode::scatter || c == OpCode::atomic; }

bool acceptsFloat8(OpCode c) {
  switch (c) {
    case OpCode::constant: case OpCode::select: case OpCode::cast: case OpCode::broadcast: case OpCode::reshape:
    case OpCode::permute: case OpCode::slice: case OpCode::concat: case OpCode::dot: case OpCode::load:
    case OpCode::store: case OpCode::gather: case OpCode::scatter: case OpCode::fold: case OpCode::if_:
    case OpCode::while_: case OpCode::yield:
      return true;
    default: return false;
  }
}

std::optional<DType> unacceptedFloat8(const Op& op, const std::vector<Type>& types) {
  if (acceptsFloat8(op.code)) return std::nullopt;
  for (const std::vector<ValueId>* values : {&op.operands, &op.results})
    for (ValueId v : *values)
      if (v >= 0 && static_cast<size_t>(v) < types.size() && isFloat8(types[static_cast<size_t>(v)].dtype))
        return types[static_cast<size_t>(v)].dtype;
  return std::nullopt;
}

const AttrValue* Op::attr(std::string_view name) const {
  for (const Attr& a : attrs)
    if (a.name == name) return &a.value;
  return nullptr;
}

namespace {
template <typename T>
const T& need(const Op& op, std::string_view name) {
  const AttrValue* v = op.attr(name);
  if (!v || !std::holds_alternative<T>(*v))
    fail(op.loc, opName(op.code), "missing or mistyped attribute '" + std::string(name) + "'");
  return std::get<T>(*v);
}
}  // namespace

int64_t Op::intAttr(std::string_view name) const { return need<int64_t>(*this, name); }
const std::string& Op::stringAttr(std::string_view name) const { return need<std::string>(*this, name); }
const std::vector<int64_t>& Op::intsAttr(std::string_view name) const {
  return need<std::vector<int64_t>>(*this, name);
}
double Op::floatAttr(std::string_view name) const {
  const AttrValue* v = attr(name);
  if (v && std::holds_alternative<int64_t>(*v)) return static_cast<double>(std::get<int64_t>(*v));
  return need<double>(*this, name);
}

void Op::setAttr(std::string name, AttrValue v) {
  auto it = std::lower_bound(attrs.begin(), attrs.end(), name,
                             [](const Attr& a, const std::string& n) { return a.name < n; });
  if (it != attrs.end() && it->name == name) it->value = std::move(v);
  else attrs.insert(it, Attr{std::move(name), std::move(v)});
}

std::optional<AtomicFn> parseAtomicFn(std::string_view s) {
  static constexpr std::array<std::string_view, 5> kNames = {"add", "max", "min", "xchg", "cas"};
  auto it = std::find(kNames.begin(), kNames.end(), s);
  if (it == kNames.end()) return std::nullopt;
  return static_cast<AtomicFn>(it - kNames.begin());
}

bool atomicSupports(AtomicFn fn, DType t) {
  bool integer = t == DType::i32 || t == DType::i64 || t == DType::u32 || t == DType::u64;
  return integer || (isFloat(t) && fn != AtomicFn::cas);
}

std::vector<bool> writtenTensors(const Kernel& k) {
  std::vector<bool> written(k.tensors.size(), false);
  forEachOp(k.body, [&](const Op& op) {
    if (writesTensor(op.code)) written.at(static_cast<size_t>(op.intAttr("tensor"))) = true;
  });
  return written;
}

}  // namespace tj::ir
