#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <numeric>

#include "dsl/tracer.hpp"

namespace tj {

using ir::OpCode;

namespace {

const ir::Type kIndexType{DType::i64, {}};

std::string shapeText(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

std::string describe(const ir::Type& t) { return std::string(dtypeName(t.dtype)) + shapeText(t.shape); }

Tracer& tracer(const SourceLoc& loc, std::string_view op) { return Tracer::current(loc, op); }

ir::Type typeOf(const Tile& x, const SourceLoc& loc, std::string_view op) {
  Tracer& t = tracer(loc, op);
  t.checkHandle(x.value(), x.trace(), loc, op);
  return t.type(x.value());
}

// The value of an index the user passed in, checked to belong to this trace.
ir::ValueId use(const Index& i, const SourceLoc& loc, std::string_view op) {
  tracer(loc, op).checkHandle(i.value(), i.trace(), loc, op);
  return i.value();
}

Tile emitTile(OpCode code, std::vector<ir::ValueId> operands, ir::Type result, const SourceLoc& loc,
              std::vector<ir::Attr> attrs = {}) {
  Tracer& t = tracer(loc, ir::opName(code));
  for (ir::ValueId v : operands) t.checkInScope(v, loc, ir::opName(code));
  return t.tile(t.emit(code, std::move(operands), std::move(result), std::move(attrs), loc));
}

// Appends a complete op with results of `types` (a fold, an if, a sort): its result tiles.
std::vector<Tile> emitTiles(Tracer& t, ir::Op op, const std::vector<ir::Type>& types) {
  std::vector<Tile> out;
  for (ir::ValueId v : t.emitOp(std::move(op), types)) out.push_back(t.tile(v));
  return out;
}

// Tiles of one shape, the first's, as operands: their values (checked to be usable here) and
// types; `what` names the others in the error.
std::pair<std::vector<ir::ValueId>, std::vector<ir::Type>> sameShapeOperands(const std::vector<Tile>& tiles,
                                                                             const SourceLoc& l, std::string_view op,
                                                                             const std::string& what) {
  std::vector<ir::ValueId> values;
  std::vector<ir::Type> types;
  for (const Tile& t : tiles) {
    types.push_back(typeOf(t, l, op));
    if (types.back().shape != types[0].shape)
      fail(l, op, what + " " + describe(types.back()) + " does not have the shape of " + describe(types[0]));
    tracer(l, op).checkInScope(t.value(), l, op);
    values.push_back(t.value());
  }
  return {values, types};
}

Index emitIndex(OpCode code, std::vector<ir::ValueId> operands, const SourceLoc& loc,
                std::vector<ir::Attr> attrs = {}) {
  Tracer& t = tracer(loc, ir::opName(code));
  for (ir::ValueId v : operands) t.checkInScope(v, loc, ir::opName(code));
  return t.index(t.emit(code, std::move(operands), kIndexType, std::move(attrs), loc));
}

// The smallest and largest values of integer dtype t, the largest as unsigned.
std::pair<int64_t, uint64_t> intRange(DType t) {
  int bits = 8 * dtypeBytes(t);
  uint64_t top = ~uint64_t{0} >> (64 - bits);
  if (isUnsigned(t)) return {0, top};
  return {-static_cast<int64_t>(top >> 1) - 1, top >> 1};
}

// Why `value` is not a value of `dtype` (ir's isValueOf), or "" when it is.
std::string unrepresentable(double value, DType dtype) {
  if (isValueOf(value, dtype)) return "";
  if (dtype == DType::f8e4m3 && std::isinf(value)) return "is infinite, and f8e4m3 has no infinities";
  if (isFloat(dtype)) return fmt::format("is past the largest finite {} ({})", dtypeName(dtype), maxFinite(dtype));
  if (std::trunc(value) != value) return "is not an integer";
  if (dtype == DType::boolean) return "is neither 0 nor 1";
  auto [low, high] = intRange(dtype);
  return fmt::format("is outside the {} range [{}, {}]", dtypeName(dtype), low, high);
}

// A number as the attribute of a constant of `dtype`; it must be a value of that dtype.
ir::Number constantAttr(double value, DType dtype, const SourceLoc& loc, std::string_view op) {
  if (std::string why = unrepresentable(value, dtype); !why.empty())
    fail(loc, op, fmt::format("the number {} {}: it is not a value of the {} tile it is combined with", value, why,
                              dtypeName(dtype)));
  if (isFloat(dtype)) return value;
  return wrapNumberToInt(dtype, value);
}

Tile constant(double value, DType dtype, const Shape& shape, const SourceLoc& loc, std::string_view op) {
  return emitTile(OpCode::constant, {}, {dtype, shape}, loc, {ir::makeAttr(ir::attr::value, constantAttr(value, dtype, loc, op))});
}

void checkAxis(int axis, int rank, const SourceLoc& loc, std::string_view op, const ir::Type& t) {
  if (axis < 0 || axis >= rank)
    fail(loc, op, "axis " + std::to_string(axis) + " is out of range for a tile of " + describe(t));
}

Tile reshapeTo(const Tile& x, const Shape& shape, const SourceLoc& loc, std::string_view op) {
  const ir::Type t = typeOf(x, loc, op);
  if (t.shape == shape) return x;
  return emitTile(OpCode::reshape, {x.value()}, {t.dtype, shape}, loc);
}

// NumPy broadcasting: align trailing axes; each pair is equal or has a 1.
Shape broadcastShapes(const ir::Type& a, const ir::Type& b, const SourceLoc& loc, std::string_view op) {
  size_t rank = std::max(a.shape.size(), b.shape.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.shape.size() ? 1 : a.shape[i - (rank - a.shape.size())];
    int64_t db = i < rank - b.shape.size() ? 1 : b.shape[i - (rank - b.shape.size())];
    if (da != db && da != 1 && db != 1)
      fail(loc, op, "shapes " + shapeText(a.shape) + " and " + shapeText(b.shape) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tile broadcastTo(const Tile& x, const Shape& shape, const SourceLoc& loc, std::string_view op) {
  const ir::Type t = typeOf(x, loc, op);
  if (t.shape == shape) return x;
  if (t.shape.size() > shape.size())
    fail(loc, op, "cannot broadcast shape " + shapeText(t.shape) + " to " + shapeText(shape));
  Shape padded(shape.size() - t.shape.size(), 1);
  padded.insert(padded.end(), t.shape.begin(), t.shape.end());
  for (size_t i = 0; i < shape.size(); ++i)
    if (padded[i] != shape[i] && padded[i] != 1)
      fail(loc, op, "cannot broadcast shape " + shapeText(t.shape) + " to " + shapeText(shape));
  Tile r = reshapeTo(x, padded, loc, op);
  if (padded == shape) return r;
  return emitTile(OpCode::broadcast, {r.value()}, {t.dtype, shape}, loc);
}

Tile castTo(const Tile& x, DType to, const SourceLoc& loc) {
  const ir::Type t = typeOf(x, loc, "cast");
  if (t.dtype == to) return x;
  return emitTile(OpCode::cast, {x.value()}, {to, t.shape}, loc);
}

// replacement's elements where `x pred bound` holds, otherwise's elsewhere (all of x's shape;
// bound a constant of x's dtype and shape).
Tile replaceWhere(const Tile& x, const char* pred, const Tile& bound, const Tile& replacement, const Tile& otherwise,
                  const SourceLoc& loc) {
  Tile past = emitTile(OpCode::cmp, {x.value(), bound.value()}, {DType::boolean, typeOf(x, loc, "cast").shape}, loc,
                       {ir::makeAttr(ir::attr::pred, std::string(pred))});
  return emitTile(OpCode::select, {past.value(), replacement.value(), otherwise.value()}, typeOf(otherwise, loc, "cast"),
                  loc);
}

// x with its elements past `bound` (pred "gt" or "lt") replaced by it.
Tile clampPast(const Tile& x, const char* pred, const Tile& bound, const SourceLoc& loc) {
  return replaceWhere(x, pred, bound, bound, x, loc);
}

// A cast to float dtype `to` whose values past its largest finite value (infinities too) become
// that value: compared in `from` where it holds that value, else only infinities can overflow.
// The result is selected from the rounded value, never from x itself: ptxas turns a compare and
// select of one value into FMNMX.NAN, whose NaN is the canonical one (a -NaN would lose its sign).
Tile saturatingFloatCast(const Tile& x, DType to, const SourceLoc& loc) {
  const ir::Type t = typeOf(x, loc, "cast");
  if (t.dtype == DType::f8e4m3) return castTo(x, to, loc);  // 448 fits every float, and it has no infinities
  double largest = maxFinite(to);
  // 8-bit floats, and a bf16 within whose range f16's 65504 falls between two values, compare in
  // f32, exactly (it holds every largest value but f64's).
  bool inexactBound = isFloat(t.dtype) && largest <= maxFinite(t.dtype) && roundToFloat(t.dtype, largest) != largest;
  if (isFloat8(t.dtype) || inexactBound) return saturatingFloatCast(castTo(x, DType::f32, loc), to, loc);
  auto bound = [&](double v, DType dtype) { return constant(v, dtype, t.shape, loc, "cast"); };
  Tile y = castTo(x, to, loc);
  if (t.dtype != to && isValueOf(largest, t.dtype)) {
    y = replaceWhere(x, "gt", bound(largest, t.dtype), bound(largest, to), y, loc);
    return isUnsigned(t.dtype) ? y : replaceWhere(x, "lt", bound(-largest, t.dtype), bound(-largest, to), y, loc);
  }
  if (!isFloat(t.dtype)) return y;  // every integer of t.dtype is within `to`'s range
  constexpr double inf = std::numeric_limits<double>::infinity();
  y = replaceWhere(x, "eq", bound(inf, t.dtype), bound(largest, to), y, loc);
  return replaceWhere(x, "eq", bound(-inf, t.dtype), bound(-largest, to), y, loc);
}

// A cast to integer dtype `to` whose values outside its range become its nearest end. Floats
// saturate as they convert; integers are clamped in their own dtype, which holds the ends of
// `to`'s range wherever its own range passes them.
Tile saturatingIntCast(const Tile& x, DType to, const SourceLoc& loc) {
  const ir::Type t = typeOf(x, loc, "cast");
  if (!isInteger(t.dtype)) return castTo(x, to, loc);
  auto [fromLow, fromHigh] = intRange(t.dtype);
  auto [toLow, toHigh] = intRange(to);
  auto bound = [&](int64_t v) { return emitTile(OpCode::constant, {}, t, loc, {ir::makeAttr(ir::attr::value, v)}); };
  Tile clamped = x;
  if (fromHigh > toHigh) clamped = clampPast(clamped, "gt", bound(static_cast<int64_t>(toHigh)), loc);
  if (fromLow < toLow) clamped = clampPast(clamped, "lt", bound(toLow), loc);
  return castTo(clamped, to, loc);
}

// An operand next to a tile of dtype `like`: numbers and indices take that dtype.
Tile materialize(const Operand& o, DType like, const SourceLoc& loc, std::string_view op) {
  if (o.tile) return *o.tile;
  if (o.index) return castTo(Tracer::current(loc, op).tile(use(*o.index, loc, op)), like, loc);
  return constant(o.number, like, {}, loc, op);
}

Tile materialize(const ScalarOperand& o, DType like, const SourceLoc& loc, std::string_view op) {
  if (o.index) return castTo(Tracer::current(loc, op).tile(use(*o.index, loc, op)), like, loc);
  return constant(o.number, like, {}, loc, op);
}

struct BinarySpec {
  OpCode code;
  const char* name;  // as the user wrote it
  const char* pred = nullptr;
};

Tile binary(const BinarySpec& spec, const Tile& a, const Tile& b, const SourceLoc& loc);

// The integer dtype holding every value of integer dtypes a and b, or none (u64 and a signed one).
std::optional<DType> commonIntDType(DType a, DType b) {
  int bytesA = dtypeBytes(a), bytesB = dtypeBytes(b);
  if (isUnsigned(a) == isUnsigned(b)) return bytesA >= bytesB ? a : b;
  auto [s, sBytes, uBytes] = isUnsigned(a) ? std::tuple{b, bytesB, bytesA} : std::tuple{a, bytesA, bytesB};
  if (sBytes > uBytes) return s;
  if (uBytes < 8) return uBytes < 4 ? DType::i32 : DType::i64;
  return std::nullopt;
}

// `a pred b` for integer tiles of different dtypes, by their values: both widen to a dtype
// holding both; a signed tile against a u64 one is below every u64 where it is negative, and
// compares as a u64 elsewhere.
Tile compareIntegers(const BinarySpec& spec, const Tile& a, const Tile& b, const SourceLoc& loc) {
  DType ta = typeOf(a, loc, spec.name).dtype, tb = typeOf(b, loc, spec.name).dtype;
  if (std::optional<DType> common = commonIntDType(ta, tb))
    return binary(spec, castTo(a, *common, loc), castTo(b, *common, loc), loc);
  const std::string_view pred = spec.pred;
  if (isUnsigned(ta)) {  // the signed one first: b pred' a
    static const std::map<std::string_view, const char*> mirrored = {{"lt", "gt"}, {"le", "ge"}, {"gt", "lt"},
                                                                     {"ge", "le"}, {"eq", "eq"}, {"ne", "ne"}};
    return compareIntegers({spec.code, spec.name, mirrored.at(pred)}, b, a, loc);
  }
  Tile wide = castTo(a, DType::i64, loc);
  Tile negative = binary({OpCode::cmp, spec.name, "lt"}, wide, constant(0, DType::i64, {}, loc, spec.name), loc);
  Tile asUnsigned = binary(spec, castTo(wide, DType::u64, loc), b, loc);
  if (pred == "lt" || pred == "le" || pred == "ne") return binary({OpCode::logical_or, spec.name}, negative, asUnsigned, loc);
  Tile notNegative = emitTile(OpCode::logical_not, {negative.value()}, typeOf(negative, loc, spec.name), loc);
  return binary({OpCode::logical_and, spec.name}, notNegative, asUnsigned, loc);
}

Tile binary(const BinarySpec& spec, const Tile& a, const Tile& b, const SourceLoc& loc) {
  const ir::Type ta = typeOf(a, loc, spec.name), tb = typeOf(b, loc, spec.name);
  if (ta.dtype != tb.dtype && spec.pred && isInteger(ta.dtype) && isInteger(tb.dtype))
    return compareIntegers(spec, a, b, loc);
  if (ta.dtype != tb.dtype)
    fail(loc, spec.name, "dtype mismatch: " + describe(ta) + " vs " + describe(tb) + "; cast one side first");
  bool logical = spec.code == OpCode::logical_and || spec.code == OpCode::logical_or || spec.code == OpCode::bit_xor;
  bool shift = spec.code == OpCode::shl || spec.code == OpCode::shr || spec.code == OpCode::shru;
  if (logical && isFloat(ta.dtype))
    fail(loc, spec.name, "needs bool or integer tiles, got " + describe(ta));
  if (shift && !isInteger(ta.dtype))
    fail(loc, spec.name, "needs integer tiles, got " + describe(ta) + (isFloat(ta.dtype) ? "; cast to i32 or i64 first" : ""));
  if (!logical && !spec.pred && ta.dtype == DType::boolean)
    fail(loc, spec.name, "arithmetic on bool tiles; cast to a numeric dtype first");
  Shape shape = broadcastShapes(ta, tb, loc, spec.name);
  Tile x = broadcastTo(a, shape, loc, spec.name), y = broadcastTo(b, shape, loc, spec.name);
  std::vector<ir::Attr> attrs;
  if (spec.pred) attrs.push_back(ir::makeAttr(ir::attr::pred, std::string(spec.pred)));
  DType result = spec.pred ? DType::boolean : ta.dtype;
  return emitTile(spec.code, {x.value(), y.value()}, {result, shape}, loc, std::move(attrs));
}

Tile tileOp(const BinarySpec& s, const Tile& a, const Operand& b) {
  SourceLoc loc = SourceLoc::from(b.loc);
  return binary(s, a, materialize(b, typeOf(a, loc, s.name).dtype, loc, s.name), loc);
}

Tile tileOp(const BinarySpec& s, const ScalarOperand& a, const Tile& b) {
  SourceLoc loc = SourceLoc::from(a.loc);
  return binary(s, materialize(a, typeOf(b, loc, s.name).dtype, loc, s.name), b, loc);
}

Index indexOp(OpCode code, const char* name, const Index& a, const IndexOperand& b) {
  SourceLoc loc = SourceLoc::from(b.loc);
  return emitIndex(code, {use(a, loc, name), use(b.index, loc, name)}, loc);
}

Tile indexCompare(const char* pred, const Index& a, const IndexOperand& b) {
  SourceLoc loc = SourceLoc::from(b.loc);
  return emitTile(OpCode::cmp, {use(a, loc, "compare"), use(b.index, loc, "compare")}, {DType::boolean, {}}, loc,
                  {ir::makeAttr(ir::attr::pred, std::string(pred))});
}

Tile unary(OpCode code, const Tile& x, const SourceLoc& loc, std::string_view name = "", std::vector<ir::Attr> attrs = {}) {
  if (name.empty()) name = ir::opName(code);
  const ir::Type t = typeOf(x, loc, name);
  bool anyNumeric = code == OpCode::neg || code == OpCode::abs || code == OpCode::relu;
  if (code == OpCode::logical_not) {
    if (isFloat(t.dtype)) fail(loc, name, "needs a bool or integer tile, got " + describe(t));
  } else if (t.dtype == DType::boolean || (!anyNumeric && !isFloat(t.dtype))) {
    fail(loc, name, "needs a floating-point tile, got " + describe(t) + "; cast it first");
  }
  return emitTile(code, {x.value()}, t, loc, std::move(attrs));
}

Tile reduce(OpCode code, const Tile& x, int axis, bool keepdims, const SourceLoc& loc) {
  const ir::Type t = typeOf(x, loc, ir::opName(code));
  checkAxis(axis, t.rank(), loc, ir::opName(code), t);
  if (t.dtype == DType::boolean) fail(loc, ir::opName(code), "cannot reduce a bool tile; cast it first");
  Shape shape = t.shape;
  shape.erase(shape.begin() + axis);
  bool isArg = code == OpCode::argmax || code == OpCode::argmin;
  Tile r = emitTile(code, {x.value()}, {isArg ? DType::i32 : t.dtype, shape}, loc, {ir::makeAttr(ir::attr::axis, int64_t{axis})});
  if (!keepdims) return r;
  return r.expand_dims(axis, std::source_location::current());
}

// Element offsets of a block: block index * block size, per axis.
std::vector<ir::ValueId> blockOffsets(const std::vector<Index>& block, const Shape& blockShape,
                                      const SourceLoc& loc, std::string_view op) {
  if (block.size() != blockShape.size())
    fail(loc, op, std::to_string(block.size()) + " block coordinates for a view of rank " +
                      std::to_string(blockShape.size()));
  std::vector<ir::ValueId> offsets;
  for (size_t d = 0; d < block.size(); ++d) {
    Index size(blockShape[d], std::source_location::current());
    offsets.push_back(emitIndex(OpCode::mul, {use(block[d], loc, op), size.value()}, loc).value());
  }
  return offsets;
}

std::vector<ir::ValueId> elementOffsets(const std::vector<Index>& at, size_t rank, const SourceLoc& loc,
                                        std::string_view op) {
  if (at.size() != rank)
    fail(loc, op, std::to_string(at.size()) + " element offsets for a view of rank " + std::to_string(rank));
  std::vector<ir::ValueId> offsets;
  for (const Index& i : at) offsets.push_back(use(i, loc, op));
  return offsets;
}

void checkBlockShape(const Tensor& t, const Shape& block, const SourceLoc& loc, std::string_view op) {
  t.checkDefined(op, loc);
  if (block.size() != static_cast<size_t>(t.rank()))
    fail(loc, op, "block shape " + shapeText(block) + " has rank " + std::to_string(block.size()) +
                      " but the tensor " + std::string(dtypeName(t.dtype())) + shapeText(t.shape()) +
                      " has rank " + std::to_string(t.rank()));
  if (t.rank() < 1 || t.rank() > 4) fail(loc, op, "tensors of rank 1 to 4 are supported, got " + std::to_string(t.rank()));
  for (int64_t d : block)
    if (d <= 0) fail(loc, op, "block shape " + shapeText(block) + " has a non-positive size");
}

void checkFill(const Tensor& t, double fill, const SourceLoc& loc, std::string_view op) {
  if (std::string why = unrepresentable(fill, t.dtype()); !why.empty())
    fail(loc, op, fmt::format("the fill {} {}: it is not a value of the {} tensor it stands in for", fill, why,
                              describe(ir::Type{t.dtype(), t.shape()})));
}

// A load or gather of `tensor` with its fill (the check of a constant: an integer tensor needs an
// integer), marked for the sanitizer when the user gave none.
Tile emitRead(OpCode code, int tensor, std::vector<ir::ValueId> operands, const Shape& shape,
              std::optional<double> fill, const SourceLoc& loc) {
  Tracer& t = tracer(loc, ir::opName(code));
  for (ir::ValueId v : operands) t.checkInScope(v, loc, ir::opName(code));
  DType dtype = t.kernel().tensors[static_cast<size_t>(tensor)].dtype;
  ir::Op op{code, std::move(operands), {}, {}, {}, loc};
  op.set(ir::attr::fill, constantAttr(fill.value_or(0.0), dtype, loc, code == OpCode::load ? "read" : "gather"));
  op.set(ir::attr::tensor, tensor);
  op.defaultFill = !fill;
  return emitTiles(t, std::move(op), {{dtype, shape}})[0];
}

Tile load(int tensor, const Shape& block, std::optional<double> fill, std::vector<ir::ValueId> offsets,
          const SourceLoc& loc) {
  return emitRead(OpCode::load, tensor, std::move(offsets), block, fill, loc);
}

void store(int tensor, const Shape& block, const Tile& tile, std::vector<ir::ValueId> offsets, const SourceLoc& loc) {
  Tracer& t = tracer(loc, "put");
  const ir::Type type = typeOf(tile, loc, "put");
  if (type.shape != block)
    fail(loc, "put", "tile of " + describe(type) + " does not match the block shape " + shapeText(block));
  DType dtype = t.kernel().tensors[static_cast<size_t>(tensor)].dtype;
  offsets.push_back(castTo(tile, dtype, loc).value());
  t.emit(OpCode::store, std::move(offsets), std::nullopt, {ir::makeAttr(ir::attr::tensor, int64_t{tensor})}, loc);
}

Index tensorDim(int tensor, int axis, int rank, const SourceLoc& loc, std::string_view op) {
  if (axis < 0 || axis >= rank)
    fail(loc, op, "axis " + std::to_string(axis) + " is out of range for a tensor of rank " + std::to_string(rank));
  return emitIndex(OpCode::tensor_dim, {}, loc, {ir::makeAttr(ir::attr::axis, int64_t{axis}), ir::makeAttr(ir::attr::tensor, int64_t{tensor})});
}

}  // namespace

// ---- Index ----

Index::Index(int64_t constant, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  *this = emitIndex(OpCode::constant, {}, l, {ir::makeAttr(ir::attr::value, constant)});
}

Index Index::operator-() const { return Index(0) - *this; }

#define TJ_DEFINE_INDEX_OPERATOR(OP, CODE) \
  Index operator OP(const Index& a, const IndexOperand& b) { return indexOp(OpCode::CODE, #OP, a, b); }
TJ_DEFINE_INDEX_OPERATOR(+, add)
TJ_DEFINE_INDEX_OPERATOR(-, sub)
TJ_DEFINE_INDEX_OPERATOR(*, mul)
TJ_DEFINE_INDEX_OPERATOR(/, div)
TJ_DEFINE_INDEX_OPERATOR(%, rem)
#undef TJ_DEFINE_INDEX_OPERATOR

#define TJ_DEFINE_INDEX_COMPARE(OP, PRED) \
  Tile operator OP(const Index& a, const IndexOperand& b) { return indexCompare(PRED, a, b); }
TJ_DEFINE_INDEX_COMPARE(<, "lt")
TJ_DEFINE_INDEX_COMPARE(<=, "le")
TJ_DEFINE_INDEX_COMPARE(>, "gt")
TJ_DEFINE_INDEX_COMPARE(>=, "ge")
TJ_DEFINE_INDEX_COMPARE(==, "eq")
TJ_DEFINE_INDEX_COMPARE(!=, "ne")
#undef TJ_DEFINE_INDEX_COMPARE

Index max(const Index& a, const IndexOperand& b) { return indexOp(OpCode::max, "max", a, b); }
Index min(const Index& a, const IndexOperand& b) { return indexOp(OpCode::min, "min", a, b); }
Index cdiv(const Index& a, const IndexOperand& b) {
  Index bMinus1 = b.index - IndexOperand(1, b.loc);
  return (a + IndexOperand(bMinus1, b.loc)) / b;
}

Index select(const Tile& cond, const IndexOperand& a, const IndexOperand& b, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  const ir::Type tc = typeOf(cond, l, "select");
  if (tc.dtype != DType::boolean || tc.rank() != 0)
    fail(l, "select", "the condition must be a rank-0 bool tile (one choice per program), got " + describe(tc));
  return emitIndex(OpCode::select, {cond.value(), use(a.index, l, "select"), use(b.index, l, "select")}, l);
}

// ---- Tile ----

Shape Tile::shape() const { return typeOf(*this, {}, "shape").shape; }
DType Tile::dtype() const { return typeOf(*this, {}, "dtype").dtype; }

Tile Tile::k(double c, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  const ir::Type t = typeOf(*this, l, "k");
  return constant(c, t.dtype, t.shape, l, "k");
}

Tile Tile::cast(DType to, Loc loc) const { return castTo(*this, to, SourceLoc::from(loc)); }
Tile Tile::cast(DType to, Overflow overflow, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  if (overflow == Overflow::infinity) return castTo(*this, to, l);
  if (to == DType::boolean)
    fail(l, "cast", fmt::format("Overflow::saturate needs a float or integer result, not bool (casting {}): a bool "
                                "has no range to clamp to; cast without it (x != 0)",
                                describe(typeOf(*this, l, "cast"))));
  return isFloat(to) ? saturatingFloatCast(*this, to, l) : saturatingIntCast(*this, to, l);
}

#define TJ_DEFINE_UNARY(NAME, CODE) \
  Tile Tile::NAME(Loc loc) const { return unary(OpCode::CODE, *this, SourceLoc::from(loc)); }
TJ_DEFINE_UNARY(exp, exp) TJ_DEFINE_UNARY(exp2, exp2) TJ_DEFINE_UNARY(log, log) TJ_DEFINE_UNARY(log2, log2)
TJ_DEFINE_UNARY(sqrt, sqrt) TJ_DEFINE_UNARY(rsqrt, rsqrt) TJ_DEFINE_UNARY(abs, abs) TJ_DEFINE_UNARY(neg, neg)
TJ_DEFINE_UNARY(sin, sin) TJ_DEFINE_UNARY(cos, cos) TJ_DEFINE_UNARY(tanh, tanh)
TJ_DEFINE_UNARY(sigmoid, sigmoid) TJ_DEFINE_UNARY(erf, erf) TJ_DEFINE_UNARY(relu, relu)
TJ_DEFINE_UNARY(floor, floor) TJ_DEFINE_UNARY(ceil, ceil)
#undef TJ_DEFINE_UNARY
Tile Tile::fast_exp(Loc loc) const {
  return unary(OpCode::exp, *this, SourceLoc::from(loc), "fast_exp", {ir::makeAttr(ir::attr::approx, int64_t{1})});
}
Tile Tile::fast_exp2(Loc loc) const {
  return unary(OpCode::exp2, *this, SourceLoc::from(loc), "fast_exp2", {ir::makeAttr(ir::attr::approx, int64_t{1})});
}

Tile operator-(const TileArg& x) { return unary(OpCode::neg, x.tile, SourceLoc::from(x.loc)); }
Tile operator!(const TileArg& x) { return unary(OpCode::logical_not, x.tile, SourceLoc::from(x.loc)); }
Tile operator~(const TileArg& x) { return unary(OpCode::logical_not, x.tile, SourceLoc::from(x.loc), "~"); }

Tile Tile::sum(int axis, bool keep, Loc loc) const { return reduce(OpCode::reduce_sum, *this, axis, keep, SourceLoc::from(loc)); }
Tile Tile::max(int axis, bool keep, Loc loc) const { return reduce(OpCode::reduce_max, *this, axis, keep, SourceLoc::from(loc)); }
Tile Tile::min(int axis, bool keep, Loc loc) const { return reduce(OpCode::reduce_min, *this, axis, keep, SourceLoc::from(loc)); }
Tile Tile::argmax(int axis, bool keep, Loc loc) const { return reduce(OpCode::argmax, *this, axis, keep, SourceLoc::from(loc)); }
Tile Tile::argmin(int axis, bool keep, Loc loc) const { return reduce(OpCode::argmin, *this, axis, keep, SourceLoc::from(loc)); }

namespace {
Tile scan(const char* fn, const char* name, const Tile& x, int axis, const SourceLoc& loc) {
  const ir::Type t = typeOf(x, loc, name);
  checkAxis(axis, t.rank(), loc, name, t);
  if (t.dtype == DType::boolean) fail(loc, name, "cannot scan the bool tile " + describe(t) + "; cast it first");
  return emitTile(OpCode::scan, {x.value()}, t, loc, {ir::makeAttr(ir::attr::axis, int64_t{axis}), ir::makeAttr(ir::attr::fn, std::string(fn))});
}
}  // namespace

Tile Tile::cumsum(int axis, Loc loc) const { return scan("add", "cumsum", *this, axis, SourceLoc::from(loc)); }
Tile Tile::cumprod(int axis, Loc loc) const { return scan("mul", "cumprod", *this, axis, SourceLoc::from(loc)); }
Tile Tile::cummax(int axis, Loc loc) const { return scan("max", "cummax", *this, axis, SourceLoc::from(loc)); }
Tile Tile::cummin(int axis, Loc loc) const { return scan("min", "cummin", *this, axis, SourceLoc::from(loc)); }

namespace {
std::vector<Tile> sortTiles(const std::vector<Tile>& tiles, int axis, bool descending, const char* name, const SourceLoc& l) {
  const ir::Type keys = typeOf(tiles[0], l, name);
  checkAxis(axis, keys.rank(), l, name, keys);
  if (keys.dtype == DType::boolean) fail(l, name, "cannot sort the bool tile " + describe(keys) + "; cast it first");
  auto [operands, types] = sameShapeOperands(tiles, l, name, "the payload");
  ir::Op op{OpCode::sort, operands, {}, {ir::makeAttr(ir::attr::axis, int64_t{axis}), ir::makeAttr(ir::attr::descending, int64_t{descending})}, {}, l};
  return emitTiles(tracer(l, name), std::move(op), types);
}
}  // namespace

Tile Tile::sort(int axis, bool descending, Loc loc) const {
  return sortTiles({*this}, axis, descending, "sort", SourceLoc::from(loc))[0];
}

std::pair<Tile, Tile> sort(const Tile& keys, const Tile& payload, int axis, bool descending, Loc loc) {
  std::vector<Tile> out = sortTiles({keys, payload}, axis, descending, "sort", SourceLoc::from(loc));
  return {out[0], out[1]};
}

std::pair<Tile, Tile> topk(const Tile& x, int64_t k, int axis, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  const ir::Type t = typeOf(x, l, "topk");
  checkAxis(axis, t.rank(), l, "topk", t);
  int64_t n = t.shape[size_t(axis)];
  if (k < 1 || k > n) fail(l, "topk", fmt::format("k={} is not in [1, {}], the size of axis {} of {}", k, n, axis, describe(t)));
  Program p(tracer(l, "topk"));
  std::vector<Tile> sorted = sortTiles({x, p.iota(t.shape, axis, loc)}, axis, true, "topk", l);
  if (k == n) return {sorted[0], sorted[1]};
  return {sorted[0].slice(axis, 0, k, loc), sorted[1].slice(axis, 0, k, loc)};
}

std::vector<Tile> associative_scan(const std::vector<Tile>& xs, int axis, const ScanCombine& combine, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  const char* name = "associative_scan";
  if (xs.empty()) fail(l, name, "no tiles to scan");
  Tracer& tr = tracer(l, name);
  const ir::Type first = typeOf(xs[0], l, name);
  checkAxis(axis, first.rank(), l, name, first);
  auto [operands, types] = sameShapeOperands(xs, l, name, "the tile");
  for (const ir::Type& t : types)
    if (t.dtype == DType::boolean) fail(l, name, "cannot scan the bool tile " + describe(t) + "; cast it first");
  ir::Op op{OpCode::scan, operands, {}, {ir::makeAttr(ir::attr::axis, int64_t{axis})}, {ir::Block{}}, l};
  {
    Tracer::BlockScope scope(tr, op.regions[0], /*exitsAllowed=*/false);
    std::vector<Tile> earlier, later;
    for (const ir::Type& t : types) earlier.push_back(tr.tile(tr.addBlockArg({t.dtype, {}})));
    for (const ir::Type& t : types) later.push_back(tr.tile(tr.addBlockArg({t.dtype, {}})));
    std::vector<Tile> combined = combine(earlier, later);
    if (combined.size() != types.size())
      fail(l, name, fmt::format("the combine returned {} tiles for {} scanned", combined.size(), types.size()));
    std::vector<ir::ValueId> yielded;
    for (size_t i = 0; i < combined.size(); ++i) {
      ir::Type t = typeOf(combined[i], l, name), want{types[i].dtype, {}};
      if (t != want)
        fail(l, name, fmt::format("the combine's result {} is {}, not {} (an element of the scanned {})", i,
                                  describe(t), describe(want), describe(types[i])));
      tr.checkInScope(combined[i].value(), l, name);
      yielded.push_back(combined[i].value());
    }
    tr.emit(OpCode::yield, yielded, std::nullopt, {}, l);
  }
  return emitTiles(tr, std::move(op), types);
}

Tile associative_scan(const Tile& x, int axis, const std::function<Tile(const Tile&, const Tile&)>& combine, Loc loc) {
  return associative_scan({x}, axis, [&](const std::vector<Tile>& a, const std::vector<Tile>& b) {
    return std::vector<Tile>{combine(a[0], b[0])};
  }, loc)[0];
}

Tile histogram(const Tile& x, int64_t bins, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  const ir::Type t = typeOf(x, l, "histogram");
  if (t.isScalar() || isFloat(t.dtype) || t.dtype == DType::boolean)
    fail(l, "histogram", "counts the elements of an integer tile, not " + describe(t));
  if (bins < 1 || bins > ir::kMaxTileElements)
    fail(l, "histogram", fmt::format("{} bins; a histogram has 1 to {}", bins, ir::kMaxTileElements));
  return emitTile(OpCode::histogram, {x.value()}, {DType::i32, {bins}}, l, {ir::makeAttr(ir::attr::bins, bins)});
}

Tile Tile::slice(int axis, int64_t start, int64_t size, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  ir::Type t = typeOf(*this, l, "slice");
  checkAxis(axis, t.rank(), l, "slice", t);
  int64_t n = t.shape[size_t(axis)];
  if (start < 0 || size < 1 || start > n - size)
    fail(l, "slice", fmt::format("[{}, {}) is not a non-empty range inside axis {} of {}", start, start + size, axis, describe(t)));
  t.shape[size_t(axis)] = size;
  return emitTile(OpCode::slice, {value()}, t, l, {ir::makeAttr(ir::attr::axis, int64_t{axis}), ir::makeAttr(ir::attr::start, start)});
}

Tile Tile::expand_dims(int axis, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  const ir::Type t = typeOf(*this, l, "expand_dims");
  if (axis < 0 || axis > t.rank())
    fail(l, "expand_dims", "axis " + std::to_string(axis) + " is out of range for a tile of " + describe(t));
  Shape shape = t.shape;
  shape.insert(shape.begin() + axis, 1);
  return reshapeTo(*this, shape, l, "expand_dims");
}

Tile Tile::reshape(const Shape& shape, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  const ir::Type t = typeOf(*this, l, "reshape");
  int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  bool positive = std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d > 0; });
  if (n != t.numel() || !positive || shape.size() > 4)
    fail(l, "reshape", "cannot reshape a tile of " + describe(t) + " to " + shapeText(shape));
  return reshapeTo(*this, shape, l, "reshape");
}

Tile Tile::broadcast_to(const Shape& shape, Loc loc) const {
  return broadcastTo(*this, shape, SourceLoc::from(loc), "broadcast_to");
}

Tile Tile::permute(const std::vector<int>& perm, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  const ir::Type t = typeOf(*this, l, "permute");
  std::vector<int> sorted(perm);
  std::sort(sorted.begin(), sorted.end());
  bool isPerm = sorted.size() == t.shape.size();
  for (size_t i = 0; isPerm && i < sorted.size(); ++i) isPerm = sorted[i] == static_cast<int>(i);
  if (!isPerm) fail(l, "permute", "the order given is not a permutation of the axes of a tile of " + describe(t));
  Shape shape;
  std::vector<int64_t> permAttr;
  for (int p : perm) {
    shape.push_back(t.shape[static_cast<size_t>(p)]);
    permAttr.push_back(p);
  }
  return emitTile(OpCode::permute, {value_}, {t.dtype, shape}, l, {ir::makeAttr(ir::attr::perm, permAttr)});
}

Tile Tile::transpose(Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  const ir::Type t = typeOf(*this, l, "transpose");
  if (t.rank() < 2) fail(l, "transpose", "needs a tile of rank 2 or more, got " + describe(t));
  std::vector<int> perm(t.shape.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return permute(perm, loc);
}

#define TJ_DEFINE_TILE_OPERATOR(OP, ...)                                                               \
  Tile operator OP(const Tile& a, const Operand& b) { return tileOp({__VA_ARGS__}, a, b); }         \
  Tile operator OP(const ScalarOperand& a, const Tile& b) { return tileOp({__VA_ARGS__}, a, b); }
TJ_DEFINE_TILE_OPERATOR(+, OpCode::add, "+")
TJ_DEFINE_TILE_OPERATOR(-, OpCode::sub, "-")
TJ_DEFINE_TILE_OPERATOR(*, OpCode::mul, "*")
TJ_DEFINE_TILE_OPERATOR(/, OpCode::div, "/")
TJ_DEFINE_TILE_OPERATOR(%, OpCode::rem, "%")
TJ_DEFINE_TILE_OPERATOR(<, OpCode::cmp, "<", "lt")
TJ_DEFINE_TILE_OPERATOR(<=, OpCode::cmp, "<=", "le")
TJ_DEFINE_TILE_OPERATOR(>, OpCode::cmp, ">", "gt")
TJ_DEFINE_TILE_OPERATOR(>=, OpCode::cmp, ">=", "ge")
TJ_DEFINE_TILE_OPERATOR(==, OpCode::cmp, "==", "eq")
TJ_DEFINE_TILE_OPERATOR(!=, OpCode::cmp, "!=", "ne")
TJ_DEFINE_TILE_OPERATOR(&&, OpCode::logical_and, "&&")
TJ_DEFINE_TILE_OPERATOR(||, OpCode::logical_or, "||")
TJ_DEFINE_TILE_OPERATOR(&, OpCode::logical_and, "&")
TJ_DEFINE_TILE_OPERATOR(|, OpCode::logical_or, "|")
TJ_DEFINE_TILE_OPERATOR(^, OpCode::bit_xor, "^")
TJ_DEFINE_TILE_OPERATOR(<<, OpCode::shl, "<<")
TJ_DEFINE_TILE_OPERATOR(>>, OpCode::shr, ">>")
#undef TJ_DEFINE_TILE_OPERATOR

Tile logical_shift_right(const Tile& a, const Operand& b) { return tileOp({OpCode::shru, "logical_shift_right"}, a, b); }

// Products of 32-bit halves held in 64 bits (values in [0, 2^32)): each is exact as an
// unsigned number, and i64 arithmetic wraps as unsigned arithmetic does.
Tile umulhi(const Tile& a, const Operand& b, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  DType t = typeOf(a, l, "umulhi").dtype;
  if (!isInteger(t) || dtypeBytes(t) < 4)
    fail(l, "umulhi", std::string("takes i32, i64, u32 or u64 tiles, got ") + std::string(dtypeName(t)));
  Tile y = materialize(b, t, l, "umulhi");
  if (DType u = typeOf(y, l, "umulhi").dtype; u != t)
    fail(l, "umulhi", fmt::format("mixes {} and {} tiles; cast one first", dtypeName(t), dtypeName(u)));
  auto at = [&](double v) { return Operand(v, loc); };
  DType wide = isUnsigned(t) ? DType::u64 : DType::i64;
  auto word = [&](const Tile& x) { return x.cast(wide, loc) & at(4294967295.0); };
  auto high = [&](const Tile& x) { return logical_shift_right(x, at(32)); };
  if (dtypeBytes(t) == 4) return high(word(a) * Operand(word(y), loc)).cast(t, loc);
  Tile aLow = word(a), aHigh = high(a), bLow = word(y), bHigh = high(y);
  Tile lowHigh = aLow * Operand(bHigh, loc), highLow = aHigh * Operand(bLow, loc);
  Tile middle = high(aLow * Operand(bLow, loc)) + Operand(word(lowHigh), loc) + Operand(word(highLow), loc);
  return aHigh * Operand(bHigh, loc) + Operand(high(lowHigh), loc) + Operand(high(highLow), loc) + Operand(high(middle), loc);
}

Tile max(const Tile& a, const Operand& b) { return tileOp({OpCode::max, "max"}, a, b); }
Tile min(const Tile& a, const Operand& b) { return tileOp({OpCode::min, "min"}, a, b); }

namespace {
// A three-operand elementwise op of `dtype` on tiles broadcast to their common shape.
Tile ternary(OpCode code, const Tile& a, const Tile& b, const Tile& c, DType dtype, const SourceLoc& l, std::string_view name,
             std::vector<ir::Attr> attrs = {}) {
  const ir::Type ta = typeOf(a, l, name), tb = typeOf(b, l, name), tc = typeOf(c, l, name);
  Shape shape = broadcastShapes(ta, {tb.dtype, broadcastShapes(tb, tc, l, name)}, l, name);
  return emitTile(code,
                  {broadcastTo(a, shape, l, name).value(), broadcastTo(b, shape, l, name).value(),
                   broadcastTo(c, shape, l, name).value()},
                  {dtype, shape}, l, std::move(attrs));
}
}  // namespace

Tile where(const Tile& cond, const Operand& a, const Operand& b, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  const ir::Type tc = typeOf(cond, l, "where");
  if (tc.dtype != DType::boolean) fail(l, "where", "the condition must be a bool tile, got " + describe(tc));
  // The dtype comes from whichever side is a tile; two numbers give f32.
  DType dtype = a.tile ? typeOf(*a.tile, l, "where").dtype
                       : b.tile ? typeOf(*b.tile, l, "where").dtype : DType::f32;
  Tile x = materialize(a, dtype, l, "where"), y = materialize(b, dtype, l, "where");
  const ir::Type tx = typeOf(x, l, "where"), ty = typeOf(y, l, "where");
  if (tx.dtype != ty.dtype) fail(l, "where", "dtype mismatch: " + describe(tx) + " vs " + describe(ty));
  return ternary(OpCode::select, cond, x, y, tx.dtype, l, "where");
}

namespace {
Tile multiplyAdd(const Tile& a, const Operand& b, const Operand& c, const SourceLoc& l, std::string_view name,
                 std::vector<ir::Attr> attrs) {
  const ir::Type ta = typeOf(a, l, name);
  if (ta.dtype != DType::f32 && ta.dtype != DType::f64)
    fail(l, name, "takes f32 or f64 tiles, got " + describe(ta) + "; cast 16-bit floats to f32 first");
  Tile y = materialize(b, ta.dtype, l, name), z = materialize(c, ta.dtype, l, name);
  const ir::Type ty = typeOf(y, l, name), tz = typeOf(z, l, name);
  for (const ir::Type& t : {ty, tz})
    if (t.dtype != ta.dtype) fail(l, name, "dtype mismatch: " + describe(ta) + " vs " + describe(t));
  return ternary(OpCode::fma, a, y, z, ta.dtype, l, name, std::move(attrs));
}
}  // namespace

Tile fma(const Tile& a, const Operand& b, const Operand& c, Loc loc) {
  return multiplyAdd(a, b, c, SourceLoc::from(loc), "fma", {});
}

Tile muladd(const Tile& a, const Operand& b, const Operand& c, Loc loc) {
  return multiplyAdd(a, b, c, SourceLoc::from(loc), "muladd", {ir::makeAttr(ir::attr::approx, int64_t{1})});
}

Tile cat(const std::vector<Tile>& tiles, int axis, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  if (tiles.empty()) fail(l, "cat", "no tiles to join");
  ir::Type result = typeOf(tiles[0], l, "cat");
  checkAxis(axis, result.rank(), l, "cat", result);
  std::vector<ir::ValueId> values{tiles[0].value()};
  for (size_t i = 1; i < tiles.size(); ++i) {
    ir::Type t = typeOf(tiles[i], l, "cat");
    ir::Type like = t;
    if (like.rank() == result.rank()) like.shape[size_t(axis)] = result.shape[size_t(axis)];
    if (like != result)
      fail(l, "cat", fmt::format("tile {} of {} does not join {} along axis {}", i, describe(t), describe(result), axis));
    result.shape[size_t(axis)] += t.shape[size_t(axis)];
    values.push_back(tiles[i].value());
  }
  if (tiles.size() == 1) return tiles[0];
  return emitTile(OpCode::concat, values, result, l, {ir::makeAttr(ir::attr::axis, int64_t{axis})});
}

namespace {
DType defaultDotResult(DType operand) {
  switch (operand) {
    case DType::f64: return DType::f64;
    case DType::i8: case DType::u8: case DType::i32: return DType::i32;
    case DType::i64: return DType::i64;
    default: return DType::f32;
  }
}

Tile dotImpl(const Tile& a, const Tile& b, DType out, const Tile* acc, const SourceLoc& l) {
  const ir::Type ta = typeOf(a, l, "dot"), tb = typeOf(b, l, "dot");
  if (ta.rank() != 2 || tb.rank() != 2)
    fail(l, "dot", "needs 2-D tiles, got " + describe(ta) + " and " + describe(tb));
  if (ta.shape[1] != tb.shape[0])
    fail(l, "dot", "inner sizes differ: " + describe(ta) + " x " + describe(tb));
  bool float8In = isFloat8(ta.dtype) && isFloat8(tb.dtype);  // f8e4m3 x f8e5m2 as well
  bool u8TimesI8 = ta.dtype == DType::u8 && tb.dtype == DType::i8;  // quantized activations x weights
  if (ta.dtype != tb.dtype && !float8In && !u8TimesI8)
    fail(l, "dot", "dtype mismatch: " + describe(ta) + " vs " + describe(tb) +
                       (isUnsigned(tb.dtype) ? " (the one mixed integer product is u8 x i8: the unsigned tile on the left)" : ""));
  if (ta.dtype == DType::boolean) fail(l, "dot", "bool tiles cannot be multiplied; cast them first");
  if (isUnsigned(ta.dtype) && !u8TimesI8)
    fail(l, "dot", "takes unsigned tiles only as u8 x i8, not " + describe(ta) + " x " + describe(tb) +
                       "; cast them to i32 or i64 first");
  bool narrowIn = ta.dtype == DType::f16 || ta.dtype == DType::bf16 || float8In;
  bool narrowOut = out == DType::f16 || out == DType::bf16 || out == DType::f32;
  bool outOk = (out == ta.dtype && !float8In && !u8TimesI8) || out == defaultDotResult(ta.dtype) || (narrowIn && narrowOut);
  if (!outOk)
    fail(l, "dot", std::string(dtypeName(ta.dtype)) + " operands cannot give a " + std::string(dtypeName(out)) + " result");
  ir::Type result{out, {ta.shape[0], tb.shape[1]}};
  std::vector<ir::ValueId> operands{a.value(), b.value()};
  if (acc) {
    const ir::Type tacc = typeOf(*acc, l, "dot");
    if (tacc != result) fail(l, "dot", "accumulator " + describe(tacc) + " should be " + describe(result));
    operands.push_back(acc->value());
  }
  return emitTile(OpCode::dot, std::move(operands), result, l);
}
}  // namespace

Tile dot(const Tile& a, const Tile& b, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  return dotImpl(a, b, defaultDotResult(typeOf(a, l, "dot").dtype), nullptr, l);
}
Tile dot(const Tile& a, const Tile& b, DType out, Loc loc) { return dotImpl(a, b, out, nullptr, SourceLoc::from(loc)); }
Tile dot(const Tile& a, const Tile& b, const Tile& acc, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  return dotImpl(a, b, typeOf(acc, l, "dot").dtype, &acc, l);
}

// ---- views ----

Tile ReadView::at(const std::vector<Index>& block, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  return load(tensor_, block_, fill_, blockOffsets(block, block_, l, "at"), l);
}

Tile ReadView::at_offset(const std::vector<Index>& elements, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  return load(tensor_, block_, fill_, elementOffsets(elements, block_.size(), l, "at_offset"), l);
}

Index ReadView::size(int axis, Loc loc) const {
  return tensorDim(tensor_, axis, static_cast<int>(block_.size()), SourceLoc::from(loc), "size");
}

Index ReadView::blocks(int axis, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  Index n = tensorDim(tensor_, axis, static_cast<int>(block_.size()), l, "blocks");
  return cdiv(n, IndexOperand(block_[static_cast<size_t>(axis)], loc));
}

void WriteView::put(const Tile& tile, const std::vector<Index>& block, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  store(tensor_, block_, tile, blockOffsets(block, block_, l, "put"), l);
}

void WriteView::put_at_offset(const Tile& tile, const std::vector<Index>& elements, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  store(tensor_, block_, tile, elementOffsets(elements, block_.size(), l, "put_at_offset"), l);
}

Index WriteView::blocks(int axis, Loc loc) const {
  SourceLoc l = SourceLoc::from(loc);
  Index n = tensorDim(tensor_, axis, static_cast<int>(block_.size()), l, "blocks");
  return cdiv(n, IndexOperand(block_[static_cast<size_t>(axis)], loc));
}

// ---- Program ----

namespace {
// program_id or num_programs on a grid axis.
Index gridIndex(OpCode code, const char* name, int axis, int gridRank, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  if (axis < 0 || axis >= gridRank)
    fail(l, name, "axis " + std::to_string(axis) + " is out of range for a grid of rank " + std::to_string(gridRank));
  return emitIndex(code, {}, l, {ir::makeAttr(ir::attr::axis, int64_t{axis})});
}
}  // namespace

Index Program::id(int axis, Loc loc) {
  return gridIndex(OpCode::program_id, "id", axis, tracer_.kernel().gridRank, loc);
}

Index Program::num(int axis, Loc loc) {
  return gridIndex(OpCode::num_programs, "num", axis, tracer_.kernel().gridRank, loc);
}

ReadView Program::read(const Tensor& t, const Shape& block, std::optional<double> fill, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  checkBlockShape(t, block, l, "read");
  checkFill(t, fill.value_or(0.0), l, "read");
  return ReadView(tracer_, tracer_.tensorParam(t, l, "read"), block, fill);
}

WriteView Program::write(const Tensor& t, const Shape& block, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  checkBlockShape(t, block, l, "write");
  return WriteView(tracer_, tracer_.tensorParam(t, l, "write"), block);
}

Tile Program::zeros(const Shape& shape, DType dtype, Loc loc) { return full(shape, 0.0, dtype, loc); }

Tile Program::full(const Shape& shape, double value, DType dtype, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  if (shape.size() > 4 || std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d <= 0; }))
    fail(l, "full", "bad tile shape " + shapeText(shape) + ": rank 0 to 4 with positive sizes");
  return constant(value, dtype, shape, l, "full");
}

Tile Program::iota(const Shape& shape, int axis, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  ir::Type t{DType::i32, shape};
  if (shape.empty() || shape.size() > 4 || std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d <= 0; }))
    fail(l, "iota", "bad tile shape " + shapeText(shape) + ": rank 1 to 4 with positive sizes");
  checkAxis(axis, t.rank(), l, "iota", t);
  return emitTile(OpCode::iota, {}, t, l, {ir::makeAttr(ir::attr::axis, int64_t{axis})});
}

Tile Program::arange(int64_t n, Loc loc) { return iota({n}, 0, loc); }

Index Program::index(const Tile& t, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  const ir::Type type = typeOf(t, l, "index");
  if (type.rank() != 0 || !isInteger(type.dtype))
    fail(l, "index", "an Index is made from a rank-0 integer tile, got " + describe(type) +
                         (type.rank() != 0 ? " (reduce it, or gather one element)" : " (cast it to an integer dtype)"));
  return tracer_.index(castTo(t, DType::i64, l).value());
}

Tile Program::scalar(const Index& i, DType dtype, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  return castTo(tracer_.tile(use(i, l, "scalar")), dtype, l);
}

void Program::print(const std::string& label, const Tile& t, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  typeOf(t, l, "print");
  tracer_.emit(OpCode::print, {t.value()}, std::nullopt, {ir::makeAttr(ir::attr::label, label)}, l);
}

// ---- Indirect reads and writes ----

namespace {

// A coordinate of gather/scatter as a tile: integer tiles and Indexes as they are, an integral number as i64.
Tile coordinateTile(const Operand& c, size_t axis, const SourceLoc& loc, std::string_view op) {
  if (c.index) return Tracer::current(loc, op).tile(use(*c.index, loc, op));
  if (!c.tile) {
    if (std::trunc(c.number) != c.number || std::fabs(c.number) >= 0x1p63)
      fail(loc, op, fmt::format("coordinate {} is the number {}, which is not an integer of i64's range", axis, c.number));
    return constant(c.number, DType::i64, {}, loc, op);
  }
  ir::Type t = typeOf(*c.tile, loc, op);
  if (isFloat(t.dtype) || t.dtype == DType::boolean)
    fail(loc, op, fmt::format("coordinate {} is a {} tile; coordinates are integer tiles (cast it to i32 or i64)", axis,
                              describe(t)));
  return *c.tile;
}

// The coordinates, one per axis of `tensor`, then `extra` (a value, a mask), broadcast to one shape.
std::vector<Tile> indirectOperands(const Tensor& tensor, const std::vector<Operand>& coords, std::vector<Tile> extra,
                                   const SourceLoc& loc, std::string_view op) {
  if (coords.size() != static_cast<size_t>(tensor.rank()))
    fail(loc, op, fmt::format("{} coordinates for the tensor {} of rank {}: give one integer tile per axis",
                              coords.size(), describe(ir::Type{tensor.dtype(), tensor.shape()}), tensor.rank()));
  std::vector<Tile> tiles;
  for (size_t axis = 0; axis < coords.size(); ++axis) tiles.push_back(coordinateTile(coords[axis], axis, loc, op));
  tiles.insert(tiles.end(), extra.begin(), extra.end());
  ir::Type common{DType::i64, {}};
  for (const Tile& t : tiles) common.shape = broadcastShapes(common, typeOf(t, loc, op), loc, op);
  for (Tile& t : tiles) t = broadcastTo(t, common.shape, loc, op);
  return tiles;
}

Tile maskTile(const Tile& mask, const SourceLoc& loc, std::string_view op) {
  ir::Type t = typeOf(mask, loc, op);
  if (t.dtype != DType::boolean) fail(loc, op, "the mask is a " + describe(t) + " tile; it must be a bool tile (a comparison)");
  return mask;
}

std::vector<ir::ValueId> valuesOf(const std::vector<Tile>& tiles) {
  std::vector<ir::ValueId> v;
  for (const Tile& t : tiles) v.push_back(t.value());
  return v;
}

}  // namespace

Tile Program::gather(const Tensor& t, const std::vector<Operand>& coords, std::optional<double> fill, Loc loc) {
  return indirectRead(t, coords, nullptr, fill, loc);
}

Tile Program::gather(const Tensor& t, const std::vector<Operand>& coords, const Tile& mask, std::optional<double> fill,
                     Loc loc) {
  return indirectRead(t, coords, &mask, fill, loc);
}

void Program::scatter(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, Loc loc) {
  indirectWrite(t, coords, value, nullptr, loc);
}

void Program::scatter(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, const Tile& mask,
                      Loc loc) {
  indirectWrite(t, coords, value, &mask, loc);
}

Tile Program::indirectRead(const Tensor& t, const std::vector<Operand>& coords, const Tile* mask,
                           std::optional<double> fill, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  t.checkDefined("gather", l);
  checkFill(t, fill.value_or(0.0), l, "gather");
  int tensor = tracer_.tensorParam(t, l, "gather");
  std::vector<Tile> extra;
  if (mask) extra.push_back(maskTile(*mask, l, "gather"));
  std::vector<Tile> operands = indirectOperands(t, coords, extra, l, "gather");
  Shape shape = typeOf(operands[0], l, "gather").shape;
  return emitRead(OpCode::gather, tensor, valuesOf(operands), shape, fill, l);
}

void Program::indirectWrite(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, const Tile* mask,
                            Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  t.checkDefined("scatter", l);
  int tensor = tracer_.tensorParam(t, l, "scatter");
  // A tile of another dtype converts to the tensor's, as put does; a number must be one of its values.
  std::vector<Tile> extra{castTo(materialize(value, t.dtype(), l, "scatter"), t.dtype(), l)};
  if (mask) extra.push_back(maskTile(*mask, l, "scatter"));
  tracer_.emit(OpCode::scatter, valuesOf(indirectOperands(t, coords, extra, l, "scatter")), std::nullopt,
               {ir::makeAttr(ir::attr::tensor, int64_t{tensor})}, l);
}

Tile Program::atomicUpdate(std::string_view fn, const Tensor& t, const std::vector<Operand>& coords,
                           const Operand& value, const Operand* compare, const Tile* mask, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  std::string op = "atomic_" + std::string(fn);
  t.checkDefined(op, l);
  if (!ir::atomicSupports(*ir::parseAtomicFn(fn), t.dtype()))
    fail(l, op, fmt::format("not provided for the {} tensor: atomics update i32, i64, u32 and u64 "
                            "tensors, and float ones by all but cas", describe(ir::Type{t.dtype(), t.shape()})));
  int tensor = tracer_.tensorParam(t, l, op);
  // Values of another dtype convert to the tensor's, as put does; numbers must be its values.
  std::vector<Tile> extra{castTo(materialize(value, t.dtype(), l, op), t.dtype(), l)};
  if (compare) extra.push_back(castTo(materialize(*compare, t.dtype(), l, op), t.dtype(), l));
  if (mask) extra.push_back(maskTile(*mask, l, op));
  std::vector<Tile> operands = indirectOperands(t, coords, extra, l, op);
  Shape shape = typeOf(operands[0], l, op).shape;
  return emitTile(OpCode::atomic, valuesOf(operands), {t.dtype(), shape}, l,
                  {ir::makeAttr(ir::attr::fn, std::string(fn)), ir::makeAttr(ir::attr::tensor, int64_t{tensor})});
}

#define TJ_ATOMIC(NAME)                                                                                         \
  Tile Program::atomic_##NAME(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, Loc loc) { \
    return atomicUpdate(#NAME, t, coords, value, nullptr, nullptr, loc);                                        \
  }                                                                                                             \
  Tile Program::atomic_##NAME(const Tensor& t, const std::vector<Operand>& coords, const Operand& value,          \
                              const Tile& mask, Loc loc) {                                                      \
    return atomicUpdate(#NAME, t, coords, value, nullptr, &mask, loc);                                          \
  }
TJ_ATOMIC(add) TJ_ATOMIC(max) TJ_ATOMIC(min) TJ_ATOMIC(xchg)
#undef TJ_ATOMIC

Tile Program::atomic_cas(const Tensor& t, const std::vector<Operand>& coords, const Operand& compare,
                         const Operand& value, Loc loc) {
  return atomicUpdate("cas", t, coords, value, &compare, nullptr, loc);
}

Tile Program::atomic_cas(const Tensor& t, const std::vector<Operand>& coords, const Operand& compare,
                         const Operand& value, const Tile& mask, Loc loc) {
  return atomicUpdate("cas", t, coords, value, &compare, &mask, loc);
}

void Program::check(const Tile& cond, const std::string& message, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  const ir::Type t = typeOf(cond, l, "check");
  if (t.dtype != DType::boolean) fail(l, "check", "the condition must be a bool tile (a comparison), got " + describe(t));
  static const bool enabled = [] {
    const char* v = std::getenv("TILEJIT_CHECKS");
    return !v || std::string_view(v) != "0";
  }();
  if (enabled) tracer_.emit(OpCode::check, {cond.value()}, std::nullopt, {ir::makeAttr(ir::attr::message, message)}, l);
}

Tile Program::fold(const IndexOperand& start, const IndexOperand& end, const Tile& init,
                   const std::function<Tile(Index, Tile)>& body, Loc loc) {
  return foldTiles(start, end, {init}, [&](Index k, const Carried& c) { return Carried{body(k, c[0])}; }, loc)[0];
}

Tile Program::fold(const IndexOperand& start, const IndexOperand& end, int64_t step, const Tile& init,
                   const std::function<Tile(Index, Tile)>& body, Loc loc) {
  return steppedFold(start, end, step, {init}, [&](Index k, const Carried& c) { return Carried{body(k, c[0])}; }, loc)[0];
}

void Program::stages(int64_t n, Loc loc) {
  if (n < 1 || n > ir::kMaxStages)
    fail(SourceLoc::from(loc), "stages", fmt::format("{} stages; a fold keeps 1 to {} iterations of loads in flight", n, ir::kMaxStages));
  stages_ = n;
}

void Program::warp_specialize(bool on) { specialize_ = on; }

void Program::warps(int64_t n, Loc loc) {
  if (!ir::isWarpCount(n))
    fail(SourceLoc::from(loc), "warps", fmt::format("{} warps; a program runs on a power of two from 1 to {}", n, ir::kMaxWarps));
  tracer_.kernel().warps = n;
}

void Program::loop(const IndexOperand& start, const IndexOperand& end, const std::function<void(Index)>& body, Loc loc) {
  loop(start, end, 1, body, loc);
}

void Program::loop(const IndexOperand& start, const IndexOperand& end, int64_t step,
                   const std::function<void(Index)>& body, Loc loc) {
  steppedFold(start, end, step, {}, [&](Index k, const Carried&) {
    body(k);
    return Carried{};
  }, loc);
}

Program::Carried Program::steppedFold(const IndexOperand& start, const IndexOperand& end, int64_t step,
                                      const Carried& init, const std::function<Carried(Index, const Carried&)>& body,
                                      Loc loc) {
  if (step <= 0) fail(SourceLoc::from(loc), "fold", fmt::format("the step {} is not positive", step));
  if (step == 1) return foldTiles(start, end, init, body, loc);
  Index count = cdiv(max(end.index - start.index, IndexOperand(0, loc)), IndexOperand(step, loc));
  return foldTiles(0, count, init, [&](Index i, const Carried& c) { return body(start.index + i * step, c); }, loc);
}

namespace {
void checkCondition(const Tile& cond, const SourceLoc& l, std::string_view op) {
  const ir::Type c = typeOf(cond, l, op);
  if (c != ir::Type{DType::boolean, {}})
    fail(l, op, "the condition must be a rank-0 bool tile (an Index comparison, or a value read and compared), got " +
                    describe(c));
  tracer(l, op).checkInScope(cond.value(), l, op);
}

// What a loop body yields: `next` must match the carried types one for one.
std::vector<ir::ValueId> carriedValues(Tracer& tracer, const std::vector<Tile>& next, const std::vector<ir::Type>& types,
                                       const SourceLoc& l, std::string_view op) {
  if (next.size() != types.size())
    fail(l, op, "the body returned " + std::to_string(next.size()) + " tiles for " + std::to_string(types.size()) +
                    " carried");
  std::vector<ir::ValueId> values;
  for (size_t i = 0; i < next.size(); ++i) {
    const ir::Type t = typeOf(next[i], l, op);
    if (t != types[i])
      fail(l, op, "carried value " + std::to_string(i) + " starts as " + describe(types[i]) + " but the body returns " +
                      describe(t));
    tracer.checkInScope(next[i].value(), l, op);
    values.push_back(next[i].value());
  }
  return values;
}

const ir::Type kBool{DType::boolean, {}};

ir::ValueId zeroOf(Tracer& tracer, const ir::Type& t, const SourceLoc& l) {
  ir::Number zero = isFloat(t.dtype) ? ir::Number(0.0) : ir::Number(int64_t{0});
  return tracer.emit(OpCode::constant, {}, t, {ir::makeAttr(ir::attr::value, zero)}, l);
}

// A region that exited yields whether it did: the program goes on after its op only where not.
void exitWhere(Tracer& tracer, ir::ValueId exited, const SourceLoc& l) {
  tracer.exitUnless(tracer.emit(OpCode::logical_not, {exited}, kBool, {}, l), l, "exit_if");
}
}  // namespace

void Program::if_then(const Tile& cond, const std::function<void()>& then, Loc loc) {
  if_else(cond, then, [] {}, loc);
}

void Program::exit_if(const Tile& cond, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  checkCondition(cond, l, "exit_if");
  tracer_.exitUnless((!TileArg(cond, loc)).value(), l, "exit_if");
}

Program::Carried Program::branchTiles(const Tile& cond, const std::function<Carried()>& then,
                                      const std::function<Carried()>& otherwise, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  checkCondition(cond, l, "if");
  ir::Op op{OpCode::if_, {cond.value()}, {}, {}, {ir::Block{}, ir::Block{}}, l};
  std::vector<ir::Type> types;
  std::vector<ir::ValueId> yielded[2], exited{-1, -1};
  for (size_t side = 0; side < 2; ++side) {
    Tracer::BlockScope scope(tracer_, op.regions[side]);
    Carried out = side == 0 ? then() : otherwise();
    if (side == 1 && out.size() != types.size())
      fail(l, "if", "the else side returns " + std::to_string(out.size()) + " tiles but the then side " +
                        std::to_string(types.size()));
    for (size_t i = 0; i < out.size(); ++i) {
      ir::Type t = typeOf(out[i], l, "if");
      tracer_.checkInScope(out[i].value(), l, "if");
      if (side == 0) types.push_back(t);
      else if (t != types[i])
        fail(l, "if", "result " + std::to_string(i) + " is " + describe(types[i]) + " on the then side but " +
                          describe(t) + " on the else side");
      yielded[side].push_back(out[i].value());
    }
    auto zeros = [&] {  // the results where the side exited: never read
      std::vector<ir::ValueId> z;
      for (const ir::Type& t : types) z.push_back(zeroOf(tracer_, t, l));
      return z;
    };
    if (auto e = tracer_.closeRegionExits(yielded[side], zeros, l)) yielded[side] = e->values, exited[side] = e->exited;
  }
  bool exits = exited[0] >= 0 || exited[1] >= 0;
  for (size_t side = 0; side < 2; ++side) {
    Tracer::BlockScope scope(tracer_, op.regions[side]);  // reopened for its yield
    if (exits) yielded[side].push_back(exited[side] >= 0 ? exited[side] : zeroOf(tracer_, kBool, l));
    tracer_.emit(OpCode::yield, yielded[side], std::nullopt, {}, l);
  }
  if (exits) types.push_back(kBool);
  Carried results = emitTiles(tracer_, std::move(op), types);
  if (exits) {
    exitWhere(tracer_, results.back().value(), l);
    results.pop_back();
  }
  return results;
}

Program::Carried Program::foldTiles(const IndexOperand& start, const IndexOperand& end, const Carried& init,
                                    const std::function<Carried(Index, const Carried&)>& body, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  std::vector<ir::ValueId> operands{use(start.index, l, "fold"), use(end.index, l, "fold")};
  std::vector<ir::Type> types;
  for (const Tile& t : init) {
    types.push_back(typeOf(t, l, "fold"));
    operands.push_back(t.value());
  }
  ir::Block region;
  std::optional<Tracer::Exited> exited;
  {
    Tracer::BlockScope scope(tracer_, region);
    ir::ValueId k = tracer_.addBlockArg(kIndexType);
    Carried carried;
    for (const ir::Type& t : types) carried.push_back(tracer_.tile(tracer_.addBlockArg(t)));
    std::vector<ir::ValueId> next = carriedValues(tracer_, body(tracer_.index(k), carried), types, l, "fold");
    std::vector<ir::ValueId> args(region.args.begin() + 1, region.args.end());
    exited = tracer_.closeRegionExits(next, [&] { return args; }, l);
    if (exited) {  // the loop becomes a while that stops where an exit was taken: k and the flag are carried
      tracer_.addBlockArg(kBool);
      next = {tracer_.emit(OpCode::add, {k, tracer_.emit(OpCode::constant, {}, kIndexType, {ir::makeAttr(ir::attr::value, int64_t{1})}, l)},
                           kIndexType, {}, l)};
      next.insert(next.end(), exited->values.begin(), exited->values.end());
      next.push_back(exited->exited);
    }
    tracer_.emit(OpCode::yield, next, std::nullopt, {}, l);
  }
  if (!exited) {
    std::vector<ir::Attr> attrs;
    if (stages_) attrs.push_back(ir::makeAttr(ir::attr::stages, *stages_));
    if (specialize_) attrs.push_back(ir::makeAttr(ir::attr::specialize, 1));
    return emitTiles(tracer_, {OpCode::fold, operands, {}, std::move(attrs), {std::move(region)}, l}, types);
  }
  ir::Op loop{OpCode::while_, {operands[0]}, {}, {}, {ir::Block{}, std::move(region)}, l};
  loop.operands.insert(loop.operands.end(), operands.begin() + 2, operands.end());
  loop.operands.push_back(zeroOf(tracer_, kBool, l));
  types.insert(types.begin(), kIndexType);
  types.push_back(kBool);
  {
    Tracer::BlockScope scope(tracer_, loop.regions[0]);
    std::vector<ir::ValueId> args;
    for (const ir::Type& t : types) args.push_back(tracer_.addBlockArg(t));
    ir::ValueId inRange = tracer_.emit(OpCode::cmp, {args.front(), operands[1]}, kBool, {ir::makeAttr(ir::attr::pred, std::string("lt"))}, l);
    ir::ValueId going = tracer_.emit(OpCode::logical_not, {args.back()}, kBool, {}, l);
    tracer_.emit(OpCode::yield, {tracer_.emit(OpCode::logical_and, {inRange, going}, kBool, {}, l)}, std::nullopt, {}, l);
  }
  Carried results = emitTiles(tracer_, std::move(loop), types);
  exitWhere(tracer_, results.back().value(), l);
  return Carried(results.begin() + 1, results.end() - 1);
}

Program::Carried Program::whileTiles(const Carried& init, const std::function<Tile(const Carried&)>& cond,
                                     const std::function<Carried(const Carried&)>& body, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  std::vector<ir::Type> types;
  ir::Op op{OpCode::while_, {}, {}, {}, {ir::Block{}, ir::Block{}}, l};
  for (const Tile& t : init) {
    types.push_back(typeOf(t, l, "while"));
    op.operands.push_back(t.value());
  }
  auto carried = [&] {
    Carried c;
    for (const ir::Type& t : types) c.push_back(tracer_.tile(tracer_.addBlockArg(t)));
    return c;
  };
  ir::ValueId keepGoing;
  {
    Tracer::BlockScope scope(tracer_, op.regions[0], /*exitsAllowed=*/false);
    Tile going = cond(carried());
    checkCondition(going, l, "while");
    keepGoing = going.value();
  }
  std::optional<Tracer::Exited> exited;
  {
    Tracer::BlockScope scope(tracer_, op.regions[1]);
    Carried args = carried();
    std::vector<ir::ValueId> next = carriedValues(tracer_, body(args), types, l, "while");
    exited = tracer_.closeRegionExits(next, [&] { return valuesOf(args); }, l);
    if (exited) {  // the flag is carried too, and stops the loop
      tracer_.addBlockArg(kBool);
      next = exited->values;
      next.push_back(exited->exited);
    }
    tracer_.emit(OpCode::yield, next, std::nullopt, {}, l);
  }
  if (exited) {  // the cond's own ops run only until the exit: they move into an if on the flag
    ir::Op guard{OpCode::if_, {}, {}, {}, {ir::Block{{}, std::move(op.regions[0].ops)}, ir::Block{}}, l};
    op.regions[0].ops.clear();
    Tracer::BlockScope scope(tracer_, op.regions[0]);
    guard.operands.push_back(tracer_.emit(OpCode::logical_not, {tracer_.addBlockArg(kBool)}, kBool, {}, l));
    {
      Tracer::BlockScope then(tracer_, guard.regions[0]);
      tracer_.emit(OpCode::yield, {keepGoing}, std::nullopt, {}, l);
    }
    {
      Tracer::BlockScope otherwise(tracer_, guard.regions[1]);
      tracer_.emit(OpCode::yield, {zeroOf(tracer_, kBool, l)}, std::nullopt, {}, l);
    }
    keepGoing = tracer_.emitOp(std::move(guard), {kBool}).at(0);
  }
  {
    Tracer::BlockScope scope(tracer_, op.regions[0]);  // reopened for its yield
    tracer_.emit(OpCode::yield, {keepGoing}, std::nullopt, {}, l);
  }
  if (!exited) return emitTiles(tracer_, std::move(op), types);
  op.operands.push_back(zeroOf(tracer_, kBool, l));
  types.push_back(kBool);
  Carried results = emitTiles(tracer_, std::move(op), types);
  exitWhere(tracer_, results.back().value(), l);
  results.pop_back();
  return results;
}

}  // namespace tj
