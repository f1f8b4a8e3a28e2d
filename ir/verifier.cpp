// Checks that a kernel is well formed: every value is defined once and used
// only where its definition is in scope, and every op's operands, results and
// attributes follow the semantics listed in ir/ir.hpp.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "ir/op_cases.hpp"
#include "ir/passes.hpp"

// A switch over OpCode that leaves out an op is an error here (ir/op_cases.hpp).
#pragma GCC diagnostic error "-Wswitch"

namespace tj::ir {

namespace {

const Type kIndex{DType::i64, {}};

// The dtypes an elementwise op accepts.
enum class Needs { anything, numeric, floating, logical, integer };

Needs needs(OpCode c) {
  switch (c) {
    case OpCode::neg: case OpCode::abs: case OpCode::relu:
    case OpCode::add: case OpCode::sub: case OpCode::mul: case OpCode::div: case OpCode::rem:
    case OpCode::max: case OpCode::min:
      return Needs::numeric;
    case OpCode::logical_not: case OpCode::logical_and: case OpCode::logical_or: case OpCode::bit_xor:
      return Needs::logical;
    case OpCode::shl: case OpCode::shr: case OpCode::shru:
      return Needs::integer;
    case OpCode::cmp:
      return Needs::anything;
    default:  // the unary math functions
      return Needs::floating;
  }
}

bool satisfies(DType d, Needs n) {
  switch (n) {
    case Needs::numeric: return isFloat(d) || isInteger(d);
    case Needs::floating: return isFloat(d);
    case Needs::logical: return d == DType::boolean || isInteger(d);
    case Needs::integer: return isInteger(d);
    case Needs::anything: return true;
  }
  return false;
}

std::string_view describe(Needs n) {
  switch (n) {
    case Needs::numeric: return "a numeric";
    case Needs::floating: return "a float";
    case Needs::logical: return "a bool or integer";
    case Needs::integer: return "an integer";
    case Needs::anything: return "any";
  }
  return "";
}

// The dtypes a launch can pass as a scalar argument (an int64 or a double).
bool isScalarParamDType(DType d) {
  switch (d) {
    case DType::i64: case DType::i32: case DType::f32: case DType::f64: case DType::f16: case DType::bf16: return true;
    default: return false;
  }
}

// Whether a constant's value or a load's fill is a value of dtype `d` (isValueOf).
bool fitsDType(const Number& v, DType d) {
  return std::visit([d](auto x) { return isValueOf(x, d); }, v);
}

std::string attrText(const Number& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", std::get<double>(v));
  return text;
}

class Verifier {
 public:
  explicit Verifier(const Kernel& k) : k_(k), state_(k.types.size(), State::unseen) {}

  void run() {
    if (k_.gridRank < 1 || k_.gridRank > kMaxGridRank)
      fail(k_.gridLoc, "kernel", "grid rank " + std::to_string(k_.gridRank) + " is out of range: a grid has 1 to " +
                                     std::to_string(kMaxGridRank) + " axes");
    if (k_.warps != 0 && !isWarpCount(k_.warps))
      fail(k_.gridLoc, "kernel", "warps " + std::to_string(k_.warps) + " is not a power of two from 1 to " +
                                     std::to_string(kMaxWarps));
    for (const TensorParam& t : k_.tensors)
      if (t.rank < 1 || t.rank > kMaxRank)
        fail(t.loc, "kernel", "tensor " + t.name + " has rank " + std::to_string(t.rank) + "; tensors have rank 1 to " +
                                  std::to_string(kMaxRank));
    for (const ScalarParam& s : k_.scalars)
      if (!isScalarParamDType(s.dtype))
        fail(s.loc, "kernel", "scalar " + s.name + " has dtype " + std::string(dtypeName(s.dtype)) +
                                  "; scalar parameters are i64, i32, f32, f64, f16 or bf16");
    if (!k_.body.args.empty()) fail({}, "kernel", "the kernel body takes no arguments");
    block(k_.body, nullptr);
  }

 private:
  enum class State : uint8_t { unseen, visible, outOfScope };

  [[noreturn]] static void error(const Op& op, const std::string& message) {
    fail(op.loc, opName(op.code), message);
  }

  // --- values and scopes ---
  const Type& typeOf(const Op& op, ValueId v) const {
    if (v < 0 || static_cast<size_t>(v) >= k_.types.size())
      error(op, "value " + std::to_string(v) + " has no type in the kernel");
    const Type& t = k_.type(v);
    withinLimits(op, t);
    return t;
  }

  // The shape limits of ir.hpp. The padded count is checked after each factor, so it
  // stays below 2^41 and cannot overflow, whatever the dimensions.
  static void withinLimits(const Op& op, const Type& t) {
    if (t.rank() > kMaxRank)
      error(op, "type " + t.str() + " has rank " + std::to_string(t.rank()) + "; tiles have rank 0 to " +
                    std::to_string(kMaxRank));
    int64_t padded = 1;  // the element count of layout::paddedShape
    for (int64_t d : t.shape) {
      if (d <= 0) error(op, "type " + t.str() + " has a non-positive dimension");
      padded = d > kMaxTileElements ? d : padded * static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(d)));
      if (padded > kMaxTileElements)
        error(op, "type " + t.str() + " has more than " + std::to_string(kMaxTileElements) +
                      " elements with each dimension rounded up to a power of two, the most a tile holds");
    }
  }

  void requireFresh(const Op& op, ValueId v) const {
    typeOf(op, v);  // in range, with a sensible shape
    if (state_[static_cast<size_t>(v)] != State::unseen) error(op, "value " + std::to_string(v) + " is defined twice");
  }

  bool visible(ValueId v) const {
    return v >= 0 && static_cast<size_t>(v) < state_.size() && state_[static_cast<size_t>(v)] == State::visible;
  }

  void define(ValueId v) {
    state_[static_cast<size_t>(v)] = State::visible;
    scope_.push_back(v);
  }

  // `parent` is the fold whose body `b` is, or null for the kernel body.
  void block(const Block& b, const Op* parent) {
    size_t mark = scope_.size();
    for (ValueId a : b.args) {
      requireFresh(*parent, a);
      define(a);
    }
    if (parent && (b.ops.empty() || b.ops.back().code != OpCode::yield)) error(*parent, "body must end with yield");
    for (const Op& op : b.ops) {
      if (op.code == OpCode::yield && (!parent || &op != &b.ops.back()))
        error(op, "yield must be the last op of a fold body");
      this->op(op, parent);
    }
    for (; scope_.size() > mark; scope_.pop_back()) state_[static_cast<size_t>(scope_.back())] = State::outOfScope;
  }

  void op(const Op& op, const Op* parent) {
    for (ValueId v : op.operands)
      if (!visible(v)) error(op, "uses value " + std::to_string(v) + ", which is not defined at this point");
    for (ValueId r : op.results) requireFresh(op, r);
    size_t regions = op.code == OpCode::fold ? 1 : op.code == OpCode::if_ || op.code == OpCode::while_ ? 2 : 0;
    if (op.code == OpCode::scan && !op.has(attr::fn)) regions = 1;  // a combine region
    if (op.regions.size() != regions)
      error(op, "expected " + std::to_string(regions) + " regions but got " + std::to_string(op.regions.size()));
    tableRules(op);
    signature(op, parent);
    for (const Block& r : op.regions) block(r, &op);
    // Defined after the regions: a fold's results are not visible in its body.
    for (ValueId r : op.results) define(r);
  }

  // --- the op table's rules (ir/ops.def) ---
  static void count(const Op& op, const char* what, size_t got, uint8_t min, uint8_t max) {
    if (got >= min && (max == kAny || got <= max)) return;
    std::string want = min == max ? std::to_string(min)
                       : max == kAny ? "at least " + std::to_string(min)
                                     : std::to_string(min) + " to " + std::to_string(max);
    error(op, "expected " + want + " " + what + " but got " + std::to_string(got));
  }

  static void tableRules(const Op& op) {
    const OpInfo& info = opInfo(op.code);
    count(op, "operands", op.operands.size(), info.minOperands, info.maxOperands);
    count(op, "results", op.results.size(), info.minResults, info.maxResults);
    for (const Attr& a : op.attrs) {
      const AttrSpec* spec = info.attrSpec(a.name);
      if (!spec) error(op, "takes no attribute '" + a.name + "'");
      if (!admits(spec->kind, a.value))
        error(op, "attribute '" + a.name + "' must be " + std::string(attrKindName(spec->kind)));
    }
    for (const AttrSpec& spec : info.attrs) {
      bool given = std::any_of(op.attrs.begin(), op.attrs.end(), [&](const Attr& a) { return a.name == spec.name; });
      if (spec.required && !given)
        error(op, "missing attribute '" + std::string(spec.name) + "', " + std::string(attrKindName(spec.kind)));
    }
  }

  // --- shared checks ---
  const Type& in(const Op& op, size_t i) const { return k_.type(op.operands[i]); }
  const Type& out(const Op& op, size_t i) const { return k_.type(op.results[i]); }

  static void arity(const Op& op, size_t operands, size_t results) {
    if (op.operands.size() != operands)
      error(op, "expected " + std::to_string(operands) + " operands but got " + std::to_string(op.operands.size()));
    if (op.results.size() != results)
      error(op, "expected " + std::to_string(results) + " results but got " + std::to_string(op.results.size()));
  }
  static void sameType(const Op& op, const Type& a, const Type& b, const std::string& what) {
    if (a != b) error(op, what + " types differ: " + a.str() + " vs " + b.str());
  }
  static void expectType(const Op& op, const Type& got, const Type& want, const std::string& what) {
    if (got != want) error(op, what + " must be " + want.str() + " but is " + got.str());
  }
  static void elementDType(const Op& op, const Type& t) {
    Needs n = needs(op.code);
    if (!satisfies(t.dtype, n)) error(op, "expected " + std::string(describe(n)) + " dtype but got " + t.str());
  }
  static int64_t axis(const Op& op, int64_t limit, const std::string& of) {
    int64_t a = op.get(attr::axis);
    if (a < 0 || a >= limit) error(op, "axis " + std::to_string(a) + " out of range for " + of);
    return a;
  }
  const TensorParam& tensor(const Op& op) const {
    int64_t t = op.get(attr::tensor);
    if (t < 0 || static_cast<size_t>(t) >= k_.tensors.size())
      error(op, "tensor " + std::to_string(t) + " out of range; the kernel has " +
                    std::to_string(k_.tensors.size()) + " tensors");
    return k_.tensors[static_cast<size_t>(t)];
  }
  // load and store: the first `rank` operands are element offsets.
  void offsets(const Op& op, int rank) const {
    for (size_t i = 0; i < static_cast<size_t>(rank); ++i) expectType(op, in(op, i), kIndex, "offset");
  }
  static void matchesTensor(const Op& op, const Type& t, const TensorParam& p, const std::string& what) {
    if (t.rank() != p.rank || t.dtype != p.dtype)
      error(op, what + " " + t.str() + " does not match tensor " + p.name + " (" + std::string(dtypeName(p.dtype)) +
                    ", rank " + std::to_string(p.rank) + ")");
  }

  // --- per-op rules ---
  void signature(const Op& op, const Op* parent) const {
    if (std::optional<DType> f8 = unacceptedFloat8(op, k_.types))
      error(op, "takes no " + std::string(dtypeName(*f8)) + " values; cast them to f16, bf16 or f32 first");
    switch (op.code) {
      TJ_UNARY_ELEMENTWISE_OPS: return unary(op);
      TJ_BINARY_ELEMENTWISE_OPS: return binary(op);
      TJ_REDUCTION_OPS: return reduction(op);
      case OpCode::program_id: case OpCode::num_programs: return gridQuery(op);
      case OpCode::tensor_dim: return tensorDim(op);
      case OpCode::constant: return constant(op);
      case OpCode::iota: return iota(op);
      case OpCode::select: return select(op);
      case OpCode::fma: return fma(op);
      case OpCode::cast: return cast(op);
      case OpCode::broadcast: return broadcast(op);
      case OpCode::reshape: return reshape(op);
      case OpCode::permute: return permute(op);
      case OpCode::dot: return dot(op);
      case OpCode::load: return load(op);
      case OpCode::store: return store(op);
      case OpCode::gather: return gather(op);
      case OpCode::scatter: return scatter(op);
      case OpCode::atomic: return atomic(op);
      case OpCode::check: return check(op);
      case OpCode::scan: return scan(op);
      case OpCode::slice: return slice(op);
      case OpCode::concat: return concat(op);
      case OpCode::sort: return sort(op);
      case OpCode::if_: return branch(op);
      case OpCode::histogram: return histogram(op);
      case OpCode::fold: return fold(op);
      case OpCode::while_: return whileLoop(op);
      case OpCode::yield: return yield(op, *parent);
      case OpCode::print: return;  // the op table's arity and label are all its rules
      case OpCode::scalar_param: return scalarParam(op);
    }
  }

  void gridQuery(const Op& op) const {
    expectType(op, out(op, 0), kIndex, "result");
    axis(op, k_.gridRank, "a grid of rank " + std::to_string(k_.gridRank));
  }

  void tensorDim(const Op& op) const {
    expectType(op, out(op, 0), kIndex, "result");
    const TensorParam& t = tensor(op);
    axis(op, t.rank, "tensor " + t.name + " of rank " + std::to_string(t.rank));
  }

  void scalarParam(const Op& op) const {
    int64_t i = op.get(attr::index);
    if (i < 0 || static_cast<size_t>(i) >= k_.scalars.size())
      error(op, "scalar " + std::to_string(i) + " out of range; the kernel has " + std::to_string(k_.scalars.size()) +
                    " scalars");
    const ScalarParam& p = k_.scalars[static_cast<size_t>(i)];
    expectType(op, out(op, 0), Type{p.dtype, {}}, "result for scalar " + p.name);
  }

  void constant(const Op& op) const {
    Number v = op.get(attr::value);
    bool floating = isFloat(out(op, 0).dtype);
    if (floating != std::holds_alternative<double>(v))
      error(op, std::string("needs a ") + (floating ? "double" : "int64") + " 'value' for " + out(op, 0).str());
    if (!fitsDType(v, out(op, 0).dtype))
      error(op, "value " + attrText(v) + " does not fit " + std::string(dtypeName(out(op, 0).dtype)));
  }

  void iota(const Op& op) const {
    const Type& r = out(op, 0);
    if (r.dtype != DType::i32 || r.isScalar()) error(op, "result must be an i32 tile but is " + r.str());
    axis(op, r.rank(), r.str());
  }

  void unary(const Op& op) const {
    elementDType(op, in(op, 0));
    sameType(op, in(op, 0), out(op, 0), "operand and result");
  }

  void binary(const Op& op) const {
    const Type& a = in(op, 0);
    sameType(op, a, in(op, 1), "operand");
    elementDType(op, a);
    if (op.code != OpCode::cmp) return sameType(op, a, out(op, 0), "operand and result");
    expectType(op, out(op, 0), Type{DType::boolean, a.shape}, "result");
    const std::string& pred = op.get(attr::pred);
    static constexpr std::string_view kPreds[] = {"lt", "le", "gt", "ge", "eq", "ne"};
    if (std::find(std::begin(kPreds), std::end(kPreds), pred) == std::end(kPreds))
      error(op, "unknown predicate '" + pred + "'");
  }

  void select(const Op& op) const {
    const Type& a = in(op, 1);
    sameType(op, a, in(op, 2), "operand");
    expectType(op, in(op, 0), Type{DType::boolean, a.shape}, "condition");
    sameType(op, a, out(op, 0), "operand and result");
  }

  void fma(const Op& op) const {
    const Type& a = in(op, 0);
    for (int i : {1, 2}) sameType(op, a, in(op, i), "operand");
    sameType(op, a, out(op, 0), "operand and result");
    if (a.dtype != DType::f32 && a.dtype != DType::f64)
      error(op, "takes f32 or f64 values, not " + a.str() + "; cast 16-bit floats to f32 first");
  }

  void cast(const Op& op) const {
    if (in(op, 0).shape != out(op, 0).shape)
      error(op, "cast changes only the dtype, not " + in(op, 0).str() + " to " + out(op, 0).str());
  }

  void broadcast(const Op& op) const {
    const Type &x = in(op, 0), &r = out(op, 0);
    bool ok = x.dtype == r.dtype && x.rank() == r.rank();
    for (size_t i = 0; ok && i < x.shape.size(); ++i) ok = x.shape[i] == r.shape[i] || x.shape[i] == 1;
    if (!ok) error(op, "cannot broadcast " + x.str() + " to " + r.str());
  }

  void reshape(const Op& op) const {
    const Type &x = in(op, 0), &r = out(op, 0);
    if (x.dtype != r.dtype || x.numel() != r.numel()) error(op, "cannot reshape " + x.str() + " to " + r.str());
  }

  void permute(const Op& op) const {
    const Type& x = in(op, 0);
    const std::vector<int64_t>& perm = op.get(attr::perm);
    std::vector<int64_t> sorted = perm, identity(x.shape.size());
    std::sort(sorted.begin(), sorted.end());
    std::iota(identity.begin(), identity.end(), 0);
    if (sorted != identity) error(op, "perm is not a permutation of the axes of " + x.str());
    Type want{x.dtype, {}};
    for (int64_t p : perm) want.shape.push_back(x.shape[static_cast<size_t>(p)]);
    expectType(op, out(op, 0), want, "result");
  }

  void reduction(const Op& op) const {
    const Type& x = in(op, 0);
    int64_t a = axis(op, x.rank(), x.str());
    bool isArg = op.code == OpCode::argmax || op.code == OpCode::argmin;
    Type want{isArg ? DType::i32 : x.dtype, x.shape};
    want.shape.erase(want.shape.begin() + a);
    expectType(op, out(op, 0), want, "result");
  }

  void dot(const Op& op) const {
    bool hasAcc = op.operands.size() == 3;
    const Type &a = in(op, 0), &b = in(op, 1), &r = out(op, 0);
    bool float8Pair = isFloat8(a.dtype) && isFloat8(b.dtype);  // e4m3 x e5m2 too
    bool u8TimesI8 = a.dtype == DType::u8 && b.dtype == DType::i8;
    if (a.rank() != 2 || b.rank() != 2 || a.shape[1] != b.shape[0] || (a.dtype != b.dtype && !float8Pair && !u8TimesI8))
      error(op, "cannot multiply " + a.str() + " by " + b.str());
    if (isUnsigned(a.dtype) && !u8TimesI8) error(op, "takes no unsigned operands but u8 x i8, got " + a.str());
    expectType(op, r, Type{r.dtype, {a.shape[0], b.shape[1]}}, "result");
    // f16/bf16/f8 products may give f16, bf16 or f32 (f8 results are cast); i8 (and u8 x i8)
    // products accumulate in i32.
    bool halfInputs = a.dtype == DType::f16 || a.dtype == DType::bf16 || float8Pair;
    bool halfOrF32 = r.dtype == DType::f16 || r.dtype == DType::bf16 || r.dtype == DType::f32;
    bool widened = halfInputs ? halfOrF32 : (a.dtype == DType::i8 || u8TimesI8) && r.dtype == DType::i32;
    if (!widened && (r.dtype != a.dtype || float8Pair || u8TimesI8))
      error(op, "cannot produce " + r.str() + " from " + std::string(dtypeName(a.dtype)) + " operands");
    if (hasAcc) sameType(op, in(op, 2), r, "accumulator and result");
  }

  static void fillFits(const Op& op, const TensorParam& t) {
    Number fill = op.get(attr::fill);
    if (!fitsDType(fill, t.dtype))
      error(op, "fill " + attrText(fill) + " does not fit the tensor's " + std::string(dtypeName(t.dtype)));
  }

  void load(const Op& op) const {
    const TensorParam& t = tensor(op);
    arity(op, static_cast<size_t>(t.rank), 1);
    offsets(op, t.rank);
    matchesTensor(op, out(op, 0), t, "result");
    fillFits(op, t);
  }

  void store(const Op& op) const {
    const TensorParam& t = tensor(op);
    arity(op, static_cast<size_t>(t.rank) + 1, 0);
    offsets(op, t.rank);
    matchesTensor(op, in(op, static_cast<size_t>(t.rank)), t, "value");
  }

  // gather and scatter: one integer coordinate tile per tensor axis, each of the shape of
  // `like` (gather's result, scatter's value), from operand 0; then `extra` operands
  // (scatter's value); then an optional bool mask of that shape.
  void coordinates(const Op& op, const TensorParam& t, size_t extra, const Type& like, const std::string& what) const {
    const Shape& shape = like.shape;
    size_t rank = static_cast<size_t>(t.rank);
    if (op.operands.size() != rank + extra && op.operands.size() != rank + extra + 1)
      error(op, "expected " + std::to_string(rank) + " coordinates for tensor " + t.name + (extra ? ", the value" : "") +
                    " and an optional mask, but got " + std::to_string(op.operands.size()) + " operands");
    for (size_t d = 0; d < rank; ++d) {
      const Type& c = in(op, d);
      if (!isInteger(c.dtype) || c.shape != shape)
        error(op, "coordinate " + std::to_string(d) + " must be an integer tile shaped like the " + what + " " +
                      like.str() + " but is " + c.str());
    }
    if (op.operands.size() == rank + extra + 1)
      expectType(op, in(op, rank + extra), Type{DType::boolean, shape}, "mask");
  }

  void gather(const Op& op) const {
    const TensorParam& t = tensor(op);
    const Type& r = out(op, 0);
    if (r.dtype != t.dtype) error(op, "result " + r.str() + " does not match tensor " + t.name + "'s " + std::string(dtypeName(t.dtype)));
    coordinates(op, t, 0, r, "result");
    fillFits(op, t);
  }

  void scatter(const Op& op) const {
    const TensorParam& t = tensor(op);
    size_t rank = static_cast<size_t>(t.rank);
    if (op.operands.size() <= rank) error(op, "expected " + std::to_string(rank) + " coordinates and a value");
    const Type& v = in(op, rank);
    if (v.dtype != t.dtype) error(op, "value " + v.str() + " does not match tensor " + t.name + "'s " + std::string(dtypeName(t.dtype)));
    coordinates(op, t, 1, v, "value");
  }

  void slice(const Op& op) const {
    const Type &x = in(op, 0), &r = out(op, 0);
    int64_t a = axis(op, x.rank(), x.str());
    int64_t start = op.get(attr::start);
    Type want = x;
    want.shape[size_t(a)] = r.rank() == x.rank() ? r.shape[size_t(a)] : 0;
    if (r != want || start < 0 || want.shape[size_t(a)] < 1 || start > x.shape[size_t(a)] - want.shape[size_t(a)])
      error(op, "cannot slice " + r.str() + " from " + x.str() + " at " + std::to_string(start));
  }

  void concat(const Op& op) const {
    const Type& r = out(op, 0);
    int64_t a = axis(op, r.rank(), r.str()), total = 0;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      Type x = in(op, i);
      if (x.rank() != r.rank() || x.dtype != r.dtype) error(op, "cannot join " + x.str() + " into " + r.str());
      total += x.shape[size_t(a)];
      x.shape[size_t(a)] = r.shape[size_t(a)];
      if (x != r) error(op, "operand " + std::to_string(i) + " " + in(op, i).str() + " does not fit " + r.str());
    }
    if (total != r.shape[size_t(a)]) error(op, "the operands add up to " + std::to_string(total) + " along axis " + std::to_string(a) + ", not " + std::to_string(r.shape[size_t(a)]));
  }

  void scan(const Op& op) const {
    if (op.regions.size() == 1) return combineScan(op);
    arity(op, 1, 1);
    const Type& x = in(op, 0);
    axis(op, x.rank(), x.str());
    const std::string& fn = op.get(attr::fn);
    if (fn != "add" && fn != "mul" && fn != "max" && fn != "min") error(op, "unknown fn '" + fn + "'; expected add, mul, max or min");
    if (x.dtype == DType::boolean) error(op, "cannot scan bool values");
    sameType(op, x, out(op, 0), "operand and result");
  }

  void sort(const Op& op) const {
    size_t n = op.operands.size();
    arity(op, n, n);
    const Type& keys = in(op, 0);
    axis(op, keys.rank(), keys.str());
    if (keys.dtype == DType::boolean) error(op, "cannot sort bool keys");
    for (size_t i = 0; i < n; ++i) sameType(op, in(op, i), out(op, i), "operand " + std::to_string(i) + " and result");
    if (n == 2 && in(op, 1).shape != keys.shape)
      error(op, "the payload " + in(op, 1).str() + " does not have the keys' shape " + keys.str());
  }

  // scan with a combine region ^(a..., b...) yielding one rank-0 value per operand: only
  // elementwise ops on rank-0 values inside, so every device runs it per element.
  void combineScan(const Op& op) const {
    size_t n = op.operands.size();
    arity(op, n, n);
    const Type& x = in(op, 0);
    axis(op, x.rank(), x.str());
    const Block& combine = op.regions[0];
    if (combine.args.size() != 2 * n)
      error(op, "the combine takes " + std::to_string(combine.args.size()) + " arguments but needs " + std::to_string(2 * n));
    for (size_t i = 0; i < n; ++i) {
      if (in(op, i).shape != x.shape) error(op, "operand " + std::to_string(i) + " " + in(op, i).str() + " does not have the shape of " + x.str());
      if (in(op, i).dtype == DType::boolean) error(op, "cannot scan bool values");
      sameType(op, in(op, i), out(op, i), "operand and result");
      for (size_t side : {i, n + i}) expectType(op, typeOf(op, combine.args[side]), Type{in(op, i).dtype, {}}, "combine argument");
    }
    for (const Op& o : combine.ops) {
      bool elementwise = isUnaryElementwise(o.code) || isBinaryElementwise(o.code) || o.code == OpCode::select ||
                         o.code == OpCode::fma || o.code == OpCode::cast || o.code == OpCode::constant || o.code == OpCode::yield;
      if (!elementwise) error(o, "a scan's combine holds only elementwise ops, not " + std::string(opName(o.code)));
      for (ValueId r : o.results)
        if (!k_.type(r).isScalar()) error(o, "a scan's combine computes rank-0 values, not " + k_.type(r).str());
    }
  }

  void check(const Op& op) const {
    if (in(op, 0).dtype != DType::boolean) error(op, "the condition must be a bool tile, got " + in(op, 0).str());
  }

  void atomic(const Op& op) const {
    const TensorParam& t = tensor(op);
    const std::string& name = op.get(attr::fn);
    std::optional<AtomicFn> fn = parseAtomicFn(name);
    if (!fn) error(op, "unknown fn '" + name + "'; expected add, max, min, xchg or cas");
    if (!atomicSupports(*fn, t.dtype))
      error(op, "atomic " + name + " on the " + std::string(dtypeName(t.dtype)) + " tensor " + t.name +
                    " is not provided (i32 and i64 for every fn, f32 for add and xchg)");
    size_t rank = static_cast<size_t>(t.rank), values = *fn == AtomicFn::cas ? 2 : 1;
    if (op.operands.size() < rank + values) error(op, "expected " + std::to_string(rank) + " coordinates and " + std::to_string(values) + " values");
    const Type& r = out(op, 0);
    for (size_t i = rank; i < rank + values; ++i) sameType(op, in(op, i), r, "value and result");
    if (r.dtype != t.dtype) error(op, "result " + r.str() + " does not match tensor " + t.name + "'s " + std::string(dtypeName(t.dtype)));
    coordinates(op, t, values, r, "result");
  }

  // fold(start, end, inits...) with a body ^(k: i64, carried...).
  void fold(const Op& op) const {
    size_t n = op.operands.size() - 2;
    arity(op, n + 2, n);
    expectType(op, in(op, 0), kIndex, "start");
    expectType(op, in(op, 1), kIndex, "end");
    const Block& body = op.regions[0];
    if (body.args.size() != n + 1)
      error(op, "body takes " + std::to_string(body.args.size()) + " arguments but needs " + std::to_string(n + 1));
    expectType(op, typeOf(op, body.args[0]), kIndex, "induction variable");
    if (op.has(attr::stages)) {
      int64_t stages = op.get(attr::stages);
      if (stages < 1 || stages > kMaxStages) error(op, "stages = " + std::to_string(stages) + " is outside [1, " + std::to_string(kMaxStages) + "]");
    }
    for (const auto& flag : {attr::split, attr::specialize})
      if (op.has(flag) && op.get(flag) != 1) error(op, std::string(flag.name) + " = " + std::to_string(op.get(flag)) + " is not 1");
    for (size_t i = 0; i < n; ++i) {
      sameType(op, in(op, i + 2), out(op, i), "initial value and result");
      sameType(op, in(op, i + 2), typeOf(op, body.args[i + 1]), "initial value and body argument");
    }
  }

  void histogram(const Op& op) const {
    arity(op, 1, 1);
    const Type& x = in(op, 0);
    if (x.isScalar() || isFloat(x.dtype) || x.dtype == DType::boolean) error(op, "counts the elements of an integer tile, not " + x.str());
    int64_t bins = op.get(attr::bins);
    if (bins < 1 || bins > kMaxTileElements) error(op, "bins = " + std::to_string(bins) + " is outside [1, " + std::to_string(kMaxTileElements) + "]");
    expectType(op, out(op, 0), Type{DType::i32, {bins}}, "result");
  }

  void branch(const Op& op) const {
    expectType(op, in(op, 0), Type{DType::boolean, {}}, "the condition");
    for (const Block& side : op.regions)
      if (!side.args.empty()) error(op, "a side of an if takes no arguments but has " + std::to_string(side.args.size()));
  }

  void whileLoop(const Op& op) const {
    arity(op, op.operands.size(), op.operands.size());
    for (size_t r = 0; r < 2; ++r) {
      const Block& region = op.regions[r];
      if (region.args.size() != op.operands.size())
        error(op, std::string(r == 0 ? "cond" : "body") + " takes " + std::to_string(region.args.size()) +
                      " arguments but needs " + std::to_string(op.operands.size()));
      for (size_t i = 0; i < op.operands.size(); ++i)
        sameType(op, in(op, i), typeOf(op, region.args[i]), "initial value and region argument");
    }
    for (size_t i = 0; i < op.operands.size(); ++i) sameType(op, in(op, i), out(op, i), "initial value and result");
  }

  void yield(const Op& op, const Op& parent) const {
    if (parent.code == OpCode::while_ && &op == &parent.regions[0].ops.back()) {  // the cond
      arity(op, 1, 0);
      return expectType(op, in(op, 0), Type{DType::boolean, {}}, "the condition");
    }
    arity(op, parent.results.size(), 0);
    for (size_t i = 0; i < op.operands.size(); ++i) {
      Type result = out(parent, i);
      if (parent.code == OpCode::scan) result.shape.clear();  // a combine yields one element
      sameType(op, in(op, i), result, "yielded value and result");
    }
  }

  const Kernel& k_;
  std::vector<State> state_;     // indexed by ValueId
  std::vector<ValueId> scope_;   // visible values, innermost last
};

}  // namespace

void verify(const Kernel& k) { Verifier(k).run(); }

}  // namespace tj::ir
