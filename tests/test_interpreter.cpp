// The reference interpreter against float64 / int64 references, on kernels
// built op by op.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "devices/interp/interpreter.hpp"
#include "ir/passes.hpp"

namespace tj {
namespace {

using ir::OpCode;
using ir::Type;
using ir::ValueId;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Builds a kernel op by op. Ops go into the kernel body, or into the fold body
// being built.
class Builder {
 public:
  explicit Builder(int gridRank = 1) {
    k.name = "test";
    k.gridRank = gridRank;
  }
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  ir::Kernel k;

  int tensor(DType dt, int rank) {
    k.tensors.push_back({"t" + std::to_string(k.tensors.size()), dt, rank});
    return static_cast<int>(k.tensors.size() - 1);
  }
  const Type& type(ValueId v) const { return k.type(v); }

  ValueId op(OpCode c, std::vector<ValueId> operands, Type result, std::vector<ir::Attr> attrs = {}) {
    ValueId r = k.addValue(std::move(result));
    emit(c, std::move(operands), std::move(attrs)).results.push_back(r);
    return r;
  }
  ir::Op& emit(OpCode c, std::vector<ValueId> operands, std::vector<ir::Attr> attrs = {}) {
    ir::Op o{c, std::move(operands), {}, {}, {}, SourceLoc{"kernel.cpp", 42}};
    for (ir::Attr& a : attrs) o.setAttr(a.name, a.value);
    block_->ops.push_back(std::move(o));
    return block_->ops.back();
  }

  ValueId index(int64_t v) { return op(OpCode::constant, {}, {DType::i64, {}}, {{"value", v}}); }
  ValueId constant(Type t, double v) {
    if (isFloat(t.dtype)) return op(OpCode::constant, {}, std::move(t), {{"value", v}});
    return op(OpCode::constant, {}, std::move(t), {{"value", static_cast<int64_t>(v)}});
  }
  ValueId programId(int axis) { return op(OpCode::program_id, {}, {DType::i64, {}}, {{"axis", int64_t{axis}}}); }
  ValueId unary(OpCode c, ValueId x) { return op(c, {x}, type(x)); }
  ValueId binary(OpCode c, ValueId a, ValueId b) { return op(c, {a, b}, type(a)); }
  ValueId cmp(const std::string& pred, ValueId a, ValueId b) {
    return op(OpCode::cmp, {a, b}, {DType::boolean, type(a).shape}, {{"pred", pred}});
  }
  ValueId cast(ValueId x, DType to) { return op(OpCode::cast, {x}, {to, type(x).shape}); }
  ValueId reshape(ValueId x, ir::Shape s) { return op(OpCode::reshape, {x}, {type(x).dtype, std::move(s)}); }
  ValueId load(int tensor, std::vector<ValueId> offsets, Type t, double fill = 0) {
    return op(OpCode::load, std::move(offsets), std::move(t), {{"tensor", int64_t{tensor}}, {"fill", fill}});
  }
  void store(int tensor, std::vector<ValueId> offsets, ValueId value) {
    offsets.push_back(value);
    emit(OpCode::store, std::move(offsets), {{"tensor", int64_t{tensor}}});
  }

  // A fold over [start, end); body(k, carried) returns the values to yield.
  using Body = std::function<std::vector<ValueId>(ValueId, const std::vector<ValueId>&)>;
  std::vector<ValueId> fold(ValueId start, ValueId end, const std::vector<ValueId>& inits, const Body& body) {
    ir::Block region;
    region.args.push_back(k.addValue({DType::i64, {}}));
    std::vector<ValueId> carried;
    for (ValueId v : inits) carried.push_back(k.addValue(type(v)));
    region.args.insert(region.args.end(), carried.begin(), carried.end());
    ir::Block* outer = block_;
    block_ = &region;
    emit(OpCode::yield, body(region.args[0], carried));
    block_ = outer;
    std::vector<ValueId> operands{start, end};
    operands.insert(operands.end(), inits.begin(), inits.end());
    ir::Op& f = emit(OpCode::fold, operands);
    for (ValueId v : inits) f.results.push_back(k.addValue(type(v)));
    f.regions.push_back(std::move(region));
    return f.results;
  }

 private:
  ir::Block* block_ = &k.body;
};

ir::Shape rowMajor(const ir::Shape& shape) {
  ir::Shape strides(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

// A host tensor: row-major bytes of a dtype, encoded here independently of
// the interpreter. set/get address the storage by flat element index.
struct Host {
  DType dtype;
  ir::Shape shape, strides;
  std::vector<std::byte> bytes;

  Host(DType dt, ir::Shape s, const std::vector<double>& values = {})
      : dtype(dt), shape(std::move(s)), strides(rowMajor(shape)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    bytes.resize(static_cast<size_t>(n * dtypeBytes(dt)));
    for (size_t i = 0; i < values.size(); ++i) set(static_cast<int64_t>(i), values[i]);
  }
  int64_t size() const { return static_cast<int64_t>(bytes.size()) / dtypeBytes(dtype); }
  std::byte* at(int64_t i) { return bytes.data() + i * dtypeBytes(dtype); }
  const std::byte* at(int64_t i) const { return bytes.data() + i * dtypeBytes(dtype); }

  template <typename T>
  void put(int64_t i, T v) { std::memcpy(at(i), &v, sizeof v); }
  template <typename T>
  T take(int64_t i) const {
    T v;
    std::memcpy(&v, at(i), sizeof v);
    return v;
  }

  void set(int64_t i, double v) {
    switch (dtype) {
      case DType::f32: return put(i, static_cast<float>(v));
      case DType::f64: return put(i, v);
      case DType::f16: return put(i, floatToHalf(static_cast<float>(v)));
      case DType::bf16: return put(i, floatToBF16(static_cast<float>(v)));
      default: return setInt(i, static_cast<int64_t>(v));
    }
  }
  void setInt(int64_t i, int64_t v) {
    switch (dtype) {
      case DType::i8: return put(i, static_cast<int8_t>(v));
      case DType::i32: return put(i, static_cast<int32_t>(v));
      case DType::i64: return put(i, v);
      case DType::boolean: return put(i, static_cast<uint8_t>(v));
      default: return set(i, static_cast<double>(v));
    }
  }
  double get(int64_t i) const {
    switch (dtype) {
      case DType::f32: return take<float>(i);
      case DType::f64: return take<double>(i);
      case DType::f16: return halfToFloat(take<uint16_t>(i));
      case DType::bf16: return bf16ToFloat(take<uint16_t>(i));
      default: return static_cast<double>(getInt(i));
    }
  }
  int64_t getInt(int64_t i) const {
    switch (dtype) {
      case DType::i8: return take<int8_t>(i);
      case DType::i32: return take<int32_t>(i);
      case DType::i64: return take<int64_t>(i);
      case DType::boolean: return take<uint8_t>(i);
      default: return static_cast<int64_t>(get(i));
    }
  }
  void fillWith(double v) {
    for (int64_t i = 0; i < size(); ++i) set(i, v);
  }
  TensorArg arg() { return {bytes.data(), dtype, shape, strides}; }
};

void launch(const ir::Kernel& k, const std::vector<Host*>& tensors, std::vector<int64_t> grid = {1},
            PrintSink sink = {}) {
  std::vector<TensorArg> args;
  for (Host* h : tensors) args.push_back(h->arg());
  interpret(k, LaunchArgs{args, grid, std::move(sink)});
}

// Bit-exact equality of doubles, treating all NaNs as equal.
bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

// Runs body(loaded inputs) over equal-length 1-D inputs in one program. The
// result is widened (exactly) to f64 or i64 before the store, so that what
// the tile held shows even where the store's encoding would round or wrap.
using ElementwiseBody = std::function<ValueId(Builder&, const std::vector<ValueId>&)>;
Host elementwise(std::vector<Host*> inputs, const ElementwiseBody& body) {
  Builder b;
  int64_t n = inputs[0]->shape[0];
  ValueId zero = b.index(0);
  std::vector<ValueId> xs;
  for (Host* h : inputs) xs.push_back(b.load(b.tensor(h->dtype, 1), {zero}, Type{h->dtype, {n}}));
  ValueId r = body(b, xs);
  DType wide = isFloat(b.type(r).dtype) ? DType::f64 : DType::i64;
  b.store(b.tensor(wide, 1), {zero}, b.cast(r, wide));
  Host out(wide, {n});
  inputs.push_back(&out);
  launch(b.k, inputs);
  return out;
}

Host unaryOp(OpCode c, Host x) {
  return elementwise({&x}, [c](Builder& b, const std::vector<ValueId>& v) { return b.unary(c, v[0]); });
}
Host binaryOp(OpCode c, Host x, Host y) {
  return elementwise({&x, &y}, [c](Builder& b, const std::vector<ValueId>& v) { return b.binary(c, v[0], v[1]); });
}
Host castOp(Host x, DType to) {
  return elementwise({&x}, [to](Builder& b, const std::vector<ValueId>& v) { return b.cast(v[0], to); });
}

void checkFloats(const Host& got, const std::vector<double>& want) {
  REQUIRE(got.size() == static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(same(got.get(i), want[static_cast<size_t>(i)]),
                  "element " << i << ": got " << got.get(i) << ", want " << want[static_cast<size_t>(i)]);
}

void checkInts(const Host& got, const std::vector<int64_t>& want) {
  REQUIRE(got.size() == static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(got.getInt(i) == want[static_cast<size_t>(i)], "element " << i);
}

constexpr DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

TEST_CASE("interp: unary float math is the float64 result rounded once per dtype") {
  struct Case {
    OpCode op;
    double (*ref)(double);
  };
  const Case cases[] = {
      {OpCode::neg, [](double x) { return -x; }},
      {OpCode::abs, [](double x) { return std::fabs(x); }},
      {OpCode::exp, [](double x) { return std::exp(x); }},
      {OpCode::exp2, [](double x) { return std::exp2(x); }},
      {OpCode::log, [](double x) { return std::log(x); }},
      {OpCode::log2, [](double x) { return std::log2(x); }},
      {OpCode::sqrt, [](double x) { return std::sqrt(x); }},
      {OpCode::rsqrt, [](double x) { return 1 / std::sqrt(x); }},
      {OpCode::sin, [](double x) { return std::sin(x); }},
      {OpCode::cos, [](double x) { return std::cos(x); }},
      {OpCode::tanh, [](double x) { return std::tanh(x); }},
      {OpCode::sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {OpCode::erf, [](double x) { return std::erf(x); }},
      {OpCode::relu, [](double x) { return std::isnan(x) ? x : x > 0 ? x : 0.0; }},
      {OpCode::floor, [](double x) { return std::floor(x); }},
      {OpCode::ceil, [](double x) { return std::ceil(x); }},
  };
  const std::vector<double> inputs = {-2.5, -1, -0.0, 0.0, 0.3, 1, 2, 7.75, 100, 1e-3, kInf, -kInf, kNaN};
  for (DType dt : kFloatTypes) {
    std::vector<double> xs;
    for (double v : inputs) xs.push_back(roundToFloat(dt, v));
    for (const Case& c : cases) {
      CAPTURE(dtypeName(dt));
      CAPTURE(ir::opName(c.op));
      std::vector<double> want;
      for (double x : xs) want.push_back(roundToFloat(dt, c.ref(x)));
      checkFloats(unaryOp(c.op, Host(dt, {static_cast<int64_t>(xs.size())}, xs)), want);
    }
  }
}

TEST_CASE("interp: arithmetic rounds to nearest even per dtype") {
  // Half an ulp above 1 ties down to 1 (even); above 1 + ulp it ties up to
  // the even 1 + 2 ulp; three quarters of an ulp rounds up.
  checkFloats(binaryOp(OpCode::add, Host(DType::f16, {3}, {1, 1 + 0x1p-10, 1}),
                       Host(DType::f16, {3}, {0x1p-11, 0x1p-11, 0x1.8p-11})),
              {1, 1 + 0x1p-9, 1 + 0x1p-10});
  checkFloats(binaryOp(OpCode::add, Host(DType::bf16, {3}, {1, 1 + 0x1p-7, 256}),
                       Host(DType::bf16, {3}, {0x1p-8, 0x1p-8, 1})),
              {1, 1 + 0x1p-6, 256});
  checkFloats(binaryOp(OpCode::mul, Host(DType::f16, {2}, {300, 0.1}), Host(DType::f16, {2}, {300, 3})),
              {kInf, roundToFloat(DType::f16, roundToFloat(DType::f16, 0.1) * 3)});
  checkFloats(binaryOp(OpCode::div, Host(DType::f32, {2}, {1, 2}), Host(DType::f32, {2}, {3, 7})),
              {static_cast<float>(1.0 / 3), static_cast<float>(2.0 / 7)});
}

TEST_CASE("interp: infinities, NaN, signed zeros and subnormals") {
  Host a(DType::f32, {8}, {-0.0, 0.0, kNaN, 1, 1, -1, 0, kInf});
  Host b(DType::f32, {8}, {0.0, -0.0, 1, kNaN, 0, 0, 0, kInf});
  checkFloats(binaryOp(OpCode::max, a, b), {0.0, 0.0, kNaN, kNaN, 1, 0.0, 0.0, kInf});
  checkFloats(binaryOp(OpCode::min, a, b), {-0.0, -0.0, kNaN, kNaN, 0.0, -1, 0.0, kInf});
  checkFloats(binaryOp(OpCode::div, a, b), {kNaN, kNaN, kNaN, kNaN, kInf, -kInf, kNaN, kNaN});
  checkFloats(binaryOp(OpCode::sub, a, b), {-0.0, 0.0, kNaN, kNaN, 1, -1, 0.0, kNaN});
  checkFloats(unaryOp(OpCode::neg, Host(DType::f32, {2}, {0.0, -0.0})), {-0.0, 0.0});

  // f32 subnormals are kept, not flushed.
  float tiny = 1e-40f, least = std::numeric_limits<float>::denorm_min();
  checkFloats(binaryOp(OpCode::add, Host(DType::f32, {3}, {tiny, least, tiny}),
                       Host(DType::f32, {3}, {0.0, least, tiny})),
              {tiny, 2.0 * least, 2.0 * tiny});
  checkFloats(binaryOp(OpCode::mul, Host(DType::f32, {2}, {tiny, least}), Host(DType::f32, {2}, {0.5, 0.5})),
              {static_cast<float>(tiny * 0.5), 0.0});
  // f16 subnormals: 2^-24 is the least; halfway cases tie to even.
  checkFloats(binaryOp(OpCode::mul, Host(DType::f16, {4}, {0x1p-24, 0x1p-24, 0x1p-24, 0x1p-14}),
                       Host(DType::f16, {4}, {0.5, 0.75, 1.5, 0.25})),
              {0.0, 0x1p-24, 0x1p-23, 0x1p-16});
  checkFloats(binaryOp(OpCode::add, Host(DType::f16, {1}, {0x1p-24}), Host(DType::f16, {1}, {0x1p-24})), {0x1p-23});
}

TEST_CASE("interp: cmp follows IEEE, including NaN") {
  Host a(DType::f32, {4}, {1, 2, kNaN, -0.0});
  Host b(DType::f32, {4}, {2, 2, kNaN, 0.0});
  const std::pair<const char*, std::vector<int64_t>> preds[] = {
      {"lt", {1, 0, 0, 0}}, {"le", {1, 1, 0, 1}}, {"gt", {0, 0, 0, 0}},
      {"ge", {0, 1, 0, 1}}, {"eq", {0, 1, 0, 1}}, {"ne", {1, 0, 1, 0}},
  };
  for (const auto& [pred, want] : preds) {
    CAPTURE(pred);
    std::string p = pred;
    checkInts(elementwise({&a, &b},
                          [&](Builder& bl, const std::vector<ValueId>& v) { return bl.cmp(p, v[0], v[1]); }),
              want);
  }
  Host i(DType::i64, {2}, {-5, 7});
  Host j(DType::i64, {2}, {-5, -7});
  checkInts(elementwise({&i, &j},
                        [](Builder& bl, const std::vector<ValueId>& v) { return bl.cmp("gt", v[0], v[1]); }),
            {0, 1});
}

TEST_CASE("interp: select picks per element") {
  Host c(DType::boolean, {3}, {1, 0, 1});
  Host a(DType::f16, {3}, {1, 2, 3});
  Host b(DType::f16, {3}, {-1, -2, -3});
  checkFloats(elementwise({&c, &a, &b},
                          [](Builder& bl, const std::vector<ValueId>& v) {
                            return bl.op(OpCode::select, {v[0], v[1], v[2]}, bl.type(v[1]));
                          }),
              {1, -2, 3});
}

TEST_CASE("interp: integer arithmetic wraps per dtype and divides toward zero") {
  constexpr int64_t i32Max = INT32_MAX, i32Min = INT32_MIN, i64Max = INT64_MAX, i64Min = INT64_MIN;
  auto ints = [](DType dt, const std::vector<int64_t>& vs) {
    Host h(dt, {static_cast<int64_t>(vs.size())});
    for (size_t i = 0; i < vs.size(); ++i) h.setInt(static_cast<int64_t>(i), vs[i]);
    return h;
  };
  checkInts(binaryOp(OpCode::add, ints(DType::i32, {i32Max, i32Min}), ints(DType::i32, {1, -1})), {i32Min, i32Max});
  checkInts(binaryOp(OpCode::mul, ints(DType::i32, {65536, 46341}), ints(DType::i32, {65536, 46341})),
            {0, static_cast<int32_t>(int64_t{46341} * 46341)});
  checkInts(binaryOp(OpCode::mul, ints(DType::i8, {100, -128}), ints(DType::i8, {3, -1})), {44, -128});
  checkInts(binaryOp(OpCode::add, ints(DType::i8, {127}), ints(DType::i8, {1})), {-128});
  checkInts(binaryOp(OpCode::add, ints(DType::i64, {i64Max, (int64_t{1} << 53) + 1}), ints(DType::i64, {1, 0})),
            {i64Min, (int64_t{1} << 53) + 1});
  checkInts(binaryOp(OpCode::mul, ints(DType::i64, {int64_t{1} << 62}), ints(DType::i64, {4})), {0});
  checkInts(unaryOp(OpCode::neg, ints(DType::i64, {i64Min, 5})), {i64Min, -5});
  checkInts(unaryOp(OpCode::abs, ints(DType::i32, {i32Min, -5})), {i32Min, 5});
  checkInts(unaryOp(OpCode::relu, ints(DType::i32, {-3, 4})), {0, 4});

  Host n = ints(DType::i32, {-7, 7, -7, 7, i32Min});
  Host d = ints(DType::i32, {2, -2, -2, 2, -1});
  checkInts(binaryOp(OpCode::div, n, d), {-3, -3, 3, 3, i32Min});
  checkInts(binaryOp(OpCode::rem, n, d), {-1, 1, -1, 1, 0});
  checkInts(binaryOp(OpCode::div, ints(DType::i64, {i64Min}), ints(DType::i64, {-1})), {i64Min});
  checkInts(binaryOp(OpCode::rem, ints(DType::i64, {i64Min}), ints(DType::i64, {-1})), {0});

  checkInts(binaryOp(OpCode::max, ints(DType::i64, {i64Min, 3}), ints(DType::i64, {-1, 2})), {-1, 3});
  checkInts(binaryOp(OpCode::min, ints(DType::i64, {i64Min, 3}), ints(DType::i64, {-1, 2})), {i64Min, 2});
  checkInts(binaryOp(OpCode::logical_and, ints(DType::i32, {12, -1}), ints(DType::i32, {10, 5})), {8, 5});
  checkInts(binaryOp(OpCode::logical_or, ints(DType::i32, {12, 0}), ints(DType::i32, {10, 5})), {14, 5});
  checkInts(binaryOp(OpCode::logical_and, ints(DType::boolean, {1, 1, 0}), ints(DType::boolean, {1, 0, 0})), {1, 0, 0});
  checkInts(unaryOp(OpCode::logical_not, ints(DType::boolean, {1, 0})), {0, 1});
  checkInts(unaryOp(OpCode::logical_not, ints(DType::i8, {0, 5})), {-1, -6});
  checkInts(unaryOp(OpCode::floor, ints(DType::i64, {i64Max})), {i64Max});
}

TEST_CASE("interp: integer division by zero throws naming the values and the source line") {
  Host n(DType::i32, {2}, {7, -5});
  Host d(DType::i32, {2}, {1, 0});
  CHECK_THROWS_WITH_AS(binaryOp(OpCode::div, n, d), "kernel.cpp:42: div: integer division by zero: -5 / 0", Error);
  CHECK_THROWS_WITH_AS(binaryOp(OpCode::rem, n, d), "kernel.cpp:42: rem: integer remainder by zero: -5 % 0", Error);
  // Float division by zero is IEEE, not an error.
  CHECK_NOTHROW(binaryOp(OpCode::div, Host(DType::f32, {1}, {1}), Host(DType::f32, {1}, {0})));
}

TEST_CASE("interp: cast truncates, saturates and rounds exactly once") {
  checkInts(castOp(Host(DType::f32, {7}, {-2.7, 2.7, kNaN, 1e10, -1e10, kInf, -kInf}), DType::i32),
            {-2, 2, 0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN});
  checkInts(castOp(Host(DType::f32, {3}, {300.5, -129, -0.9}), DType::i8), {127, -128, 0});
  checkInts(castOp(Host(DType::f64, {5}, {1e19, -1e19, 0x1p63, -0x1p63, kNaN}), DType::i64),
            {INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, 0});
  checkInts(castOp(Host(DType::f32, {4}, {0.5, -0.0, kNaN, 0}), DType::boolean), {1, 0, 1, 0});
  checkInts(castOp(Host(DType::i32, {3}, {2, 0, -1}), DType::boolean), {1, 0, 1});
  checkInts(castOp(Host(DType::i32, {2}, {200, -5}), DType::i8), {-56, -5});
  checkFloats(castOp(Host(DType::boolean, {2}, {0, 1}), DType::f32), {0, 1});

  // Integers round once: through double these would tie and round to even.
  Host big(DType::i64, {2});
  big.setInt(0, (int64_t{1} << 60) + (int64_t{1} << 36) + 1);
  big.setInt(1, (int64_t{1} << 60) + (int64_t{1} << 52) + 1);
  checkFloats(castOp(big, DType::f32), {0x1p60 + 0x1p37, 0x1p60 + 0x1p52});
  checkFloats(castOp(big, DType::bf16), {0x1p60, 0x1p60 + 0x1p53});
  checkFloats(castOp(Host(DType::i32, {4}, {16777217, 2049, 2051, 70000}), DType::f16), {kInf, 2048, 2052, kInf});
  checkFloats(castOp(Host(DType::i32, {1}, {16777217}), DType::f32), {16777216});
  // f64 -> f16 in one rounding: through f32 the 2^-40 would be lost and 1 + 2^-11 tie down to 1.
  checkFloats(castOp(Host(DType::f64, {3}, {1 + 0x1p-11 + 0x1p-40, 65520, 0.1}), DType::f16),
              {1 + 0x1p-10, kInf, roundToFloat(DType::f16, 0.1)});
  checkFloats(castOp(Host(DType::f16, {1}, {0.1}), DType::f64), {roundToFloat(DType::f16, 0.1)});
}

TEST_CASE("interp: load reads the fill value past every edge of a 1-D tensor") {
  // Program p loads 4 elements at offset p - 5 and stores them as row p.
  Builder b;
  int x = b.tensor(DType::f32, 1), out = b.tensor(DType::f32, 2);
  ValueId offset = b.binary(OpCode::sub, b.programId(0), b.index(5));
  ValueId tile = b.load(x, {offset}, {DType::f32, {4}}, -1.5);
  b.store(out, {b.programId(0), b.index(0)}, b.reshape(tile, {1, 4}));
  Host xs(DType::f32, {5}, {10, 11, 12, 13, 14});
  Host got(DType::f32, {12, 4});
  launch(b.k, {&xs, &got}, {12});
  for (int64_t p = 0; p < 12; ++p)
    for (int64_t i = 0; i < 4; ++i) {
      int64_t j = p - 5 + i;
      CHECK_MESSAGE(got.get(p * 4 + i) == (j >= 0 && j < 5 ? 10.0 + j : -1.5), "program " << p << " element " << i);
    }
}

TEST_CASE("interp: load masks each dimension of a 2-D tensor and rounds the fill") {
  // Program (r, c) loads a 2x3 tile at (r - 2, c - 3) of a 3x4 tensor.
  Builder b(2);
  int x = b.tensor(DType::i32, 2), out = b.tensor(DType::i32, 2);
  ValueId r = b.programId(0), c = b.programId(1);
  ValueId tile = b.load(x, {b.binary(OpCode::sub, r, b.index(2)), b.binary(OpCode::sub, c, b.index(3))},
                        {DType::i32, {2, 3}}, 7.9);
  b.store(out, {b.binary(OpCode::mul, r, b.index(2)), b.binary(OpCode::mul, c, b.index(3))}, tile);
  Host xs(DType::i32, {3, 4});
  for (int64_t i = 0; i < 12; ++i) xs.setInt(i, 100 * (i / 4) + i % 4);
  Host got(DType::i32, {12, 24});
  launch(b.k, {&xs, &got}, {6, 8});
  for (int64_t gr = 0; gr < 12; ++gr)
    for (int64_t gc = 0; gc < 24; ++gc) {
      int64_t i = gr / 2 - 2 + gr % 2, j = gc / 3 - 3 + gc % 3;
      bool inside = i >= 0 && i < 3 && j >= 0 && j < 4;
      CHECK_MESSAGE(got.getInt(gr * 24 + gc) == (inside ? 100 * i + j : 7), "at " << gr << ", " << gc);
    }

  // Widened to f64 so that a fill left unrounded would show.
  Builder h;
  int hx = h.tensor(DType::f16, 1), hout = h.tensor(DType::f64, 1);
  h.store(hout, {h.index(0)}, h.cast(h.load(hx, {h.index(1)}, {DType::f16, {2}}, 0.1), DType::f64));
  Host hs(DType::f16, {2}, {3, 4});
  Host hgot(DType::f64, {2});
  launch(h.k, {&hs, &hgot});
  checkFloats(hgot, {4, roundToFloat(DType::f16, 0.1)});
}

TEST_CASE("interp: store drops out-of-range elements and leaves the rest untouched") {
  Builder b;
  int out = b.tensor(DType::f32, 1);
  ValueId ramp = b.cast(b.op(OpCode::iota, {}, {DType::i32, {4}}, {{"axis", int64_t{0}}}), DType::f32);
  ValueId values = b.binary(OpCode::add, ramp, b.constant({DType::f32, {4}}, 1));  // 1 2 3 4
  b.store(out, {b.index(-2)}, values);
  b.store(out, {b.index(4)}, values);
  Host got(DType::f32, {7});
  got.fillWith(99);
  launch(b.k, {&got});
  checkFloats(got, {3, 4, 99, 99, 1, 2, 3});

  Builder b2;
  int out2 = b2.tensor(DType::i64, 2);
  b2.store(out2, {b2.index(2), b2.index(-1)}, b2.constant({DType::i64, {2, 2}}, 5));
  Host got2(DType::i64, {3, 3});
  got2.fillWith(-7);
  launch(b2.k, {&got2});
  checkInts(got2, {-7, -7, -7, -7, -7, -7, 5, -7, -7});
}

TEST_CASE("interp: every dtype round-trips through load and store bit for bit") {
  const std::pair<DType, std::vector<double>> cases[] = {
      {DType::f32, {1.5, -0.0, -kInf, std::numeric_limits<float>::denorm_min()}},
      {DType::f64, {0.1, -0.0, kInf, std::numeric_limits<double>::denorm_min()}},
      {DType::f16, {0.1, -0.0, -kInf, 0x1p-24}},
      {DType::bf16, {0.1, -0.0, kInf, 0x1p-133}},
      {DType::i8, {-128, 127, -1, 0}},
      {DType::i32, {INT32_MIN, INT32_MAX, -1, 7}},
      {DType::i64, {-1, 1, 0, 42}},
      {DType::boolean, {1, 0, 1, 1}},
  };
  for (const auto& [dt, values] : cases) {
    CAPTURE(dtypeName(dt));
    Builder b;
    int x = b.tensor(dt, 1), out = b.tensor(dt, 1);
    b.store(out, {b.index(0)}, b.load(x, {b.index(0)}, {dt, {4}}));
    Host xs(dt, {4}, values), got(dt, {4});
    if (dt == DType::i64) xs.setInt(3, INT64_MIN + 1);  // not representable in a double
    launch(b.k, {&xs, &got});
    CHECK(got.bytes == xs.bytes);
  }
  // Any nonzero byte is true, and is written back as 1.
  Builder b;
  int x = b.tensor(DType::boolean, 1), out = b.tensor(DType::boolean, 1);
  b.store(out, {b.index(0)}, b.load(x, {b.index(0)}, {DType::boolean, {2}}));
  Host xs(DType::boolean, {2}), got(DType::boolean, {2});
  xs.put<uint8_t>(0, 2);
  launch(b.k, {&xs, &got});
  CHECK(got.getInt(0) == 1);
  CHECK(got.getInt(1) == 0);
}

TEST_CASE("interp: loads and stores follow strides of transposed, offset and broadcast views") {
  Builder b;
  int x = b.tensor(DType::f32, 2), out = b.tensor(DType::f32, 2);
  ValueId zero = b.index(0);
  b.store(out, {zero, zero}, b.load(x, {zero, zero}, {DType::f32, {3, 4}}));
  std::vector<double> storage(13);
  for (int i = 0; i < 13; ++i) storage[static_cast<size_t>(i)] = i;
  Host buf(DType::f32, {13}, storage);

  Host got(DType::f32, {3, 4});
  TensorArg transposed{buf.at(0), DType::f32, {3, 4}, {1, 3}};  // the transpose of a row-major 4x3
  TensorArg dst = got.arg();
  std::vector<TensorArg> args{transposed, dst};
  std::vector<int64_t> grid{1};
  interpret(b.k, {args, grid, {}});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 4; ++c) CHECK(got.get(r * 4 + c) == static_cast<double>(c * 3 + r));

  args[0] = {buf.at(1), DType::f32, {3, 4}, {0, 2}};  // one row repeated, every other element, from 1
  interpret(b.k, {args, grid, {}});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 4; ++c) CHECK(got.get(r * 4 + c) == static_cast<double>(1 + 2 * c));

  // A transposed destination: the store scatters by its strides.
  Host dstBuf(DType::f32, {12});
  args[0] = {buf.at(0), DType::f32, {3, 4}, {4, 1}};
  args[1] = {dstBuf.at(0), DType::f32, {3, 4}, {1, 3}};
  interpret(b.k, {args, grid, {}});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 4; ++c) CHECK(dstBuf.get(c * 3 + r) == static_cast<double>(r * 4 + c));
}

TEST_CASE("interp: fold carries two values with bounds from program_id") {
  // for k in [p, 3 - p): count += k; acc = acc * half + k, with half from outside the fold.
  Builder b;
  int outCount = b.tensor(DType::i64, 1), outAcc = b.tensor(DType::f32, 1);
  ValueId p = b.programId(0);
  ValueId half = b.constant({DType::f32, {}}, 0.5);
  auto results = b.fold(p, b.binary(OpCode::sub, b.index(3), p),
                        {b.index(0), b.constant({DType::f32, {}}, 1)},
                        [&](ValueId k, const std::vector<ValueId>& c) -> std::vector<ValueId> {
                          ValueId acc = b.binary(OpCode::add, b.binary(OpCode::mul, c[1], half), b.cast(k, DType::f32));
                          return {b.binary(OpCode::add, c[0], k), acc};
                        });
  b.store(outCount, {p}, b.reshape(results[0], {1}));
  b.store(outAcc, {p}, b.reshape(results[1], {1}));
  Host count(DType::i64, {4}), acc(DType::f32, {4});
  launch(b.k, {&count, &acc}, {4});
  for (int64_t pid = 0; pid < 4; ++pid) {
    int64_t wantCount = 0;
    float wantAcc = 1;
    for (int64_t k = pid; k < 3 - pid; ++k) {
      wantCount += k;
      wantAcc = wantAcc * 0.5f + static_cast<float>(k);
    }
    CHECK_MESSAGE(count.getInt(pid) == wantCount, "program " << pid);
    CHECK_MESSAGE(acc.get(pid) == wantAcc, "program " << pid);
  }
}

TEST_CASE("interp: nested folds see enclosing values") {
  // sum over i in [0, p + 1), j in [i, 3) of 10 * i + j
  Builder b;
  int out = b.tensor(DType::i64, 1);
  ValueId p = b.programId(0);
  ValueId ten = b.index(10);
  using Carried = std::vector<ValueId>;
  auto outer = b.fold(b.index(0), b.binary(OpCode::add, p, b.index(1)), {b.index(0)},
                      [&](ValueId i, const Carried& s) -> Carried {
                        return b.fold(i, b.index(3), s, [&](ValueId j, const Carried& t) -> Carried {
                          ValueId term = b.binary(OpCode::add, b.binary(OpCode::mul, ten, i), j);
                          return {b.binary(OpCode::add, t[0], term)};
                        });
                      });
  b.store(out, {p}, b.reshape(outer[0], {1}));
  Host got(DType::i64, {4});
  launch(b.k, {&got}, {4});
  for (int64_t pid = 0; pid < 4; ++pid) {
    int64_t want = 0;
    for (int64_t i = 0; i < pid + 1; ++i)
      for (int64_t j = i; j < 3; ++j) want += 10 * i + j;
    CHECK_MESSAGE(got.getInt(pid) == want, "program " << pid);
  }
}

DType widest(DType t) { return isFloat(t) ? DType::f64 : DType::i64; }

// Reduces a loaded [rows, cols] tile along `axis` to `outType`; returns the
// result widened to f64 or i64, like elementwise().
Host reduceOp(OpCode c, int axis, Host x, DType outType) {
  Builder b;
  ir::Shape shape{x.shape[1 - static_cast<size_t>(axis)]};
  int in = b.tensor(x.dtype, 2), out = b.tensor(widest(outType), 1);
  ValueId zero = b.index(0);
  ValueId tile = b.load(in, {zero, zero}, {x.dtype, x.shape});
  ValueId r = b.op(c, {tile}, {outType, shape}, {{"axis", int64_t{axis}}});
  b.store(out, {zero}, b.cast(r, widest(outType)));
  Host got(widest(outType), shape);
  launch(b.k, {&x, &got});
  return got;
}

TEST_CASE("interp: reduce_sum accumulates in double and rounds once") {
  // Rounding each partial sum to f16 would lose both 2^-11 terms.
  checkFloats(reduceOp(OpCode::reduce_sum, 1, Host(DType::f16, {1, 4}, {1, 0x1p-11, 0x1p-11, 0}), DType::f16),
              {1 + 0x1p-10});
  Host x(DType::f32, {2, 3}, {0.1, 0.2, 0.3, 1e8, 1, -1e8});
  checkFloats(reduceOp(OpCode::reduce_sum, 1, x, DType::f32),
              {static_cast<float>(double(0.1f) + double(0.2f) + double(0.3f)), 1});
  checkFloats(reduceOp(OpCode::reduce_sum, 0, x, DType::f32),
              {static_cast<float>(double(0.1f) + 1e8), static_cast<float>(double(0.2f) + 1),
               static_cast<float>(double(0.3f) - 1e8)});
  checkFloats(reduceOp(OpCode::reduce_sum, 1, Host(DType::f32, {1, 2}, {-0.0, -0.0}), DType::f32), {-0.0});

  Host big(DType::i64, {1, 3});
  big.setInt(0, int64_t{1} << 53);
  big.setInt(1, 1);
  big.setInt(2, 1);
  checkInts(reduceOp(OpCode::reduce_sum, 1, big, DType::i64), {(int64_t{1} << 53) + 2});
  checkInts(reduceOp(OpCode::reduce_sum, 1, Host(DType::i8, {1, 3}, {127, 1, 0}), DType::i8), {-128});
}

TEST_CASE("interp: reduce_max and reduce_min propagate NaN and order zeros") {
  Host x(DType::f32, {4, 2}, {1, -0.0, kNaN, 0.0, 3, 0.0, -5, -0.0});
  checkFloats(reduceOp(OpCode::reduce_max, 0, x, DType::f32), {kNaN, 0.0});
  checkFloats(reduceOp(OpCode::reduce_min, 0, x, DType::f32), {kNaN, -0.0});
  checkFloats(reduceOp(OpCode::reduce_max, 1, x, DType::f32), {1, kNaN, 3, -0.0});
  checkInts(reduceOp(OpCode::reduce_min, 1, Host(DType::i32, {2, 2}, {4, -9, 2, 8}), DType::i32), {-9, 2});
}

TEST_CASE("interp: argmax and argmin return the first extreme, or the first NaN") {
  Host x(DType::f32, {5, 4}, {1, 3, 3, 2,  //
                              5, 5, 5, 5,  //
                              1, kNaN, 7, kNaN,  //
                              -kInf, -kInf, 0, -1,  //
                              2, 1, 1, kNaN});
  checkInts(reduceOp(OpCode::argmax, 1, x, DType::i32), {1, 0, 1, 2, 3});
  checkInts(reduceOp(OpCode::argmin, 1, x, DType::i32), {0, 0, 1, 0, 3});
  checkInts(reduceOp(OpCode::argmax, 0, x, DType::i32), {1, 2, 2, 2});
  checkInts(reduceOp(OpCode::argmin, 0, x, DType::i32), {3, 2, 3, 2});
  checkInts(reduceOp(OpCode::argmax, 1, Host(DType::i8, {2, 3}, {-1, 4, 4, 0, 0, -2}), DType::i32), {1, 0});
  checkInts(reduceOp(OpCode::argmin, 1, Host(DType::i8, {2, 3}, {-1, 4, -1, 0, 0, -2}), DType::i32), {0, 2});
}

// dot(a, b[, acc]) of whole host tensors, widened to f64 or i64.
Host dotOp(Host a, Host b, DType outType, Host* acc = nullptr) {
  Builder bl;
  int ta = bl.tensor(a.dtype, 2), tb = bl.tensor(b.dtype, 2), out = bl.tensor(widest(outType), 2);
  ValueId zero = bl.index(0);
  std::vector<ValueId> operands{bl.load(ta, {zero, zero}, {a.dtype, a.shape}),
                                bl.load(tb, {zero, zero}, {b.dtype, b.shape})};
  std::vector<Host*> hosts{&a, &b};
  if (acc) {
    operands.push_back(bl.load(bl.tensor(acc->dtype, 2), {zero, zero}, {acc->dtype, acc->shape}));
    hosts.push_back(acc);
  }
  Host got(widest(outType), {a.shape[0], b.shape[1]});
  bl.store(out, {zero, zero}, bl.cast(bl.op(OpCode::dot, operands, {outType, got.shape}), widest(outType)));
  hosts.insert(hosts.begin() + 2, &got);
  launch(bl.k, hosts);
  return got;
}

TEST_CASE("interp: dot of f16 inputs accumulates exactly and rounds once to f32") {
  // Row 0 overflows f16 precision (2048 + 1 + 1); row 1 needs one final
  // rounding (stepwise f32 would drop each 2^-24).
  Host a(DType::f16, {2, 3}, {2048, 1, 1, 1, 0x1p-24, 0x1p-24});
  Host b(DType::f16, {3, 2}, {1, 1, 1, 2, 1, 0});
  checkFloats(dotOp(a, b, DType::f32), {2050, 2050, 1 + 0x1p-23, 1 + 0x1p-23});
  Host acc(DType::f32, {2, 2}, {0.5, -2050, 0x1p-24, 0});
  checkFloats(dotOp(a, b, DType::f32, &acc), {2050.5, 0, static_cast<float>(1 + 0x1p-23 + 0x1p-24), 1 + 0x1p-23});
}

TEST_CASE("interp: dot matches a float64 reference and wraps integers") {
  const int64_t m = 7, k = 5, n = 6;
  Host a(DType::f32, {m, k}), b(DType::f32, {k, n});
  for (int64_t i = 0; i < a.size(); ++i) a.set(i, std::sin(static_cast<double>(i) + 0.5) * 3);
  for (int64_t i = 0; i < b.size(); ++i) b.set(i, std::cos(static_cast<double>(i) * 1.7));
  Host got = dotOp(a, b, DType::f32);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += a.get(i * k + p) * b.get(p * n + j);
      CHECK(got.get(i * n + j) == static_cast<float>(want));
    }

  checkInts(dotOp(Host(DType::i8, {1, 2}, {100, -128}), Host(DType::i8, {2, 1}, {100, 100}), DType::i32), {-2800});
  checkInts(dotOp(Host(DType::i32, {1, 2}, {65536, 65536}), Host(DType::i32, {2, 1}, {65536, 65536}), DType::i32), {0});
}

TEST_CASE("interp: broadcast, reshape, permute and iota move elements as documented") {
  auto run = [](Host x, ir::Shape outShape, const std::function<ValueId(Builder&, ValueId)>& f) {
    Builder b;
    int in = b.tensor(x.dtype, static_cast<int>(x.shape.size()));
    int out = b.tensor(x.dtype, static_cast<int>(outShape.size()));
    std::vector<ValueId> inZeros(x.shape.size(), b.index(0)), outZeros(outShape.size(), b.index(0));
    b.store(out, outZeros, f(b, b.load(in, inZeros, {x.dtype, x.shape})));
    Host got(x.dtype, outShape);
    launch(b.k, {&x, &got});
    return got;
  };
  auto bcast = [](ir::Shape s) {
    return [s](Builder& b, ValueId v) { return b.op(OpCode::broadcast, {v}, {b.type(v).dtype, s}); };
  };
  checkInts(run(Host(DType::i32, {1, 3}, {1, 2, 3}), {2, 3}, bcast({2, 3})), {1, 2, 3, 1, 2, 3});
  checkInts(run(Host(DType::i32, {2, 1}, {1, 2}), {2, 3}, bcast({2, 3})), {1, 1, 1, 2, 2, 2});
  checkFloats(run(Host(DType::bf16, {2, 3}, {1, 2, 3, 4, 5, 6}), {3, 2},
                  [](Builder& b, ValueId v) { return b.reshape(v, {3, 2}); }),
              {1, 2, 3, 4, 5, 6});

  Host x(DType::i64, {2, 3, 4});
  for (int64_t i = 0; i < 24; ++i) x.setInt(i, i);
  Host p = run(x, {4, 2, 3}, [](Builder& b, ValueId v) {
    return b.op(OpCode::permute, {v}, {DType::i64, {4, 2, 3}}, {{"perm", std::vector<int64_t>{2, 0, 1}}});
  });
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t l = 0; l < 3; ++l) CHECK(p.getInt((i * 2 + j) * 3 + l) == (j * 3 + l) * 4 + i);

  for (int64_t axis = 0; axis < 2; ++axis) {
    Builder b;
    int out = b.tensor(DType::i32, 2);
    b.store(out, {b.index(0), b.index(0)}, b.op(OpCode::iota, {}, {DType::i32, {2, 3}}, {{"axis", axis}}));
    Host got(DType::i32, {2, 3});
    launch(b.k, {&got});
    checkInts(got, axis == 0 ? std::vector<int64_t>{0, 0, 0, 1, 1, 1} : std::vector<int64_t>{0, 1, 2, 0, 1, 2});
  }
}

TEST_CASE("interp: program_id, num_programs and tensor_dim read the launch") {
  Builder b(2);
  int out = b.tensor(DType::i64, 2);
  auto leaf = [&](OpCode c, std::vector<ir::Attr> attrs) { return b.op(c, {}, {DType::i64, {}}, std::move(attrs)); };
  auto scaled = [&](ValueId v, int64_t by) { return b.binary(OpCode::mul, v, b.index(by)); };
  ValueId r = b.programId(0), c = b.programId(1);
  ValueId programs = leaf(OpCode::num_programs, {{"axis", int64_t{1}}});
  ValueId width = leaf(OpCode::tensor_dim, {{"axis", int64_t{1}}, {"tensor", int64_t{out}}});
  // 1000 r + 100 c + 10 num_programs(1) + tensor_dim(out, 1)
  ValueId value = b.binary(OpCode::add, b.binary(OpCode::add, scaled(r, 1000), scaled(c, 100)),
                           b.binary(OpCode::add, scaled(programs, 10), width));
  b.store(out, {r, c}, b.reshape(value, {1, 1}));
  Host got(DType::i64, {2, 5});
  launch(b.k, {&got}, {2, 3});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 5; ++j) CHECK(got.getInt(i * 5 + j) == (j < 3 ? 1000 * i + 100 * j + 35 : 0));
}

TEST_CASE("interp: print sends one line per program in shortest round-trip form") {
  Builder b(2);
  int x = b.tensor(DType::i32, 2);
  ValueId zero = b.index(0);
  b.emit(OpCode::print, {b.load(x, {zero, zero}, {DType::i32, {2, 2}})}, {{"label", std::string("x")}});
  auto show = [&](DType dt, double v) {
    b.emit(OpCode::print, {b.constant({dt, {}}, v)}, {{"label", std::string(dtypeName(dt))}});
  };
  show(DType::f32, 0.1);
  show(DType::f16, 0.1);
  show(DType::f64, 0.1);
  show(DType::bf16, -kInf);
  show(DType::f32, kNaN);
  b.emit(OpCode::print, {b.constant({DType::boolean, {1, 3}}, 1)}, {{"label", std::string("mask")}});
  Host xs(DType::i32, {2, 2}, {1, 2, -3, 4});
  std::vector<std::string> lines;
  launch(b.k, {&xs}, {1, 2}, [&](const std::string& line) { lines.push_back(line); });
  std::vector<std::string> want;
  for (const char* p : {"(0, 0)", "(0, 1)"}) {
    std::string at = std::string(" program ") + p + ": ";
    want.insert(want.end(), {"[x]" + at + "[[1, 2], [-3, 4]]", "[f32]" + at + "0.1", "[f16]" + at + "0.099975586",
                             "[f64]" + at + "0.1", "[bf16]" + at + "-inf", "[f32]" + at + "nan",
                             "[mask]" + at + "[[1, 1, 1]]"});
  }
  CHECK(lines == want);
}

TEST_CASE("interp: launch arguments must match the kernel's tensors and grid") {
  Builder b;
  int x = b.tensor(DType::f32, 1), out = b.tensor(DType::f32, 1);
  b.store(out, {b.index(0)}, b.load(x, {b.index(0)}, {DType::f32, {2}}));
  Host xs(DType::f32, {2}, {1, 2});
  Host got(DType::f32, {2});
  got.fillWith(99);
  Host half(DType::f16, {2});
  Host matrix(DType::f32, {1, 2});
  CHECK_THROWS_WITH_AS(launch(b.k, {&half, &got}), doctest::Contains("tensor 't0' is f16 but the kernel expects f32"),
                       Error);
  CHECK_THROWS_WITH_AS(launch(b.k, {&xs, &matrix}),
                       doctest::Contains("tensor 't1' has rank 2 with 2 strides but the kernel expects rank 1"), Error);
  CHECK_THROWS_WITH_AS(launch(b.k, {&xs}), doctest::Contains("got 1 tensors but the kernel takes 2"), Error);
  CHECK_THROWS_WITH_AS(launch(b.k, {&xs, &got}, {1, 1}),
                       doctest::Contains("the grid has 2 sizes but the kernel's grid rank is 1"), Error);
  std::vector<TensorArg> args{xs.arg(), got.arg()};
  args[1].strides.clear();
  std::vector<int64_t> grid{1};
  CHECK_THROWS_WITH_AS(interpret(b.k, {args, grid, {}}), doctest::Contains("tensor 't1' has rank 1 with 0 strides"),
                       Error);
  checkFloats(got, {99, 99});  // nothing ran
  launch(b.k, {&xs, &got});
  checkFloats(got, {1, 2});
}

TEST_CASE("interp: scalar_param reads the launch's scalars, rounded or wrapped to the parameter's dtype") {
  Builder b;
  int floats = b.tensor(DType::f64, 1), ints = b.tensor(DType::i64, 1);
  const std::vector<DType> floatTypes{DType::f32, DType::f16, DType::bf16, DType::f64}, intTypes{DType::i32, DType::i64};
  // Parameter i of `types` is widened exactly and stored at element i of `tensor`.
  auto storeParams = [&](const std::vector<DType>& types, int tensor, DType wide) {
    for (size_t i = 0; i < types.size(); ++i) {
      auto index = static_cast<int64_t>(b.k.scalars.size());
      b.k.scalars.push_back({"s" + std::to_string(index), types[i]});
      ValueId v = b.op(OpCode::scalar_param, {}, {types[i], {}}, {{"index", index}});
      b.store(tensor, {b.index(static_cast<int64_t>(i))}, b.reshape(b.cast(v, wide), {1}));
    }
  };
  storeParams(floatTypes, floats, DType::f64);
  storeParams(intTypes, ints, DType::i64);
  ir::verify(b.k);
  Host gotFloats(DType::f64, {4}), gotInts(DType::i64, {2});
  std::vector<TensorArg> tensors{gotFloats.arg(), gotInts.arg()};
  std::vector<int64_t> grid{1};
  const int64_t wide = (int64_t{1} << 31) + 5;
  std::vector<ScalarArg> scalars{{.f = 0.1}, {.f = 0.1}, {.f = 0.1}, {.f = 0.1}, {.i = wide}, {.i = wide}};
  interpret(b.k, {tensors, grid, {}, scalars});
  checkFloats(gotFloats, {roundToFloat(DType::f32, 0.1), roundToFloat(DType::f16, 0.1), roundToFloat(DType::bf16, 0.1),
                          0.1});
  checkInts(gotInts, {wrapToInt(DType::i32, wide), wide});
  CHECK(gotInts.getInt(0) == -2147483643);

  scalars.pop_back();
  CHECK_THROWS_WITH_AS(interpret(b.k, {tensors, grid, {}, scalars}),
                       "interpret: kernel 'test': got 5 scalars but the kernel takes 6", Error);
}

TEST_CASE("interp: a blocked GEMM with ragged edges matches a float64 reference") {
  const int64_t m = 257, n = 191, k = 129, bm = 128, bn = 128, bk = 32;
  Builder b(2);
  int ta = b.tensor(DType::f32, 2), tb = b.tensor(DType::f32, 2), tc = b.tensor(DType::f32, 2);
  ValueId row = b.binary(OpCode::mul, b.programId(0), b.index(bm));
  ValueId col = b.binary(OpCode::mul, b.programId(1), b.index(bn));
  ValueId kDim = b.op(OpCode::tensor_dim, {}, {DType::i64, {}}, {{"axis", int64_t{1}}, {"tensor", int64_t{ta}}});
  ValueId steps = b.binary(OpCode::div, b.binary(OpCode::add, kDim, b.index(bk - 1)), b.index(bk));
  auto acc = b.fold(b.index(0), steps, {b.constant({DType::f32, {bm, bn}}, 0)},
                    [&](ValueId s, const std::vector<ValueId>& c) -> std::vector<ValueId> {
                      ValueId kk = b.binary(OpCode::mul, s, b.index(bk));
                      ValueId at = b.load(ta, {row, kk}, {DType::f32, {bm, bk}});
                      ValueId bt = b.load(tb, {kk, col}, {DType::f32, {bk, bn}});
                      return {b.op(OpCode::dot, {at, bt, c[0]}, {DType::f32, {bm, bn}})};
                    });
  b.store(tc, {row, col}, acc[0]);
  Host a(DType::f32, {m, k}), bb(DType::f32, {k, n}), c(DType::f32, {m, n});
  for (int64_t i = 0; i < a.size(); ++i) a.set(i, static_cast<double>((i * 37) % 17) / 8 - 1);
  for (int64_t i = 0; i < bb.size(); ++i) bb.set(i, static_cast<double>((i * 11) % 13) / 4 - 1.5);
  c.fillWith(kNaN);
  launch(b.k, {&a, &bb, &c}, {(m + bm - 1) / bm, (n + bn - 1) / bn});
  int mismatches = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += a.get(i * k + p) * bb.get(p * n + j);
      // Inputs are multiples of 1/32 with small sums: every partial sum is exact in f32.
      mismatches += c.get(i * n + j) != want;
    }
  CHECK(mismatches == 0);
}

}  // namespace
}  // namespace tj
