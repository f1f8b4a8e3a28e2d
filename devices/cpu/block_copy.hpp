// The copies a CPU kernel calls for a block that reaches past its tensor's edges (or whose
// tensor's innermost stride is not 1): lower/cpu reads and writes such blocks through a
// row-major copy on the stack, so the kernel's own loops are emitted once, without masks.
#pragma once
#include "lower/cpu/abi.hpp"

namespace tj::cpu {

// The block of `tensor` from `firsts` into `staging`, `fill` where it lies outside.
void gatherBlock(const TensorDesc* tensor, int32_t rank, int32_t elementBytes, const int64_t* firsts,
                 const int64_t* block, uint64_t fillBits, void* staging);

// The elements of `staging` that lie inside `tensor` into it; the others are dropped.
void scatterBlock(const TensorDesc* tensor, int32_t rank, int32_t elementBytes, const int64_t* firsts,
                  const int64_t* block, const void* staging);

}  // namespace tj::cpu
