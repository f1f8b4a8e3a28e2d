// The IR passes: semantic hash, constant folding, CSE, DCE, dot fusion and
// canonicalize, on kernels built op by op.
#include <algorithm>
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "ir/passes.hpp"

using namespace tj;
using namespace tj::ir;

namespace {

Type scalar(DType t) { return {t, {}}; }
uint64_t bits(double d) { return std::bit_cast<uint64_t>(d); }
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Appends ops to a kernel under construction; fold() fills a region, then
// returns to the enclosing block.
class Builder {
 public:
  explicit Builder(int gridRank = 1) { k.gridRank = gridRank; }
  Builder(const Builder&) = delete;

  Kernel k;
  SourceLoc loc;  // given to each op appended

  int tensor(DType t, int rank, std::string name = "t") {
    k.tensors.push_back({std::move(name), t, rank});
    return static_cast<int>(k.tensors.size()) - 1;
  }
  ValueId op(OpCode c, std::vector<ValueId> operands, Type t, std::vector<Attr> attrs = {}) {
    ValueId r = k.addValue(std::move(t));
    append(c, std::move(operands), {r}, attrs);
    return r;
  }
  void effect(OpCode c, std::vector<ValueId> operands, std::vector<Attr> attrs = {}) {
    append(c, std::move(operands), {}, attrs);
  }
  ValueId constant(Type t, AttrValue v) { return op(OpCode::constant, {}, std::move(t), {{"value", std::move(v)}}); }
  ValueId i64(int64_t v) { return constant(scalar(DType::i64), v); }
  ValueId programId(int64_t axis = 0) { return op(OpCode::program_id, {}, scalar(DType::i64), {{"axis", axis}}); }
  ValueId load(int tensor, std::vector<ValueId> offsets, Type t) {
    return op(OpCode::load, std::move(offsets), std::move(t), {{"fill", 0.0}, {"tensor", int64_t{tensor}}});
  }
  void store(int tensor, std::vector<ValueId> offsets, ValueId v) {
    offsets.push_back(v);
    effect(OpCode::store, std::move(offsets), {{"tensor", int64_t{tensor}}});
  }

  using Body = std::function<std::vector<ValueId>(ValueId iv, const std::vector<ValueId>& carried)>;
  std::vector<ValueId> fold(ValueId start, ValueId end, const std::vector<ValueId>& inits, const Body& body) {
    Block region;
    region.args.push_back(k.addValue(scalar(DType::i64)));
    for (ValueId v : inits) region.args.push_back(k.addValue(k.type(v)));
    Block* outer = std::exchange(cur_, &region);
    effect(OpCode::yield, body(region.args[0], {region.args.begin() + 1, region.args.end()}));
    cur_ = outer;
    Op f{OpCode::fold, {start, end}, {}, {}, {}, loc};
    for (ValueId v : inits) {
      f.operands.push_back(v);
      f.results.push_back(k.addValue(k.type(v)));
    }
    f.regions.push_back(std::move(region));
    cur_->ops.push_back(f);
    return f.results;
  }

 private:
  void append(OpCode c, std::vector<ValueId> operands, std::vector<ValueId> results, const std::vector<Attr>& attrs) {
    Op o{c, std::move(operands), std::move(results), {}, {}, loc};
    for (const Attr& a : attrs) o.setAttr(a.name, a.value);
    cur_->ops.push_back(std::move(o));
  }

  Block* cur_ = &k.body;
};

std::vector<const Op*> allOps(const Kernel& k) {
  std::vector<const Op*> ops;
  forEachOp(k.body, [&](const Op& op) { ops.push_back(&op); });
  return ops;
}

int count(const Kernel& k, OpCode c) {
  int n = 0;
  for (const Op* op : allOps(k)) n += op->code == c;
  return n;
}

std::vector<OpCode> topLevel(const Kernel& k) {
  std::vector<OpCode> codes;
  for (const Op& op : k.body.ops) codes.push_back(op.code);
  return codes;
}

const Op& only(const Kernel& k, OpCode c) {
  REQUIRE(count(k, c) == 1);
  for (const Op* op : allOps(k))
    if (op->code == c) return *op;
  throw std::logic_error("unreachable");
}

// The op defining `v` (results only; block arguments have none).
const Op* def(const Kernel& k, ValueId v) {
  for (const Op* op : allOps(k))
    for (ValueId r : op->results)
      if (r == v) return op;
  return nullptr;
}

// What the kernel's only store writes.
ValueId stored(const Kernel& k) { return only(k, OpCode::store).operands.back(); }

// A kernel that stores `c(constants...)`.
Kernel storeOf(OpCode c, Type operandType, const std::vector<AttrValue>& values, Type result,
               std::vector<Attr> attrs = {}) {
  Builder b;
  b.tensor(result.dtype, result.rank());
  std::vector<ValueId> xs;
  for (const AttrValue& v : values) xs.push_back(b.constant(operandType, v));
  ValueId r = b.op(c, xs, result, std::move(attrs));
  b.store(0, std::vector<ValueId>(result.shape.size(), b.i64(0)), r);
  return std::move(b.k);
}

// The op defining the stored value after folding.
Op foldedOp(const Kernel& k) {
  Kernel out = foldConstants(k);
  const Op* d = def(out, stored(out));
  REQUIRE(d != nullptr);
  return *d;
}

AttrValue folded(const Kernel& k) {
  Op op = foldedOp(k);
  REQUIRE(op.code == OpCode::constant);
  return toAttrValue(op.get(attr::value));
}

AttrValue foldBinary(OpCode c, DType t, AttrValue a, AttrValue b) {
  return folded(storeOf(c, scalar(t), {std::move(a), std::move(b)}, scalar(t)));
}
double foldFloat(OpCode c, DType t, double a, double b) { return std::get<double>(foldBinary(c, t, a, b)); }
int64_t foldInt(OpCode c, DType t, int64_t a, int64_t b) { return std::get<int64_t>(foldBinary(c, t, a, b)); }

AttrValue foldCast(DType from, AttrValue v, DType to) { return folded(storeOf(OpCode::cast, scalar(from), {v}, scalar(to))); }

int64_t foldCmp(const std::string& pred, DType t, AttrValue a, AttrValue b) {
  return std::get<int64_t>(folded(storeOf(OpCode::cmp, scalar(t), {a, b}, scalar(DType::boolean), {{"pred", pred}})));
}

// ---------------------------------------------------------------------------
// semanticHash

// A small kernel with a loop; every field is one way it can vary.
struct Sample {
  OpCode combine = OpCode::add;
  bool swapOperands = false;
  DType dtype = DType::f32;
  int64_t block = 64;
  double scale = 1.0;
  int64_t axis = 0;
  int tensorRank = 1;
  int gridRank = 1;
  std::string label = "acc";
  bool printFirst = false;
  // none of these may change the hash
  int idOffset = 0;
  std::string tensorName = "x";
  std::string kernelName = "sample";
  int line = 0;
};

Kernel sampleKernel(const Sample& s) {
  Builder b(s.gridRank);
  b.k.name = s.kernelName;
  b.loc = {"sample.cpp", s.line};
  for (int i = 0; i < s.idOffset; ++i) b.k.addValue(scalar(DType::i8));
  b.tensor(s.dtype, s.tensorRank, s.tensorName);
  b.tensor(s.dtype, 1, s.tensorName + "_out");
  Type tile{s.dtype, {s.block}};
  ValueId off = b.op(OpCode::mul, {b.programId(s.axis), b.i64(s.block)}, scalar(DType::i64));
  ValueId x = b.load(0, {off}, tile);
  ValueId c = b.constant(tile, s.scale);
  ValueId y = b.op(s.combine, s.swapOperands ? std::vector{c, x} : std::vector{x, c}, tile);
  ValueId acc = b.fold(b.i64(0), b.i64(4), {y}, [&](ValueId, const std::vector<ValueId>& carried) {
    return std::vector{b.op(OpCode::mul, {carried[0], x}, tile)};
  })[0];
  if (s.printFirst) b.effect(OpCode::print, {acc}, {{"label", s.label}});
  b.store(1, {off}, acc);
  if (!s.printFirst) b.effect(OpCode::print, {acc}, {{"label", s.label}});
  return std::move(b.k);
}

uint64_t sampleHash(const Sample& s) { return semanticHash(sampleKernel(s)); }

TEST_CASE("semanticHash ignores value numbering, names and source locations") {
  Sample renamed;
  renamed.idOffset = 7;
  renamed.tensorName = "other";
  renamed.kernelName = "renamed";
  renamed.line = 42;
  Kernel a = sampleKernel({}), b = sampleKernel(renamed);
  REQUIRE(a.body.ops[0].results != b.body.ops[0].results);
  CHECK(semanticHash(a) == semanticHash(b));
  CHECK(semanticHash(a) == semanticHash(a));
}

TEST_CASE("semanticHash changes with any semantic difference") {
  uint64_t base = sampleHash({});
  auto differs = [&](auto change) {
    Sample s;
    change(s);
    return sampleHash(s) != base;
  };
  CHECK(differs([](Sample& s) { s.combine = OpCode::sub; }));
  CHECK(differs([](Sample& s) { s.swapOperands = true; }));
  CHECK(differs([](Sample& s) { s.dtype = DType::f16; }));
  CHECK(differs([](Sample& s) { s.block = 32; }));
  CHECK(differs([](Sample& s) { s.scale = 2.0; }));
  CHECK(differs([](Sample& s) { s.axis = 1; }));
  CHECK(differs([](Sample& s) { s.tensorRank = 2; }));
  CHECK(differs([](Sample& s) { s.gridRank = 2; }));
  CHECK(differs([](Sample& s) { s.label = "acd"; }));
  CHECK(differs([](Sample& s) { s.printFirst = true; }));
}

TEST_CASE("semanticHash sees value dtypes, signed zeros and attribute types") {
  Kernel f32 = storeOf(OpCode::cast, scalar(DType::f32), {1.0}, scalar(DType::i32));
  Kernel f64 = storeOf(OpCode::cast, scalar(DType::f64), {1.0}, scalar(DType::i32));
  CHECK(semanticHash(f32) != semanticHash(f64));
  auto withScale = [](double v) {
    Sample s;
    s.scale = v;
    return sampleHash(s);
  };
  CHECK(withScale(0.0) != withScale(-0.0));
  CHECK(withScale(kNaN) == withScale(kNaN));
  Kernel i = storeOf(OpCode::neg, scalar(DType::f32), {int64_t{1}}, scalar(DType::f32));
  Kernel f = storeOf(OpCode::neg, scalar(DType::f32), {1.0}, scalar(DType::f32));
  CHECK(semanticHash(i) != semanticHash(f));
}

TEST_CASE("semanticHash sees ops moved into a loop body") {
  auto build = [](bool inside) {
    Builder b;
    b.tensor(DType::i64, 0);
    ValueId p = b.programId();
    ValueId outer = inside ? p : b.op(OpCode::neg, {p}, scalar(DType::i64));
    ValueId r = b.fold(b.i64(0), b.i64(2), {p}, [&](ValueId, const std::vector<ValueId>& c) {
      ValueId v = inside ? b.op(OpCode::neg, {p}, scalar(DType::i64)) : outer;
      return std::vector{b.op(OpCode::add, {c[0], v}, scalar(DType::i64))};
    })[0];
    b.store(0, {}, r);
    return semanticHash(b.k);
  };
  CHECK(build(true) != build(false));
}

// A kernel that scales tensor 0 by scalar parameter 0, with scalars of the given dtypes.
Kernel scaledBy(const std::vector<ScalarParam>& scalars) {
  Builder b;
  b.tensor(scalars.at(0).dtype, 0);
  b.k.scalars = scalars;
  ValueId s = b.op(OpCode::scalar_param, {}, scalar(scalars[0].dtype), {{"index", int64_t{0}}});
  b.store(0, {}, b.op(OpCode::mul, {b.load(0, {}, scalar(scalars[0].dtype)), s}, scalar(scalars[0].dtype)));
  return std::move(b.k);
}

TEST_CASE("semanticHash sees scalar parameters' dtypes and count, not their names") {
  uint64_t base = semanticHash(scaledBy({{"s0", DType::f32}}));
  CHECK(semanticHash(scaledBy({{"alpha", DType::f32}})) == base);
  CHECK(semanticHash(scaledBy({{"s0", DType::f32}, {"s1", DType::i64}})) != base);
  Kernel f64 = scaledBy({{"s0", DType::f64}});
  CHECK(semanticHash(f64) != base);
  // Only the parameter's dtype differs, not any value's.
  Kernel retyped = scaledBy({{"s0", DType::f32}, {"s1", DType::i64}});
  retyped.scalars[1].dtype = DType::i32;
  CHECK(semanticHash(retyped) != semanticHash(scaledBy({{"s0", DType::f32}, {"s1", DType::i64}})));
}

TEST_CASE("hashHex and the pinned hash of the sample kernel") {
  CHECK(hashHex(0) == "0000000000000000");
  CHECK(hashHex(0x0123456789abcdefull) == "0123456789abcdef");
  CHECK(hashHex(~0ull) == "ffffffffffffffff");
  // Changes only when the encoding does (then bump its format tag).
  CHECK(hashHex(sampleHash({})) == "57c8597649243a29");
}

// ---------------------------------------------------------------------------
// foldConstants

TEST_CASE("foldConstants: integers wrap and truncate like the interpreter") {
  CHECK(foldInt(OpCode::add, DType::i32, 2147483647, 1) == -2147483648);
  CHECK(foldInt(OpCode::mul, DType::i8, 100, 3) == 44);
  CHECK(foldInt(OpCode::sub, DType::i64, std::numeric_limits<int64_t>::min(), 1) ==
        std::numeric_limits<int64_t>::max());
  CHECK(foldInt(OpCode::div, DType::i32, -7, 2) == -3);
  CHECK(foldInt(OpCode::rem, DType::i32, -7, 2) == -1);
  CHECK(foldInt(OpCode::max, DType::i32, -7, 2) == 2);
  CHECK(foldInt(OpCode::logical_and, DType::i32, 12, 10) == 8);
  CHECK(foldInt(OpCode::logical_or, DType::boolean, 0, 1) == 1);
  CHECK(foldInt(OpCode::max, DType::i8, 300, 0) == 44);  // constants are read wrapped
  CHECK(std::get<double>(foldBinary(OpCode::max, DType::f16, int64_t{2049}, int64_t{0})) == 2048.0);
}

TEST_CASE("foldConstants leaves faulting integer division to the runtime") {
  for (OpCode c : {OpCode::div, OpCode::rem}) {
    CHECK(foldedOp(storeOf(c, scalar(DType::i32), {int64_t{7}, int64_t{0}}, scalar(DType::i32))).code == c);
    int64_t min = std::numeric_limits<int64_t>::min();
    CHECK(foldedOp(storeOf(c, scalar(DType::i64), {min, int64_t{-1}}, scalar(DType::i64))).code == c);
    CHECK(foldedOp(storeOf(c, scalar(DType::i32), {int64_t{-2147483648}, int64_t{-1}}, scalar(DType::i32))).code == c);
  }
}

TEST_CASE("foldConstants: floats are rounded once to their dtype") {
  CHECK(foldFloat(OpCode::add, DType::f32, 1.0, 0x1p-30) == 1.0);
  CHECK(foldFloat(OpCode::add, DType::f64, 1.0, 0x1p-30) == 1.0 + 0x1p-30);
  CHECK(foldFloat(OpCode::add, DType::f16, 1.0, 0x1p-11) == 1.0);  // tie to even
  CHECK(foldFloat(OpCode::add, DType::f16, 1.0, 3 * 0x1p-11) == 1.0 + 0x1p-9);
  CHECK(foldFloat(OpCode::add, DType::f16, 60000.0, 10000.0) == INFINITY);
  CHECK(foldFloat(OpCode::add, DType::f16, 0.1, 0.0) == 0.0999755859375);  // constants are read rounded
  CHECK(foldFloat(OpCode::mul, DType::bf16, 1.0 + 0x1p-7, 1.0 + 0x1p-7) == 1.0 + 0x1p-6);
  CHECK(foldFloat(OpCode::div, DType::f32, 1.0, 0.0) == INFINITY);
  CHECK(std::get<double>(folded(storeOf(OpCode::sqrt, scalar(DType::f32), {2.0}, scalar(DType::f32)))) ==
        static_cast<double>(std::sqrt(2.0f)));
}

TEST_CASE("foldConstants keeps NaN, infinities and signed zeros") {
  CHECK(std::isnan(foldFloat(OpCode::add, DType::f32, kNaN, 1.0)));
  CHECK(std::isnan(foldFloat(OpCode::mul, DType::f32, kNaN, 0.0)));
  CHECK(std::isnan(foldFloat(OpCode::sub, DType::f32, INFINITY, INFINITY)));
  CHECK(bits(foldFloat(OpCode::add, DType::f32, -0.0, -0.0)) == bits(-0.0));
  CHECK(bits(foldFloat(OpCode::mul, DType::f16, -1.0, 0.0)) == bits(-0.0));
  CHECK(bits(std::get<double>(folded(storeOf(OpCode::neg, scalar(DType::f32), {0.0}, scalar(DType::f32))))) ==
        bits(-0.0));
  // max/min of a NaN or of zeros of both signs are left for the runtime
  CHECK(foldedOp(storeOf(OpCode::max, scalar(DType::f32), {kNaN, 1.0}, scalar(DType::f32))).code == OpCode::max);
  CHECK(foldedOp(storeOf(OpCode::min, scalar(DType::f32), {0.0, -0.0}, scalar(DType::f32))).code == OpCode::min);
  CHECK(foldFloat(OpCode::max, DType::f32, -3.0, 2.0) == 2.0);
}

TEST_CASE("foldConstants: comparisons, IEEE for floats") {
  CHECK(foldCmp("lt", DType::i32, int64_t{3}, int64_t{5}) == 1);
  CHECK(foldCmp("ge", DType::i32, int64_t{3}, int64_t{5}) == 0);
  CHECK(foldCmp("eq", DType::f32, 0.0, -0.0) == 1);
  CHECK(foldCmp("lt", DType::f32, kNaN, 1.0) == 0);
  CHECK(foldCmp("eq", DType::f32, kNaN, kNaN) == 0);
  CHECK(foldCmp("ne", DType::f32, kNaN, kNaN) == 1);
  CHECK(foldCmp("le", DType::f16, 0.1, 0.0999755859375) == 1);  // both read as the same f16
}

TEST_CASE("foldConstants: select picks an operand when the condition is constant") {
  for (bool cond : {true, false}) {
    Builder b;
    b.tensor(DType::i64, 0);
    ValueId p = b.programId(), q = b.programId(1);
    ValueId c = b.constant(scalar(DType::boolean), int64_t{cond});
    b.store(0, {}, b.op(OpCode::select, {c, p, q}, scalar(DType::i64)));
    Kernel out = foldConstants(b.k);
    CHECK(stored(out) == (cond ? p : q));
    CHECK(count(out, OpCode::select) == 0);
  }
}

TEST_CASE("foldConstants: casts truncate, saturate and round") {
  auto toInt = [](double v, DType to) { return std::get<int64_t>(foldCast(DType::f32, v, to)); };
  CHECK(toInt(3.75, DType::i32) == 3);
  CHECK(toInt(-3.75, DType::i32) == -3);
  CHECK(toInt(kNaN, DType::i32) == 0);
  CHECK(toInt(1e10, DType::i32) == 2147483647);
  CHECK(toInt(-1e10, DType::i32) == -2147483648);
  CHECK(toInt(300.5, DType::i8) == 127);
  CHECK(toInt(-INFINITY, DType::i64) == std::numeric_limits<int64_t>::min());
  CHECK(std::get<double>(foldCast(DType::i32, int64_t{2049}, DType::f16)) == 2048.0);
  CHECK(std::get<double>(foldCast(DType::f64, 0.1, DType::f32)) == static_cast<double>(0.1f));
  CHECK(std::get<int64_t>(foldCast(DType::i32, int64_t{300}, DType::i8)) == 44);
  CHECK(std::get<int64_t>(foldCast(DType::i32, int64_t{-5}, DType::boolean)) == 1);
  // not folded: float->bool is unspecified; 2^53 + 1 would be rounded twice
  CHECK(foldedOp(storeOf(OpCode::cast, scalar(DType::f32), {0.5}, scalar(DType::boolean))).code == OpCode::cast);
  CHECK(foldedOp(storeOf(OpCode::cast, scalar(DType::i64), {(int64_t{1} << 53) + 1}, scalar(DType::f32))).code ==
        OpCode::cast);
}

TEST_CASE("foldConstants: broadcast and reshape of a constant give a constant") {
  Builder b;
  b.tensor(DType::f32, 1);
  ValueId s = b.constant(scalar(DType::f32), 2.5);
  ValueId t = b.op(OpCode::broadcast, {b.op(OpCode::reshape, {s}, {DType::f32, {1, 1}})}, {DType::f32, {4, 8}});
  b.loc = {"user.cpp", 7};
  ValueId r = b.op(OpCode::reshape, {t}, {DType::f32, {32}});
  b.store(0, {b.i64(0)}, r);
  Kernel out = foldConstants(b.k);
  const Op* d = def(out, stored(out));
  REQUIRE(d != nullptr);
  CHECK(d->code == OpCode::constant);
  CHECK(std::get<double>(d->get(attr::value)) == 2.5);
  CHECK(out.type(stored(out)) == Type{DType::f32, {32}});
  CHECK(d->loc.line == 7);
  CHECK(count(out, OpCode::broadcast) + count(out, OpCode::reshape) == 0);
}

TEST_CASE("foldConstants leaves transcendentals and non-constant operands alone") {
  CHECK(foldedOp(storeOf(OpCode::exp, scalar(DType::f32), {1.0}, scalar(DType::f32))).code == OpCode::exp);
  Builder b;
  b.tensor(DType::i64, 0);
  b.store(0, {}, b.op(OpCode::add, {b.programId(), b.i64(1)}, scalar(DType::i64)));
  CHECK(def(foldConstants(b.k), stored(b.k))->code == OpCode::add);
}

// What `x c k` becomes for a loaded x and a constant k (first when `constantFirst`).
Op identity(OpCode c, DType t, AttrValue k, bool constantFirst = false) {
  Builder b;
  b.tensor(t, 0);
  ValueId x = b.load(0, {}, scalar(t));
  ValueId kv = b.constant(scalar(t), std::move(k));
  b.store(0, {}, b.op(c, constantFirst ? std::vector{kv, x} : std::vector{x, kv}, scalar(t)));
  return foldedOp(b.k);
}

TEST_CASE("foldConstants: exact identities only") {
  CHECK(identity(OpCode::add, DType::i32, int64_t{0}).code == OpCode::load);
  CHECK(identity(OpCode::add, DType::i32, int64_t{0}, true).code == OpCode::load);
  CHECK(identity(OpCode::sub, DType::i32, int64_t{0}).code == OpCode::load);
  CHECK(identity(OpCode::sub, DType::i32, int64_t{0}, true).code == OpCode::sub);
  CHECK(identity(OpCode::mul, DType::i64, int64_t{1}, true).code == OpCode::load);
  Op zero = identity(OpCode::mul, DType::i8, int64_t{0});
  REQUIRE(zero.code == OpCode::constant);
  CHECK(std::get<int64_t>(zero.get(attr::value)) == 0);
  CHECK(identity(OpCode::mul, DType::f32, 1.0).code == OpCode::load);
  CHECK(identity(OpCode::add, DType::f32, -0.0, true).code == OpCode::load);
  CHECK(identity(OpCode::sub, DType::f32, 0.0).code == OpCode::load);
  // -0.0 + 0.0 is 0.0; NaN * 0.0 is NaN; 0.0 - (-0.0) is 0.0 while x - (-0.0) = x + 0.0
  CHECK(identity(OpCode::add, DType::f32, 0.0).code == OpCode::add);
  CHECK(identity(OpCode::mul, DType::f32, 0.0).code == OpCode::mul);
  CHECK(identity(OpCode::sub, DType::f32, -0.0).code == OpCode::sub);
  CHECK(identity(OpCode::mul, DType::f32, 2.0).code == OpCode::mul);
}

// ---------------------------------------------------------------------------
// eliminateCommonSubexpressions

TEST_CASE("CSE merges equal pure ops, chains included") {
  Builder b;
  b.tensor(DType::i64, 0);
  ValueId p = b.programId();
  ValueId a1 = b.op(OpCode::add, {p, b.i64(3)}, scalar(DType::i64));
  ValueId a2 = b.op(OpCode::add, {p, b.i64(3)}, scalar(DType::i64));
  ValueId m1 = b.op(OpCode::mul, {a1, p}, scalar(DType::i64));
  ValueId m2 = b.op(OpCode::mul, {a2, p}, scalar(DType::i64));
  b.store(0, {}, b.op(OpCode::sub, {m1, m2}, scalar(DType::i64)));
  Kernel out = eliminateCommonSubexpressions(b.k);
  CHECK(count(out, OpCode::constant) == 1);
  CHECK(count(out, OpCode::add) == 1);
  const Op& sub = only(out, OpCode::sub);
  CHECK(sub.operands[0] == m1);
  CHECK(sub.operands[1] == m1);
}

TEST_CASE("CSE keeps ops that differ in attributes, types, constants or effects") {
  Builder b;
  b.tensor(DType::f32, 0);
  b.programId(0);
  b.programId(1);
  b.constant(scalar(DType::f32), 0.0);
  b.constant(scalar(DType::f32), -0.0);
  b.constant(scalar(DType::f64), 0.0);
  ValueId x = b.constant(scalar(DType::f32), 1.0);
  b.effect(OpCode::print, {x}, {{"label", std::string("x")}});
  b.effect(OpCode::print, {x}, {{"label", std::string("x")}});
  Kernel out = eliminateCommonSubexpressions(b.k);
  CHECK(count(out, OpCode::program_id) == 2);
  CHECK(count(out, OpCode::constant) == 4);
  CHECK(count(out, OpCode::print) == 2);
}

TEST_CASE("CSE merges loads only when the kernel stores nothing") {
  for (bool withStore : {false, true}) {
    Builder b;
    b.tensor(DType::f32, 0);
    ValueId x1 = b.load(0, {}, scalar(DType::f32));
    ValueId x2 = b.load(0, {}, scalar(DType::f32));
    ValueId s = b.op(OpCode::add, {x1, x2}, scalar(DType::f32));
    if (withStore) b.store(0, {}, s);
    else b.effect(OpCode::print, {s}, {{"label", std::string("s")}});
    CHECK(count(eliminateCommonSubexpressions(b.k), OpCode::load) == (withStore ? 2 : 1));
  }
}

TEST_CASE("CSE reuses outer values in loop bodies, never inner values outside") {
  Builder b;
  b.tensor(DType::i64, 0);
  ValueId p = b.programId();
  ValueId outer = b.op(OpCode::neg, {p}, scalar(DType::i64));
  auto body = [&](ValueId, const std::vector<ValueId>& c) {
    ValueId again = b.op(OpCode::neg, {p}, scalar(DType::i64));  // same as `outer`
    ValueId inner = b.op(OpCode::abs, {p}, scalar(DType::i64));
    return std::vector{b.op(OpCode::add, {c[0], b.op(OpCode::add, {again, inner}, scalar(DType::i64))},
                            scalar(DType::i64))};
  };
  ValueId r1 = b.fold(b.i64(0), b.i64(2), {outer}, body)[0];
  ValueId r2 = b.fold(b.i64(0), b.i64(2), {r1}, body)[0];  // a sibling: must keep its own abs
  ValueId after = b.op(OpCode::abs, {p}, scalar(DType::i64));
  b.store(0, {}, b.op(OpCode::add, {r2, after}, scalar(DType::i64)));
  Kernel out = eliminateCommonSubexpressions(b.k);
  CHECK(count(out, OpCode::neg) == 1);
  CHECK(count(out, OpCode::abs) == 3);
  for (const Op& op : out.body.ops)
    if (op.code == OpCode::fold) CHECK(op.regions[0].ops.size() == 4);  // abs, add, add, yield
}

// ---------------------------------------------------------------------------
// eliminateDeadCode

TEST_CASE("DCE removes unused pure ops transitively and keeps effects") {
  Builder b;
  b.tensor(DType::i64, 0);
  ValueId p = b.programId();
  ValueId dead = b.op(OpCode::mul, {p, b.i64(5)}, scalar(DType::i64));
  b.op(OpCode::neg, {dead}, scalar(DType::i64));
  b.load(0, {}, scalar(DType::i64));
  b.effect(OpCode::print, {p}, {{"label", std::string("p")}});
  b.store(0, {}, b.op(OpCode::abs, {p}, scalar(DType::i64)));
  Kernel out = eliminateDeadCode(b.k);
  CHECK(topLevel(out) == std::vector{OpCode::program_id, OpCode::print, OpCode::abs, OpCode::store});
}

TEST_CASE("DCE removes dead loops and dead ops in live loop bodies") {
  Builder b;
  b.tensor(DType::i64, 0);
  ValueId p = b.programId();
  // unused results, no effects: removed with everything only it used
  ValueId n = b.op(OpCode::neg, {p}, scalar(DType::i64));
  b.fold(b.i64(0), b.i64(3), {n}, [&](ValueId, const std::vector<ValueId>& c) {
    return std::vector{b.op(OpCode::add, {c[0], p}, scalar(DType::i64))};
  });
  // used: its dead body op goes, its unused induction variable stays
  ValueId r = b.fold(p, p, {p}, [&](ValueId, const std::vector<ValueId>& c) {
    b.op(OpCode::abs, {c[0]}, scalar(DType::i64));
    return std::vector{b.op(OpCode::mul, {c[0], c[0]}, scalar(DType::i64))};
  })[0];
  b.store(0, {}, r);
  Kernel out = eliminateDeadCode(b.k);
  CHECK(topLevel(out) == std::vector{OpCode::program_id, OpCode::fold, OpCode::store});
  const Op& loop = only(out, OpCode::fold);
  CHECK(loop.regions[0].args.size() == 2);
  CHECK(loop.regions[0].ops.size() == 2);  // mul, yield
  CHECK(count(out, OpCode::abs) == 0);
}

TEST_CASE("DCE keeps loops that store or print, whatever their results") {
  for (OpCode effect : {OpCode::store, OpCode::print}) {
    Builder b;
    b.tensor(DType::i64, 1);
    ValueId p = b.programId();
    b.fold(b.i64(0), b.i64(3), {p}, [&](ValueId k, const std::vector<ValueId>& c) {
      if (effect == OpCode::store) b.store(0, {k}, c[0]);
      else b.effect(OpCode::print, {c[0]}, {{"label", std::string("c")}});
      return std::vector{b.op(OpCode::add, {c[0], k}, scalar(DType::i64))};
    });
    Kernel out = eliminateDeadCode(b.k);
    CHECK(count(out, OpCode::fold) == 1);
    CHECK(count(out, effect) == 1);
    CHECK(count(out, OpCode::add) == 1);
  }
}

// ---------------------------------------------------------------------------
// fuseDotAccumulate

struct DotKernel {
  Kernel k;
  ValueId acc, dot, add;
};

// acc + a @ b with the dot `dotFirst` or second; `extraUse` gives the dot a second use.
DotKernel dotAdd(bool dotFirst, bool extraUse = false, bool dotHasAcc = false) {
  Builder b;
  b.tensor(DType::f16, 2);
  b.tensor(DType::f32, 2);
  Type ab{DType::f16, {16, 16}}, c{DType::f32, {16, 16}};
  ValueId z = b.i64(0);
  ValueId x = b.load(0, {z, z}, ab), y = b.load(0, {z, z}, ab);
  ValueId acc = b.load(1, {z, z}, c);
  std::vector<ValueId> dotArgs{x, y};
  if (dotHasAcc) dotArgs.push_back(acc);
  ValueId d = b.op(OpCode::dot, dotArgs, c);
  b.loc = {"gemm.cpp", 12};
  ValueId s = b.op(OpCode::add, dotFirst ? std::vector{d, acc} : std::vector{acc, d}, c);
  b.loc = {};
  b.store(1, {z, z}, extraUse ? b.op(OpCode::mul, {s, d}, c) : s);
  return {std::move(b.k), acc, d, s};
}

TEST_CASE("fuseDotAccumulate folds the add into the dot, in either operand order") {
  for (bool dotFirst : {false, true}) {
    DotKernel in = dotAdd(dotFirst);
    Kernel out = fuseDotAccumulate(in.k);
    CHECK(count(out, OpCode::add) == 0);
    const Op& dot = only(out, OpCode::dot);
    CHECK(dot.operands.size() == 3);
    CHECK(dot.operands[2] == in.acc);
    CHECK(dot.results == std::vector{in.add});
    CHECK(dot.loc.line == 12);
    CHECK(stored(out) == in.add);
  }
}

TEST_CASE("fuseDotAccumulate leaves shared or accumulating dots alone") {
  for (auto [extraUse, hasAcc] : {std::pair{true, false}, std::pair{false, true}}) {
    Kernel out = fuseDotAccumulate(dotAdd(false, extraUse, hasAcc).k);
    CHECK(count(out, OpCode::add) == 1);
    CHECK(only(out, OpCode::dot).operands.size() == (hasAcc ? 3 : 2));
  }
}

TEST_CASE("fuseDotAccumulate fuses in a loop body but never pulls a dot into a loop") {
  for (bool dotOutside : {false, true}) {
    Builder b;
    b.tensor(DType::f32, 2);
    Type t{DType::f32, {16, 16}};
    ValueId z = b.i64(0);
    ValueId x = b.load(0, {z, z}, t);
    ValueId outer = dotOutside ? b.op(OpCode::dot, {x, x}, t) : -1;
    ValueId acc = b.fold(z, b.i64(4), {x}, [&](ValueId, const std::vector<ValueId>& c) {
      ValueId d = dotOutside ? outer : b.op(OpCode::dot, {x, x}, t);
      return std::vector{b.op(OpCode::add, {c[0], d}, t)};
    })[0];
    b.store(0, {z, z}, acc);
    Kernel out = fuseDotAccumulate(b.k);
    CHECK(count(out, OpCode::add) == (dotOutside ? 1 : 0));
  }
}

// ---------------------------------------------------------------------------
// canonicalize

TEST_CASE("hoistLoopInvariants moves pure loop-invariant chains out of a fold, one level per run") {
  Builder b;
  b.tensor(DType::f32, 1, "in");
  b.tensor(DType::f32, 1, "out");
  b.tensor(DType::i64, 1, "divisor");
  Type tile{DType::f32, {8}};
  ValueId p = b.programId();
  ValueId zero = b.constant(tile, 0.0);
  ValueId acc = b.fold(b.i64(0), b.i64(3), {zero}, [&](ValueId k, const std::vector<ValueId>& carried) {
    ValueId offset = b.op(OpCode::mul, {p, b.i64(8)}, scalar(DType::i64));  // invariant chain
    ValueId x = b.load(0, {offset}, tile);                                    // invariant: "in" is never stored
    ValueId quotient = b.op(OpCode::div, {p, k}, scalar(DType::i64));         // may fault: stays
    ValueId inner = b.fold(b.i64(0), b.i64(2), {carried[0]}, [&](ValueId, const std::vector<ValueId>& c) {
      return std::vector{b.op(OpCode::add, {c[0], b.op(OpCode::exp, {x}, tile)}, tile)};  // exp(x) leaves this loop
    })[0];
    b.store(1, {quotient}, inner);
    return std::vector{b.op(OpCode::add, {inner, x}, tile)};
  })[0];
  b.store(1, {p}, acc);

  Kernel once = hoistLoopInvariants(b.k);
  verify(once);
  auto outerFold = [](const Kernel& k) -> const Op& {
    auto it = std::find_if(k.body.ops.begin(), k.body.ops.end(), [](const Op& o) { return o.code == OpCode::fold; });
    REQUIRE(it != k.body.ops.end());
    return *it;
  };
  const Op& outer = outerFold(once);
  std::vector<OpCode> outerBody;
  for (const Op& o : outer.regions[0].ops) outerBody.push_back(o.code);
  // The i64 constant, mul and load left the outer loop; exp left the inner loop into the outer body.
  CHECK(outerBody == std::vector{OpCode::div, OpCode::exp, OpCode::fold, OpCode::store, OpCode::add, OpCode::yield});
  CHECK(count(once, OpCode::load) == 1);
  CHECK(def(once, outer.regions[0].ops[1].operands[0])->code == OpCode::load);

  Kernel twice = hoistLoopInvariants(once);
  const Op& outer2 = outerFold(twice);
  CHECK(outer2.regions[0].ops.size() == 5);  // exp hoisted again, the div stays
  CHECK(outer2.regions[0].ops[0].code == OpCode::div);
  CHECK(semanticHash(hoistLoopInvariants(twice)) == semanticHash(twice));
}

TEST_CASE("scalar_param is a pure leaf: merged by CSE, kept by folding, dropped when dead, hoisted out of folds") {
  Builder b;
  b.tensor(DType::f32, 1);
  b.k.scalars = {{"s0", DType::f32}, {"s1", DType::i64}};
  auto param = [&](int64_t i, DType t) { return b.op(OpCode::scalar_param, {}, scalar(t), {{"index", i}}); };
  ValueId a = param(0, DType::f32), again = param(0, DType::f32);
  param(1, DType::i64);  // unused
  ValueId n = param(1, DType::i64);
  ValueId sum = b.fold(b.i64(0), n, {a}, [&](ValueId, const std::vector<ValueId>& c) {
    return std::vector{b.op(OpCode::add, {c[0], param(0, DType::f32)}, scalar(DType::f32))};
  })[0];
  ValueId product = b.op(OpCode::mul, {sum, again}, scalar(DType::f32));
  b.store(0, {b.i64(0)}, b.op(OpCode::reshape, {product}, Type{DType::f32, {1}}));
  REQUIRE_NOTHROW(verify(b.k));

  CHECK(count(foldConstants(b.k), OpCode::scalar_param) == 5);
  CHECK(count(eliminateDeadCode(b.k), OpCode::scalar_param) == 4);
  Kernel hoisted = hoistLoopInvariants(b.k);
  CHECK(only(hoisted, OpCode::fold).regions[0].ops.size() == 2);  // add and yield: the parameter moved out
  CHECK(count(hoisted, OpCode::scalar_param) == 5);
  Kernel out = canonicalize(b.k);
  REQUIRE_NOTHROW(verify(out));
  CHECK(out.scalars == b.k.scalars);
  CHECK(count(out, OpCode::scalar_param) == 2);  // one per parameter used
  for (const Op& op : out.body.ops)
    if (op.code == OpCode::fold)
      for (const Op& inner : op.regions[0].ops) CHECK(inner.code != OpCode::scalar_param);
}

TEST_CASE("canonicalize reaches a fixed point of every pass") {
  Builder b;
  b.tensor(DType::f16, 2);
  b.tensor(DType::f32, 2);
  Type ab{DType::f16, {16, 16}}, c{DType::f32, {16, 16}};
  ValueId p = b.programId();
  // 2 + 3 and 1 + 4 fold to equal constants, which CSE then merges
  ValueId row1 = b.op(OpCode::mul, {p, b.op(OpCode::add, {b.i64(2), b.i64(3)}, scalar(DType::i64))},
                      scalar(DType::i64));
  ValueId row2 = b.op(OpCode::mul, {p, b.op(OpCode::add, {b.i64(1), b.i64(4)}, scalar(DType::i64))},
                      scalar(DType::i64));
  ValueId zero = b.op(OpCode::broadcast, {b.constant(scalar(DType::f32), 0.0)}, c);
  ValueId acc = b.fold(b.i64(0), b.i64(4), {zero}, [&](ValueId k, const std::vector<ValueId>& carried) {
    ValueId x = b.load(0, {row1, k}, ab), y = b.load(0, {k, row2}, ab);
    ValueId d = b.op(OpCode::dot, {x, y}, c);
    b.op(OpCode::exp, {d}, c);  // dead, but blocks the fusion until DCE has run
    return std::vector{b.op(OpCode::add, {carried[0], d}, c)};
  })[0];
  b.store(1, {row2, b.op(OpCode::add, {b.i64(0), row1}, scalar(DType::i64))}, acc);

  Kernel out = canonicalize(b.k);
  uint64_t h = semanticHash(out);
  CHECK(semanticHash(b.k) != h);
  CHECK(semanticHash(canonicalize(out)) == h);
  CHECK(semanticHash(foldConstants(out)) == h);
  CHECK(semanticHash(eliminateCommonSubexpressions(out)) == h);
  CHECK(semanticHash(fuseDotAccumulate(out)) == h);
  CHECK(semanticHash(eliminateDeadCode(out)) == h);
  CHECK(semanticHash(hoistLoopInvariants(out)) == h);
  CHECK(topLevel(out) == std::vector{OpCode::program_id, OpCode::constant, OpCode::mul, OpCode::constant,
                                     OpCode::constant, OpCode::constant, OpCode::fold, OpCode::store});
  const Op& loop = only(out, OpCode::fold);
  CHECK(loop.regions[0].ops.size() == 4);  // load, load, dot, yield
  const Op& store = only(out, OpCode::store);
  CHECK(store.operands[0] == store.operands[1]);
}

}  // namespace
