// The CPU lowering of buffers and loop nests: where tiles live and the loops over them.
#include "lower/cpu/kernel_lowering.hpp"

namespace tj::cpu::detail {

// ---------------------------------------------------------------- buffers and nests

// Tiles share the stack while they fit kStackBudget; the others go to the heap block.
llvm::Value* KernelLowering::allocateBuffer(const ir::Type& t) {
  int64_t bytes = alignToBuffer(t.numel() * dtypeBytes(t.dtype));
  if (stackBytes_ + bytes <= kStackBudget) {
    stackBytes_ += bytes;
    llvm::IRBuilder<> entry(allocaBlock_, allocaBlock_->begin());
    auto* alloca = entry.CreateAlloca(storageType(ctx_, t.dtype), i64(t.numel()));
    alloca->setAlignment(llvm::Align(kBufferAlign));
    return alloca;
  }
  // Addressed from the heap block right after it is allocated, so every use is dominated.
  llvm::IRBuilder<> entry(heap_->getParent(), std::next(heap_->getIterator()));
  llvm::Value* buffer = entry.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), heap_, static_cast<uint64_t>(heapBytes_));
  heapBuffers_.insert(buffer);
  heapBytes_ += bytes;
  return buffer;
}

// Sizes the heap block, frees it at the return and, when the allocation fails,
// reports kFaultOutOfMemory and runs no program. A kernel whose tiles all fit the
// stack drops the block.
void KernelLowering::finishHeap(llvm::Function* fn, llvm::ReturnInst* ret) {
  if (heapBytes_ == 0) {
    llvm::Function* alignedAlloc = heap_->getCalledFunction();
    heap_->eraseFromParent();
    alignedAlloc->eraseFromParent();
    return;
  }
  heap_->setArgOperand(1, i64(heapBytes_));
  b_.SetInsertPoint(ret);
  b_.CreateCall(module_.getOrInsertFunction("free", b_.getVoidTy(), b_.getPtrTy()), {heap_});
  llvm::BasicBlock* entry = heap_->getParent();
  llvm::BasicBlock* programs = entry->splitBasicBlock(std::next(heap_->getIterator()), "programs");
  entry->getTerminator()->eraseFromParent();
  auto* outOfMemory = llvm::BasicBlock::Create(ctx_, "out_of_memory", fn);
  b_.SetInsertPoint(entry);
  b_.CreateCondBr(b_.CreateIsNull(heap_), outOfMemory, programs);
  b_.SetInsertPoint(outOfMemory);
  emitFault(kFaultOutOfMemory, heapBytes_);
  b_.CreateRetVoid();
}

// ORs `bit` into KernelArgs::faults (and records scratchBytes with it when nonzero),
// unless the caller passed no faults.
void KernelLowering::emitFault(Fault bit, int64_t scratchBytes) {
  withFaults([&](llvm::Value* faults) {
    b_.CreateAtomicRMW(llvm::AtomicRMWInst::Or, b_.CreateStructGEP(faultsType(), faults, 0), b_.getInt32(bit),
                       llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
    if (!scratchBytes) return;
    // Every call that fails stores the same size.
    auto* store = b_.CreateAlignedStore(i64(scratchBytes), b_.CreateStructGEP(faultsType(), faults, 1), llvm::Align(8));
    store->setAtomic(llvm::AtomicOrdering::Monotonic);
  });
}

// body(KernelArgs::faults) where the caller passed faults.
void KernelLowering::withFaults(const std::function<void(llvm::Value*)>& body) {
  llvm::Value* faults = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(argsType_, args_, 4));
  emitIf(b_, b_.CreateIsNotNull(faults), [&] { body(faults); });
}

llvm::Value* KernelLowering::bufferAddress(llvm::Value* buffer, const ir::Type& t, const Indices& idx) {
  llvm::Value* linear = i64(0);
  for (size_t d = 0; d < idx.size(); ++d) linear = b_.CreateAdd(b_.CreateMul(linear, i64(t.shape[d])), idx[d]);
  return b_.CreateInBoundsGEP(storageType(ctx_, t.dtype), buffer, linear);
}

llvm::Value* KernelLowering::bufferElement(llvm::Value* buffer, const ir::Type& t, const Indices& idx) {
  return fromStorage(b_, b_.CreateLoad(storageType(ctx_, t.dtype), bufferAddress(buffer, t, idx)), t.dtype);
}

void KernelLowering::storeToBuffer(llvm::Value* buffer, const ir::Type& t, const Indices& idx, llvm::Value* v) {
  b_.CreateStore(toStorage(b_, v, t.dtype), bufferAddress(buffer, t, idx));
}

void KernelLowering::materialize(ValueId v, llvm::Value* buffer, std::optional<DType> as) {
  const ir::Type t{as.value_or(type(v).dtype), type(v).shape};
  if (t.isScalar()) {
    storeToBuffer(buffer, t, {}, element(v, {}));
    return;
  }
  if (materializeTranspose(v, buffer, t)) return;
  if (roundsToBf16ByHost(v) && !as) {
    mapBuffer(buffers_[info_.def[v]->operands[0]], b_.getFloatTy(), buffer, b_.getInt16Ty(), t.numel(), [&](llvm::Value* x) {
      llvm::Value* rounded = b_.CreateFPTrunc(x, x->getType()->getWithNewType(b_.getBFloatTy()));
      return b_.CreateBitCast(rounded, x->getType()->getWithNewType(b_.getInt16Ty()));
    });
    return;
  }
  emitNest(t.shape, {v}, [&](const Indices& idx) { storeToBuffer(buffer, t, idx, element(v, idx)); });
}

// Whether v, a buffered f32 tile cast to bf16 that only a dot's bf16 products read, is rounded by
// the host's instruction, a vector at a time (AVX512-BF16's vcvtneps2bf16: one for 16 elements,
// where the rounding takes twelve integer ops; LLVM's vectorizer took it 4 elements at a time):
// it takes subnormal inputs as zeros, as those products (vdpbf16ps, AMX's tdpbf16ps) take their
// operands. bf16 attention's P: 1.14 -> 1.06 ms at 1024 (the rounding pass was a tenth of the
// kernel). Emulated products keep subnormals, and so does the rounding for them.
bool KernelLowering::roundsToBf16ByHost(ValueId v) const {
  const ir::Op* op = info_.def[v];
  const ir::Op* dot = info_.dotUser[v];
  if (!op || op->code != OpCode::cast || type(v).dtype != DType::bf16 || type(op->operands[0]).dtype != DType::f32 ||
      !buffers_[op->operands[0]] || !dot || info_.uses[v] != 1 || !options_.bf16DotProduct ||
      options_.emulateMatrixInstructions)
    return false;
  DotProducts products = dotProducts(kernel_, *dot, options_);
  return products == DotProducts::pairs || products == DotProducts::amxTiles;
}

// A transposed matrix of 32-bit values or 16-bit floats (attention's K^T, a dot operand; 16-bit
// floats in their f32 compute form) 8x8 block by block: eight rows read as vectors, transposed
// in registers by three rounds of shuffles, written as eight rows. Element by element, one side
// or the other is strided and no loop vectorizes. False (nothing emitted) for other values.
bool KernelLowering::materializeTranspose(ValueId v, llvm::Value* buffer, const ir::Type& as) {
  constexpr int64_t kBlock = 8;
  const ir::Type& t = type(v);
  const ir::Op* op = info_.def[v];
  if (!op || op->code != OpCode::permute || t.rank() != 2 || op->get(ir::attr::perm) != std::vector<int64_t>{1, 0} ||
      !(dtypeBytes(t.dtype) == 4 || t.dtype == DType::f16 || t.dtype == DType::bf16) || t.shape[0] % kBlock != 0 ||
      t.shape[1] % kBlock != 0)
    return false;
  ValueId source = op->operands[0];
  ir::Shape blocks = {t.shape[1] / kBlock, t.shape[0] / kBlock};  // over the source's rows, then columns
  auto* vectorType = llvm::FixedVectorType::get(compute(t.dtype), kBlock);
  llvm::Value* rowSlots = llvm::IRBuilder<>(allocaBlock_, allocaBlock_->begin()).CreateAlloca(vectorType, i64(kBlock));
  Indices idx;
  auto block = [&](const Indices& at) {
    llvm::Value* row0 = b_.CreateMul(at[0], i64(kBlock));
    llvm::Value* col0 = b_.CreateMul(at[1], i64(kBlock));
    // The eight rows through a small stack array, read by one loop: the source's element
    // code (indices, masks) is emitted once per column rather than 64 times.
    emitLoop(b_, i64(0), i64(kBlock), [&](llvm::Value* r) {
      llvm::Value* row = llvm::PoisonValue::get(vectorType);
      for (int64_t c = 0; c < kBlock; ++c)
        row = b_.CreateInsertElement(row, element(source, {b_.CreateAdd(row0, r), b_.CreateAdd(col0, i64(c))}), c);
      b_.CreateStore(row, b_.CreateInBoundsGEP(vectorType, rowSlots, r));
    });
    std::vector<llvm::Value*> rows;
    for (int64_t r = 0; r < kBlock; ++r) rows.push_back(b_.CreateLoad(vectorType, b_.CreateInBoundsGEP(vectorType, rowSlots, i64(r))));
    std::vector<llvm::Value*> columns = transpose8x8(rows);
    for (int64_t k = 0; k < kBlock; ++k)
      b_.CreateAlignedStore(toStorage(b_, columns[size_t(k)], as.dtype),
                            bufferAddress(buffer, as, {b_.CreateAdd(col0, i64(k)), row0}),
                            llvm::Align(dtypeBytes(as.dtype)));
  };
  // Where the source's index masks may be false, the plain nest.
  emitFastOrGeneral({source}, [&] { emitNestLevels(blocks, 0, idx, block); }, [&] {
    emitNestLevels(t.shape, 0, idx, [&](const Indices& at) { storeToBuffer(buffer, as, at, element(v, at)); });
  });
  return true;
}

// The columns of an 8x8 block given as its eight rows (vectors of 8), by three rounds of
// shuffles: pairs of rows interleaved, then pairs of pairs, then the two halves.
std::vector<llvm::Value*> KernelLowering::transpose8x8(std::vector<llvm::Value*> rows) {
  auto round = [&](std::initializer_list<int> lo, std::initializer_list<int> hi, int step) {
    std::vector<llvm::Value*> next(rows.size());
    for (int i = 0; i < 8; i += 2 * step)
      for (int j = i; j < i + step; ++j) {
        next[size_t(j)] = b_.CreateShuffleVector(rows[size_t(j)], rows[size_t(j + step)], llvm::ArrayRef<int>(lo.begin(), lo.size()));
        next[size_t(j + step)] = b_.CreateShuffleVector(rows[size_t(j)], rows[size_t(j + step)], llvm::ArrayRef<int>(hi.begin(), hi.size()));
      }
    rows = std::move(next);
  };
  round({0, 8, 1, 9, 4, 12, 5, 13}, {2, 10, 3, 11, 6, 14, 7, 15}, 1);
  round({0, 1, 8, 9, 4, 5, 12, 13}, {2, 3, 10, 11, 6, 7, 14, 15}, 2);
  round({0, 1, 2, 3, 8, 9, 10, 11}, {4, 5, 6, 7, 12, 13, 14, 15}, 4);
  // rows[k] is now column kColumn[k]: the middle round leaves columns 1 and 2, 5 and 6 swapped.
  constexpr int kColumn[8] = {0, 2, 1, 3, 4, 6, 5, 7};
  std::vector<llvm::Value*> columns(8);
  for (int k = 0; k < 8; ++k) columns[size_t(kColumn[k])] = rows[size_t(k)];
  return columns;
}

// Whether v, the transpose of a loaded block of bf16 [n, k] that a dot multiplies by pairs (or AMX
// tiles) alone, is written straight into packPairs' layout by packTransposedPairs.
bool KernelLowering::packsTransposedPairs(ValueId v) const {
  const ir::Op* op = info_.def[v];
  const ir::Op* dot = info_.dotUser[v];
  if (!op || op->code != OpCode::permute || op->get(ir::attr::perm) != std::vector<int64_t>{1, 0} || !dot ||
      dot->operands[1] != v || dot->operands[0] == v || info_.uses[v] != 1 || type(v).dtype != DType::bf16)
    return false;
  DotProducts products = dotProducts(kernel_, *dot, options_);
  const ir::Shape& shape = type(v).shape;  // [k, n]
  return transposedLoad(v) && (products == DotProducts::pairs || products == DotProducts::amxTiles) &&
         shape[0] % 16 == 0 && shape[1] % 8 == 0;
}

// The load under permute v (through reshapes that add or drop unit axes, as a block of a
// [batch, heads, seq, dim] tensor is read), each fused and used once; null if there is none.
const ir::Op* KernelLowering::transposedLoad(ValueId v) const {
  ValueId x = info_.def[v]->operands[0];
  const ir::Shape& transposed = type(x).shape;  // [n, k]
  while (info_.def[x] && info_.def[x]->code == OpCode::reshape && info_.uses[x] == 1 && !plan_.buffered(x))
    x = info_.def[x]->operands[0];
  const ir::Op* load = info_.def[x];
  if (!load || load->code != OpCode::load || info_.uses[x] != 1 || plan_.buffered(x)) return nullptr;
  const ir::Shape& loaded = type(x).shape;
  bool unitsThenShape = loaded.size() >= 2 && std::equal(transposed.begin(), transposed.end(), loaded.end() - 2) &&
                        std::all_of(loaded.begin(), loaded.end() - 2, [](int64_t d) { return d == 1; });
  return unitsThenShape ? load : nullptr;
}

// packPairs(permute(x)) in one pass, for x a loaded bf16 block [n, k]: its transpose's pair
// layout [k/2, n, 2] is x's rows read as 32-bit words (two neighbours along k), transposed
// (attention's K^T: one 8x8 word transpose where there were a 16-bit transpose and a packing).
void KernelLowering::packTransposedPairs(ValueId v, llvm::Value* packed) {
  const ir::Op& load = *transposedLoad(v);
  const ir::Shape& xShape = type(load.results[0]).shape;
  const int64_t n = xShape.end()[-2], words = xShape.back() / 2;
  auto* wordsTy = llvm::FixedVectorType::get(b_.getInt32Ty(), 8);
  auto pack = [&] {
    const BlockView& x = stagedLoads_.at(&load);
    Indices idx;
    emitNestLevels({n / 8, words / 8}, 0, idx, [&](const Indices& at) {
      llvm::Value* row0 = b_.CreateMul(at[0], i64(8));
      llvm::Value* word0 = b_.CreateMul(at[1], i64(8));
      std::vector<llvm::Value*> rows;
      for (int64_t r = 0; r < 8; ++r) {
        Indices first(xShape.size() - 2, i64(0));  // of the row's word
        first.insert(first.end(), {b_.CreateAdd(row0, i64(r)), b_.CreateMul(word0, i64(2))});
        llvm::Value* from = viewAddress(DType::bf16, x, first);
        rows.push_back(b_.CreateAlignedLoad(wordsTy, from, llvm::Align(2)));
      }
      std::vector<llvm::Value*> columns = transpose8x8(rows);
      for (int64_t c = 0; c < 8; ++c) {
        llvm::Value* to = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(word0, i64(c)), i64(n)), row0);
        b_.CreateAlignedStore(columns[size_t(c)], b_.CreateInBoundsGEP(b_.getInt32Ty(), packed, to), llvm::Align(4));
      }
    });
  };
  emitFastOrGeneral({load.results[0]}, pack, pack);  // (a load has no index masks)
}

void KernelLowering::collectFacts(ValueId v, NestReads& facts, std::set<ValueId>& seen) const {
  if (buffers_[v] || type(v).isScalar() || !seen.insert(v).second) return;
  const ir::Op* op = info_.def[v];
  if (!op || !isFusable(op->code)) return;
  if (op->code == OpCode::load) facts.loads.push_back(op);
  if (op->code == OpCode::cmp && isIndexMask(*op)) facts.masks.push_back(op);
  for (ValueId o : op->operands) collectFacts(o, facts, seen);
}

// The op defining the one value a tile broadcasts (through reshapes; a constant tile is its own),
// or null.
const ir::Op* KernelLowering::broadcastScalar(ValueId v) const {
  for (const ir::Op* op = info_.def[v]; op && (op->code == OpCode::broadcast || op->code == OpCode::reshape);
       op = info_.def[v])
    v = op->operands[0];
  const ir::Op* def = info_.def[v];
  return type(v).isScalar() || (def && def->code == OpCode::constant) ? def : nullptr;
}

std::optional<KernelLowering::IndexRange> KernelLowering::indexRange(ValueId v) const {
  if (type(v).dtype != DType::i32) return std::nullopt;
  const ir::Op* op = info_.def[v];
  if (!op) return std::nullopt;
  if (op->code == OpCode::iota) return IndexRange{.iota = op};
  if (const ir::Op* scalar = broadcastScalar(v)) return IndexRange{.offset = scalar};
  if (op->code != OpCode::add) return std::nullopt;
  for (int side : {0, 1}) {
    const ir::Op* iota = info_.def[op->operands[size_t(side)]];
    const ir::Op* offset = broadcastScalar(op->operands[size_t(1 - side)]);
    if (iota && iota->code == OpCode::iota && offset) return IndexRange{.iota = iota, .offset = offset};
  }
  return std::nullopt;
}

// A compare of index ranges, at least one an iota (`cols < n`, `cols <= rows`, ...), that the
// fast path can prove true for the whole tile from the ranges' ends.
bool KernelLowering::isIndexMask(const ir::Op& cmp) const {
  const std::string& pred = cmp.get(ir::attr::pred);
  if (pred != "lt" && pred != "le" && pred != "gt" && pred != "ge") return false;
  auto a = indexRange(cmp.operands[0]), b = indexRange(cmp.operands[1]);
  return a && b && (a->iota || b->iota);
}

// Whether every element of an index mask is true: the lesser side's largest value is below
// (or at, for <=) the greater side's smallest, with no i32 overflow in `iota + c`.
llvm::Value* KernelLowering::indexMaskHolds(const ir::Op& cmp) {
  llvm::Value* holds = b_.getTrue();
  auto ends = [&](ValueId v) {
    IndexRange r = *indexRange(v);
    llvm::Value* lo = r.offset ? b_.CreateSExt(element(r.offset->results[0], {}), b_.getInt64Ty()) : i64(0);
    if (!r.iota) return std::pair{lo, lo};
    int64_t extent = type(r.iota->results[0]).shape[static_cast<size_t>(r.iota->get(ir::attr::axis))];
    llvm::Value* hi = b_.CreateAdd(lo, i64(extent - 1));
    holds = b_.CreateAnd(holds, b_.CreateICmpSLE(hi, i64(std::numeric_limits<int32_t>::max())));
    return std::pair{lo, hi};
  };
  auto [aLo, aHi] = ends(cmp.operands[0]);
  auto [bLo, bHi] = ends(cmp.operands[1]);
  const std::string& pred = cmp.get(ir::attr::pred);
  llvm::Value* always = pred == "lt" ? b_.CreateICmpSLT(aHi, bLo)
                      : pred == "le" ? b_.CreateICmpSLE(aHi, bLo)
                      : pred == "gt" ? b_.CreateICmpSGT(aLo, bHi)
                                     : b_.CreateICmpSGE(aLo, bHi);
  return b_.CreateAnd(holds, always);
}

// Whether the block of `tensor` starting at `firsts` lies wholly inside it and
// the tensor's innermost stride is 1: the condition for reading or writing it in place.
llvm::Value* KernelLowering::blockInside(int64_t tensor, const Indices& firsts, const ir::Shape& block) {
  const TensorView& t = tensors_.at(tensor);
  llvm::Value* ok = b_.CreateICmpEQ(t.strides.back(), i64(1));
  for (size_t d = 0; d < block.size(); ++d) {
    llvm::Value* end = b_.CreateAdd(firsts[d], i64(block[d]));
    ok = b_.CreateAnd(ok, b_.CreateAnd(b_.CreateICmpSGE(firsts[d], i64(0)), b_.CreateICmpSLE(end, t.shape[d])));
  }
  return ok;
}

// The block of `tensor` from `firsts` where it lies inside (unit innermost stride: loops over
// it vectorize), else `stagingBuffer`, a row-major block.
KernelLowering::BlockView KernelLowering::blockView(int64_t tensor, const Indices& firsts, llvm::Value* inside,
                                                    llvm::Value* stagingBuffer, const ir::Shape& block) {
  const TensorView& t = tensors_.at(tensor);
  llvm::Value* first = i64(0);
  for (size_t d = 0; d < block.size(); ++d) first = b_.CreateAdd(first, b_.CreateMul(firsts[d], t.strides[d]));
  llvm::Type* storage = storageType(ctx_, kernel_.tensors[tensor].dtype);
  BlockView view{b_.CreateSelect(inside, b_.CreateGEP(storage, t.data, first), stagingBuffer), Indices(block.size())};
  int64_t stagedStride = 1;
  for (size_t d = block.size(); d-- > 0; stagedStride *= block[d])
    view.strides[d] = d + 1 == block.size() ? i64(1) : b_.CreateSelect(inside, t.strides[d], i64(stagedStride));
  return view;
}

// A load's block where it lies inside its tensor, else gathered by the runtime (`fill` outside)
// into `stagingBuffer`: what reads it through the view is emitted once, without masks, for both.
KernelLowering::BlockView KernelLowering::stageLoad(const ir::Op& load, llvm::Value* stagingBuffer) {
  int64_t tensor = load.get(ir::attr::tensor);
  const ir::Type& t = type(load.results[0]);
  Indices firsts;
  for (size_t d = 0; d < t.shape.size(); ++d) firsts.push_back(element(load.operands[d], {}));
  llvm::Value* inside = blockInside(tensor, firsts, t.shape);
  emitIf(b_, b_.CreateNot(inside), [&] {
    DType dtype = kernel_.tensors[tensor].dtype;
    llvm::Value* fill = toStorage(b_, constant(dtype, load.get(ir::attr::fill)), dtype);
    llvm::Type* bits = b_.getIntNTy(static_cast<unsigned>(dtypeBytes(dtype) * 8));
    copyBlock(kGatherBlock, tensor, firsts, t.shape, stagingBuffer, b_.CreateZExt(b_.CreateBitCast(fill, bits), b_.getInt64Ty()));
  });
  return blockView(tensor, firsts, inside, stagingBuffer, t.shape);
}

// Calls the runtime's gather or scatter (KernelArgs::gatherBlock, scatterBlock) for the block of
// `tensor` from `firsts` and `stagingBuffer`. Edge blocks are rare; generating masked copies of
// them took LLVM about a third of attention's compile time (52 of 168 ms).
void KernelLowering::copyBlock(int field, int64_t tensor, const Indices& firsts, const ir::Shape& block,
                               llvm::Value* stagingBuffer, llvm::Value* fillBits) {
  llvm::Type* i64Ty = b_.getInt64Ty();
  auto* arrayType = llvm::ArrayType::get(i64Ty, kMaxRank);
  if (!blockFirsts_) blockFirsts_ = llvm::IRBuilder<>(allocaBlock_, allocaBlock_->begin()).CreateAlloca(arrayType, nullptr, "block_firsts");
  for (size_t d = 0; d < firsts.size(); ++d) b_.CreateStore(firsts[d], b_.CreateConstInBoundsGEP2_64(arrayType, blockFirsts_, 0, d));
  llvm::GlobalVariable*& shape = blockShapes_[block];
  if (!shape) {
    std::vector<uint64_t> extents(block.begin(), block.end());
    shape = new llvm::GlobalVariable(module_, llvm::ArrayType::get(i64Ty, extents.size()), true,
                                     llvm::GlobalValue::PrivateLinkage, llvm::ConstantDataArray::get(ctx_, extents), "block_shape");
  }
  std::vector<llvm::Value*> args = {tensors_.at(tensor).desc, b_.getInt32(static_cast<uint32_t>(block.size())),
                                    b_.getInt32(static_cast<uint32_t>(dtypeBytes(kernel_.tensors[tensor].dtype))),
                                    blockFirsts_, shape};
  if (fillBits) args.push_back(fillBits);
  args.push_back(stagingBuffer);
  std::vector<llvm::Type*> params;
  for (llvm::Value* a : args) params.push_back(a->getType());
  llvm::Value* fn = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(argsType_, args_, static_cast<unsigned>(field)));
  b_.CreateCall(llvm::FunctionType::get(b_.getVoidTy(), params, false), fn, args);
}

llvm::Value* KernelLowering::viewAddress(DType dtype, const BlockView& view, const Indices& idx) {
  llvm::Value* linear = i64(0);
  for (size_t d = 0; d < idx.size(); ++d) linear = b_.CreateAdd(linear, b_.CreateMul(idx[d], view.strides[d]));
  return b_.CreateInBoundsGEP(storageType(ctx_, dtype), view.base, linear);
}

llvm::Value* KernelLowering::masksHold(const std::vector<const ir::Op*>& masks) {
  llvm::Value* all = b_.getTrue();
  for (const ir::Op* cmp : masks) all = b_.CreateAnd(all, indexMaskHolds(*cmp));
  return all;
}

// A loop nest over `shape`. The blocks the fused expressions of `roots` load are read
// unmasked (see stageLoad); when they mask indices (`cols < n`, `cols <= rows`), the nest is
// emitted twice: without the masks for blocks where they are all true, and with them.
void KernelLowering::emitNest(const ir::Shape& shape, const std::vector<ValueId>& roots,
                              const std::function<void(const Indices&)>& body) {
  Indices idx;
  auto nest = [&] { emitNestLevels(shape, 0, idx, body); };
  emitFastOrGeneral(roots, nest, nest);
}

// The loads of `roots` staged (see stageLoad), then `fast` where their index masks hold over
// the whole block at run time, else `general`; `fast` alone when there are no masks.
void KernelLowering::emitFastOrGeneral(const std::vector<ValueId>& roots, const std::function<void()>& fast,
                                       const std::function<void()>& general) {
  NestReads facts;
  std::set<ValueId> seen;
  for (ValueId r : roots) collectFacts(r, facts, seen);
  std::erase_if(facts.loads, [&](const ir::Op* l) { return stagedLoads_.count(l) > 0; });  // an enclosing nest's
  std::erase_if(facts.masks, [&](const ir::Op* m) { return trueMasks_.count(m) > 0; });
  for (const ir::Op* load : facts.loads)
    stagedLoads_.emplace(load, stageLoad(*load, allocateBuffer(type(load->results[0]))));
  if (facts.masks.empty()) fast();
  else
    emitIf(b_, masksHold(facts.masks), [&] {
      std::set<const ir::Op*> outerMasks = trueMasks_;
      trueMasks_.insert(facts.masks.begin(), facts.masks.end());
      fast();
      trueMasks_ = std::move(outerMasks);
    }, general);
  for (const ir::Op* load : facts.loads) stagedLoads_.erase(load);
}

void KernelLowering::emitNestLevels(const ir::Shape& shape, size_t level, Indices& idx,
                                    const std::function<void(const Indices&)>& body) {
  if (level == shape.size()) {
    body(idx);
    return;
  }
  emitLoop(b_, i64(0), i64(shape[level]), [&](llvm::Value* i) {
    idx.push_back(i);
    emitNestLevels(shape, level + 1, idx, body);
    idx.pop_back();
  }, {.interleave = level + 1 == shape.size() ? innermostInterleave(shape[level]) : 0});
}

// Up to four vectors in flight in a nest's innermost loop, as its length allows: LLVM chose
// one for softmax's exp loop, a long chain per element (softmax 4096x1024: 2.1-2.4 ms at one,
// 2.0 at four).
unsigned KernelLowering::innermostInterleave(int64_t length) const {
  int64_t vectors = length / (options_.vectorBytes / 4);
  return vectors >= 4 ? 4 : vectors >= 2 ? 2 : 1;
}

}  // namespace tj::cpu::detail
