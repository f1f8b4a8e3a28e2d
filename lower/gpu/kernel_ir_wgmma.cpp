// The kernel-IR lowering of dots on Hopper's warpgroup MMA (wgmma): b (and a, unless it is
// already in wgmma's a fragments) in workgroup memory in wgmma's swizzled layout, read by the
// instruction itself through descriptors.
#include "lower/gpu/lowering.hpp"

namespace tj::gpu::detail {

bool Lowering::isWgmmaOperand(const layout::Layout& l) {
  const auto* operand = l.as<layout::DotOperand>();
  const auto* acc = operand ? operand->parent->as<layout::MatrixAcc>() : nullptr;
  return acc && layout::isWgmma(acc->instr);
}

int64_t Lowering::swizzleAtomBytes(const layout::Layout& mem, DType dt) {
  const auto* s = mem.as<layout::Shared>();
  return s ? 8 * layout::wgmmaSwizzleBytes(*s, dt) : 16;
}

layout::Shared Lowering::wgmmaMemory(const ir::Op& op, int i) const {
  ir::ValueId v = op.operands[size_t(i)];
  DType dt = dtypeOf(v);
  const layout::Conversion* c = a_.conversionAt(op, i);
  std::optional<layout::Shared> mem = c && c->via ? c->via
                                                   : layout::wgmmaShared(dt, layout::paddedShape(k_.type(v).shape),
                                                                         isFloat8(dt) ? layout::wgmmaKMajor(i) : layout::rowMajorOrder(2));
  if (!mem || !mem->order.size()) unsupported(op, "on wgmma: no workgroup-memory layout for operand " + std::to_string(i));
  return *mem;
}

auto Lowering::wgmmaOperand(const ir::Op& op, int i, int64_t sharedOffset) -> WgmmaOperand {
  ir::ValueId v = op.operands[size_t(i)];
  layout::Shared mem = wgmmaMemory(op, i);
  if (auto ahead = readAhead_.find(v); ahead != readAhead_.end()) return {ahead->second.staged.alloc, ahead->second.staged.base, mem};
  auto staged = invariantStaged_.find({&op, i});
  return {staged != invariantStaged_.end() ? staged->second : wgmmaStaged(op, i, sharedOffset), -1, mem};
}

int64_t Lowering::wgmmaStaged(const ir::Op& op, int i, int64_t sharedOffset) {
  // In registers (computed, or converted from elsewhere): stored once in wgmma's layout.
  ir::ValueId v = op.operands[size_t(i)];
  const layout::Conversion* c = a_.conversionAt(op, i);
  layout::Layout mem{wgmmaMemory(op, i)};
  LinearLayout from = c ? linear(*c->from, v) : linear(v);
  int64_t offset = alignedAbove(sharedOffset, swizzleAtomBytes(mem, dtypeOf(v)));
  return stageInShared(v, regs_.at(v), from, from, mem, offset, true).alloc;
}

bool Lowering::wgmmaAFromRegisters(const ir::Op& op) const {
  ir::ValueId aV = op.operands[0];
  const layout::Conversion* c = a_.conversionAt(op, 0);
  return !readAhead_.count(aV) && (!c || c->kind != layout::ConversionKind::shared_memory);
}

auto Lowering::stageInvariantOperands(const ir::Block& body, const StagedOperands& before)
    -> std::vector<std::pair<const ir::Op*, int>> {
  std::vector<std::pair<const ir::Op*, int>> staged;
  for (const ir::Op& op : body.ops) {
    const auto* acc = op.code == ir::OpCode::dot ? a_.of(op.results[0]).as<layout::MatrixAcc>() : nullptr;
    if (!acc || !layout::isWgmma(acc->instr)) continue;
    for (int i : {0, 1}) {
      ir::ValueId v = op.operands[size_t(i)];
      bool inMemory = i == 1 || !wgmmaAFromRegisters(op);
      if (!inMemory || !regs_.count(v) || readAhead_.count(v)) continue;
      // In place: the same layout, above what this fold allocated so far.
      auto earlier = before.find(v);
      bool reuse = earlier != before.end() && earlier->second.second == wgmmaMemory(op, i) &&
                   f_.shared[size_t(earlier->second.first)].offset >= sharedFloor_;
      int64_t alloc = reuse ? earlier->second.first : wgmmaStaged(op, i, 0);
      invariantStaged_.emplace(std::pair{&op, i}, alloc);
      staged.emplace_back(&op, i);
      sharedFloor_ = f_.shared[size_t(alloc)].offset + f_.shared[size_t(alloc)].bytes;
    }
  }
  return staged;
}

Reg Lowering::wgmmaStart(const WgmmaOperand& o, ir::ValueId v, int64_t row, int64_t col, Reg warpgroupRows) {
  // The element (row, col) of the operand: rows of instruction tiles are multiples of 8, where
  // no swizzle applies, so a warpgroup's row offset adds.
  LinearLayout offsetOf = *layout::toLinear(layout::Layout{o.mem}, k_.type(v).shape).invert();
  Reg at = b_.constant(DType::i32, double(offsetOf.apply({row, col})[0]));
  if (warpgroupRows >= 0) at = b_.binary("add", at, warpgroupRows);
  return plus(at, o.base);
}

auto Lowering::wgmmaFragments(const ir::Op& op, int64_t rowsPerStep, int64_t kStep)
    -> std::map<std::pair<int64_t, int64_t>, std::vector<Reg>> {
  std::map<std::pair<int64_t, int64_t>, std::vector<Reg>> fragments;
  std::vector<Reg> regs = lazyOperand(op, 0, 0).all();
  LinearLayout lin = linear(operandLayout(op, 0), op.operands[0]);
  for (int64_t r = 0; r < registerCount(lin); ++r) {
    Coord x = input(lin, layout::kRegister, r);
    fragments[{x[0] / rowsPerStep, x[1] / kStep}].push_back(regs[size_t(r)]);
  }
  return fragments;
}

auto Lowering::wgmmaTiles(const LinearLayout& acc, int64_t rowsPerStep, int64_t nInstr)
    -> std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> {
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> tiles;
  for (int64_t r = 0; r < registerCount(acc); ++r) {
    Coord x = input(acc, layout::kRegister, r);
    std::vector<int64_t>& t = tiles[{x[0] / rowsPerStep, x[1] / nInstr}];
    t.resize(size_t(nInstr / 2), -1);
    t.at(size_t(4 * (x[1] % nInstr / 8) + 2 * (x[0] % 16 / 8) + x[1] % 2)) = r;
  }
  return tiles;
}

void Lowering::wgmmaMatrixAttrs(const WgmmaOperand& o, ir::ValueId v, const std::string& side, std::vector<KAttr>& attrs) const {
  // Rows along M or N rather than K: a [M,K] stored column-major, b [K,N] row-major.
  bool trans = o.mem.order[0] == (side == "A" ? 0 : 1);
  int64_t swizzle = layout::wgmmaSwizzleBytes(o.mem, dtypeOf(v));
  int64_t rows = layout::paddedShape(k_.type(v).shape)[size_t(o.mem.order[1])];
  // The column blocks' stride (only MN-major operands step across them), the 8-row groups'.
  attrs.insert(attrs.end(), {{"alloc" + side, o.alloc}, {"trans" + side, int64_t{trans}}, {"swizzle" + side, swizzle},
                             {"leading" + side, trans ? rows * swizzle : 16}, {"stride" + side, 8 * swizzle}});
}

void Lowering::wgmmaDot(const ir::Op& op, int64_t kStep) {
  ir::ValueId aV = op.operands[0], bV = op.operands[1];
  int64_t K = k_.type(aV).shape[1], N = k_.type(bV).shape[1];
  const auto& acc = *a_.of(op.results[0]).as<layout::MatrixAcc>();
  int64_t warps = acc.warpsPerCTA[0], rowsPerStep = 16 * warps, nInstr = std::min<int64_t>(N, 256);
  LinearLayout cLin = linear(op.results[0]);
  DType resultT = dtypeOf(op.results[0]);
  std::vector<Reg> c = op.operands.size() == 3 ? operand(op, 2)
                                               : std::vector<Reg>(size_t(registerCount(cLin)), b_.constant(DType::f32, 0.0));
  // A stays in registers where it is already in (or a shuffle away from) wgmma's A fragments:
  // an accumulator's layout, such as attention's P (8-bit: packed shuffles within quads).
  bool aRegisters = wgmmaAFromRegisters(op);
  std::map<std::pair<int64_t, int64_t>, std::vector<Reg>> aFragments;
  std::optional<WgmmaOperand> a;
  if (aRegisters) aFragments = wgmmaFragments(op, rowsPerStep, kStep);
  else a = wgmmaOperand(op, 0, 0);
  // b goes above a where a was stored here (an operand staged before the fold lies below the floor).
  const gpu::SharedAlloc* aAlloc = a && a->base < 0 ? &f_.shared[size_t(a->alloc)] : nullptr;
  int64_t aEnd = aAlloc ? std::max<int64_t>(aAlloc->offset + aAlloc->bytes - sharedFloor_, 0) : 0;
  WgmmaOperand b = wgmmaOperand(op, 1, aEnd);
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> tiles = wgmmaTiles(cLin, rowsPerStep, nInstr);
  std::vector<Reg> d(c.size());
  for (size_t r = 0; r < c.size(); ++r) d[r] = castTo(c[r], DType::f32);
  // A warpgroup's rows start at 64 times its index (warps stack along M).
  Reg group = warps > 4 ? b_.binary("shr", b_.emit(KOp::warp_id, DType::i32), b_.constant(DType::i32, 2)) : -1;
  Reg aRows = -1;
  if (a && warps > 4) {
    int64_t step = layout::toLinear(layout::Layout{a->mem}, k_.type(aV).shape).invert()->apply({64, 0})[0];
    aRows = b_.binary("mul", group, b_.constant(DType::i32, double(step)));
  }
  std::vector<KAttr> attrs = {{"n", nInstr}, {"k", kStep}, {"a", std::string(dtypeName(dtypeOf(aV)))},
                              {"b", std::string(dtypeName(dtypeOf(bV)))}};
  wgmmaMatrixAttrs(b, bV, "B", attrs);
  if (a) wgmmaMatrixAttrs(*a, aV, "A", attrs);
  b_.effect(KOp::wgmma_fence);
  for (int64_t kk = 0; kk < K; kk += kStep)
    for (auto& [tile, regs] : tiles) {
      if (std::ranges::count(regs, -1)) unsupported(op, "on wgmma: the accumulator does not tile into m64n" + std::to_string(nInstr));
      auto [mi, ni] = tile;
      std::vector<Reg> operands;
      if (a) {
        operands.push_back(wgmmaStart(*a, aV, mi * rowsPerStep, kk, aRows));
      } else {
        auto fragment = aFragments.find({mi, kk / kStep});
        if (fragment == aFragments.end() || int64_t(fragment->second.size()) != kStep / 2)
          unsupported(op, "on wgmma: operand a's registers do not form its fragments");
        operands = fragment->second;
      }
      operands.push_back(wgmmaStart(b, bV, kk, ni * nInstr, -1));
      for (int64_t r : regs) operands.push_back(d[size_t(r)]);
      std::vector<Reg> out = b_.emitMulti(KOp::wgmma, std::vector<DType>(regs.size(), DType::f32), operands, attrs);
      for (size_t j = 0; j < regs.size(); ++j) d[size_t(regs[j])] = out[j];
    }
  b_.effect(KOp::wgmma_commit);
  if (inFlightDots_.count(&op)) {  // the previous iteration's group is done: its stage may be refilled
    b_.effect(KOp::wgmma_wait, {}, {{"pending", int64_t{1}}});
    return define(op.results[0], d);
  }
  d = b_.emitMulti(KOp::wgmma_wait, std::vector<DType>(d.size(), DType::f32), d, {{"pending", int64_t{0}}});
  for (size_t r = 0; r < c.size(); ++r) c[r] = castTo(d[r], resultT);
  define(op.results[0], c);
}

}  // namespace tj::gpu::detail
