// The kernel-IR lowering of Hopper's tensor memory accelerator: read-ahead rings whose stages
// thread 0 fills with one cp.async.bulk.tensor per box, every thread waiting on the stage's
// transaction barrier (whose phase completes when the boxes' bytes have landed) and releasing
// it on another; and dot results stored from workgroup memory the same way.
#include "lower/gpu/lowering.hpp"

namespace tj::gpu::detail {

namespace {

// Where TMA puts element y of a box-tiled block (in bytes from the stage's start): boxes of
// boxInner elements of the last dimension one after another, each row-major, then the
// swizzle's XOR of 16-byte chunk bits 4.. with bits 7.. (TMA's 32, 64 and 128-byte modes).
int64_t tmaByte(const Coord& y, const ir::Shape& shape, int64_t boxInner, int64_t bytes, int64_t swizzle) {
  size_t last = shape.size() - 1;
  int64_t row = 0, rows = 1;
  for (size_t d = 0; d < last; ++d) row = row * shape[d] + y[d], rows *= shape[d];
  int64_t at = (y[last] / boxInner * rows + row) * boxInner * bytes + y[last] % boxInner * bytes;
  return swizzle ? at ^ ((at >> 7 & (swizzle / 16 - 1)) << 4) : at;
}

}  // namespace

auto Lowering::tmaBoxes(int64_t tensor, const ir::Shape& shape, const CoordMap& toBlock, ir::ValueId v,
                        const LinearLayout& offsetOf) -> std::optional<TmaBoxes> {
  bool facts = size_t(tensor) < options_.vectorTensors.size() && options_.vectorTensors[size_t(tensor)];
  if (!t_.tma || !facts || shape.size() > 5 || !layout::isPowerOfTwoShape(shape)) return std::nullopt;
  int64_t bytes = dtypeBytes(k_.type(v).dtype), inner = shape.back(), rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) {
    if (shape[d] > 256) return std::nullopt;
    rows *= shape[d];
  }
  const ir::Shape padded = layout::paddedShape(k_.type(v).shape);
  for (int64_t swizzle : {128, 64, 32, 0}) {
    int64_t boxInner = swizzle ? swizzle / bytes : inner;
    if (boxInner > inner || boxInner > 256 || boxInner * bytes % 16 != 0 || (swizzle && rows % 8 != 0)) continue;
    // Both placements are linear over the coordinates' bits (every extent a power of two):
    // equal on each single-bit coordinate, they are equal everywhere.
    bool same = true;
    for (size_t d = 0; d < padded.size() && same; ++d)
      for (int64_t bit = 1; bit < padded[d] && same; bit *= 2) {
        Coord x(padded.size(), 0);
        x[d] = bit;
        same = tmaByte(toBlock(x), shape, boxInner, bytes, swizzle) == offsetOf.apply(x)[0] * bytes;
      }
    if (!same) continue;
    std::vector<int64_t> box(shape.begin(), shape.end());
    box.back() = boxInner;
    return TmaBoxes{tensorMapParam(tensor, box, swizzle), boxInner, inner / boxInner, rows * boxInner, rows * inner * bytes,
                    swizzle};
  }
  return std::nullopt;
}

int64_t Lowering::tensorMapParam(int64_t tensor, const std::vector<int64_t>& box, int64_t swizzle) {
  auto same = [&](const KParam& p) {
    return p.kind == KParam::Kind::tensor_map && p.number == size_t(tensor) && p.box == box && p.swizzle == swizzle;
  };
  if (auto it = std::ranges::find_if(f_.params, same); it != f_.params.end()) return int64_t(it - f_.params.begin());
  int64_t maps = std::ranges::count(f_.params, KParam::Kind::tensor_map, &KParam::kind);
  f_.params.push_back({KParam::Kind::tensor_map, tensorName(tensor) + ".map" + std::to_string(maps),
                       k_.tensors[size_t(tensor)].dtype, size_t(tensor), 0, box, swizzle});
  return int64_t(f_.params.size() - 1);
}

int64_t Lowering::allocTmaBarriers(int64_t stages, bool releases) {
  int64_t bytes = (releases ? 2 : 1) * stages * 8;
  int64_t alloc = allocShared(bytes, DType::i64, releases ? "transaction barriers, then release barriers, one per stage"
                                                          : "transaction barriers, one per stage",
                              alignedAbove(0, 8));
  sharedFloor_ = f_.shared[size_t(alloc)].offset + bytes;
  return alloc;
}

void Lowering::initTmaBarriers(int64_t stages) {
  Reg first = firstThread();
  for (int64_t s = 0; s < (tma_.releases ? 2 : 1) * stages; ++s)
    b_.effect(KOp::mbarrier_init, {b_.constant(DType::i32, double(s)), first},
              {{"alloc", tma_.alloc}, {"count", s < stages ? int64_t{1} : f_.workgroupSize / f_.subgroupSize}});
  // The async proxy sees the barriers, and the generic accesses of the bytes the rings reuse,
  // before the first copy.
  b_.effect(KOp::fence_async_shared);
  if (tma_.specialized) syncWithProducer();
  else b_.effect(KOp::barrier);
}

void Lowering::invalidateTmaBarriers(int64_t stages) {
  if (tma_.specialized) syncWithProducer();  // every thread is past its last wait
  else b_.effect(KOp::barrier);
  Reg first = firstThread();
  for (int64_t s = 0; s < (tma_.releases ? 2 : 1) * stages; ++s)
    b_.effect(KOp::mbarrier_inval, {b_.constant(DType::i32, double(s)), first}, {{"alloc", tma_.alloc}});
}

void Lowering::awaitRelease(Reg step, Reg distance, Reg stages, Reg stage) {
  // Round n waits for the phase of parity (n + 1) % 2: in round 0 the one before phase 0.
  Reg round = b_.binary("div", b_.binary("add", step, distance), stages);
  Reg parity = b_.binary("rem", b_.binary("add", round, b_.constant(DType::i64, 1)), b_.constant(DType::i64, 2));
  Reg index = b_.binary("add", castTo(stage, DType::i32), castTo(stages, DType::i32));
  b_.effect(KOp::mbarrier_wait, {index, castTo(parity, DType::i32), firstThread()}, {{"alloc", tma_.alloc}});
}

void Lowering::releaseStage(const StageRelease& r) {
  Reg read = b_.binary("sub", r.step, b_.constant(DType::i64, double(r.lag)));
  Reg S = b_.constant(DType::i64, double(r.stages));
  Reg index = castTo(b_.binary("add", b_.binary("rem", read, S), S), DType::i32);
  Reg lane0 = b_.cmp("eq", b_.emit(KOp::lane_id, DType::i32), b_.constant(DType::i32, 0));
  b_.effect(KOp::mbarrier_arrive, {index, b_.binary("and", lane0, b_.cmp("ge", read, b_.constant(DType::i64, 0)))},
            {{"alloc", tma_.alloc}});
}

bool Lowering::tmaStore(const ir::Op& op) {
  ir::ValueId v = op.operands.back();
  int64_t tensor = op.get(ir::attr::tensor);
  const ir::Shape& shape = k_.type(v).shape;
  DType dt = k_.type(v).dtype;
  const layout::Layout& from = operandLayout(op, int(op.operands.size()) - 1);
  if (!t_.tma || regionDepth_ > 0 || !from.as<layout::MatrixAcc>() || dt != k_.tensors[size_t(tensor)].dtype ||
      shape.size() != 2 || !layout::isPowerOfTwoShape(shape))
    return false;
  std::optional<layout::Shared> mem = layout::wgmmaShared(dt, shape, layout::rowMajorOrder(2));
  std::optional<LinearLayout> offsetOf = mem ? layout::toLinear(layout::Layout{*mem}, shape).invert() : std::nullopt;
  std::optional<TmaBoxes> boxes = offsetOf ? tmaBoxes(tensor, shape, [](const Coord& x) { return x; }, v, *offsetOf)
                                           : std::nullopt;
  if (!boxes) return false;
  LinearLayout lin = layout::toLinear(from, shape);
  std::vector<Reg> src = operand(op, int(op.operands.size()) - 1);
  if (persistent_ && storeBoxByBox(op, *boxes, offsetOf->compose(lin), src, layout::Layout{*mem})) return true;
  Staged s = stageInShared(v, src, lin, lin, layout::Layout{*mem}, alignedAbove(0, boxes->patternBytes()), true);
  for (int64_t j = 0; j < boxes->blocks; ++j) issueTmaStore(op, *boxes, j, s.alloc, j * boxes->blockElements);
  b_.effect(KOp::tma_store_wait, {firstThread()}, {{"pending", int64_t{0}}});  // before the buffer is written again
  return true;
}

void Lowering::issueTmaStore(const ir::Op& op, const TmaBoxes& boxes, int64_t box, int64_t alloc, int64_t slot) {
  std::vector<Reg> operands = {firstThread(), b_.constant(DType::i32, double(slot))};
  std::ranges::copy(boxCoords(op, 2, boxes, box), std::back_inserter(operands));
  b_.effect(KOp::tma_store, operands, {{"map", boxes.map}, {"alloc", alloc}});
}

bool Lowering::storeBoxByBox(const ir::Op& op, const TmaBoxes& boxes, const LinearLayout& storeAt,
                             const std::vector<Reg>& src, const layout::Layout& mem) {
  DType dt = dtypeOf(op.operands.back());
  int64_t box = boxes.blockElements, buffers = std::min<int64_t>(boxes.blocks, 2);
  auto withinBox = [&](const Basis& b) { return b[0] < box; };
  if (!std::ranges::all_of(bases(storeAt, layout::kLane), withinBox) ||
      !std::ranges::all_of(bases(storeAt, layout::kWarp), withinBox))
    return false;
  // A register's box is its offset's bits above a box (lanes and warps stay within one); box j
  // takes buffer j % buffers, the lowest of those bits: masking the register bases above it
  // places each register in its box's buffer.
  std::vector<LinearLayout::InDim> ins = storeAt.ins();
  for (LinearLayout::InDim& in : ins)
    if (in.name == layout::kRegister)
      for (Basis& b : in.bases) b[0] &= buffers * box - 1;
  LinearLayout inBuffers(ins, storeAt.outs());
  int64_t alloc = allocShared(buffers * box * dtypeBytes(dt), dt, layout::str(mem) + ", " + std::to_string(buffers) + " boxes at a time",
                              alignedAbove(0, boxes.patternBytes()));
  for (int64_t j = 0; j < boxes.blocks; ++j) {
    // Before the first box, earlier users of the bytes are done; before a buffer's next box, the
    // first thread has waited for the store that read it.
    if (j == 0 || j >= buffers) b_.effect(KOp::barrier);
    storeRegisters(inBuffers, src, alloc, [&](int64_t r) { return input(storeAt, layout::kRegister, r)[0] / box == j; });
    b_.effect(KOp::fence_async_shared);
    b_.effect(KOp::barrier);
    issueTmaStore(op, boxes, j, alloc, j % buffers * box);
    // The other buffer free for the next box; after the last, both (the next program's
    // allocations may take their bytes).
    b_.effect(KOp::tma_store_wait, {firstThread()}, {{"pending", j + 1 < boxes.blocks ? buffers - 1 : int64_t{0}}});
  }
  return true;
}

void Lowering::issueTma(const ReadAhead& r, Reg stage, Reg live) {
  Reg issuer = b_.binary("and", firstThread(), live), index = castTo(stage, DType::i32), base = stageOffset(r, stage);
  for (int64_t j = 0; j < r.tma->blocks; ++j) {
    std::vector<Reg> operands = {issuer, b_.binary("add", base, b_.constant(DType::i32, double(j * r.tma->blockElements))), index};
    std::ranges::copy(boxCoords(*r.load, size_t(k_.type(r.load->results[0]).rank()), *r.tma, j), std::back_inserter(operands));
    b_.effect(KOp::tma_load, operands, {{"map", r.tma->map}, {"alloc", r.staged.alloc}, {"barrier", tma_.alloc}});
  }
}

std::vector<Reg> Lowering::boxCoords(const ir::Op& access, size_t rank, const TmaBoxes& boxes, int64_t j) {
  std::vector<Reg> at;
  for (size_t d = 0; d < rank; ++d) at.push_back(castTo(regs_.at(access.operands[d]).at(0), DType::i32));
  at.back() = b_.binary("add", at.back(), b_.constant(DType::i32, double(j * boxes.boxInner)));
  return at;
}

}  // namespace tj::gpu::detail
