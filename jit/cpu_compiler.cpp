#include "jit/cpu_compiler.hpp"

#include "jit/cpu_jit.hpp"
#include "jit/timing.hpp"

#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <spdlog/spdlog.h>

#include <chrono>

namespace tj::jit {

namespace {


// Lets the loop vectorizer call glibc's vector math (libmvec) for exp, log, sin, ...
// so loops with transcendentals vectorize. cpu_jit loads libmvec for the JIT to link.
std::unique_ptr<llvm::TargetLibraryInfoImpl> libraryInfo(const llvm::Triple& triple) {
  auto tli = std::make_unique<llvm::TargetLibraryInfoImpl>(triple);
  if (triple.getArch() == llvm::Triple::x86_64 && vectorMathAvailable())
    tli->addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  return tli;
}

void optimize(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  std::unique_ptr<llvm::TargetLibraryInfoImpl> tli = libraryInfo(tm.getTargetTriple());
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(*tli); });
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  // LLVM's unroller only where the lowering asks (the micro-kernel's K loop): it unrolled
  // every loop, which doubled compile times (attention's cold compile 360 -> 158 ms without)
  // for no speed elsewhere; the vectorizer still interleaves what it vectorizes.
  tuning.LoopUnrolling = false;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, mam);
}

// Collects the errors LLVM reports through its context while it generates code (a register
// allocator out of registers, an inline assembly it cannot assemble): its default handler
// would print them and exit the process.
class CollectErrors : public llvm::DiagnosticHandler {
 public:
  explicit CollectErrors(std::string& errors) : errors_(errors) {}
  bool handleDiagnostics(const llvm::DiagnosticInfo& info) override {
    if (info.getSeverity() != llvm::DS_Error) return false;
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
    errors_ += (errors_.empty() ? "" : "; ") + text;
    return true;
  }

 private:
  std::string& errors_;
};

std::vector<char> emit(llvm::Module& module, llvm::TargetMachine& tm,
                       llvm::CodeGenFileType type = llvm::CodeGenFileType::ObjectFile) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    throw InternalError("cpu", "the target machine cannot emit this kind of file");
  std::string errors;
  llvm::LLVMContext& context = module.getContext();
  std::unique_ptr<llvm::DiagnosticHandler> previous = context.getDiagnosticHandler();
  context.setDiagnosticHandler(std::make_unique<CollectErrors>(errors));
  {
    auto restore = llvm::make_scope_exit([&] { context.setDiagnosticHandler(std::move(previous)); });
    pm.run(module);
  }
  if (!errors.empty())
    throw InternalError("cpu", "LLVM could not generate code for '" + module.getModuleIdentifier() + "': " + errors);
  return {buffer.begin(), buffer.end()};
}

// A target machine for the module, which it verifies and readies for it.
std::unique_ptr<llvm::TargetMachine> prepare(llvm::Module& module, const CpuTarget& target) {
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(target);
  module.setTargetTriple(target.triple);
  module.setDataLayout(tm->createDataLayout());
  std::string problems;
  llvm::raw_string_ostream problemStream(problems);
  if (llvm::verifyModule(module, &problemStream))
    throw InternalError("cpu", "invalid LLVM module '" + module.getModuleIdentifier() + "': " + problems);
  return tm;
}

}  // namespace

ObjectCode compileModule(llvm::Module& module, const CpuTarget& target) {
  std::unique_ptr<llvm::TargetMachine> tm = prepare(module, target);
  ObjectCode code;
  auto start = Clock::now();
  optimize(module, *tm);
  code.optimizeMs = msSince(start);
  start = Clock::now();
  code.bytes = emit(module, *tm);
  code.codegenMs = msSince(start);
  spdlog::debug("tilejit: compiled {} for {}: O3 {:.2f} ms, codegen {:.2f} ms, {} bytes",
                module.getModuleIdentifier(), target.deviceFeatures, code.optimizeMs, code.codegenMs,
                code.bytes.size());
  return code;
}

ObjectCode compileAssembly(std::string_view text, const CpuTarget& target) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(llvm::StringRef(text.data(), text.size()), diagnostic, context);
  if (!module)
    throw Error("cpu: bad LLVM assembly at line " + std::to_string(diagnostic.getLineNo()) + ": " +
                diagnostic.getMessage().str());
  return compileModule(*module, target);
}

cpu::CpuLoweringOptions loweringOptions(const CpuTarget& target) {
  cpu::CpuLoweringOptions options;
  options.vectorBytes = target.hasFeature("avx512f") ? 64 : target.hasFeature("avx") ? 32 : 16;
  bool wide = options.vectorBytes == 64;
  options.bf16DotProduct = target.hasFeature("avx512bf16");
  options.widenBf16Dots = options.bf16DotProduct && target.slowBf16Pairs;
  options.i16PairProducts = target.hasFeature(wide ? "avx512bw" : options.vectorBytes == 32 ? "avx2" : "sse4.2");
  // At 32 bytes (no AVX-512): AVX-VNNI, the VEX form of the instruction.
  options.i8QuadProducts = target.hasFeature(wide ? "avx512vnni" : "avxvnni") && options.vectorBytes >= 32;
  options.amxInt8 = target.hasFeature("amx-tile") && target.hasFeature("amx-int8");
  options.amxBf16 = target.hasFeature("amx-tile") && target.hasFeature("amx-bf16");
  return options;
}

std::string compileOptions(const CpuTarget& target) {
  cpu::CpuLoweringOptions options = loweringOptions(target);
  std::string dots = cpu::dotInstructionsName(options);
  return "O3 pic vector=" + std::to_string(options.vectorBytes) + (dots.empty() ? "" : " " + dots);
}

ObjectCode compileKernel(const ir::Kernel& kernel, const std::string& entryName) {
  return compileKernel(kernel, entryName, loweringOptions());
}

std::string assemblyOf(const ir::Kernel& kernel, const CpuTarget& target, const cpu::CpuLoweringOptions& options) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = cpu::lowerToLLVM(kernel, context, "tj_kernel", options);
  std::unique_ptr<llvm::TargetMachine> tm = prepare(*module, target);
  optimize(*module, *tm);
  std::vector<char> text = emit(*module, *tm, llvm::CodeGenFileType::AssemblyFile);
  return {text.begin(), text.end()};
}

ObjectCode compileKernel(const ir::Kernel& kernel, const std::string& entryName, const cpu::CpuLoweringOptions& options) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = cpu::lowerToLLVM(kernel, context, entryName, options);
  return compileModule(*module);
}

}  // namespace tj::jit
