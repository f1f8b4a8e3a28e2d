#include "jit/cpu_compiler.hpp"

#include "jit/cpu_jit.hpp"
#include "jit/timing.hpp"

#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/AsmParser/Parser.h>
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

std::vector<char> emitObject(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw InternalError("cpu", "the target machine cannot emit object files");
  pm.run(module);
  return {buffer.begin(), buffer.end()};
}

}  // namespace

ObjectCode compileModule(llvm::Module& module, const CpuTarget& target) {
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(target);
  module.setTargetTriple(target.triple);
  module.setDataLayout(tm->createDataLayout());
  std::string problems;
  llvm::raw_string_ostream problemStream(problems);
  if (llvm::verifyModule(module, &problemStream))
    throw InternalError("cpu", "invalid LLVM module '" + module.getModuleIdentifier() + "': " + problems);
  ObjectCode code;
  auto start = Clock::now();
  optimize(module, *tm);
  code.optimizeMs = msSince(start);
  start = Clock::now();
  code.bytes = emitObject(module, *tm);
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
  options.bf16DotProduct = target.hasFeature("avx512bf16");
  options.i16PairProducts = target.hasFeature(options.vectorBytes == 64   ? "avx512bw"
                                              : options.vectorBytes == 32 ? "avx2"
                                                                          : "sse4.2");
  return options;
}

std::string compileOptions(const CpuTarget& target) {
  cpu::CpuLoweringOptions options = loweringOptions(target);
  return "O3 pic vector=" + std::to_string(options.vectorBytes) + (options.bf16DotProduct ? " bf16dot" : "") +
         (options.i16PairProducts ? " pmaddwd" : "");
}

ObjectCode compileKernel(const ir::Kernel& kernel, const std::string& entryName) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = cpu::lowerToLLVM(kernel, context, entryName, loweringOptions());
  return compileModule(*module);
}

}  // namespace tj::jit
