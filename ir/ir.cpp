#include "ir/ir.hpp"

#include <algorithm>
#include <array>

#include "ir/op_cases.hpp"

namespace tj::ir {

namespace {
constexpr AttrKind kindOf(AttrKey<int64_t>) { return AttrKind::integer; }
constexpr AttrKind kindOf(AttrKey<Number>) { return AttrKind::number; }
constexpr AttrKind kindOf(AttrKey<std::vector<int64_t>>) { return AttrKind::integers; }
constexpr AttrKind kindOf(AttrKey<std::string>) { return AttrKind::string; }
template <typename T>
constexpr AttrSpec required(AttrKey<T> key) { return {key.name, kindOf(key), true}; }
template <typename T>
constexpr AttrSpec optional(AttrKey<T> key) { return {key.name, kindOf(key), false}; }

constexpr std::array<OpInfo, kNumOpCodes> kOps = {{
#define TJ_ATTRS(...) std::array<AttrSpec, kMaxOpAttrs>{{__VA_ARGS__}}
#define TJ_OP(code, name, minOperands, maxOperands, minResults, maxResults, traits, attrs) \
  OpInfo{name, minOperands, maxOperands, minResults, maxResults, traits, attrs},
#include "ir/ops.def"
#undef TJ_OP
#undef TJ_ATTRS
}};

// The dispatchers' case lists (ir/op_cases.hpp) name the ops of the table's traits.
constexpr bool listed(OpCode c, uint16_t t) {
  switch (c) {
    TJ_UNARY_ELEMENTWISE_OPS: return t == trait::unaryElementwise;
    TJ_BINARY_ELEMENTWISE_OPS: return t == trait::binaryElementwise;
    TJ_REDUCTION_OPS: return t == trait::reduction;
    TJ_SHAPE_OPS: return t == trait::shape;
    default: return false;
  }
}
constexpr bool caseListsMatchTraits() {
  for (int i = 0; i < kNumOpCodes; ++i)
    for (uint16_t t : {trait::unaryElementwise, trait::binaryElementwise, trait::reduction, trait::shape})
      if (listed(static_cast<OpCode>(i), t) != ((kOps[i].traits & t) != 0)) return false;
  return true;
}
static_assert(caseListsMatchTraits(), "ir/op_cases.hpp's lists and ir/ops.def's traits name the same ops");
}  // namespace

const OpInfo& opInfo(OpCode c) { return kOps[static_cast<size_t>(c)]; }

const AttrSpec* OpInfo::attrSpec(std::string_view attrName) const {
  for (const AttrSpec& a : attrs)
    if (!a.name.empty() && a.name == attrName) return &a;
  return nullptr;
}

std::string_view attrKindName(AttrKind k) {
  switch (k) {
    case AttrKind::integer: return "an integer";
    case AttrKind::number: return "a number";
    case AttrKind::integers: return "a list of integers";
    case AttrKind::string: return "a string";
  }
  return "";
}

bool admits(AttrKind k, const AttrValue& v) {
  switch (k) {
    case AttrKind::integer: return std::holds_alternative<int64_t>(v);
    case AttrKind::number: return std::holds_alternative<int64_t>(v) || std::holds_alternative<double>(v);
    case AttrKind::integers: return std::holds_alternative<std::vector<int64_t>>(v);
    case AttrKind::string: return std::holds_alternative<std::string>(v);
  }
  return false;
}

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

std::optional<OpCode> parseOpName(std::string_view s) {
  for (int i = 0; i < kNumOpCodes; ++i)
    if (kOps[static_cast<size_t>(i)].name == s) return static_cast<OpCode>(i);
  return std::nullopt;
}

std::optional<DType> unacceptedFloat8(const Op& op, const std::vector<Type>& types) {
  if (acceptsFloat8(op.code)) return std::nullopt;
  for (const std::vector<ValueId>* values : {&op.operands, &op.results})
    for (ValueId v : *values)
      if (v >= 0 && static_cast<size_t>(v) < types.size() && isFloat8(types[static_cast<size_t>(v)].dtype))
        return types[static_cast<size_t>(v)].dtype;
  return std::nullopt;
}

const AttrValue* Op::stored(std::string_view name) const {
  for (const Attr& a : attrs)
    if (a.name == name) return &a.value;
  return nullptr;
}

namespace {
template <typename T>
const T& need(const Op& op, std::string_view name, const AttrValue* v) {
  if (!v || !std::holds_alternative<T>(*v))
    fail(op.loc, opName(op.code), "missing or mistyped attribute '" + std::string(name) + "'");
  return std::get<T>(*v);
}
}  // namespace

int64_t Op::get(AttrKey<int64_t> key) const { return need<int64_t>(*this, key.name, stored(key.name)); }
const std::string& Op::get(AttrKey<std::string> key) const {
  return need<std::string>(*this, key.name, stored(key.name));
}
const std::vector<int64_t>& Op::get(AttrKey<std::vector<int64_t>> key) const {
  return need<std::vector<int64_t>>(*this, key.name, stored(key.name));
}
Number Op::get(AttrKey<Number> key) const {
  const AttrValue* v = stored(key.name);
  if (v && std::holds_alternative<double>(*v)) return std::get<double>(*v);
  return need<int64_t>(*this, key.name, v);
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
    if (writesTensor(op.code)) written.at(static_cast<size_t>(op.get(attr::tensor))) = true;
  });
  return written;
}

}  // namespace tj::ir
