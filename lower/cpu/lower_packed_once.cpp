// The CPU lowering of dot operands packed once per launch (Placement::packedOnce): operand blocks
// that several programs read alike (a GEMM's B blocks, a widened A's) are packed by the first
// program to need one into the launch's workspace, and read there by the others. A GEMM with row
// blocks of 256 packed each block of B eight times at 2048, a third of the bf16 kernel's time.
#include "lower/cpu/kernel_lowering.hpp"

namespace tj::cpu::detail {

namespace {

constexpr int64_t kFlagBytes = 4;  // a slot's state: kSlotEmpty, kSlotPacking or kSlotPacked
constexpr int32_t kSlotEmpty = 0, kSlotPacking = 1, kSlotPacked = 2;

}  // namespace

// The workspace's layout, at the entry: for each packed operand, a slot per block of its
// tensor (a state word among all the flags, the packed block after them), none where no
// program shares its blocks (every other program id's grid is 1). One request covers all.
void KernelLowering::emitWorkspace() {
  if (plan_.packedOnce.empty()) return;
  // Each operand takes slots only while its blocks and states fit its share of what the runtime
  // gives (a tensor broadcast by zero strides may have blocks without number).
  const double maxRegionBytes = double(kMaxWorkspaceBytes) / double(2 * plan_.packedOnce.size());
  llvm::Type* i64Ty = b_.getInt64Ty();
  llvm::Value* flagBytes = i64(0);
  std::vector<std::pair<llvm::Value*, llvm::Value*>> offsets;  // of each region's flags and first block, from the flags'
  llvm::Value* dataBytes = i64(0);
  for (const auto& [v, shared] : plan_.packedOnce) {
    const ir::Shape& block = type(shared.load->results[0]).shape;
    const TensorView& tensor = tensors_[size_t(shared.load->get(ir::attr::tensor))];
    PackedRegion region;
    const ir::Op& dot = *info_.dotUser[v];
    region.blockBytes = alignToBuffer(packedOperandBytes(dot, v == dot.operands[0] ? 0 : 1));
    llvm::Value* count = i64(1);
    llvm::Value* bytes = llvm::ConstantFP::get(b_.getDoubleTy(), double(region.blockBytes + kFlagBytes));
    for (size_t d = 0; d < block.size(); ++d) {
      // (shape + block - 1) / block would wrap near INT64_MAX; shapes are not negative.
      llvm::Value* blocks = b_.CreateAdd(b_.CreateSDiv(tensor.shape[d], i64(block[d])),
                                         b_.CreateZExt(b_.CreateICmpNE(b_.CreateSRem(tensor.shape[d], i64(block[d])), i64(0)), i64Ty));
      region.blocksPerAxis.push_back(blocks);
      count = b_.CreateMul(count, blocks);
      bytes = b_.CreateFMul(bytes, b_.CreateSIToFP(blocks, b_.getDoubleTy()));
    }
    llvm::Value* otherPrograms = i64(1);
    for (int a = 0; a < kernel_.gridRank; ++a)
      if (!(shared.programAxes & (1u << a))) otherPrograms = b_.CreateMul(otherPrograms, grid_[size_t(a)]);
    llvm::Value* worth = b_.CreateAnd(b_.CreateICmpSGT(otherPrograms, i64(1)),
                                      b_.CreateFCmpOLE(bytes, llvm::ConstantFP::get(b_.getDoubleTy(), maxRegionBytes)));
    region.slots = b_.CreateSelect(worth, count, i64(0));
    offsets.emplace_back(flagBytes, dataBytes);
    flagBytes = b_.CreateAdd(flagBytes, b_.CreateMul(region.slots, i64(kFlagBytes)));
    dataBytes = b_.CreateAdd(dataBytes, b_.CreateMul(region.slots, i64(region.blockBytes)));
    packedRegions_.emplace(v, std::move(region));
  }
  llvm::Value* dataStart = b_.CreateAnd(b_.CreateAdd(flagBytes, i64(kBufferAlign - 1)), i64(-kBufferAlign));
  llvm::Value* total = b_.CreateAdd(dataStart, dataBytes);
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Value* provide = b_.CreateLoad(ptr, b_.CreateStructGEP(argsType_, args_, kWorkspace), "workspace_fn");
  llvm::Value* context = b_.CreateLoad(ptr, b_.CreateStructGEP(argsType_, args_, kWorkspaceContext));
  auto* provideType = llvm::FunctionType::get(ptr, {ptr, i64Ty, i64Ty}, false);
  llvm::Value* workspace = emitIfValue(b_, b_.CreateAnd(b_.CreateIsNotNull(provide), b_.CreateICmpSGT(total, i64(0))), [&] {
    return b_.CreateCall(provideType, provide, {context, total, flagBytes});
  }, llvm::ConstantPointerNull::get(b_.getPtrTy()));
  size_t i = 0;
  for (auto& [v, region] : packedRegions_) {
    region.flags = b_.CreateGEP(b_.getInt8Ty(), workspace, offsets[i].first);
    region.blocks = b_.CreateGEP(b_.getInt8Ty(), workspace, b_.CreateAdd(dataStart, offsets[i].second));
    region.usable = b_.CreateAnd(b_.CreateIsNotNull(workspace), b_.CreateICmpSGT(region.slots, i64(0)));
    ++i;
  }
}

// A packed operand's block for this program: read from its slot when packed there already;
// else packed by this program, into the slot if it claims it (its state from empty to packing,
// then packed), or into a buffer of its own while another program packs the slot, or where the
// block has no slot (no workspace; offsets not those of a block, or outside the tensor).
llvm::Value* KernelLowering::lowerPackedOnce(ValueId v) {
  const PackedRegion& region = packedRegions_.at(v);
  const ir::Op& load = *plan_.packedOnce.at(v).load;
  const ir::Shape& block = type(load.results[0]).shape;
  const TensorView& tensor = tensors_[size_t(load.get(ir::attr::tensor))];
  llvm::Value* hasSlot = region.usable;
  llvm::Value* slot = i64(0);
  for (size_t d = 0; d < block.size(); ++d) {
    llvm::Value* offset = b_.CreateSExtOrTrunc(element(load.operands[d], {}), b_.getInt64Ty());
    llvm::Value* inside = b_.CreateAnd(b_.CreateICmpSGE(offset, i64(0)), b_.CreateICmpSLT(offset, tensor.shape[d]));
    llvm::Value* aligned = b_.CreateICmpEQ(b_.CreateSRem(offset, i64(block[d])), i64(0));
    hasSlot = b_.CreateAnd(hasSlot, b_.CreateAnd(inside, aligned));
    slot = b_.CreateAdd(b_.CreateMul(slot, region.blocksPerAxis[d]), b_.CreateSDiv(offset, i64(block[d])));
  }
  slot = b_.CreateSelect(hasSlot, slot, i64(0));
  llvm::Value* flag = b_.CreateGEP(b_.getInt32Ty(), region.flags, slot);
  llvm::Value* packedInSlot = b_.CreateGEP(b_.getInt8Ty(), region.blocks, b_.CreateMul(slot, i64(region.blockBytes)));
  llvm::Value* own = allocateBuffer({DType::i8, {region.blockBytes}});

  llvm::Value* ready = emitIfValue(b_, hasSlot, [&] {
    auto* state = b_.CreateAlignedLoad(b_.getInt32Ty(), flag, llvm::Align(kFlagBytes));
    state->setAtomic(llvm::AtomicOrdering::Acquire);
    return b_.CreateICmpEQ(state, b_.getInt32(kSlotPacked));
  }, b_.getFalse());
  llvm::Value* claimed = emitIfValue(b_, b_.CreateAnd(hasSlot, b_.CreateNot(ready)), [&] {
    auto* claim = b_.CreateAtomicCmpXchg(flag, b_.getInt32(kSlotEmpty), b_.getInt32(kSlotPacking), llvm::Align(kFlagBytes),
                                         llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
    return b_.CreateExtractValue(claim, 1);
  }, b_.getFalse());
  llvm::Value* packed = b_.CreateSelect(b_.CreateOr(ready, claimed), packedInSlot, own);
  emitIf(b_, b_.CreateNot(ready), [&] {
    packOperand(v, packed);
    emitIf(b_, claimed, [&] {
      auto* done = b_.CreateAlignedStore(b_.getInt32(kSlotPacked), flag, llvm::Align(kFlagBytes));
      done->setAtomic(llvm::AtomicOrdering::Release);
    });
  });
  return packed;
}

// Writes the operand block v in the form its dot's micro-kernel reads to `packed`: in f32 where
// it widens the operands; A's rows repacked for pair or quad products (packRowsOfA), B in their
// groups (bPackingOf).
void KernelLowering::packOperand(ValueId v, llvm::Value* packed) {
  const ir::Op& dot = *info_.dotUser[v];
  if (widensOperands(kernel_, dot, options_)) return materialize(v, packed, DType::f32);
  const bool isA = v == dot.operands[0];
  const DotProducts products = dotProducts(kernel_, dot, options_);
  if (!isA && packsTransposedPairs(v)) return packTransposedPairs(v, packed);
  if (isA ? !repacksRowsOfA(type(v).dtype, products) : bPackingOf(dot) == BPacking::rows) return materialize(v, packed);
  llvm::Value* rows = allocateBuffer(type(v));
  materialize(v, rows);
  if (isA) packRowsOfA(rows, type(v), products, packed);
  else packB(dot, rows, packed);
}

}  // namespace tj::cpu::detail
