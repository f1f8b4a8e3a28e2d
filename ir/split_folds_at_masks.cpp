// Index-set splitting of folds at their masks. A fold body that compares integer tiles affine in
// the fold index and in iotas (attention's `cols < seqK` and `cols <= rows`, a row loop's bound
// on its last block) finds every element true on a run of iterations at one end of the loop and
// pays a compare and a select per element on every iteration for the few where it is not. The
// fold is split in two, in the same order: on the iterations where every such compare is true
// for every element, the compares become constants (canonicalization then drops the selects they
// fed); the others keep the original body. Where the bound is computed from runtime values, a
// few scalar ops before the loop compute it; where an i32 tile could wrap there, the split
// leaves every iteration to the original body, so results are the same bit for bit.
#include <spdlog/spdlog.h>

#include <map>
#include <optional>
#include <set>

#include "ir/passes.hpp"
#include "ir/rewrite.hpp"

namespace tj::ir {

namespace {

// A rank-0 value (or a splat of one) as index * indexCoeff + constant + sum(coeff * term), in
// i64; `narrowedTo` bits when it was cast to a narrower integer at the end (it then wraps unless
// the values stay in range, which the split checks at runtime).
struct Uniform {
  int64_t indexCoeff = 0, constant = 0;
  std::vector<std::pair<int64_t, ValueId>> terms;  // (coefficient, a rank-0 integer from outside the fold)
  int narrowedTo = 64;

  Uniform scaled(int64_t c) const {
    Uniform u = *this;
    u.indexCoeff *= c;
    u.constant *= c;
    for (auto& t : u.terms) t.first *= c;
    return u;
  }
  bool isZero() const { return indexCoeff == 0 && constant == 0 && terms.empty(); }
  Uniform plus(const Uniform& o) const {
    Uniform u = *this;
    u.indexCoeff += o.indexCoeff;
    u.constant += o.constant;
    u.terms.insert(u.terms.end(), o.terms.begin(), o.terms.end());
    return u;
  }
};

// One side of a compare: an integer tile that is an iota along `iotaAxis` (or none) plus a
// uniform value, in `bits`-bit arithmetic.
struct Side {
  std::optional<int> iotaAxis;
  int64_t iotaExtent = 1;
  Uniform uniform;
  int bits = 64;
  int64_t maxIota() const { return iotaAxis ? iotaExtent - 1 : 0; }
};

// A compare of two sides, true for every element at fold index i exactly where
// slope * i + (less - greater at i = 0) + less's largest iota - (inclusive ? 1 : 0) < 0, as long as
// the sides stay within their bits (maskBound); slope != 0.
struct AffineMask {
  const Op* cmp;
  Side less, greater;  // the compare as less < greater + (inclusive ? 1 : 0)
  bool inclusive;
  int64_t slope() const { return less.uniform.indexCoeff - greater.uniform.indexCoeff; }
};

using Definitions = std::map<ValueId, const Op*>;

class MaskAnalysis {
 public:
  // `defs`: the ops of the kernel before any split, which define every value a fold's compares
  // can reach (a fold's rewritten copy keeps its body's values).
  MaskAnalysis(const Kernel& k, const Definitions& defs, const Op& fold) : k_(k), defs_(defs), index_(fold.regions[0].args[0]) {
    for (ValueId a : fold.regions[0].args) inside_.insert(a);
    forEachOp(fold.regions[0], [&](const Op& op) { inside_.insert(op.results.begin(), op.results.end()); });
  }

  std::optional<AffineMask> mask(const Op& cmp) const {
    if (cmp.code != OpCode::cmp) return std::nullopt;
    const Type& t = k_.type(cmp.operands[0]);
    if (t.isScalar() || !isInteger(t.dtype) || isUnsigned(t.dtype)) return std::nullopt;
    const std::string& pred = cmp.get(attr::pred);
    bool swap = pred == "gt" || pred == "ge";
    if (pred != "lt" && pred != "le" && !swap) return std::nullopt;
    std::optional<Side> a = side(cmp.operands[swap ? 1 : 0]), b = side(cmp.operands[swap ? 0 : 1]);
    if (!a || !b) return std::nullopt;
    if (a->iotaAxis && a->iotaAxis == b->iotaAxis) a->iotaAxis = b->iotaAxis = std::nullopt;  // the same iota cancels
    AffineMask m{&cmp, *a, *b, pred == "le" || pred == "ge"};
    return m.slope() != 0 ? std::optional(m) : std::nullopt;
  }

 private:
  const Op* def(ValueId v) const {
    auto it = defs_.find(v);
    return it == defs_.end() ? nullptr : it->second;
  }
  static std::optional<int64_t> intConstant(const Op* op) {
    if (!op || op->code != OpCode::constant) return std::nullopt;
    Number n = op->get(attr::value);
    const auto* v = std::get_if<int64_t>(&n);
    return v ? std::optional(*v) : std::nullopt;
  }

  std::optional<Side> side(ValueId v) const {
    const Type& t = k_.type(v);
    const Op* op = def(v);
    int bits = int(dtypeBytes(t.dtype)) * 8;
    if (t.numel() == 1 || (op && (op->code == OpCode::broadcast || op->code == OpCode::constant))) {
      std::optional<Uniform> u = uniform(op && op->code == OpCode::broadcast ? op->operands[0] : v);
      return u ? std::optional(Side{std::nullopt, 1, *u, bits}) : std::nullopt;
    }
    if (!op) return std::nullopt;
    if (op->code == OpCode::iota) {
      int axis = int(op->get(attr::axis));
      return Side{axis, t.shape[size_t(axis)], {}, bits};
    }
    if (op->code != OpCode::add) return std::nullopt;
    std::optional<Side> a = side(op->operands[0]), b = side(op->operands[1]);
    if (!a || !b || (a->iotaAxis && b->iotaAxis)) return std::nullopt;
    // Two runtime values added in `bits` could wrap between them.
    if (!a->uniform.isZero() && !b->uniform.isZero()) return std::nullopt;
    Side s = *a;
    if (b->iotaAxis) s.iotaAxis = b->iotaAxis, s.iotaExtent = b->iotaExtent;
    if (a->uniform.isZero()) s.uniform = b->uniform;
    return s;
  }

  // v (a splat) as a Uniform: i64 arithmetic on the fold index and constants, through reshapes,
  // broadcasts and one narrowing cast; a rank-0 integer from outside the fold is a term.
  std::optional<Uniform> uniform(ValueId v) const {
    const Type& t = k_.type(v);
    if (!isInteger(t.dtype) || isUnsigned(t.dtype)) return std::nullopt;
    if (v == index_) return Uniform{1, 0, {}, 64};
    const Op* op = def(v);
    if (std::optional<int64_t> c = intConstant(op)) return Uniform{0, *c, {}, 64};
    if (!inside_.count(v) && t.isScalar()) return Uniform{0, 0, {{1, v}}, 64};
    if (!op || t.numel() != 1) return std::nullopt;
    if (op->code == OpCode::reshape || op->code == OpCode::broadcast) return uniform(op->operands[0]);
    if (op->code == OpCode::cast) {
      std::optional<Uniform> u = uniform(op->operands[0]);
      if (!u || u->narrowedTo != 64) return std::nullopt;
      u->narrowedTo = int(dtypeBytes(t.dtype)) * 8;
      return u;
    }
    if (t.dtype != DType::i64) return std::nullopt;
    std::optional<Uniform> a = uniform(op->operands.at(0));
    std::optional<Uniform> b = op->operands.size() > 1 ? uniform(op->operands[1]) : std::nullopt;
    if (!a || !b || a->narrowedTo != 64 || b->narrowedTo != 64) return std::nullopt;
    if (op->code == OpCode::add) return a->plus(*b);
    if (op->code == OpCode::sub) return a->plus(b->scaled(-1));
    if (op->code != OpCode::mul) return std::nullopt;
    if (a->indexCoeff == 0 && a->terms.empty()) return b->scaled(a->constant);
    if (b->indexCoeff == 0 && b->terms.empty()) return a->scaled(b->constant);
    return std::nullopt;
  }

  const Kernel& k_;
  const Definitions& defs_;
  ValueId index_;
  std::set<ValueId> inside_;
};

// Emits scalar i64 ops into a block, making their values in the kernel.
class ScalarBuilder {
 public:
  ScalarBuilder(Kernel& k, std::vector<Op>& ops, SourceLoc loc) : k_(k), ops_(ops), loc_(std::move(loc)) {}

  ValueId constant(int64_t v, DType t = DType::i64) {
    return emit(OpCode::constant, {}, t, {makeAttr(attr::value, Number(v))});
  }
  ValueId binary(OpCode c, ValueId a, ValueId b) { return emit(c, {a, b}, k_.type(a).dtype); }
  ValueId compare(const char* pred, ValueId a, ValueId b) {
    return emit(OpCode::cmp, {a, b}, DType::boolean, {makeAttr(attr::pred, pred)});
  }
  ValueId select(ValueId c, ValueId a, ValueId b) { return emit(OpCode::select, {c, a, b}, k_.type(a).dtype); }
  ValueId toI64(ValueId v) { return k_.type(v).dtype == DType::i64 ? v : emit(OpCode::cast, {v}, DType::i64); }
  // floor(x / d) for a constant d > 0 (the IR's div truncates toward zero).
  ValueId floorDiv(ValueId x, int64_t d) {
    ValueId truncated = binary(OpCode::div, x, constant(d));
    ValueId below = binary(OpCode::div, binary(OpCode::sub, x, constant(d - 1)), constant(d));
    return select(compare("lt", x, constant(0)), below, truncated);
  }
  // The uniform's value (in i64, before any narrowing) at fold index `index`.
  ValueId value(const Uniform& u, ValueId index) {
    ValueId sum = binary(OpCode::add, binary(OpCode::mul, index, constant(u.indexCoeff)), constant(u.constant));
    for (auto [coeff, term] : u.terms) sum = binary(OpCode::add, sum, binary(OpCode::mul, toI64(term), constant(coeff)));
    return sum;
  }

 private:
  ValueId emit(OpCode c, std::vector<ValueId> operands, DType t, std::vector<Attr> attrs = {}) {
    ValueId r = k_.addValue(Type{t, {}});
    ops_.push_back(Op{c, std::move(operands), {r}, std::move(attrs), {}, loc_});
    return r;
  }
  Kernel& k_;
  std::vector<Op>& ops_;
  SourceLoc loc_;
};

// Gives every value a block defines (arguments, results, nested ones too) a new id.
void renumber(Kernel& k, Block& b, std::map<ValueId, ValueId>& renamed) {
  auto fresh = [&](ValueId& v) {
    ValueId n = k.addValue(k.type(v));
    renamed[v] = n;
    v = n;
  };
  for (ValueId& a : b.args) fresh(a);
  for (Op& op : b.ops) {
    for (ValueId& v : op.operands)
      if (auto it = renamed.find(v); it != renamed.end()) v = it->second;
    for (Block& r : op.regions) renumber(k, r, renamed);
    for (ValueId& v : op.results) fresh(v);
  }
}

class FoldSplitter {
 public:
  // Splits into `out`, a copy of `in` whose body it rewrites.
  FoldSplitter(const Kernel& in, Kernel& out) : k_(out) {
    forEachOp(in.body, [&](const Op& op) {
      for (ValueId r : op.results) defs_[r] = &op;
    });
  }

  Block rewrite(const Block& b) {
    Block out{b.args, {}};
    for (const Op& op : b.ops) {
      Op copy = op;
      for (Block& r : copy.regions) r = rewrite(r);
      if (copy.code == OpCode::fold) split(copy, out.ops);
      else out.ops.push_back(std::move(copy));
    }
    return out;
  }
  int splits() const { return splits_; }

 private:
  // Emits `fold` into `ops`, split where its masks allow.
  void split(const Op& fold, std::vector<Op>& ops) {
    if (fold.has(attr::split)) return ops.push_back(fold);
    MaskAnalysis analysis(k_, defs_, fold);
    std::vector<AffineMask> rising, falling;  // all true before a bound, after a bound
    for (const Op& op : fold.regions[0].ops)
      if (std::optional<AffineMask> m = analysis.mask(op)) (m->slope() > 0 ? rising : falling).push_back(*m);
    if (rising.empty() && falling.empty()) return ops.push_back(fold);
    bool prefix = rising.size() >= falling.size();
    const std::vector<AffineMask>& masks = prefix ? rising : falling;
    ScalarBuilder s(k_, ops, fold.loc);
    ValueId start = fold.operands[0], end = fold.operands[1];
    ValueId bound = maskBound(s, masks[0]);
    for (size_t m = 1; m < masks.size(); ++m) bound = s.binary(prefix ? OpCode::min : OpCode::max, bound, maskBound(s, masks[m]));
    bound = s.binary(OpCode::max, start, s.binary(OpCode::min, bound, end));
    // The true run [first, last]: where an i32 tile of it could wrap, no run at all.
    ValueId first = prefix ? start : bound, last = s.binary(OpCode::sub, prefix ? bound : end, s.constant(1));
    ValueId inRange = s.constant(1, DType::boolean);
    for (const AffineMask& m : masks)
      for (const Side* side : {&m.less, &m.greater})
        inRange = s.binary(OpCode::logical_and, inRange, withinBits(s, *side, first, last));
    ValueId empty = s.compare("gt", first, last);
    bound = s.select(s.binary(OpCode::logical_or, empty, inRange), bound, prefix ? start : end);
    std::set<const Op*> constant;
    for (const AffineMask& m : masks) constant.insert(m.cmp);
    Op allTrue = withConstantMasks(fold, constant), original = fold;
    std::map<ValueId, ValueId> renamed;
    renumber(k_, original.regions[0], renamed);
    Op& firstPart = prefix ? allTrue : original;
    Op& secondPart = prefix ? original : allTrue;
    // The first part yields into fresh values the second starts from.
    firstPart.operands[1] = bound;
    for (ValueId& r : firstPart.results) r = k_.addValue(k_.type(r));
    secondPart.operands[0] = bound;
    for (size_t i = 0; i < firstPart.results.size(); ++i) secondPart.operands[2 + i] = firstPart.results[i];
    secondPart.results = fold.results;
    firstPart.set(attr::split, 1);
    secondPart.set(attr::split, 1);
    ops.push_back(std::move(firstPart));
    ops.push_back(std::move(secondPart));
    ++splits_;
  }

  // The index bound of a mask: every element true for index < bound (rising slope) or
  // index >= bound (falling), as long as its sides stay within their bits.
  ValueId maskBound(ScalarBuilder& s, const AffineMask& m) {
    // less - greater = slope * index + offset, maximal at less's largest iota and greater's 0;
    // true everywhere iff slope * index + offset + maxIota < limit.
    ValueId zero = s.constant(0);
    ValueId offset = s.binary(OpCode::sub, s.value(m.less.uniform, zero), s.value(m.greater.uniform, zero));
    ValueId excess = s.binary(OpCode::add, offset, s.constant(m.less.maxIota() - (m.inclusive ? 1 : 0)));
    int64_t slope = m.slope();
    if (slope > 0)  // slope i + excess < 0  <=>  i <= floor((-excess - 1) / slope)
      return s.binary(OpCode::add, s.floorDiv(s.binary(OpCode::sub, s.constant(-1), excess), slope), s.constant(1));
    // -|slope| i + excess < 0  <=>  i > excess / |slope|  <=>  i >= floor(excess / |slope|) + 1
    return s.binary(OpCode::add, s.floorDiv(excess, -slope), s.constant(1));
  }

  // Whether a side's values stay within its bits at both ends of [first, last] (so, by
  // linearity, everywhere between): a narrowed uniform, and an iota added to it in fewer than
  // 64 bits, wrap unless its values are in range. (An integer of the side's dtype from outside
  // the fold, alone, is in range.)
  ValueId withinBits(ScalarBuilder& s, const Side& side, ValueId first, ValueId last) {
    const int bits = std::min(side.bits, side.uniform.narrowedTo);
    ValueId ok = s.constant(1, DType::boolean);
    if (bits >= 64 || (side.uniform.narrowedTo >= 64 && !side.iotaAxis)) return ok;
    int64_t lowest = -(int64_t{1} << (bits - 1)), highest = (int64_t{1} << (bits - 1)) - 1 - side.maxIota();
    std::vector<ValueId> ends = {first};
    if (side.uniform.indexCoeff != 0) ends.push_back(last);
    for (ValueId i : ends) {
      ValueId v = s.value(side.uniform, i);
      ok = s.binary(OpCode::logical_and, ok, s.compare("ge", v, s.constant(lowest)));
      ok = s.binary(OpCode::logical_and, ok, s.compare("le", v, s.constant(highest)));
    }
    return ok;
  }

  // The fold with each of `masks` replaced by a true splat of its shape.
  Op withConstantMasks(const Op& fold, const std::set<const Op*>& masks) {
    Op out = fold;
    out.regions[0].ops.clear();
    for (const Op& op : fold.regions[0].ops) {
      if (!masks.count(&op)) {
        out.regions[0].ops.push_back(op);
        continue;
      }
      out.regions[0].ops.push_back(Op{OpCode::constant, {}, op.results, {makeAttr(attr::value, Number(int64_t{1}))}, {}, op.loc});
    }
    return out;
  }

  Kernel& k_;
  Definitions defs_;
  int splits_ = 0;
};

}  // namespace

Kernel splitFoldsAtMasks(const Kernel& k) {
  Kernel out = k;
  FoldSplitter splitter(k, out);
  out.body = splitter.rewrite(k.body);
  spdlog::debug("pass split-folds-at-masks: {} folds split, {} ops", splitter.splits(), countOps(out.body));
  return splitter.splits() > 0 ? canonicalize(out) : k;
}

}  // namespace tj::ir
