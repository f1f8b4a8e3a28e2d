// Layout inference, in the spirit of Triton's TritonGPU passes but in one walk:
//  - anchors: a dot fixes its result/accumulator layout (matrix-core fragments when
//    the target multiplies its dtypes, else Blocked) and its operands' layouts; a
//    load is coalesced Blocked (16 bytes per thread along the last dimension);
//  - forward: elementwise ops take an operand's layout (a dot's over a load's),
//    reductions give Slice(parent, axis), shape ops move the layout when no data moves;
//  - backward: "free" values (constants, iota, broadcast scalars and math on them)
//    have no layout until a consumer needs one, and are then made directly in it;
//    so are loads that are only broadcast (a layernorm's weight row);
//  - a fold's carried values take the layout their body settles on (so a dot's
//    accumulator stays in fragments across the loop);
//  - a conversion is recorded only where a value's layout and the layout its user
//    needs differ as linear layouts.
#include "layout/infer_layouts.hpp"

#include <algorithm>
#include <bit>

#include "ir/error.hpp"
#include "ir/op_cases.hpp"

// A switch over OpCode that leaves out an op is an error here (ir/op_cases.hpp).
#pragma GCC diagnostic error "-Wswitch"

namespace tj::layout {

using ir::Op;
using ir::OpCode;
using ir::ValueId;

const std::vector<Target>& targets() {
  const MatrixUnit mma{MatrixInstr::mma_m16n8k16, 16, 8, 16, {DType::f16, DType::bf16}};
  // i8 x i8 and u8 x i8 (a's dtype listed; b is i8) into i32.
  const MatrixUnit mmaI8{MatrixInstr::mma_m16n8k32, 16, 8, 32, {DType::i8, DType::u8}};
  // sm_89 and later multiply 8-bit floats on the same m16n8k32 shape (f32 accumulators).
  const MatrixUnit mmaBytes{MatrixInstr::mma_m16n8k32, 16, 8, 32, {DType::i8, DType::u8, DType::f8e4m3, DType::f8e5m2}};
  const MatrixUnit wmma{MatrixInstr::wmma_16x16x16, 16, 16, 16, {DType::f16, DType::bf16}};
  const MatrixUnit mfma{MatrixInstr::mfma_32x32x8, 32, 32, 8, {DType::f16, DType::bf16}};
  // Tiles with 16 rows or columns: 16x16x16 (4 blocks of k a lane holds 4 of).
  const MatrixUnit mfma16{MatrixInstr::mfma_16x16x16, 16, 16, 16, {DType::f16, DType::bf16}};
  // Per warpgroup 64 rows, N any multiple of 16 (the instruction's N up to 256), k 16.
  const MatrixUnit wgmma{MatrixInstr::wgmma_m64k16, 64, 16, 16, {DType::f16, DType::bf16}};
  const MatrixUnit wgmma8{MatrixInstr::wgmma_m64k32, 64, 16, 32, {DType::f8e4m3, DType::f8e5m2}};
  auto nvidia = [](Target t) {
    t.ldmatrix = true;
    t.vectorBytes = 16;
    t.asyncCopy = true;
    t.defaultStages = 2;
    return t;
  };
  auto amd = [](Target t) {
    t.vectorBytes = 16;  // global_load_b128 / ds_load_b128 (dwordx4)
    t.registerStaging = true;
    t.defaultStages = 2;
    return t;
  };
  auto hopper = [](Target t) {
    t.tma = true;
    t.splitMaskedFolds = true;
    return t;
  };
  static const std::vector<Target> all = {
      {"vulkan", 8, 4, 1024, 32 * 1024, {}},  // lavapipe: 8-wide subgroups, no matrix unit
      nvidia({"sm_80", 32, 4, 1024, 48 * 1024, {mma, mmaI8}}),
      nvidia({"sm_89", 32, 4, 1024, 99 * 1024, {mma, mmaBytes}}),  // Ada: FP8 on QMMA
      nvidia({"sm_90", 32, 4, 1024, 228 * 1024, {mma, mmaBytes}}),
      // Hopper's architecture-specific features (wgmma); dots wgmma cannot take fall to mma.sync.
      hopper(nvidia({"sm_90a", 32, 4, 1024, 228 * 1024, {wgmma, wgmma8, mma, mmaBytes}})),
      amd({"gfx1100", 32, 4, 1024, 64 * 1024, {wmma}}),
      amd({"gfx942", 64, 4, 1024, 64 * 1024, {mfma, mfma16}}),
      {"cpu", 1, 1, 1, 0, {}},  // one thread per program: every tile in its registers
  };
  return all;
}

const MatrixUnit* Target::matrixOf(MatrixInstr i) const {
  auto it = std::ranges::find(matrixUnits, i, &MatrixUnit::instr);
  return it == matrixUnits.end() ? nullptr : &*it;
}

const Target& targetByName(const std::string& name) {
  std::string names;
  for (const Target& t : targets()) {
    if (t.name == name) return t;
    names += (names.empty() ? "" : ", ") + t.name;
  }
  throw Error("unknown target '" + name + "'; known: " + names);
}

namespace {

// Ops whose result and operands share one layout: element i depends on the operands' elements
// i alone (a gather or an atomic reaches the tensor at its coordinates' element i), or, for a
// scan, moves through workgroup memory in the lowering.
bool isElementwise(OpCode c) {
  return ir::isUnaryElementwise(c) || ir::isBinaryElementwise(c) || c == OpCode::select || c == OpCode::fma ||
         c == OpCode::cast || c == OpCode::gather || c == OpCode::atomic || c == OpCode::scan;
}

// x clamped to [1, hi] and rounded down to a power of two (thread and vector counts are).
int64_t pow2Clamp(int64_t x, int64_t hi) {
  return static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(std::clamp<int64_t>(x, 1, std::max<int64_t>(hi, 1)))));
}

// Sized dimensions keep their order; unit dimensions hold one element, so they come and go
// freely, except those over which threads replicate: each moves to a unit dimension of the
// new shape, which keeps the same threads holding each element.
std::optional<Blocked> reshapedBlocked(const Blocked& b, const Shape& from, const Shape& to) {
  auto replicates = [&](size_t d) { return b.threadsPerWarp[d] != 1 || b.warpsPerCTA[d] != 1; };
  std::vector<size_t> oldDims, newDims, oldUnits, newUnits;
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1) oldDims.push_back(d);
    else if (replicates(d)) oldUnits.push_back(d);
  for (size_t d = 0; d < to.size(); ++d) (to[d] != 1 ? newDims : newUnits).push_back(d);
  if (oldUnits.size() > newUnits.size()) return std::nullopt;
  oldDims.insert(oldDims.end(), oldUnits.begin(), oldUnits.end());
  newDims.insert(newDims.end(), newUnits.begin(), newUnits.begin() + static_cast<int64_t>(oldUnits.size()));
  Blocked r{Shape(to.size(), 1), Shape(to.size(), 1), Shape(to.size(), 1), {}};
  std::vector<int64_t> newIndex(from.size(), -1);
  std::vector<bool> placed(to.size(), false);
  for (size_t j = 0; j < oldDims.size(); ++j) {
    r.sizePerThread[newDims[j]] = b.sizePerThread[oldDims[j]];
    r.threadsPerWarp[newDims[j]] = b.threadsPerWarp[oldDims[j]];
    r.warpsPerCTA[newDims[j]] = b.warpsPerCTA[oldDims[j]];
    newIndex[oldDims[j]] = static_cast<int64_t>(newDims[j]);
    placed[newDims[j]] = true;
  }
  for (int64_t d : b.order)
    if (newIndex[d] >= 0) r.order.push_back(newIndex[d]);
  for (size_t d = to.size(); d-- > 0;)
    if (!placed[d]) r.order.push_back(static_cast<int64_t>(d));
  return r;
}

// The layout of reshape(x) when no data moves, from x's layout; nullopt otherwise.
std::optional<Layout> reshaped(const Layout& l, const Shape& from, const Shape& to) {
  if (nonUnitDims(from) != nonUnitDims(to)) return std::nullopt;
  if (const auto* s = l.as<Slice>()) {  // expand_dims of a reduction: back to its parent
    Shape grown = from;
    grown.insert(grown.begin() + s->dim, 1);
    if (grown == to) return *s->parent;
    if (auto r = reshaped(*s->parent, grown, to)) return r;  // the parent, the reduced dimension kept as a unit one
  }
  if (const auto* b = l.as<Blocked>()) {
    if (auto r = reshapedBlocked(*b, from, to)) return Layout{*r};
  }
  if (const auto* m = l.as<MatrixAcc>(); m && from.size() >= 2 && to.size() >= 2 &&
                                          std::equal(from.end() - 2, from.end(), to.end() - 2)) {
    Shape wpc(to.size() - 2, 1);  // leading (batch) unit dimensions
    wpc.insert(wpc.end(), m->warpsPerCTA.end() - 2, m->warpsPerCTA.end());
    return Layout{MatrixAcc{m->instr, wpc}};
  }
  for (size_t d = 0; d < from.size(); ++d) {  // dropping one unit dimension slices it away
    Shape shrunk = from;
    shrunk.erase(shrunk.begin() + static_cast<int64_t>(d));
    if (from[d] == 1 && shrunk == to) return Layout{Slice{static_cast<int64_t>(d), make(l)}};
  }
  return std::nullopt;
}

std::vector<int64_t> inversePerm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inverse;
}

std::optional<Layout> permuted(const Layout& l, const std::vector<int64_t>& perm) {
  const auto* b = l.as<Blocked>();
  if (!b) return std::nullopt;
  Blocked r = *b;
  for (size_t i = 0; i < perm.size(); ++i) {
    size_t from = static_cast<size_t>(perm[i]);
    r.sizePerThread[i] = b->sizePerThread[from];
    r.threadsPerWarp[i] = b->threadsPerWarp[from];
    r.warpsPerCTA[i] = b->warpsPerCTA[from];
  }
  std::vector<int64_t> inverse = inversePerm(perm);
  for (int64_t& d : r.order) d = inverse[static_cast<size_t>(d)];
  return Layout{r};
}

class Inference {
 public:
  Inference(const ir::Kernel& k, const Target& t)
      : k_(k),
        t_(t),
        layouts_(k.types.size()),
        producers_(k.types.size(), nullptr),
        users_(k.types.size()),
        uniform_(make(Layout{Uniform{}})) {}

  LayoutAssignment run() {
    recordProducers(k_.body);
    visit(k_.body);
    for (size_t v = 0; v < layouts_.size(); ++v)
      if (!layouts_[v]) settle(static_cast<ValueId>(v), defaultLayout(static_cast<ValueId>(v)));
    return {t_.name, layouts_, conversions_};
  }

 private:
  const ir::Type& type(ValueId v) const { return k_.type(v); }
  bool isTile(ValueId v) const { return !type(v).isScalar(); }
  LayoutPtr& at(ValueId v) { return layouts_[static_cast<size_t>(v)]; }

  void recordProducers(const ir::Block& b) {
    for (const Op& op : b.ops) {
      for (ValueId r : op.results) producers_[static_cast<size_t>(r)] = &op;
      for (ValueId v : op.operands) users_[static_cast<size_t>(v)].push_back(&op);
      for (const ir::Block& region : op.regions) recordProducers(region);
    }
  }

  // Coalesced: 16 bytes per thread along the last dimension, lanes fastest along it,
  // warps along the first; threads left over replicate the outermost dimension.
  Blocked coalesced(const ir::Type& tile) const {
    ir::Type t{tile.dtype, paddedShape(tile.shape)};
    size_t rank = t.shape.size(), last = rank - 1;
    Blocked b{Shape(rank, 1), Shape(rank, 1), Shape(rank, 1), rowMajorOrder(rank)};
    if (t_.subgroupSize * t_.warpsPerProgram == 1) {
      b.sizePerThread = t.shape;
      return b;
    }
    b.sizePerThread[last] = pow2Clamp(16 / dtypeBytes(t.dtype), t.shape[last]);
    int64_t lanes = t_.subgroupSize, warps = t_.warpsPerProgram;
    for (size_t d = rank; d-- > 0; lanes /= b.threadsPerWarp[d])
      b.threadsPerWarp[d] = pow2Clamp(t.shape[d] / b.sizePerThread[d], lanes);
    for (size_t d = 0; d < rank; warps /= b.warpsPerCTA[d], ++d)
      b.warpsPerCTA[d] = pow2Clamp(t.shape[d] / (b.sizePerThread[d] * b.threadsPerWarp[d]), warps);
    size_t outer = 0;
    while (outer + 1 < rank && t.shape[outer] == 1) ++outer;
    b.threadsPerWarp[outer] *= lanes;
    b.warpsPerCTA[outer] *= warps;
    return b;
  }

  LayoutPtr defaultLayout(ValueId v) const { return isTile(v) ? make(Layout{coalesced(type(v))}) : uniform_; }

  // Workgroup memory for a conversion: 16-byte vectors, rows XOR-swizzled across one
  // 128-byte line of banks (32 banks of 4 bytes on NVIDIA and AMD).
  Shared sharedFor(const ir::Type& tile, const Layout& from) const {
    const auto* b = from.as<Blocked>();
    return sharedFor(tile, b ? b->order : rowMajorOrder(tile.shape.size()));
  }
  Shared sharedFor(const ir::Type& tile, std::vector<int64_t> order) const {
    ir::Type t{tile.dtype, paddedShape(tile.shape)};
    size_t rank = t.shape.size();
    int64_t bytes = dtypeBytes(t.dtype), inner = t.shape[static_cast<size_t>(order[0])];
    int64_t vec = pow2Clamp(16 / bytes, inner);
    if (rank < 2) return {vec, 1, 1, order};
    int64_t perPhase = pow2Clamp(128 / (inner * bytes), 8);
    int64_t maxPhase = pow2Clamp(std::min(inner / vec, 8 / perPhase), 8);
    return {vec, perPhase, maxPhase, order};
  }

  // The workgroup memory a conversion from `from` into `to` passes through: wgmma reads its
  // operands there, in its swizzled layout: rows along the source's fastest dimension (16-bit
  // operands, either major), K-major for 8-bit ones (the only form wgmma reads them in).
  Shared viaFor(const ir::Type& tile, const Layout& from, const Layout& to) const {
    const auto* operand = to.as<DotOperand>();
    const auto* acc = operand ? operand->parent->as<MatrixAcc>() : nullptr;
    if (acc && isWgmma(acc->instr)) {
      const auto* b = from.as<Blocked>();
      std::vector<int64_t> order = acc->instr == MatrixInstr::wgmma_m64k32 ? wgmmaKMajor(operand->opIdx)
                                   : b                                      ? b->order
                                                                            : rowMajorOrder(2);
      if (auto s = wgmmaShared(tile.dtype, paddedShape(tile.shape), order)) return *s;
    }
    // MFMA's and WMMA's b fragments hold a run of k per lane: stored k-fastest, it is read as vectors.
    bool amdB = acc &&
                (acc->instr == MatrixInstr::mfma_32x32x8 || acc->instr == MatrixInstr::mfma_16x16x16 ||
                 acc->instr == MatrixInstr::wmma_16x16x16) &&
                operand->opIdx == 1;
    if (amdB) return sharedFor(tile, std::vector<int64_t>{0, 1});
    return sharedFor(tile, from);
  }

  // `user` reads operand `index` (the value v) in layout l.
  void require(ValueId v, const LayoutPtr& l, const Op& user, size_t index) {
    if (!at(v)) return settle(v, l);
    ConversionKind kind = conversionKind(*at(v), *l, type(v).shape);
    if (kind == ConversionKind::none) return;
    if (kind == ConversionKind::shared_memory && rebroadcast(v, l)) return;
    std::optional<Shared> via;
    if (kind == ConversionKind::shared_memory) via = viaFor(type(v), *at(v), *l);
    conversions_.push_back({v, &user, static_cast<int>(index), at(v), l, kind, via});
  }

  // A broadcast read only by one op, in a layout its own would reach through workgroup memory,
  // is made in that layout instead, so that its source converts (a row of scales, not the
  // block they scale), as Triton rematerializes broadcasts.
  bool rebroadcast(ValueId v, const LayoutPtr& l) {
    const Op* op = producers_[static_cast<size_t>(v)];
    if (!op || op->code != OpCode::broadcast || users_[static_cast<size_t>(v)].size() != 1) return false;
    std::erase_if(conversions_, [&](const Conversion& c) { return c.user == op; });
    at(v) = l;
    require(op->operands[0], l, *op, 0);
    return true;
  }

  // Gives a free value its consumer's layout, and the free values it is made from theirs.
  void settle(ValueId v, const LayoutPtr& l) {
    at(v) = l;
    const Op* op = producers_[static_cast<size_t>(v)];
    if (!op || !isTile(v)) return;
    if (isElementwise(op->code)) {
      for (size_t i = 0; i < op->operands.size(); ++i)
        if (isTile(op->operands[i])) require(op->operands[i], l, *op, i);
    } else if (op->code == OpCode::broadcast) {
      require(op->operands[0], l, *op, 0);
    } else if (op->code == OpCode::reshape && isTile(op->operands[0])) {
      shapeSource(*op, reshaped(*l, type(v).shape, type(op->operands[0]).shape));
    } else if (op->code == OpCode::permute) {
      shapeSource(*op, permuted(*l, inversePerm(op->get(ir::attr::perm))));
    }
  }

  // The source of a shape op takes `source` (no data moves), or its default layout and a conversion.
  void shapeSource(const Op& op, const std::optional<Layout>& source) {
    ValueId x = op.operands[0];
    if (source) return require(x, make(*source), op, 0);
    if (!at(x)) settle(x, defaultLayout(x));
    recordThroughMemory(op, at(op.results[0]));
  }
  void recordThroughMemory(const Op& op, const LayoutPtr& to) {
    ValueId x = op.operands[0];
    conversions_.push_back({x, &op, 0, at(x), to, ConversionKind::shared_memory, sharedFor(type(x), *at(x))});
  }

  void visit(const ir::Block& b) {
    for (const Op& op : b.ops) visitOp(op);
  }

  void visitOp(const Op& op) {
    if (op.code == OpCode::fold) return visitFold(op);
    if (op.code == OpCode::while_) return visitLoop(op, 0, 0);
    if (op.code == OpCode::if_) return visitIf(op);
    for (ValueId r : op.results)
      if (!isTile(r)) at(r) = uniform_;
    if (op.results.empty() || !isTile(op.results[0])) {
      if (ir::writesTensor(op.code)) visitWrite(op);
      return;  // scalars are uniform
    }
    visitTileOp(op);
  }

  // An op whose first result is a tile.
  void visitTileOp(const Op& op) {
    ValueId r = op.results[0];
    switch (op.code) {
      case OpCode::load:
        if (!onlyBroadcast(r)) at(r) = defaultLayout(r);
        return;
      case OpCode::dot: return visitDot(op);
      case OpCode::sort: return visitLines(op);
      case OpCode::scan: return op.regions.empty() ? visitElementwise(op) : visitLines(op);
      case OpCode::histogram: return visitHistogram(op);
      TJ_UNARY_ELEMENTWISE_OPS: TJ_BINARY_ELEMENTWISE_OPS: case OpCode::select: case OpCode::fma: case OpCode::cast:
      case OpCode::gather: case OpCode::atomic: return visitElementwise(op);
      TJ_REDUCTION_OPS: return visitReduction(op);
      TJ_SHAPE_OPS: return visitShape(op);
      case OpCode::constant: case OpCode::iota: case OpCode::slice: case OpCode::concat: return;  // they stay free
      // Scalars, ops without results and the control flow visited above.
      case OpCode::program_id: case OpCode::num_programs: case OpCode::tensor_dim: case OpCode::scalar_param:
      case OpCode::store: case OpCode::scatter: case OpCode::print: case OpCode::check: case OpCode::yield:
      case OpCode::fold: case OpCode::while_: case OpCode::if_: return;
    }
  }

  // Stores write from the value's own layout; a scatter reads its coordinates and mask in it.
  void visitWrite(const Op& op) {
    size_t valueAt = op.code == OpCode::store ? op.operands.size() - 1 : size_t(k_.tensors[size_t(op.get(ir::attr::tensor))].rank);
    ValueId value = op.operands[valueAt];
    if (!isTile(value)) return;
    if (!at(value)) settle(value, defaultLayout(value));
    if (op.code == OpCode::scatter)
      for (size_t i = 0; i < op.operands.size(); ++i)
        if (i != valueAt) require(op.operands[i], at(value), op, i);
  }

  // Whether v is only read through (unit-dim reshapes, elementwise ops and) broadcasts: then
  // a load of it is free, made in its consumer's layout (like Triton's rematerialization of
  // a broadcast row: a row of scales multiplied together, then scaling a dot's block), since
  // each thread reads only its few distinct elements anyway.
  bool onlyBroadcast(ValueId v) const {
    const std::vector<const Op*>& users = users_[static_cast<size_t>(v)];
    return !users.empty() && std::all_of(users.begin(), users.end(), [&](const Op* u) {
      bool through = u->code == OpCode::reshape || (isElementwise(u->code) && u->results.size() == 1);
      return u->code == OpCode::broadcast || (through && onlyBroadcast(u->results[0]));
    });
  }

  void visitDot(const Op& op) {
    ValueId r = op.results[0];
    std::optional<MatrixAcc> m = matrixAcc(op);
    LayoutPtr acc = m ? make(Layout{*m}) : defaultLayout(r);
    at(r) = acc;
    for (int i = 0; i < 2; ++i) {
      ValueId x = op.operands[size_t(i)];
      LayoutPtr operand = make(Layout{DotOperand{i, acc}});
      if (m) {
        require(x, operand, op, size_t(i));
        continue;
      }
      // An FMA dot stages both operands in workgroup memory, row-major, from whatever layout
      // they have (lower/gpu), so each is a shared-memory conversion; on the CPU, none.
      if (!at(x)) settle(x, defaultLayout(x));
      if (t_.sharedBytes > 0)
        conversions_.push_back({x, &op, i, at(x), operand, ConversionKind::shared_memory,
                                Shared{1, 1, 1, rowMajorOrder(type(x).shape.size())}});
    }
    if (op.operands.size() == 3) require(op.operands[2], acc, op, 2);
  }

  // Matrix-core fragments from the first of the target's units for these dtypes whose shape
  // tiles the dot's; warps go along M first so a row stays within one warp (wgmma: along M
  // only, whole warpgroups of 64 rows).
  std::optional<MatrixAcc> matrixAcc(const Op& dot) const {
    const ir::Type &a = type(dot.operands[0]), &b = type(dot.operands[1]);
    // Integer units accumulate in i32: an i8 dot declared i8 wraps per product sum instead.
    if (!isFloat(a.dtype) && type(dot.results[0]).dtype != DType::i32) return std::nullopt;
    int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1], warps = t_.warpsPerProgram;
    if (!isPowerOfTwoShape({m, n, k})) return std::nullopt;
    for (const MatrixUnit& unit : t_.matrixUnits) {
      if (!std::ranges::count(unit.operandDtypes, a.dtype) || m % unit.m || n % unit.n || k % unit.k) continue;
      if (isWgmma(unit.instr)) {
        if (warps % 4 == 0 && m % (16 * warps) == 0) return MatrixAcc{unit.instr, {warps, 1}};
        continue;
      }
      int64_t wm = pow2Clamp(m / unit.m, warps);
      return MatrixAcc{unit.instr, {wm, warps / wm}};
    }
    return std::nullopt;
  }

  // The result takes an operand's layout, a dot's (or a slice of one) over a load's.
  void visitElementwise(const Op& op) {
    LayoutPtr chosen;
    for (ValueId v : op.operands)
      if (isTile(v) && at(v) && (!chosen || (chosen->as<Blocked>() && !at(v)->as<Blocked>()))) chosen = at(v);
    if (!chosen) return;  // free: made later in its consumer's layout
    at(op.results[0]) = chosen;
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (isTile(op.operands[i])) require(op.operands[i], chosen, op, i);
  }

  // A sort, and a scan of several tiles, move elements along an axis through workgroup memory
  // in the lowering: the first operand's layout (its default when free) serves the others and
  // the results. A scan's combine computes on rank-0 values.
  void visitLines(const Op& op) {
    ValueId first = op.operands[0];
    if (!at(first)) settle(first, defaultLayout(first));
    for (size_t i = 1; i < op.operands.size(); ++i) require(op.operands[i], at(first), op, i);
    for (ValueId r : op.results) at(r) = at(first);
    for (const ir::Block& combine : op.regions) {
      for (ValueId a : combine.args) at(a) = uniform_;
      visit(combine);
    }
  }

  // A histogram counts its operand's elements where they are, into workgroup memory: the
  // counts take their default layout.
  void visitHistogram(const Op& op) {
    if (!at(op.operands[0])) settle(op.operands[0], defaultLayout(op.operands[0]));
    at(op.results[0]) = defaultLayout(op.results[0]);
  }

  void visitReduction(const Op& op) {
    ValueId x = op.operands[0];
    if (!at(x)) settle(x, defaultLayout(x));
    at(op.results[0]) = make(Layout{Slice{op.get(ir::attr::axis), at(x)}});
  }

  void visitShape(const Op& op) {
    ValueId x = op.operands[0], r = op.results[0];
    if (!isTile(x) || !at(x)) return;  // a broadcast scalar or free value stays free
    std::optional<Layout> l;
    if (op.code == OpCode::broadcast && !at(x)->as<Slice>()) l = *at(x);  // unit dims' bases already replicate
    else if (op.code == OpCode::reshape) l = reshaped(*at(x), type(x).shape, type(r).shape);
    else if (op.code == OpCode::permute) l = permuted(*at(x), op.get(ir::attr::perm));
    at(r) = l ? make(*l) : defaultLayout(r);
    if (!l) recordThroughMemory(op, at(r));
  }

  // Carried values start free and take what the body settles on; the body is walked
  // again until that is stable. Inits and yields then convert if they differ.
  void visitFold(const Op& op) {
    at(op.regions[0].args[0]) = uniform_;  // k
    visitLoop(op, 1, 2);
  }

  // The carried values of a loop (a fold, or a while's cond and body): arguments firstArg on
  // of each region, yielded by the last region, started by operands firstInit on. Each takes
  // the layout its argument or the yield gets on a visit (a pass per carried value at most);
  // the initial values and the yield convert to it.
  void visitLoop(const Op& op, size_t firstArg, size_t firstInit) {
    const Op& yield = op.regions.back().ops.back();
    size_t n = op.results.size();
    std::vector<LayoutPtr> carried(n);
    for (size_t i = 0; i < n; ++i)
      if (!isTile(op.results[i])) carried[i] = uniform_;
    auto argument = [&](const ir::Block& region, size_t i) { return region.args[firstArg + i]; };
    for (size_t pass = 0; pass <= n; ++pass) {
      std::vector<LayoutPtr> saved = layouts_;
      size_t savedConversions = conversions_.size();
      for (const ir::Block& region : op.regions) {
        for (size_t i = 0; i < n; ++i) at(argument(region, i)) = carried[i];
        visit(region);
      }
      bool changed = false;
      for (size_t i = 0; i < n; ++i) {
        LayoutPtr now = at(yield.operands[i]);
        for (const ir::Block& region : op.regions)
          if (at(argument(region, i))) now = at(argument(region, i));
        if (!carried[i] && now) carried[i] = now, changed = true;
      }
      if (!changed) break;
      layouts_ = std::move(saved);
      conversions_.erase(conversions_.begin() + static_cast<std::ptrdiff_t>(savedConversions), conversions_.end());
    }
    for (size_t i = 0; i < n; ++i) {
      if (!carried[i]) carried[i] = defaultLayout(op.results[i]);
      for (const ir::Block& region : op.regions)
        if (!at(argument(region, i))) settle(argument(region, i), carried[i]);
      require(yield.operands[i], carried[i], yield, i);
      require(op.operands[firstInit + i], carried[i], op, firstInit + i);
      at(op.results[i]) = carried[i];
    }
  }

  // Each result takes the layout one side already gives its yielded value (else its default);
  // both sides' yields convert to it.
  void visitIf(const Op& op) {
    for (const ir::Block& side : op.regions) visit(side);
    for (size_t i = 0; i < op.results.size(); ++i) {
      ValueId r = op.results[i];
      LayoutPtr l = isTile(r) ? nullptr : uniform_;
      for (const ir::Block& side : op.regions)
        if (!l) l = at(side.ops.back().operands[i]);
      if (!l) l = defaultLayout(r);
      for (const ir::Block& side : op.regions) require(side.ops.back().operands[i], l, side.ops.back(), i);
      at(r) = l;
    }
  }

  const ir::Kernel& k_;
  const Target& t_;
  std::vector<LayoutPtr> layouts_;
  std::vector<const Op*> producers_;
  std::vector<std::vector<const Op*>> users_;
  std::vector<Conversion> conversions_;
  LayoutPtr uniform_;
};

}  // namespace

LayoutAssignment inferLayouts(const ir::Kernel& k, const Target& target) { return Inference(k, target).run(); }

}  // namespace tj::layout
