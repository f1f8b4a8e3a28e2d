// The per-thread kernel IR printed as an LLVM module for a GPU target: one printer for
// every LLVM GPU backend, with what differs per target (thread ids, barriers, shuffles,
// the kernel's calling convention, matrix instructions) behind LlvmGpuTarget. NVPTX
// implements it in lower/ptx, AMDGPU in lower/amdgpu.
//
// Semantics are the SPIR-V printer's, so results match the interpreter: float ops are not
// contracted; bf16 registers are f32 values rounded to bf16 after each op; max/min
// propagate NaN and order -0 below +0; float-to-int casts truncate and saturate (NaN to 0);
// integer division by 0 gives 0 (the kernel IR sets the fault word) and by -1 negates;
// shifts past the width shift every bit out; float remainders are C's fmod, exactly;
// transcendentals are lower/math's accurate versions.
//
// Kernel parameters, in KernelFunction::params order: a buffer as a global pointer, sizes
// and strides as i64, integer scalars as i64, f64 scalars as double and other float
// scalars as float (rounded to the scalar's dtype inside), a tensor map as 128 bytes passed
// by value (a byval [128 x i8] aligned to 64, which the target keeps constant: declareKernel).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "lower/gpu/kernel_ir.hpp"

namespace llvm {
class LLVMContext;
class Module;
class Value;
class Type;
class Function;
class IRBuilderBase;
}  // namespace llvm

namespace tj::llvmgpu {

class LlvmGpuTarget {
 public:
  virtual ~LlvmGpuTarget() = default;
  virtual std::string triple() const = 0;
  virtual std::string dataLayout() const = 0;
  virtual unsigned globalAddressSpace() const = 0;
  virtual unsigned sharedAddressSpace() const = 0;
  // Marks `f` as a kernel of `threads` threads per workgroup (its byval parameters read in place).
  virtual void declareKernel(llvm::Module& m, llvm::Function& f, int64_t threads) const = 0;
  virtual llvm::Value* threadId(llvm::IRBuilderBase& b) const = 0;  // i32
  virtual llvm::Value* workgroupId(llvm::IRBuilderBase& b, int axis) const = 0;     // i32
  virtual llvm::Value* workgroupCount(llvm::IRBuilderBase& b, int axis) const = 0;  // i32
  virtual void barrier(llvm::IRBuilderBase& b) const = 0;
  // 32 bits from lane `lane ^ mask` / lane `lane` (an i32) of the subgroup.
  virtual llvm::Value* shuffleXor(llvm::IRBuilderBase& b, llvm::Value* x, int64_t mask, int64_t width) const = 0;
  virtual llvm::Value* shuffleIdx(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* lane, int64_t width) const = 0;
  // d = a·b + c for the kernel IR's mma {instr, a, b, c}: registers in the instruction's
  // fragment order, as layout/ lists them; 8-bit float operands as their codes (i8).
  virtual std::vector<llvm::Value*> mma(llvm::IRBuilderBase& b, const std::string& instr, DType a, DType bType,
                                        const std::vector<llvm::Value*>& aRegs, const std::vector<llvm::Value*>& bRegs,
                                        const std::vector<llvm::Value*>& cRegs) const = 0;
  // The kernel IR's byte_perm of i32s: byte j of the result is byte (selector >> 4j) & 7 of b:a.
  virtual llvm::Value* bytePermute(llvm::IRBuilderBase& b, llvm::Value* lo, llvm::Value* hi, llvm::Value* selector) const;
  // The kernel IR's ldmatrix: `num` 32-bit registers of two 16-bit elements each (low half
  // first), from this lane's row in workgroup memory. Throws where the target has none.
  virtual std::vector<llvm::Value*> loadMatrix(llvm::IRBuilderBase& b, llvm::Value* row, int64_t num, bool trans) const;
  // The kernel IR's async_copy, async_commit and async_wait: `bytes` from global `from` to
  // workgroup memory `to`, of which `fromBytes` (an i32: bytes or 0) are read and the rest
  // zeroed. Throw where the target has none.
  virtual void asyncCopy(llvm::IRBuilderBase& b, llvm::Value* to, llvm::Value* from, int64_t bytes,
                         llvm::Value* fromBytes) const;
  virtual void asyncCommit(llvm::IRBuilderBase& b) const;
  virtual void asyncWait(llvm::IRBuilderBase& b, int64_t pending) const;
  // The hardware's fast approximation of 2^(x scale), an f32, for an f32 or f16 x (the kernel
  // IR's unary exp/exp2 with approx); null, emitting nothing, where the target has none: the
  // printer then computes the accurate version.
  virtual llvm::Value* approxExp2(llvm::IRBuilderBase& b, llvm::Value* x, double scale) const;
  // Two f32 values rounded to nearest even to the 16-bit float t (f16, or bf16 held in an f32)
  // by one paired conversion, as two registers of t that keep each value's sign (NaN too);
  // empty, emitting nothing, where the target has none. A pair that mma or warpgroupFragmentA
  // packs into one word then costs one instruction.
  virtual std::vector<llvm::Value*> roundPair(llvm::IRBuilderBase& b, DType t, llvm::Value* lo, llvm::Value* hi) const;
  // Two f32 values rounded to nearest even to the 8-bit float t by one paired conversion that
  // saturates (past the largest finite value to it, NaN to a NaN), as their codes (two i8);
  // empty, emitting nothing, where the target has none. The printer makes the ends what an
  // unsaturated rounding gives (math::unsaturatedFloat8).
  virtual std::vector<llvm::Value*> saturatedFloat8Pair(llvm::IRBuilderBase& b, DType t, llvm::Value* lo,
                                                        llvm::Value* hi) const;
  // A wgmma operand: the workgroup-memory address (i32, within the workgroup's window) of its
  // first element, its swizzle (32, 64 or 128 bytes), the byte strides of its column blocks
  // (leading) and 8-row groups (stride), and whether its rows are M or N rather than K.
  // `offset` bytes (a multiple of 16) past `address`: the operands of one stage's
  // instructions differ by constants, which their descriptors add to one they share.
  struct WarpgroupOperand {
    llvm::Value* address;
    int64_t offset, swizzle, leading, stride;
    bool trans;
  };
  // The kernel IR's wgmma (d = a·b + c over f32 registers, issued asynchronously; a from workgroup
  // memory, or when aShared is null its fragment's 4 words from warpgroupFragmentA), wgmma_fence,
  // wgmma_commit, wgmma_wait (returns `values`, readable from then on) and fence_async_shared.
  // Throw where the target has none.
  virtual std::vector<llvm::Value*> warpgroupMma(llvm::IRBuilderBase& b, int64_t n, DType a, DType bType,
                                                 const WarpgroupOperand* aShared, const std::vector<llvm::Value*>& aWords,
                                                 const WarpgroupOperand& bOperand, const std::vector<llvm::Value*>& c) const;
  // A wgmma's a fragment (8 registers of 16-bit elements) as the 4 words the instruction reads
  // (8-bit codes the printer packs itself, four a word).
  virtual std::vector<llvm::Value*> warpgroupFragmentA(llvm::IRBuilderBase& b, DType a,
                                                       const std::vector<llvm::Value*>& registers) const;
  virtual void warpgroupFence(llvm::IRBuilderBase& b) const;
  virtual void warpgroupCommit(llvm::IRBuilderBase& b) const;
  virtual std::vector<llvm::Value*> warpgroupWait(llvm::IRBuilderBase& b, int64_t pending,
                                                  const std::vector<llvm::Value*>& values) const;
  virtual void fenceAsyncShared(llvm::IRBuilderBase& b) const;
  // The kernel IR's transaction barriers and TMA loads, on 32-bit workgroup-memory addresses
  // (within the workgroup's window): mbarrier_init, mbarrier_expect (arrive.expect_tx), mbarrier_arrive,
  // mbarrier_wait (until the phase of `parity`, an i32, completes), mbarrier_inval, and
  // tma_load of the box at `coords` (i32, the tensor's dimensions in order) through tensor map
  // `map` (a pointer to the kernel parameter). Throw where the target has none.
  virtual void mbarrierInit(llvm::IRBuilderBase& b, llvm::Value* barrier, int64_t count) const;
  virtual void mbarrierExpect(llvm::IRBuilderBase& b, llvm::Value* barrier, int64_t bytes) const;
  virtual void mbarrierArrive(llvm::IRBuilderBase& b, llvm::Value* barrier) const;
  virtual void mbarrierWait(llvm::IRBuilderBase& b, llvm::Value* barrier, llvm::Value* parity) const;
  virtual void mbarrierInval(llvm::IRBuilderBase& b, llvm::Value* barrier) const;
  virtual void tmaLoad(llvm::IRBuilderBase& b, llvm::Value* to, llvm::Value* map, llvm::Value* barrier,
                       const std::vector<llvm::Value*>& coords) const;
  // The kernel IR's tma_store (from workgroup memory `from`) and tma_store_wait.
  virtual void tmaStore(llvm::IRBuilderBase& b, llvm::Value* from, llvm::Value* map, const std::vector<llvm::Value*>& coords) const;
  virtual void tmaStoreWait(llvm::IRBuilderBase& b, int64_t pending) const;
  // The kernel IR's named barrier (barrier {id, threads[, arrive]}) and set_max_registers {count,
  // grow}. Throw where the target has none.
  virtual void namedBarrier(llvm::IRBuilderBase& b, int64_t id, int64_t threads, bool arrive) const;
  virtual void setMaxRegisters(llvm::IRBuilderBase& b, int64_t count, bool grow) const;
  // Whether `bytes` of workgroup memory are a dynamic array (sized at launch) rather than a
  // static one.
  virtual bool dynamicShared(int64_t /*bytes*/) const { return false; }
};

// The kernel function's symbol for a kernel named `name`: PTX and ELF symbols take letters,
// digits, _ and $ only, so every other character becomes _; a name that does not start
// with a letter (or is empty) gets the prefix kernel_.
std::string entryName(const std::string& name);

// Throws Error("llvm gpu: unsupported: ...") for what it cannot print.
std::unique_ptr<llvm::Module> printLlvm(const gpu::KernelFunction& f, const LlvmGpuTarget& target,
                                        llvm::LLVMContext& context);

}  // namespace tj::llvmgpu
