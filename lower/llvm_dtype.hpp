// The integer operations whose LLVM form depends on a dtype's signedness, for both LLVM
// lowerings (the CPU's and the GPU kernel IR's printer).
#pragma once
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Intrinsics.h>

#include "ir/dtype.hpp"

namespace tj {

// A signed integer predicate (ICMP_SLT...) as it compares integers of dtype t: unsigned for
// the unsigned dtypes and bool (i1, where true is 1, not -1).
inline llvm::CmpInst::Predicate intPredicate(llvm::CmpInst::Predicate signedPredicate, DType t) {
  bool isUnsignedOrder = isUnsigned(t) || t == DType::boolean;
  return isUnsignedOrder ? llvm::ICmpInst::getUnsignedPredicate(signedPredicate) : signedPredicate;
}

inline llvm::Intrinsic::ID intMax(DType t) { return isUnsigned(t) ? llvm::Intrinsic::umax : llvm::Intrinsic::smax; }
inline llvm::Intrinsic::ID intMin(DType t) { return isUnsigned(t) ? llvm::Intrinsic::umin : llvm::Intrinsic::smin; }

}  // namespace tj
