#include "lower/llvm_atomic.hpp"

namespace tj {

llvm::Value* atomicUpdateByCompareExchange(llvm::IRBuilder<>& b, llvm::Value* at, llvm::Type* valueType,
                                           const std::function<llvm::Value*(llvm::Value* old)>& combine,
                                           llvm::SyncScope::ID scope) {
  llvm::LLVMContext& c = b.getContext();
  unsigned bits = valueType->getPrimitiveSizeInBits();
  llvm::Type* bitsType = b.getIntNTy(bits);
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* entry = b.GetInsertBlock();
  llvm::BasicBlock* retry = llvm::BasicBlock::Create(c, "cas.retry", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(c, "cas.done", f);
  llvm::LoadInst* first = b.CreateAlignedLoad(bitsType, at, llvm::Align(bits / 8));
  first->setAtomic(llvm::AtomicOrdering::Monotonic, scope);
  b.CreateBr(retry);
  b.SetInsertPoint(retry);
  llvm::PHINode* old = b.CreatePHI(bitsType, 2);
  old->addIncoming(first, entry);
  llvm::Value* next = b.CreateBitCast(combine(b.CreateBitCast(old, valueType)), bitsType);
  llvm::Value* pair = b.CreateAtomicCmpXchg(at, old, next, llvm::MaybeAlign(bits / 8), llvm::AtomicOrdering::AcquireRelease,
                                            llvm::AtomicOrdering::Acquire, scope);
  llvm::Value* seen = b.CreateExtractValue(pair, 0);
  old->addIncoming(seen, b.GetInsertBlock());
  b.CreateCondBr(b.CreateExtractValue(pair, 1), done, retry);
  b.SetInsertPoint(done);
  return b.CreateBitCast(seen, valueType);
}

}  // namespace tj
