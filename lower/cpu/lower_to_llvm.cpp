#include "lower/cpu/lower_to_llvm.hpp"

#include <spdlog/spdlog.h>

#include "ir/fault_injection.hpp"
#include "lower/cpu/kernel_lowering.hpp"

namespace tj::cpu {

namespace detail {

// ---------------------------------------------------------------- entry

void KernelLowering::lower(const std::string& entryName) {
  if (spdlog::should_log(spdlog::level::debug))  // the first step's result, as tile-ir prints it
    spdlog::debug("tilejit: {} buffer plan\n{}", kernel_.name, printWithBuffers(kernel_, plan_));
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
  emitWorkspace();
  auto alignedAlloc = module_.getOrInsertFunction("aligned_alloc", ptr, b_.getInt64Ty(), b_.getInt64Ty());
  heap_ = b_.CreateCall(alignedAlloc, {i64(kBufferAlign), i64(0)}, "heap");
  llvm::Value* begin = fn->getArg(1);
  llvm::Value* end = fn->getArg(2);
  // A kernel with packed operands starts an odd-numbered run of programs (the pool hands runs
  // of equal length to its threads in order) halfway through it, so that two threads starting
  // side by side pack different blocks rather than the same ones twice.
  llvm::Value* length = b_.CreateSub(end, begin);
  llvm::Value* rotation = i64(0);
  if (!plan_.packedOnce.empty()) {
    llvm::Value* odd = b_.CreateAnd(b_.CreateSDiv(begin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, length, i64(1))), i64(1));
    rotation = b_.CreateMul(odd, b_.CreateSDiv(length, i64(2)));
  }
  emitLoop(b_, i64(0), length, [&](llvm::Value* step) {
    llvm::Value* turned = b_.CreateAdd(step, rotation);
    llvm::Value* linearId = b_.CreateAdd(begin, b_.CreateSelect(b_.CreateICmpSGE(turned, length), b_.CreateSub(turned, length), turned));
    programLinear_ = linearId;
    emitProgramIds(linearId);
    lowerBlock(kernel_.body);
  });
  finishHeap(fn, b_.CreateRetVoid());
  outlineChunks(fn);
  std::string error;
  llvm::raw_string_ostream os(error);
  if (llvm::verifyModule(module_, &os)) throw InternalError("lower/cpu", "generated invalid LLVM IR for kernel '" + kernel_.name + "': " + error);
}

void KernelLowering::emitPrologue(llvm::Function* fn) {
  llvm::Type* i64Ty = b_.getInt64Ty();
  llvm::Type* ptr = b_.getPtrTy();
  auto* descType = llvm::StructType::get(ctx_, {ptr, llvm::ArrayType::get(i64Ty, kMaxRank), llvm::ArrayType::get(i64Ty, kMaxRank)});
  argsType_ = llvm::StructType::get(ctx_, {ptr, llvm::ArrayType::get(i64Ty, kMaxGridRank), ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr});
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
      if (!chunk) throw InternalError("lower/cpu", "kernel '" + kernel_.name + "': cannot outline a chunk of its body");
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

}  // namespace detail

using detail::KernelLowering;

std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Kernel& kernel, llvm::LLVMContext& context,
                                          const std::string& entryName, const CpuLoweringOptions& options) {
  testing::raiseArmedFault("lower/cpu", kernel.name);
  auto module = std::make_unique<llvm::Module>("tilejit." + kernel.name, context);
  KernelLowering(kernel, *module, options).lower(entryName);
  return module;
}

namespace {

// Each level: an LLVM CPU of it (for its assembly), and what the JIT chooses there (on a host
// of the avx512bf16 level whose vdpbf16ps measures slow, bf16 dots widen instead).
struct X86Level {
  std::string_view name, cpu;
  CpuLoweringOptions options;
};
constexpr CpuLoweringOptions kBf16Level{.vectorBytes = 64, .bf16DotProduct = true, .i16PairProducts = true,
                                        .i8QuadProducts = true};
const X86Level kX86Levels[] = {
    {"sse4.2", "x86-64-v2", {.vectorBytes = 16, .i16PairProducts = true}},
    {"avx2", "x86-64-v3", {.vectorBytes = 32, .i16PairProducts = true}},
    {"avx2vnni", "alderlake", {.vectorBytes = 32, .i16PairProducts = true, .i8QuadProducts = true}},
    {"avx512", "skylake-avx512", {.vectorBytes = 64, .i16PairProducts = true}},
    {"avx512vnni", "cascadelake", {.vectorBytes = 64, .i16PairProducts = true, .i8QuadProducts = true}},
    {"avx512bf16", "cooperlake", kBf16Level},
    {"amx", "sapphirerapids", [] {
       CpuLoweringOptions o = kBf16Level;
       o.amxInt8 = o.amxBf16 = true;
       return o;
     }()},
};

const X86Level& x86Level(std::string_view isa) {
  std::string known;
  for (const X86Level& level : kX86Levels) {
    if (level.name == isa) return level;
    known += (known.empty() ? "" : ", ") + std::string(level.name);
  }
  throw Error("cpu: unknown ISA level '" + std::string(isa) + "' (" + known + ")");
}

}  // namespace

CpuLoweringOptions loweringOptionsForIsa(std::string_view isa) { return x86Level(isa).options; }

std::string_view x86CpuForIsa(std::string_view isa) { return x86Level(isa).cpu; }

std::string dotInstructionsName(const CpuLoweringOptions& options) {
  std::string name;
  auto add = [&](bool on, const char* what) {
    if (on) name += (name.empty() ? "" : " ") + std::string(what);
  };
  add(options.bf16DotProduct && !options.widenBf16Dots, "bf16dot");
  add(options.bf16DotProduct && options.widenBf16Dots, "bf16widen");
  add(options.i16PairProducts, "pmaddwd");
  add(options.i8QuadProducts, "vnni");
  add(options.amxInt8, "amx-int8");
  add(options.amxBf16, "amx-bf16");
  add(options.emulateMatrixInstructions, "emulated");
  return name;
}

std::string lowerToLLVMText(const ir::Kernel& kernel, const CpuLoweringOptions& options) {
  llvm::LLVMContext context;
  std::string text;
  llvm::raw_string_ostream os(text);
  lowerToLLVM(kernel, context, "tj_kernel", options)->print(os, nullptr);
  return text;
}

}  // namespace tj::cpu
