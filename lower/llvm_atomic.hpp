// Atomic updates LLVM has no atomicrmw for, shared by both LLVM lowerings (the CPU's and the GPU
// kernel IR's printer).
#pragma once
#include <llvm/IR/IRBuilder.h>

#include <functional>

namespace tj {

// *at = combine(*at) atomically, by compare-exchange on the bits: the old value is read, then
// swapped for combine(old) unless another thread changed it in between, which starts over.
// For the interpreter's float max/min (NaN propagates, -0 orders below +0), which LLVM's
// atomicrmw fmax/fmin (maxnum) are not. Returns the old value, of valueType.
llvm::Value* atomicUpdateByCompareExchange(llvm::IRBuilder<>& b, llvm::Value* at, llvm::Type* valueType,
                                           const std::function<llvm::Value*(llvm::Value* old)>& combine,
                                           llvm::SyncScope::ID scope = llvm::SyncScope::System);

}  // namespace tj
