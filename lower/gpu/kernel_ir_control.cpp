// The kernel-IR lowering's control flow (folds, whiles, branches), the read-ahead of a
// fold's dot operands into rings, and dots.
#include "lower/gpu/lowering.hpp"

namespace tj::gpu::detail {

auto Lowering::carried(const ir::Op& op, size_t first) -> Carried {
  Carried c;
  for (size_t i = first; i < op.operands.size(); ++i) {
    std::vector<Reg> init = operand(op, int(i));
    c.regs.insert(c.regs.end(), init.begin(), init.end());
    c.counts.push_back(init.size());
    c.types.insert(c.types.end(), init.size(), dtypeOf(op.operands[i]));
  }
  return c;
}

void Lowering::fold(const ir::Op& op) {
  const ir::Op* next = nextOp_;
  // The rings of the fold right before, whose iterations this one continues: its copies are
  // landing in them.
  std::optional<RingHandoff> taken = std::exchange(handoff_, std::nullopt);
  if (taken && taken->next != &op) throw InternalError("kernel ir", "a fold's rings were handed on to a fold not lowered next");
  int64_t floor = sharedFloor_;
  if (taken) sharedFloor_ = taken->floor;
  auto [inits, types, counts] = carried(op, 2);
  std::vector<Reg> operands = {regs_.at(op.operands[0]).at(0), regs_.at(op.operands[1]).at(0)};
  operands.insert(operands.end(), inits.begin(), inits.end());
  const ir::Block& body = op.regions.at(0);
  // After the fold the rings' bytes are reused: every later user of workgroup memory begins
  // with a barrier.
  int64_t stages = taken ? taken->stages : foldStages(op);
  FoldBarriers outer = std::exchange(tma_, {});
  std::vector<StagedLoad> outerLoads = std::exchange(stagedLoads_, {});
  int outerLoadsDepth = std::exchange(stagedLoadsDepth_, regionDepth_ + 1);
  bool readsAhead = (t_.asyncCopy || t_.registerStaging) && stages > 1;
  std::vector<ir::ValueId> ahead;
  // A persistent kernel's rings stay while later programs run: nothing before them may share their bytes.
  if (&op == specialized_ && persistentRings_ && f_.shared.size() != persistentRings_->allocations)
    throw CannotPersist("kernel ir: workgroup memory is used before the specialized fold");
  if (taken) {
    ahead = giveRings(op, stages, &taken->rings);
    if (ahead.size() != taken->rings.size() || !allTma(ahead))
      throw InternalError("kernel ir", "a fold does not take the rings the fold before it filled for it");
    tma_.alloc = taken->alloc;
  } else if (readsAhead) {
    ahead = giveRings(op, stages);
  }
  tma_.releases = !ahead.empty() && allTma(ahead);
  tma_.specialized = taken ? taken->specialized : &op == specialized_;
  if (tma_.specialized && !tma_.releases)
    throw CannotSpecialize("kernel ir: a specialized fold whose dot operands TMA does not copy (all of them)");
  bool persistentRings = tma_.specialized && persistentRings_;
  if (persistentRings && !taken) {
    tma_.alloc = persistentRings_->barriers;  // set up before the loop over the programs
  } else if (!taken && std::ranges::any_of(ahead, [&](ir::ValueId v) { return readAhead_.at(v).tma.has_value(); })) {
    tma_.alloc = allocTmaBarriers(stages, tma_.releases);
  }
  const int64_t ringFloor = sharedFloor_;
  std::vector<std::pair<const ir::Op*, int>> invariant = stageInvariantOperands(body, std::exchange(lastFoldStaged_, {}));
  // wgmma accumulators left in flight across iterations read a stage one iteration longer:
  // the copies then run stages - 2 iterations ahead, so 3 stages at least.
  std::set<const ir::Op*> inFlight = taken || ahead.empty() || stages < 3 ? std::set<const ir::Op*>{} : inFlightAccumulators(body);
  int64_t lookahead = taken ? taken->lookahead : stages - 1 - (inFlight.empty() ? 0 : 1);
  // Stages and phases count from the first of the folds that share the rings; copies run up
  // to the end of the last.
  Reg start = taken ? taken->start : operands[0];
  bool handsOn = tma_.releases && inFlight.empty() && continues(op, next);
  Reg end = handsOn ? regs_.at(next->operands[1]).at(0) : operands[1];
  if (!ahead.empty() && !taken) readAheadPrologue(body, ahead, stages, lookahead, start, end);
  if (persistentRings && !taken)
    persistentRings_->steps = b_.binary("max", b_.binary("sub", end, start), b_.constant(DType::i64, 0));
  if (tma_.specialized && !taken) {
    producer_ = ProducerPlan{&op, op.operands[0], handsOn ? next->operands[1] : op.operands[1], stages, tma_.alloc, {}};
    for (ir::ValueId v : ahead) producer_->rings.emplace_back(v, readAhead_.at(v));
  }
  std::vector<Reg> results = b_.emitMulti(KOp::for_loop, types, operands, {});
  std::vector<DType> argTypes = types;
  argTypes.insert(argTypes.begin(), DType::i64);  // k
  std::vector<Reg> args = b_.openRegion(argTypes);
  define(body.args[0], {args[0]});
  splitInto(body.args, 1, std::vector<Reg>(args.begin() + 1, args.end()), counts);
  if (!ahead.empty()) readAheadIteration(body, ahead, stages, lookahead, start, end, args[0]);
  // The stage this iteration read is released at its end; one a wgmma still reads, at the next's.
  if (tma_.releases)
    tma_.release = StageRelease{ringStep(args[0], start), inFlight.empty() ? 0 : 1, stages, regionDepth_ + 1};
  inFlightDots_.insert(inFlight.begin(), inFlight.end());
  ++regionDepth_;
  block(body);
  --regionDepth_;
  for (const ir::Op* dot : inFlight) inFlightDots_.erase(dot);
  b_.closeRegion();
  splitInto(op.results, 0, results, counts);
  waitForAccumulators(op, inFlight);
  if (copiesIn(ahead)) b_.effect(KOp::async_wait, {}, {{"pending", int64_t{0}}});  // nothing lands on later allocations
  if (handsOn) {
    std::map<size_t, int64_t> rings;
    const std::vector<ReadAheadCandidate>& plan = readAheadPlan_.at(&op);
    for (size_t c = 0; c < plan.size(); ++c)
      if (readAhead_.count(plan[c].operand)) rings[c] = readAhead_.at(plan[c].operand).staged.alloc;
    handoff_ = RingHandoff{next, rings, tma_.alloc, stages, lookahead, ringFloor, start, tma_.specialized};
  } else if (tma_.alloc >= 0 && !persistentRings) {
    invalidateTmaBarriers(stages);
  }
  for (const auto& [dot, i] : invariant)
    lastFoldStaged_[dot->operands[size_t(i)]] = {invariantStaged_.at({dot, i}), wgmmaMemory(*dot, i)};
  for (const auto& operand : invariant) invariantStaged_.erase(operand);
  for (ir::ValueId v : ahead) {
    for (ir::ValueId view : readAhead_.at(v).views) readAheadViews_.erase(view);
    readAhead_.erase(v);
  }
  sharedFloor_ = persistentRings ? ringFloor : floor;
  tma_ = outer;
  stagedLoads_ = std::move(outerLoads);
  stagedLoadsDepth_ = outerLoadsDepth;
}

int64_t Lowering::foldStages(const ir::Op& fold) const {
  int64_t stages = std::min(options_.maxStages, fold.has(ir::attr::stages) ? fold.get(ir::attr::stages) : t_.defaultStages);
  return t_.asyncCopy ? stages : std::min<int64_t>(stages, 2);  // registers hold one iteration's loads
}

bool Lowering::continues(const ir::Op& first, const ir::Op* second) const {
  if (!second || second->code != ir::OpCode::fold || !first.has(ir::attr::split) || !second->has(ir::attr::split) ||
      second->operands[0] != first.operands[1] || !regs_.count(second->operands[1]))
    return false;
  // Its carried values come as they are: nothing is staged in workgroup memory before it takes the rings.
  for (size_t i = 2; i < second->operands.size(); ++i)
    if (a_.conversionAt(*second, int(i))) return false;
  auto stagesOf = [](const ir::Op& f) { return f.has(ir::attr::stages) ? f.get(ir::attr::stages) : int64_t{0}; };
  auto a = readAheadPlan_.find(&first), b = readAheadPlan_.find(second);
  if (stagesOf(first) != stagesOf(*second) || a == readAheadPlan_.end() || b == readAheadPlan_.end() ||
      a->second.size() != b->second.size())
    return false;
  // Values of the first body and the second's that hold the same: the indices, then the
  // results of ops that compute the same of them.
  std::map<ir::ValueId, ir::ValueId> same = {{first.regions.at(0).args.at(0), second->regions.at(0).args.at(0)}};
  auto sameOp = [&](const ir::Op& x, const ir::Op& y) {
    if (x.code != y.code || x.attrs != y.attrs || x.operands.size() != y.operands.size() || x.results.size() != y.results.size())
      return false;
    for (size_t i = 0; i < x.operands.size(); ++i) {
      auto it = same.find(x.operands[i]);
      if ((it == same.end() ? x.operands[i] : it->second) != y.operands[i]) return false;
    }
    for (size_t i = 0; i < x.results.size(); ++i) {
      if (k_.type(x.results[i]) != k_.type(y.results[i])) return false;
      same[x.results[i]] = y.results[i];
    }
    return true;
  };
  for (size_t c = 0; c < a->second.size(); ++c) {
    const ReadAheadCandidate &x = a->second[c], &y = b->second[c];
    if (x.offsetOps.size() != y.offsetOps.size()) return false;
    for (size_t i = 0; i < x.offsetOps.size(); ++i)
      if (!sameOp(*x.offsetOps[i], *y.offsetOps[i])) return false;
    if (!sameOp(*x.load, *y.load)) return false;
    // The same stage contents: the load's layout, and the workgroup-memory layout it converts through.
    if (!(a_.of(x.load->results[0]) == a_.of(y.load->results[0])) || !(*x.conversion->to == *y.conversion->to) ||
        x.conversion->via != y.conversion->via)
      return false;
  }
  return true;
}

bool Lowering::copiesIn(const std::vector<ir::ValueId>& ahead) const {
  return t_.asyncCopy && std::ranges::any_of(ahead, [&](ir::ValueId v) { return !readAhead_.at(v).tma; });
}

bool Lowering::allTma(const std::vector<ir::ValueId>& ahead) const {
  return std::ranges::all_of(ahead, [&](ir::ValueId v) { return readAhead_.at(v).tma.has_value(); });
}

void Lowering::storeStagedLoads() {
  for (const StagedLoad& s : std::exchange(stagedLoads_, {})) {
    const ReadAhead& r = readAhead_.at(s.ring);
    std::vector<Reg> operands = {b_.binary("add", coords(r.storeAt, s.reg)[0], s.base)};
    operands.insert(operands.end(), s.values.begin(), s.values.end());
    b_.effect(KOp::store_shared, operands, {{"alloc", r.staged.alloc}});
  }
}

auto Lowering::inFlightAccumulators(const ir::Block& body) const -> std::set<const ir::Op*> {
  std::set<const ir::Op*> dots;
  if (body.ops.empty() || body.ops.back().code != ir::OpCode::yield) return dots;
  const ir::Op& yield = body.ops.back();
  for (const ir::Op& op : body.ops) {
    if (op.code != ir::OpCode::dot || op.operands.size() != 3) continue;
    const auto* acc = a_.of(op.results[0]).as<layout::MatrixAcc>();
    if (!acc || !layout::isWgmma(acc->instr) || dtypeOf(op.results[0]) != DType::f32) continue;
    // acc = dot(a, b, acc): the carried value read by the dot alone, its result by the yield alone.
    auto at = std::ranges::find(yield.operands, op.results[0]);
    if (at == yield.operands.end() || uses_.at(op.results[0]) != 1) continue;
    ir::ValueId carried = body.args.at(size_t(at - yield.operands.begin()) + 1);
    bool rings = readAhead_.count(op.operands[0]) && readAhead_.count(op.operands[1]);  // nothing rewrites them mid-flight
    if (rings && op.operands[2] == carried && uses_.at(carried) == 1 && !a_.conversionAt(op, 2)) dots.insert(&op);
  }
  return dots;
}

void Lowering::waitForAccumulators(const ir::Op& fold, const std::set<const ir::Op*>& inFlight) {
  const ir::Op& yield = fold.regions.at(0).ops.back();
  for (const ir::Op* dot : inFlight) {
    size_t at = size_t(std::ranges::find(yield.operands, dot->results[0]) - yield.operands.begin());
    std::vector<Reg>& regs = regs_.at(fold.results.at(at));
    regs = b_.emitMulti(KOp::wgmma_wait, std::vector<DType>(regs.size(), DType::f32), regs, {{"pending", int64_t{0}}});
  }
}

void Lowering::readAheadPrologue(const ir::Block& body, const std::vector<ir::ValueId>& ahead, int64_t stages,
                                 int64_t lookahead, Reg start, Reg end) {
  stagesUsed_ = std::max(stagesUsed_, stages);
  b_.effect(KOp::barrier);  // the rings alias earlier allocations: their readers are done
  if (tma_.alloc >= 0 && !(tma_.specialized && persistentRings_)) initTmaBarriers(stages);
  if (tma_.specialized) return;  // the producer fills the stages
  for (int64_t s = 0; s < lookahead; ++s) {
    Reg k = b_.binary("add", start, b_.constant(DType::i64, double(s)));
    issueReadAhead(body, ahead, k, b_.constant(DType::i64, double(s)), b_.cmp("lt", k, end));
    storeStagedLoads();  // the first stage goes in now
  }
}

void Lowering::readAheadIteration(const ir::Block& body, const std::vector<ir::ValueId>& ahead, int64_t stages,
                                  int64_t lookahead, Reg start, Reg end, Reg k) {
  Reg step = ringStep(k, start), S = b_.constant(DType::i64, double(stages));
  Reg stage = b_.binary("rem", step, S);
  if (copiesIn(ahead)) b_.effect(KOp::async_wait, {}, {{"pending", lookahead - 1}});
  if (tma_.alloc >= 0) {  // the stage's phase (step / stages) % 2 is complete
    Reg parity = b_.binary("rem", b_.binary("div", step, S), b_.constant(DType::i64, 2));
    b_.effect(KOp::mbarrier_wait, {castTo(stage, DType::i32), castTo(parity, DType::i32)}, {{"alloc", tma_.alloc}});
  }
  if (std::ranges::any_of(ahead, [&](ir::ValueId v) { return readAhead_.at(v).asyncProxy && !readAhead_.at(v).tma; }))
    b_.effect(KOp::fence_async_shared);  // wgmma reads the landed copies
  for (ir::ValueId v : ahead) readAhead_.at(v).staged.base = stageOffset(readAhead_.at(v), stage);
  if (tma_.specialized) return;  // the producer refills the stage once released
  Reg distance = b_.constant(DType::i64, double(lookahead));  // how far the copies run ahead
  Reg refill = b_.binary("rem", b_.binary("add", step, distance), S);
  if (tma_.releases) awaitRelease(step, distance, S, refill);
  else b_.effect(KOp::barrier);
  Reg later = b_.binary("add", k, distance);
  issueReadAhead(body, ahead, later, refill, b_.cmp("lt", later, end));
}

void Lowering::whileLoop(const ir::Op& op) {
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

void Lowering::branch(const ir::Op& op) {
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

void Lowering::splitInto(const std::vector<ir::ValueId>& values, size_t first, const std::vector<Reg>& flat,
                         const std::vector<size_t>& counts) {
  size_t at = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    define(values[first + i], std::vector<Reg>(flat.begin() + std::ptrdiff_t(at), flat.begin() + std::ptrdiff_t(at + counts[i])));
    at += counts[i];
  }
}

void Lowering::yield(const ir::Op& op) {
  if (tma_.release && tma_.release->depth == regionDepth_) releaseStage(*tma_.release);
  if (stagedLoadsDepth_ == regionDepth_) storeStagedLoads();  // the next iteration's stage, once this one's dots are issued
  std::vector<Reg> flat;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    std::vector<Reg> v = operand(op, int(i));
    flat.insert(flat.end(), v.begin(), v.end());
  }
  b_.effect(KOp::yield, flat);
}

auto Lowering::giveRings(const ir::Op& fold, int64_t stages, const std::map<size_t, int64_t>* rings)
    -> std::vector<ir::ValueId> {
  std::vector<ir::ValueId> given;
  const std::vector<ReadAheadCandidate>& plan = readAheadPlan_.at(&fold);
  for (size_t index = 0; index < plan.size(); ++index) {
    const ReadAheadCandidate& c = plan[index];
    if (rings && !rings->count(index)) continue;
    ir::ValueId v = c.operand;
    const ir::Op* load = c.load;
    layout::Layout mem = c.conversion->via ? layout::Layout{*c.conversion->via} : plainShared(v);
    std::optional<LinearLayout> offsetOf = layout::toLinear(mem, k_.type(v).shape).invert();
    if (!offsetOf) continue;
    DType dt = k_.type(v).dtype;
    LinearLayout from = linear(v), storeAt = offsetOf->compose(from), loadAt = offsetOf->compose(linear(*c.conversion->to, v));
    LinearLayout at = mapped(from, c.toLoad, k_.type(load->results[0]).shape);
    bool asyncProxy = isWgmmaOperand(*c.conversion->to);
    std::optional<TmaBoxes> tma = tmaBoxes(c, *offsetOf);
    // Stages start on their swizzle pattern (wgmma's, TMA's), cp.async's on 16 bytes.
    int64_t atom = std::max(asyncProxy ? swizzleAtomBytes(mem, dt) : 16, tma ? tma->patternBytes() : 16);
    int64_t stageBytes = alignTo(paddedNumel(v) * dtypeBytes(dt), atom);
    int64_t ring = rings ? rings->at(index)
                         : allocShared(stages * stageBytes, dt,
                                       layout::str(mem) + ", a read-ahead ring of " + std::to_string(stages), alignedAbove(0, atom));
    int64_t vec = std::min(vectorWidth(*load, load->get(ir::attr::tensor), at, k_.type(load->results[0]).shape),
                           sharedVectorWidth(storeAt, dt, ring));
    if (int64_t bytes = vec * dtypeBytes(dt); !rings && !tma && t_.asyncCopy && bytes != 4 && bytes != 8 && bytes != 16) {
      f_.shared.pop_back();
      continue;
    }
    if (!rings) sharedFloor_ = f_.shared[size_t(ring)].offset + stages * stageBytes;
    readAhead_.emplace(v, ReadAhead{load, c.views, c.offsetOps, at, storeAt, vec, stageBytes / dtypeBytes(dt),
                                    {ring, loadAt, matrixLoad(loadAt, dt, ring)}, asyncProxy, tma});
    readAheadViews_.insert(c.views.begin(), c.views.end());
    given.push_back(v);
  }
  return given;
}

auto Lowering::mapped(const LinearLayout& lin, const CoordMap& map, const ir::Shape& shape) -> LinearLayout {
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

void Lowering::issueReadAhead(const ir::Block& body, const std::vector<ir::ValueId>& ahead, Reg k, Reg stage, Reg live) {
  std::map<ir::ValueId, std::optional<std::vector<Reg>>> saved;
  auto save = [&](ir::ValueId v) {
    auto it = regs_.find(v);
    saved.try_emplace(v, it == regs_.end() ? std::nullopt : std::optional(it->second));
  };
  save(body.args[0]);
  define(body.args[0], {k});
  int64_t tmaBytes = 0;
  for (ir::ValueId v : ahead) tmaBytes += readAhead_.at(v).tma ? readAhead_.at(v).tma->stageBytes : 0;
  if (tmaBytes)  // the stage's phase completes when thread 0 has arrived and the boxes' bytes are in
    b_.effect(KOp::mbarrier_expect, {castTo(stage, DType::i32), b_.binary("and", firstThread(), live)},
              {{"alloc", tma_.alloc}, {"bytes", tmaBytes}});
  for (ir::ValueId v : ahead) {
    const ReadAhead& r = readAhead_.at(v);
    for (const ir::Op* o : r.offsetOps) {
      for (ir::ValueId res : o->results) save(res);
      lower(*o);
    }
    if (r.tma) {
      issueTma(r, stage, live);
      continue;
    }
    int64_t tensor = r.load->get(ir::attr::tensor);
    DType dt = k_.type(v).dtype;
    Reg base = stageOffset(r, stage);
    for (int64_t reg = 0; reg < registerCount(r.at); reg += r.vec) {
      auto [addr, pred] = blockAddress(*r.load, tensor, coords(r.at, reg));
      if (!t_.asyncCopy) {  // registerStaging
        stagedLoads_.push_back({v, reg, loadGlobal(*r.load, addr, b_.binary("and", pred, live), r.vec), base});
        continue;
      }
      b_.effect(KOp::async_copy, {addr, b_.binary("and", pred, live), b_.binary("add", coords(r.storeAt, reg)[0], base)},
                {{"buffer", paramIndex(tensorName(tensor))}, {"alloc", r.staged.alloc}, {"bytes", r.vec * dtypeBytes(dt)}});
    }
  }
  if (copiesIn(ahead)) b_.effect(KOp::async_commit);
  for (auto& [v, regs] : saved) {
    if (regs) regs_[v] = *regs;
    else regs_.erase(v);
  }
}

void Lowering::dot(const ir::Op& op) {
  const layout::Layout& result = a_.of(op.results[0]);
  if (k_.type(op.results[0]).rank() != 2) unsupported(op, "of rank " + std::to_string(k_.type(op.results[0]).rank()));
  if (result.as<layout::Blocked>()) return fmaDot(op);
  const layout::MatrixAcc* acc = result.as<layout::MatrixAcc>();
  const layout::MatrixUnit* found = acc ? t_.matrixOf(acc->instr) : nullptr;
  if (!found) unsupported(op, "with layout " + layout::str(result));
  const layout::MatrixUnit& unit = *found;  // inference keeps padded shapes off matrix units
  if (layout::isWgmma(unit.instr)) return wgmmaDot(op, unit.k);
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

void Lowering::fmaDot(const ir::Op& op) {
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

auto Lowering::stageRowMajor(ir::ValueId v, int64_t offset) -> int64_t {
  DType dt = k_.type(v).dtype;
  int64_t alloc = allocShared(paddedNumel(v) * dtypeBytes(dt), dt, "row-major", offset);
  LinearLayout lin = linear(v);
  for (int64_t r = 0; r < registerCount(lin); ++r) {
    Reg index = rowMajor(coords(lin, r), layout::paddedShape(k_.type(v).shape));
    b_.effect(KOp::store_shared, {index, regs_.at(v).at(size_t(r))}, {{"alloc", alloc}});
  }
  return alloc;
}

}  // namespace tj::gpu::detail
