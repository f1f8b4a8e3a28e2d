// Tile IR + layouts -> per-thread kernel IR, one tile-IR op at a time.
#include "lower/gpu/lower_to_kernel_ir.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "ir/divisibility.hpp"
#include "ir/error.hpp"

namespace tj::gpu {

using layout::LinearLayout;
using Basis = LinearLayout::Basis;
using Coord = std::vector<int64_t>;

namespace {

[[noreturn]] void unsupported(const ir::Op& op, const std::string& what) {
  throw Error("kernel ir: unsupported: " + std::string(ir::opName(op.code)) + " " + what);
}

Basis input(const LinearLayout& lin, const std::string& name, int64_t value) {
  std::vector<int64_t> inputs;
  for (const auto& in : lin.ins()) inputs.push_back(in.name == name ? value : 0);
  return lin.apply(inputs);
}
const std::vector<Basis>& bases(const LinearLayout& lin, const std::string& name) {
  static const std::vector<Basis> none;
  for (const auto& in : lin.ins())
    if (in.name == name) return in.bases;
  return none;
}
int64_t registerCount(const LinearLayout& lin) {
  for (const auto& in : lin.ins())
    if (in.name == layout::kRegister) return int64_t{1} << in.bases.size();
  return 1;
}

// A linear map of coordinates between two shapes (broadcast, reshape, permute).
using CoordMap = std::function<Coord(const Coord&)>;

std::string_view combineFn(ir::OpCode c) {
  if (c == ir::OpCode::reduce_sum) return "add";
  return c == ir::OpCode::reduce_max ? "max" : "min";
}

// Whether a printer may emit a loop for `f`: its fors and whiles, C's fmod for a float
// remainder, and the compare-exchange loops of float atomics. Nested ones sit inside a
// top-level loop.
bool hasLoops(const KernelFunction& f) {
  const KAttr floatRem{"fn", std::string("rem")};
  return std::ranges::any_of(f.body.insts, [&](const KInst& i) {
    bool floatResult = !i.results.empty() && isFloat(f.regTypes.at(size_t(i.results[0])));
    return i.op == KOp::for_loop || i.op == KOp::while_loop || (i.op == KOp::atomic_global && floatResult) ||
           (i.op == KOp::binary && floatResult && std::ranges::find(i.attrs, floatRem) != i.attrs.end());
  });
}

class Lowering {
 public:
  Lowering(const ir::Kernel& k, const layout::LayoutAssignment& a, const layout::Target& t, KernelLoweringOptions o)
      : k_(k), a_(a), t_(t), options_(o), b_(f_, o.maxInstructions) {
    f_.name = k.name;
    f_.target = t.name;
    f_.subgroupSize = t.subgroupSize;
    f_.workgroupSize = t.subgroupSize * t.warpsPerProgram;
    declareParams();
    ir::forEachOp(k.body, [&](const ir::Op& op) { for (ir::ValueId v : op.operands) ++uses_[v]; });
    divisors_ = ir::knownDivisors(k);
  }

  KernelFunction run() {
    block(k_.body);
    if (t_.loopIterationLimit > 0 && hasLoops(f_)) {
      f_.loopIterationLimit = t_.loopIterationLimit;
      f_.faultBuffer();
    }
    if (f_.sharedBytes() > t_.sharedBytes)
      throw SharedOverBudget("kernel ir: unsupported: " + std::to_string(f_.sharedBytes()) + " bytes of workgroup memory on " +
                                 t_.name + " (" + std::to_string(t_.sharedBytes) + " available)",
                             stagesUsed_);
    return std::move(f_);
  }
  struct SharedOverBudget : Error {
    SharedOverBudget(const std::string& what, int64_t stages) : Error(what), stages(stages) {}
    int64_t stages;  // the most stages a fold read ahead with
  };

 private:
  // ---- parameters: per tensor its buffer, sizes and strides; then the scalars ----
  void declareParams() {
    for (size_t t = 0; t < k_.tensors.size(); ++t) {
      std::string name = "t" + std::to_string(t);
      f_.params.push_back({KParam::Kind::buffer, name, k_.tensors[t].dtype, t});
      for (size_t d = 0; d < size_t(k_.tensors[t].rank); ++d)
        f_.params.push_back({KParam::Kind::size, name + ".size" + std::to_string(d), DType::i64, t, d});
      for (size_t d = 0; d < size_t(k_.tensors[t].rank); ++d)
        f_.params.push_back({KParam::Kind::stride, name + ".stride" + std::to_string(d), DType::i64, t, d});
    }
    for (size_t s = 0; s < k_.scalars.size(); ++s) f_.params.push_back({KParam::Kind::scalar, "s" + std::to_string(s), k_.scalars[s].dtype, s});
  }
  int64_t paramIndex(const std::string& name) const {
    for (size_t i = 0; i < f_.params.size(); ++i)
      if (f_.params[i].name == name) return static_cast<int64_t>(i);
    throw Error("kernel ir: no parameter " + name);
  }
  Reg param(const std::string& name) {
    int64_t i = paramIndex(name);
    return b_.emit(KOp::param, f_.params[size_t(i)].dtype, {}, {{"index", i}});
  }
  static std::string tensorName(int64_t tensor) { return std::string("t").append(std::to_string(tensor)); }
  Reg tensorParam(int64_t tensor, const char* what, int64_t axis) {
    return param(tensorName(tensor).append(".").append(what).append(std::to_string(axis)));
  }

  // ---- layouts and coordinates ----
  LinearLayout linear(const layout::Layout& l, ir::ValueId v) const { return layout::toLinear(l, k_.type(v).shape); }
  LinearLayout linear(ir::ValueId v) const { return linear(a_.of(v), v); }

  // Bits of a thread id (lane or warp) times their bases, XORed: the runtime part of a coordinate.
  Reg idBits(KOp id, const std::vector<Basis>& bs, size_t dim, Reg acc) {
    for (size_t i = 0; i < bs.size(); ++i) {
      if (bs[i][dim] == 0) continue;
      Reg shifted = b_.emit(id, DType::i32);
      if (i > 0) shifted = b_.binary("shr", shifted, b_.constant(DType::i32, double(i)));
      Reg term = b_.binary("and", shifted, b_.constant(DType::i32, 1));
      if (bs[i][dim] != 1) term = b_.binary("mul", term, b_.constant(DType::i32, double(bs[i][dim])));
      acc = acc < 0 ? term : b_.binary("xor", acc, term);
    }
    return acc;
  }
  // The i32 coordinates of register `reg` of this thread.
  std::vector<Reg> coords(const LinearLayout& lin, int64_t reg) {
    Basis fixed = input(lin, layout::kRegister, reg);
    std::vector<Reg> out;
    for (size_t d = 0; d < lin.outs().size(); ++d) {
      Reg dyn = idBits(KOp::warp_id, bases(lin, layout::kWarp), d, idBits(KOp::lane_id, bases(lin, layout::kLane), d, -1));
      Reg c = b_.constant(DType::i32, double(fixed[d]));
      out.push_back(dyn < 0 ? c : fixed[d] == 0 ? dyn : b_.binary("xor", dyn, c));
    }
    return out;
  }

  // The row-major position of a coordinate (i32 registers, at least one) in `shape`.
  Reg rowMajor(const std::vector<Reg>& at, const ir::Shape& shape) {
    Reg flat = at[0];
    for (size_t d = 1; d < at.size(); ++d)
      flat = b_.binary("add", b_.binary("mul", flat, b_.constant(DType::i32, double(shape[d]))), at[d]);
    return flat;
  }
  // A workgroup-memory slot for register r of a tile of `shape`: `at` (its coordinates, maybe
  // shifted) row-major in `space`, or the scratch slot past space's elements for padding.
  Reg slotOf(const LinearLayout& lin, int64_t r, const std::vector<Reg>& at, const ir::Shape& shape,
             const ir::Shape& space) {
    Reg flat = rowMajor(at, space), real = inside(lin, r, coords(lin, r), shape);
    return real < 0 ? flat : b_.select(real, flat, b_.constant(DType::i32, double(ir::Type{DType::i32, space}.numel())));
  }
  Reg firstThread() { return b_.cmp("eq", b_.emit(KOp::thread_id, DType::i32), b_.constant(DType::i32, 0)); }

  // ---- padding: a tile is laid out over its power-of-two padding (layout::paddedShape) ----
  // Whether register `reg`'s coordinate `c` on dimension d is inside `shape`: -1 when it
  // always is (d is a power of two or the register never reaches the padding), else a bool.
  Reg insideAlong(const LinearLayout& lin, int64_t reg, Reg c, size_t d, const ir::Shape& shape) {
    int64_t reach = input(lin, layout::kRegister, reg)[d];
    for (const std::string& id : {layout::kLane, layout::kWarp})
      for (const Basis& b : bases(lin, id)) reach |= b[d];
    if (reach < shape[d]) return -1;
    return b_.cmp("lt", c, b_.constant(DType::i32, double(shape[d])));
  }
  // Whether the register holds a real element (every dimension inside); -1 when it always does.
  Reg inside(const LinearLayout& lin, int64_t reg, const std::vector<Reg>& coord, const ir::Shape& shape) {
    Reg all = -1;
    for (size_t d = 0; d < shape.size(); ++d)
      if (Reg in = insideAlong(lin, reg, coord[d], d, shape); in >= 0) all = all < 0 ? in : b_.binary("and", all, in);
    return all;
  }
  // x where the register's coordinate c on dimension d is inside, padding() elsewhere.
  Reg maskAlong(const LinearLayout& lin, int64_t reg, Reg c, size_t d, const ir::Shape& shape, Reg x,
                const std::function<Reg()>& padding) {
    Reg in = insideAlong(lin, reg, c, d, shape);
    return in < 0 ? x : b_.select(in, x, padding());
  }

  // For each register of `to`, the register of `from` holding the element `map` sends it to;
  // lanes and warps must already agree (otherwise data moves between threads).
  std::vector<Reg> remap(const std::vector<Reg>& src, const LinearLayout& from, const LinearLayout& to,
                         const CoordMap& map, const ir::Op& op, const layout::Layout& toLayout) {
    for (const std::string& id : {layout::kLane, layout::kWarp})
      for (size_t i = 0; i < bases(to, id).size(); ++i)
        if (i >= bases(from, id).size() ? map(bases(to, id)[i]) != Coord(from.outs().size(), 0)
                                        : map(bases(to, id)[i]) != bases(from, id)[i])
          unsupported(op, "moving data between threads into " + layout::str(toLayout));
    std::map<Coord, Reg> byCoord;
    for (int64_t s = registerCount(from); s-- > 0;) byCoord[input(from, layout::kRegister, s)] = src.at(size_t(s));
    std::vector<Reg> out;
    for (int64_t r = 0; r < registerCount(to); ++r) {
      auto it = byCoord.find(map(input(to, layout::kRegister, r)));
      if (it == byCoord.end()) unsupported(op, "into " + layout::str(toLayout) + ": a register's element is elsewhere");
      out.push_back(it->second);
    }
    return out;
  }

  // ---- operands and conversions ----
  // How ldmatrix reads a layout's registers from workgroup memory (loadAt: register, lane,
  // warp -> element offset). Each 8x8 matrix is 8 rows of 16 bytes, each row's address given
  // by one lane; a lane receives pairs: a row's two neighbours (or, transposed, one column's
  // two neighbouring rows). So lanes 0-1 and one register bit must step within a row and
  // lanes 2-4 across rows (transposed: the reverse); every other bit moves whole rows.
  struct MatrixLoad {
    bool trans;
    int64_t pairBit;                  // the register bit of a pair's second element
    int64_t byteBit;                  // 8-bit elements: the register bit of a 16-bit element's high byte; else -1
    std::vector<int64_t> matrixBits;  // register bits choosing among the loaded matrices
    std::vector<Basis> rowOf;         // lane bit -> the offset of the row that lane supplies
  };
  // A tile stored in workgroup memory, each register of another layout read on demand.
  struct Staged {
    int64_t alloc;
    LinearLayout loadAt;  // register, lane, warp -> element offset
    std::optional<MatrixLoad> matrices;
    Reg base = -1;  // an element offset added to every load (a read-ahead ring's stage); -1: none
  };
  // An operand's registers: at hand, or loaded from where stageInShared put them.
  class Operand {
   public:
    Operand(Lowering& l, std::vector<Reg> regs) : l_(l), regs_(std::move(regs)) {}
    Operand(Lowering& l, Staged s) : l_(l), regs_(size_t(registerCount(s.loadAt)), -1), staged_(std::move(s)) {}
    Reg get(int64_t r) {
      if (regs_.at(size_t(r)) < 0) l_.loadStaged(*staged_, r, regs_);
      return regs_[size_t(r)];
    }
    std::vector<Reg> all() {
      for (int64_t r = 0; r < int64_t(regs_.size()); ++r) get(r);
      return regs_;
    }
    // Where its workgroup memory ends (bytes past the allocations' floor), 0 when it has none
    // there (a read-ahead ring lies below the floor).
    int64_t sharedEnd() const {
      if (!staged_ || staged_->base >= 0) return 0;
      const SharedAlloc& s = l_.f_.shared[size_t(staged_->alloc)];
      return s.offset + s.bytes - l_.sharedFloor_;
    }

   private:
    Lowering& l_;
    std::vector<Reg> regs_;  // -1 until loaded
    std::optional<Staged> staged_;
  };
  const layout::Conversion* conversionOf(const ir::Op& op, int i) const {
    for (const layout::Conversion& c : a_.conversions)
      if (c.user == &op && c.operand == i) return &c;
    return nullptr;
  }
  const layout::Layout& operandLayout(const ir::Op& op, int i) const {
    const layout::Conversion* c = conversionOf(op, i);
    return c ? *c->to : a_.of(op.operands[size_t(i)]);
  }
  std::vector<Reg> operand(const ir::Op& op, int i) { return lazyOperand(op, i, 0).all(); }
  // An operand in its user's layout. A conversion through workgroup memory (at byte
  // `sharedOffset`) stores at once and loads registers on demand, so a dot loads each
  // fragment just before the instructions that read it.
  Operand lazyOperand(const ir::Op& op, int i, int64_t sharedOffset) {
    ir::ValueId v = op.operands[size_t(i)];
    if (auto ahead = readAhead_.find(v); ahead != readAhead_.end()) return Operand(*this, ahead->second.staged);
    const layout::Conversion* c = conversionOf(op, i);
    const std::vector<Reg>& src = regs_.at(v);
    if (!c || c->kind == layout::ConversionKind::none) return Operand(*this, src);
    LinearLayout from = linear(*c->from, v), to = linear(*c->to, v);
    if (c->kind == layout::ConversionKind::register_permute)
      return Operand(*this, remap(src, from, to, [](const Coord& x) { return x; }, op, *c->to));
    if (c->kind == layout::ConversionKind::warp_shuffle)
      if (std::optional<std::vector<Reg>> moved = throughShuffles(src, from, to)) return Operand(*this, *moved);
    return Operand(*this, stageInShared(v, src, from, to, c->via ? layout::Layout{*c->via} : plainShared(v), sharedOffset));
  }

  // A conversion within warps as one shuffle per register: solves, over GF(2), which source
  // (register, lane) holds each destination bit's element. Only when the source register does
  // not depend on the lane and warps map alike; nullopt otherwise (the caller goes through memory).
  std::optional<std::vector<Reg>> throughShuffles(const std::vector<Reg>& src, const LinearLayout& from,
                                                  const LinearLayout& to) {
    const std::vector<std::string> ids = {layout::kRegister, layout::kLane, layout::kWarp};
    std::vector<std::string> present;  // those the source has: the others add no bits
    for (const std::string& id : ids)
      if (!bases(from, id).empty()) present.push_back(id);
    // Per destination bit: the source register, lane and warp bits whose bases XOR to its basis.
    auto solve = [&](const Basis& b) -> std::optional<std::array<int64_t, 3>> {
      std::optional<uint64_t> combo = from.combinationOf(present, b);
      if (!combo) return std::nullopt;
      std::array<int64_t, 3> parts{0, 0, 0};
      size_t column = 0;  // bit of the combination: the source's bases in ids order
      for (size_t id = 0; id < ids.size(); ++id)
        for (size_t i = 0; i < bases(from, ids[id]).size(); ++i, ++column)
          if (*combo >> column & 1) parts[id] ^= int64_t{1} << i;
      return parts;
    };
    std::vector<std::array<int64_t, 3>> regBits, laneBits;
    for (const Basis& b : bases(to, layout::kRegister)) regBits.push_back(solve(b).value_or(std::array<int64_t, 3>{-1, 0, 0}));
    for (const Basis& b : bases(to, layout::kLane)) laneBits.push_back(solve(b).value_or(std::array<int64_t, 3>{-1, 0, 0}));
    for (const auto& p : regBits) if (p[0] < 0 || p[2] != 0) return std::nullopt;
    for (const auto& p : laneBits) if (p[0] < 0 || p[2] != 0) return std::nullopt;
    for (size_t i = 0; i < bases(to, layout::kWarp).size(); ++i) {
      auto p = solve(bases(to, layout::kWarp)[i]);
      if (!p || (*p)[0] != 0 || (*p)[1] != 0 || (*p)[2] != (int64_t{1} << i)) return std::nullopt;
    }
    // This lane's bits -> the source lane, and -> the source register offset (when the register
    // depends on the lane, every lane reads each candidate register and selects its own).
    std::vector<Basis> laneMap, regMap;
    std::set<int64_t> offsets = {0};
    for (const auto& p : laneBits) {
      laneMap.push_back({p[1]});
      regMap.push_back({p[0]});
      for (int64_t o : std::set<int64_t>(offsets)) offsets.insert(o ^ p[0]);
    }
    if (int64_t(offsets.size()) > options_.maxShuffleCandidates) return std::nullopt;
    Reg regOffset = offsets.size() > 1 ? idBits(KOp::lane_id, regMap, 0, -1) : -1;
    std::vector<Reg> out;
    for (int64_t r = 0; r < registerCount(to); ++r) {
      int64_t base = 0, srcLane = 0;
      for (size_t i = 0; i < regBits.size(); ++i)
        if (r >> i & 1) base ^= regBits[i][0], srcLane ^= regBits[i][1];
      Reg lane = idBits(KOp::lane_id, laneMap, 0, -1);
      Reg c = b_.constant(DType::i32, double(srcLane));
      lane = lane < 0 ? c : srcLane == 0 ? lane : b_.binary("xor", lane, c);
      Reg value = -1;
      for (int64_t o : offsets) {
        Reg x = src.at(size_t(base ^ o));
        Reg moved = b_.emit(KOp::shuffle_idx, b_.type(x), {x, lane});
        Reg mine = value < 0 ? -1 : b_.cmp("eq", regOffset, b_.constant(DType::i32, double(o)));
        value = value < 0 ? moved : b_.select(mine, moved, value);
      }
      out.push_back(value);
    }
    return out;
  }
  layout::Layout plainShared(ir::ValueId v) const {
    return layout::Layout{layout::Shared{1, 1, 1, layout::rowMajorOrder(k_.type(v).shape.size())}};
  }

  // Stores every register at its (swizzled) offset (from `offset` bytes on); loads come later.
  Staged stageInShared(ir::ValueId v, const std::vector<Reg>& src, const LinearLayout& from, const LinearLayout& to,
                       const layout::Layout& mem, int64_t offset) {
    std::optional<LinearLayout> offsetOf = layout::toLinear(mem, k_.type(v).shape).invert();
    if (!offsetOf) throw Error("kernel ir: unsupported: a non-invertible workgroup-memory layout " + layout::str(mem));
    DType dt = k_.type(v).dtype;
    int64_t alloc = allocShared(paddedNumel(v) * dtypeBytes(dt), dt, layout::str(mem), offset);
    LinearLayout storeAt = offsetOf->compose(from), loadAt = offsetOf->compose(to);
    b_.effect(KOp::barrier);  // earlier readers of the aliased buffer are done
    int64_t vec = sharedVectorWidth(storeAt, dt, alloc);
    for (int64_t r = 0; r < registerCount(from); r += vec) {
      std::vector<Reg> operands = {coords(storeAt, r)[0]};
      operands.insert(operands.end(), src.begin() + r, src.begin() + r + vec);
      b_.effect(KOp::store_shared, operands, {{"alloc", alloc}});
    }
    b_.effect(KOp::barrier);
    return {alloc, loadAt, matrixLoad(loadAt, dt, alloc)};
  }
  // How many registers one store to workgroup memory writes (at offsets `at`: register, lane,
  // warp -> element): up to the target's widest access, where the lowest register bits step
  // 1, 2, 4... elements and every other bit keeps the vector aligned.
  int64_t sharedVectorWidth(const LinearLayout& at, DType dt, int64_t alloc) const {
    if (t_.vectorBytes == 0 || f_.shared[size_t(alloc)].offset % t_.vectorBytes != 0) return 1;
    int64_t vec = runAlong(at, 0, t_.vectorBytes / dtypeBytes(dt));
    const std::vector<Basis>& regs = bases(at, layout::kRegister);
    auto aligned = [&](const Basis& b) { return b[0] % vec == 0; };
    bool others = std::all_of(regs.begin() + std::countr_zero(uint64_t(vec)), regs.end(), aligned) &&
                  std::ranges::all_of(bases(at, layout::kLane), aligned) && std::ranges::all_of(bases(at, layout::kWarp), aligned);
    return others ? vec : 1;
  }
  // How many elements (a power of two up to `most`) the lowest register bits of `lin` step
  // through consecutively along `axis`: bit i must move 2^i along it and nowhere else.
  static int64_t runAlong(const LinearLayout& lin, size_t axis, int64_t most) {
    const std::vector<Basis>& regs = bases(lin, layout::kRegister);
    int64_t vec = 1;
    for (size_t bit = 0; vec < most && bit < regs.size(); ++bit, vec *= 2) {
      Basis step(lin.outs().size(), 0);
      step[axis] = vec;
      if (regs[bit] != step) break;
    }
    return vec;
  }
  // Loads register r of a staged tile (with the others of its ldmatrix) into `regs`.
  void loadStaged(const Staged& s, int64_t r, std::vector<Reg>& regs) {
    if (s.matrices) return loadMatrices(*s.matrices, s, r, regs);
    DType dt = f_.shared[size_t(s.alloc)].dtype;
    regs.at(size_t(r)) = b_.emit(KOp::load_shared, dt, {plus(coords(s.loadAt, r)[0], s.base)}, {{"alloc", s.alloc}});
  }
  Reg plus(Reg a, Reg b) { return b < 0 ? a : b_.binary("add", a, b); }

  std::optional<MatrixLoad> matrixLoad(const LinearLayout& loadAt, DType dt, int64_t alloc) const {
    int64_t width = dtypeBytes(dt);
    if (!t_.ldmatrix || (width != 1 && width != 2) || f_.shared[size_t(alloc)].offset % 16 != 0) return std::nullopt;
    auto offsets = [&](const std::string& id) {
      std::vector<int64_t> o;
      for (const Basis& b : bases(loadAt, id)) o.push_back(b[0]);
      return o;
    };
    std::vector<int64_t> reg = offsets(layout::kRegister), lane = offsets(layout::kLane);
    // 8-bit elements go two to a 16-bit one: a register bit must step to the next byte, and
    // ldmatrix cannot transpose within the pairs.
    int64_t byteBit = width == 1 ? std::ranges::find(reg, 1) - reg.begin() : -1;
    if (byteBit == int64_t(reg.size())) return std::nullopt;
    auto halves = [&](int64_t o) { return width == 1 ? (o % 2 == 0 ? o / 2 : -1) : o; };  // in 16-bit elements
    auto wholeRows = [&](int64_t o) { return halves(o) >= 0 && halves(o) % 8 == 0; };
    if (lane.size() != 5 || !std::ranges::all_of(offsets(layout::kWarp), wholeRows)) return std::nullopt;
    for (bool trans : {false, true}) {
      if (trans && width == 1) break;
      bool lanesFit = trans ? halves(lane[2]) == 1 && halves(lane[3]) == 2 && halves(lane[4]) == 4 && wholeRows(lane[0]) &&
                                  wholeRows(lane[1])
                            : halves(lane[0]) == 2 && halves(lane[1]) == 4 && wholeRows(lane[2]) && wholeRows(lane[3]) &&
                                  wholeRows(lane[4]);
      int64_t pair = -1;
      for (int64_t bit = 0; bit < int64_t(reg.size()) && pair < 0; ++bit)
        if (bit != byteBit && (trans ? wholeRows(reg[size_t(bit)]) : halves(reg[size_t(bit)]) == 1)) pair = bit;
      if (!lanesFit || pair < 0) continue;
      MatrixLoad m{trans, pair, byteBit, {}, {}};
      bool rowsFit = true;
      for (int64_t bit = 0; bit < int64_t(reg.size()); ++bit) {
        if (bit == m.pairBit || bit == byteBit) continue;
        rowsFit = rowsFit && wholeRows(reg[size_t(bit)]);
        if (m.matrixBits.size() < 2) m.matrixBits.push_back(bit);
      }
      if (!rowsFit) continue;
      // Lane l supplies row l % 8 of matrix l / 8.
      std::vector<int64_t> rowLanes = trans ? std::vector<int64_t>{reg[size_t(m.pairBit)], lane[0], lane[1]}
                                            : std::vector<int64_t>{lane[2], lane[3], lane[4]};
      for (int64_t bit : m.matrixBits) rowLanes.push_back(reg[size_t(bit)]);
      for (int64_t o : rowLanes) m.rowOf.push_back({o});
      return m;
    }
    return std::nullopt;
  }
  // The ldmatrix that reads register r with the others its pair and matrix bits span, into `out`.
  void loadMatrices(const MatrixLoad& m, const Staged& s, int64_t r, std::vector<Reg>& out) {
    const LinearLayout& loadAt = s.loadAt;
    int64_t alloc = s.alloc;
    int64_t spanned = int64_t{1} << m.pairBit, num = int64_t{1} << m.matrixBits.size();
    for (int64_t bit : m.matrixBits) spanned |= int64_t{1} << bit;
    if (m.byteBit >= 0) spanned |= int64_t{1} << m.byteBit;
    int64_t first = r & ~spanned;
    Reg rows = idBits(KOp::warp_id, bases(loadAt, layout::kWarp), 0, idBits(KOp::lane_id, m.rowOf, 0, -1));
    Reg at = b_.constant(DType::i32, double(input(loadAt, layout::kRegister, first)[0]));
    at = plus(rows < 0 ? at : b_.binary("xor", rows, at), s.base);
    DType dt = f_.shared[size_t(alloc)].dtype;
    int64_t perWord = 4 / dtypeBytes(dt);  // elements per 32-bit result register
    std::vector<Reg> loaded = b_.emitMulti(KOp::ldmatrix, std::vector<DType>(size_t(perWord * num), dt), {at},
                                           {{"alloc", alloc}, {"num", num}, {"trans", int64_t{m.trans}}});
    for (int64_t e = 0; e < int64_t(loaded.size()); ++e) {  // word j's pair element, then byte
      int64_t x = first, j = e / perWord, inWord = e % perWord;
      for (size_t b = 0; b < m.matrixBits.size(); ++b)
        if (j >> b & 1) x |= int64_t{1} << m.matrixBits[b];
      if (inWord / (perWord / 2)) x |= int64_t{1} << m.pairBit;
      if (perWord == 4 && inWord % 2) x |= int64_t{1} << m.byteBit;
      out.at(size_t(x)) = loaded[size_t(e)];
    }
  }
  static int64_t alignTo16(int64_t bytes) { return (bytes + 15) / 16 * 16; }
  int64_t paddedNumel(ir::ValueId v) const {
    int64_t n = 1;
    for (int64_t d : layout::paddedShape(k_.type(v).shape)) n *= d;
    return n;
  }
  // `offset` bytes above the floor: below it lie the read-ahead rings of the folds being lowered.
  int64_t allocShared(int64_t bytes, DType dt, std::string what, int64_t offset = 0) {
    f_.shared.push_back({sharedFloor_ + offset, bytes, dt, std::move(what)});
    return static_cast<int64_t>(f_.shared.size() - 1);
  }
  // Allocations live together (each step reads them all): `elements` of each dtype, one after another.
  std::vector<int64_t> allocSharedTogether(const std::vector<DType>& types, int64_t elements, const std::string& what) {
    std::vector<int64_t> allocs;
    for (int64_t offset = 0; DType dt : types) {
      allocs.push_back(allocShared(alignTo16(elements * dtypeBytes(dt)), dt, what, offset));
      offset += f_.shared.back().bytes;
    }
    return allocs;
  }

  // ---- ops ----
  void block(const ir::Block& b) {
    for (const ir::Op& op : b.ops) {
      try {
        lower(op);
      } catch (const KBuilder::OverBudget& e) {
        std::string tile = op.results.empty() ? "" : "of " + k_.type(op.results[0]).str() + " ";
        std::string where = op.loc.known() ? "at " + op.loc.str() + " " : "";
        throw CodeOverBudget("kernel ir: unsupported: " + std::string(ir::opName(op.code)) + " " + tile + where +
                             "takes the kernel past " + e.what() + " on " + std::to_string(f_.workgroupSize) +
                             " threads, the budget that bounds the driver's compile time; use smaller blocks, or "
                             "p.fold over them");
      }
    }
  }
  void define(ir::ValueId v, std::vector<Reg> r) { regs_[v] = std::move(r); }
  DType dtypeOf(ir::ValueId v) const { return k_.type(v).dtype; }
  int64_t countOf(ir::ValueId v) const { return registerCount(linear(v)); }

  void lower(const ir::Op& op) {
    using ir::OpCode;
    ir::ValueId res = op.results.empty() ? -1 : op.results[0];
    if (res >= 0) producers_[res] = &op;
    if (readAheadViews_.count(res)) return;  // its copies run ahead; the dot reads the ring
    switch (op.code) {
      case OpCode::program_id: return define(res, {b_.emit(KOp::workgroup_id, DType::i64, {}, {{"axis", op.intAttr("axis")}})});
      case OpCode::num_programs: return define(res, {b_.emit(KOp::workgroup_count, DType::i64, {}, {{"axis", op.intAttr("axis")}})});
      case OpCode::tensor_dim: return define(res, {tensorParam(op.intAttr("tensor"), "size", op.intAttr("axis"))});
      case OpCode::scalar_param: return define(res, {param("s" + std::to_string(op.intAttr("index")))});
      case OpCode::constant: return define(res, std::vector<Reg>(size_t(countOf(res)), constantOf(op, dtypeOf(res))));
      case OpCode::iota: return iota(op);
      case OpCode::broadcast: case OpCode::reshape: case OpCode::permute: return reshape(op);
      case OpCode::reduce_sum: case OpCode::reduce_max: case OpCode::reduce_min:
      case OpCode::argmax: case OpCode::argmin: return reduce(op);
      case OpCode::dot: return dot(op);
      case OpCode::load: return load(op);
      case OpCode::store: return store(op);
      case OpCode::gather: return gather(op);
      case OpCode::scatter: return scatter(op);
      case OpCode::atomic: return atomic(op);
      case OpCode::check: return check(op);
      case OpCode::scan: return scan(op);
      case OpCode::slice: return moveThroughMemory(op, k_.type(op.operands[0]).shape, {0}, op.intAttr("start"));
      case OpCode::concat: return concat(op);
      case OpCode::sort: return sort(op);
      case OpCode::histogram: return histogram(op);
      case OpCode::fold: return fold(op);
      case OpCode::while_: return whileLoop(op);
      case OpCode::if_: return branch(op);
      case OpCode::print: return print(op);
      case OpCode::yield: return yield(op);
      default: break;
    }
    if (ir::isUnaryElementwise(op.code) || ir::isBinaryElementwise(op.code) || op.code == OpCode::select ||
        op.code == OpCode::cast)
      return elementwise(op);
    unsupported(op, "with layout " + (res >= 0 ? layout::str(a_.of(res)) : std::string("none")));
  }

  bool isNonzeroConstant(ir::ValueId v) const {
    auto it = producers_.find(v);
    if (it == producers_.end() || it->second->code != ir::OpCode::constant) return false;
    return it->second->floatAttr("value") != 0;
  }

  Reg constantOf(const ir::Op& op, DType t) { return b_.constant(t, *op.attr("value")); }

  void iota(const ir::Op& op) {
    LinearLayout lin = linear(op.results[0]);
    std::vector<Reg> out;
    for (int64_t r = 0; r < registerCount(lin); ++r) out.push_back(coords(lin, r).at(size_t(op.intAttr("axis"))));
    define(op.results[0], out);
  }

  void elementwise(const ir::Op& op) {
    std::vector<std::vector<Reg>> ins = operands(op);
    DType t = dtypeOf(op.results[0]);
    std::string fn(ir::opName(op.code));
    bool checked = (op.code == ir::OpCode::div || op.code == ir::OpCode::rem) && !isFloat(t) && !isNonzeroConstant(op.operands[1]);
    std::vector<Reg> out;
    for (size_t r = 0; r < ins[0].size(); ++r) {
      std::vector<Reg> args;
      for (const auto& in : ins) args.push_back(in.at(r));
      if (checked) checkDivisor(linear(op.results[0]), int64_t(r), args[1], k_.type(op.results[0]).shape);
      if (op.code == ir::OpCode::cmp) out.push_back(b_.emit(KOp::cmp, t, args, {{"pred", op.stringAttr("pred")}}));
      else if (op.code == ir::OpCode::select) out.push_back(b_.emit(KOp::select, t, args));
      else if (op.code == ir::OpCode::cast) out.push_back(b_.emit(KOp::cast, t, args));
      else out.push_back(b_.emit(args.size() == 1 ? KOp::unary : KOp::binary, t, args, {{"fn", fn}}));
    }
    define(op.results[0], out);
  }

  // broadcast, permute and reshapes of unit dimensions move no data when the layouts agree:
  // a renaming of registers. Other reshapes move elements between threads.
  void reshape(const ir::Op& op) {
    std::optional<CoordMap> map = viewMap(op);
    if (!map) return reshapeThroughMemory(op);
    LinearLayout src = layout::toLinear(operandLayout(op, 0), k_.type(op.operands[0]).shape);
    define(op.results[0], remap(operand(op, 0), src, linear(op.results[0]), *map, op, a_.of(op.results[0])));
  }
  // Where a broadcast, permute or reshape finds each result coordinate in its operand; nullopt
  // for a reshape that moves elements (one that is not only adding or dropping unit dimensions).
  std::optional<CoordMap> viewMap(const ir::Op& op) const {
    const ir::Shape &from = k_.type(op.operands[0]).shape, &to = k_.type(op.results[0]).shape;
    if (op.code == ir::OpCode::broadcast)
      return [from](Coord c) { for (size_t d = 0; d < c.size(); ++d) if (from[d] == 1) c[d] = 0; return c; };
    if (op.code == ir::OpCode::permute) {
      std::vector<int64_t> perm = op.intsAttr("perm");
      return [perm](const Coord& c) { Coord s(c.size()); for (size_t i = 0; i < c.size(); ++i) s[size_t(perm[i])] = c[i]; return s; };
    }
    if (op.code != ir::OpCode::reshape || layout::nonUnitDims(from) != layout::nonUnitDims(to)) return std::nullopt;
    std::vector<size_t> fromDims = sizedDims(from), toDims = sizedDims(to);  // also right on padding coordinates
    return [=](const Coord& c) {
      Coord s(from.size(), 0);
      for (size_t i = 0; i < toDims.size(); ++i) s[fromDims[i]] = c[toDims[i]];
      return s;
    };
  }
  // The dimensions of `shape` that are not 1, in order.
  static std::vector<size_t> sizedDims(const ir::Shape& shape) {
    std::vector<size_t> dims;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] != 1) dims.push_back(d);
    return dims;
  }
  // A reshape whose elements change threads: each real element goes to workgroup memory at
  // its row-major position and comes back in the result's layout. Padding elements all
  // store to (and load from) one scratch slot past the real ones; nothing reads it for a value.
  void reshapeThroughMemory(const ir::Op& op) {
    ir::ValueId x = op.operands[0], res = op.results[0];
    DType dt = dtypeOf(x);
    int64_t n = k_.type(x).numel();
    int64_t alloc = allocShared((n + 1) * dtypeBytes(dt), dt, "row-major, then a scratch slot for padding");
    auto position = [&](const LinearLayout& lin, int64_t r, const ir::Shape& shape) {
      return slotOf(lin, r, coords(lin, r), shape, shape);
    };
    LinearLayout src = linear(x), dst = linear(res);
    b_.effect(KOp::barrier);  // earlier readers of the aliased buffer are done
    for (int64_t r = 0; r < registerCount(src); ++r)
      b_.effect(KOp::store_shared, {position(src, r, k_.type(x).shape), regs_.at(x).at(size_t(r))}, {{"alloc", alloc}});
    b_.effect(KOp::barrier);
    std::vector<Reg> out;
    for (int64_t r = 0; r < registerCount(dst); ++r)
      out.push_back(b_.emit(KOp::load_shared, dt, {position(dst, r, k_.type(res).shape)}, {{"alloc", alloc}}));
    define(res, out);
  }

  // ---- reductions: registers, then lanes (shuffles), then warps (workgroup memory) ----
  static bool mixes(const Basis& b, size_t axis) {
    bool along = b[axis] != 0, across = false;
    for (size_t d = 0; d < b.size(); ++d) across |= d != axis && b[d] != 0;
    return along && across;
  }
  static bool isArg(ir::OpCode c) { return c == ir::OpCode::argmax || c == ir::OpCode::argmin; }

  // A partial reduction: its value and, for argmax/argmin, the index it came from.
  struct Partial {
    Reg value, index = -1;
  };

  void reduce(const ir::Op& op) {
    size_t axis = size_t(op.intAttr("axis"));
    const ir::Shape& shape = k_.type(op.operands[0]).shape;
    LinearLayout src = layout::toLinear(operandLayout(op, 0), shape);
    for (const auto& in : src.ins())
      for (const Basis& b : in.bases)
        if (mixes(b, axis)) unsupported(op, "over " + layout::str(operandLayout(op, 0)) + ": a bit mixes the reduced axis");
    std::vector<Reg> in = operand(op, 0);
    std::map<Coord, Partial> groups;  // the register coordinate with the axis zeroed -> partial result
    for (int64_t r = 0; r < registerCount(src); ++r) {
      Coord key = input(src, layout::kRegister, r);
      key[axis] = 0;
      Partial x = element(op, src, r, in.at(size_t(r)), shape);
      auto [it, fresh] = groups.emplace(key, x);
      if (!fresh) it->second = combine(op.code, it->second, x);
    }
    for (auto& [key, partial] : groups) partial = acrossLanes(op.code, partial, bases(src, layout::kLane), axis);
    acrossWarps(op.code, groups, bases(src, layout::kWarp), axis);
    std::vector<Reg> out;
    LinearLayout dst = linear(op.results[0]);
    for (int64_t r = 0; r < registerCount(dst); ++r) {
      Coord key = input(dst, layout::kRegister, r);
      key.insert(key.begin() + std::ptrdiff_t(axis), 0);
      const Partial& p = groups.at(key);
      out.push_back(isArg(op.code) ? p.index : p.value);
    }
    define(op.results[0], out);
  }
  // Register r of the reduced operand as a partial: padding along the axis becomes the
  // identity (with an index past every real one); bools compare as i32.
  Partial element(const ir::Op& op, const LinearLayout& src, int64_t r, Reg x, const ir::Shape& shape) {
    size_t axis = size_t(op.intAttr("axis"));
    if (isArg(op.code) && b_.type(x) == DType::boolean) x = b_.emit(KOp::cast, DType::i32, {x});
    Reg at = coords(src, r)[axis];
    Reg value = maskAlong(src, r, at, axis, shape, x, [&] { return identity(op.code, b_.type(x)); });
    if (!isArg(op.code)) return {value};
    Reg index = maskAlong(src, r, at, axis, shape, at, [&] { return b_.constant(DType::i32, double(shape[axis])); });
    return {value, index};
  }
  Reg identity(ir::OpCode code, DType t) {
    bool isMax = code == ir::OpCode::reduce_max || code == ir::OpCode::argmax;
    if (code == ir::OpCode::reduce_sum) return b_.constant(t, isFloat(t) ? -0.0 : 0.0);
    if (isFloat(t)) return b_.constant(t, isMax ? -INFINITY : INFINITY);
    if (t == DType::boolean) return b_.constant(t, isMax ? 0.0 : 1.0);
    if (isUnsigned(t)) return b_.constant(t, isMax ? 0.0 : -1.0);  // -1: all ones
    Reg lowest = b_.constant(t, -std::ldexp(1.0, int(dtypeBytes(t)) * 8 - 1));
    return isMax ? lowest : b_.binary("xor", lowest, b_.constant(t, -1.0));  // the largest: ~lowest
  }
  // a and b combined; for argmax/argmin as the interpreter's scan (the first NaN, else the
  // first best), so the result does not depend on the order partials meet in.
  Partial combine(ir::OpCode code, const Partial& a, const Partial& b) {
    if (!isArg(code)) return {b_.binary(combineFn(code), a.value, b.value)};
    Reg earlier = b_.cmp("lt", b.index, a.index);
    Reg bWins = b_.binary("or", b_.cmp(code == ir::OpCode::argmax ? "gt" : "lt", b.value, a.value),
                          b_.binary("and", b_.cmp("eq", b.value, a.value), earlier));
    if (isFloat(b_.type(a.value))) {
      Reg aNaN = b_.cmp("ne", a.value, a.value), bNaN = b_.cmp("ne", b.value, b.value);
      Reg aNumber = b_.unary("not", aNaN);
      bWins = b_.select(bNaN, b_.binary("or", aNumber, earlier), b_.binary("and", aNumber, bWins));
    }
    return {b_.select(bWins, b.value, a.value), b_.select(bWins, b.index, a.index)};
  }
  Partial shuffleXor(const Partial& x, int64_t mask) {
    auto move = [&](Reg r) { return r < 0 ? r : b_.emit(KOp::shuffle_xor, b_.type(r), {r}, {{"mask", mask}}); };
    return {move(x.value), move(x.index)};
  }
  // A subgroup reduction over clusters when the reduced lane bits are the low ones; butterflies otherwise.
  Partial acrossLanes(ir::OpCode code, Partial x, const std::vector<Basis>& lanes, size_t axis) {
    std::vector<int64_t> masks;
    for (size_t i = 0; i < lanes.size(); ++i)
      if (lanes[i][axis] != 0) masks.push_back(int64_t{1} << i);
    if (masks.empty()) return x;
    if (!isArg(code) && masks.back() == int64_t{1} << (masks.size() - 1))  // bits 0..n-1
      return {b_.emit(KOp::subgroup_reduce, b_.type(x.value), {x.value},
                      {{"fn", std::string(combineFn(code))}, {"cluster", masks.back() * 2}})};
    for (int64_t m : masks) x = combine(code, x, shuffleXor(x, m));
    return x;
  }
  // Each warp writes its partials per (group, warp, lane); every warp then combines the
  // warps that share its other coordinates, in one fixed order so all agree bit for bit.
  void acrossWarps(ir::OpCode code, std::map<Coord, Partial>& groups, const std::vector<Basis>& warps, size_t axis) {
    int64_t axisMask = 0;
    for (size_t i = 0; i < warps.size(); ++i)
      if (warps[i][axis] != 0) axisMask |= int64_t{1} << i;
    if (axisMask == 0) return;
    int64_t W = t_.warpsPerProgram, L = t_.subgroupSize, G = int64_t(groups.size());
    DType dt = b_.type(groups.begin()->second.value);
    int64_t values = allocShared(G * W * L * dtypeBytes(dt), dt, "reduction partials [group][warp][lane]");
    int64_t indices = isArg(code) ? allocShared(G * W * L * 4, DType::i32, "their indices", f_.shared[size_t(values)].bytes) : -1;
    Reg warp = b_.emit(KOp::warp_id, DType::i32), lane = b_.emit(KOp::lane_id, DType::i32);
    auto slot = [&](int64_t g, Reg w) {
      Reg row = b_.binary("add", b_.constant(DType::i32, double(g * W)), w);
      return b_.binary("add", b_.binary("mul", row, b_.constant(DType::i32, double(L))), lane);
    };
    b_.effect(KOp::barrier);
    int64_t g = 0;
    for (auto& [key, partial] : groups) {
      b_.effect(KOp::store_shared, {slot(g, warp), partial.value}, {{"alloc", values}});
      if (partial.index >= 0) b_.effect(KOp::store_shared, {slot(g, warp), partial.index}, {{"alloc", indices}});
      ++g;
    }
    b_.effect(KOp::barrier);
    Reg base = b_.binary("and", warp, b_.constant(DType::i32, double(~axisMask)));
    g = 0;
    for (auto& [key, partial] : groups) {
      std::optional<Partial> acc;
      for (int64_t m = 0; m <= axisMask; ++m) {
        if ((m & ~axisMask) != 0) continue;  // m ranges over the reduced warp bits
        Reg w = m == 0 ? base : b_.binary("or", base, b_.constant(DType::i32, double(m)));
        Partial x{b_.emit(KOp::load_shared, dt, {slot(g, w)}, {{"alloc", values}})};
        if (partial.index >= 0) x.index = b_.emit(KOp::load_shared, DType::i32, {slot(g, w)}, {{"alloc", indices}});
        acc = acc ? combine(code, *acc, x) : x;
      }
      partial = *acc;
      ++g;
    }
  }

  // ---- memory ----
  // Per register: the element index (offset + coordinate) per axis, the in-bounds predicate and the address.
  // The element at i64 indices of `tensor` and whether it is inside (0 <= index < size per axis).
  std::pair<Reg, Reg> address(int64_t tensor, const std::vector<Reg>& index) {
    Reg addr = -1, pred = -1;
    for (size_t d = 0; d < index.size(); ++d) {
      Reg inside = b_.cmp("ult", index[d], tensorParam(tensor, "size", int64_t(d)));
      Reg term = b_.binary("mul", index[d], tensorParam(tensor, "stride", int64_t(d)));
      pred = pred < 0 ? inside : b_.binary("and", pred, inside);
      addr = addr < 0 ? term : b_.binary("add", addr, term);
    }
    return {addr, pred};
  }
  // A block's element: the op's offsets plus a register's coordinates.
  std::pair<Reg, Reg> blockAddress(const ir::Op& op, int64_t tensor, const std::vector<Reg>& coord) {
    std::vector<Reg> index;
    for (size_t d = 0; d < coord.size(); ++d) index.push_back(b_.binary("add", regs_.at(op.operands[d]).at(0), castTo(coord[d], DType::i64)));
    return address(tensor, index);
  }
  // A gather's or scatter's element r: its coordinates' registers r, and the mask's (operand maskAt) where there is one.
  std::pair<Reg, Reg> indirectAddress(const ir::Op& op, const std::vector<std::vector<Reg>>& in, size_t r, size_t maskAt) {
    int64_t tensor = op.intAttr("tensor");
    std::vector<Reg> index;
    for (size_t d = 0; d < size_t(k_.tensors[size_t(tensor)].rank); ++d) index.push_back(castTo(in[d].at(r), DType::i64));
    auto [addr, pred] = address(tensor, index);
    if (maskAt < in.size()) pred = b_.binary("and", pred, in[maskAt].at(r));
    return {addr, pred};
  }
  std::vector<std::vector<Reg>> operands(const ir::Op& op) {
    std::vector<std::vector<Reg>> in;
    for (size_t i = 0; i < op.operands.size(); ++i) in.push_back(operand(op, int(i)));
    return in;
  }
  KAttrValue fillOf(const ir::Op& op) const {
    const ir::AttrValue& fill = *op.attr("fill");
    const auto* exact = std::get_if<int64_t>(&fill);  // integers stay exact past 2^53
    return isFloat(dtypeOf(op.results[0])) ? KAttrValue(op.floatAttr("fill"))
           : exact                         ? KAttrValue(*exact)
                                           : KAttrValue(int64_t(op.floatAttr("fill")));
  }
  void load(const ir::Op& op) {
    ir::ValueId res = op.results[0];
    int64_t tensor = op.intAttr("tensor");
    LinearLayout lin = linear(res);
    int64_t vec = vectorWidth(op, tensor, lin, k_.type(res).shape);
    std::vector<Reg> out;
    for (int64_t r = 0; r < registerCount(lin); r += vec) {
      auto [addr, pred] = blockAddress(op, tensor, coords(lin, r));
      std::vector<Reg> loaded = loadGlobal(op, addr, pred, vec);
      out.insert(out.end(), loaded.begin(), loaded.end());
    }
    define(res, out);
  }
  void store(const ir::Op& op) {
    int valueAt = int(op.operands.size()) - 1;
    int64_t tensor = op.intAttr("tensor");
    const ir::Shape& shape = k_.type(op.operands.back()).shape;
    LinearLayout lin = layout::toLinear(operandLayout(op, valueAt), shape);
    std::vector<Reg> values = operand(op, valueAt);
    int64_t vec = vectorWidth(op, tensor, lin, shape);
    Reg owner = ownsCopies(lin);
    for (int64_t r = 0; r < registerCount(lin); r += vec) {
      if (isCopy(lin, r)) continue;  // copy bits are above a vector's: it is a copy as a whole
      std::vector<Reg> at = coords(lin, r);
      auto [addr, pred] = blockAddress(op, tensor, at);
      storeGlobal(tensor, addr, ownedElement(lin, r, at, shape, owner, pred), {values.begin() + r, values.begin() + r + vec});
    }
  }
  // vec consecutive elements from buffer[addr] if pred, else the load's fill.
  std::vector<Reg> loadGlobal(const ir::Op& op, Reg addr, Reg pred, int64_t vec) {
    return b_.emitMulti(KOp::load_global, std::vector<DType>(size_t(vec), dtypeOf(op.results[0])), {addr, pred},
                        {{"buffer", paramIndex(tensorName(op.intAttr("tensor")))}, {"fill", fillOf(op)}, {"vec", vec}});
  }
  void storeGlobal(int64_t tensor, Reg addr, Reg pred, const std::vector<Reg>& values) {
    std::vector<Reg> operands = {addr, pred};
    operands.insert(operands.end(), values.begin(), values.end());
    b_.effect(KOp::store_global, operands, {{"buffer", paramIndex(tensorName(tensor))}, {"vec", int64_t(values.size())}});
  }
  // How many consecutive elements one access of a block load or store moves: the target's
  // widest access where the tensor's launch facts allow it (options_.vectorTensors), the
  // layout's lowest register bits step 1, 2, 4... along the last axis, and the block's
  // last offset and size keep each vector wholly inside or outside the tensor and the tile.
  int64_t vectorWidth(const ir::Op& op, int64_t tensor, const LinearLayout& lin, const ir::Shape& shape) const {
    bool allowed = size_t(tensor) < options_.vectorTensors.size() && options_.vectorTensors[size_t(tensor)];
    if (t_.vectorBytes == 0 || !allowed) return 1;
    size_t last = shape.size() - 1;
    int64_t vec = runAlong(lin, last, t_.vectorBytes / dtypeBytes(k_.tensors[size_t(tensor)].dtype));
    while (vec > 1 && (shape[last] % vec != 0 || divisors_.at(size_t(op.operands[last])) % vec != 0)) vec /= 2;
    return vec;
  }
  // pred, and that register r of a stored tile is a real element (not padding) and this thread's copy of it.
  // (pred: -1 for true; so is the result where nothing limits it)
  Reg ownedElement(const LinearLayout& lin, int64_t r, const std::vector<Reg>& at, const ir::Shape& shape, Reg owner, Reg pred) {
    return both(both(pred, inside(lin, r, at, shape)), owner);  // never padding
  }
  Reg both(Reg a, Reg b) { return a < 0 ? b : b < 0 ? a : b_.binary("and", a, b); }

  // ---- gather and scatter: coordinates from registers, in the layout of the result / value ----
  void gather(const ir::Op& op) {
    std::vector<std::vector<Reg>> in = operands(op);
    size_t rank = size_t(k_.tensors[size_t(op.intAttr("tensor"))].rank);
    std::vector<Reg> out;
    for (size_t r = 0; r < in[0].size(); ++r) {
      auto [addr, pred] = indirectAddress(op, in, r, rank);
      out.push_back(loadGlobal(op, addr, pred, 1).at(0));
    }
    define(op.results[0], out);
  }
  // Of elements with the same coordinates, whichever thread stores last wins.
  void scatter(const ir::Op& op) {
    int64_t tensor = op.intAttr("tensor");
    size_t rank = size_t(k_.tensors[size_t(tensor)].rank);
    const ir::Shape& shape = k_.type(op.operands[rank]).shape;
    std::vector<std::vector<Reg>> in = operands(op);
    if (shape.empty()) {  // a uniform element: thread 0 writes it
      auto [addr, pred] = indirectAddress(op, in, 0, rank + 1);
      return storeGlobal(tensor, addr, b_.binary("and", pred, firstThread()), {in[rank].at(0)});
    }
    LinearLayout lin = layout::toLinear(operandLayout(op, int(rank)), shape);
    Reg owner = ownsCopies(lin);
    for (int64_t r = 0; r < registerCount(lin); ++r) {
      if (isCopy(lin, r)) continue;
      auto [addr, pred] = indirectAddress(op, in, size_t(r), rank + 1);
      storeGlobal(tensor, addr, ownedElement(lin, r, coords(lin, r), shape, owner, pred), {in[rank].at(size_t(r))});
    }
  }

  // Each element is updated once, by the thread and register holding its stored copy (as a
  // store); a register copy takes its owner's old value, and copies in other threads get it
  // through workgroup memory when the old values are read.
  void atomic(const ir::Op& op) {
    int64_t tensor = op.intAttr("tensor");
    ir::ValueId res = op.results[0];
    const ir::Shape& shape = k_.type(res).shape;
    const std::string& fn = op.stringAttr("fn");
    size_t rank = size_t(k_.tensors[size_t(tensor)].rank), values = fn == "cas" ? 2 : 1;
    std::vector<std::vector<Reg>> in = operands(op);
    auto update = [&](size_t r, Reg owned) {
      auto [addr, inside] = indirectAddress(op, in, r, rank + values);
      std::vector<Reg> args = {addr, both(inside, owned), in[rank].at(r)};
      if (values == 2) args.push_back(in[rank + 1].at(r));
      return b_.emit(KOp::atomic_global, dtypeOf(res), args, {{"buffer", paramIndex(tensorName(tensor))}, {"fn", fn}});
    };
    if (shape.empty()) {  // a uniform element: thread 0 updates it
      Reg first = firstThread(), old = update(0, first);
      return define(res, {uses_.count(res) ? shareOwned(dtypeOf(res), {{b_.constant(DType::i32, 0), first, old}}, 1).at(0) : old});
    }
    LinearLayout lin = linear(res);
    Reg owner = ownsCopies(lin);
    std::vector<Reg> out(size_t(registerCount(lin)), -1);
    std::vector<Owned> owned;
    std::vector<size_t> ownedRegs;
    for (int64_t r = 0; r < registerCount(lin); ++r) {
      if (isCopy(lin, r)) continue;
      std::vector<Reg> at = coords(lin, r);
      Reg mine = ownedElement(lin, r, at, shape, owner, -1);
      out[size_t(r)] = update(size_t(r), mine);
      owned.push_back({slotOf(lin, r, at, shape, shape), mine, out[size_t(r)]});
      ownedRegs.push_back(size_t(r));
    }
    if (owner >= 0 && uses_.count(res)) {  // every thread reads the values their owners wrote
      std::vector<Reg> shared = shareOwned(dtypeOf(res), owned, k_.type(res).numel());
      for (size_t i = 0; i < ownedRegs.size(); ++i) out[ownedRegs[i]] = shared[i];
    }
    for (int64_t r = 0; r < registerCount(lin); ++r)
      if (isCopy(lin, r)) out[size_t(r)] = out.at(size_t(r & ~copyBits(lin)));
    define(res, out);
  }
  // A register holding element `flat` (row-major; padding: the scratch slot n), `owns` whether
  // this thread's copy is the one written (-1: always), `value` its value there.
  struct Owned {
    Reg flat, owns, value;
  };
  // Every element's owned value, read back by each of `regs`' threads at the same flat
  // positions: owners store to workgroup memory, the rest to a scratch slot past the n real
  // ones, and after a barrier every thread loads its positions.
  std::vector<Reg> shareOwned(DType dt, const std::vector<Owned>& regs, int64_t n) {
    int64_t alloc = allocShared((n + 1) * dtypeBytes(dt), dt, "row-major, then a scratch slot for copies");
    Reg scratch = b_.constant(DType::i32, double(n));
    b_.effect(KOp::barrier);  // earlier readers of the aliased buffer are done
    for (const Owned& o : regs)
      b_.effect(KOp::store_shared, {o.owns < 0 ? o.flat : b_.select(o.owns, o.flat, scratch), o.value}, {{"alloc", alloc}});
    b_.effect(KOp::barrier);
    std::vector<Reg> out;
    for (const Owned& o : regs) out.push_back(b_.emit(KOp::load_shared, dt, {o.flat}, {{"alloc", alloc}}));
    return out;
  }

  // ---- print: into a buffer of its own, printed by the device after the launch ----
  void print(const ir::Op& op) {
    if (regionDepth_ > 0) unsupported(op, "inside a fold, a while or an if (a GPU program prints once per launch)");
    ir::ValueId x = op.operands[0];
    const ir::Type& type = k_.type(x);
    f_.prints.push_back({op.stringAttr("label"), type.dtype, type.shape,
                         f_.addBufferParam("p" + std::to_string(f_.prints.size()), type.dtype)});
    Reg slice = b_.binary("mul", programIndex(), b_.constant(DType::i64, double(std::max<int64_t>(1, type.numel()))));
    LinearLayout lin = layout::toLinear(operandLayout(op, 0), type.shape);
    std::vector<Reg> values = operand(op, 0);
    for (int64_t r = 0; r < registerCount(lin); ++r) {
      std::vector<Reg> at = coords(lin, r);
      Reg flat = at.empty() ? b_.constant(DType::i32, 0) : rowMajor(at, type.shape);
      Reg real = inside(lin, r, at, type.shape);
      b_.effect(KOp::store_global,
                {b_.binary("add", slice, b_.emit(KOp::cast, DType::i64, {flat})), real < 0 ? b_.constant(DType::boolean, 1) : real,
                 values.at(size_t(r))},
                {{"buffer", int64_t(f_.prints.back().param)}, {"vec", int64_t{1}}});
    }
  }
  // Operand i's real elements go to workgroup memory at their coordinates shifted by
  // storeShift[i] along the axis, row-major in `space`; after a barrier each register of the
  // result loads its coordinates shifted by loadShift. Padding uses a scratch slot past `space`.
  void moveThroughMemory(const ir::Op& op, const ir::Shape& space, const std::vector<int64_t>& storeShift, int64_t loadShift) {
    size_t axis = size_t(op.intAttr("axis"));
    ir::ValueId res = op.results[0];
    DType dt = dtypeOf(res);
    int64_t n = ir::Type{dt, space}.numel();
    int64_t alloc = allocShared((n + 1) * dtypeBytes(dt), dt, "row-major, then a scratch slot for padding");
    auto position = [&](const LinearLayout& lin, int64_t r, const ir::Shape& shape, int64_t shift) {
      std::vector<Reg> at = coords(lin, r);
      at[axis] = b_.binary("add", at[axis], b_.constant(DType::i32, double(shift)));
      return slotOf(lin, r, at, shape, space);
    };
    b_.effect(KOp::barrier);  // earlier readers of the aliased buffer are done
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const ir::Shape& shape = k_.type(op.operands[i]).shape;
      LinearLayout lin = layout::toLinear(operandLayout(op, int(i)), shape);
      std::vector<Reg> values = operand(op, int(i));
      for (int64_t r = 0; r < registerCount(lin); ++r)
        b_.effect(KOp::store_shared, {position(lin, r, shape, storeShift[i]), values.at(size_t(r))}, {{"alloc", alloc}});
    }
    b_.effect(KOp::barrier);
    LinearLayout lin = linear(res);
    std::vector<Reg> out;
    for (int64_t r = 0; r < registerCount(lin); ++r)
      out.push_back(b_.emit(KOp::load_shared, dt, {position(lin, r, k_.type(res).shape, loadShift)}, {{"alloc", alloc}}));
    define(res, out);
  }
  void concat(const ir::Op& op) {
    std::vector<int64_t> shifts;
    int64_t at = 0;
    for (ir::ValueId x : op.operands) {
      shifts.push_back(at);
      at += k_.type(x).shape[size_t(op.intAttr("axis"))];
    }
    moveThroughMemory(op, k_.type(op.results[0]).shape, shifts, 0);
  }

  // An inclusive scan in workgroup memory: every element goes to its row-major slot (padding
  // to a scratch slot past them), the lines along the axis are scanned there by loops, and each
  // register reads its slot back. The code is the same few loops for any tile (lavapipe
  // compiles unrolled steps per register slowly). Where there are more threads than lines, a
  // line is cut into chunks (ScanPlan); otherwise each thread scans whole lines left to right,
  // in the interpreter's order. Several tiles scanned together (a combine region) take one
  // allocation each.
  void scan(const ir::Op& op) {
    if (scanInSubgroups(op)) return;
    const ir::Shape& shape = k_.type(op.results[0]).shape;
    ScanPlan s = planScan(shape, size_t(op.intAttr("axis")));
    LinearLayout lin = linear(op.results[0]);
    std::vector<DType> types;
    for (ir::ValueId v : op.operands) types.push_back(dtypeOf(v));
    // A slot per thread past the elements: where a thread's loops point when it has no element.
    s.allocs = allocSharedTogether(types, s.count + f_.workgroupSize, "row-major, then a scratch slot per thread");
    s.scratch = b_.binary("add", b_.emit(KOp::thread_id, DType::i32), b_.constant(DType::i32, double(s.count)));
    std::vector<Reg> flat;
    for (int64_t r = 0; r < registerCount(lin); ++r) flat.push_back(slotOf(lin, r, coords(lin, r), shape, shape));
    b_.effect(KOp::barrier);  // an aliased buffer's readers are done
    for (size_t i = 0; i < op.operands.size(); ++i) {
      std::vector<Reg> values = operand(op, int(i));
      for (size_t r = 0; r < flat.size(); ++r) b_.effect(KOp::store_shared, {flat[r], values[r]}, {{"alloc", s.allocs[i]}});
    }
    b_.effect(KOp::barrier);
    scanChunks(op, s);
    if (s.chunks > 1) {
      b_.effect(KOp::barrier);
      carryAcrossChunks(op, s);
      b_.effect(KOp::barrier);
      addCarries(op, s);
    }
    b_.effect(KOp::barrier);
    for (size_t i = 0; i < op.operands.size(); ++i) {
      std::vector<Reg> out;
      for (Reg at : flat) out.push_back(b_.emit(KOp::load_shared, types[i], {at}, {{"alloc", s.allocs[i]}}));
      define(op.results[i], out);
    }
  }
  // A scan whose lines each lie within one subgroup (every register and lane basis that moves
  // along the axis is one power of two on it, and no warp basis does), without workgroup
  // memory or barriers; false where the layout is not such. The axis position's bits are taken
  // from the lowest: with each one, every element's block (the elements sharing its higher
  // bits) doubles, holding S, the element's inclusive scan within its block, and T, the
  // block's total; the upper half of a block combines the lower half's T before its own. The
  // lower half's T is another lane's (a shuffle) for a lane bit; consecutive register bits
  // take their blocks in order in each thread. Registers of one block compute the same T once
  // (value numbering).
  bool scanInSubgroups(const ir::Op& op) {
    size_t axis = size_t(op.intAttr("axis"));
    LinearLayout lin = linear(op.results[0]);
    int64_t length = layout::paddedShape(k_.type(op.results[0]).shape)[axis];
    std::vector<std::pair<const std::string*, size_t>> bitFrom(size_t(std::countr_zero(uint64_t(length))), {nullptr, 0});
    static const std::string kIds[] = {layout::kRegister, layout::kLane, layout::kWarp};
    for (const std::string& id : kIds)
      for (size_t i = 0; i < bases(lin, id).size(); ++i) {
        const Basis& b = bases(lin, id)[i];
        if (b[axis] == 0) continue;
        bool single = std::has_single_bit(uint64_t(b[axis])) &&
                      std::count(b.begin(), b.end(), 0) == std::ptrdiff_t(b.size()) - 1;
        size_t bit = size_t(std::countr_zero(uint64_t(b[axis])));
        if (&id == &kIds[2] || !single || bit >= bitFrom.size() || bitFrom[bit].first) return false;
        bitFrom[bit] = {&id, i};
      }
    if (std::ranges::any_of(bitFrom, [](const auto& f) { return f.first == nullptr; })) return false;
    size_t n = op.operands.size();
    std::vector<std::vector<Reg>> S, T;  // [register][operand]
    for (int64_t r = 0; r < registerCount(lin); ++r) {
      S.emplace_back();
      for (size_t i = 0; i < n; ++i) S.back().push_back(operand(op, int(i)).at(size_t(r)));
    }
    T = S;
    // Along a run of lane bits each block also carries E, the combined totals of the lanes'
    // blocks before its own in the run (where `has`), which S takes at the run's end.
    std::vector<std::vector<Reg>> E;
    Reg has = -1;  // -1: no lane bit of the run is set
    auto endLaneRun = [&] {
      if (E.empty()) return;
      for (size_t r = 0; r < S.size(); ++r) {
        std::vector<Reg> withEarlier = combine(op, E[r], S[r]);
        for (size_t v = 0; v < n; ++v) S[r][v] = b_.select(has, withEarlier[v], S[r][v]);
      }
      E.clear();
      has = -1;
    };
    // A run of register bits takes its 2^m blocks in order, carrying their combined totals.
    std::vector<size_t> registerRun;
    auto endRegisterRun = [&] {
      if (registerRun.empty()) return;
      size_t runMask = 0;
      for (size_t i : registerRun) runMask |= size_t{1} << i;
      std::vector<std::vector<Reg>> before = T;
      for (size_t first = 0; first < T.size(); ++first) {
        if (first & runMask) continue;
        auto member = [&](size_t j) {  // the register of block j of the run, with first's other bits
          size_t r = first;
          for (size_t t = 0; t < registerRun.size(); ++t)
            if ((j >> t) & 1) r |= size_t{1} << registerRun[t];
          return r;
        };
        size_t blocks = size_t{1} << registerRun.size();
        std::vector<Reg> carry = before[first];
        for (size_t j = 1; j < blocks; ++j) {
          S[member(j)] = combine(op, carry, S[member(j)]);
          carry = combine(op, carry, before[member(j)]);
        }
        for (size_t j = 0; j < blocks; ++j) T[member(j)] = carry;
      }
      registerRun.clear();
    };
    for (const auto& [id, i] : bitFrom) {
      if (*id == layout::kRegister) {
        endLaneRun();
        registerRun.push_back(i);
        continue;
      }
      endRegisterRun();
      if (E.empty()) E = T;  // a placeholder until `has`
      Reg bit = b_.binary("and", b_.binary("shr", b_.emit(KOp::lane_id, DType::i32), b_.constant(DType::i32, double(i))),
                          b_.constant(DType::i32, 1));
      Reg upper = b_.cmp("ne", bit, b_.constant(DType::i32, 0));
      std::map<Reg, Reg> moved;  // each block's T crosses lanes once
      for (size_t r = 0; r < T.size(); ++r) {
        std::vector<Reg> partner;
        for (Reg t : T[r]) {
          auto [it, fresh] = moved.try_emplace(t, -1);
          if (fresh) it->second = b_.emit(KOp::shuffle_xor, b_.type(t), {t}, {{"mask", int64_t{1} << i}});
          partner.push_back(it->second);
        }
        // The partner's block is the lower half where this lane is the upper one.
        std::vector<Reg> upperT = combine(op, partner, T[r]);
        std::vector<Reg> lowerT = commutes(op) ? upperT : combine(op, T[r], partner);
        std::vector<Reg> earlier = has < 0 ? partner : combine(op, partner, E[r]);
        for (size_t v = 0; v < n; ++v) {
          E[r][v] = b_.select(upper, has < 0 ? partner[v] : b_.select(has, earlier[v], partner[v]), E[r][v]);
          T[r][v] = upperT[v] == lowerT[v] ? upperT[v] : b_.select(upper, upperT[v], lowerT[v]);
        }
      }
      has = has < 0 ? upper : b_.binary("or", has, upper);
    }
    endRegisterRun();
    endLaneRun();
    for (size_t v = 0; v < n; ++v) {
      std::vector<Reg> out;
      for (const std::vector<Reg>& regs : S) out.push_back(regs[v]);
      define(op.results[v], out);
    }
    return true;
  }
  // How a scan's lines (of `length` elements `stride` apart in the row-major tile) are shared
  // by the workgroup's threads: each line is cut into `chunks` pieces of `chunkLength` (the
  // last may be shorter), and work item t (chunk t % chunks of line t / chunks) belongs to
  // thread t % threads. With one chunk a line is scanned left to right; with more, each chunk
  // is scanned, then the chunks' last elements along the line, then each later chunk's other
  // elements combine the (final) last element of the chunk before. Chunks are few enough that
  // the second pass stays short: about the square root of the length.
  struct ScanPlan {
    int64_t count = 1, length = 1, stride = 1, lines = 1, chunks = 1, chunkLength = 1;
    std::vector<int64_t> allocs;
    Reg scratch = -1;  // this thread's scratch slot
  };
  ScanPlan planScan(const ir::Shape& shape, size_t axis) const {
    ScanPlan s;
    s.count = ir::Type{DType::i32, shape}.numel();
    s.length = shape[axis];
    for (size_t d = axis + 1; d < shape.size(); ++d) s.stride *= shape[d];
    s.lines = s.count / std::max<int64_t>(1, s.length);
    int64_t root = int64_t(std::ceil(std::sqrt(double(s.length))));
    int64_t chunks = std::clamp<int64_t>(f_.workgroupSize / std::max<int64_t>(1, s.lines), 1, root);
    s.chunkLength = (s.length + chunks - 1) / chunks;
    s.chunks = (s.length + s.chunkLength - 1) / s.chunkLength;
    return s;
  }
  // Runs body(i) for i in [0, n): a loop, or the body itself on a constant when n is 1.
  std::vector<Reg> forEach(int64_t n, const std::vector<Reg>& inits,
                           const std::function<std::vector<Reg>(Reg, const std::vector<Reg>&)>& body) {
    if (n <= 0) return inits;
    if (n == 1) return body(b_.constant(DType::i32, 0), inits);
    std::vector<DType> types;
    for (Reg r : inits) types.push_back(b_.type(r));
    std::vector<Reg> operands = {b_.constant(DType::i32, 0), b_.constant(DType::i32, double(n))};
    operands.insert(operands.end(), inits.begin(), inits.end());
    std::vector<Reg> results = b_.emitMulti(KOp::for_loop, types, operands, {});
    types.insert(types.begin(), DType::i32);
    std::vector<Reg> args = b_.openRegion(types);
    b_.effect(KOp::yield, body(args[0], std::vector<Reg>(args.begin() + 1, args.end())));
    b_.closeRegion();
    return results;
  }
  // This thread's work item `i` (of those the plan gives it): whether it exists, its line's
  // slot of element 0 and its chunk.
  struct ScanItem {
    Reg real, line, chunk;
  };
  ScanItem scanItem(const ScanPlan& s, Reg i, int64_t items) {
    Reg threads = b_.constant(DType::i32, double(f_.workgroupSize));
    Reg item = b_.binary("add", b_.emit(KOp::thread_id, DType::i32), b_.binary("mul", i, threads));
    Reg real = items % f_.workgroupSize == 0 ? -1 : b_.cmp("lt", item, b_.constant(DType::i32, double(items)));
    Reg chunks = b_.constant(DType::i32, double(s.chunks));
    Reg line = s.chunks == 1 ? item : b_.binary("div", item, chunks);
    Reg chunk = s.chunks == 1 ? b_.constant(DType::i32, 0) : b_.binary("rem", item, chunks);
    // Line l starts at (l / stride) * length * stride + l % stride.
    Reg stride = b_.constant(DType::i32, double(s.stride));
    Reg start = s.stride == 1 ? b_.binary("mul", line, b_.constant(DType::i32, double(s.length)))
                              : b_.binary("add", b_.binary("mul", b_.binary("div", line, stride), b_.constant(DType::i32, double(s.length * s.stride))),
                                          b_.binary("rem", line, stride));
    return {real, start, chunk};
  }
  // The slot of element `along` of a line starting at `start` where `ok` (-1: always), else
  // this thread's scratch slot.
  Reg scanSlot(const ScanPlan& s, Reg start, Reg along, Reg ok) {
    Reg at = b_.binary("add", start, b_.binary("mul", along, b_.constant(DType::i32, double(s.stride))));
    return ok < 0 ? at : b_.select(ok, at, s.scratch);
  }
  std::vector<Reg> loadScan(const ir::Op& op, const ScanPlan& s, Reg at) {
    std::vector<Reg> out;
    for (size_t i = 0; i < s.allocs.size(); ++i)
      out.push_back(b_.emit(KOp::load_shared, dtypeOf(op.operands[i]), {at}, {{"alloc", s.allocs[i]}}));
    return out;
  }
  void storeScan(const ScanPlan& s, Reg at, const std::vector<Reg>& values) {
    for (size_t i = 0; i < s.allocs.size(); ++i) b_.effect(KOp::store_shared, {at, values[i]}, {{"alloc", s.allocs[i]}});
  }
  // Pass 1: each chunk left to right, its running value carried in registers.
  void scanChunks(const ir::Op& op, const ScanPlan& s) {
    int64_t items = s.lines * s.chunks;
    forEach((items + f_.workgroupSize - 1) / f_.workgroupSize, {}, [&](Reg i, const std::vector<Reg>&) {
      ScanItem item = scanItem(s, i, items);
      Reg first = b_.binary("mul", item.chunk, b_.constant(DType::i32, double(s.chunkLength)));
      std::vector<Reg> running = loadScan(op, s, scanSlot(s, item.line, first, item.real));
      forEach(s.chunkLength - 1, running, [&](Reg k, const std::vector<Reg>& earlier) {
        Reg along = b_.binary("add", first, b_.binary("add", k, b_.constant(DType::i32, 1)));
        Reg ok = s.length % s.chunkLength == 0 ? item.real
                                               : both(item.real, b_.cmp("lt", along, b_.constant(DType::i32, double(s.length))));
        Reg at = scanSlot(s, item.line, along, ok);
        std::vector<Reg> combined = combine(op, earlier, loadScan(op, s, at));
        storeScan(s, at, combined);
        return combined;
      });
      return std::vector<Reg>{};
    });
  }
  // Pass 2: along each line (one per thread: chunks > 1 only where lines < threads), the
  // chunks' last elements become final.
  void carryAcrossChunks(const ir::Op& op, const ScanPlan& s) {
    ScanItem line = scanItem(s, b_.constant(DType::i32, 0), s.lines * s.chunks);  // thread t's item t: chunk 0 of line t / chunks
    Reg real = both(line.real, b_.cmp("eq", line.chunk, b_.constant(DType::i32, 0)));
    Reg chunkLength = b_.constant(DType::i32, double(s.chunkLength)), one = b_.constant(DType::i32, 1);
    std::vector<Reg> running = loadScan(op, s, scanSlot(s, line.line, b_.binary("sub", chunkLength, one), real));
    forEach(s.chunks - 1, running, [&](Reg c, const std::vector<Reg>& earlier) {
      // The last element of chunk c + 1: min((c + 2) * chunkLength, length) - 1.
      Reg end = b_.binary("mul", b_.binary("add", c, b_.constant(DType::i32, 2)), chunkLength);
      Reg last = b_.binary("sub", b_.binary("min", end, b_.constant(DType::i32, double(s.length))), one);
      Reg at = scanSlot(s, line.line, last, real);
      std::vector<Reg> combined = combine(op, earlier, loadScan(op, s, at));
      storeScan(s, at, combined);
      return combined;
    });
  }
  // Pass 3: every element of a later chunk but its last combines the last element of the chunk
  // before.
  void addCarries(const ir::Op& op, const ScanPlan& s) {
    int64_t items = s.lines * s.chunks;
    forEach((items + f_.workgroupSize - 1) / f_.workgroupSize, {}, [&](Reg i, const std::vector<Reg>&) {
      ScanItem item = scanItem(s, i, items);
      Reg real = both(item.real, b_.cmp("gt", item.chunk, b_.constant(DType::i32, 0)));
      Reg first = b_.binary("mul", item.chunk, b_.constant(DType::i32, double(s.chunkLength)));
      Reg one = b_.constant(DType::i32, 1);
      std::vector<Reg> carry = loadScan(op, s, scanSlot(s, item.line, b_.binary("sub", first, one), real));
      forEach(s.chunkLength - 1, {}, [&](Reg k, const std::vector<Reg>&) {
        Reg along = b_.binary("add", first, k);
        Reg at = scanSlot(s, item.line, along, both(real, b_.cmp("lt", along, b_.constant(DType::i32, double(s.length - 1)))));
        storeScan(s, at, combine(op, carry, loadScan(op, s, at)));
        return std::vector<Reg>{};
      });
      return std::vector<Reg>{};
    });
  }
  // Whether a scan's combine gives the same bits in either order: sums and products, and
  // integer maxima and minima (a float's may keep either zero or NaN).
  bool commutes(const ir::Op& op) const {
    if (!op.regions.empty()) return false;
    const std::string& fn = op.stringAttr("fn");
    return fn == "add" || fn == "mul" || (!isFloat(dtypeOf(op.operands[0])) && (fn == "max" || fn == "min"));
  }
  // A scan's combine of an earlier and a later element: its fn, or its region's ops lowered
  // on these registers.
  std::vector<Reg> combine(const ir::Op& op, const std::vector<Reg>& earlier, const std::vector<Reg>& later) {
    if (op.regions.empty()) return {b_.binary(op.stringAttr("fn"), earlier[0], later[0])};
    const ir::Block& region = op.regions[0];
    for (size_t i = 0; i < earlier.size(); ++i) {
      define(region.args[i], {earlier[i]});
      define(region.args[earlier.size() + i], {later[i]});
    }
    for (size_t i = 0; i + 1 < region.ops.size(); ++i) lower(region.ops[i]);  // the yield is read here
    std::vector<Reg> out;
    for (ir::ValueId v : region.ops.back().operands) out.push_back(regs_.at(v).at(0));
    return out;
  }

  // A bitonic sort in workgroup memory over the axis's power-of-two padding, which sorts last.
  // Every element goes to its row-major slot with its origin (its position along the axis
  // before the sort; equal keys order by origin, so the order is the stable one), the network
  // runs there as loops over its steps, and each register reads its slot back: the same code for
  // any tile (lavapipe compiles unrolled steps per register slowly). In step (k, j) each thread
  // compare-exchanges its pairs (i, i + j*stride), where i has the axis bit j clear: positions in
  // the padded shape are bitwise concatenations.
  struct SortLines {
    int64_t length = 1, stride = 1, pairs = 1;  // along the padded axis; between neighbours; pairs per step
    std::vector<DType> types;                  // the keys, their origins, then the payload
    std::vector<int64_t> allocs;
    Reg scratch = -1;                          // this thread's slot, for a pair past the last
  };
  void sort(const ir::Op& op) {
    ir::Shape padded = layout::paddedShape(k_.type(op.results[0]).shape);
    size_t axis = size_t(op.intAttr("axis"));
    SortLines s;
    s.length = padded[axis];
    for (size_t d = axis + 1; d < padded.size(); ++d) s.stride *= padded[d];
    int64_t count = ir::Type{DType::i32, padded}.numel();
    s.pairs = count / 2;
    LinearLayout lin = linear(op.results[0]);
    std::vector<Reg> slot, along;
    for (int64_t r = 0; r < registerCount(lin); ++r) {
      std::vector<Reg> at = coords(lin, r);
      slot.push_back(rowMajor(at, padded));
      along.push_back(at[axis]);
    }
    std::vector<std::vector<Reg>> values = {operand(op, 0), along};
    s.types = {dtypeOf(op.operands[0]), DType::i32};
    // A payload of the positions along the axis (an argsort, a topk) is the origins.
    bool payloadIsOrigin = op.operands.size() == 2 && operand(op, 1) == along;
    if (op.operands.size() == 2 && !payloadIsOrigin) {
      values.push_back(operand(op, 1));
      s.types.push_back(dtypeOf(op.operands[1]));
    }
    bool idle = s.pairs % f_.workgroupSize != 0;  // some threads have no pair in a step's last round
    s.allocs = allocSharedTogether(s.types, count + (idle ? f_.workgroupSize : 0),
                                   idle ? "row-major over the padded shape, then a scratch slot per thread"
                                        : "row-major over the padded shape");
    if (idle) s.scratch = b_.binary("add", b_.emit(KOp::thread_id, DType::i32), b_.constant(DType::i32, double(count)));
    b_.effect(KOp::barrier);  // an aliased buffer's readers are done
    for (size_t v = 0; v < values.size(); ++v)
      for (size_t r = 0; r < slot.size(); ++r) b_.effect(KOp::store_shared, {slot[r], values[v][r]}, {{"alloc", s.allocs[v]}});
    // Stage t (k = 2^t) has steps j = k/2 .. 1: step u of it is j = 2^(t - 1 - u).
    int64_t stages = std::countr_zero(uint64_t(s.length));
    Reg one = b_.constant(DType::i32, 1);
    forEach(stages, {}, [&](Reg stage, const std::vector<Reg>&) {
      Reg t = b_.binary("add", stage, one);
      Reg k = b_.binary("shl", one, t);
      forRange(t, [&](Reg u) {
        Reg j = b_.binary("shl", one, b_.binary("sub", b_.binary("sub", t, one), u));
        b_.effect(KOp::barrier);  // the previous step's stores are done
        forEach((s.pairs + f_.workgroupSize - 1) / f_.workgroupSize, {}, [&](Reg round, const std::vector<Reg>&) {
          compareExchange(op, s, round, k, j);
          return std::vector<Reg>{};
        });
      });
      return std::vector<Reg>{};
    });
    b_.effect(KOp::barrier);
    for (size_t result = 0; result < op.results.size(); ++result) {
      size_t v = result == 0 ? 0 : payloadIsOrigin ? 1 : 2;
      std::vector<Reg> out;
      for (Reg at : slot) out.push_back(b_.emit(KOp::load_shared, s.types[v], {at}, {{"alloc", s.allocs[v]}}));
      define(op.results[result], out);
    }
  }
  // Runs body(i) for i in [0, n) with n a (uniform) register.
  void forRange(Reg n, const std::function<void(Reg)>& body) {
    b_.emitMulti(KOp::for_loop, {}, {b_.constant(DType::i32, 0), n}, {});
    std::vector<Reg> args = b_.openRegion({DType::i32});
    body(args[0]);
    b_.effect(KOp::yield, {});
    b_.closeRegion();
  }
  // This thread's pair of round `round` in step (k, j): the one at i stays or swaps with the one
  // at i + j*stride, so the lower position holds the first of the two in the network's ascending
  // runs (axis bit k of i clear) and the second in its descending ones.
  void compareExchange(const ir::Op& op, const SortLines& s, Reg round, Reg k, Reg j) {
    auto i32 = [&](int64_t v) { return b_.constant(DType::i32, double(v)); };
    Reg q = b_.binary("add", b_.emit(KOp::thread_id, DType::i32), b_.binary("mul", round, i32(f_.workgroupSize)));
    Reg distance = b_.binary("mul", j, i32(s.stride));
    Reg low = b_.binary("and", q, b_.binary("sub", distance, i32(1)));
    Reg first = b_.binary("add", b_.binary("mul", b_.binary("sub", q, low), i32(2)), low);
    Reg second = b_.binary("add", first, distance);
    if (s.scratch >= 0) {
      Reg real = b_.cmp("lt", q, i32(s.pairs));
      first = b_.select(real, first, s.scratch);
      second = b_.select(real, second, s.scratch);
    }
    std::vector<Reg> a, b;
    for (size_t v = 0; v < s.allocs.size(); ++v) {
      a.push_back(b_.emit(KOp::load_shared, s.types[v], {first}, {{"alloc", s.allocs[v]}}));
      b.push_back(b_.emit(KOp::load_shared, s.types[v], {second}, {{"alloc", s.allocs[v]}}));
    }
    Reg position = b_.binary("and", b_.binary("div", first, i32(s.stride)), i32(s.length - 1));
    Reg ascending = b_.cmp("eq", b_.binary("and", position, k), i32(0));
    Reg swap = b_.cmp("eq", sortsBefore(op, b[0], b[1], a[0], a[1]), ascending);
    for (size_t v = 0; v < s.allocs.size(); ++v) {
      b_.effect(KOp::store_shared, {first, b_.select(swap, b[v], a[v])}, {{"alloc", s.allocs[v]}});
      b_.effect(KOp::store_shared, {second, b_.select(swap, a[v], b[v])}, {{"alloc", s.allocs[v]}});
    }
  }
  // Whether the element (key a, origin i) comes before (b, o): padding last, then the keys'
  // order (NaN past every number), then the origins'.
  Reg sortsBefore(const ir::Op& op, Reg a, Reg i, Reg b, Reg o) {
    DType dt = dtypeOf(op.operands[0]);
    bool descending = op.intAttr("descending") != 0;
    Reg before = b_.cmp(descending ? "gt" : "lt", a, b), tie = b_.cmp("eq", a, b);
    if (isFloat(dt)) {
      Reg aNaN = b_.cmp("ne", a, a), bNaN = b_.cmp("ne", b, b);
      Reg nanFirst = descending ? both(aNaN, b_.unary("not", bNaN)) : both(b_.unary("not", aNaN), bNaN);
      before = b_.binary("or", before, nanFirst);
      tie = b_.binary("or", tie, both(aNaN, bNaN));
    }
    before = b_.binary("or", before, both(tie, b_.cmp("lt", i, o)));
    int64_t n = k_.type(op.operands[0]).shape[size_t(op.intAttr("axis"))];
    if (n == layout::paddedShape({n})[0]) return before;
    Reg real = b_.cmp("lt", i, b_.constant(DType::i32, double(n))), otherReal = b_.cmp("lt", o, b_.constant(DType::i32, double(n)));
    return b_.select(b_.cmp("eq", real, otherReal), before, real);
  }

  // Counts in workgroup memory over the result's padded shape: zeroed, then each real element
  // (its one copy) adds 1 to its bin atomically (an element outside the bins adds 0 to bin 0),
  // then each thread reads its registers' bins.
  void histogram(const ir::Op& op) {
    ir::ValueId x = op.operands[0], res = op.results[0];
    int64_t bins = op.intAttr("bins");
    int64_t alloc = allocShared(alignTo16(paddedNumel(res) * 4), DType::i32, "one count per bin");
    LinearLayout counts = linear(res), in = linear(x);
    b_.effect(KOp::barrier);  // an aliased allocation's readers are done
    for (int64_t r = 0; r < registerCount(counts); ++r)
      b_.effect(KOp::store_shared, {coords(counts, r)[0], b_.constant(DType::i32, 0)}, {{"alloc", alloc}});
    b_.effect(KOp::barrier);
    DType wide = dtypeBytes(dtypeOf(x)) == 8 ? DType::i64 : DType::i32;  // bins may not fit 8 bits
    Reg owns = ownsCopies(in), one = b_.constant(DType::i32, 1), zero = b_.constant(DType::i32, 0);
    const std::vector<Reg>& values = regs_.at(x);
    for (int64_t r = 0; r < registerCount(in); ++r) {
      if (isCopy(in, r)) continue;
      Reg v = dtypeOf(x) == wide ? values[size_t(r)] : b_.emit(KOp::cast, wide, {values[size_t(r)]});
      Reg binned = b_.cmp("ult", v, b_.constant(wide, double(bins)));
      Reg counted = ownedElement(in, r, coords(in, r), k_.type(x).shape, owns, binned);
      Reg bin = b_.select(binned, wide == DType::i32 ? v : b_.emit(KOp::cast, DType::i32, {v}), zero);
      b_.effect(KOp::atomic_shared, {bin, b_.select(counted, one, zero)}, {{"alloc", alloc}});
    }
    b_.effect(KOp::barrier);
    std::vector<Reg> out;
    for (int64_t r = 0; r < registerCount(counts); ++r)
      out.push_back(b_.emit(KOp::load_shared, DType::i32, {coords(counts, r)[0]}, {{"alloc", alloc}}));
    define(res, out);
  }

  // A failed check: each thread finds one of its real elements where cond is false, and the
  // first thread to claim the fault word records its program and that element.
  void check(const ir::Op& op) {
    const ir::Shape& shape = k_.type(op.operands[0]).shape;
    std::vector<Reg> cond = operand(op, 0);
    Reg failed = -1, element = b_.constant(DType::i32, 0);
    std::optional<LinearLayout> lin;
    if (!shape.empty()) lin = layout::toLinear(operandLayout(op, 0), shape);
    for (size_t r = 0; r < cond.size(); ++r) {
      Reg bad = b_.cmp("eq", cond[r], b_.constant(DType::boolean, 0));
      if (lin) {
        std::vector<Reg> at = coords(*lin, int64_t(r));
        bad = both(bad, inside(*lin, int64_t(r), at, shape));
        element = b_.select(bad, rowMajor(at, shape), element);
      }
      failed = failed < 0 ? bad : b_.binary("or", failed, bad);
    }
    int64_t faults = int64_t(f_.faultBuffer());
    auto word = [&](FaultWord w) { return b_.constant(DType::i64, double(w)); };
    Reg old = b_.emit(KOp::atomic_global, DType::i32,
                      {word(FaultWord::check), failed, b_.constant(DType::i32, double(checks_++ + 1)), b_.constant(DType::i32, 0)},
                      {{"buffer", faults}, {"fn", std::string("cas")}});
    Reg won = b_.binary("and", failed, b_.cmp("eq", old, b_.constant(DType::i32, 0)));
    Reg program = programIndex();
    auto record = [&](FaultWord w, Reg value) {
      b_.effect(KOp::store_global, {word(w), won, value}, {{"buffer", faults}, {"vec", int64_t{1}}});
    };
    record(FaultWord::checkProgramLow, b_.emit(KOp::cast, DType::i32, {program}));
    record(FaultWord::checkProgramHigh, b_.emit(KOp::cast, DType::i32, {b_.binary("shru", program, b_.constant(DType::i64, 32))}));
    record(FaultWord::checkElement, element);
  }

  // Integer division or remainder by zero in a real element sets the fault buffer, which the
  // device turns into the error the CPU reports (the interpreter's: division of fill values too).
  void checkDivisor(const LinearLayout& lin, int64_t reg, Reg divisor, const ir::Shape& shape) {
    int64_t faults = int64_t(f_.faultBuffer());
    Reg zero = b_.cmp("eq", divisor, b_.constant(b_.type(divisor), 0));
    if (Reg real = inside(lin, reg, coords(lin, reg), shape); real >= 0) zero = b_.binary("and", zero, real);
    b_.effect(KOp::store_global,
              {b_.constant(DType::i64, double(FaultWord::divisionByZero)), zero, b_.constant(DType::i32, 1)},
              {{"buffer", faults}, {"vec", int64_t{1}}});
  }

  // This program's position in row-major grid order.
  Reg programIndex() {
    Reg index = b_.emit(KOp::workgroup_id, DType::i64, {}, {{"axis", int64_t{0}}});
    for (int64_t axis = 1; axis < k_.gridRank; ++axis)
      index = b_.binary("add", b_.binary("mul", index, b_.emit(KOp::workgroup_count, DType::i64, {}, {{"axis", axis}})),
                        b_.emit(KOp::workgroup_id, DType::i64, {}, {{"axis", axis}}));
    return index;
  }

  // ---- replicated elements: bits of a layout whose basis is zero hold copies ----
  // Each element is stored once, by its copy whose copy bits are 0: a program that reads
  // and writes the same elements (y = x + y) would otherwise race with its own copies.
  // The register bits whose basis is zero: a register with any of them set copies another.
  static int64_t copyBits(const LinearLayout& lin) {
    const std::vector<Basis>& bs = bases(lin, layout::kRegister);
    int64_t bits = 0;
    for (size_t i = 0; i < bs.size(); ++i)
      if (std::ranges::all_of(bs[i], [](int64_t x) { return x == 0; })) bits |= int64_t{1} << i;
    return bits;
  }
  static bool isCopy(const LinearLayout& lin, int64_t reg) { return (reg & copyBits(lin)) != 0; }
  // Whether this thread holds the stored copy of its elements; -1 when no bit copies. Thread
  // bits a layout lacks (a Uniform value's) copy too.
  Reg ownsCopies(const LinearLayout& lin) {
    Reg owns = -1;
    const std::pair<std::string, KOp> ids[] = {{layout::kLane, KOp::lane_id}, {layout::kWarp, KOp::warp_id}};
    const int threadBits[] = {layout::log2Exact(t_.subgroupSize), layout::log2Exact(t_.warpsPerProgram)};
    for (size_t which = 0; which < 2; ++which) {
      const auto& [name, id] = ids[which];
      const std::vector<Basis>& bs = bases(lin, name);
      for (size_t i = 0; i < size_t(threadBits[which]); ++i) {
        if (i < bs.size() && !std::ranges::all_of(bs[i], [](int64_t x) { return x == 0; })) continue;
        Reg bit = b_.binary("and", b_.emit(id, DType::i32), b_.constant(DType::i32, double(int64_t{1} << i)));
        Reg zero = b_.cmp("eq", bit, b_.constant(DType::i32, 0));
        owns = owns < 0 ? zero : b_.binary("and", owns, zero);
      }
    }
    return owns;
  }

  // ---- control ----
  // A loop's carried values from operand `first` on, as registers: all of them, their types,
  // and how many each value has.
  struct Carried {
    std::vector<Reg> regs;
    std::vector<DType> types;
    std::vector<size_t> counts;
  };
  Carried carried(const ir::Op& op, size_t first) {
    Carried c;
    for (size_t i = first; i < op.operands.size(); ++i) {
      std::vector<Reg> init = operand(op, int(i));
      c.regs.insert(c.regs.end(), init.begin(), init.end());
      c.counts.push_back(init.size());
      c.types.insert(c.types.end(), init.size(), dtypeOf(op.operands[i]));
    }
    return c;
  }
  void fold(const ir::Op& op) {
    auto [inits, types, counts] = carried(op, 2);
    std::vector<Reg> operands = {regs_.at(op.operands[0]).at(0), regs_.at(op.operands[1]).at(0)};
    operands.insert(operands.end(), inits.begin(), inits.end());
    const ir::Block& body = op.regions.at(0);
    int64_t stages = std::min(options_.maxStages, op.attr("stages") ? op.intAttr("stages") : t_.defaultStages);
    int64_t floor = sharedFloor_;
    std::vector<ir::ValueId> ahead = t_.asyncCopy && stages > 1 ? planReadAhead(body, stages) : std::vector<ir::ValueId>{};
    if (!ahead.empty()) readAheadPrologue(body, ahead, stages, operands[0], operands[1]);
    std::vector<Reg> results = b_.emitMulti(KOp::for_loop, types, operands, {});
    std::vector<DType> argTypes = types;
    argTypes.insert(argTypes.begin(), DType::i64);  // k
    std::vector<Reg> args = b_.openRegion(argTypes);
    define(body.args[0], {args[0]});
    splitInto(body.args, 1, std::vector<Reg>(args.begin() + 1, args.end()), counts);
    if (!ahead.empty()) readAheadIteration(body, ahead, stages, operands[0], operands[1], args[0]);
    ++regionDepth_;
    block(body);
    --regionDepth_;
    b_.closeRegion();
    splitInto(op.results, 0, results, counts);
    if (!ahead.empty()) b_.effect(KOp::async_wait, {}, {{"pending", int64_t{0}}});  // nothing lands on later allocations
    for (ir::ValueId v : ahead) {
      for (ir::ValueId view : readAhead_.at(v).views) readAheadViews_.erase(view);
      readAhead_.erase(v);
    }
    sharedFloor_ = floor;
  }
  // Before the loop: copies of iterations start .. start + stages - 2 into stages 0 .. stages - 2.
  void readAheadPrologue(const ir::Block& body, const std::vector<ir::ValueId>& ahead, int64_t stages, Reg start, Reg end) {
    stagesUsed_ = std::max(stagesUsed_, stages);
    b_.effect(KOp::barrier);  // the rings alias earlier allocations: their readers are done
    for (int64_t s = 0; s + 1 < stages; ++s) {
      Reg k = b_.binary("add", start, b_.constant(DType::i64, double(s)));
      issueReadAhead(body, ahead, k, b_.constant(DType::i64, double(s)), b_.cmp("lt", k, end));
    }
  }
  // At the top of iteration k: its copies have landed (stages - 2 later ones may still fly)
  // and every thread is done with iteration k - 1's stage, which the copies for
  // k + stages - 1 now refill; the dots read stage (k - start) % stages.
  void readAheadIteration(const ir::Block& body, const std::vector<ir::ValueId>& ahead, int64_t stages, Reg start,
                          Reg end, Reg k) {
    b_.effect(KOp::async_wait, {}, {{"pending", stages - 2}});
    b_.effect(KOp::barrier);
    Reg step = b_.binary("sub", k, start), S = b_.constant(DType::i64, double(stages));
    Reg distance = b_.constant(DType::i64, double(stages - 1));  // how far the copies run ahead
    Reg later = b_.binary("add", k, distance);
    issueReadAhead(body, ahead, later, b_.binary("rem", b_.binary("add", step, distance), S), b_.cmp("lt", later, end));
    Reg stage = b_.binary("rem", step, S);
    for (ir::ValueId v : ahead) readAhead_.at(v).staged.base = stageOffset(readAhead_.at(v), stage);
  }
  // The tile IR's while: each region's arguments are the carried registers.
  void whileLoop(const ir::Op& op) {
    auto [inits, types, counts] = carried(op, 0);
    std::vector<Reg> results = b_.emitMulti(KOp::while_loop, types, inits, {});
    for (const ir::Block& region : op.regions) {
      splitInto(region.args, 0, b_.openRegion(types), counts);
      ++regionDepth_;
      block(region);
      --regionDepth_;
      b_.closeRegion();
    }
    splitInto(op.results, 0, results, counts);
  }
  // An if as two loops of at most one iteration, the kernel IR's structured control flow: the
  // then side runs where the (uniform) condition holds, the else side otherwise; the results
  // pass through both as carried registers.
  void branch(const ir::Op& op) {
    Reg cond = regs_.at(op.operands[0]).at(0);
    std::vector<DType> types;
    std::vector<size_t> counts;
    std::vector<Reg> carried;
    for (ir::ValueId r : op.results) {
      counts.push_back(size_t(countOf(r)));
      types.insert(types.end(), counts.back(), dtypeOf(r));
      carried.insert(carried.end(), counts.back(), b_.constant(dtypeOf(r), 0));
    }
    std::vector<DType> argTypes = types;
    argTypes.insert(argTypes.begin(), DType::i64);
    Reg zero = b_.constant(DType::i64, 0), one = b_.constant(DType::i64, 1);
    for (size_t side = 0; side < 2; ++side) {
      std::vector<Reg> operands{zero, side == 0 ? b_.select(cond, one, zero) : b_.select(cond, zero, one)};
      operands.insert(operands.end(), carried.begin(), carried.end());
      carried = b_.emitMulti(KOp::for_loop, types, operands, {});
      b_.openRegion(argTypes);
      ++regionDepth_;
      block(op.regions[side]);
      --regionDepth_;
      b_.closeRegion();
    }
    splitInto(op.results, 0, carried, counts);
  }
  void splitInto(const std::vector<ir::ValueId>& values, size_t first, const std::vector<Reg>& flat,
                 const std::vector<size_t>& counts) {
    size_t at = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      define(values[first + i], std::vector<Reg>(flat.begin() + std::ptrdiff_t(at), flat.begin() + std::ptrdiff_t(at + counts[i])));
      at += counts[i];
    }
  }
  void yield(const ir::Op& op) {
    std::vector<Reg> flat;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      std::vector<Reg> v = operand(op, int(i));
      flat.insert(flat.end(), v.begin(), v.end());
    }
    b_.effect(KOp::yield, flat);
  }

  // ---- read-ahead: a fold's dot operands copied asynchronously into rings of stages ----
  struct ReadAhead {
    const ir::Op* load;
    std::vector<ir::ValueId> views;        // the load's result, then the views between it and the dot
    std::vector<const ir::Op*> offsetOps;  // the body's ops its offsets need, in order
    LinearLayout at;                       // the dot operand's layout, in the load's coordinates
    LinearLayout storeAt;                  // the dot operand's layout -> element offset in a stage
    int64_t vec, stageElements;
    Staged staged;  // the dot's view of the ring; base: the current iteration's stage
  };

  // The dot operands of `body` that can be read ahead, each given a ring of `stages` buffers
  // below a raised allocation floor: a block load with zero fill, seen through views (permutes,
  // unit-dimension reshapes) each used once, read by a matrix-unit dot through workgroup
  // memory, at offsets computed from k and values from outside the body, in copies of 4, 8
  // or 16 bytes.
  std::vector<ir::ValueId> planReadAhead(const ir::Block& body, int64_t stages) {
    auto usedOnce = [&](ir::ValueId v) { return uses_.count(v) && uses_.at(v) == 1; };
    std::vector<ir::ValueId> planned;
    for (const ir::Op& dot : body.ops) {
      if (dot.code != ir::OpCode::dot || !a_.of(dot.results[0]).as<layout::MatrixAcc>()) continue;
      for (int i = 0; i < 2; ++i) {
        ir::ValueId v = dot.operands[size_t(i)];
        const layout::Conversion* c = conversionOf(dot, i);
        if (!c || c->kind != layout::ConversionKind::shared_memory) continue;
        std::vector<ir::ValueId> views = {v};
        CoordMap toLoad = [](const Coord& x) { return x; };
        const ir::Op* load = producerIn(body, v);
        while (load && load->code != ir::OpCode::load && load->code != ir::OpCode::broadcast && usedOnce(views.front())) {
          std::optional<CoordMap> map = viewMap(*load);
          if (!map) break;
          toLoad = [inner = *map, outer = toLoad](const Coord& x) { return inner(outer(x)); };
          views.insert(views.begin(), load->operands[0]);
          load = producerIn(body, load->operands[0]);
        }
        if (!load || load->code != ir::OpCode::load || !usedOnce(views.front()) || !zeroFill(*load)) continue;
        std::optional<std::vector<const ir::Op*>> offsetOps = offsetSlice(body, *load);
        if (!offsetOps) continue;
        layout::Layout mem = c->via ? layout::Layout{*c->via} : plainShared(v);
        std::optional<LinearLayout> offsetOf = layout::toLinear(mem, k_.type(v).shape).invert();
        if (!offsetOf) continue;
        DType dt = k_.type(v).dtype;
        LinearLayout from = linear(v), storeAt = offsetOf->compose(from), loadAt = offsetOf->compose(linear(*c->to, v));
        LinearLayout at = mapped(from, toLoad, k_.type(load->results[0]).shape);
        int64_t stageBytes = alignTo16(paddedNumel(v) * dtypeBytes(dt));
        int64_t ring = allocShared(stages * stageBytes, dt, layout::str(mem) + ", a read-ahead ring of " + std::to_string(stages));
        int64_t vec = std::min(vectorWidth(*load, load->intAttr("tensor"), at, k_.type(load->results[0]).shape),
                               sharedVectorWidth(storeAt, dt, ring));
        if (int64_t bytes = vec * dtypeBytes(dt); bytes != 4 && bytes != 8 && bytes != 16) {
          f_.shared.pop_back();
          continue;
        }
        sharedFloor_ = f_.shared[size_t(ring)].offset + stages * stageBytes;
        readAhead_.emplace(v, ReadAhead{load, views, *offsetOps, at, storeAt, vec, stageBytes / dtypeBytes(dt),
                                        {ring, loadAt, matrixLoad(loadAt, dt, ring)}});
        readAheadViews_.insert(views.begin(), views.end());
        planned.push_back(v);
      }
    }
    return planned;
  }
  // `lin` with each basis sent through `map` into coordinates of `shape` (padded).
  static LinearLayout mapped(const LinearLayout& lin, const CoordMap& map, const ir::Shape& shape) {
    std::vector<LinearLayout::InDim> ins;
    for (const LinearLayout::InDim& in : lin.ins()) {
      ins.push_back({in.name, {}});
      for (const Basis& b : in.bases) ins.back().bases.push_back(map(b));
    }
    std::vector<LinearLayout::OutDim> outs;
    ir::Shape padded = layout::paddedShape(shape);
    for (size_t d = 0; d < padded.size(); ++d) outs.push_back({"dim" + std::to_string(d), padded[d]});
    return LinearLayout(ins, outs);
  }
  static const ir::Op* producerIn(const ir::Block& body, ir::ValueId v) {
    for (const ir::Op& o : body.ops)
      if (std::ranges::count(o.results, v)) return &o;
    return nullptr;
  }
  // Whether a load's fill is what zero-filling copies write: +0 (or integer 0).
  static bool zeroFill(const ir::Op& load) {
    const ir::AttrValue* fill = load.attr("fill");
    if (!fill) return true;
    if (std::holds_alternative<int64_t>(*fill)) return std::get<int64_t>(*fill) == 0;
    return std::bit_cast<uint64_t>(std::get<double>(*fill)) == 0;
  }
  // The body's ops a load's offsets are computed by, when they read only k, values from outside
  // the body and each other (scalar ops that neither read nor write memory); nullopt otherwise.
  std::optional<std::vector<const ir::Op*>> offsetSlice(const ir::Block& body, const ir::Op& load) {
    std::set<const ir::Op*> needed;
    std::function<bool(ir::ValueId)> need = [&](ir::ValueId v) {
      if (v == body.args[0]) return true;
      if (std::ranges::count(body.args, v)) return false;  // a carried value
      const ir::Op* o = producerIn(body, v);
      if (!o) return true;  // from outside the body
      if (needed.count(o)) return true;
      bool scalar = o->regions.empty() && !ir::readsTensor(o->code) && !ir::writesTensor(o->code) &&
                    o->code != ir::OpCode::check && o->code != ir::OpCode::print && k_.type(v).rank() == 0;
      if (!scalar || !std::ranges::all_of(o->operands, need)) return false;
      needed.insert(o);
      return true;
    };
    for (size_t d = 0; d < load.operands.size(); ++d)
      if (!need(load.operands[d])) return std::nullopt;
    std::vector<const ir::Op*> ordered;
    for (const ir::Op& o : body.ops)
      if (needed.count(&o)) ordered.push_back(&o);
    return ordered;
  }
  // Starts the copies of iteration k (i64) into stage `stage` (i64) of each ring, where `live`;
  // then closes their group. The loads' offsets are computed again for this k.
  void issueReadAhead(const ir::Block& body, const std::vector<ir::ValueId>& ahead, Reg k, Reg stage, Reg live) {
    std::map<ir::ValueId, std::optional<std::vector<Reg>>> saved;
    auto save = [&](ir::ValueId v) {
      auto it = regs_.find(v);
      saved.try_emplace(v, it == regs_.end() ? std::nullopt : std::optional(it->second));
    };
    save(body.args[0]);
    define(body.args[0], {k});
    for (ir::ValueId v : ahead) {
      const ReadAhead& r = readAhead_.at(v);
      for (const ir::Op* o : r.offsetOps) {
        for (ir::ValueId res : o->results) save(res);
        lower(*o);
      }
      int64_t tensor = r.load->intAttr("tensor");
      DType dt = k_.type(v).dtype;
      Reg base = stageOffset(r, stage);
      for (int64_t reg = 0; reg < registerCount(r.at); reg += r.vec) {
        auto [addr, pred] = blockAddress(*r.load, tensor, coords(r.at, reg));
        b_.effect(KOp::async_copy, {addr, b_.binary("and", pred, live), b_.binary("add", coords(r.storeAt, reg)[0], base)},
                  {{"buffer", paramIndex(tensorName(tensor))}, {"alloc", r.staged.alloc}, {"bytes", r.vec * dtypeBytes(dt)}});
      }
    }
    b_.effect(KOp::async_commit);
    for (auto& [v, regs] : saved) {
      if (regs) regs_[v] = *regs;
      else regs_.erase(v);
    }
  }

  // The i32 element offset of stage `stage` (i64) in a ring.
  Reg stageOffset(const ReadAhead& r, Reg stage) {
    return castTo(b_.binary("mul", stage, b_.constant(DType::i64, double(r.stageElements))), DType::i32);
  }

  // ---- dot ----
  void dot(const ir::Op& op) {
    const layout::Layout& result = a_.of(op.results[0]);
    if (k_.type(op.results[0]).rank() != 2) unsupported(op, "of rank " + std::to_string(k_.type(op.results[0]).rank()));
    if (result.as<layout::Blocked>()) return fmaDot(op);
    const layout::MatrixAcc* acc = result.as<layout::MatrixAcc>();
    const layout::MatrixUnit* found = acc ? t_.matrixOf(acc->instr) : nullptr;
    if (!found) unsupported(op, "with layout " + layout::str(result));
    const layout::MatrixUnit& unit = *found;  // inference keeps padded shapes off matrix units
    // The accumulator first, its conversion done; then a and b, live together in workgroup memory.
    LinearLayout cLin = linear(op.results[0]);
    std::vector<Reg> c = op.operands.size() == 3
                             ? operand(op, 2)
                             : std::vector<Reg>(size_t(registerCount(cLin)), b_.constant(dtypeOf(op.results[0]), 0.0));
    Operand a = lazyOperand(op, 0, 0);
    Operand b = lazyOperand(op, 1, alignTo16(a.sharedEnd()));
    // Each operand's registers by instruction tile (row, column), in fragment order.
    auto fragments = [&](int i, int64_t rows, int64_t cols) {
      LinearLayout lin = layout::toLinear(operandLayout(op, i), k_.type(op.operands[size_t(i)]).shape);
      std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> tiles;
      for (int64_t r = 0; r < registerCount(lin); ++r) {
        Coord x = input(lin, layout::kRegister, r);
        tiles[{x[0] / rows, x[1] / cols}].push_back(r);
      }
      return tiles;
    };
    auto aTiles = fragments(0, unit.m, unit.k), bTiles = fragments(1, unit.k, unit.n);
    std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> cTiles;  // tile -> register indices
    for (int64_t r = 0; r < registerCount(cLin); ++r) {
      Coord x = input(cLin, layout::kRegister, r);
      cTiles[{x[0] / unit.m, x[1] / unit.n}].push_back(r);
    }
    // f16/bf16 products accumulate in f32 across the k tiles and round once (the dot's semantics).
    DType resultT = dtypeOf(op.results[0]);
    DType accT = resultT == DType::f16 || resultT == DType::bf16 ? DType::f32 : resultT;
    std::vector<KAttr> attrs = {{"instr", std::string(layout::instrName(unit.instr))},
                                {"m", unit.m}, {"n", unit.n}, {"k", unit.k},
                                {"a", std::string(dtypeName(dtypeOf(op.operands[0])))},
                                {"b", std::string(dtypeName(dtypeOf(op.operands[1])))},
                                {"c", std::string(dtypeName(accT))}};
    std::map<std::pair<int64_t, int64_t>, std::vector<Reg>> d;  // each result tile's running sum
    for (const auto& [tile, indices] : cTiles)
      for (int64_t r : indices) d[tile].push_back(castTo(c.at(size_t(r)), accT));
    // k outermost: a step's fragments are loaded just before its instructions and die after them.
    std::set<int64_t> kSteps;
    for (const auto& [tile, regs] : aTiles) kSteps.insert(tile.second);
    for (int64_t kk : kSteps)
      for (auto& [tile, sum] : d) {
        auto aIt = aTiles.find({tile.first, kk}), bIt = bTiles.find({kk, tile.second});
        if (aIt == aTiles.end() || bIt == bTiles.end())
          unsupported(op, "with layout " + layout::str(result) + ": operand fragments do not pair");
        std::vector<Reg> operands;
        for (int64_t r : aIt->second) operands.push_back(a.get(r));
        for (int64_t r : bIt->second) operands.push_back(b.get(r));
        operands.insert(operands.end(), sum.begin(), sum.end());
        sum = b_.emitMulti(KOp::mma, std::vector<DType>(sum.size(), accT), operands, attrs);
      }
    for (const auto& [tile, indices] : cTiles)
      for (size_t i = 0; i < indices.size(); ++i) c.at(size_t(indices[i])) = castTo(d[tile][i], resultT);
    define(op.results[0], c);
  }

  // An FMA dot: a and b go to workgroup memory row-major from the layouts they were computed in
  // (instead of the operand layouts inference chose: those hold all of k in registers); then
  // a loop over k multiplies and adds into each result register.
  void fmaDot(const ir::Op& op) {
    int64_t K = k_.type(op.operands[0]).shape[1];  // the loop stays inside k; rows are padded
    int64_t Kp = layout::paddedShape({K})[0], Np = layout::paddedShape(k_.type(op.operands[1]).shape)[1];
    DType resultT = dtypeOf(op.results[0]);
    DType accT = resultT == DType::f16 || resultT == DType::bf16 ? DType::f32 : resultT;
    // The accumulator first: converting it may go through workgroup memory, where a and b go next.
    std::optional<std::vector<Reg>> acc;
    if (op.operands.size() == 3) acc = operand(op, 2);
    b_.effect(KOp::barrier);  // earlier readers of the aliased buffer are done
    int64_t aAlloc = stageRowMajor(op.operands[0], 0);
    int64_t bAlloc = stageRowMajor(op.operands[1], f_.shared[size_t(aAlloc)].bytes);  // live with a
    b_.effect(KOp::barrier);
    LinearLayout cLin = linear(op.results[0]);
    std::vector<std::vector<Reg>> at;  // each result register's (row, column), hoisted out of the loop
    for (int64_t r = 0; r < registerCount(cLin); ++r) at.push_back(coords(cLin, r));
    std::vector<Reg> c = acc ? *acc : std::vector<Reg>(at.size(), b_.constant(resultT, 0.0));
    std::vector<Reg> inits = {b_.constant(DType::i32, 0), b_.constant(DType::i32, double(K))};
    for (Reg r : c) inits.push_back(b_.type(r) == accT ? r : b_.emit(KOp::cast, accT, {r}));
    std::vector<Reg> sums = b_.emitMulti(KOp::for_loop, std::vector<DType>(c.size(), accT), inits, {});
    std::vector<Reg> args = b_.openRegion([&] { std::vector<DType> t(c.size() + 1, accT); t[0] = DType::i32; return t; }());
    Reg kk = args[0];
    // Registers of one row (column) of the result read the same element of a (b): once each.
    std::map<std::pair<int64_t, Reg>, Reg> loaded;
    auto load = [&](int64_t alloc, Reg index) {
      auto [it, fresh] = loaded.try_emplace({alloc, index}, -1);
      if (fresh) it->second = castTo(b_.emit(KOp::load_shared, f_.shared[size_t(alloc)].dtype, {index}, {{"alloc", alloc}}), accT);
      return it->second;
    };
    std::vector<Reg> next;
    for (size_t r = 0; r < c.size(); ++r) {
      Reg aIndex = b_.binary("add", b_.binary("mul", at[r][0], b_.constant(DType::i32, double(Kp))), kk);
      Reg bIndex = b_.binary("add", b_.binary("mul", kk, b_.constant(DType::i32, double(Np))), at[r][1]);
      Reg a = load(aAlloc, aIndex), b = load(bAlloc, bIndex);
      next.push_back(b_.binary("add", args[r + 1], b_.binary("mul", a, b)));
    }
    b_.effect(KOp::yield, next);
    b_.closeRegion();
    for (Reg& r : sums) r = castTo(r, resultT);
    define(op.results[0], sums);
  }
  Reg castTo(Reg r, DType t) { return b_.type(r) == t ? r : b_.emit(KOp::cast, t, {r}); }
  // Stores a tile's registers (in the layout it was computed in) row-major over its
  // padded shape; the caller brackets the stores with barriers.
  int64_t stageRowMajor(ir::ValueId v, int64_t offset) {
    DType dt = k_.type(v).dtype;
    int64_t alloc = allocShared(paddedNumel(v) * dtypeBytes(dt), dt, "row-major", offset);
    LinearLayout lin = linear(v);
    for (int64_t r = 0; r < registerCount(lin); ++r) {
      Reg index = rowMajor(coords(lin, r), layout::paddedShape(k_.type(v).shape));
      b_.effect(KOp::store_shared, {index, regs_.at(v).at(size_t(r))}, {{"alloc", alloc}});
    }
    return alloc;
  }

  const ir::Kernel& k_;
  const layout::LayoutAssignment& a_;
  const layout::Target& t_;
  KernelLoweringOptions options_;
  KernelFunction f_;
  KBuilder b_;
  std::map<ir::ValueId, std::vector<Reg>> regs_;
  std::map<ir::ValueId, const ir::Op*> producers_;
  std::vector<int64_t> divisors_;  // ir::knownDivisors: what keeps block offsets aligned
  std::map<ir::ValueId, ReadAhead> readAhead_;  // the dot operands of the folds being lowered read ahead
  std::set<ir::ValueId> readAheadViews_;        // their loads and views, never in registers
  int64_t sharedFloor_ = 0;  // allocations start here: below lie those folds' rings
  int64_t stagesUsed_ = 1;   // the most stages a fold read ahead with
  std::map<ir::ValueId, int> uses_;  // how many operands read each value
  int64_t checks_ = 0;           // check ops lowered so far: the next one's number
  int regionDepth_ = 0;
};

}  // namespace

bool allowsVectorAccess(uintptr_t address, DType t, const std::vector<int64_t>& sizes,
                        const std::vector<int64_t>& strides, int64_t bytes) {
  int64_t elements = bytes / dtypeBytes(t);
  if (sizes.empty() || elements < 1 || address % uint64_t(bytes) != 0) return false;
  if (strides.back() != 1 || sizes.back() % elements != 0) return false;
  return std::all_of(strides.begin(), strides.end() - 1, [&](int64_t s) { return s % elements == 0; });
}

KernelFunction lowerToKernelIR(const ir::Kernel& k, const layout::LayoutAssignment& a, const layout::Target& t,
                               const KernelLoweringOptions& options) {
  if (t.name == "cpu") throw Error("kernel ir: unsupported: target cpu (one thread per program; use the llvm stage)");
  KernelLoweringOptions tried = options;
  while (true) {
    try {
      return Lowering(k, a, t, tried).run();
    } catch (const Lowering::SharedOverBudget& e) {
      if (e.stages <= 1) throw;
      tried.maxStages = e.stages - 1;  // smaller rings
    }
  }
}

}  // namespace tj::gpu
