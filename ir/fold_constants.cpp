// Constant folding and exact algebraic identities. A folded value must be bit
// for bit what the interpreter computes: floats are computed in double and
// rounded once to the dtype, ints wrap. Where the IR leaves a result open
// (transcendentals, relu, float rem, `not` on ints, float->bool casts, NaN
// payloads of max/min) or the runtime must report a fault (integer division
// by zero), the op is left alone.
#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <variant>

#include "ir/passes.hpp"
#include "ir/rewrite.hpp"

namespace tj::ir {

namespace {

// A splat's element: int64 for ints and bool, double for floats.
using Scalar = std::variant<int64_t, double>;
using MaybeScalar = std::optional<Scalar>;

int64_t maxOf(DType t) { return static_cast<int64_t>(~0ull >> (65 - 8 * dtypeBytes(t))); }
int64_t minOf(DType t) { return -maxOf(t) - 1; }

// Two's-complement arithmetic without signed-overflow UB; callers wrap to the dtype.
int64_t wrapping(uint64_t v) { return static_cast<int64_t>(v); }

// A constant op's value, rounded or wrapped into its dtype as the interpreter reads it.
MaybeScalar constantValue(const Op& op, DType t) {
  Number v = op.get(attr::value);
  if (const auto* i = std::get_if<int64_t>(&v))
    return isFloat(t) ? Scalar(roundToFloat(t, static_cast<double>(*i))) : Scalar(wrapToInt(t, *i));
  if (const auto* d = std::get_if<double>(&v); d && isFloat(t)) return roundToFloat(t, *d);
  return std::nullopt;
}

MaybeScalar evalUnary(OpCode c, DType t, Scalar x) {
  if (const auto* d = std::get_if<double>(&x)) {
    switch (c) {
      case OpCode::neg: return -*d;
      case OpCode::abs: return std::fabs(*d);
      case OpCode::sqrt: return roundToFloat(t, std::sqrt(*d));
      case OpCode::floor: return std::floor(*d);
      case OpCode::ceil: return std::ceil(*d);
      default: return std::nullopt;
    }
  }
  int64_t i = std::get<int64_t>(x);
  auto u = static_cast<uint64_t>(i);
  if (t == DType::boolean) return c == OpCode::logical_not ? MaybeScalar(int64_t{i == 0}) : std::nullopt;
  switch (c) {
    case OpCode::neg: return wrapToInt(t, wrapping(0 - u));
    case OpCode::abs: return wrapToInt(t, i < 0 && !isUnsigned(t) ? wrapping(0 - u) : i);
    default: return std::nullopt;
  }
}

MaybeScalar evalFloat(OpCode c, DType t, double a, double b) {
  // max/min of a NaN or of +-0 pairs are left to the interpreter's choice of payload or sign.
  bool ordered = !std::isnan(a) && !std::isnan(b) && !(a == b && std::signbit(a) != std::signbit(b));
  switch (c) {
    case OpCode::add: return roundToFloat(t, a + b);
    case OpCode::sub: return roundToFloat(t, a - b);
    case OpCode::mul: return roundToFloat(t, a * b);
    case OpCode::div: return roundToFloat(t, a / b);
    case OpCode::max: return ordered ? MaybeScalar(std::max(a, b)) : std::nullopt;
    case OpCode::min: return ordered ? MaybeScalar(std::min(a, b)) : std::nullopt;
    default: return std::nullopt;
  }
}

MaybeScalar evalInt(OpCode c, DType t, int64_t a, int64_t b) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if (c == OpCode::div || c == OpCode::rem) {
    // Division by zero is a runtime fault; an overflowing quotient may trap too.
    if (b == 0 || (b == -1 && a == minOf(DType::i64))) return std::nullopt;
    if (t == DType::u64) return wrapping(c == OpCode::div ? ua / ub : ua % ub);
    if (wrapToInt(t, a / b) != a / b) return std::nullopt;
    return c == OpCode::div ? a / b : a % b;
  }
  switch (c) {
    case OpCode::add: return wrapToInt(t, wrapping(ua + ub));
    case OpCode::sub: return wrapToInt(t, wrapping(ua - ub));
    case OpCode::mul: return wrapToInt(t, wrapping(ua * ub));
    case OpCode::max: return intLess(t, a, b) ? b : a;
    case OpCode::min: return intLess(t, b, a) ? b : a;
    case OpCode::logical_and: return a & b;
    case OpCode::logical_or: return a | b;
    case OpCode::bit_xor: return a ^ b;
    case OpCode::shl: return shiftLeft(t, a, b);
    case OpCode::shr: return shiftRight(t, a, b);
    case OpCode::shru: return shiftRightLogical(t, a, b);
    default: return std::nullopt;
  }
}

template <typename T>
MaybeScalar compare(std::string_view pred, T a, T b) {
  if (pred == "lt") return int64_t{a < b};
  if (pred == "le") return int64_t{a <= b};
  if (pred == "gt") return int64_t{a > b};
  if (pred == "ge") return int64_t{a >= b};
  if (pred == "eq") return int64_t{a == b};
  if (pred == "ne") return int64_t{a != b};
  return std::nullopt;
}

MaybeScalar evalCmp(const Op& op, DType t, Scalar a, Scalar b) {
  const std::string* pred = &op.get(attr::pred);
  if (a.index() != b.index()) return std::nullopt;
  if (const auto* d = std::get_if<double>(&a)) return compare(*pred, *d, std::get<double>(b));
  auto ia = std::get<int64_t>(a), ib = std::get<int64_t>(b);
  if (!isUnsigned(t)) return compare(*pred, ia, ib);
  return compare(*pred, static_cast<uint64_t>(ia), static_cast<uint64_t>(ib));
}

MaybeScalar evalCast(DType from, DType to, Scalar x) {
  if (const auto* d = std::get_if<double>(&x)) {
    if (isFloat(to)) return roundToFloat(to, *d);
    if (isInteger(to)) return saturateToInt(to, *d);
    return std::nullopt;  // float->bool is not specified
  }
  int64_t i = std::get<int64_t>(x);
  if (!isFloat(to)) return wrapToInt(to, i);
  // Only ints that convert to double exactly, so the value is rounded once.
  if (i > (int64_t{1} << 53) || i < -(int64_t{1} << 53) || (i < 0 && isUnsigned(from))) return std::nullopt;
  return roundToFloat(to, static_cast<double>(i));
}

// Whether `x code c` (`c code x` unless `rhs`) is x for every x, NaN, inf and -0.0 included.
bool isIdentity(OpCode code, Scalar c, bool rhs) {
  if (const auto* d = std::get_if<double>(&c)) {
    bool negZero = *d == 0 && std::signbit(*d);
    switch (code) {
      case OpCode::add: return negZero;  // not +0.0: -0.0 + 0.0 is 0.0
      case OpCode::sub: return rhs && *d == 0 && !negZero;
      case OpCode::mul: return *d == 1;
      default: return false;
    }
  }
  int64_t i = std::get<int64_t>(c);
  switch (code) {
    case OpCode::add: return i == 0;
    case OpCode::sub: return rhs && i == 0;
    case OpCode::mul: return i == 1;
    default: return false;
  }
}

class ConstantFolder : public Rewriter {
 public:
  ConstantFolder() : Rewriter("fold_constants") {}

 private:
  void visit(const Op& in) override {
    Op op = remap(in);
    if (op.code == OpCode::constant) {
      if (auto v = constantValue(op, type(op.results[0]).dtype)) constants_[op.results[0]] = *v;
      emit(std::move(op));
    } else if (MaybeScalar v = evaluate(op)) {
      emitConstant(op, *v);
    } else if (!simplify(op)) {
      emit(std::move(op));
    }
  }

  const Type& type(ValueId v) const { return input().type(v); }

  MaybeScalar operand(const Op& op, size_t i) const {
    auto it = constants_.find(op.operands[i]);
    return it == constants_.end() ? std::nullopt : MaybeScalar(it->second);
  }

  // The value of an op whose operands are all constants.
  MaybeScalar evaluate(const Op& op) const {
    if (op.results.size() != 1 || op.operands.empty() || !op.regions.empty()) return std::nullopt;
    std::vector<Scalar> xs;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      MaybeScalar x = operand(op, i);
      if (!x) return std::nullopt;
      xs.push_back(*x);
    }
    DType t = type(op.operands[0]).dtype;
    if (isUnaryElementwise(op.code)) return evalUnary(op.code, t, xs[0]);
    if (op.code == OpCode::cmp) return evalCmp(op, t, xs[0], xs[1]);
    if (isBinaryElementwise(op.code) && xs[0].index() == xs[1].index()) {
      if (const auto* a = std::get_if<double>(&xs[0])) return evalFloat(op.code, t, *a, std::get<double>(xs[1]));
      return evalInt(op.code, t, std::get<int64_t>(xs[0]), std::get<int64_t>(xs[1]));
    }
    if (op.code == OpCode::cast) return evalCast(t, type(op.results[0]).dtype, xs[0]);
    bool splat = op.code == OpCode::broadcast || op.code == OpCode::reshape || op.code == OpCode::permute;
    return splat ? MaybeScalar(xs[0]) : std::nullopt;
  }

  // Exact rewrites with some operands constant; returns whether the op was replaced.
  bool simplify(const Op& op) {
    if (op.code == OpCode::select) {
      MaybeScalar c = operand(op, 0);
      return c && forwardTo(op, op.operands[std::visit([](auto v) { return v != 0; }, *c) ? 1 : 2]);
    }
    if (op.code != OpCode::add && op.code != OpCode::sub && op.code != OpCode::mul) return false;
    for (size_t i : {0, 1}) {
      MaybeScalar c = operand(op, i);
      if (!c) continue;
      if (isIdentity(op.code, *c, i == 1) && forwardTo(op, op.operands[1 - i])) return true;
      if (op.code == OpCode::mul && c == Scalar(int64_t{0})) {  // ints only: NaN * 0.0 is NaN
        emitConstant(op, int64_t{0});
        return true;
      }
    }
    return false;
  }

  bool forwardTo(const Op& op, ValueId v) {
    if (type(v) != type(op.results[0])) return false;
    forward(op.results[0], v);
    return true;
  }

  void emitConstant(const Op& op, Scalar v) {
    ValueId r = op.results[0];
    constants_[r] = v;
    emit(Op{OpCode::constant, {}, {r}, {makeAttr(attr::value, v)}, {}, op.loc});
  }

  std::unordered_map<ValueId, Scalar> constants_;
};

}  // namespace

Kernel foldConstants(const Kernel& k) { return ConstantFolder().run(k); }

}  // namespace tj::ir
