// Small LLVM IR building blocks for the CPU lowering: dtype mappings, exact
// rounding to 16-bit floats, and counted loops.
#pragma once
#include <llvm/IR/IRBuilder.h>

#include <functional>

#include "ir/ir.hpp"

namespace tj::cpu {

// How a dtype is held in memory (half, i16 bits for bf16, i8 for bool and the 8-bit
// floats' codes) and in registers (float for f16/bf16/f8, i1 for bool).
llvm::Type* storageType(llvm::LLVMContext& c, DType t);
llvm::Type* computeType(llvm::LLVMContext& c, DType t);

// Converts between the two forms (fromStorage also takes vectors).
llvm::Value* fromStorage(llvm::IRBuilder<>& b, llvm::Value* v, DType t);
llvm::Value* toStorage(llvm::IRBuilder<>& b, llvm::Value* v, DType t);

// Rounds a float or double register value to dtype t's precision, exactly
// as tj::roundToFloat does, and returns it in t's compute type.
llvm::Value* roundToDType(llvm::IRBuilder<>& b, llvm::Value* v, DType t);

// e^x for a float x, inline and vectorizable: Cody-Waite range reduction by ln 2
// and a degree-6 polynomial (Cephes expf), within 2 ulps; NaN, ±inf, overflow and
// subnormal results behave as IEEE expf.
llvm::Value* emitFastExpF32(llvm::IRBuilder<>& b, llvm::Value* x);
// 2^x in float the same way (fast_exp2: the softmax of attention's scores in base 2).
llvm::Value* emitFastExp2F32(llvm::IRBuilder<>& b, llvm::Value* x);

// What a loop asks of LLVM's loop passes; 0 leaves the choice to them.
struct LoopHints {
  unsigned unroll = 0;      // copies of the body (the unroller runs only where asked: jit/cpu_compiler.cpp)
  unsigned interleave = 0;  // vector iterations in flight once vectorized
};

// Emits `for (i = begin; i < end; ++i) body(i)` at the builder's position and
// leaves the builder after the loop.
void emitLoop(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end,
              const std::function<void(llvm::Value*)>& body, LoopHints hints = {});

// if (cond) then(); else otherwise(); leaving the builder after both.
void emitIf(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<void()>& then,
            const std::function<void()>& otherwise = {});

// cond ? then() : otherwise, with then() computed only where cond holds (a load, an atomic).
llvm::Value* emitIfValue(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<llvm::Value*()>& then,
                         llvm::Value* otherwise);

}  // namespace tj::cpu
