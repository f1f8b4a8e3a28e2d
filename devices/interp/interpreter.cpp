#include "devices/interp/interpreter.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>

#include "devices/interp/sanitizer.hpp"
#include "devices/interp/values.hpp"
#include "ir/op_cases.hpp"

// A switch over OpCode that leaves out an op is an error here (ir/op_cases.hpp).
#pragma GCC diagnostic error "-Wswitch"

namespace tj {

namespace {

using interp::Tile;
using interp::Value;
using ir::OpCode;

// ---- Element semantics, one overload per storage kind (double, int64_t).
// Integer arithmetic wraps through uint64 (no undefined behavior); the result
// tile's normalize() then wraps it to its dtype.

uint64_t bits(int64_t a) { return static_cast<uint64_t>(a); }
int64_t signedOf(uint64_t a) { return static_cast<int64_t>(a); }

double plus(double a, double b) { return a + b; }
int64_t plus(int64_t a, int64_t b) { return signedOf(bits(a) + bits(b)); }
double minus(double a, double b) { return a - b; }
int64_t minus(int64_t a, int64_t b) { return signedOf(bits(a) - bits(b)); }
double times(double a, double b) { return a * b; }
int64_t times(int64_t a, int64_t b) { return signedOf(bits(a) * bits(b)); }
double negate(double a) { return -a; }
int64_t negate(int64_t a) { return minus(0, a); }
double absolute(double a) { return std::fabs(a); }
int64_t absolute(int64_t a) { return a < 0 ? negate(a) : a; }
bool isNaN(double a) { return std::isnan(a); }
bool isNaN(int64_t) { return false; }

// NaN propagates; of two equal zeros max prefers +0 and min -0.
double maxOf(double a, double b) {
  if (isNaN(a) || isNaN(b)) return a + b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double minOf(double a, double b) {
  if (isNaN(a) || isNaN(b)) return a + b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
int64_t maxOf(int64_t a, int64_t b) { return std::max(a, b); }
int64_t minOf(int64_t a, int64_t b) { return std::min(a, b); }

double quotientOf(const ir::Op&, double a, double b) { return a / b; }
double remainderOf(const ir::Op&, double a, double b) { return std::fmod(a, b); }

// Truncating division. x / -1 is spelled as a negation since INT64_MIN / -1 traps.
int64_t quotientOf(const ir::Op& op, int64_t a, int64_t b) {
  if (b == 0) fail(op.loc, ir::opName(op.code), "integer division by zero: " + std::to_string(a) + " / 0");
  return b == -1 ? negate(a) : a / b;
}
int64_t remainderOf(const ir::Op& op, int64_t a, int64_t b) {
  if (b == 0) fail(op.loc, ir::opName(op.code), "integer remainder by zero: " + std::to_string(a) + " % 0");
  return b == -1 ? 0 : a % b;
}

constexpr auto kPlus = [](auto a, auto b) { return plus(a, b); };
constexpr auto kMax = [](auto a, auto b) { return maxOf(a, b); };
constexpr auto kMin = [](auto a, auto b) { return minOf(a, b); };

// ---- Index helpers.

int64_t product(ir::Shape::const_iterator begin, ir::Shape::const_iterator end) {
  int64_t n = 1;
  for (auto it = begin; it != end; ++it) n *= *it;
  return n;
}

// Calls f(flat, idx) for every multi-index of `shape` in row-major order.
template <typename F>
void forEachIndex(const ir::Shape& shape, F f) {
  int64_t n = product(shape.begin(), shape.end());
  ir::Shape idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    f(flat, idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// The element offset of `origin + idx` in t, or nullopt when outside its bounds.
std::optional<int64_t> elementOffset(const TensorArg& t, const ir::Shape& origin, const ir::Shape& idx) {
  int64_t offset = 0;
  for (size_t d = 0; d < idx.size(); ++d) {
    int64_t i = origin[d] + idx[d];
    if (i < 0 || i >= t.shape[d]) return std::nullopt;
    offset += i * t.strides[d];
  }
  return offset;
}

[[noreturn]] void unverified(const ir::Op& op, const std::string& what) {
  fail(op.loc, ir::opName(op.code), what + "; was the kernel verified?");
}

// out[i] = f(xs[i]...) as a tile of type rt, rounded or wrapped to its dtype.
// f returns the result's storage type (double or int64_t).
template <typename F, typename... Vs>
Value elementwise(const ir::Op& op, const ir::Type& rt, F f, const Vs&... xs) {
  using Out = std::invoke_result_t<F, typename Vs::value_type...>;
  auto out = std::make_shared<Tile>(rt);
  std::vector<Out>& o = out->data<Out>();
  if (((xs.size() != o.size()) || ...)) unverified(op, "operand sizes differ from the result " + rt.str());
  for (size_t i = 0; i < o.size(); ++i) o[i] = f(xs[i]...);
  interp::normalize(*out);
  return out;
}

// The elements of a tile along one axis.
template <typename T>
struct Lane {
  const T* first;
  int64_t stride, size;
  T operator[](int64_t j) const { return first[j * stride]; }
};

template <typename T, typename F>
T foldLane(Lane<T> lane, F f) {
  T acc = lane[0];
  for (int64_t j = 1; j < lane.size; ++j) acc = f(acc, lane[j]);
  return acc;
}

// The first index of the best element, or of the first NaN (like torch).
template <typename T, typename Better>
int64_t argBest(Lane<T> lane, Better better) {
  int64_t best = 0;
  for (int64_t j = 1; j < lane.size && !isNaN(lane[best]); ++j)
    if (isNaN(lane[j]) || better(lane[j], lane[best])) best = j;
  return best;
}

// Applies f to every lane of x (of `shape`) along `axis`; the results, in
// row-major order of the other axes, form a tile of type rt.
template <typename T, typename F>
Value reduceLanes(const ir::Op& op, const ir::Type& rt, const std::vector<T>& x, const ir::Shape& shape,
                  size_t axis, F f) {
  using Out = std::invoke_result_t<F, Lane<T>>;
  int64_t n = shape[axis];
  int64_t inner = product(shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, shape.end());
  auto out = std::make_shared<Tile>(rt);
  std::vector<Out>& o = out->data<Out>();
  if (static_cast<int64_t>(o.size()) * n != static_cast<int64_t>(x.size()))
    unverified(op, "result " + rt.str() + " does not match the reduced operand");
  for (int64_t r = 0; r < static_cast<int64_t>(o.size()); ++r)
    o[r] = f(Lane<T>{x.data() + (r / inner) * n * inner + r % inner, inner, n});
  interp::normalize(*out);
  return out;
}

Value intScalar(int64_t v) {
  auto t = std::make_shared<Tile>(ir::Type{DType::i64, {}});
  t->ints[0] = v;
  return t;
}

// ---- The evaluator: one environment slot per ValueId, reused by every program.
class Interpreter {
 public:
  Interpreter(const ir::Kernel& k, const LaunchArgs& args, interp::Sanitizer* sanitizer)
      : kernel_(k), args_(args), env_(k.types.size()), sanitizer_(sanitizer) {}

  void runProgram(const ir::Shape& programId) {
    programId_ = programId;
    if (sanitizer_) sanitizer_->beginProgram(programId);
    runBlock(kernel_.body);
  }

 private:
  void runBlock(const ir::Block& b) {
    for (const ir::Op& op : b.ops) exec(op);
  }
  void exec(const ir::Op& op);
  void execInUnsignedOrder(const ir::Op& op);
  void execOp(const ir::Op& op);
  Value compute(const ir::Op& op, const ir::Type& rt);

  Value constant(const ir::Op& op, const ir::Type& rt);
  Value scalarParam(const ir::Op& op, const ir::Type& rt);
  Value iota(const ir::Op& op, const ir::Type& rt);
  Value unary(const ir::Op& op, const ir::Type& rt);
  Value binary(const ir::Op& op, const ir::Type& rt);
  Value compare(const ir::Op& op, const ir::Type& rt);
  Value select(const ir::Op& op, const ir::Type& rt);
  Value fusedMultiplyAdd(const ir::Op& op, const ir::Type& rt);
  Value cast(const ir::Op& op, const ir::Type& rt);
  Value broadcast(const ir::Op& op, const ir::Type& rt);
  Value reshape(const ir::Op& op, const ir::Type& rt);
  Value permute(const ir::Op& op, const ir::Type& rt);
  Value reduce(const ir::Op& op, const ir::Type& rt);
  Value dot(const ir::Op& op, const ir::Type& rt);
  Value load(const ir::Op& op, const ir::Type& rt);
  void store(const ir::Op& op);
  Value gather(const ir::Op& op, const ir::Type& rt);
  void scatter(const ir::Op& op);
  Value atomic(const ir::Op& op, const ir::Type& rt);
  Value scan(const ir::Op& op, const ir::Type& rt);
  Value histogram(const ir::Op& op, const ir::Type& rt);
  Value join(const ir::Op& op, const ir::Type& rt);
  void sort(const ir::Op& op);
  void combineScan(const ir::Op& op);
  void branch(const ir::Op& op);
  void fold(const ir::Op& op);
  void whileLoop(const ir::Op& op);
  void print(const ir::Op& op);
  void check(const ir::Op& op);

  // Applies f elementwise to operand 0 (and 1), read as their storage type.
  template <typename F>
  Value map1(const ir::Op& op, const ir::Type& rt, F f) {
    const Tile& x = in(op, 0);
    return x.isFloat() ? elementwise(op, rt, f, x.floats) : elementwise(op, rt, f, x.ints);
  }
  template <typename F>
  Value map2(const ir::Op& op, const ir::Type& rt, F f) {
    const Tile& a = in(op, 0);
    const Tile& b = in(op, 1);
    return a.isFloat() ? elementwise(op, rt, f, a.floats, b.data<double>())
                       : elementwise(op, rt, f, a.ints, b.data<int64_t>());
  }

  const Value& operand(const ir::Op& op, size_t i) const;
  const Tile& in(const ir::Op& op, size_t i) const { return *operand(op, i); }
  int64_t indexOperand(const ir::Op& op, size_t i) const;
  ir::Shape origin(const ir::Op& op, const TensorArg& t) const;
  size_t axisAttr(const ir::Op& op, size_t rank) const;
  const TensorArg& tensor(const ir::Op& op) const;
  Value rearrange(const ir::Op& op, const ir::Type& rt, const ir::Shape& srcStrides);
  using OffsetOf = std::function<std::optional<int64_t>(int64_t flat, const ir::Shape& idx)>;
  Value readElements(const ir::Op& op, const ir::Type& rt, const TensorArg& t, const OffsetOf& offsetOf);
  void writeElements(const ir::Op& op, const Tile& v, const TensorArg& t, const OffsetOf& offsetOf);
  OffsetOf indirectOffsets(const ir::Op& op, const TensorArg& t, size_t maskAt) const;
  // The sanitizer's part: operands consumed rather than passed on, and the provenance of
  // what elementwise ops, selects and dots compute.
  void useOperands(const ir::Op& op);
  Value withProvenance(const ir::Op& op, Value v);

  const ir::Kernel& kernel_;
  const LaunchArgs& args_;
  std::vector<Value> env_;  // indexed by ValueId
  ir::Shape programId_;
  interp::Sanitizer* sanitizer_;  // null: not sanitizing
};

// Whether an op orders u64 values: they are held as their bits, so int64 order is wrong for them.
bool ordersUnsigned64(const ir::Op& op, const ir::Kernel& k) {
  switch (op.code) {
    case OpCode::cmp: case OpCode::max: case OpCode::min: case OpCode::reduce_max: case OpCode::reduce_min:
    case OpCode::argmax: case OpCode::argmin: case OpCode::sort: break;
    case OpCode::scan:
      if (op.regions.empty() && (op.get(ir::attr::fn) == "max" || op.get(ir::attr::fn) == "min")) break;
      return false;
    default: return false;
  }
  return k.type(op.operands.at(0)).dtype == DType::u64;
}

// u64 values with the top bit flipped order as int64s do as unsigned numbers.
Value flipTopBits(const Tile& x) {
  auto out = std::make_shared<Tile>(x);
  for (int64_t& v : out->ints) v ^= std::numeric_limits<int64_t>::min();
  return out;
}

void Interpreter::exec(const ir::Op& op) {
  if (sanitizer_) useOperands(op);
  if (ordersUnsigned64(op, kernel_)) return execInUnsignedOrder(op);
  execOp(op);
}

// Runs op on flipped copies of its u64 operands and flips its u64 results back.
void Interpreter::execInUnsignedOrder(const ir::Op& op) {
  auto isU64 = [&](ir::ValueId v) { return kernel_.type(v).dtype == DType::u64; };
  std::map<ir::ValueId, Value> saved;
  for (size_t i = 0; i < op.operands.size(); ++i)
    if (ir::ValueId v = op.operands[i]; isU64(v) && !saved.count(v)) {
      saved[v] = operand(op, i);
      env_[static_cast<size_t>(v)] = flipTopBits(*saved[v]);
    }
  execOp(op);
  for (auto& [v, value] : saved) env_[static_cast<size_t>(v)] = value;
  for (ir::ValueId r : op.results)
    if (isU64(r)) env_[static_cast<size_t>(r)] = flipTopBits(*env_[static_cast<size_t>(r)]);
}

void Interpreter::execOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::store: return store(op);
    case OpCode::scatter: return scatter(op);
    case OpCode::print: return print(op);
    case OpCode::check: return check(op);
    case OpCode::fold: return fold(op);
    case OpCode::while_: return whileLoop(op);
    case OpCode::sort: return sort(op);
    case OpCode::scan:
      if (!op.regions.empty()) return combineScan(op);
      break;
    case OpCode::if_: return branch(op);
    case OpCode::yield: return;  // fold reads the operands
    default: break;
  }
  if (op.results.size() != 1) unverified(op, "expected one result");
  Value v = compute(op, kernel_.type(op.results[0]));
  env_[static_cast<size_t>(op.results[0])] = sanitizer_ ? withProvenance(op, std::move(v)) : std::move(v);
}

Value Interpreter::compute(const ir::Op& op, const ir::Type& rt) {
  switch (op.code) {
    case OpCode::program_id: return intScalar(programId_[axisAttr(op, programId_.size())]);
    case OpCode::num_programs: return intScalar(args_.grid[axisAttr(op, args_.grid.size())]);
    case OpCode::tensor_dim: {
      const TensorArg& t = tensor(op);
      return intScalar(t.shape[axisAttr(op, t.shape.size())]);
    }
    case OpCode::constant: return constant(op, rt);
    case OpCode::scalar_param: return scalarParam(op, rt);
    case OpCode::iota: return iota(op, rt);
    case OpCode::select: return select(op, rt);
    case OpCode::fma: return fusedMultiplyAdd(op, rt);
    case OpCode::cast: return cast(op, rt);
    case OpCode::broadcast: return broadcast(op, rt);
    case OpCode::reshape: return reshape(op, rt);
    case OpCode::permute: return permute(op, rt);
    case OpCode::dot: return dot(op, rt);
    case OpCode::load: return load(op, rt);
    case OpCode::gather: return gather(op, rt);
    case OpCode::atomic: return atomic(op, rt);
    case OpCode::scan: return scan(op, rt);
    case OpCode::histogram: return histogram(op, rt);
    case OpCode::slice: case OpCode::concat: return join(op, rt);
    TJ_UNARY_ELEMENTWISE_OPS: return unary(op, rt);
    TJ_BINARY_ELEMENTWISE_OPS: return op.code == OpCode::cmp ? compare(op, rt) : binary(op, rt);
    TJ_REDUCTION_OPS: return reduce(op, rt);
    case OpCode::store: case OpCode::scatter: case OpCode::print: case OpCode::check: case OpCode::fold:
    case OpCode::while_: case OpCode::sort: case OpCode::if_: case OpCode::yield: break;  // execOp runs them
  }
  unverified(op, "not a value-producing op");
}

const Value& Interpreter::operand(const ir::Op& op, size_t i) const {
  ir::ValueId id = i < op.operands.size() ? op.operands[i] : -1;
  if (id < 0 || static_cast<size_t>(id) >= env_.size() || !env_[static_cast<size_t>(id)])
    unverified(op, "operand " + std::to_string(i) + " has no value");
  return env_[static_cast<size_t>(id)];
}

int64_t Interpreter::indexOperand(const ir::Op& op, size_t i) const {
  const Tile& t = in(op, i);
  if (!t.type.isScalar()) unverified(op, "operand " + std::to_string(i) + " is " + t.type.str() + ", not an index");
  return t.data<int64_t>()[0];
}

size_t Interpreter::axisAttr(const ir::Op& op, size_t rank) const {
  int64_t axis = op.get(ir::attr::axis);
  if (axis < 0 || static_cast<size_t>(axis) >= rank)
    unverified(op, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return static_cast<size_t>(axis);
}

const TensorArg& Interpreter::tensor(const ir::Op& op) const {
  int64_t i = op.get(ir::attr::tensor);
  if (i < 0 || static_cast<size_t>(i) >= args_.tensors.size()) unverified(op, "no tensor " + std::to_string(i));
  return args_.tensors[static_cast<size_t>(i)];
}

// load's operands are the offsets; store's are the offsets then the value.
ir::Shape Interpreter::origin(const ir::Op& op, const TensorArg& t) const {
  size_t rank = t.shape.size();
  if (op.operands.size() != rank + (op.code == OpCode::store))
    unverified(op, "expected " + std::to_string(rank) + " offsets for a rank-" + std::to_string(rank) + " tensor");
  ir::Shape o(rank);
  for (size_t d = 0; d < rank; ++d) o[d] = indexOperand(op, d);
  return o;
}

Value Interpreter::constant(const ir::Op& op, const ir::Type& rt) {
  auto out = std::make_shared<Tile>(rt);
  ir::Number value = op.get(ir::attr::value);
  const auto* exact = std::get_if<int64_t>(&value);
  if (out->isFloat()) std::ranges::fill(out->floats, roundToFloat(rt.dtype, ir::asDouble(value)));
  else if (exact) std::ranges::fill(out->ints, wrapToInt(rt.dtype, *exact));
  else unverified(op, "needs an int64 value for " + rt.str());
  return out;
}

// A float parameter is rounded to its dtype, an integer one wrapped, as a compiled kernel reads them.
Value Interpreter::scalarParam(const ir::Op& op, const ir::Type& rt) {
  int64_t i = op.get(ir::attr::index);
  if (i < 0 || static_cast<size_t>(i) >= args_.scalars.size()) unverified(op, "no scalar " + std::to_string(i));
  const ScalarArg& arg = args_.scalars[static_cast<size_t>(i)];
  auto out = std::make_shared<Tile>(rt);
  if (out->isFloat()) std::ranges::fill(out->floats, roundToFloat(rt.dtype, arg.f));
  else std::ranges::fill(out->ints, wrapToInt(rt.dtype, arg.i));
  return out;
}

Value Interpreter::iota(const ir::Op& op, const ir::Type& rt) {
  size_t axis = axisAttr(op, rt.shape.size());
  auto out = std::make_shared<Tile>(rt);
  std::vector<int64_t>& o = out->data<int64_t>();
  forEachIndex(rt.shape, [&](int64_t flat, const ir::Shape& idx) { o[flat] = idx[axis]; });
  interp::normalize(*out);
  return out;
}

Value Interpreter::unary(const ir::Op& op, const ir::Type& rt) {
  const Tile& x = in(op, 0);
  auto floats = [&](auto f) {
    if (!x.isFloat()) fail(op.loc, ir::opName(op.code), "needs a float operand, got " + x.type.str());
    return elementwise(op, rt, f, x.floats);
  };
  switch (op.code) {
    case OpCode::neg: return map1(op, rt, [](auto v) { return negate(v); });
    case OpCode::abs:
      if (isUnsigned(rt.dtype)) return operand(op, 0);
      return map1(op, rt, [](auto v) { return absolute(v); });
    case OpCode::relu:
      if (isUnsigned(rt.dtype)) return operand(op, 0);
      return map1(op, rt, [](auto v) { return maxOf(v, decltype(v){0}); });
    // Integers are their own floor and ceiling.
    case OpCode::floor: return x.isFloat() ? floats([](double v) { return std::floor(v); }) : operand(op, 0);
    case OpCode::ceil: return x.isFloat() ? floats([](double v) { return std::ceil(v); }) : operand(op, 0);
    case OpCode::exp: return floats([](double v) { return std::exp(v); });
    case OpCode::exp2: return floats([](double v) { return std::exp2(v); });
    case OpCode::log: return floats([](double v) { return std::log(v); });
    case OpCode::log2: return floats([](double v) { return std::log2(v); });
    case OpCode::sqrt: return floats([](double v) { return std::sqrt(v); });
    case OpCode::rsqrt: return floats([](double v) { return 1.0 / std::sqrt(v); });
    case OpCode::sin: return floats([](double v) { return std::sin(v); });
    case OpCode::cos: return floats([](double v) { return std::cos(v); });
    case OpCode::tanh: return floats([](double v) { return std::tanh(v); });
    case OpCode::sigmoid: return floats([](double v) { return 1.0 / (1.0 + std::exp(-v)); });
    case OpCode::erf: return floats([](double v) { return std::erf(v); });
    case OpCode::logical_not:
      if (x.isFloat()) fail(op.loc, "not", "needs a bool or integer operand, got " + x.type.str());
      if (x.type.dtype == DType::boolean)
        return elementwise(op, rt, [](int64_t v) -> int64_t { return v == 0; }, x.ints);
      return elementwise(op, rt, [](int64_t v) { return ~v; }, x.ints);  // bitwise on integers
    default: unverified(op, "not a unary op");
  }
}

Value Interpreter::binary(const ir::Op& op, const ir::Type& rt) {
  auto bitwise = [&](auto f) {
    const Tile& a = in(op, 0);
    if (a.isFloat()) fail(op.loc, ir::opName(op.code), "needs bool or integer operands, got " + a.type.str());
    return elementwise(op, rt, f, a.ints, in(op, 1).data<int64_t>());
  };
  if (rt.dtype == DType::u64 && (op.code == OpCode::div || op.code == OpCode::rem)) {
    return bitwise([&](int64_t a, int64_t b) {
      if (b == 0) fail(op.loc, ir::opName(op.code), "integer division by zero: " + std::to_string(bits(a)) + " / 0");
      return signedOf(op.code == OpCode::div ? bits(a) / bits(b) : bits(a) % bits(b));
    });
  }
  switch (op.code) {
    case OpCode::add: return map2(op, rt, kPlus);
    case OpCode::sub: return map2(op, rt, [](auto a, auto b) { return minus(a, b); });
    case OpCode::mul: return map2(op, rt, [](auto a, auto b) { return times(a, b); });
    case OpCode::div: return map2(op, rt, [&](auto a, auto b) { return quotientOf(op, a, b); });
    case OpCode::rem: return map2(op, rt, [&](auto a, auto b) { return remainderOf(op, a, b); });
    case OpCode::max: return map2(op, rt, kMax);
    case OpCode::min: return map2(op, rt, kMin);
    case OpCode::logical_and: return bitwise([](int64_t a, int64_t b) { return a & b; });
    case OpCode::logical_or: return bitwise([](int64_t a, int64_t b) { return a | b; });
    case OpCode::bit_xor: return bitwise([](int64_t a, int64_t b) { return a ^ b; });
    case OpCode::shl: return bitwise([&](int64_t a, int64_t b) { return shiftLeft(rt.dtype, a, b); });
    case OpCode::shr: return bitwise([&](int64_t a, int64_t b) { return shiftRight(rt.dtype, a, b); });
    case OpCode::shru: return bitwise([&](int64_t a, int64_t b) { return shiftRightLogical(rt.dtype, a, b); });
    default: unverified(op, "not a binary op");
  }
}

// IEEE: every predicate but ne is false when an operand is NaN.
Value Interpreter::compare(const ir::Op& op, const ir::Type& rt) {
  const std::string& pred = op.get(ir::attr::pred);
  if (pred == "lt") return map2(op, rt, [](auto a, auto b) -> int64_t { return a < b; });
  if (pred == "le") return map2(op, rt, [](auto a, auto b) -> int64_t { return a <= b; });
  if (pred == "gt") return map2(op, rt, [](auto a, auto b) -> int64_t { return a > b; });
  if (pred == "ge") return map2(op, rt, [](auto a, auto b) -> int64_t { return a >= b; });
  if (pred == "eq") return map2(op, rt, [](auto a, auto b) -> int64_t { return a == b; });
  if (pred == "ne") return map2(op, rt, [](auto a, auto b) -> int64_t { return a != b; });
  fail(op.loc, "cmp", "unknown predicate '" + pred + "'");
}

Value Interpreter::select(const ir::Op& op, const ir::Type& rt) {
  const std::vector<int64_t>& cond = in(op, 0).data<int64_t>();
  const Tile& a = in(op, 1);
  const Tile& b = in(op, 2);
  auto pick = [](int64_t c, auto x, auto y) { return c ? x : y; };
  return a.isFloat() ? elementwise(op, rt, pick, cond, a.floats, b.data<double>())
                     : elementwise(op, rt, pick, cond, a.ints, b.data<int64_t>());
}

// One rounding, in the tiles' own dtype (an f32 fma through double would round twice).
Value Interpreter::fusedMultiplyAdd(const ir::Op& op, const ir::Type& rt) {
  const std::vector<double>&a = in(op, 0).floats, &b = in(op, 1).floats, &c = in(op, 2).floats;
  if (rt.dtype == DType::f32)
    return elementwise(op, rt, [](double x, double y, double z) { return double(std::fma(float(x), float(y), float(z))); }, a, b, c);
  return elementwise(op, rt, [](double x, double y, double z) { return std::fma(x, y, z); }, a, b, c);
}

// Each conversion rounds once: the int <-> float helpers are exact, and
// normalize() rounds float -> float and wraps int -> int (x != 0 for bool).
Value Interpreter::cast(const ir::Op& op, const ir::Type& rt) {
  const Tile& x = in(op, 0);
  DType to = rt.dtype;
  auto same = [](auto v) { return v; };
  if (x.isFloat() == isFloat(to)) return map1(op, rt, same);
  if (x.isFloat()) return elementwise(op, rt, [to](double v) { return saturateToInt(to, v); }, x.floats);
  return elementwise(op, rt, [&](int64_t v) { return interp::intToFloat(x.type.dtype, to, v); }, x.ints);
}

// The tile of type rt whose element at idx is operand 0's at sum(idx * srcStrides).
Value Interpreter::rearrange(const ir::Op& op, const ir::Type& rt, const ir::Shape& srcStrides) {
  const Tile& x = in(op, 0);
  auto out = std::make_shared<Tile>(rt);
  auto copy = [&](auto& o, const auto& src) {
    forEachIndex(rt.shape, [&](int64_t flat, const ir::Shape& idx) {
      int64_t s = 0;
      for (size_t d = 0; d < idx.size(); ++d) s += idx[d] * srcStrides[d];
      o[flat] = src[s];
    });
  };
  if (out->isFloat()) copy(out->floats, x.data<double>());
  else copy(out->ints, x.data<int64_t>());
  if (!x.provenance.empty()) {
    out->provenance.resize(out->floats.size() + out->ints.size());
    copy(out->provenance, x.provenance);
  }
  return out;
}

Value Interpreter::broadcast(const ir::Op& op, const ir::Type& rt) {
  const ir::Shape& from = in(op, 0).type.shape;
  if (from.size() != rt.shape.size()) unverified(op, "rank differs from the result " + rt.str());
  ir::Shape strides = ir::rowMajorStrides(from);
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] == 1) strides[d] = 0;  // every result index reads element 0
    else if (from[d] != rt.shape[d]) unverified(op, in(op, 0).type.str() + " does not broadcast to " + rt.str());
  }
  return rearrange(op, rt, strides);
}

Value Interpreter::reshape(const ir::Op& op, const ir::Type& rt) {
  const Tile& x = in(op, 0);
  if (x.type.numel() != rt.numel() || x.isFloat() != isFloat(rt.dtype))
    unverified(op, x.type.str() + " does not reshape to " + rt.str());
  auto out = std::make_shared<Tile>(x);
  out->type = rt;
  return out;
}

Value Interpreter::permute(const ir::Op& op, const ir::Type& rt) {
  const ir::Shape& from = in(op, 0).type.shape;
  const std::vector<int64_t>& perm = op.get(ir::attr::perm);
  ir::Shape fromStrides = ir::rowMajorStrides(from);
  ir::Shape strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm.size() != from.size() || perm[i] < 0 || static_cast<size_t>(perm[i]) >= from.size() ||
        rt.shape[i] != from[static_cast<size_t>(perm[i])])
      unverified(op, "bad permutation of " + in(op, 0).type.str() + " to " + rt.str());
    strides[i] = fromStrides[static_cast<size_t>(perm[i])];
  }
  return rearrange(op, rt, strides);
}

Value Interpreter::reduce(const ir::Op& op, const ir::Type& rt) {
  const Tile& x = in(op, 0);
  size_t axis = axisAttr(op, x.type.shape.size());
  if (x.type.shape[axis] == 0) fail(op.loc, ir::opName(op.code), "reduces an empty axis of " + x.type.str());
  auto lanes = [&](auto f) {
    return x.isFloat() ? reduceLanes(op, rt, x.floats, x.type.shape, axis, f)
                       : reduceLanes(op, rt, x.ints, x.type.shape, axis, f);
  };
  switch (op.code) {
    // Floats sum in double and round once, in normalize(); ints wrap once.
    case OpCode::reduce_sum: return lanes([](auto l) { return foldLane(l, kPlus); });
    case OpCode::reduce_max: return lanes([](auto l) { return foldLane(l, kMax); });
    case OpCode::reduce_min: return lanes([](auto l) { return foldLane(l, kMin); });
    case OpCode::argmax: return lanes([](auto l) { return argBest(l, std::greater<>()); });
    case OpCode::argmin: return lanes([](auto l) { return argBest(l, std::less<>()); });
    default: unverified(op, "not a reduction");
  }
}

// Products and sums in double (exact products for f16/bf16) or wrapping int64,
// starting from the accumulator; normalize() rounds once to the result dtype.
Value Interpreter::dot(const ir::Op& op, const ir::Type& rt) {
  const ir::Type& at = in(op, 0).type;
  const ir::Type& bt = in(op, 1).type;
  if (at.rank() != 2 || bt.rank() != 2 || at.shape[1] != bt.shape[0] || rt.shape != ir::Shape{at.shape[0], bt.shape[1]})
    unverified(op, "bad shapes " + at.str() + " x " + bt.str() + " -> " + rt.str());
  int64_t m = at.shape[0], k = at.shape[1], n = bt.shape[1];
  bool hasAcc = op.operands.size() > 2;
  auto out = std::make_shared<Tile>(hasAcc ? in(op, 2) : Tile(rt));
  if (out->type.shape != rt.shape || out->isFloat() != isFloat(rt.dtype))
    unverified(op, "accumulator " + out->type.str() + " does not fit " + rt.str());
  out->type = rt;
  // Row-by-row over contiguous storage so the inner loop is a plain axpy.
  auto contract = [&](auto* c, const auto* a, const auto* b) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        auto aip = a[i * k + p];
        const auto* brow = b + p * n;
        auto* crow = c + i * n;
        for (int64_t j = 0; j < n; ++j) crow[j] = plus(crow[j], times(aip, brow[j]));
      }
  };
  if (out->isFloat()) contract(out->floats.data(), in(op, 0).data<double>().data(), in(op, 1).data<double>().data());
  else contract(out->ints.data(), in(op, 0).data<int64_t>().data(), in(op, 1).data<int64_t>().data());
  interp::normalize(*out);
  return out;
}

Value Interpreter::load(const ir::Op& op, const ir::Type& rt) {
  const TensorArg& t = tensor(op);
  ir::Shape at = origin(op, t);
  if (rt.shape.size() != t.shape.size()) unverified(op, "result " + rt.str() + " does not match the tensor's rank");
  return readElements(op, rt, t, [&](int64_t, const ir::Shape& idx) { return elementOffset(t, at, idx); });
}

void Interpreter::store(const ir::Op& op) {
  const TensorArg& t = tensor(op);
  ir::Shape at = origin(op, t);
  const Tile& v = in(op, op.operands.size() - 1);
  if (v.type.shape.size() != t.shape.size()) unverified(op, "value " + v.type.str() + " does not match the tensor's rank");
  writeElements(op, v, t, [&](int64_t, const ir::Shape& idx) { return elementOffset(t, at, idx); });
}

// gather's operands are a coordinate tile per tensor axis, then the mask if any; scatter's
// the coordinates, the value, then the mask if any.
Value Interpreter::gather(const ir::Op& op, const ir::Type& rt) {
  const TensorArg& t = tensor(op);
  return readElements(op, rt, t, indirectOffsets(op, t, t.shape.size()));
}

// Elements go in row-major order: of duplicate coordinates the last is written.
void Interpreter::scatter(const ir::Op& op) {
  const TensorArg& t = tensor(op);
  if (op.operands.size() <= t.shape.size()) unverified(op, "no value operand");
  writeElements(op, in(op, t.shape.size()), t, indirectOffsets(op, t, t.shape.size() + 1));
}

// Elements update in row-major order, each seeing the ones before (duplicates all apply).
Value Interpreter::atomic(const ir::Op& op, const ir::Type& rt) {
  const TensorArg& t = tensor(op);
  std::optional<ir::AtomicFn> fn = ir::parseAtomicFn(op.get(ir::attr::fn));
  if (!fn || rt.dtype != t.dtype) unverified(op, "bad fn or result type");
  size_t rank = t.shape.size(), values = *fn == ir::AtomicFn::cas ? 2 : 1;
  OffsetOf offsetOf = indirectOffsets(op, t, rank + values);
  const Tile& value = in(op, rank);
  const Tile* compare = values == 2 ? &in(op, rank + 1) : nullptr;
  auto out = std::make_shared<Tile>(rt);
  auto* base = static_cast<std::byte*>(t.data);
  int bytes = dtypeBytes(t.dtype);
  auto larger = [&](auto a, auto b) {
    if constexpr (std::is_same_v<decltype(a), int64_t>) return intLess(t.dtype, a, b) ? b : a;
    else return maxOf(a, b);
  };
  auto smaller = [&](auto a, auto b) {
    if constexpr (std::is_same_v<decltype(a), int64_t>) return intLess(t.dtype, b, a) ? b : a;
    else return minOf(a, b);
  };
  if (sanitizer_) out->provenance.resize(size_t(rt.numel()));
  auto update = [&](auto& old, const auto& v, const auto* cmp, auto decode, auto encode) {
    forEachIndex(rt.shape, [&](int64_t flat, const ir::Shape& idx) {
      std::optional<int64_t> e = offsetOf(flat, idx);
      if (!e) return;
      if (sanitizer_)
        out->provenance[size_t(flat)] = sanitizer_->atomic(op, static_cast<size_t>(op.get(ir::attr::tensor)), *e,
                                                           value.provenance.empty() ? 0 : value.provenance[size_t(flat)]);
      std::byte* at = base + *e * bytes;
      auto current = decode(at, t.dtype), x = v[flat];
      old[flat] = current;
      switch (*fn) {
        case ir::AtomicFn::add: x = plus(current, x); break;  // wrapped or rounded by encode
        case ir::AtomicFn::max: x = larger(current, x); break;
        case ir::AtomicFn::min: x = smaller(current, x); break;
        case ir::AtomicFn::xchg: break;
        case ir::AtomicFn::cas: if (current != (*cmp)[flat]) return; break;
      }
      encode(at, t.dtype, x);
    });
  };
  if (out->isFloat()) {
    update(out->floats, value.floats, compare ? &compare->floats : nullptr,
           interp::readFloat, [](std::byte* p, DType d, double x) { interp::writeFloat(p, d, roundToFloat(d, x)); });
  } else {
    update(out->ints, value.ints, compare ? &compare->ints : nullptr, interp::readInt, [](std::byte* p, DType d, int64_t x) {
      interp::writeInt(p, d, wrapToInt(d, x));
    });
  }
  if (sanitizer_) sanitizer_->atomicDone();
  return out;
}

// slice and concat: each result element is one operand's element, shifted along the axis.
Value Interpreter::join(const ir::Op& op, const ir::Type& rt) {
  size_t axis = axisAttr(op, rt.shape.size());
  auto out = std::make_shared<Tile>(rt);
  auto copy = [&](auto& o, auto data) {
    forEachIndex(rt.shape, [&](int64_t flat, const ir::Shape& idx) {
      ir::Shape at = idx;
      size_t k = 0;
      if (op.code == OpCode::slice) at[axis] += op.get(ir::attr::start);
      else
        while (at[axis] >= in(op, k).type.shape[axis]) at[axis] -= in(op, k++).type.shape[axis];
      const Tile& x = in(op, k);
      int64_t from = 0;
      for (size_t d = 0; d < at.size(); ++d) from = from * x.type.shape[d] + at[d];
      const auto& src = x.*data;
      o[flat] = src.empty() ? 0 : src[static_cast<size_t>(from)];  // an operand may have no provenance
    });
  };
  if (out->isFloat()) copy(out->floats, &Tile::floats);
  else copy(out->ints, &Tile::ints);
  if (std::ranges::any_of(op.operands, [&](ir::ValueId v) { return !env_[size_t(v)]->provenance.empty(); })) {
    out->provenance.resize(size_t(rt.numel()));
    copy(out->provenance, &Tile::provenance);
  }
  return out;
}

// Left to right along the axis, each step rounded (or wrapped) like the elementwise op.
Value Interpreter::scan(const ir::Op& op, const ir::Type& rt) {
  const Tile& x = in(op, 0);
  size_t axis = axisAttr(op, rt.shape.size());
  const std::string& fn = op.get(ir::attr::fn);
  auto out = std::make_shared<Tile>(rt);
  int64_t stride = 1;
  for (size_t d = axis + 1; d < rt.shape.size(); ++d) stride *= rt.shape[d];
  auto run = [&](auto& o, const auto& v) {
    auto combine = [&](auto a, auto b) -> std::decay_t<decltype(a)> {
      if (fn == "add") return plus(a, b);
      if (fn == "mul") return times(a, b);
      return fn == "max" ? kMax(a, b) : kMin(a, b);
    };
    forEachIndex(rt.shape, [&](int64_t flat, const ir::Shape& idx) {
      o[flat] = idx[axis] == 0 ? v[flat] : combine(o[flat - stride], v[flat]);
      if constexpr (std::is_same_v<std::decay_t<decltype(o[flat])>, double>) o[flat] = roundToFloat(rt.dtype, o[flat]);
      else o[flat] = wrapToInt(rt.dtype, o[flat]);
    });
  };
  if (out->isFloat()) run(out->floats, x.floats);
  else run(out->ints, x.ints);
  return out;
}

Value Interpreter::histogram(const ir::Op& op, const ir::Type& rt) {
  auto out = std::make_shared<Tile>(rt);
  for (int64_t v : in(op, 0).data<int64_t>())
    if (v >= 0 && v < rt.shape[0]) ++out->ints[size_t(v)];
  return out;
}

// Left to right along the axis: each element becomes the combine of the one before it
// (already combined) and itself, the combine run as a block on rank-0 tiles.
void Interpreter::combineScan(const ir::Op& op) {
  const ir::Block& combine = op.regions[0];
  size_t n = op.operands.size();
  const ir::Type& t = in(op, 0).type;
  size_t axis = axisAttr(op, t.shape.size());
  int64_t stride = 1;
  for (size_t d = axis + 1; d < t.shape.size(); ++d) stride *= t.shape[d];
  std::vector<std::shared_ptr<Tile>> outs;
  for (size_t i = 0; i < n; ++i) {
    outs.push_back(std::make_shared<Tile>(in(op, i)));
    outs.back()->provenance.clear();  // a scan's results are computed, not read
  }
  auto element = [](const Tile& tile, int64_t flat) {
    auto e = std::make_shared<Tile>(ir::Type{tile.type.dtype, {}});
    if (tile.isFloat()) e->floats[0] = tile.floats[size_t(flat)];
    else e->ints[0] = tile.ints[size_t(flat)];
    return e;
  };
  forEachIndex(t.shape, [&](int64_t flat, const ir::Shape& idx) {
    if (idx[axis] == 0) return;
    for (size_t i = 0; i < n; ++i) {
      env_[static_cast<size_t>(combine.args[i])] = element(*outs[i], flat - stride);
      env_[static_cast<size_t>(combine.args[n + i])] = element(*outs[i], flat);
    }
    runBlock(combine);
    for (size_t i = 0; i < n; ++i) {
      const Tile& r = in(combine.ops.back(), i);
      if (r.isFloat()) outs[i]->floats[size_t(flat)] = r.floats.at(0);
      else outs[i]->ints[size_t(flat)] = r.ints.at(0);
    }
  });
  for (size_t i = 0; i < n; ++i) env_[static_cast<size_t>(op.results[i])] = outs[i];
}

// A stable sort of each line along the axis: the keys' order, with NaN after (ascending) or
// before (descending) every number; the payload follows its keys.
void Interpreter::sort(const ir::Op& op) {
  const Tile& keys = in(op, 0);
  const ir::Type& t = keys.type;
  size_t axis = axisAttr(op, t.shape.size());
  bool descending = op.get(ir::attr::descending) != 0;
  int64_t stride = 1, n = t.shape[axis];
  for (size_t d = axis + 1; d < t.shape.size(); ++d) stride *= t.shape[d];
  std::vector<std::shared_ptr<Tile>> outs;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    outs.push_back(std::make_shared<Tile>(in(op, i)));
    outs.back()->provenance.clear();  // sorted results are computed, not read
  }
  auto sortLines = [&](const auto& k) {
    auto before = [&](int64_t a, int64_t b) {
      auto x = k[size_t(a)], y = k[size_t(b)];
      if constexpr (std::is_same_v<std::decay_t<decltype(x)>, double>)
        if (std::isnan(x) || std::isnan(y)) return descending ? std::isnan(x) && !std::isnan(y) : !std::isnan(x) && std::isnan(y);
      return descending ? x > y : x < y;
    };
    std::vector<int64_t> order(size_t(n), 0);
    forEachIndex(t.shape, [&](int64_t flat, const ir::Shape& idx) {
      if (idx[axis] != 0) return;  // once per line, from its first element
      for (int64_t i = 0; i < n; ++i) order[size_t(i)] = flat + i * stride;
      std::stable_sort(order.begin(), order.end(), before);
      for (size_t o = 0; o < outs.size(); ++o) {
        const Tile& src = in(op, o);
        for (int64_t i = 0; i < n; ++i) {
          size_t to = size_t(flat + i * stride), from = size_t(order[size_t(i)]);
          if (src.isFloat()) outs[o]->floats[to] = src.floats[from];
          else outs[o]->ints[to] = src.ints[from];
        }
      }
    });
  };
  if (keys.isFloat()) sortLines(keys.floats);
  else sortLines(keys.ints);
  for (size_t o = 0; o < outs.size(); ++o) env_[static_cast<size_t>(op.results[o])] = outs[o];
}

// Element `flat` of the coordinate tiles, unless a coordinate is outside the tensor or the
// mask (operand maskAt, when there is one) is false there.
Interpreter::OffsetOf Interpreter::indirectOffsets(const ir::Op& op, const TensorArg& t, size_t maskAt) const {
  size_t rank = t.shape.size();
  if (op.operands.size() < maskAt || op.operands.size() > maskAt + 1)
    unverified(op, "expected " + std::to_string(rank) + " coordinates for a rank-" + std::to_string(rank) + " tensor");
  std::vector<const std::vector<int64_t>*> coords;
  for (size_t d = 0; d < rank; ++d) coords.push_back(&in(op, d).data<int64_t>());
  const std::vector<int64_t>* mask = op.operands.size() > maskAt ? &in(op, maskAt).data<int64_t>() : nullptr;
  return [&t, coords, mask](int64_t flat, const ir::Shape&) -> std::optional<int64_t> {
    if (mask && !(*mask)[static_cast<size_t>(flat)]) return std::nullopt;
    ir::Shape at(coords.size()), none(coords.size(), 0);
    for (size_t d = 0; d < at.size(); ++d) at[d] = (*coords[d])[static_cast<size_t>(flat)];
    return elementOffset(t, at, none);
  };
}

// The tile of type rt whose element is the tensor's at offsetOf, or the fill where that has none.
Value Interpreter::readElements(const ir::Op& op, const ir::Type& rt, const TensorArg& t, const OffsetOf& offsetOf) {
  if (rt.dtype != t.dtype) unverified(op, "result " + rt.str() + " does not match the " + std::string(dtypeName(t.dtype)) + " tensor");
  ir::Number fillAttr = op.get(ir::attr::fill);
  double fill = ir::asDouble(fillAttr);
  auto out = std::make_shared<Tile>(rt);
  const auto* base = static_cast<const std::byte*>(t.data);
  int bytes = dtypeBytes(t.dtype);
  auto read = [&](auto& o, auto fillValue, auto decode) {
    forEachIndex(rt.shape, [&](int64_t flat, const ir::Shape& idx) {
      std::optional<int64_t> e = offsetOf(flat, idx);
      o[flat] = e ? decode(base + *e * bytes, t.dtype) : fillValue;
    });
  };
  if (out->isFloat()) read(out->floats, roundToFloat(rt.dtype, fill), interp::readFloat);
  else if (const auto* exact = std::get_if<int64_t>(&fillAttr)) read(out->ints, wrapToInt(rt.dtype, *exact), interp::readInt);
  else read(out->ints, saturateToInt(rt.dtype, fill), interp::readInt);  // integers stay exact past 2^53
  if (sanitizer_) {
    auto tensorIndex = static_cast<size_t>(op.get(ir::attr::tensor));
    uint8_t filled = op.internal ? 0 : interp::kFromFill | (op.defaultFill ? interp::kFromDefaultFill : 0);
    out->provenance.resize(size_t(rt.numel()));
    forEachIndex(rt.shape, [&](int64_t flat, const ir::Shape& idx) {
      std::optional<int64_t> e = offsetOf(flat, idx);
      out->provenance[size_t(flat)] = e ? sanitizer_->read(op, tensorIndex, *e) : filled;
    });
  }
  return out;
}

void Interpreter::writeElements(const ir::Op& op, const Tile& v, const TensorArg& t, const OffsetOf& offsetOf) {
  if (v.type.dtype != t.dtype) unverified(op, "value " + v.type.str() + " does not match the " + std::string(dtypeName(t.dtype)) + " tensor");
  auto* base = static_cast<std::byte*>(t.data);
  int bytes = dtypeBytes(t.dtype);
  auto tensorIndex = static_cast<size_t>(op.get(ir::attr::tensor));
  auto write = [&](const auto& src, auto encode) {
    forEachIndex(v.type.shape, [&](int64_t flat, const ir::Shape& idx) {
      std::optional<int64_t> e = offsetOf(flat, idx);
      if (!e) return;
      std::byte* at = base + *e * bytes;
      if (!sanitizer_) return encode(at, t.dtype, src[flat]);
      std::array<std::byte, 8> before;
      std::memcpy(before.data(), at, size_t(bytes));
      encode(at, t.dtype, src[flat]);
      sanitizer_->write(op, tensorIndex, *e, v.provenance.empty() ? 0 : v.provenance[size_t(flat)],
                        std::span(before.data(), size_t(bytes)));
    });
  };
  if (v.isFloat()) write(v.floats, interp::writeFloat);
  else write(v.ints, interp::writeInt);
}

// The first false element stops the launch, as a device reports the first check it saw fail.
void Interpreter::check(const ir::Op& op) {
  const std::vector<int64_t>& cond = in(op, 0).data<int64_t>();
  auto bad = std::find(cond.begin(), cond.end(), 0);
  if (bad == cond.end()) return;
  int64_t index = 0, program = 0;
  bool before = true;
  ir::forEachOp(kernel_.body, [&](const ir::Op& o) {
    before &= &o != &op;
    index += before && o.code == OpCode::check;
  });
  for (size_t d = 0; d < programId_.size(); ++d) program = program * args_.grid[d] + programId_[d];
  throwCheckFailed(kernel_, index, program, args_.grid, bad - cond.begin(), "interp");
}

void Interpreter::fold(const ir::Op& op) {
  size_t n = op.results.size();
  if (op.regions.size() != 1 || op.operands.size() != n + 2 || op.regions[0].args.size() != n + 1 ||
      op.regions[0].ops.empty() || op.regions[0].ops.back().code != OpCode::yield ||
      op.regions[0].ops.back().operands.size() != n)
    unverified(op, "malformed fold");
  const ir::Block& body = op.regions[0];
  const ir::Op& yield = body.ops.back();
  int64_t start = indexOperand(op, 0), end = indexOperand(op, 1);
  std::vector<Value> carried(n);
  for (size_t i = 0; i < n; ++i) carried[i] = operand(op, i + 2);
  for (int64_t k = start; k < end; ++k) {
    env_[static_cast<size_t>(body.args[0])] = intScalar(k);
    for (size_t i = 0; i < n; ++i) env_[static_cast<size_t>(body.args[i + 1])] = std::move(carried[i]);
    runBlock(body);
    for (size_t i = 0; i < n; ++i) carried[i] = operand(yield, i);
  }
  for (size_t i = 0; i < n; ++i) env_[static_cast<size_t>(op.results[i])] = std::move(carried[i]);
}

void Interpreter::whileLoop(const ir::Op& op) {
  size_t n = op.results.size();
  if (op.regions.size() != 2 || op.operands.size() != n) unverified(op, "malformed while");
  std::vector<Value> carried(n);
  for (size_t i = 0; i < n; ++i) carried[i] = operand(op, i);
  // Runs a region on the carried values; its yield's operands are its results.
  auto run = [&](const ir::Block& region) -> const ir::Op& {
    if (region.args.size() != n || region.ops.empty()) unverified(op, "malformed while");
    for (size_t i = 0; i < n; ++i) env_[static_cast<size_t>(region.args[i])] = carried[i];
    runBlock(region);
    return region.ops.back();
  };
  while (in(run(op.regions[0]), 0).data<int64_t>().at(0) != 0) {
    const ir::Op& yield = run(op.regions[1]);
    for (size_t i = 0; i < n; ++i) carried[i] = operand(yield, i);
  }
  for (size_t i = 0; i < n; ++i) env_[static_cast<size_t>(op.results[i])] = std::move(carried[i]);
}

void Interpreter::branch(const ir::Op& op) {
  if (op.regions.size() != 2) unverified(op, "malformed if");
  const ir::Block& side = op.regions[in(op, 0).data<int64_t>().at(0) != 0 ? 0 : 1];
  if (side.ops.empty() || side.ops.back().operands.size() != op.results.size()) unverified(op, "malformed if");
  runBlock(side);
  for (size_t i = 0; i < op.results.size(); ++i) env_[static_cast<size_t>(op.results[i])] = operand(side.ops.back(), i);
}

void Interpreter::print(const ir::Op& op) {
  std::string line = interp::printLine(op.get(ir::attr::label), programId_, in(op, 0));
  if (args_.print) args_.print(line);
  else std::cout << line << '\n';
}

// Operand i of op passes its value on (its provenance moves to the result, or to memory)
// rather than being consumed by a computation that reads it.
bool passesOn(const ir::Op& op, size_t i, const ir::Kernel& k) {
  switch (op.code) {
    case OpCode::yield: case OpCode::print: case OpCode::broadcast: case OpCode::reshape: case OpCode::permute:
    case OpCode::slice: case OpCode::concat: case OpCode::cast: case OpCode::while_: return true;
    case OpCode::select: return i > 0;
    case OpCode::fold: return i >= 2;
    case OpCode::store: return i + 1 == op.operands.size();
    case OpCode::scatter: case OpCode::atomic:
      return i == static_cast<size_t>(k.tensors.at(static_cast<size_t>(op.get(ir::attr::tensor))).rank);
    default: return ir::isUnaryElementwise(op.code) || ir::isBinaryElementwise(op.code) || op.code == OpCode::fma;
  }
}

void Interpreter::useOperands(const ir::Op& op) {
  for (size_t i = 0; i < op.operands.size(); ++i)
    if (const Tile& x = in(op, i); !x.provenance.empty() && !passesOn(op, i, kernel_)) sanitizer_->use(op, x.provenance);
}

// Whether element i of t is exactly zero (a float one's partner then makes the product zero).
bool isZero(const Tile& t, int64_t i) { return t.isFloat() ? t.floats[size_t(i)] == 0 : t.ints[size_t(i)] == 0; }

// A dot's result element is mismatched where its accumulator's was, where a row of a or a
// column of b it sums was (unless the other factor of that product is an exact zero, which
// makes it add nothing), and where it sums a product of an element read from inside a tensor
// and one of the other operand's fill.
std::vector<uint8_t> dotProvenance(const Tile& a, const Tile& b, const Tile* acc) {
  int64_t m = a.type.shape[0], k = a.type.shape[1], n = b.type.shape[1];
  auto bit = [](const Tile& t, int64_t i) -> uint8_t { return t.provenance.empty() ? 0 : t.provenance[size_t(i)]; };
  std::vector<uint8_t> out(size_t(m * n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      bool mismatched = acc && (bit(*acc, i * n + j) & interp::kMismatchedDot);
      for (int64_t p = 0; p < k && !mismatched; ++p) {
        uint8_t x = bit(a, i * k + p), y = bit(b, p * n + j);
        bool zero = isZero(a, i * k + p) || isZero(b, p * n + j);
        mismatched = (!zero && ((x | y) & interp::kMismatchedDot)) ||
                     ((x & interp::kFromTensor) && (y & interp::kFromFill)) ||
                     ((x & interp::kFromFill) && (y & interp::kFromTensor));
      }
      out[size_t(i * n + j)] = mismatched ? interp::kMismatchedDot : 0;
    }
  return out;
}

Value Interpreter::withProvenance(const ir::Op& op, Value v) {
  std::vector<const Tile*> xs;
  for (size_t i = 0; i < op.operands.size(); ++i) xs.push_back(&in(op, i));
  bool none = std::ranges::all_of(xs, [](const Tile* x) { return x->provenance.empty(); });
  if (none || std::ranges::any_of(xs, [&](const Tile* x) { return x == v.get(); })) return v;
  auto out = std::const_pointer_cast<Tile>(v);  // just computed: no one else holds it
  size_t n = size_t(out->type.numel());
  auto bit = [](const Tile* t, size_t i) -> uint8_t { return t->provenance.empty() ? 0 : t->provenance[i]; };
  if (op.code == OpCode::dot) {
    out->provenance = dotProvenance(*xs[0], *xs[1], xs.size() > 2 ? xs[2] : nullptr);
  } else if (op.code == OpCode::select) {
    const std::vector<int64_t>& cond = xs[0]->ints;
    out->provenance.resize(n);
    for (size_t i = 0; i < n; ++i) out->provenance[i] = bit(xs[cond[i] ? 1 : 2], i);
  } else if ((op.code == OpCode::mul || op.code == OpCode::div) && out->isFloat()) {
    // A product with an exact zero, or a zero divided, is that zero whatever the other operand
    // was made of (rows past a tensor's end, scaled by their gradient's fill, add nothing).
    const std::vector<double>& a = xs[0]->floats;
    const std::vector<double>& b = xs[1]->floats;
    const bool product = op.code == OpCode::mul;
    out->provenance.resize(n);
    for (size_t i = 0; i < n; ++i) {
      bool aZero = a[i] == 0 && std::isfinite(b[i]) && (product || b[i] != 0);
      bool bZero = product && b[i] == 0 && std::isfinite(a[i]);
      out->provenance[i] = aZero ? bit(xs[0], i) : bZero ? bit(xs[1], i) : bit(xs[0], i) | bit(xs[1], i);
    }
  } else if (ir::isUnaryElementwise(op.code) || ir::isBinaryElementwise(op.code) || op.code == OpCode::cast ||
             op.code == OpCode::fma) {
    out->provenance.assign(n, 0);
    for (const Tile* x : xs)
      for (size_t i = 0; i < n; ++i) out->provenance[i] |= bit(x, i);
  }
  return out;
}

}  // namespace

void interpret(const ir::Kernel& kernel, const LaunchArgs& args) {
  checkLaunchArgs(kernel, args, "interpret");
  interpret(kernel, args, nullptr);
}

void interpret(const ir::Kernel& kernel, const LaunchArgs& args, interp::Sanitizer* sanitizer) {
  Interpreter interpreter(kernel, args, sanitizer);
  forEachIndex(ir::Shape(args.grid.begin(), args.grid.end()),
               [&](int64_t, const ir::Shape& programId) { interpreter.runProgram(programId); });
}

}  // namespace tj
