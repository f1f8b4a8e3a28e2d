#include "grad/derive_backward.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <numbers>
#include <numeric>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "ir/passes.hpp"

namespace tj::grad {
namespace {

using ir::Block;
using ir::Op;
using ir::OpCode;
using ir::Type;
using ir::ValueId;
using ValueMap = std::unordered_map<ValueId, ValueId>;  // a forward value -> its backward counterpart

[[noreturn]] void notDerived(const Op& op, const std::string& why) {
  fail(op.loc, "grad", fmt::format("`{}` is outside what is derived: {}", ir::opName(op.code), why));
}

// Whether gradients flow through values of this dtype.
bool differentiable(DType t) { return t == DType::f32 || t == DType::f64 || t == DType::f16 || t == DType::bf16; }

ValueId lookup(const ValueMap& m, ValueId v) {
  auto it = m.find(v);
  if (it == m.end()) throw InternalError("grad", fmt::format("forward value %{} has no counterpart", v));
  return it->second;
}

// Appends ops to a block of the backward kernel, each a new value of its result type.
class Builder {
 public:
  explicit Builder(ir::Kernel& k) : k_(k) {}
  Block* block = nullptr;
  SourceLoc loc;  // the forward op being replayed or reversed

  const Type& type(ValueId v) const { return k_.type(v); }
  ValueId newValue(const Type& t) { return k_.addValue(t); }
  void append(Op op) { block->ops.push_back(std::move(op)); }

  ValueId emit(OpCode c, std::vector<ValueId> operands, const Type& result, const std::vector<ir::Attr>& attrs = {}) {
    Op op{c, std::move(operands), {newValue(result)}, {}, {}, loc};
    for (const ir::Attr& a : attrs) op.setAttr(a.name, a.value);
    append(op);
    return op.results[0];
  }
  void emitEffect(OpCode c, std::vector<ValueId> operands, const std::vector<ir::Attr>& attrs) {
    Op op{c, std::move(operands), {}, {}, {}, loc};
    for (const ir::Attr& a : attrs) op.setAttr(a.name, a.value);
    append(std::move(op));
  }

  ValueId constant(const Type& t, double v) {
    ir::Number n = isFloat(t.dtype) ? ir::Number(v) : ir::Number(static_cast<int64_t>(v));
    return emit(OpCode::constant, {}, t, {ir::makeAttr(ir::attr::value, n)});
  }
  ValueId constantLike(ValueId v, double value) { return constant(type(v), value); }
  ValueId binary(OpCode c, ValueId a, ValueId b) { return emit(c, {a, b}, type(a)); }
  ValueId unary(OpCode c, ValueId a) { return emit(c, {a}, type(a)); }
  ValueId scale(ValueId a, double by) { return binary(OpCode::mul, a, constantLike(a, by)); }
  ValueId compare(const char* pred, ValueId a, ValueId b) {
    return emit(OpCode::cmp, {a, b}, {DType::boolean, type(a).shape}, {ir::makeAttr(ir::attr::pred, std::string(pred))});
  }
  ValueId select(ValueId c, ValueId a, ValueId b) { return emit(OpCode::select, {c, a, b}, type(a)); }
  ValueId cast(ValueId v, DType to) { return type(v).dtype == to ? v : emit(OpCode::cast, {v}, {to, type(v).shape}); }
  ValueId reshape(ValueId v, const ir::Shape& s) {
    return type(v).shape == s ? v : emit(OpCode::reshape, {v}, {type(v).dtype, s});
  }
  ValueId broadcast(ValueId v, const ir::Shape& s) {  // same rank, 1 where it grows
    return type(v).shape == s ? v : emit(OpCode::broadcast, {v}, {type(v).dtype, s});
  }
  ValueId splat(ValueId scalar, const ir::Shape& s) { return broadcast(reshape(scalar, ir::Shape(s.size(), 1)), s); }
  ValueId permute(ValueId v, const std::vector<int64_t>& perm) {
    ir::Shape s;
    for (int64_t p : perm) s.push_back(type(v).shape[static_cast<size_t>(p)]);
    return emit(OpCode::permute, {v}, {type(v).dtype, s}, {ir::makeAttr(ir::attr::perm, perm)});
  }
  ValueId reduceSum(ValueId v, int64_t axis) {
    ir::Shape s = type(v).shape;
    s.erase(s.begin() + axis);
    return emit(OpCode::reduce_sum, {v}, {type(v).dtype, s}, {ir::makeAttr(ir::attr::axis, axis)});
  }
  // v reduced along `axis`, spread back over it: [.., n, ..] from [.., ..].
  ValueId spread(ValueId reduced, const ir::Shape& full, int64_t axis) {
    ir::Shape kept = full;
    kept[static_cast<size_t>(axis)] = 1;
    return broadcast(reshape(reduced, kept), full);
  }

 private:
  ir::Kernel& k_;
};

std::vector<int64_t> inversePerm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

class Deriver {
 public:
  Deriver(const ir::Kernel& forward, const BackwardRequest& request)
      : f_(forward), request_(request), b_(out_), needs_(forward.types.size()) {}

  Backward run() {
    declareParams();
    markNeeds();
    chooseStoredFolds();
    planReads();
    b_.block = &out_.body;
    if (!stored_.empty()) programIndex_ = gridIndex(allAxes());
    for (const Backward::Copies& c : copies_) placeCopy(c);
    ValueMap primal, adjoint;
    replay(f_.body, primal);
    reverse(f_.body, primal, adjoint);
    Backward result{std::move(out_), saved_, std::nullopt, copies_};
    if (!stored_.empty()) result.tripCounts = tripCountKernel();
    return result;
  }

 private:
  // A top-level fold whose carried values are saved at every iteration (stored_[i]: element i
  // of the trip-count probe's tensor), and the saved tensors' parameters, one per carried value.
  struct StoredFold {
    const Op* fold;
    std::vector<int64_t> params;
  };

  // ---- The backward kernel's parameters.
  void declareParams() {
    out_.name = f_.name + "_backward";
    out_.tensors = f_.tensors;
    out_.scalars = f_.scalars;
    out_.gridRank = f_.gridRank;
    out_.warps = f_.warps;
    const std::vector<bool> written = ir::writtenTensors(f_);
    gradOut_.assign(f_.tensors.size(), -1);
    gradIn_.assign(f_.tensors.size(), -1);
    for (size_t t = 0; t < f_.tensors.size(); ++t)
      if (request_.outputs[t] && written[t]) {
        gradOut_[t] = static_cast<int64_t>(out_.tensors.size());
        out_.tensors.push_back({"d_" + f_.tensors[t].name, f_.tensors[t].dtype, f_.tensors[t].rank});
      }
    for (size_t t = 0; t < f_.tensors.size(); ++t)
      if (request_.inputs[t]) {
        gradIn_[t] = static_cast<int64_t>(out_.tensors.size());
        out_.tensors.push_back({"d_" + f_.tensors[t].name, f_.tensors[t].dtype, f_.tensors[t].rank});
      }
  }

  // ---- Which forward values a gradient flows through: float values computed from a read of
  // an input whose gradient is taken (to a fixed point: fold-carried values feed back).
  void markNeeds() {
    for (bool changed = true; changed;) {
      changed = false;
      auto mark = [&](ValueId v, bool on) {
        if (on && !needs_[static_cast<size_t>(v)] && differentiable(f_.type(v).dtype)) needs_[static_cast<size_t>(v)] = changed = true;
      };
      auto any = [&](const std::vector<ValueId>& vs) {
        return std::ranges::any_of(vs, [&](ValueId v) { return needs(v); });
      };
      ir::forEachOp(f_.body, [&](const Op& op) {
        if (op.code == OpCode::load || op.code == OpCode::gather) {
          mark(op.results[0], gradIn_[static_cast<size_t>(op.get(ir::attr::tensor))] >= 0);
        } else if (op.code == OpCode::fold) {
          const Block& body = op.regions[0];
          const Op& yield = body.ops.back();
          for (size_t i = 0; i < op.results.size(); ++i) {
            bool on = needs(op.operands[i + 2]) || needs(yield.operands[i]);
            mark(body.args[i + 1], on);
            mark(op.results[i], on);
          }
        } else {
          for (ValueId r : op.results) mark(r, any(op.operands));
        }
      });
    }
  }
  bool needs(ValueId v) const { return needs_[static_cast<size_t>(v)]; }

  // ---- How a read block's gradient reaches the input's. Take a tensor read once, by a load at
  // the top level or in folds only, whose offsets are one-to-one in the program ids and the
  // indices of the folds around it that they use: each offset a source times the block's size
  // along it (or a source, for a block of 1), a source being a program id, a fold's index, or a
  // program id's quotient and remainder by one number. No two (program, iteration) pairs that
  // agree on the other program ids then write one element, so the read stores its gradient:
  // into the input's gradient where its offsets use every grid axis (each program reads blocks
  // of its own), else into one copy of the input per combination of the unused axes' ids, which
  // a second kernel adds up (Backward::copies). Any other read adds its gradient with atomics.
  void planReads() {
    std::vector<int> reads(f_.tensors.size());
    ir::forEachOp(f_.body, [&](const Op& op) {
      if (ir::readsTensor(op.code)) ++reads[static_cast<size_t>(op.get(ir::attr::tensor))];
    });
    direct_.assign(f_.tensors.size(), false);
    copyParam_.assign(f_.tensors.size(), -1);
    copyRow_.assign(f_.tensors.size(), -1);
    copyRows_.assign(f_.tensors.size(), -1);
    planReadsIn(f_.body, {}, reads);
  }
  void planReadsIn(const Block& block, const std::vector<ValueId>& loops, const std::vector<int>& reads) {
    for (const Op& op : block.ops) {
      for (ValueId r : op.results) defs_[r] = &op;
      if (op.code == OpCode::fold) {
        std::vector<ValueId> inner = loops;
        inner.push_back(op.regions[0].args[0]);
        planReadsIn(op.regions[0], inner, reads);
      }
      if (op.code != OpCode::load) continue;
      const size_t t = static_cast<size_t>(op.get(ir::attr::tensor));
      if (reads[t] != 1 || gradIn_[t] < 0) continue;
      std::optional<std::vector<bool>> used = usedAxes(op, loops);
      if (!used) continue;
      std::vector<int64_t> unused;
      for (int64_t a = 0; a < f_.gridRank; ++a)
        if (!(*used)[static_cast<size_t>(a)]) unused.push_back(a);
      if (unused.empty()) {
        direct_[t] = true;
      } else if ((request_.atomicGradients.empty() || !request_.atomicGradients[t]) && f_.tensors[t].rank > 0) {
        const DType input = f_.tensors[t].dtype;
        const int64_t rows = f_.type(op.results[0]).shape[0];
        copyParam_[t] = static_cast<int64_t>(out_.tensors.size());
        copies_.push_back({static_cast<int>(t), input == DType::f64 ? input : DType::f32, unused, rows,
                           constantOf(op.operands[0]) == 0, !loops.empty()});
        out_.tensors.push_back({fmt::format("copies_{}", f_.tensors[t].name), copies_.back().dtype, f_.tensors[t].rank});
      }
    }
  }
  // The grid axes whose ids a load's offsets use, when the offsets are one-to-one (planReads).
  std::optional<std::vector<bool>> usedAxes(const Op& load, const std::vector<ValueId>& loops) const {
    const ir::Shape& block = f_.type(load.results[0]).shape;
    std::vector<bool> used(static_cast<size_t>(f_.gridRank));
    std::map<int64_t, std::pair<int64_t, int64_t>> split;  // axis -> (divisor, modulus) by which it is split, 0: none
    std::set<ValueId> indices;
    for (size_t d = 0; d < load.operands.size(); ++d) {
      ValueId x = load.operands[d];
      if (constantOf(x) == 0) continue;
      if (block[d] != 1) {  // x = source * block size
        const Op* m = def(x);
        if (!m || m->code != OpCode::mul) return std::nullopt;
        int side = constantOf(m->operands[1]) == block[d] ? 0 : constantOf(m->operands[0]) == block[d] ? 1 : -1;
        if (side < 0) return std::nullopt;
        x = m->operands[static_cast<size_t>(side)];
      }
      const Op* s = def(x);
      if (std::ranges::find(loops, x) != loops.end()) {
        indices.insert(x);
      } else if (s && s->code == OpCode::program_id) {
        used[static_cast<size_t>(s->get(ir::attr::axis))] = true;
      } else {
        const Op* id = s && (s->code == OpCode::div || s->code == OpCode::rem) ? def(s->operands[0]) : nullptr;
        std::optional<int64_t> by = id ? constantOf(s->operands[1]) : std::nullopt;
        if (!id || id->code != OpCode::program_id || !by || *by <= 0) return std::nullopt;
        auto& [divisor, modulus] = split[id->get(ir::attr::axis)];
        (s->code == OpCode::div ? divisor : modulus) = *by;
      }
    }
    if (indices.size() != loops.size()) return std::nullopt;  // a loop reading one block again
    for (const auto& [axis, by] : split) {  // a quotient or a remainder alone is not one-to-one
      if (!used[static_cast<size_t>(axis)] && by.first != by.second) return std::nullopt;
      used[static_cast<size_t>(axis)] = true;
    }
    return used;
  }
  const Op* def(ValueId v) const {
    auto it = defs_.find(v);
    return it == defs_.end() ? nullptr : it->second;
  }
  std::optional<int64_t> constantOf(ValueId v) const {
    const Op* d = def(v);
    if (!d || d->code != OpCode::constant || !f_.type(v).shape.empty() || isFloat(f_.type(v).dtype)) return std::nullopt;
    return static_cast<int64_t>(ir::asDouble(d->get(ir::attr::value)));
  }

  // ---- Saved carried values. A top-level fold whose carried values the reversed loop needs
  // (carriesLinearly false) writes them at each iteration into tensors [programs, trips,
  // elements] that the host sizes from the trip-count probe; they are read back in reverse.
  void chooseStoredFolds() {
    if (!request_.saveCarried) return;
    for (const Op& op : f_.body.ops) {
      if (op.code != OpCode::fold || carriesLinearly(op) || !reachesGradients(op)) continue;
      StoredFold f{&op, {}};
      for (size_t i = 0; i < op.results.size(); ++i) {
        const Type& t = f_.type(op.results[i]);
        f.params.push_back(static_cast<int64_t>(out_.tensors.size()));
        out_.tensors.push_back({fmt::format("saved{}_{}", stored_.size(), i), t.dtype, 3});
        saved_.push_back({static_cast<int>(stored_.size()), t.dtype, t.numel()});
      }
      stored_.push_back(std::move(f));
    }
  }
  bool reachesGradients(const Op& fold) const {
    return touchesGradients(fold) || std::ranges::any_of(fold.results, [&](ValueId r) { return needs(r); });
  }
  const StoredFold* storedFold(const Op& op) const {
    auto it = std::ranges::find_if(stored_, [&](const StoredFold& f) { return f.fold == &op; });
    return it == stored_.end() ? nullptr : &*it;
  }
  std::vector<int64_t> allAxes() const {
    std::vector<int64_t> axes(static_cast<size_t>(f_.gridRank));
    std::iota(axes.begin(), axes.end(), 0);
    return axes;
  }
  // The rows of c's input, and where the program's copy of it starts along its first axis.
  void placeCopy(const Backward::Copies& c) {
    const Type index{DType::i64, {}};
    ValueId rows = b_.emit(OpCode::tensor_dim, {}, index,
                           {ir::makeAttr(ir::attr::tensor, int64_t{c.input}), ir::makeAttr(ir::attr::axis, int64_t{0})});
    ValueId stride = c.fromRowZero ? b_.binary(OpCode::max, rows, b_.constant(index, static_cast<double>(c.blockRows)))
                                   : b_.binary(OpCode::add, rows, b_.constant(index, static_cast<double>(c.blockRows - 1)));
    copyRows_[static_cast<size_t>(c.input)] = rows;
    copyRow_[static_cast<size_t>(c.input)] = b_.binary(OpCode::mul, gridIndex(c.axes), stride);
  }
  // Emits what `then` emits inside an if on the rank-0 bool `cond`.
  void emitIf(ValueId cond, const std::function<void()>& then) {
    Op branch{OpCode::if_, {cond}, {}, {}, {}, b_.loc};
    Block* outer = b_.block;
    for (bool taken : {true, false}) {
      Block side;
      b_.block = &side;
      if (taken) then();
      b_.emitEffect(OpCode::yield, {}, {});
      branch.regions.push_back(std::move(side));
    }
    b_.block = outer;
    b_.append(std::move(branch));
  }
  // The row-major index of the program's ids on `axes` (not empty) in the grid's sizes on them.
  ValueId gridIndex(const std::vector<int64_t>& axes) {
    const Type index{DType::i64, {}};
    auto grid = [&](OpCode c, int64_t axis) { return b_.emit(c, {}, index, {ir::makeAttr(ir::attr::axis, axis)}); };
    ValueId id = grid(OpCode::program_id, axes[0]);
    for (size_t a = 1; a < axes.size(); ++a)
      id = b_.binary(OpCode::add, b_.binary(OpCode::mul, id, grid(OpCode::num_programs, axes[a])),
                     grid(OpCode::program_id, axes[a]));
    return id;
  }
  // The element offsets of carried value `i` of iteration `k` in its saved tensor, and its tile type there.
  std::vector<ValueId> savedOffsets(ValueId k, ValueId start) {
    return {programIndex_, b_.binary(OpCode::sub, k, start), b_.constantLike(k, 0)};
  }
  static Type savedType(const Type& t) { return {t.dtype, {1, 1, t.numel()}}; }
  // The probe: the forward's top-level values, then each stored fold's trip count into element
  // f of its one added tensor (i64) by atomic max.
  ir::Kernel tripCountKernel() {
    ir::Kernel probe;
    probe.name = f_.name + "_trip_counts";
    probe.tensors = f_.tensors;
    probe.tensors.push_back({"trips", DType::i64, 1});
    probe.scalars = f_.scalars;
    probe.gridRank = f_.gridRank;
    Builder b(probe);
    b.block = &probe.body;
    ValueMap primal;
    for (const Op& op : f_.body.ops) {
      // What a fold's bounds may come from: the ops before any region, and those after it that do not use one.
      if (ir::hasSideEffects(op.code) || !op.regions.empty() ||
          std::ranges::any_of(op.operands, [&](ValueId v) { return !primal.count(v); }))
        continue;
      b.loc = op.loc;
      Op copy{op.code, {}, {}, op.attrs, {}, op.loc};
      for (ValueId v : op.operands) copy.operands.push_back(lookup(primal, v));
      for (ValueId v : op.results) copy.results.push_back(primal[v] = b.newValue(f_.type(v)));
      b.append(std::move(copy));
    }
    for (size_t f = 0; f < stored_.size(); ++f) {
      const Op& fold = *stored_[f].fold;
      ValueId trips = b.binary(OpCode::sub, lookup(primal, fold.operands[1]), lookup(primal, fold.operands[0]));
      b.emit(OpCode::atomic, {b.constant({DType::i64, {}}, static_cast<double>(f)), trips}, {DType::i64, {}},
             {ir::makeAttr(ir::attr::tensor, static_cast<int64_t>(f_.tensors.size())),
              ir::makeAttr(ir::attr::fn, std::string("max"))});
    }
    return probe;
  }

  // ---- Replay: the forward's ops without its side effects, each value under a new id.
  void replay(const Block& block, ValueMap& primal) {
    for (const Op& op : block.ops) replayOp(op, primal);
  }
  void replayOp(const Op& op, ValueMap& primal) {
    switch (op.code) {
      case OpCode::store:
      case OpCode::scatter:
      case OpCode::print:
      case OpCode::check:
        return;
      case OpCode::atomic:
        notDerived(op, "an atomic update's result depends on the order programs run in");
      default:
        break;
    }
    b_.loc = op.loc;
    Op copy{op.code, {}, {}, op.attrs, {}, op.loc};
    for (ValueId v : op.operands) copy.operands.push_back(lookup(primal, v));
    const StoredFold* saving = storedFold(op);
    for (const Block& region : op.regions) {
      Block r;
      for (ValueId a : region.args) r.args.push_back(primal[a] = b_.newValue(f_.type(a)));
      Block* outer = b_.block;
      b_.block = &r;
      if (saving) {  // this iteration's carried values, before the body changes them
        std::vector<ValueId> at = savedOffsets(r.args[0], lookup(primal, op.operands[0]));
        for (size_t i = 0; i < saving->params.size(); ++i) {
          at.resize(3);
          at.push_back(b_.reshape(r.args[i + 1], savedType(f_.type(region.args[i + 1])).shape));
          b_.emitEffect(OpCode::store, at, {ir::makeAttr(ir::attr::tensor, saving->params[i])});
          b_.block->ops.back().internal = true;
        }
      }
      replay(region, primal);
      b_.block = outer;
      copy.regions.push_back(std::move(r));
    }
    for (ValueId v : op.results) copy.results.push_back(primal[v] = b_.newValue(f_.type(v)));
    b_.append(std::move(copy));
  }

  // ---- Reverse: each op's adjoint rule, last op first.
  void reverse(const Block& block, const ValueMap& primal, ValueMap& adjoint) {
    for (auto it = block.ops.rbegin(); it != block.ops.rend(); ++it) {
      b_.loc = it->loc;
      reverseOp(*it, primal, adjoint);
    }
  }

  // Adds g (of v's shape) to the adjoint of forward value v.
  void accumulate(ValueMap& adjoint, ValueId v, ValueId g) {
    if (!needs(v)) return;
    g = b_.cast(g, f_.type(v).dtype);
    auto [it, fresh] = adjoint.try_emplace(v, g);
    if (!fresh) it->second = b_.binary(OpCode::add, it->second, g);
  }

  void reverseOp(const Op& op, const ValueMap& primal, ValueMap& adjoint) {
    auto p = [&](size_t i) { return lookup(primal, op.operands[i]); };  // an operand's primal
    auto y = [&] { return lookup(primal, op.results[0]); };
    ValueId g = -1;
    if (!op.results.empty() && op.code != OpCode::fold) {
      auto it = adjoint.find(op.results[0]);
      if (it == adjoint.end()) {
        if (op.code != OpCode::if_ && op.code != OpCode::while_) return;  // no gradient reaches this op
      } else {
        g = it->second;
      }
    }
    // Operand i's gradient, built only when one flows into it (so a rule never asks for the
    // primal of an operand whose gradient it does not compute).
    auto give = [&](size_t i, const std::function<ValueId()>& contribution) {
      if (needs(op.operands[i])) accumulate(adjoint, op.operands[i], contribution());
    };
    switch (op.code) {
      case OpCode::store: {
        const size_t t = static_cast<size_t>(op.get(ir::attr::tensor));
        const ValueId value = op.operands.back();
        if (gradOut_[t] < 0 || !needs(value)) return;
        std::vector<ValueId> offsets;
        for (size_t i = 0; i + 1 < op.operands.size(); ++i) offsets.push_back(p(i));
        ValueId d = b_.emit(OpCode::load, offsets, {f_.tensors[t].dtype, f_.type(value).shape},
                            {ir::makeAttr(ir::attr::tensor, gradOut_[t]), ir::makeAttr(ir::attr::fill, ir::Number(0.0))});
        b_.block->ops.back().internal = true;
        accumulate(adjoint, value, d);
        return;
      }
      case OpCode::load: return addIntoInput(op, primal, g, /*coords=*/false);
      case OpCode::gather: return addIntoInput(op, primal, g, /*coords=*/true);
      case OpCode::neg: return give(0, [&] { return b_.unary(OpCode::neg, g); });
      case OpCode::abs: {
        ValueId zero = b_.constantLike(g, 0);
        ValueId sign = b_.select(b_.compare("gt", p(0), zero), g, b_.select(b_.compare("lt", p(0), zero),
                                                                           b_.unary(OpCode::neg, g), zero));
        return give(0, [&] { return sign; });
      }
      case OpCode::exp: return give(0, [&] { return b_.binary(OpCode::mul, g, y()); });
      case OpCode::exp2: return give(0, [&] { return b_.scale(b_.binary(OpCode::mul, g, y()), std::numbers::ln2); });
      case OpCode::log: return give(0, [&] { return b_.binary(OpCode::div, g, p(0)); });
      case OpCode::log2: return give(0, [&] { return b_.binary(OpCode::div, g, b_.scale(p(0), std::numbers::ln2)); });
      case OpCode::sqrt: return give(0, [&] { return b_.binary(OpCode::div, b_.scale(g, 0.5), y()); });
      case OpCode::rsqrt: {  // d/dx x^-1/2 = -y^3 / 2
        ValueId cube = b_.binary(OpCode::mul, b_.binary(OpCode::mul, y(), y()), y());
        return give(0, [&] { return b_.scale(b_.binary(OpCode::mul, g, cube), -0.5); });
      }
      case OpCode::sin: return give(0, [&] { return b_.binary(OpCode::mul, g, b_.unary(OpCode::cos, p(0))); });
      case OpCode::cos: return give(0, [&] { return b_.unary(OpCode::neg, b_.binary(OpCode::mul, g, b_.unary(OpCode::sin, p(0)))); });
      case OpCode::tanh: {
        ValueId one = b_.constantLike(g, 1);
        return give(0, [&] { return b_.binary(OpCode::mul, g, b_.binary(OpCode::sub, one, b_.binary(OpCode::mul, y(), y()))); });
      }
      case OpCode::sigmoid: {
        ValueId one = b_.constantLike(g, 1);
        return give(0, [&] { return b_.binary(OpCode::mul, b_.binary(OpCode::mul, g, y()), b_.binary(OpCode::sub, one, y())); });
      }
      case OpCode::erf: {  // 2 / sqrt(pi) * exp(-x^2)
        ValueId x = p(0);
        ValueId bell = b_.unary(OpCode::exp, b_.unary(OpCode::neg, b_.binary(OpCode::mul, x, x)));
        return give(0, [&] { return b_.scale(b_.binary(OpCode::mul, g, bell), 2 * std::numbers::inv_sqrtpi); });
      }
      case OpCode::relu:
        return give(0, [&] { return b_.select(b_.compare("gt", p(0), b_.constantLike(g, 0)), g, b_.constantLike(g, 0)); });
      case OpCode::floor:
      case OpCode::ceil:
        return;  // flat almost everywhere
      case OpCode::add: give(0, [&] { return g; }); return give(1, [&] { return g; });
      case OpCode::sub: give(0, [&] { return g; }); return give(1, [&] { return b_.unary(OpCode::neg, g); });
      case OpCode::mul:
        give(0, [&] { return b_.binary(OpCode::mul, g, p(1)); });
        return give(1, [&] { return b_.binary(OpCode::mul, g, p(0)); });
      case OpCode::fma:  // a * b + c
        give(0, [&] { return b_.binary(OpCode::mul, g, p(1)); });
        give(1, [&] { return b_.binary(OpCode::mul, g, p(0)); });
        return give(2, [&] { return g; });
      case OpCode::div:
        give(0, [&] { return b_.binary(OpCode::div, g, p(1)); });
        return give(1, [&] { return b_.unary(OpCode::neg, b_.binary(OpCode::div, b_.binary(OpCode::mul, g, y()), p(1))); });
      case OpCode::max:
      case OpCode::min: {  // to the operand that won; a tie goes to the first
        ValueId first = b_.compare(op.code == OpCode::max ? "ge" : "le", p(0), p(1)), zero = b_.constantLike(g, 0);
        give(0, [&] { return b_.select(first, g, zero); });
        return give(1, [&] { return b_.select(first, zero, g); });
      }
      case OpCode::rem:
        if (needs(op.operands[0]) || needs(op.operands[1])) notDerived(op, "the gradient of a float remainder is not derived");
        return;
      case OpCode::select: {
        ValueId zero = b_.constantLike(g, 0);
        give(1, [&] { return b_.select(p(0), g, zero); });
        return give(2, [&] { return b_.select(p(0), zero, g); });
      }
      case OpCode::cast: return give(0, [&] { return g; });  // accumulate casts to the operand's dtype
      case OpCode::broadcast: {
        const ir::Shape& from = f_.type(op.operands[0]).shape;
        ValueId sum = g;
        for (size_t d = from.size(); d-- > 0;)
          if (from[d] == 1 && b_.type(g).shape[d] != 1) sum = b_.reduceSum(sum, static_cast<int64_t>(d));
        return give(0, [&] { return b_.reshape(sum, from); });
      }
      case OpCode::reshape: return give(0, [&] { return b_.reshape(g, f_.type(op.operands[0]).shape); });
      case OpCode::permute: return give(0, [&] { return b_.permute(g, inversePerm(op.get(ir::attr::perm))); });
      case OpCode::reduce_sum:
        return give(0, [&] { return b_.spread(g, f_.type(op.operands[0]).shape, op.get(ir::attr::axis)); });
      case OpCode::reduce_max:
      case OpCode::reduce_min: {  // shared evenly by the elements that attain it, as torch.amax
        const ir::Shape& full = f_.type(op.operands[0]).shape;
        const int64_t axis = op.get(ir::attr::axis);
        ValueId hit = b_.compare("eq", p(0), b_.spread(y(), full, axis));
        ValueId ones = b_.cast(hit, b_.type(g).dtype);
        ValueId share = b_.binary(OpCode::div, g, b_.reduceSum(ones, axis));
        return give(0, [&] { return b_.select(hit, b_.spread(share, full, axis), b_.constantLike(ones, 0)); });
      }
      case OpCode::dot: return reverseDot(op, primal, g, adjoint);
      case OpCode::slice: return reverseSlice(op, g, adjoint);
      case OpCode::concat: {
        const int64_t axis = op.get(ir::attr::axis);
        int64_t start = 0;
        for (size_t i = 0; i < op.operands.size(); ++i) {
          const ir::Shape& s = f_.type(op.operands[i]).shape;
          give(i, [&] { return b_.emit(OpCode::slice, {g}, {b_.type(g).dtype, s},
                          {ir::makeAttr(ir::attr::axis, axis), ir::makeAttr(ir::attr::start, start)}); });
          start += s[static_cast<size_t>(axis)];
        }
        return;
      }
      case OpCode::fold: return reverseFold(op, primal, adjoint);
      case OpCode::if_:
      case OpCode::while_:
        if (std::ranges::any_of(op.results, [&](ValueId r) { return needs(r); }) || touchesGradients(op))
          notDerived(op, "branches and while loops that carry or write values with a gradient are not derived yet");
        return;
      case OpCode::scan:
      case OpCode::sort:
        notDerived(op, "scans and sorts are not derived yet");
      case OpCode::atomic:
      case OpCode::scatter:
        return;  // refused by the replay (atomic) or without a gradient (scatter into a tensor without one)
      case OpCode::program_id:
      case OpCode::num_programs:
      case OpCode::tensor_dim:
      case OpCode::constant:
      case OpCode::iota:
      case OpCode::scalar_param:
      case OpCode::logical_not:
      case OpCode::logical_and:
      case OpCode::logical_or:
      case OpCode::cmp:
      case OpCode::bit_xor:
      case OpCode::shl:
      case OpCode::shr:
      case OpCode::shru:
      case OpCode::argmax:
      case OpCode::argmin:
      case OpCode::histogram:
      case OpCode::yield:
      case OpCode::print:
      case OpCode::check:
        return;  // no float result a gradient flows through
    }
  }

  // Whether a region of `op` reads an input whose gradient is taken or writes an output with one.
  bool touchesGradients(const Op& op) const {
    bool touches = false;
    for (const Block& r : op.regions)
      ir::forEachOp(r, [&](const Op& inner) {
        if (!ir::readsTensor(inner.code) && !ir::writesTensor(inner.code)) return;
        const size_t t = static_cast<size_t>(inner.get(ir::attr::tensor));
        touches |= ir::readsTensor(inner.code) ? gradIn_[t] >= 0 : gradOut_[t] >= 0;
      });
    return touches;
  }

  // A read's gradient added into the input's: stored into it or into the program's copy of it
  // where no other program or iteration writes the block (planReads), else by atomic adds.
  void addIntoInput(const Op& op, const ValueMap& primal, ValueId g, bool coords) {
    const size_t t = static_cast<size_t>(op.get(ir::attr::tensor));
    if (gradIn_[t] < 0) return;
    const DType dtype = f_.tensors[t].dtype;
    const ir::Shape& shape = f_.type(op.results[0]).shape;
    g = b_.cast(g, dtype);
    std::vector<ValueId> operands;
    if (!coords && copyParam_[t] >= 0) {
      // A block meeting the input's rows: rows past either end land in padding rows, which the
      // sum leaves out; one outside them would land in another copy, so it writes nothing.
      for (ValueId v : op.operands) operands.push_back(lookup(primal, v));
      ValueId first = operands[0];
      ValueId meets = b_.binary(OpCode::logical_and,
                                b_.compare("gt", first, b_.constantLike(first, -static_cast<double>(shape[0]))),
                                b_.compare("lt", first, copyRows_[t]));
      operands[0] = b_.binary(OpCode::add, copyRow_[t], first);
      operands.push_back(b_.cast(g, out_.tensors[static_cast<size_t>(copyParam_[t])].dtype));
      emitIf(meets, [&] {
        b_.emitEffect(OpCode::store, operands, {ir::makeAttr(ir::attr::tensor, copyParam_[t])});
        b_.block->ops.back().internal = true;
      });
      return;
    }
    if (coords) {  // gather: its coordinates and mask as they are
      for (ValueId v : op.operands) operands.push_back(lookup(primal, v));
      operands.insert(operands.begin() + f_.tensors[t].rank, g);
    } else if (direct_[t]) {
      for (ValueId v : op.operands) operands.push_back(lookup(primal, v));
      operands.push_back(g);
      b_.emitEffect(OpCode::store, operands, {ir::makeAttr(ir::attr::tensor, gradIn_[t])});
      return;
    } else {  // a block: element coordinates offset + iota along each axis
      for (size_t d = 0; d < op.operands.size(); ++d) {
        ValueId along = b_.emit(OpCode::iota, {}, {DType::i32, shape}, {ir::makeAttr(ir::attr::axis, int64_t(d))});
        operands.push_back(b_.binary(OpCode::add, b_.splat(lookup(primal, op.operands[d]), shape),
                                     b_.cast(along, DType::i64)));
      }
      operands.push_back(g);
    }
    b_.emit(OpCode::atomic, operands, {dtype, shape},
            {ir::makeAttr(ir::attr::tensor, gradIn_[t]), ir::makeAttr(ir::attr::fn, std::string("add"))});
  }

  void reverseDot(const Op& op, const ValueMap& primal, ValueId g, ValueMap& adjoint) {
    // In the product's dtype: dA = dC . B^T, dB = A^T . dC, dAcc = dC.
    const DType work = b_.type(g).dtype;
    auto operand = [&](size_t i) { return b_.cast(lookup(primal, op.operands[i]), work); };
    auto product = [&](ValueId l, ValueId r) {
      ir::Shape s{b_.type(l).shape[0], b_.type(r).shape[1]};
      return b_.emit(OpCode::dot, {l, r}, {work, s});
    };
    if (needs(op.operands[0])) accumulate(adjoint, op.operands[0], product(g, b_.permute(operand(1), {1, 0})));
    if (needs(op.operands[1])) accumulate(adjoint, op.operands[1], product(b_.permute(operand(0), {1, 0}), g));
    if (op.operands.size() == 3) accumulate(adjoint, op.operands[2], g);
  }

  void reverseSlice(const Op& op, ValueId g, ValueMap& adjoint) {  // zeros around g
    const ir::Shape& full = f_.type(op.operands[0]).shape;
    const int64_t axis = op.get(ir::attr::axis), start = op.get(ir::attr::start);
    const int64_t size = b_.type(g).shape[static_cast<size_t>(axis)];
    std::vector<ValueId> parts;
    auto zeros = [&](int64_t n) {
      ir::Shape s = full;
      s[static_cast<size_t>(axis)] = n;
      parts.push_back(b_.constant({b_.type(g).dtype, s}, 0));
    };
    if (start > 0) zeros(start);
    parts.push_back(g);
    if (start + size < full[static_cast<size_t>(axis)]) zeros(full[static_cast<size_t>(axis)] - start - size);
    ValueId padded = parts.size() == 1 ? g : b_.emit(OpCode::concat, parts, {b_.type(g).dtype, full},
                                                     {ir::makeAttr(ir::attr::axis, axis)});
    accumulate(adjoint, op.operands[0], padded);
  }

  // ---- Folds. The reversed loop visits iteration k = end - 1, ..., start and recomputes that
  // iteration's values from k. Where the values that depend on the carried ones reach only ops
  // linear in them whose adjoints need none of them (sums, dot accumulators, scalings by values
  // of the iteration), nothing else is needed: O(n) iterations. Otherwise the carried values at
  // iteration k are recomputed by running the forward loop from start to k again: O(n^2 / 2)
  // iterations, no memory (storing them per iteration would need their count before the launch).
  bool carriesLinearly(const Op& fold) const {
    const Block& body = fold.regions[0];
    std::vector<bool> dependent(f_.types.size());
    for (size_t i = 1; i < body.args.size(); ++i) dependent[static_cast<size_t>(body.args[i])] = true;
    for (const Op& op : body.ops) {
      std::vector<size_t> from;
      for (size_t i = 0; i < op.operands.size(); ++i)
        if (dependent[static_cast<size_t>(op.operands[i])]) from.push_back(i);
      if (from.empty()) continue;
      if (!linearIn(op, from)) return false;
      for (ValueId r : op.results) dependent[static_cast<size_t>(r)] = true;
    }
    return true;
  }
  // Whether op's adjoint needs no primal of its operands at positions `from` (nor of its result).
  bool linearIn(const Op& op, const std::vector<size_t>& from) const {
    auto others = [&](std::initializer_list<size_t> positions) {  // those take no gradient
      for (size_t i : positions)
        if (std::ranges::find(from, i) == from.end() && needs(op.operands[i])) return false;
      return true;
    };
    auto only = [&](std::initializer_list<size_t> allowed) {
      return std::ranges::all_of(from, [&](size_t i) { return std::ranges::find(allowed, i) != allowed.end(); });
    };
    switch (op.code) {
      case OpCode::add:
      case OpCode::sub:
      case OpCode::neg:
      case OpCode::cast:
      case OpCode::broadcast:
      case OpCode::reshape:
      case OpCode::permute:
      case OpCode::reduce_sum:
      case OpCode::slice:
      case OpCode::concat:
      case OpCode::yield:
        return true;
      case OpCode::mul: return from.size() == 1 && others({0, 1});
      case OpCode::div: return only({0}) && others({1});
      case OpCode::select: return only({1, 2});
      case OpCode::fma: {  // linear in c, and in a or b while the other takes no gradient
        bool a = std::ranges::count(from, 0) > 0, b = std::ranges::count(from, 1) > 0;
        return !(a && b) && (!a || others({1})) && (!b || others({0}));
      }
      case OpCode::dot: return from.size() == 1 && (from[0] == 2 || others({0, 1}));
      default: return false;
    }
  }

  // Free values: defined outside the body, used inside (in nested regions too), with a gradient.
  std::vector<ValueId> freeValuesWithGradient(const Op& fold) const {
    std::vector<bool> inside(f_.types.size());
    std::vector<ValueId> free;
    auto defineAll = [&](const Block& b) {
      for (ValueId a : b.args) inside[static_cast<size_t>(a)] = true;
      ir::forEachOp(b, [&](const Op& op) {
        for (ValueId r : op.results) inside[static_cast<size_t>(r)] = true;
        for (const Block& r : op.regions)
          for (ValueId a : r.args) inside[static_cast<size_t>(a)] = true;
      });
    };
    defineAll(fold.regions[0]);
    ir::forEachOp(fold.regions[0], [&](const Op& op) {
      for (ValueId v : op.operands)
        if (!inside[static_cast<size_t>(v)] && needs(v) && std::ranges::find(free, v) == free.end()) free.push_back(v);
    });
    return free;
  }

  void reverseFold(const Op& fold, const ValueMap& primal, ValueMap& adjoint) {
    const Block& body = fold.regions[0];
    const size_t carried = fold.results.size();
    const bool carriesGradient = std::ranges::any_of(fold.results, [&](ValueId r) { return adjoint.count(r); });
    bool touches = touchesGradients(fold);
    if (!carriesGradient && !touches) return;
    const bool linear = carriesLinearly(fold);
    const std::vector<ValueId> free = freeValuesWithGradient(fold);

    // The reversed loop: j in [0, end - start), k = end - 1 - j; it carries the adjoints of the
    // carried values and of the free values.
    const ValueId start = lookup(primal, fold.operands[0]), end = lookup(primal, fold.operands[1]);
    Op reversed{OpCode::fold, {b_.constantLike(start, 0), b_.binary(OpCode::sub, end, start)}, {}, {}, {}, fold.loc};
    std::vector<ValueId> inits;
    for (size_t i = 0; i < carried; ++i) {
      auto it = adjoint.find(fold.results[i]);
      inits.push_back(it != adjoint.end() ? it->second : b_.constant(f_.type(fold.results[i]), 0));
    }
    for (ValueId v : free) inits.push_back(b_.constant(f_.type(v), 0));
    reversed.operands.insert(reversed.operands.end(), inits.begin(), inits.end());

    Block r;
    const ValueId j = b_.newValue(f_.type(body.args[0]));
    r.args.push_back(j);
    for (ValueId v : inits) r.args.push_back(b_.newValue(b_.type(v)));
    Block* outer = b_.block;
    b_.block = &r;
    ValueMap inner = primal, innerAdjoint;
    inner[body.args[0]] = b_.binary(OpCode::sub, b_.binary(OpCode::sub, end, b_.constantLike(end, 1)), j);
    const ValueId k = inner[body.args[0]];
    if (const StoredFold* saved = storedFold(fold)) {  // the carried values at iteration k, as saved
      const std::vector<ValueId> at = savedOffsets(k, start);
      for (size_t i = 0; i < carried; ++i) {
        const Type& t = f_.type(body.args[i + 1]);
        ValueId load = b_.emit(OpCode::load, at, savedType(t), {ir::makeAttr(ir::attr::tensor, saved->params[i]),
                                                                ir::makeAttr(ir::attr::fill, isFloat(t.dtype) ? ir::Number(0.0) : ir::Number(int64_t{0}))});
        inner[body.args[i + 1]] = b_.reshape(load, t.shape);
      }
    } else if (!linear) {  // the carried values at iteration k: the forward loop again, from start to k
      replayOp(fold, inner);
      b_.block->ops.back().operands[1] = k;
      inner[body.args[0]] = k;
      for (size_t i = 0; i < carried; ++i) inner[body.args[i + 1]] = inner.at(fold.results[i]);
    }
    // The iteration's values, recomputed (with linear carries, only those that do not depend on them).
    std::vector<bool> dependent(f_.types.size());
    const bool recomputeAll = !linear || storedFold(fold);
    for (size_t i = 1; i < body.args.size() && !recomputeAll; ++i) dependent[static_cast<size_t>(body.args[i])] = true;
    for (const Op& op : body.ops) {
      if (op.code == OpCode::yield) break;
      bool dep = std::ranges::any_of(op.operands, [&](ValueId v) { return dependent[static_cast<size_t>(v)]; });
      if (dep) {
        for (ValueId res : op.results) dependent[static_cast<size_t>(res)] = true;
      } else {
        replayOp(op, inner);
      }
    }
    // Adjoints: the yielded values' from the carried adjoints, the free values' carried along.
    const Op& yield = body.ops.back();
    for (size_t i = 0; i < carried; ++i) accumulate(innerAdjoint, yield.operands[i], r.args[i + 1]);
    for (size_t f = 0; f < free.size(); ++f) innerAdjoint[free[f]] = r.args[carried + 1 + f];
    for (auto it = body.ops.rbegin(); it != body.ops.rend(); ++it) {
      if (it->code == OpCode::yield) continue;
      b_.loc = it->loc;
      reverseOp(*it, inner, innerAdjoint);
    }
    Op next{OpCode::yield, {}, {}, {}, {}, fold.loc};
    for (size_t i = 0; i < carried; ++i) {
      auto it = innerAdjoint.find(body.args[i + 1]);
      next.operands.push_back(it != innerAdjoint.end() ? it->second : b_.constant(f_.type(body.args[i + 1]), 0));
    }
    for (ValueId v : free) next.operands.push_back(innerAdjoint.at(v));
    b_.append(std::move(next));
    b_.block = outer;
    b_.loc = fold.loc;
    for (ValueId v : inits) reversed.results.push_back(b_.newValue(b_.type(v)));
    reversed.regions.push_back(std::move(r));
    const std::vector<ValueId> results = reversed.results;
    b_.append(std::move(reversed));
    for (size_t i = 0; i < carried; ++i) accumulate(adjoint, fold.operands[i + 2], results[i]);
    for (size_t f = 0; f < free.size(); ++f) accumulate(adjoint, free[f], results[carried + f]);
  }

  const ir::Kernel& f_;
  const BackwardRequest& request_;
  ir::Kernel out_;
  Builder b_;
  std::vector<bool> needs_;                 // per forward value
  std::vector<int64_t> gradOut_, gradIn_;  // per forward tensor: its gradient's parameter, or -1
  // Per forward tensor (planReads): whether its read's gradient is stored into its gradient;
  // else its copies' parameter (or -1), the row where the program's copy starts and the input's rows.
  std::vector<bool> direct_;
  std::vector<int64_t> copyParam_;
  std::vector<ValueId> copyRow_, copyRows_;
  std::vector<Backward::Copies> copies_;
  std::unordered_map<ValueId, const Op*> defs_;  // the forward's values at the top level and in folds
  std::vector<StoredFold> stored_;
  std::vector<Backward::Saved> saved_;
  ValueId programIndex_ = -1;  // the program's row-major index in the grid
};

}  // namespace

Backward deriveBackward(const ir::Kernel& forward, const BackwardRequest& request) {
  Backward backward = Deriver(forward, request).run();
  if (spdlog::should_log(spdlog::level::debug))
    spdlog::debug("tilejit: derived the backward of {}\n{}", forward.name, ir::print(backward.kernel));
  return backward;
}

}  // namespace tj::grad
