#include "lower/llvm_gpu/compile.hpp"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "ir/error.hpp"

namespace tj::llvmgpu {

void optimize(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::PassBuilder pb(&tm);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, mam);
}

std::string emit(llvm::Module& m, llvm::TargetMachine& tm, FileKind kind, const std::string& backend) {
  llvm::SmallString<0> bytes;
  llvm::raw_svector_ostream out(bytes);
  llvm::legacy::PassManager pm;
  auto type = kind == FileKind::assembly ? llvm::CodeGenFileType::AssemblyFile : llvm::CodeGenFileType::ObjectFile;
  if (tm.addPassesToEmitFile(pm, out, nullptr, type))
    throw InternalError(backend, std::string("the backend cannot emit ") + (kind == FileKind::assembly ? "assembly" : "objects"));
  pm.run(m);
  return std::string(bytes.str());
}

}  // namespace tj::llvmgpu
