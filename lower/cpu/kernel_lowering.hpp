// The CPU lowering (lowerToLLVM): one class, KernelLowering, whose steps live in
// lower_to_llvm.cpp (entry, program loop, chunks) and lower_{ops,dots,elements,buffers}.cpp.
// Internal to lower/cpu.
#pragma once
#include "lower/cpu/lower_to_llvm.hpp"

#include <llvm/ADT/ScopeExit.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/CodeExtractor.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "lower/cpu/abi.hpp"
#include "lower/cpu/codegen_util.hpp"
#include "lower/cpu/plan_buffers.hpp"
#include "lower/llvm_atomic.hpp"
#include "lower/llvm_dtype.hpp"

namespace tj::cpu::detail {

using ir::OpCode;
using ir::ValueId;
using Indices = std::vector<llvm::Value*>;


// A worker's whole stack is 8 MiB by default; a kernel keeps its tiles there only
// up to this many bytes (every sample's blocks fit), the rest on the heap.
constexpr int64_t kStackBudget = int64_t{1} << 20;
// Buffers start on cache lines, which is also the widest vector's alignment.
constexpr int64_t kBufferAlign = 64;
inline int64_t alignToBuffer(int64_t bytes) { return (bytes + kBufferAlign - 1) / kBufferAlign * kBufferAlign; }

// LLVM's optimizer and code generator take time superlinear in a function's size, and a loop
// around everything (the programs') makes it worse. A body of N block reads (a C++ loop
// unrolled by the trace) compiled in 2.5 s at 500 reads, 9.1 s at 1000 and 35 s at 2000 (CPU
// time, docs/benchmarks.md): InstCombine asked, for a tensor's shape, every branch on it (each
// read's edge test) whether it dominates the use; LICM hoisted each read's column bounds out of
// the program loop, and the register allocator split those O(N) live ranges over O(N) blocks.
// A block (the body, or a region: the rest of a body after `exit_if` is one) of more than
// kChunkedBodyOps ops (counting those in regions; no sample has more than 200) is therefore
// lowered in chunks of about kChunkOps ops, each outlined into a function of its own: the cost
// per chunk is bounded, the total linear (chunks of 128 to 256 ops compiled fastest, 64 and 512
// a fifth slower).
constexpr int64_t kChunkOps = 256, kChunkedBodyOps = 1024;

inline int64_t countOps(const ir::Op& op) {
  int64_t n = 1;
  for (const ir::Block& region : op.regions) ir::forEachOp(region, [&](const ir::Op&) { ++n; });
  return n;
}

class KernelLowering {
 public:
  KernelLowering(const ir::Kernel& kernel, llvm::Module& module, const CpuLoweringOptions& options)
      : kernel_(kernel), module_(module), options_(options), ctx_(module.getContext()), b_(ctx_), info_(kernel),
        plan_(planBuffers(kernel, info_, options)), scalars_(kernel.types.size()), buffers_(kernel.types.size()) {}

  void lower(const std::string& entryName);

 private:
  struct TensorView {
    llvm::Value* desc;  // its TensorDesc
    llvm::Value* data;
    Indices shape, strides;
  };

  // ---- entry, program loop, kernel arguments
  void emitPrologue(llvm::Function* fn);
  void emitProgramIds(llvm::Value* linearId);

  // ---- long blocks, in chunks
  llvm::BasicBlock* beginChunk();
  void outlineChunks(llvm::Function* fn);
  void localizeInputs(const std::vector<llvm::BasicBlock*>& blocks);
  void markBuffersNoAlias(llvm::CallInst& call);

  // ---- ops
  void lowerBlock(const ir::Block& block);
  void lowerOp(const ir::Op& op);
  void lowerFold(const ir::Op& op);
  void lowerIf(const ir::Op& op);
  void lowerWhile(const ir::Op& op);
  void bindCarried(const ir::Block& region, size_t firstArg, const std::vector<llvm::Value*>& carried);
  void storeCarried(const ir::Block& region, size_t firstArg, const std::vector<llvm::Value*>& carried);
  void lowerStore(const ir::Op& op);
  void lowerScatter(const ir::Op& op);
  void lowerPrint(const ir::Op& op);
  void lowerCheck(const ir::Op& op);
  void lowerScan(const ir::Op& op);
  void lowerCombineScan(const ir::Op& op);
  void lowerSort(const ir::Op& op);
  void lowerHistogram(const ir::Op& op);
  llvm::Value* sortsBefore(const ir::Op& op, llvm::Value* a, llvm::Value* b);
  llvm::Value* floatExtremum(OpCode code, DType t, const std::function<llvm::Value*(llvm::Value*)>& at,
                             int64_t length, llvm::Value* accSlot);
  llvm::StructType* faultsType();
  void lowerDot(const ir::Op& op);
  ValueId inPlaceAccumulator(const ir::Op& dot) const;
  void emitDotLoops(const ir::Op& op, llvm::Value* c, DType accType);
  // Where a dot writes its result and whether it starts from zero rather than from C (an output
  // accumulator's first and last steps, see outputAccumulatorStore); by default C, read.
  struct CTarget {
    llvm::Value *out, *outRowStride, *startsAtZero;
  };
  bool emitDotMicroKernel(const ir::Op& op, llvm::Value* c, DType accType, CTarget target = {nullptr, nullptr, nullptr});
  const ir::Op* outputAccumulatorStore(const ir::Op& fold, size_t i) const;
  void beginOutputAccumulator(const ir::Op& store, ValueId carried);
  void lowerInPlaceOperand(const ir::Op& load, llvm::Value* buffer);
  // A micro-tile of C: rows x (vectors * lanes) accumulators, and B packed in groups of k
  // (packPairs, packQuads) for the products that take them.
  struct MicroTile {
    int64_t lanes, vectors, rows;
    DType accType;      // f32, or i32 for i8 operands
    DType operandType;  // of what a and b point at: buffers, or A's tensor when it is read in place
    DotProducts products;
    llvm::Value *a, *b;
    llvm::Value* aRowStride;  // in elements: A's row length in a buffer, its tensor's row stride in place
    // What `a` holds: A's storage type; i16 for pair products (bf16, or i8 widened); float
    // where the operands are widened.
    llvm::Type* aElement;
    llvm::Value* packedB;
    std::vector<llvm::Value*> acc;
    CTarget target = {nullptr, nullptr, nullptr};  // in the micro-kernel function: its arguments
  };
  llvm::Function* microKernelFunction(const ir::Op& op, const MicroTile& tile);
  llvm::Function* emitHelperFunction(const std::string& name, llvm::FunctionType* type,
                                     const std::function<void(llvm::Function&)>& body);
  void emitMicroTileRow(const ir::Op& op, llvm::Value* c, const MicroTile& tile, llvm::Value* row0);
  llvm::Value* aAddress(const MicroTile& tile, llvm::Value* row, llvm::Value* col) {
    return b_.CreateInBoundsGEP(tile.aElement, tile.a,
                                b_.CreateAdd(b_.CreateMul(row, tile.aRowStride), col));
  }
  // How a micro-kernel reads B: its rows as they are (single products), or packed in groups of
  // k (packPairs, packQuads) for the products that take them.
  enum class BPacking { rows, pairs, quads };
  BPacking bPackingOf(const ir::Op& dot) const;
  // The k a step of the micro-kernel multiplies: one, or a 4-byte group of pairs or quads.
  static int64_t groupSize(DotProducts products) {
    return products == DotProducts::quads ? 4 : products == DotProducts::pairs ? 2 : 1;
  }
  // The bytes of a dot's operand (0: A, 1: B) in the form its micro-kernel reads.
  int64_t packedOperandBytes(const ir::Op& dot, size_t operand) const;
  // B's block from its buffer `b` into `packed`, as bPackingOf says; returns `packed`.
  llvm::Value* packB(const ir::Op& dot, llvm::Value* b, llvm::Value* packed);
  void packPairs(llvm::Value* b, DType dtype, int64_t k, int64_t n, int64_t lanes, llvm::Value* packed);
  llvm::Value* widenToF32(llvm::Value* buffer, const ir::Type& t);
  void mapBuffer(llvm::Value* from, llvm::Type* fromType, llvm::Value* to, llvm::Type* toType, int64_t count,
                 const std::function<llvm::Value*(llvm::Value*)>& f);
  static bool repacksRowsOfA(DType a, DotProducts products);
  static DType packedRowsOfA(DotProducts products);  // the dtype whose storage holds them
  // A's rows from its buffer `a` into `packed`, in the form repacksRowsOfA says; returns `packed`.
  llvm::Value* packRowsOfA(llvm::Value* a, const ir::Type& t, DotProducts products, llvm::Value* packed);
  std::vector<llvm::Value*> rowPointers(const MicroTile& tile, llvm::Value* row0);
  void emitGroupStep(const ir::Op& op, const MicroTile& tile, llvm::Value* group, const std::vector<llvm::Value*>& aRows,
                     llvm::Value* col0);
  llvm::Value* groupProduct(const MicroTile& tile, llvm::Value* acc, llvm::Value* a, llvm::Value* b);
  // ---- dot instructions by host (lower_dot_instructions.cpp)
  void packQuads(llvm::Value* b, int64_t k, int64_t n, int64_t lanes, bool withColumnSums, llvm::Value* packed);
  llvm::Value* quadBiasOf(const MicroTile& tile, int64_t k, int64_t n, llvm::Value* col);
  llvm::Value* dotBf16Pairs(llvm::Value* acc, llvm::Value* a, llvm::Value* b);
  llvm::Value* dotI8Quads(llvm::Value* acc, llvm::Value* a, llvm::Value* b);
  void emitAmxTiles(const ir::Op& op, llvm::Value* c, const MicroTile& tile);
  llvm::Function* amxBandFunction(const ir::Op& op, const MicroTile& caller, const std::vector<int64_t>& tileRows);
  void emitAmxBand(const ir::Op& op, llvm::Value* c, const MicroTile& tile, llvm::Value* row0,
                   const std::vector<int64_t>& tileRows);
  void compileAmxAsLoops(llvm::Function& fn);
  void lowerReduction(const ir::Op& op);

  // ---- dot operands packed once per launch (lower_packed_once.cpp)
  void emitWorkspace();
  llvm::Value* lowerPackedOnce(ValueId v);
  void packOperand(ValueId v, llvm::Value* packed);

  // ---- elements: the register value of element `idx` of `v`
  llvm::Value* element(ValueId v, const Indices& idx);
  llvm::Value* computeElement(const ir::Op& op, const Indices& idx);
  llvm::Value* unary(const ir::Op& op, llvm::Value* x);
  llvm::Value* binary(const ir::Op& op, llvm::Value* x, llvm::Value* y);
  llvm::Value* compare(const ir::Op& op, llvm::Value* x, llvm::Value* y);
  llvm::Value* cast(llvm::Value* x, DType from, DType to);
  llvm::Value* stickyToDouble(llvm::Value* x, bool isUnsigned);
  llvm::Value* unsignedDivide(const ir::Op& op, llvm::Value* x, llvm::Value* y);
  llvm::Value* atomicHalf(ir::AtomicFn fn, DType dtype, llvm::Value* at, llvm::Value* value);
  llvm::Value* loadElement(const ir::Op& op, const Indices& idx);
  llvm::Value* gatherElement(const ir::Op& op, const Indices& idx);
  llvm::Value* concatElement(const ir::Op& op, const Indices& idx);
  llvm::Value* atomicElement(const ir::Op& op, const Indices& idx);
  std::pair<llvm::Value*, llvm::Value*> indirectAddress(const ir::Op& op, size_t maskAt, const Indices& idx);
  llvm::Value* readElement(int64_t tensor, llvm::Value* linear, llvm::Value* inside, const ir::Number& fill);
  void writeElement(int64_t tensor, llvm::Value* linear, llvm::Value* v);
  llvm::Value* libm(const char* name, llvm::Value* x);
  llvm::Value* constant(DType t, double value);
  llvm::Value* constant(DType t, const ir::Number& value);  // an integer attribute exactly
  Indices operandIndices(const ir::Op& op, const Indices& idx);

  // ---- buffers and loop nests
  llvm::Value* allocateBuffer(const ir::Type& t);
  void finishHeap(llvm::Function* fn, llvm::ReturnInst* ret);
  void emitFault(Fault bit, int64_t scratchBytes = 0);
  void withFaults(const std::function<void(llvm::Value*)>& body);
  llvm::Value* bufferAddress(llvm::Value* buffer, const ir::Type& t, const Indices& idx);
  llvm::Value* bufferElement(llvm::Value* buffer, const ir::Type& t, const Indices& idx);  // in compute form
  void storeToBuffer(llvm::Value* buffer, const ir::Type& t, const Indices& idx, llvm::Value* v);
  // Writes every element of v into buffer, stored as v's type or, given, as another dtype.
  void materialize(ValueId v, llvm::Value* buffer, std::optional<DType> as = std::nullopt);
  bool materializeTranspose(ValueId v, llvm::Value* buffer, const ir::Type& as);
  bool roundsToBf16ByHost(ValueId v) const;
  std::vector<llvm::Value*> transpose8x8(std::vector<llvm::Value*> rows);
  bool packsTransposedPairs(ValueId v) const;
  const ir::Op* transposedLoad(ValueId v) const;
  void packTransposedPairs(ValueId v, llvm::Value* packed);
  void emitNest(const ir::Shape& shape, const std::vector<ValueId>& roots,
                const std::function<void(const Indices&)>& body);
  void emitFastOrGeneral(const std::vector<ValueId>& roots, const std::function<void()>& fast,
                         const std::function<void()>& general);
  void emitNestLevels(const ir::Shape& shape, size_t level, Indices& idx,
                      const std::function<void(const Indices&)>& body);
  unsigned innermostInterleave(int64_t length) const;
  // What a nest's expressions read: the loads it stages (stageLoad), and the index masks
  // (`cols < n`, `cols <= rows`) its fast copy assumes all true.
  struct NestReads {
    std::vector<const ir::Op*> loads, masks;
  };
  // An i32 tile whose elements form a known range: an iota along an axis, plus perhaps one
  // broadcast value (`iota + c`), or one broadcast value alone.
  struct IndexRange {
    const ir::Op* iota = nullptr;  // null: the value alone
    const ir::Op* offset = nullptr;  // null: no offset
  };
  void collectFacts(ValueId v, NestReads& facts, std::set<ValueId>& seen) const;
  std::optional<IndexRange> indexRange(ValueId v) const;
  const ir::Op* broadcastScalar(ValueId v) const;
  bool isIndexMask(const ir::Op& cmp) const;
  llvm::Value* indexMaskHolds(const ir::Op& cmp);
  llvm::Value* masksHold(const std::vector<const ir::Op*>& masks);
  llvm::Value* blockInside(int64_t tensor, const Indices& firsts, const ir::Shape& block);
  // A block of a tensor, or of a stand-in for it on the stack: its first element and the
  // distance between neighbours along each axis, in elements (the innermost is 1).
  struct BlockView {
    llvm::Value* base;
    Indices strides;
  };
  BlockView blockView(int64_t tensor, const Indices& firsts, llvm::Value* inside, llvm::Value* stagingBuffer,
                      const ir::Shape& block);
  BlockView stageLoad(const ir::Op& load, llvm::Value* stagingBuffer);
  // A stored block (see stageStore): written through `view`, then scattered unless `inside`.
  struct StagedStore {
    Indices offsets;
    llvm::Value *inside, *stagingBuffer;
    BlockView view;
  };
  StagedStore stageStore(const ir::Op& store);
  static constexpr int kGatherBlock = 6, kScatterBlock = 7, kWorkspace = 8, kWorkspaceContext = 9;  // KernelArgs' fields
  void copyBlock(int field, int64_t tensor, const Indices& firsts, const ir::Shape& block, llvm::Value* stagingBuffer,
                 llvm::Value* fillBits = nullptr);
  llvm::Value* viewAddress(DType dtype, const BlockView& view, const Indices& idx);
  llvm::Value* inBounds(int64_t tensor, const Indices& coords);

  const ir::Type& type(ValueId v) const { return kernel_.type(v); }
  llvm::Value* i64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }
  llvm::Type* compute(DType t) { return computeType(ctx_, t); }
  [[noreturn]] void unsupported(const ir::Op& op, const std::string& why) {
    fail(op.loc, ir::opName(op.code), "the CPU backend cannot lower this op: " + why);
  }

  const ir::Kernel& kernel_;
  llvm::Module& module_;
  CpuLoweringOptions options_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  UseInfo info_;
  BufferPlan plan_;  // where each value lives: planned before anything is emitted
  std::vector<llvm::Value*> scalars_;  // rank-0 values, computed where defined
  std::vector<llvm::Value*> buffers_;  // tiles that live in memory
  // Per chunked block (see lowerBlock), inner ones first: its chunks' first blocks and the block
  // after its last chunk.
  std::vector<std::vector<llvm::BasicBlock*>> chunkStarts_;
  std::vector<TensorView> tensors_;
  Indices grid_, programIds_, scalarParams_;
  llvm::Value* args_ = nullptr;
  llvm::Value* programIdArray_ = nullptr;
  llvm::BasicBlock* allocaBlock_ = nullptr;
  llvm::Value* programLinear_ = nullptr;  // this program's row-major id
  int64_t checks_ = 0;                    // check ops lowered so far: the next one's number
  llvm::StructType* argsType_ = nullptr;
  // Tiles past kStackBudget share one heap block per entry call: `heap_` (aligned_alloc in the
  // entry block, its size set once every buffer is known) and freed at the return.
  llvm::CallInst* heap_ = nullptr;
  std::set<const llvm::Value*> heapBuffers_;  // the tiles' parts of it
  int64_t stackBytes_ = 0, heapBytes_ = 0;
  // The loads the nest being emitted reads through a view (see stageLoad), unmasked, and those
  // several nests read, staged where they are defined (lowerOp).
  std::map<const ir::Op*, BlockView> stagedLoads_;
  llvm::Value* blockFirsts_ = nullptr;  // copyBlock's argument: i64[kMaxRank]
  std::map<ir::Shape, llvm::GlobalVariable*> blockShapes_;  // copyBlock's other argument, by shape
  std::map<ValueId, BlockView> inPlaceOperands_;  // dot left operands read where they lie (lowerInPlaceOperand)
  std::set<ValueId> widened_;  // 16- and 8-bit float dot operands whose buffers hold f32 (Placement::widened)
  std::set<const ir::Op*> trueMasks_;  // the masks the current fast path knows to be all true
  // A packed operand's part of the workspace (emitWorkspace): a state word per slot at `flags`,
  // then a block of blockBytes per slot at `blocks`; usable where the workspace was given and
  // the operand has slots.
  struct PackedRegion {
    llvm::Value *flags = nullptr, *blocks = nullptr, *usable = nullptr, *slots = nullptr;
    Indices blocksPerAxis;  // of its tensor, in blocks: slots are numbered row-major over them
    int64_t blockBytes = 0;
  };
  std::map<ValueId, PackedRegion> packedRegions_;
  std::map<std::string, llvm::Function*> microKernels_;  // by what their code depends on (microKernelFunction)
  // A fold's tile that accumulates in its store's block of the output (beginOutputAccumulator).
  struct OutputAccumulator {
    ValueId carried;
    StagedStore block;
    llvm::Value *firstStep = nullptr, *lastStep = nullptr;  // in the fold's body: which iteration this is
  };
  std::map<const ir::Op*, OutputAccumulator> outputAccumulators_;  // by their store
  const OutputAccumulator* outputAccumulatorOf(ValueId carried) const;
};

}  // namespace tj::cpu::detail
