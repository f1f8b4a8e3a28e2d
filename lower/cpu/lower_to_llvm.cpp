#include "lower/cpu/lower_to_llvm.hpp"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
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
#include "lower/llvm_atomic.hpp"
#include "lower/llvm_dtype.hpp"

namespace tj::cpu {

namespace {

using ir::OpCode;
using ir::ValueId;
using Indices = std::vector<llvm::Value*>;

// Ops whose element is cheap to recompute at every use.
bool isCheap(OpCode c) {
  return c == OpCode::constant || c == OpCode::iota || c == OpCode::broadcast || c == OpCode::reshape ||
         c == OpCode::permute || c == OpCode::program_id || c == OpCode::num_programs || c == OpCode::tensor_dim;
}

// Ops computed element by element wherever they are used (fused into the consumer's loop nest).
bool isFusable(OpCode c) {
  return isCheap(c) || ir::isUnaryElementwise(c) || ir::isBinaryElementwise(c) || c == OpCode::select ||
         c == OpCode::cast || c == OpCode::load || c == OpCode::gather || c == OpCode::slice || c == OpCode::concat;
}

// Where each value is defined and how it is used, to decide what gets a buffer.
struct UseInfo {
  std::vector<const ir::Op*> def;  // null for block arguments
  std::vector<int> uses, defDepth;
  std::vector<bool> usedDeeper, printed;
  std::vector<const ir::Op*> dotUser;  // the dot that multiplies the value, if one does
  std::vector<ValueId> yieldedInto;  // for a value a loop body yields: the block argument it replaces
  std::vector<const ir::Op*> storer;  // the store that writes the value, if one does
  std::set<int64_t> storedTensors;
  std::map<int64_t, int> tensorOps;  // how many ops read or write each tensor

  explicit UseInfo(const ir::Kernel& k)
      : def(k.types.size()), uses(k.types.size()), defDepth(k.types.size()), usedDeeper(k.types.size()),
        printed(k.types.size()), dotUser(k.types.size()), yieldedInto(k.types.size(), -1), storer(k.types.size()) {
    walk(k.body, 0, -1);
  }

  // Where a region's loop-carried arguments start (a fold's after k, a while body's at 0); -1
  // for regions whose yields replace no arguments.
  static int firstCarried(const ir::Op& op, size_t region) {
    if (op.code == OpCode::fold) return 1;
    return op.code == OpCode::while_ && region == 1 ? 0 : -1;
  }

  void walk(const ir::Block& block, int depth, int carriedFrom) {
    for (ValueId a : block.args) defDepth[a] = depth;
    for (const ir::Op& op : block.ops) {
      for (size_t i = 0; i < op.operands.size(); ++i) {
        ValueId v = op.operands[i];
        ++uses[v];
        if (depth > defDepth[v]) usedDeeper[v] = true;
        if (op.code == OpCode::dot && i < 2) dotUser[v] = &op;
        if (op.code == OpCode::print) printed[v] = true;
      }
      if (ir::writesTensor(op.code)) storedTensors.insert(op.intAttr("tensor"));
      if (op.code == OpCode::store) storer[op.operands.back()] = &op;
      if (op.attr("tensor") && op.code != OpCode::tensor_dim) ++tensorOps[op.intAttr("tensor")];
      for (ValueId r : op.results) {
        def[r] = &op;
        defDepth[r] = depth;
      }
      for (size_t r = 0; r < op.regions.size(); ++r) walk(op.regions[r], depth + 1, firstCarried(op, r));
      if (op.code == OpCode::yield && carriedFrom >= 0)
        for (size_t i = 0; i < op.operands.size(); ++i) yieldedInto[op.operands[i]] = block.args[size_t(carriedFrom) + i];
    }
  }
};

// A worker's whole stack is 8 MiB by default; a kernel keeps its tiles there only
// up to this many bytes (every sample's blocks fit), the rest on the heap.
constexpr int64_t kStackBudget = int64_t{1} << 20;
// Buffers start on cache lines, which is also the widest vector's alignment.
constexpr int64_t kBufferAlign = 64;

class KernelLowering {
 public:
  KernelLowering(const ir::Kernel& kernel, llvm::Module& module, const CpuLoweringOptions& options)
      : kernel_(kernel), module_(module), options_(options), ctx_(module.getContext()), b_(ctx_), info_(kernel),
        scalars_(kernel.types.size()), buffers_(kernel.types.size()), fusedLoads_(kernel.types.size()) {}

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
  bool microKernelApplies(const ir::Op& dot) const;
  bool usesPairProducts(const ir::Op& dot) const;
  bool widensOperands(const ir::Op& dot) const;
  bool storedWidened(ValueId v) const;
  bool readsInPlace(ValueId v) const;
  void lowerInPlaceOperand(const ir::Op& load, llvm::Value* buffer);
  // A micro-tile of C: rows x (vectors * lanes) accumulators, and B in (k, k+1) pairs
  // when the product uses pair instructions.
  struct MicroTile {
    int64_t lanes, vectors, rows;
    DType accType;      // f32, or i32 for i8 operands
    DType operandType;  // of what a and b point at: buffers, or A's tensor when it is read in place
    llvm::Value *a, *b;
    llvm::Value* aRowStride;  // in elements: A's row length in a buffer, its tensor's row stride in place
    llvm::Value* packedB;
    std::vector<llvm::Value*> acc;
    CTarget target = {nullptr, nullptr, nullptr};  // in the micro-kernel function: its arguments
  };
  llvm::Function* microKernelFunction(const ir::Op& op, const MicroTile& tile);
  void emitMicroTileRow(const ir::Op& op, llvm::Value* c, const MicroTile& tile, llvm::Value* row0);
  llvm::Value* aAddress(const MicroTile& tile, llvm::Value* row, llvm::Value* col) {
    return b_.CreateInBoundsGEP(storageType(ctx_, tile.operandType), tile.a,
                                b_.CreateAdd(b_.CreateMul(row, tile.aRowStride), col));
  }
  llvm::Value* packPairs(llvm::Value* b, DType dtype, int64_t k, int64_t n, int64_t lanes);
  llvm::Value* widenToF32(llvm::Value* buffer, const ir::Type& t);
  void emitPairStep(const ir::Op& op, const MicroTile& tile, llvm::Value* pairIndex, llvm::Value* row0,
                    llvm::Value* col0);
  void lowerReduction(const ir::Op& op);
  bool needsBuffer(ValueId v) const;
  int countFusedLoads(const ir::Op& op);

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
  llvm::Value* readElement(int64_t tensor, llvm::Value* linear, llvm::Value* inside, const ir::AttrValue& fill);
  void writeElement(int64_t tensor, llvm::Value* linear, llvm::Value* v);
  llvm::Value* libm(const char* name, llvm::Value* x);
  llvm::Value* constant(DType t, double value);
  llvm::Value* constant(DType t, const ir::AttrValue& value);  // an integer attribute exactly
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
  static constexpr int kGatherBlock = 6, kScatterBlock = 7;  // KernelArgs' fields
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
  std::vector<llvm::Value*> scalars_;  // rank-0 values, computed where defined
  std::vector<llvm::Value*> buffers_;  // tiles that live in memory
  std::vector<int> fusedLoads_;        // per tile without a buffer: the loads its expression stages
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
  // The loads the nest being emitted reads through a view (see stageLoad), unmasked.
  std::map<const ir::Op*, BlockView> stagedLoads_;
  llvm::Value* blockFirsts_ = nullptr;  // copyBlock's argument: i64[kMaxRank]
  std::map<ir::Shape, llvm::GlobalVariable*> blockShapes_;  // copyBlock's other argument, by shape
  std::map<ValueId, BlockView> inPlaceOperands_;  // dot left operands read where they lie (lowerInPlaceOperand)
  std::set<ValueId> widened_;  // 16- and 8-bit float dot operands whose buffers hold f32 (see storedWidened)
  std::set<const ir::Op*> trueMasks_;  // the masks the current fast path knows to be all true
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

// ---------------------------------------------------------------- entry

void KernelLowering::lower(const std::string& entryName) {
  llvm::Type* ptr = b_.getPtrTy();
  auto* fnType = llvm::FunctionType::get(b_.getVoidTy(), {ptr, b_.getInt64Ty(), b_.getInt64Ty()}, false);
  auto* fn = llvm::Function::Create(fnType, llvm::Function::ExternalLinkage, entryName, module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // Without these, x86 splits 512-bit vectors into halves even on AVX-512 machines.
  std::string width = std::to_string(options_.vectorBytes * 8);
  fn->addFnAttr("prefer-vector-width", width);
  fn->addFnAttr("min-legal-vector-width", width);
  allocaBlock_ = llvm::BasicBlock::Create(ctx_, "entry", fn);
  b_.SetInsertPoint(allocaBlock_);
  emitPrologue(fn);
  auto alignedAlloc = module_.getOrInsertFunction("aligned_alloc", ptr, b_.getInt64Ty(), b_.getInt64Ty());
  heap_ = b_.CreateCall(alignedAlloc, {i64(kBufferAlign), i64(0)}, "heap");
  llvm::Value* begin = fn->getArg(1);
  llvm::Value* end = fn->getArg(2);
  emitLoop(b_, begin, end, [&](llvm::Value* linearId) {
    programLinear_ = linearId;
    emitProgramIds(linearId);
    lowerBlock(kernel_.body);
  });
  finishHeap(fn, b_.CreateRetVoid());
  outlineChunks(fn);
  std::string error;
  llvm::raw_string_ostream os(error);
  if (llvm::verifyModule(module_, &os)) throw Error("lower/cpu: generated invalid LLVM IR for kernel '" + kernel_.name + "': " + error);
}

void KernelLowering::emitPrologue(llvm::Function* fn) {
  llvm::Type* i64Ty = b_.getInt64Ty();
  llvm::Type* ptr = b_.getPtrTy();
  auto* descType = llvm::StructType::get(ctx_, {ptr, llvm::ArrayType::get(i64Ty, kMaxRank), llvm::ArrayType::get(i64Ty, kMaxRank)});
  argsType_ = llvm::StructType::get(ctx_, {ptr, llvm::ArrayType::get(i64Ty, kMaxGridRank), ptr, ptr, ptr, ptr, ptr, ptr});
  args_ = fn->getArg(0);
  llvm::Value* descs = b_.CreateLoad(ptr, b_.CreateStructGEP(argsType_, args_, 0), "tensors");
  for (size_t t = 0; t < kernel_.tensors.size(); ++t) {
    llvm::Value* desc = b_.CreateConstInBoundsGEP1_64(descType, descs, t);
    TensorView view{desc, b_.CreateLoad(ptr, b_.CreateStructGEP(descType, desc, 0), "data"), {}, {}};
    for (int d = 0; d < kernel_.tensors[t].rank; ++d) {
      view.shape.push_back(b_.CreateLoad(i64Ty, b_.CreateInBoundsGEP(descType, desc, {b_.getInt32(0), b_.getInt32(1), b_.getInt32(d)})));
      view.strides.push_back(b_.CreateLoad(i64Ty, b_.CreateInBoundsGEP(descType, desc, {b_.getInt32(0), b_.getInt32(2), b_.getInt32(d)})));
    }
    tensors_.push_back(std::move(view));
  }
  for (int d = 0; d < kernel_.gridRank; ++d)
    grid_.push_back(b_.CreateLoad(i64Ty, b_.CreateInBoundsGEP(argsType_, args_, {b_.getInt32(0), b_.getInt32(1), b_.getInt32(d)})));
  programIdArray_ = b_.CreateAlloca(llvm::ArrayType::get(i64Ty, kMaxGridRank), nullptr, "program_id");
  if (!kernel_.scalars.empty()) {
    llvm::Value* scalars = b_.CreateLoad(ptr, b_.CreateStructGEP(argsType_, args_, 5), "scalars");
    for (size_t i = 0; i < kernel_.scalars.size(); ++i) {
      llvm::Value* raw = b_.CreateLoad(i64Ty, b_.CreateConstInBoundsGEP1_64(i64Ty, scalars, i));
      DType t = kernel_.scalars[i].dtype;
      scalarParams_.push_back(isFloat(t) ? roundToDType(b_, b_.CreateBitCast(raw, b_.getDoubleTy()), t)
                                         : b_.CreateTrunc(raw, compute(t)));
    }
  }
}

void KernelLowering::emitProgramIds(llvm::Value* linearId) {
  programIds_.assign(kernel_.gridRank, nullptr);
  llvm::Value* rest = linearId;
  for (int d = kernel_.gridRank - 1; d >= 0; --d) {
    programIds_[d] = d == 0 ? rest : b_.CreateSRem(rest, grid_[d]);
    if (d > 0) rest = b_.CreateSDiv(rest, grid_[d]);
  }
  for (int d = 0; d < kMaxGridRank; ++d)
    b_.CreateStore(d < kernel_.gridRank ? programIds_[d] : i64(0),
                   b_.CreateConstInBoundsGEP2_32(llvm::ArrayType::get(b_.getInt64Ty(), kMaxGridRank), programIdArray_, 0, d));
}

// ---------------------------------------------------------------- chunks

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

int64_t countOps(const ir::Op& op) {
  int64_t n = 1;
  for (const ir::Block& region : op.regions) ir::forEachOp(region, [&](const ir::Op&) { ++n; });
  return n;
}

// Between two of a block's ops every branch has joined again (see chunkBlocks).
llvm::BasicBlock* KernelLowering::beginChunk() {
  auto* block = llvm::BasicBlock::Create(ctx_, "chunk", b_.GetInsertBlock()->getParent());
  b_.CreateBr(block);
  b_.SetInsertPoint(block);
  return block;
}

// A chunk's blocks: those reached from its first block before the next chunk's.
std::vector<llvm::BasicBlock*> chunkBlocks(llvm::BasicBlock* first, llvm::BasicBlock* next) {
  std::vector<llvm::BasicBlock*> blocks = {first};
  std::set<llvm::BasicBlock*> seen = {first, next};
  for (size_t i = 0; i < blocks.size(); ++i)
    for (llvm::BasicBlock* successor : llvm::successors(blocks[i]))
      if (seen.insert(successor).second) blocks.push_back(successor);
  return blocks;
}

// Each chunk becomes a function called where it was (its inputs as arguments, the values later
// chunks use returned through pointers), never inlined back. The chunks of blocks inside a
// chunk go first, so that the chunk calls them.
void KernelLowering::outlineChunks(llvm::Function* fn) {
  if (chunkStarts_.empty()) return;
  for (const std::vector<llvm::BasicBlock*>& starts : chunkStarts_)
    for (size_t c = 0; c + 1 < starts.size(); ++c) localizeInputs(chunkBlocks(starts[c], starts[c + 1]));
  llvm::CodeExtractorAnalysisCache cache(*fn);
  for (const std::vector<llvm::BasicBlock*>& starts : chunkStarts_)
    for (size_t c = 0; c + 1 < starts.size(); ++c) {
      llvm::CodeExtractor extractor(chunkBlocks(starts[c], starts[c + 1]), nullptr, false, nullptr, nullptr, nullptr,
                                    false, false, nullptr, "chunk");
      llvm::Function* chunk = extractor.extractCodeRegion(cache);
      if (!chunk) throw Error("lower/cpu: kernel '" + kernel_.name + "': cannot outline a chunk of its body");
      chunk->addFnAttr(llvm::Attribute::NoInline);
      markBuffersNoAlias(*llvm::cast<llvm::CallInst>(chunk->user_back()));
    }
}

// Routes the chunk's every use of a value from outside it through one copy at its start (a
// `select true` that folds away once outlined). The extractor walks every use of an input in
// the whole function, and the values every chunk reads (a tensor's shape, a block index) made
// that quadratic: lowering 8000 reads took 4.6 s, over half of it there; 0.4 s with the copies.
void KernelLowering::localizeInputs(const std::vector<llvm::BasicBlock*>& blocks) {
  const std::set<const llvm::BasicBlock*> inside(blocks.begin(), blocks.end());
  std::map<llvm::Value*, llvm::Value*> copies;
  llvm::IRBuilder<> start(blocks[0], blocks[0]->getFirstInsertionPt());
  for (llvm::BasicBlock* block : blocks)
    for (llvm::Instruction& inst : *block)
      for (llvm::Use& use : inst.operands()) {
        auto* def = llvm::dyn_cast<llvm::Instruction>(use.get());
        if (!(def && !inside.count(def->getParent())) && !llvm::isa<llvm::Argument>(use.get())) continue;
        llvm::Value*& copy = copies[use.get()];
        if (!copy) copy = start.CreateSelect(start.getTrue(), use.get(), use.get());
        use.set(copy);
      }
}

// The value localizeInputs' copies (an enclosing chunk's, then this one's) stand for.
const llvm::Value* uncopied(const llvm::Value* v) {
  while (auto* copy = llvm::dyn_cast<llvm::SelectInst>(v))
    if (copy->getTrueValue() == copy->getFalseValue()) v = copy->getTrueValue();
    else break;
  return v;
}

// A buffer passed to a chunk whole (an alloca, or a tile's part of the heap block) overlaps no
// tensor and no other buffer. Unsaid, LLVM vectorized every nest that stores to one behind alias
// checks and kept a scalar copy (1000 reads: 30.5k optimized instructions against 21k, and half
// again the compile time). A buffer that another argument points into is left alone.
void KernelLowering::markBuffersNoAlias(llvm::CallInst& call) {
  auto root = [&](const llvm::Value* v) -> const llvm::Value* {
    v = uncopied(v);
    return llvm::isa<llvm::AllocaInst>(v) ? v : heapBuffers_.count(v) ? heap_ : nullptr;
  };
  std::set<const llvm::Value*> pointedInto;
  for (const llvm::Value* arg : call.args())
    if (arg->getType()->isPointerTy() && !root(arg)) pointedInto.insert(llvm::getUnderlyingObject(uncopied(arg)));
  for (unsigned a = 0; a < call.arg_size(); ++a)
    if (const llvm::Value* r = root(call.getArgOperand(a)); r && !pointedInto.count(r))
      call.getCalledFunction()->addParamAttr(a, llvm::Attribute::NoAlias);
}

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

bool KernelLowering::needsBuffer(ValueId v) const {
  const ir::Op* op = info_.def[v];
  if (!op || type(v).isScalar()) return false;
  if (!isFusable(op->code)) return true;
  if (info_.dotUser[v] || info_.printed[v]) return true;
  // A read must read memory before any later write to the same tensor can change it.
  if (ir::readsTensor(op->code) && info_.storedTensors.count(op->intAttr("tensor"))) return true;
  if (isCheap(op->code)) return false;
  return info_.uses[v] > 1 || info_.usedDeeper[v];
}

// A nest reads each block its expression loads through a view of its own (a base and a row
// stride held across the nest, an edge test before it). A sum of N reads fused into one nest
// was N times that code in a single op, which no chunk boundary splits, with 2N values live in
// one loop: a tile whose expression would stage more than kMaxFusedLoads blocks gets a buffer
// instead (nests of 8 to 32 reads compiled alike, 64 a fifth slower; no sample stages more than
// a few).
constexpr int kMaxFusedLoads = 16;

// The loads a tile's fused expression stages (buffered operands stage none).
int KernelLowering::countFusedLoads(const ir::Op& op) {
  int loads = op.code == OpCode::load ? 1 : 0;
  for (ValueId o : op.operands)
    if (!buffers_[o]) loads += fusedLoads_[o];
  return fusedLoads_[op.results[0]] = loads;
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
    default: break;
  }
  if (ir::isReduction(op.code)) return lowerReduction(op);
  ValueId r = op.results.at(0);
  if (type(r).isScalar()) {
    scalars_[r] = computeElement(op, {});
  } else if (needsBuffer(r) || countFusedLoads(op) > kMaxFusedLoads) {
    bool widen = storedWidened(r);
    llvm::Value* buffer = allocateBuffer({widen ? DType::f32 : type(r).dtype, type(r).shape});
    if (widen) widened_.insert(r);
    if (readsInPlace(r)) lowerInPlaceOperand(op, buffer);
    else materialize(r, buffer, widen ? std::optional{DType::f32} : std::nullopt);
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
      !microKernelApplies(*dot) ||
      info_.tensorOps.at(store->intAttr("tensor")) != 1)
    return nullptr;
  const ir::AttrValue& value = *init->attr("value");
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
      throw Error("lower/cpu: an output accumulator's dot did not accumulate in place");
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
  int64_t tensor = op.intAttr("tensor");
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
  int64_t tensor = store.intAttr("tensor");
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
  size_t axis = static_cast<size_t>(op.intAttr("axis"));
  const std::string& fn = op.stringAttr("fn");
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
  size_t n = op.operands.size(), axis = static_cast<size_t>(op.intAttr("axis"));
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
  size_t axis = static_cast<size_t>(op.intAttr("axis")), count = op.operands.size();
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
  bool descending = op.intAttr("descending") != 0;
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
  llvm::Value* label = b_.CreateGlobalStringPtr(op.stringAttr("label"));
  auto* fnType = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getPtrTy(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy()}, false);
  emitIf(b_, b_.CreateIsNotNull(fnPtr), [&] {
    b_.CreateCall(fnType, fnPtr, {context, label, b_.getInt32(static_cast<int>(t.dtype)), b_.getInt32(t.rank()), shape, buffer, programIdArray_});
  });
}

// C = acc + A·B. The product accumulates in place into a loop-carried tile when the next
// value of that tile is this dot and the tile is read only by the accumulator: either the
// accumulator is the tile itself, or one elementwise op of it (flash attention's rescale
// `acc * s + p·v`), which then runs over the tile's buffer first. No copies in and out of the
// loop state.
void KernelLowering::lowerDot(const ir::Op& op) {
  ValueId r = op.results[0];
  const ir::Type& rt = type(r);
  DType accType = isFloat(rt.dtype) ? (rt.dtype == DType::f64 ? DType::f64 : DType::f32) : rt.dtype;
  ir::Type accTile{accType, rt.shape};
  bool hasAcc = op.operands.size() == 3;
  if (hasAcc && accType == rt.dtype) {
    if (ValueId carried = inPlaceAccumulator(op); carried >= 0) {
      llvm::Value* c = buffers_[carried];
      if (carried != op.operands[2])
        emitNest(rt.shape, {op.operands[2]}, [&](const Indices& idx) { storeToBuffer(c, rt, idx, element(op.operands[2], idx)); });
      if (const OutputAccumulator* output = outputAccumulatorOf(carried)) {
        const BlockView& view = output->block.view;
        CTarget target{b_.CreateSelect(output->lastStep, view.base, c),
                       b_.CreateSelect(output->lastStep, view.strides[0], i64(rt.shape[1])), output->firstStep};
        if (!emitDotMicroKernel(op, c, accType, target))
          throw Error("lower/cpu: an output accumulator's dot has no micro-kernel");
      } else if (!emitDotMicroKernel(op, c, accType)) {
        emitDotLoops(op, c, accType);
      }
      buffers_[r] = c;
      return;
    }
  }
  llvm::Value* c = allocateBuffer(accTile);
  emitNest(rt.shape, hasAcc ? std::vector<ValueId>{op.operands[2]} : std::vector<ValueId>{}, [&](const Indices& idx) {
    llvm::Value* init = hasAcc ? cast(element(op.operands[2], idx), rt.dtype, accType) : llvm::Constant::getNullValue(compute(accType));
    storeToBuffer(c, accTile, idx, init);
  });
  if (!emitDotMicroKernel(op, c, accType)) emitDotLoops(op, c, accType);
  if (accType == rt.dtype) {
    buffers_[r] = c;
    return;
  }
  llvm::Value* out = allocateBuffer(rt);
  emitNest(rt.shape, {}, [&](const Indices& idx) {
    llvm::Value* v = b_.CreateLoad(compute(accType), bufferAddress(c, accTile, idx));
    storeToBuffer(out, rt, idx, cast(v, accType, rt.dtype));
  });
  buffers_[r] = out;
}

// The loop-carried tile a dot may accumulate into in place (see lowerDot), or -1.
ValueId KernelLowering::inPlaceAccumulator(const ir::Op& dot) const {
  ValueId acc = dot.operands[2], carried = acc;
  if (const ir::Op* update = info_.def[acc]) {
    // One elementwise op reading the tile once, fused (not buffered) and read only here.
    bool elementwise = ir::isUnaryElementwise(update->code) || ir::isBinaryElementwise(update->code);
    if (!elementwise || buffers_[acc] || info_.uses[acc] != 1) return -1;
    auto it = std::find_if(update->operands.begin(), update->operands.end(),
                           [&](ValueId o) { return !info_.def[o] && buffers_[o] && type(o) == type(acc); });
    if (it == update->operands.end()) return -1;
    carried = *it;
  }
  bool ownsTile = !info_.def[carried] && buffers_[carried] && info_.uses[carried] == 1;
  return ownsTile && info_.yieldedInto[dot.results[0]] == carried ? carried : -1;
}

// c += A·B, row by row: for m, for k, c[m, :] += A[m, k] * B[k, :]; the inner loop is
// contiguous in B and c so it vectorizes.
void KernelLowering::emitDotLoops(const ir::Op& op, llvm::Value* c, DType accType) {
  ValueId a = op.operands[0], bv = op.operands[1];
  const ir::Type& at = type(a);
  const ir::Type& rt = type(op.results[0]);
  ir::Type accTile{accType, rt.shape};
  llvm::Type* acc = compute(accType);
  emitLoop(b_, i64(0), i64(rt.shape[0]), [&](llvm::Value* mi) {
    emitLoop(b_, i64(0), i64(at.shape[1]), [&](llvm::Value* ki) {
      llvm::Value* av = cast(element(a, {mi, ki}), at.dtype, accType);
      emitLoop(b_, i64(0), i64(rt.shape[1]), [&](llvm::Value* ni) {
        llvm::Value* bvv = cast(element(bv, {ki, ni}), at.dtype, accType);
        llvm::Value* address = bufferAddress(c, accTile, {mi, ni});
        llvm::Value* old = b_.CreateLoad(acc, address);
        llvm::Value* sum = isFloat(accType) ? b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {acc}, {av, bvv, old})
                                            : b_.CreateAdd(old, b_.CreateMul(av, bvv));
        b_.CreateStore(sum, address);
      });
    });
  });
}

// The value a sum, max or min leaves every element unchanged by (-0.0 for float sums, so a
// sum of -0.0s stays -0.0).
llvm::Value* reductionIdentity(OpCode code, DType t, llvm::Type* type) {
  if (code == OpCode::reduce_sum) return isFloat(t) ? llvm::ConstantFP::getNegativeZero(type) : llvm::ConstantInt::get(type, 0);
  bool isMax = code == OpCode::reduce_max;
  if (isFloat(t)) return llvm::ConstantFP::getInfinity(type, isMax);
  unsigned bits = type->getIntegerBitWidth();
  if (isUnsigned(t)) return llvm::ConstantInt::get(type, isMax ? llvm::APInt::getMinValue(bits) : llvm::APInt::getMaxValue(bits));
  return llvm::ConstantInt::get(type, isMax ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getSignedMaxValue(bits));
}

void KernelLowering::lowerReduction(const ir::Op& op) {
  ValueId x = op.operands[0], r = op.results[0];
  const ir::Type& xt = type(x);
  const ir::Type& rt = type(r);
  size_t axis = static_cast<size_t>(op.intAttr("axis"));
  bool isArg = op.code == OpCode::argmax || op.code == OpCode::argmin;
  // Float sums run in the compute type (float for the 16-bit floats), reassociated so
  // the loop vectorizes: within the (n + 1) u sum bound every device is held to, at
  // twice the lanes of summing in double.
  llvm::Type* accTy = compute(xt.dtype);
  llvm::Value* out = rt.isScalar() ? nullptr : allocateBuffer(rt);
  llvm::IRBuilder<> entry(allocaBlock_, allocaBlock_->begin());
  llvm::Value* accSlot = entry.CreateAlloca(accTy);
  llvm::Value* argSlot = entry.CreateAlloca(b_.getInt64Ty());
  llvm::Value* result = nullptr;
  auto reduceLane = [&](const Indices& outIdx) {
    auto at = [&](llvm::Value* k) {
      Indices idx(outIdx);
      idx.insert(idx.begin() + static_cast<std::ptrdiff_t>(axis), k);
      return element(x, idx);
    };
    llvm::Value* value = nullptr;
    auto step = [&](llvm::Value* k) {
      llvm::Value* v = at(k);
      llvm::Value* best = b_.CreateLoad(accTy, accSlot);
      if (isArg) {
        bool isMax = op.code == OpCode::argmax;
        llvm::Value* better = isFloat(xt.dtype) ? (isMax ? b_.CreateFCmpOGT(v, best) : b_.CreateFCmpOLT(v, best))
                                                : b_.CreateICmp(intPredicate(isMax ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_SLT, xt.dtype), v, best);
        if (isFloat(xt.dtype))  // the first NaN wins and stays
          better = b_.CreateAnd(b_.CreateOr(better, b_.CreateFCmpUNO(v, v)), b_.CreateFCmpORD(best, best));
        b_.CreateStore(b_.CreateSelect(better, v, best), accSlot);
        b_.CreateStore(b_.CreateSelect(better, k, b_.CreateLoad(b_.getInt64Ty(), argSlot)), argSlot);
        return;
      }
      llvm::Value* next = nullptr;
      bool isF = isFloat(xt.dtype);
      switch (op.code) {
        case OpCode::reduce_sum:
          next = isF ? b_.CreateFAdd(best, v) : b_.CreateAdd(best, v);
          if (isF) llvm::cast<llvm::Instruction>(next)->setHasAllowReassoc(true);
          break;
        case OpCode::reduce_max:
          next = b_.CreateBinaryIntrinsic(intMax(xt.dtype), best, v);
          break;
        default:
          next = b_.CreateBinaryIntrinsic(intMin(xt.dtype), best, v);
          break;
      }
      b_.CreateStore(next, accSlot);
    };
    if (isFloat(xt.dtype) && !isArg && op.code != OpCode::reduce_sum) {
      value = floatExtremum(op.code, xt.dtype, at, xt.shape[axis], accSlot);
    } else {
      // Sums (and integer extrema) start from their identity so the loop covers the whole axis:
      // no scalar remainder when its length is a multiple of the vector. argmax/argmin start
      // from element 0 and its index.
      b_.CreateStore(isArg ? at(i64(0)) : reductionIdentity(op.code, xt.dtype, accTy), accSlot);
      b_.CreateStore(i64(0), argSlot);
      emitLoop(b_, i64(isArg ? 1 : 0), i64(xt.shape[axis]), step);
      value = isArg ? b_.CreateTrunc(b_.CreateLoad(b_.getInt64Ty(), argSlot), b_.getInt32Ty())
                    : b_.CreateLoad(accTy, accSlot);
    }
    if (op.code == OpCode::reduce_sum && isFloat(xt.dtype)) value = roundToDType(b_, value, rt.dtype);
    if (out) storeToBuffer(out, rt, outIdx, value);
    else result = value;
  };
  if (rt.isScalar()) {
    reduceLane({});
    scalars_[r] = result;
  } else {
    emitNest(rt.shape, {x}, reduceLane);
    buffers_[r] = out;
  }
}

// A float max or min with maximum/minimum's meaning (NaN wins; +0 > -0), fast: the loop takes
// maxnum/minnum with no-NaN and no-signed-zero flags (a plain vmaxps that vectorizes, where
// maximum costs three blends per vector) and ORs isnan(x) on the side. Only a zero result,
// whose sign those flags leave open, is recomputed exactly.
llvm::Value* KernelLowering::floatExtremum(OpCode code, DType t, const std::function<llvm::Value*(llvm::Value*)>& at,
                                           int64_t length, llvm::Value* accSlot) {
  bool isMax = code == OpCode::reduce_max;
  llvm::Type* ty = llvm::cast<llvm::AllocaInst>(accSlot)->getAllocatedType();
  llvm::IRBuilder<> entry(allocaBlock_, allocaBlock_->begin());
  llvm::Value* nanSlot = entry.CreateAlloca(b_.getInt1Ty());
  auto reduce = [&](llvm::Intrinsic::ID fn, bool fast) {
    b_.CreateStore(reductionIdentity(code, t, ty), accSlot);
    emitLoop(b_, i64(0), i64(length), [&](llvm::Value* k) {
      llvm::Value* v = at(k);
      llvm::Value* next = b_.CreateBinaryIntrinsic(fn, b_.CreateLoad(ty, accSlot), v);
      if (fast) {
        auto* call = llvm::cast<llvm::Instruction>(next);
        call->setHasNoNaNs(true);
        call->setHasNoSignedZeros(true);
        b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt1Ty(), nanSlot), b_.CreateFCmpUNO(v, v)), nanSlot);
      }
      b_.CreateStore(next, accSlot);
    });
  };
  b_.CreateStore(b_.getFalse(), nanSlot);
  reduce(isMax ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum, true);
  llvm::Value* sawNaN = b_.CreateLoad(b_.getInt1Ty(), nanSlot);
  // A logical and: with a NaN seen the fast result is poison and must not reach a branch.
  llvm::Value* zero = b_.CreateLogicalAnd(b_.CreateNot(sawNaN), b_.CreateFCmpOEQ(b_.CreateLoad(ty, accSlot), llvm::ConstantFP::get(ty, 0.0)));
  emitIf(b_, zero, [&] { reduce(isMax ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, false); });
  return b_.CreateSelect(sawNaN, llvm::ConstantFP::getNaN(ty), b_.CreateLoad(ty, accSlot));
}

// Whether a dot runs on the register micro-kernel: f32 accumulators (i32 for i8 operands)
// and rows of B a whole number of vectors long.
bool KernelLowering::microKernelApplies(const ir::Op& dot) const {
  const ir::Type& at = type(dot.operands[0]);
  DType resultType = type(dot.results[0]).dtype;
  bool f32Acc = isFloat(resultType) && resultType != DType::f64;
  bool integer = resultType == DType::i32 && at.dtype == DType::i8;
  return (f32Acc || integer) && type(dot.operands[1]).shape[1] % (options_.vectorBytes / 4) == 0;
}

// With vdpbf16ps (bf16) or pmaddwd (i8 on x86) a step covers two k: B is repacked once so
// rows k and k+1 sit interleaved as (k, k+1) pairs per column, and A's pair is broadcast to
// every lane.
bool KernelLowering::usesPairProducts(const ir::Op& dot) const {
  DType operand = type(dot.operands[0]).dtype;
  bool bf16Pairs = options_.bf16DotProduct && operand == DType::bf16 && options_.vectorBytes == 64;
  bool i8Pairs = operand == DType::i8 && type(dot.results[0]).dtype == DType::i32 && options_.i16PairProducts;
  return (bf16Pairs || i8Pairs) && type(dot.operands[0]).shape[1] % 2 == 0;
}

// Whether the micro-kernel runs a dot of 16- or 8-bit floats on f32 copies of its operands.
bool KernelLowering::widensOperands(const ir::Op& dot) const {
  DType operand = type(dot.operands[0]).dtype;
  bool narrowFloat = operand == DType::f16 || operand == DType::bf16 || isFloat8(operand);
  return narrowFloat && microKernelApplies(dot) && !usesPairProducts(dot);
}

// Whether v, a dot operand read by nothing else, is written straight into an f32 buffer (the
// f32 form its elements are computed in, exact), sparing the micro-kernel a pass that widens it:
// bf16 (bf16 attention 29.2 -> 27.6 ms) and 8-bit floats (scaled f8e4m3 GEMM 113 -> 140
// GFLOP/s). Not an f16 block loaded as it is, whose conversion LLVM's vectorizer runs at half
// width in the copy loop (f16 GEMM 158 -> 150 GFLOP/s); the widening pass does it at full width.
bool KernelLowering::storedWidened(ValueId v) const {
  const ir::Op* dot = info_.dotUser[v];
  if (!dot || info_.uses[v] != 1 || !widensOperands(*dot)) return false;
  return !(type(v).dtype == DType::f16 && info_.def[v] && info_.def[v]->code == OpCode::load);
}

// A register-blocked product in f32 (or i32 for i8 operands): C is cut into rows x (vectors * lanes)
// micro-tiles whose accumulators stay in SIMD registers across the whole K
// loop; each step broadcasts one A element per row and loads B's row once.
// The tallest tile the register file holds (8 rows of 2 vectors in 32 AVX-512
// registers, 6 in 16) covers C's rows; a shorter band finishes what is left.
// Returns false (and emits nothing) when the columns do not fit the blocking.
bool KernelLowering::emitDotMicroKernel(const ir::Op& op, llvm::Value* c, DType accType, CTarget target) {
  const ir::Type& at = type(op.operands[0]);
  const ir::Type& bt = type(op.operands[1]);
  int64_t lanes = options_.vectorBytes / 4;
  int64_t m = at.shape[0], k = at.shape[1], n = bt.shape[1];
  if (!microKernelApplies(op) || !buffers_[op.operands[0]] || !buffers_[op.operands[1]]) return false;
  int64_t vectors = n % (2 * lanes) == 0 ? 2 : 1;
  int64_t rows = std::min(m, lanes >= 16 ? int64_t{8} : int64_t{6});
  bool pairs = usesPairProducts(op);
  MicroTile tile{.lanes = lanes, .vectors = vectors, .rows = rows, .accType = accType,
                 .operandType = at.dtype, .a = buffers_[op.operands[0]], .b = buffers_[op.operands[1]],
                 .aRowStride = i64(k),
                 .packedB = pairs ? packPairs(buffers_[op.operands[1]], bt.dtype, k, n, lanes) : nullptr, .acc = {}};
  if (auto view = inPlaceOperands_.find(op.operands[0]); view != inPlaceOperands_.end()) {
    // widenToF32 reads A as a contiguous block: readsInPlace admits f32 alone.
    if (widensOperands(op)) throw Error("lower/cpu: a widened dot operand cannot be read in place");
    tile.a = view->second.base;
    tile.aRowStride = view->second.strides[0];
  }
  // 16- and 8-bit floats without pair products are widened to f32 once, not at every use in
  // the K loop (most were written as f32 already: see storedWidened).
  if (widensOperands(op)) {
    if (!widened_.count(op.operands[0])) tile.a = widenToF32(tile.a, at);
    if (!widened_.count(op.operands[1])) tile.b = widenToF32(tile.b, bt);
    tile.operandType = DType::f32;
  }
  b_.CreateCall(microKernelFunction(op, tile), {tile.a, tile.aRowStride, tile.packedB ? tile.packedB : tile.b, c,
                                                target.out ? target.out : c, target.out ? target.outRowStride : i64(n),
                                                target.startsAtZero ? target.startsAtZero : b_.getFalse()});
  return true;
}

// The micro-kernels of a dot, band by band, as a function
// `void(a, aRowStride, b or packedB, c, out, outRowStride, startsAtZero)`
// that the kernel's dots of the same shapes and types share (attention's two: sharing took its
// cold compile from 163 to 142 ms).
llvm::Function* KernelLowering::microKernelFunction(const ir::Op& op, const MicroTile& tile) {
  const ir::Type& at = type(op.operands[0]);
  const ir::Type& bt = type(op.operands[1]);
  int64_t m = at.shape[0];
  std::string key = at.str() + " " + bt.str() + " " + std::string(dtypeName(tile.accType)) + " " +
                    std::string(dtypeName(tile.operandType)) + (tile.packedB ? " pairs " : " ") + std::to_string(tile.lanes) + "x" +
                    std::to_string(tile.vectors) + "x" + std::to_string(tile.rows);
  if (auto known = microKernels_.find(key); known != microKernels_.end()) return known->second;
  llvm::Type* ptr = b_.getPtrTy();
  auto* fnType = llvm::FunctionType::get(b_.getVoidTy(), {ptr, b_.getInt64Ty(), ptr, ptr, ptr, b_.getInt64Ty(), b_.getInt1Ty()}, false);
  auto* fn = llvm::Function::Create(fnType, llvm::Function::InternalLinkage, "tj_dot_" + std::to_string(microKernels_.size()), module_);
  fn->copyAttributesFrom(b_.GetInsertBlock()->getParent());
  fn->setDSOLocal(true);
  fn->addFnAttr(llvm::Attribute::NoInline);
  // B is the dot's own copy; A may be a tensor's rows, and c and out (which may be c) are written.
  fn->addParamAttr(2, llvm::Attribute::NoAlias);
  microKernels_.emplace(key, fn);
  llvm::IRBuilderBase::InsertPointGuard resume(b_);
  llvm::BasicBlock* kernelAllocas = std::exchange(allocaBlock_, llvm::BasicBlock::Create(ctx_, "entry", fn));
  b_.SetInsertPoint(allocaBlock_);
  MicroTile local = tile;
  local.a = fn->getArg(0);
  local.aRowStride = fn->getArg(1);
  (tile.packedB ? local.packedB : local.b) = fn->getArg(2);
  local.target = {fn->getArg(4), fn->getArg(5), fn->getArg(6)};
  // Accumulators live in allocas that mem2reg turns into registers.
  auto* vecTy = llvm::FixedVectorType::get(compute(tile.accType), static_cast<unsigned>(tile.lanes));
  for (int64_t i = 0; i < tile.rows * tile.vectors; ++i) local.acc.push_back(b_.CreateAlloca(vecTy));
  emitLoop(b_, i64(0), i64(m / tile.rows), [&](llvm::Value* band) {
    emitMicroTileRow(op, fn->getArg(3), local, b_.CreateMul(band, i64(tile.rows)));
  });
  if (m % tile.rows != 0) {
    local.rows = m % tile.rows;
    emitMicroTileRow(op, fn->getArg(3), local, i64(m - m % tile.rows));
  }
  b_.CreateRetVoid();
  allocaBlock_ = kernelAllocas;
  return fn;
}

// Whether v, a block loaded for a dot's left operand alone, may be read where it lies
// instead of copied: an f32 micro-kernel reads A one element at a time (broadcast), so its
// rows need no copy (B's rows, read as vectors, are copied: rows a large power of two apart
// would share cache sets).
bool KernelLowering::readsInPlace(ValueId v) const {
  const ir::Op* load = info_.def[v];
  const ir::Op* dot = info_.dotUser[v];
  if (!load || load->code != OpCode::load || !dot || info_.uses[v] != 1 || dot->operands[0] != v) return false;
  const ir::Type& t = type(v);
  return t.dtype == DType::f32 && t.shape.size() == 2 && microKernelApplies(*dot) &&
         !info_.storedTensors.count(load->intAttr("tensor"));
}

// A block for readsInPlace: its tensor's rows where the block lies inside with unit columns,
// else the buffer, which the runtime's gather fills.
void KernelLowering::lowerInPlaceOperand(const ir::Op& load, llvm::Value* buffer) {
  inPlaceOperands_.emplace(load.results[0], stageLoad(load, buffer));
}

// One band of `tile.rows` rows of C from row0, micro-tile by micro-tile.
void KernelLowering::emitMicroTileRow(const ir::Op& op, llvm::Value* c, const MicroTile& tile, llvm::Value* row0) {
  const ir::Type& at = type(op.operands[0]);
  const ir::Type& bt = type(op.operands[1]);
  int64_t m = at.shape[0], k = at.shape[1], n = bt.shape[1];
  int64_t lanes = tile.lanes, vectors = tile.vectors, rows = tile.rows;
  bool integer = tile.accType == DType::i32;
  const std::vector<llvm::Value*>& acc = tile.acc;
  auto* vecTy = llvm::FixedVectorType::get(compute(tile.accType), static_cast<unsigned>(lanes));
  auto* bVecTy = llvm::FixedVectorType::get(storageType(ctx_, tile.operandType), static_cast<unsigned>(lanes));
  const ir::Type bTile{tile.operandType, bt.shape};
  ir::Type accTile{tile.accType, {m, n}};
  auto cAddress = [&](llvm::Value* row, llvm::Value* col) { return bufferAddress(c, accTile, {row, col}); };
  const BlockView out{tile.target.out, {tile.target.outRowStride, i64(1)}};
  emitLoop(b_, i64(0), i64(n / (vectors * lanes)), [&](llvm::Value* tileCol) {
    llvm::Value* col0 = b_.CreateMul(tileCol, i64(vectors * lanes));
    auto each = [&](const std::function<void(int64_t r, int64_t v, llvm::Value* row, llvm::Value* col)>& f) {
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t v = 0; v < vectors; ++v) f(r, v, b_.CreateAdd(row0, i64(r)), b_.CreateAdd(col0, i64(v * lanes)));
    };
    emitIf(b_, tile.target.startsAtZero, [&] {
      each([&](int64_t r, int64_t v, llvm::Value*, llvm::Value*) { b_.CreateStore(llvm::Constant::getNullValue(vecTy), acc[r * vectors + v]); });
    }, [&] {
      each([&](int64_t r, int64_t v, llvm::Value* row, llvm::Value* col) {
        b_.CreateStore(b_.CreateAlignedLoad(vecTy, cAddress(row, col), llvm::Align(4)), acc[r * vectors + v]);
      });
    });
    emitLoop(b_, i64(0), i64(tile.packedB ? k / 2 : k), [&](llvm::Value* step) {
      if (tile.packedB) return emitPairStep(op, tile, step, row0, col0);
      std::vector<llvm::Value*> bRow(static_cast<size_t>(vectors));
      for (int64_t v = 0; v < vectors; ++v) {
        llvm::Value* address = bufferAddress(tile.b, bTile, {step, b_.CreateAdd(col0, i64(v * lanes))});
        llvm::Value* raw = b_.CreateAlignedLoad(bVecTy, address, llvm::Align(dtypeBytes(tile.operandType)));
        bRow[v] = integer ? b_.CreateSExt(raw, vecTy) : fromStorage(b_, raw, tile.operandType);
      }
      for (int64_t r = 0; r < rows; ++r) {
        llvm::Value* aRaw = b_.CreateLoad(storageType(ctx_, tile.operandType), aAddress(tile, b_.CreateAdd(row0, i64(r)), step));
        llvm::Value* aValue = cast(fromStorage(b_, aRaw, tile.operandType), tile.operandType, tile.accType);
        llvm::Value* aSplat = b_.CreateVectorSplat(static_cast<unsigned>(lanes), aValue);
        for (int64_t v = 0; v < vectors; ++v) {
          llvm::Value* slot = acc[r * vectors + v];
          llvm::Value* old = b_.CreateLoad(vecTy, slot);
          b_.CreateStore(integer ? b_.CreateAdd(old, b_.CreateMul(aSplat, bRow[v]))
                                 : b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vecTy}, {aSplat, bRow[v], old}),
                         slot);
        }
      }
    }, {.unroll = 2});
    each([&](int64_t r, int64_t v, llvm::Value* row, llvm::Value* col) {
      b_.CreateAlignedStore(b_.CreateLoad(vecTy, acc[r * vectors + v]), viewAddress(tile.accType, out, {row, col}), llvm::Align(4));
    });
  });
}

// A copy of a 16- or 8-bit float buffer in f32, a vector at a time.
llvm::Value* KernelLowering::widenToF32(llvm::Value* buffer, const ir::Type& t) {
  llvm::Value* wide = allocateBuffer({DType::f32, t.shape});
  int64_t count = t.numel(), lanes = options_.vectorBytes / 4;
  llvm::Type* storage = storageType(ctx_, t.dtype);
  auto* vecTy = llvm::FixedVectorType::get(storage, static_cast<unsigned>(lanes));
  auto widen = [&](llvm::Type* from, llvm::Value* at) {
    llvm::Value* raw = b_.CreateAlignedLoad(from, b_.CreateInBoundsGEP(storage, buffer, at), llvm::Align(dtypeBytes(t.dtype)));
    b_.CreateAlignedStore(fromStorage(b_, raw, t.dtype), b_.CreateInBoundsGEP(b_.getFloatTy(), wide, at), llvm::Align(4));
  };
  emitLoop(b_, i64(0), i64(count / lanes), [&](llvm::Value* chunk) { widen(vecTy, b_.CreateMul(chunk, i64(lanes))); });
  emitLoop(b_, i64(count / lanes * lanes), i64(count), [&](llvm::Value* i) { widen(storage, i); });
  return wide;
}

// B [k, n] -> [k/2, n, 2] of 16-bit values (bf16 bits, or i8 sign-extended): element
// (2p + i, j) at (p * n + j) * 2 + i. `lanes` columns at a time: two row loads, one
// interleaving shuffle, one store.
llvm::Value* KernelLowering::packPairs(llvm::Value* b, DType dtype, int64_t k, int64_t n, int64_t lanes) {
  llvm::Value* packed = allocateBuffer({DType::bf16, {k, n}});
  llvm::Type* i16 = b_.getInt16Ty();
  llvm::Type* storage = storageType(ctx_, dtype);
  auto* rowTy = llvm::FixedVectorType::get(storage, static_cast<unsigned>(lanes));
  auto* wideTy = llvm::FixedVectorType::get(i16, static_cast<unsigned>(lanes));
  std::vector<int> interleave;
  for (int i = 0; i < lanes; ++i) interleave.insert(interleave.end(), {i, static_cast<int>(lanes) + i});
  emitLoop(b_, i64(0), i64(k / 2), [&](llvm::Value* p) {
    emitLoop(b_, i64(0), i64(n / lanes), [&](llvm::Value* chunk) {
      llvm::Value* col = b_.CreateMul(chunk, i64(lanes));
      auto row = [&](int64_t i) {
        llvm::Value* r = b_.CreateAdd(b_.CreateMul(p, i64(2)), i64(i));
        llvm::Value* at = b_.CreateInBoundsGEP(storage, b, b_.CreateAdd(b_.CreateMul(r, i64(n)), col));
        return b_.CreateSExtOrBitCast(b_.CreateAlignedLoad(rowTy, at, llvm::Align(1)), wideTy);
      };
      llvm::Value* pairs = b_.CreateShuffleVector(row(0), row(1), interleave);
      llvm::Value* to = b_.CreateMul(b_.CreateAdd(b_.CreateMul(p, i64(n)), col), i64(2));
      b_.CreateAlignedStore(pairs, b_.CreateInBoundsGEP(i16, packed, to), llvm::Align(4));
    });
  });
  return packed;
}

// One step of the micro-kernel over k = 2p and 2p + 1 on pair products: vdpbf16ps for bf16
// (it treats subnormal inputs as zero; products are exact and summed in f32), or pmaddwd
// for i8 widened to i16 (exact: a pair of i8 products fits i32).
void KernelLowering::emitPairStep(const ir::Op& op, const MicroTile& tile, llvm::Value* pairIndex,
                                  llvm::Value* row0, llvm::Value* col0) {
  int64_t n = type(op.operands[1]).shape[1], lanes = tile.lanes, vectors = tile.vectors;
  bool integer = tile.accType == DType::i32;
  auto* accTy = llvm::FixedVectorType::get(compute(tile.accType), static_cast<unsigned>(lanes));
  auto* pairTy = llvm::FixedVectorType::get(integer ? b_.getInt16Ty() : b_.getBFloatTy(), static_cast<unsigned>(2 * lanes));
  std::vector<llvm::Value*> bPairs(static_cast<size_t>(vectors));
  for (int64_t v = 0; v < vectors; ++v) {
    llvm::Value* col = b_.CreateAdd(col0, i64(v * lanes));
    llvm::Value* offset = b_.CreateMul(b_.CreateAdd(b_.CreateMul(pairIndex, i64(n)), col), i64(2));
    bPairs[v] = b_.CreateAlignedLoad(pairTy, b_.CreateInBoundsGEP(b_.getInt16Ty(), tile.packedB, offset), llvm::Align(4));
  }
  llvm::Value* k0 = b_.CreateMul(pairIndex, i64(2));
  // A's (k0, k0 + 1) as one 32-bit pair of 16-bit values, i8 sign-extended.
  auto* i8Pair = llvm::FixedVectorType::get(b_.getInt8Ty(), 2);
  auto* i16Pair = llvm::FixedVectorType::get(b_.getInt16Ty(), 2);
  for (int64_t r = 0; r < tile.rows; ++r) {
    llvm::Value* address = aAddress(tile, b_.CreateAdd(row0, i64(r)), k0);
    llvm::Value* pair = integer ? b_.CreateSExt(b_.CreateAlignedLoad(i8Pair, address, llvm::Align(1)), i16Pair)
                                : b_.CreateAlignedLoad(i16Pair, address, llvm::Align(2));
    pair = b_.CreateBitCast(pair, b_.getInt32Ty());
    llvm::Value* aPairs = b_.CreateBitCast(b_.CreateVectorSplat(static_cast<unsigned>(lanes), pair), pairTy);
    for (int64_t v = 0; v < vectors; ++v) {
      llvm::Value* slot = tile.acc[static_cast<size_t>(r * vectors + v)];
      llvm::Value* old = b_.CreateLoad(accTy, slot);
      llvm::Value* sum = nullptr;
      if (!integer) {
        sum = b_.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512, {}, {old, aPairs, bPairs[v]});
      } else {
        auto pmadd = lanes == 16 ? llvm::Intrinsic::x86_avx512_pmaddw_d_512
                     : lanes == 8 ? llvm::Intrinsic::x86_avx2_pmadd_wd
                                  : llvm::Intrinsic::x86_sse2_pmadd_wd;
        sum = b_.CreateAdd(old, b_.CreateIntrinsic(pmadd, {}, {aPairs, bPairs[v]}));
      }
      b_.CreateStore(sum, slot);
    }
  }
}

// ---------------------------------------------------------------- elements

llvm::Value* KernelLowering::element(ValueId v, const Indices& idx) {
  if (buffers_[v]) return bufferElement(buffers_[v], type(v), idx);
  if (!trueMasks_.empty() && trueMasks_.count(info_.def[v])) return b_.getTrue();
  if (type(v).isScalar()) {
    if (!scalars_[v]) throw Error("lower/cpu: value %" + std::to_string(v) + " used before it was computed");
    return scalars_[v];
  }
  return computeElement(*info_.def[v], idx);
}

llvm::Value* KernelLowering::constant(DType t, const ir::AttrValue& value) {
  const auto* exact = std::get_if<int64_t>(&value);
  if (!exact || isFloat(t)) return constant(t, exact ? double(*exact) : std::get<double>(value));
  return llvm::ConstantInt::get(compute(t), static_cast<uint64_t>(wrapToInt(t, *exact)), true);
}

llvm::Value* KernelLowering::constant(DType t, double value) {
  llvm::Type* ty = compute(t);
  if (isFloat(t)) return llvm::ConstantFP::get(ty, roundToFloat(t, value));
  return llvm::ConstantInt::get(ty, static_cast<uint64_t>(wrapNumberToInt(t, value)), true);
}

llvm::Value* KernelLowering::computeElement(const ir::Op& op, const Indices& idx) {
  const ir::Type& rt = type(op.results[0]);
  switch (op.code) {
    case OpCode::program_id: return programIds_.at(op.intAttr("axis"));
    case OpCode::num_programs: return grid_.at(op.intAttr("axis"));
    case OpCode::tensor_dim: return tensors_.at(op.intAttr("tensor")).shape.at(op.intAttr("axis"));
    case OpCode::scalar_param: return scalarParams_.at(op.intAttr("index"));
    case OpCode::constant: return constant(rt.dtype, *op.attr("value"));
    case OpCode::iota: return b_.CreateTrunc(idx.at(op.intAttr("axis")), b_.getInt32Ty());
    case OpCode::broadcast: case OpCode::reshape: case OpCode::permute:
      return element(op.operands[0], operandIndices(op, idx));
    case OpCode::load: return loadElement(op, idx);
    case OpCode::gather: return gatherElement(op, idx);
    case OpCode::slice: {
      Indices at = idx;
      size_t axis = static_cast<size_t>(op.intAttr("axis"));
      at[axis] = b_.CreateAdd(idx[axis], i64(op.intAttr("start")));
      return element(op.operands[0], at);
    }
    case OpCode::concat: return concatElement(op, idx);
    case OpCode::atomic: return atomicElement(op, idx);
    default: break;
  }
  // Operands first, in order, one statement each: C++ leaves the order of a call's arguments
  // open and g++ goes right to left, which put every load of a chain `acc + x0 + x1 + ...`
  // before its first add, all of them live at once (quadratic in LLVM's vectorizer).
  llvm::SmallVector<llvm::Value*, 3> x;
  for (ValueId v : op.operands) x.push_back(element(v, idx));
  switch (op.code) {
    case OpCode::cast: return cast(x[0], type(op.operands[0]).dtype, rt.dtype);
    case OpCode::select: return b_.CreateSelect(x[0], x[1], x[2]);
    case OpCode::cmp: return compare(op, x[0], x[1]);
    default: break;
  }
  if (ir::isUnaryElementwise(op.code)) return unary(op, x[0]);
  if (ir::isBinaryElementwise(op.code)) return binary(op, x[0], x[1]);
  unsupported(op, "no element-wise form");
}

// The operand element that a broadcast, reshape or permute reads for result element idx.
Indices KernelLowering::operandIndices(const ir::Op& op, const Indices& idx) {
  const ir::Shape& from = type(op.operands[0]).shape;
  const ir::Shape& to = type(op.results[0]).shape;
  Indices out(from.size());
  if (op.code == OpCode::broadcast) {
    for (size_t d = 0; d < from.size(); ++d) out[d] = from[d] == 1 ? i64(0) : idx[d];
  } else if (op.code == OpCode::permute) {
    const std::vector<int64_t>& perm = op.intsAttr("perm");
    for (size_t d = 0; d < perm.size(); ++d) out[static_cast<size_t>(perm[d])] = idx[d];
  } else {
    // Reshape: the row-major linear position is preserved.
    llvm::Value* linear = i64(0);
    for (size_t d = 0; d < to.size(); ++d) linear = b_.CreateAdd(b_.CreateMul(linear, i64(to[d])), idx[d]);
    for (size_t d = from.size(); d-- > 0;) {
      out[d] = from[d] == 1 ? i64(0) : b_.CreateURem(linear, i64(from[d]));
      linear = b_.CreateUDiv(linear, i64(from[d]));
    }
  }
  return out;
}

// A libm function without an LLVM intrinsic, declared pure (we never read errno)
// so the vectorizer may replace it with its libmvec version.
llvm::Value* KernelLowering::libm(const char* name, llvm::Value* x) {
  llvm::FunctionCallee callee = module_.getOrInsertFunction(name, llvm::FunctionType::get(x->getType(), {x->getType()}, false));
  auto* fn = llvm::cast<llvm::Function>(callee.getCallee());
  fn->setDoesNotAccessMemory();
  fn->setDoesNotThrow();
  fn->addFnAttr(llvm::Attribute::WillReturn);
  llvm::CallInst* call = b_.CreateCall(callee, {x});
  call->setDoesNotAccessMemory();
  return call;
}

llvm::Value* KernelLowering::unary(const ir::Op& op, llvm::Value* x) {
  DType t = type(op.results[0]).dtype;
  if (isUnsigned(t) && (op.code == OpCode::abs || op.code == OpCode::relu)) return x;
  if (!isFloat(t)) {
    switch (op.code) {
      case OpCode::neg: return b_.CreateNeg(x);
      case OpCode::abs: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
      case OpCode::relu: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, llvm::ConstantInt::get(x->getType(), 0));
      case OpCode::floor: case OpCode::ceil: return x;
      case OpCode::logical_not: return b_.CreateNot(x);  // i1: logical; wider: bitwise
      default: unsupported(op, "not defined on " + std::string(dtypeName(t)));
    }
  }
  switch (op.code) {
    case OpCode::neg: return b_.CreateFNeg(x);
    case OpCode::abs: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    case OpCode::relu: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, llvm::ConstantFP::get(x->getType(), 0.0));
    case OpCode::floor: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
    case OpCode::ceil: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
    case OpCode::sqrt: return roundToDType(b_, b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x), t);
    // The hot op of softmax and attention: inline in float, 16 lanes at a time (2 ulps).
    case OpCode::exp:
      if (t != DType::f64) return roundToDType(b_, emitFastExpF32(b_, x), t);
      break;
    default: break;
  }
  // Transcendentals in double, rounded once to the dtype: libm's scalar functions are
  // bit-identical to the interpreter; libmvec's vector ones (used when a loop
  // vectorizes) are within 4 double ulps, almost always the same after rounding.
  llvm::Value* d = x->getType()->isDoubleTy() ? x : b_.CreateFPExt(x, b_.getDoubleTy());
  llvm::Value* r = nullptr;
  switch (op.code) {
    case OpCode::exp: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, d); break;
    case OpCode::exp2: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp2, d); break;
    case OpCode::log: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, d); break;
    case OpCode::log2: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::log2, d); break;
    case OpCode::sin: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sin, d); break;
    case OpCode::cos: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::cos, d); break;
    case OpCode::tanh: r = libm("tanh", d); break;
    case OpCode::erf: r = libm("erf", d); break;
    case OpCode::rsqrt:
      r = b_.CreateFDiv(llvm::ConstantFP::get(b_.getDoubleTy(), 1.0), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, d));
      break;
    case OpCode::sigmoid: {
      llvm::Value* e = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, b_.CreateFNeg(d));
      r = b_.CreateFDiv(llvm::ConstantFP::get(b_.getDoubleTy(), 1.0), b_.CreateFAdd(llvm::ConstantFP::get(b_.getDoubleTy(), 1.0), e));
      break;
    }
    default: unsupported(op, "unknown unary op");
  }
  return roundToDType(b_, r, t);
}

llvm::Value* KernelLowering::binary(const ir::Op& op, llvm::Value* x, llvm::Value* y) {
  DType t = type(op.results[0]).dtype;
  if (isFloat(t)) {
    llvm::Value* r = nullptr;
    switch (op.code) {
      case OpCode::add: r = b_.CreateFAdd(x, y); break;
      case OpCode::sub: r = b_.CreateFSub(x, y); break;
      case OpCode::mul: r = b_.CreateFMul(x, y); break;
      case OpCode::div: r = b_.CreateFDiv(x, y); break;
      case OpCode::rem: r = b_.CreateFRem(x, y); break;
      case OpCode::max: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, y);
      case OpCode::min: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, y);
      default: unsupported(op, "not defined on floats");
    }
    return roundToDType(b_, r, t);
  }
  switch (op.code) {
    case OpCode::add: return b_.CreateAdd(x, y);
    case OpCode::sub: return b_.CreateSub(x, y);
    case OpCode::mul: return b_.CreateMul(x, y);
    case OpCode::max: return b_.CreateBinaryIntrinsic(intMax(t), x, y);
    case OpCode::min: return b_.CreateBinaryIntrinsic(intMin(t), x, y);
    case OpCode::logical_and: return b_.CreateAnd(x, y);
    case OpCode::logical_or: return b_.CreateOr(x, y);
    case OpCode::bit_xor: return b_.CreateXor(x, y);
    case OpCode::shl: case OpCode::shr: case OpCode::shru: {
      // A count outside [0, bits) shifts every bit out (LLVM's shifts are poison there).
      unsigned bits = x->getType()->getIntegerBitWidth();
      llvm::Value* outside = b_.CreateICmpUGE(y, llvm::ConstantInt::get(y->getType(), bits));
      llvm::Value* zero = llvm::ConstantInt::get(x->getType(), 0);
      if (op.code == OpCode::shr && !isUnsigned(t))
        return b_.CreateAShr(x, b_.CreateSelect(outside, llvm::ConstantInt::get(y->getType(), bits - 1), y));
      llvm::Value* shifted = op.code == OpCode::shl ? b_.CreateShl(x, y) : b_.CreateLShr(x, y);
      return b_.CreateSelect(outside, zero, shifted);
    }
    case OpCode::div: case OpCode::rem: {
      if (isUnsigned(t)) return unsignedDivide(op, x, y);
      // Truncating division without traps: x / 0 reports a fault and gives 0; x / -1 is -x.
      llvm::Value* zero = llvm::ConstantInt::get(y->getType(), 0);
      llvm::Value* minusOne = llvm::ConstantInt::get(y->getType(), -1, true);
      llvm::Value* isZero = b_.CreateICmpEQ(y, zero);
      llvm::Value* isMinusOne = b_.CreateICmpEQ(y, minusOne);
      llvm::Value* safe = b_.CreateSelect(b_.CreateOr(isZero, isMinusOne), llvm::ConstantInt::get(y->getType(), 1), y);
      emitIf(b_, isZero, [&] { emitFault(kFaultIntegerDivideByZero); });
      bool isDiv = op.code == OpCode::div;
      llvm::Value* q = isDiv ? b_.CreateSDiv(x, safe) : b_.CreateSRem(x, safe);
      llvm::Value* special = isDiv ? b_.CreateSelect(isZero, zero, b_.CreateNeg(x)) : zero;
      return b_.CreateSelect(b_.CreateOr(isZero, isMinusOne), special, q);
    }
    default: unsupported(op, "not defined on integers");
  }
}

// x / 0 and x % 0 report a fault and give 0.
llvm::Value* KernelLowering::unsignedDivide(const ir::Op& op, llvm::Value* x, llvm::Value* y) {
  llvm::Value* zero = llvm::ConstantInt::get(y->getType(), 0);
  llvm::Value* isZero = b_.CreateICmpEQ(y, zero);
  emitIf(b_, isZero, [&] { emitFault(kFaultIntegerDivideByZero); });
  llvm::Value* safe = b_.CreateSelect(isZero, llvm::ConstantInt::get(y->getType(), 1), y);
  llvm::Value* q = op.code == OpCode::div ? b_.CreateUDiv(x, safe) : b_.CreateURem(x, safe);
  return b_.CreateSelect(isZero, zero, q);
}

llvm::Value* KernelLowering::compare(const ir::Op& op, llvm::Value* x, llvm::Value* y) {
  const std::string& pred = op.stringAttr("pred");
  bool isF = x->getType()->isFloatingPointTy();
  using P = llvm::CmpInst::Predicate;
  struct Entry { const char* name; P f, i; };
  static const Entry table[] = {{"lt", P::FCMP_OLT, P::ICMP_SLT}, {"le", P::FCMP_OLE, P::ICMP_SLE},
                                {"gt", P::FCMP_OGT, P::ICMP_SGT}, {"ge", P::FCMP_OGE, P::ICMP_SGE},
                                {"eq", P::FCMP_OEQ, P::ICMP_EQ},  {"ne", P::FCMP_UNE, P::ICMP_NE}};
  for (const Entry& e : table)
    if (pred == e.name) {
      return isF ? b_.CreateFCmp(e.f, x, y) : b_.CreateICmp(intPredicate(e.i, type(op.operands[0]).dtype), x, y);
    }
  unsupported(op, "unknown predicate '" + pred + "'");
}

llvm::Value* KernelLowering::cast(llvm::Value* x, DType from, DType to) {
  if (from == to) return x;
  llvm::Type* target = compute(to);
  if (to == DType::boolean)
    return isFloat(from) ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0))
                         : b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  if (from == DType::boolean) return isFloat(to) ? b_.CreateUIToFP(x, target) : b_.CreateZExt(x, target);
  if (isFloat(from) && isFloat(to))
    return to == DType::f64 ? b_.CreateFPExt(x, target) : roundToDType(b_, x, to);
  if (isFloat(from))  // truncate toward zero, NaN -> 0, saturate
    return b_.CreateIntrinsic(isUnsigned(to) ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat,
                              {target, x->getType()}, {x});
  bool is64 = dtypeBytes(from) == 8;
  if (isFloat(to)) {
    if (to == DType::f64 || (to == DType::f32 && is64))  // one rounding
      return isUnsigned(from) ? b_.CreateUIToFP(x, target) : b_.CreateSIToFP(x, target);
    // Through double, exact up to 32 bits; 64 keep a sticky bit so the final rounding is the only one.
    if (is64) return roundToDType(b_, stickyToDouble(x, isUnsigned(from)), to);
    return roundToDType(b_, isUnsigned(from) ? b_.CreateUIToFP(x, b_.getDoubleTy()) : b_.CreateSIToFP(x, b_.getDoubleTy()), to);
  }
  return isUnsigned(from) ? b_.CreateZExtOrTrunc(x, target) : b_.CreateSExtOrTrunc(x, target);
}

// An i64 (or u64) as a double that is exact or, above 2^53, has its lost low bits folded
// into a sticky bit, so rounding it once more to 16 bits rounds correctly.
llvm::Value* KernelLowering::stickyToDouble(llvm::Value* x, bool isUnsigned) {
  llvm::Value* negative = isUnsigned ? b_.getFalse() : b_.CreateICmpSLT(x, i64(0));
  llvm::Value* magnitude = b_.CreateSelect(negative, b_.CreateNeg(x), x);  // INT64_MIN stays 2^63 unsigned
  llvm::Value* low = b_.CreateAnd(magnitude, i64(0x7ff));
  llvm::Value* jammed = b_.CreateOr(b_.CreateAnd(magnitude, i64(~int64_t{0x7ff})),
                                    b_.CreateSelect(b_.CreateICmpNE(low, i64(0)), i64(0x400), i64(0)));
  llvm::Value* large = b_.CreateICmpUGE(magnitude, i64(int64_t{1} << 53));
  llvm::Value* d = b_.CreateUIToFP(b_.CreateSelect(large, jammed, magnitude), b_.getDoubleTy());
  return b_.CreateSelect(negative, b_.CreateFNeg(d), d);
}

// Whether every coordinate lies inside `tensor`: the per-element mask of the generic nests.
// One unsigned compare per axis is 0 <= c < size, as sizes are never negative.
llvm::Value* KernelLowering::inBounds(int64_t tensor, const Indices& coords) {
  const TensorView& t = tensors_.at(tensor);
  llvm::Value* ok = b_.getTrue();
  for (size_t d = 0; d < coords.size(); ++d) ok = b_.CreateAnd(ok, b_.CreateICmpULT(coords[d], t.shape[d]));
  return ok;
}

// Unmasked through the nest's view of the block (see stageLoad), else masked element by element.
llvm::Value* KernelLowering::loadElement(const ir::Op& op, const Indices& idx) {
  int64_t tensor = op.intAttr("tensor");
  DType dtype = kernel_.tensors[tensor].dtype;
  if (auto view = stagedLoads_.find(&op); view != stagedLoads_.end())
    return fromStorage(b_, b_.CreateLoad(storageType(ctx_, dtype), viewAddress(dtype, view->second, idx)), dtype);
  Indices coords;
  llvm::Value* linear = i64(0);
  for (size_t d = 0; d < idx.size(); ++d) {
    coords.push_back(b_.CreateAdd(element(op.operands[d], {}), idx[d]));
    linear = b_.CreateAdd(linear, b_.CreateMul(coords[d], tensors_.at(tensor).strides[d]));
  }
  return readElement(tensor, linear, inBounds(tensor, coords), *op.attr("fill"));
}

llvm::Value* KernelLowering::gatherElement(const ir::Op& op, const Indices& idx) {
  auto [linear, inside] = indirectAddress(op, kernel_.tensors[op.intAttr("tensor")].rank, idx);
  return readElement(op.intAttr("tensor"), linear, inside, *op.attr("fill"));
}

// The operand whose range along the axis holds idx: every operand is read at idx clamped
// into it (always inside), and the right one is selected.
llvm::Value* KernelLowering::concatElement(const ir::Op& op, const Indices& idx) {
  size_t axis = static_cast<size_t>(op.intAttr("axis"));
  int64_t end = type(op.results[0]).shape[axis];
  llvm::Value* result = nullptr;
  for (size_t k = op.operands.size(); k-- > 0;) {
    int64_t size = type(op.operands[k]).shape[axis], first = end - size;
    Indices at = idx;
    llvm::Value* shifted = b_.CreateSub(idx[axis], i64(first));
    at[axis] = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, shifted, i64(0)),
                                        i64(size - 1));
    llvm::Value* v = element(op.operands[k], at);
    result = result ? b_.CreateSelect(b_.CreateICmpSLT(idx[axis], i64(end)), v, result) : v;
    end = first;
  }
  return result;
}

// One atomic update (computed once: an atomic's result always has a buffer), 0 where none is made.
llvm::Value* KernelLowering::atomicElement(const ir::Op& op, const Indices& idx) {
  int64_t tensor = op.intAttr("tensor");
  DType dtype = kernel_.tensors[tensor].dtype;
  ir::AtomicFn fn = *ir::parseAtomicFn(op.stringAttr("fn"));
  size_t rank = static_cast<size_t>(kernel_.tensors[tensor].rank), values = fn == ir::AtomicFn::cas ? 2 : 1;
  llvm::Value* value = element(op.operands[rank], idx);
  llvm::Value* compare = values == 2 ? element(op.operands[rank + 1], idx) : nullptr;
  auto [linear, inside] = indirectAddress(op, rank + values, idx);
  return emitIfValue(b_, inside, [&]() -> llvm::Value* {
    llvm::Value* at = b_.CreateGEP(storageType(ctx_, dtype), tensors_.at(tensor).data, linear);
    constexpr auto order = llvm::AtomicOrdering::AcquireRelease;
    if (fn == ir::AtomicFn::cas)
      return b_.CreateExtractValue(
          b_.CreateAtomicCmpXchg(at, compare, value, llvm::MaybeAlign(), order, llvm::AtomicOrdering::Acquire), 0);
    if (isFloat(dtype) && dtypeBytes(dtype) == 2) return atomicHalf(fn, dtype, at, value);
    if (isFloat(dtype) && (fn == ir::AtomicFn::max || fn == ir::AtomicFn::min)) {
      llvm::Intrinsic::ID order = fn == ir::AtomicFn::max ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum;
      return atomicUpdateByCompareExchange(b_, at, value->getType(),
                                           [&](llvm::Value* old) { return b_.CreateBinaryIntrinsic(order, old, value); });
    }
    using Rmw = llvm::AtomicRMWInst;
    Rmw::BinOp bin = fn == ir::AtomicFn::add  ? (isFloat(dtype) ? Rmw::FAdd : Rmw::Add)
                     : fn == ir::AtomicFn::max ? (isUnsigned(dtype) ? Rmw::UMax : Rmw::Max)
                     : fn == ir::AtomicFn::min ? (isUnsigned(dtype) ? Rmw::UMin : Rmw::Min)
                                               : Rmw::Xchg;
    return b_.CreateAtomicRMW(bin, at, value, llvm::MaybeAlign(), order);
  }, constant(dtype, 0));
}

// An f16 or bf16 atomic: compare-exchange of its 16-bit storage, the update computed in f32
// and rounded once, as the elementwise ops do.
llvm::Value* KernelLowering::atomicHalf(ir::AtomicFn fn, DType dtype, llvm::Value* at, llvm::Value* value) {
  llvm::Value* old = atomicUpdateByCompareExchange(b_, at, storageType(ctx_, dtype), [&](llvm::Value* stored) {
    llvm::Value* x = fromStorage(b_, stored, dtype);
    llvm::Value* next = fn == ir::AtomicFn::add   ? roundToDType(b_, b_.CreateFAdd(x, value), dtype)
                        : fn == ir::AtomicFn::max ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, value)
                        : fn == ir::AtomicFn::min ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, value)
                                                  : value;
    return toStorage(b_, next, dtype);
  });
  return fromStorage(b_, old, dtype);
}

// Element idx of a scatter: the value first (outside any branch, so the nest vectorizes),
// written where it is inside. Duplicate coordinates: the last in row-major order wins.
void KernelLowering::lowerScatter(const ir::Op& op) {
  int64_t tensor = op.intAttr("tensor");
  size_t rank = static_cast<size_t>(kernel_.tensors[tensor].rank);
  ValueId value = op.operands[rank];
  emitNest(type(value).shape, op.operands, [&](const Indices& idx) {
    llvm::Value* v = element(value, idx);
    auto [linear, inside] = indirectAddress(op, rank + 1, idx);
    emitIf(b_, inside, [&] { writeElement(tensor, linear, v); });
  });
}

// The linear element of a gather or scatter at idx, and whether it is read or written: every
// coordinate (as an i64) inside its axis and the mask, operand maskAt where there is one, true.
std::pair<llvm::Value*, llvm::Value*> KernelLowering::indirectAddress(const ir::Op& op, size_t maskAt, const Indices& idx) {
  int64_t tensor = op.intAttr("tensor");
  Indices coords;
  llvm::Value* linear = i64(0);
  for (size_t d = 0; d < static_cast<size_t>(kernel_.tensors[tensor].rank); ++d) {
    coords.push_back(cast(element(op.operands[d], idx), type(op.operands[d]).dtype, DType::i64));
    linear = b_.CreateAdd(linear, b_.CreateMul(coords[d], tensors_.at(tensor).strides[d]));
  }
  llvm::Value* inside = inBounds(tensor, coords);
  if (maskAt < op.operands.size()) inside = b_.CreateAnd(inside, element(op.operands[maskAt], idx));
  return {linear, inside};
}

// The tensor's element at `linear`, or `fill` where `inside` is false.
llvm::Value* KernelLowering::readElement(int64_t tensor, llvm::Value* linear, llvm::Value* inside,
                                         const ir::AttrValue& fill) {
  DType dtype = kernel_.tensors[tensor].dtype;
  llvm::Type* storage = storageType(ctx_, dtype);
  auto read = [&] {
    return fromStorage(b_, b_.CreateLoad(storage, b_.CreateGEP(storage, tensors_.at(tensor).data, linear)), dtype);
  };
  return emitIfValue(b_, inside, read, constant(dtype, fill));  // integers stay exact past 2^53
}

void KernelLowering::writeElement(int64_t tensor, llvm::Value* linear, llvm::Value* v) {
  DType dtype = kernel_.tensors[tensor].dtype;
  b_.CreateStore(toStorage(b_, v, dtype), b_.CreateGEP(storageType(ctx_, dtype), tensors_.at(tensor).data, linear));
}

// ---------------------------------------------------------------- buffers and nests

// Tiles share the stack while they fit kStackBudget; the others go to the heap block.
llvm::Value* KernelLowering::allocateBuffer(const ir::Type& t) {
  int64_t bytes = (t.numel() * dtypeBytes(t.dtype) + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
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
  emitNest(t.shape, {v}, [&](const Indices& idx) { storeToBuffer(buffer, t, idx, element(v, idx)); });
}

// A transposed matrix of 32-bit values or 16-bit floats (attention's K^T, a dot operand; 16-bit
// floats in their f32 compute form) 8x8 block by block: eight rows read as vectors, transposed
// in registers by three rounds of shuffles, written as eight rows. Element by element, one side
// or the other is strided and no loop vectorizes. False (nothing emitted) for other values.
bool KernelLowering::materializeTranspose(ValueId v, llvm::Value* buffer, const ir::Type& as) {
  constexpr int64_t kBlock = 8;
  const ir::Type& t = type(v);
  const ir::Op* op = info_.def[v];
  if (!op || op->code != OpCode::permute || t.rank() != 2 || op->intsAttr("perm") != std::vector<int64_t>{1, 0} ||
      !(dtypeBytes(t.dtype) == 4 || t.dtype == DType::f16 || t.dtype == DType::bf16) || t.shape[0] % kBlock != 0 ||
      t.shape[1] % kBlock != 0)
    return false;
  ValueId source = op->operands[0];
  auto shuffle = [&](llvm::Value* a, llvm::Value* b, std::initializer_list<int> mask) {
    return b_.CreateShuffleVector(a, b, llvm::ArrayRef<int>(mask.begin(), mask.size()));
  };
  auto pairs = [&](std::vector<llvm::Value*>& x, std::initializer_list<int> lo, std::initializer_list<int> hi, int step) {
    std::vector<llvm::Value*> y(x.size());
    for (int i = 0; i < kBlock; i += 2 * step)
      for (int j = i; j < i + step; ++j) {
        y[size_t(j)] = shuffle(x[size_t(j)], x[size_t(j + step)], lo);
        y[size_t(j + step)] = shuffle(x[size_t(j)], x[size_t(j + step)], hi);
      }
    x = std::move(y);
  };
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
    // Interleave pairs of rows, then pairs of pairs, then the two halves: rows[k] is then
    // column kColumn[k] (the middle round leaves columns 1 and 2, 5 and 6 swapped).
    pairs(rows, {0, 8, 1, 9, 4, 12, 5, 13}, {2, 10, 3, 11, 6, 14, 7, 15}, 1);
    pairs(rows, {0, 1, 8, 9, 4, 5, 12, 13}, {2, 3, 10, 11, 6, 7, 14, 15}, 2);
    pairs(rows, {0, 1, 2, 3, 8, 9, 10, 11}, {4, 5, 6, 7, 12, 13, 14, 15}, 4);
    constexpr int64_t kColumn[kBlock] = {0, 2, 1, 3, 4, 6, 5, 7};
    for (int64_t k = 0; k < kBlock; ++k)
      b_.CreateAlignedStore(toStorage(b_, rows[size_t(k)], as.dtype),
                            bufferAddress(buffer, as, {b_.CreateAdd(col0, i64(kColumn[k])), row0}),
                            llvm::Align(dtypeBytes(as.dtype)));
  };
  // Where the source's index masks may be false, the plain nest.
  emitFastOrGeneral({source}, [&] { emitNestLevels(blocks, 0, idx, block); }, [&] {
    emitNestLevels(t.shape, 0, idx, [&](const Indices& at) { storeToBuffer(buffer, as, at, element(v, at)); });
  });
  return true;
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
  const std::string& pred = cmp.stringAttr("pred");
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
    int64_t extent = type(r.iota->results[0]).shape[static_cast<size_t>(r.iota->intAttr("axis"))];
    llvm::Value* hi = b_.CreateAdd(lo, i64(extent - 1));
    holds = b_.CreateAnd(holds, b_.CreateICmpSLE(hi, i64(std::numeric_limits<int32_t>::max())));
    return std::pair{lo, hi};
  };
  auto [aLo, aHi] = ends(cmp.operands[0]);
  auto [bLo, bHi] = ends(cmp.operands[1]);
  const std::string& pred = cmp.stringAttr("pred");
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
  int64_t tensor = load.intAttr("tensor");
  const ir::Type& t = type(load.results[0]);
  Indices firsts;
  for (size_t d = 0; d < t.shape.size(); ++d) firsts.push_back(element(load.operands[d], {}));
  llvm::Value* inside = blockInside(tensor, firsts, t.shape);
  emitIf(b_, b_.CreateNot(inside), [&] {
    DType dtype = kernel_.tensors[tensor].dtype;
    llvm::Value* fill = toStorage(b_, constant(dtype, *load.attr("fill")), dtype);
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

}  // namespace

std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Kernel& kernel, llvm::LLVMContext& context,
                                          const std::string& entryName, const CpuLoweringOptions& options) {
  auto module = std::make_unique<llvm::Module>("tilejit." + kernel.name, context);
  KernelLowering(kernel, *module, options).lower(entryName);
  return module;
}

std::string lowerToLLVMText(const ir::Kernel& kernel, const CpuLoweringOptions& options) {
  llvm::LLVMContext context;
  std::string text;
  llvm::raw_string_ostream os(text);
  lowerToLLVM(kernel, context, "tj_kernel", options)->print(os, nullptr);
  return text;
}

}  // namespace tj::cpu
