// The CPU lowering of blocks and ops: folds, whiles, ifs, stores, scans, sorts, histograms,
// checks and prints.
#include "lower/cpu/kernel_lowering.hpp"

#include "ir/op_cases.hpp"

// A switch over OpCode that leaves out an op is an error here (ir/op_cases.hpp).
#pragma GCC diagnostic error "-Wswitch"

namespace tj::cpu::detail {

// ---------------------------------------------------------------- ops

void KernelLowering::lowerBlock(const ir::Block& block) {
  int64_t total = 0;
  for (const ir::Op& op : block.ops) total += countOps(op);
  if (total <= kChunkedBodyOps) {
    for (const ir::Op& op : block.ops) lowerOp(op);
    return;
  }
  std::vector<llvm::BasicBlock*> starts;
  int64_t inChunk = kChunkOps;
  for (const ir::Op& op : block.ops) {
    if (inChunk >= kChunkOps) {
      starts.push_back(beginChunk());
      inChunk = 0;
    }
    lowerOp(op);
    inChunk += countOps(op);
  }
  starts.push_back(beginChunk());
  // After those of the blocks inside it; one chunk (a block long for the ops in its regions)
  // would gain nothing.
  if (starts.size() > 2) chunkStarts_.push_back(std::move(starts));
}

void KernelLowering::lowerOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::fold: return lowerFold(op);
    case OpCode::while_: return lowerWhile(op);
    case OpCode::if_: return lowerIf(op);
    case OpCode::store: return lowerStore(op);
    case OpCode::scatter: return lowerScatter(op);
    case OpCode::print: return lowerPrint(op);
    case OpCode::check: return lowerCheck(op);
    case OpCode::scan: return lowerScan(op);
    case OpCode::sort: return lowerSort(op);
    case OpCode::histogram: return lowerHistogram(op);
    case OpCode::dot: return lowerDot(op);
    case OpCode::yield: return;  // handled by lowerFold
    TJ_REDUCTION_OPS: return lowerReduction(op);
    // Values: computed per element where they are used (fused), or into a buffer here.
    TJ_UNARY_ELEMENTWISE_OPS: TJ_BINARY_ELEMENTWISE_OPS: TJ_SHAPE_OPS:
    case OpCode::program_id: case OpCode::num_programs: case OpCode::tensor_dim: case OpCode::scalar_param:
    case OpCode::constant: case OpCode::iota: case OpCode::select: case OpCode::fma: case OpCode::cast:
    case OpCode::load: case OpCode::gather: case OpCode::atomic: case OpCode::slice: case OpCode::concat: break;
  }
  ValueId r = op.results.at(0);
  Placement placed = plan_.of[size_t(r)];
  if (placed == Placement::scalar) {
    scalars_[r] = computeElement(op, {});
  } else if (op.code == OpCode::load && placed == Placement::fused && info_.uses[r] > 1) {
    // Read by several nests (the plan reads it again rather than copy it): staged once, here,
    // so that an edge block is gathered once.
    stagedLoads_.emplace(&op, stageLoad(op, allocateBuffer(type(r))));
  } else if (placed == Placement::packedOnce) {
    buffers_[r] = lowerPackedOnce(r);
    if (widensOperands(kernel_, *info_.dotUser[r], options_)) widened_.insert(r);
  } else if (plan_.buffered(r)) {
    bool widen = placed == Placement::widened;
    llvm::Value* buffer = allocateBuffer({widen ? DType::f32 : type(r).dtype, type(r).shape});
    if (widen) widened_.insert(r);
    if (placed == Placement::inPlace) {
      lowerInPlaceOperand(op, buffer);
    } else if (packsTransposedPairs(r)) {
      packTransposedPairs(r, buffer);
    } else {
      materialize(r, buffer, widen ? std::optional{DType::f32} : std::nullopt);
    }
    buffers_[r] = buffer;
  }
}

void KernelLowering::lowerFold(const ir::Op& op) {
  const ir::Block& body = op.regions.at(0);
  size_t n = op.results.size();
  std::vector<llvm::Value*> carried(n);
  std::vector<OutputAccumulator*> outputs;
  for (size_t i = 0; i < n; ++i) {
    carried[i] = allocateBuffer(type(op.results[i]));
    if (const ir::Op* store = outputAccumulatorStore(op, i)) {
      beginOutputAccumulator(*store, body.args[1 + i]);  // its zeros: the first step starts from zero
      outputs.push_back(&outputAccumulators_.at(store));
    } else {
      materialize(op.operands[2 + i], carried[i]);
    }
  }
  llvm::Value* start = element(op.operands[0], {});
  llvm::Value* end = element(op.operands[1], {});
  emitLoop(b_, start, end, [&](llvm::Value* k) {
    scalars_[body.args[0]] = k;
    for (OutputAccumulator* output : outputs) {
      output->firstStep = b_.CreateICmpEQ(k, start);
      output->lastStep = b_.CreateICmpEQ(b_.CreateAdd(k, i64(1)), end);
    }
    bindCarried(body, 1, carried);
    lowerBlock(body);
    storeCarried(body, 1, carried);
  });
  // With no step the tile is its initial zeros.
  for (OutputAccumulator* output : outputs)
    emitIf(b_, b_.CreateICmpSGE(start, end), [&] {
      const ir::Type& t = type(output->carried);
      emitLoop(b_, i64(0), i64(t.shape[0]), [&](llvm::Value* row) {
        llvm::Value* first = viewAddress(t.dtype, output->block.view, {row, i64(0)});
        b_.CreateMemSet(first, b_.getInt8(0), t.shape[1] * dtypeBytes(t.dtype), llvm::MaybeAlign(dtypeBytes(t.dtype)));
      });
    });
  for (size_t i = 0; i < n; ++i) buffers_[op.results[i]] = carried[i];
}

// The store that writes fold result i when the fold's last step can write the tile straight
// into the store's block of the output rather than into its buffer, copied there at the end (a
// memory-bound pass of its own: 4096x4096x64 spent a fifth of its time there). The tile starts
// as zeros (the first step starts from zero rather than from the buffer); each step updates it
// only as a dot's in-place accumulator, whose result the step only yields; a store in the
// fold's own block writes it unchanged at
// offsets known before the fold; no other op reads or writes that tensor. Earlier steps keep
// the buffer: the output's rows may lie a power of two apart, in the same cache sets.
const ir::Op* KernelLowering::outputAccumulatorStore(const ir::Op& fold, size_t i) const {
  ValueId result = fold.results[i], carried = fold.regions[0].args[1 + i];
  const ir::Op* store = info_.storer[result];
  const ir::Op* init = info_.def[fold.operands[2 + i]];
  const ir::Op* dot = info_.def[fold.regions[0].ops.back().operands[i]];
  DType dtype = type(result).dtype;
  if (!store || info_.uses[result] != 1 || info_.usedDeeper[result] || type(result).rank() != 2 ||
      (dtype != DType::f32 && dtype != DType::i32) ||
      !init || init->code != OpCode::constant || !dot || dot->code != OpCode::dot || dot->operands.size() != 3 ||
      dot->operands[2] != carried || info_.uses[carried] != 1 || info_.uses[dot->results[0]] != 1 ||
      !microKernelApplies(kernel_, *dot, options_) ||
      info_.tensorOps.at(store->get(ir::attr::tensor)) != 1)
    return nullptr;
  ir::Number value = init->get(ir::attr::value);
  const auto* integer = std::get_if<int64_t>(&value);
  const auto* real = std::get_if<double>(&value);
  if (!(integer && *integer == 0) && !(real && *real == 0 && !std::signbit(*real))) return nullptr;
  for (size_t d = 0; d + 1 < store->operands.size(); ++d)
    if (!scalars_[store->operands[d]]) return nullptr;  // not known before the fold
  return store;
}

// The output block a fold's last step writes (see outputAccumulatorStore): the tensor's, where
// it lies inside, else a stack block that the store scatters.
void KernelLowering::beginOutputAccumulator(const ir::Op& store, ValueId carried) {
  outputAccumulators_.emplace(&store, OutputAccumulator{.carried = carried, .block = stageStore(store)});
}

const KernelLowering::OutputAccumulator* KernelLowering::outputAccumulatorOf(ValueId carried) const {
  for (const auto& [store, output] : outputAccumulators_)
    if (output.carried == carried) return &output;
  return nullptr;
}

// The region's arguments from firstArg on read the carried buffers.
void KernelLowering::bindCarried(const ir::Block& region, size_t firstArg, const std::vector<llvm::Value*>& carried) {
  for (size_t i = 0; i < carried.size(); ++i) {
    buffers_[region.args[firstArg + i]] = carried[i];
    if (type(region.args[firstArg + i]).isScalar()) scalars_[region.args[firstArg + i]] = nullptr;
  }
}

// The region's yielded values into the carried buffers. Every new value is computed before
// any carried buffer is overwritten: they may read each other.
void KernelLowering::storeCarried(const ir::Block& region, size_t firstArg, const std::vector<llvm::Value*>& carried) {
  const ir::Op& yield = region.ops.back();
  std::vector<llvm::Value*> next(carried.size());
  for (size_t i = 0; i < carried.size(); ++i) {
    ValueId y = yield.operands[i];
    if (y == region.args[firstArg + i] || buffers_[y] == carried[i]) continue;
    if (outputAccumulatorOf(region.args[firstArg + i]))
      throw InternalError("lower/cpu", "an output accumulator's dot did not accumulate in place");
    next[i] = allocateBuffer(type(y));
    materialize(y, next[i]);
  }
  for (size_t i = 0; i < carried.size(); ++i)
    if (next[i]) {
      const ir::Type& t = type(yield.operands[i]);
      b_.CreateMemCpy(carried[i], llvm::MaybeAlign(64), next[i], llvm::MaybeAlign(64), t.numel() * dtypeBytes(t.dtype));
    }
}

// while (cond(carried)) carried = body(carried), on the carried buffers; cond runs in the
// loop's header block.
void KernelLowering::lowerWhile(const ir::Op& op) {
  const ir::Block &cond = op.regions.at(0), &body = op.regions.at(1);
  std::vector<llvm::Value*> carried;
  for (size_t i = 0; i < op.results.size(); ++i) {
    carried.push_back(allocateBuffer(type(op.results[i])));
    materialize(op.operands[i], carried[i]);
  }
  llvm::Function* f = b_.GetInsertBlock()->getParent();
  auto* header = llvm::BasicBlock::Create(ctx_, "while.cond", f);
  auto* loop = llvm::BasicBlock::Create(ctx_, "while.body", f);
  auto* exit = llvm::BasicBlock::Create(ctx_, "while.end", f);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  bindCarried(cond, 0, carried);
  lowerBlock(cond);
  b_.CreateCondBr(element(cond.ops.back().operands[0], {}), loop, exit);
  b_.SetInsertPoint(loop);
  bindCarried(body, 0, carried);
  lowerBlock(body);
  storeCarried(body, 0, carried);
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  for (size_t i = 0; i < carried.size(); ++i) buffers_[op.results[i]] = carried[i];
}

// A branch; the side that runs writes its yielded values into the results' buffers.
void KernelLowering::lowerIf(const ir::Op& op) {
  std::vector<llvm::Value*> results;
  for (ValueId r : op.results) results.push_back(allocateBuffer(type(r)));
  auto side = [&](const ir::Block& b) {
    return [&] {
      lowerBlock(b);
      for (size_t i = 0; i < results.size(); ++i) materialize(b.ops.back().operands[i], results[i]);
    };
  };
  emitIf(b_, element(op.operands[0], {}), side(op.regions[0]), side(op.regions[1]));
  for (size_t i = 0; i < results.size(); ++i) buffers_[op.results[i]] = results[i];
}

void KernelLowering::lowerStore(const ir::Op& op) {
  ValueId value = op.operands.back();
  int64_t tensor = op.get(ir::attr::tensor);
  const ir::Shape& block = type(value).shape;
  StagedStore staged;
  if (auto output = outputAccumulators_.find(&op); output != outputAccumulators_.end()) {
    staged = output->second.block;  // the fold wrote the block already
  } else {
    staged = stageStore(op);
    DType dtype = kernel_.tensors[tensor].dtype;
    emitNest(block, {value}, [&](const Indices& idx) {
      b_.CreateStore(toStorage(b_, element(value, idx), dtype), viewAddress(dtype, staged.view, idx));
    });
  }
  emitIf(b_, b_.CreateNot(staged.inside), [&] { copyBlock(kScatterBlock, tensor, staged.offsets, block, staged.stagingBuffer); });
}

// A store's block wholly inside its tensor (with unit innermost stride) is written in place;
// any other to a stack block first, whose elements inside the tensor are then copied out: the
// value's code is emitted once.
KernelLowering::StagedStore KernelLowering::stageStore(const ir::Op& store) {
  int64_t tensor = store.get(ir::attr::tensor);
  const ir::Shape& block = type(store.operands.back()).shape;
  StagedStore staged{{}, nullptr, allocateBuffer({kernel_.tensors[tensor].dtype, block}), {}};
  for (size_t d = 0; d < block.size(); ++d) staged.offsets.push_back(element(store.operands[d], {}));
  staged.inside = blockInside(tensor, staged.offsets, block);
  staged.view = blockView(tensor, staged.offsets, staged.inside, staged.stagingBuffer, block);
  return staged;
}

// Left to right along the axis in row-major order: each element combines the one before it,
// already in the buffer (the first is x's own), rounded as the elementwise op rounds.
void KernelLowering::lowerScan(const ir::Op& op) {
  if (!op.regions.empty()) return lowerCombineScan(op);
  ValueId x = op.operands[0], r = op.results[0];
  const ir::Type& t = type(r);
  size_t axis = static_cast<size_t>(op.get(ir::attr::axis));
  const std::string& fn = op.get(ir::attr::fn);
  ir::Op combine{fn == "add" ? OpCode::add : fn == "mul" ? OpCode::mul : fn == "max" ? OpCode::max : OpCode::min,
                 {}, op.results, {}, {}, op.loc};
  llvm::Value* buffer = allocateBuffer(t);
  emitNest(t.shape, {x}, [&](const Indices& idx) {
    llvm::Value* v = element(x, idx);
    llvm::Value* first = b_.CreateICmpEQ(idx[axis], i64(0));
    Indices before = idx;
    before[axis] = b_.CreateSelect(first, i64(0), b_.CreateSub(idx[axis], i64(1)));
    llvm::Value* prev = fromStorage(b_, b_.CreateLoad(storageType(ctx_, t.dtype), bufferAddress(buffer, t, before)), t.dtype);
    storeToBuffer(buffer, t, idx, b_.CreateSelect(first, v, binary(combine, prev, v)));
  });
  buffers_[r] = buffer;
}

// As lowerScan, with the combine's ops lowered on the scalars of the element before (already
// combined, in the results' buffers) and the element itself.
void KernelLowering::lowerCombineScan(const ir::Op& op) {
  const ir::Block& combine = op.regions[0];
  const ir::Op& yield = combine.ops.back();
  size_t n = op.operands.size(), axis = static_cast<size_t>(op.get(ir::attr::axis));
  std::vector<llvm::Value*> buffers;
  for (ValueId r : op.results) buffers.push_back(allocateBuffer(type(r)));
  emitNest(type(op.results[0]).shape, op.operands, [&](const Indices& idx) {
    auto first = [&] {
      for (size_t i = 0; i < n; ++i) storeToBuffer(buffers[i], type(op.results[i]), idx, element(op.operands[i], idx));
    };
    auto later = [&] {  // the combine runs on defined values only: it may divide
      Indices before = idx;
      before[axis] = b_.CreateSub(idx[axis], i64(1));
      for (size_t i = 0; i < n; ++i) {
        const ir::Type& t = type(op.results[i]);
        scalars_[combine.args[i]] =
            fromStorage(b_, b_.CreateLoad(storageType(ctx_, t.dtype), bufferAddress(buffers[i], t, before)), t.dtype);
        scalars_[combine.args[n + i]] = element(op.operands[i], idx);
      }
      lowerBlock(combine);
      for (size_t i = 0; i < n; ++i) storeToBuffer(buffers[i], type(op.results[i]), idx, element(yield.operands[i], {}));
    };
    emitIf(b_, b_.CreateICmpEQ(idx[axis], i64(0)), first, later);
  });
  for (size_t i = 0; i < n; ++i) buffers_[op.results[i]] = buffers[i];
}

// A bottom-up merge sort of each line along the axis, stable as merging runs left first is:
// for widths 1, 2, 4, ... the line is copied to a scratch line and its runs merged back.
void KernelLowering::lowerSort(const ir::Op& op) {
  const ir::Type& keys = type(op.operands[0]);
  size_t axis = static_cast<size_t>(op.get(ir::attr::axis)), count = op.operands.size();
  int64_t n = keys.shape[axis];
  std::vector<ir::Type> lineTypes;
  for (size_t v = 0; v < count; ++v) {
    const ir::Type& t = type(op.results[v]);
    llvm::Value* buffer = allocateBuffer(t);
    emitNest(t.shape, {op.operands[v]}, [&](const Indices& idx) { storeToBuffer(buffer, t, idx, element(op.operands[v], idx)); });
    buffers_[op.results[v]] = buffer;
    lineTypes.push_back({t.dtype, {n}});
  }
  std::vector<llvm::Value*> scratch;
  for (const ir::Type& t : lineTypes) scratch.push_back(allocateBuffer(t));
  llvm::IRBuilder<> entry(allocaBlock_, allocaBlock_->begin());
  llvm::Value* left = entry.CreateAlloca(b_.getInt64Ty());
  llvm::Value* right = entry.CreateAlloca(b_.getInt64Ty());
  auto read = [&](llvm::Value* buffer, const ir::Type& t, const Indices& idx) {
    return fromStorage(b_, b_.CreateLoad(storageType(ctx_, t.dtype), bufferAddress(buffer, t, idx)), t.dtype);
  };
  ir::Shape lines = keys.shape;
  lines[axis] = 1;
  emitNest(lines, {}, [&](const Indices& line) {
    auto at = [&](llvm::Value* i) {
      Indices idx = line;
      idx[axis] = i;
      return idx;
    };
    for (int64_t width = 1; width < n; width *= 2) {
      emitLoop(b_, i64(0), i64(n), [&](llvm::Value* i) {
        for (size_t v = 0; v < count; ++v)
          storeToBuffer(scratch[v], lineTypes[v], {i}, read(buffers_[op.results[v]], type(op.results[v]), at(i)));
      });
      emitLoop(b_, i64(0), i64((n + 2 * width - 1) / (2 * width)), [&](llvm::Value* run) {
        llvm::Value* lo = b_.CreateMul(run, i64(2 * width));
        llvm::Value* mid = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(lo, i64(width)), i64(n));
        llvm::Value* hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(lo, i64(2 * width)), i64(n));
        b_.CreateStore(lo, left);
        b_.CreateStore(mid, right);
        emitLoop(b_, lo, hi, [&](llvm::Value* o) {
          llvm::Value* l = b_.CreateLoad(b_.getInt64Ty(), left);
          llvm::Value* r = b_.CreateLoad(b_.getInt64Ty(), right);
          llvm::Value* lAt = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, l, i64(n - 1));  // in bounds when used up
          llvm::Value* rAt = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, r, i64(n - 1));
          llvm::Value* rightFirst = sortsBefore(op, read(scratch[0], lineTypes[0], {rAt}), read(scratch[0], lineTypes[0], {lAt}));
          llvm::Value* takeRight = b_.CreateAnd(b_.CreateICmpSLT(r, hi), b_.CreateOr(b_.CreateICmpSGE(l, mid), rightFirst));
          llvm::Value* from = b_.CreateSelect(takeRight, rAt, lAt);
          for (size_t v = 0; v < count; ++v)
            storeToBuffer(buffers_[op.results[v]], type(op.results[v]), at(o), read(scratch[v], lineTypes[v], {from}));
          b_.CreateStore(b_.CreateSelect(takeRight, l, b_.CreateAdd(l, i64(1))), left);
          b_.CreateStore(b_.CreateSelect(takeRight, b_.CreateAdd(r, i64(1)), r), right);
        });
      });
    }
  });
}

// Counts from zero, one element of x after another.
void KernelLowering::lowerHistogram(const ir::Op& op) {
  ValueId x = op.operands[0], r = op.results[0];
  const ir::Type& t = type(r);
  llvm::Value* counts = allocateBuffer(t);
  emitLoop(b_, i64(0), i64(t.shape[0]), [&](llvm::Value* bin) { storeToBuffer(counts, t, {bin}, constant(DType::i32, 0)); });
  emitNest(type(x).shape, {x}, [&](const Indices& idx) {
    llvm::Value* v = cast(element(x, idx), type(x).dtype, DType::i64);
    emitIf(b_, b_.CreateICmpULT(v, i64(t.shape[0])), [&] {
      llvm::Value* at = bufferAddress(counts, t, {v});
      b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt32Ty(), at), b_.getInt32(1)), at);
    });
  });
  buffers_[r] = counts;
}

// Whether key a sorts before key b: their order, NaN past every number.
llvm::Value* KernelLowering::sortsBefore(const ir::Op& op, llvm::Value* a, llvm::Value* b) {
  bool descending = op.get(ir::attr::descending) != 0;
  if (!a->getType()->isFloatingPointTy())
    return b_.CreateICmp(intPredicate(descending ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_SLT, type(op.operands[0]).dtype), a, b);
  llvm::Value* aNaN = b_.CreateFCmpUNO(a, a);
  llvm::Value* bNaN = b_.CreateFCmpUNO(b, b);
  llvm::Value* nanFirst = descending ? b_.CreateAnd(aNaN, b_.CreateNot(bNaN)) : b_.CreateAnd(b_.CreateNot(aNaN), bNaN);
  return b_.CreateOr(descending ? b_.CreateFCmpOGT(a, b) : b_.CreateFCmpOLT(a, b), nanFirst);
}

// KernelFaults, field by field.
llvm::StructType* KernelLowering::faultsType() {
  return llvm::StructType::get(ctx_, {b_.getInt32Ty(), b_.getInt64Ty(), b_.getInt32Ty(), b_.getInt64Ty(), b_.getInt64Ty()});
}

// A false element claims KernelFaults::check once (the first check to fail, in any program)
// and records its program and element; the device raises the Error after the launch.
void KernelLowering::lowerCheck(const ir::Op& op) {
  int64_t number = checks_++;
  ValueId cond = op.operands[0];
  const ir::Type& t = type(cond);
  auto record = [&](llvm::Value* flat) {
    withFaults([&](llvm::Value* faults) {
      constexpr auto order = llvm::AtomicOrdering::Monotonic;
      llvm::Value* claimed = b_.CreateAtomicCmpXchg(b_.CreateStructGEP(faultsType(), faults, 2), b_.getInt32(0),
                                                    b_.getInt32(uint32_t(number + 1)), llvm::MaybeAlign(4), order, order);
      emitIf(b_, b_.CreateExtractValue(claimed, 1), [&] {
        b_.CreateStore(programLinear_, b_.CreateStructGEP(faultsType(), faults, 3));
        b_.CreateStore(flat, b_.CreateStructGEP(faultsType(), faults, 4));
      });
    });
  };
  if (t.isScalar()) return emitIf(b_, b_.CreateNot(element(cond, {})), [&] { record(i64(0)); });
  emitNest(t.shape, {cond}, [&](const Indices& idx) {
    llvm::Value* flat = i64(0);
    for (size_t d = 0; d < idx.size(); ++d) flat = b_.CreateAdd(b_.CreateMul(flat, i64(t.shape[d])), idx[d]);
    emitIf(b_, b_.CreateNot(element(cond, idx)), [&] { record(flat); });
  });
}

void KernelLowering::lowerPrint(const ir::Op& op) {
  ValueId v = op.operands[0];
  const ir::Type& t = type(v);
  llvm::Value* buffer = buffers_[v];
  if (!buffer) {
    buffer = allocateBuffer(t);
    materialize(v, buffer);
  }
  llvm::Type* i64Ty = b_.getInt64Ty();
  auto* shapeType = llvm::ArrayType::get(i64Ty, std::max<size_t>(t.shape.size(), 1));
  llvm::IRBuilder<> entry(allocaBlock_, allocaBlock_->begin());
  llvm::Value* shape = entry.CreateAlloca(shapeType);
  for (size_t d = 0; d < t.shape.size(); ++d)
    b_.CreateStore(i64(t.shape[d]), b_.CreateConstInBoundsGEP2_32(shapeType, shape, 0, static_cast<unsigned>(d)));
  llvm::Value* fnPtr = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(argsType_, args_, 2));
  llvm::Value* context = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(argsType_, args_, 3));
  llvm::Value* label = b_.CreateGlobalStringPtr(op.get(ir::attr::label));
  auto* fnType = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getPtrTy(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy()}, false);
  emitIf(b_, b_.CreateIsNotNull(fnPtr), [&] {
    b_.CreateCall(fnType, fnPtr, {context, label, b_.getInt32(static_cast<int>(t.dtype)), b_.getInt32(t.rank()), shape, buffer, programIdArray_});
  });
}

}  // namespace tj::cpu::detail
